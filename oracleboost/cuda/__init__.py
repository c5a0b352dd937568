"""The GPU backend: stump rounds on one NVIDIA GPU, deterministic to the bit.

Kernels in numba's CUDA target (:mod:`.stump_kernels`), imported only when asked for:
``import oracleboost`` does not import ``numba.cuda``, and no GPU is needed to install or
test the library (numba's simulator runs the same kernels on the CPU,
``NUMBA_ENABLE_CUDASIM=1``).  Sums over rows are fixed point
(:mod:`oracleboost.rows.fixed_point`): int64 on a power-of-two scale, added by atomics in
any order with the same bits, so a GPU fit is the same run to run and equals the CPU's
to rounding.

* :class:`DeviceStumps` — a bound :class:`~oracleboost.oracles.StumpOracle`'s rows on
  the GPU, answering ``correlate`` with the CPU's ±1 stump;
* :func:`adaboost_on_device` — AdaBoost's rounds with the weights on the GPU;
* :func:`cuda_module` — ``numba.cuda``, or :class:`NoDeviceError` naming ``device="cuda"``.
"""

from oracleboost.cuda.device import NoDeviceError, cuda_module
from oracleboost.cuda.stumps import (
    DeviceRounds,
    DeviceStumps,
    Launch,
    adaboost_on_device,
    bind_on_device,
)

__all__ = ["DeviceRounds", "DeviceStumps", "Launch", "NoDeviceError", "adaboost_on_device",
           "bind_on_device", "cuda_module"]
