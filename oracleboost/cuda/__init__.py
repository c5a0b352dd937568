"""The GPU backend: stump rounds on one NVIDIA GPU, deterministic to the bit.

Kernels in numba's CUDA target (:mod:`.stump_kernels`), imported only when asked for:
``import oracleboost`` does not import ``numba.cuda``, and no GPU is needed to install or
test the library (numba's simulator runs the same kernels on the CPU,
``NUMBA_ENABLE_CUDASIM=1``).  Sums over rows are fixed point
(:mod:`oracleboost.rows.fixed_point`): int64 on a power-of-two scale, added by atomics in
any order with the same bits, so a GPU fit is the same run to run and equals the CPU's
to rounding.

* :class:`CudaBackend` (:mod:`.backend`) — the backend a fit runs on when its X is on
  the GPU or its oracle says ``device="cuda"``: the booster's passes by their device
  twins (:class:`DeviceBlocks`, :mod:`.stages`), every sum exact
  (:class:`~.reductions.Reductions`);
* :class:`DeviceStumps` — a bound :class:`~oracleboost.oracles.StumpOracle`'s rows on
  the GPU, answering ``correlate`` (the CPU's ±1 stump) and ``project`` (its
  least-squares stump);
* :func:`cuda_module` — ``numba.cuda``, or :class:`NoDeviceError` naming ``device="cuda"``.
"""

from oracleboost.cuda.backend import CudaBackend
from oracleboost.cuda.blocks import DeviceBlocks
from oracleboost.cuda.device import NoDeviceError, cuda_module
from oracleboost.cuda.stumps import DeviceStumps, Launch, bind_on_device

__all__ = ["CudaBackend", "DeviceBlocks", "DeviceStumps", "Launch", "NoDeviceError",
           "bind_on_device", "cuda_module"]
