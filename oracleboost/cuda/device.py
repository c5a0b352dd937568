"""The GPU itself: numba's CUDA target, imported only when a fit asks for the GPU.

``import oracleboost`` never imports ``numba.cuda``: the GPU backend is reached through
:func:`cuda_module`, called inside the functions that run on the device.  Numba reads
``NUMBA_ENABLE_CUDASIM`` when its configuration loads; with it set (or
``numba.core.config.ENABLE_CUDASIM = True`` before ``numba.cuda`` is first imported)
the kernels run on numba's simulator, on the CPU, one Python thread a GPU thread: how
every machine tests the GPU code, on small data.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["NoDeviceError", "cuda_module", "simulated"]


class NoDeviceError(RuntimeError):
    """``device="cuda"`` was asked for where no GPU can run it."""


def simulated() -> bool:
    """Whether numba's CUDA simulator is on (its threads are Python threads: the
    launches are then sized for it, not for a GPU)."""
    from numba.core import config

    return bool(config.ENABLE_CUDASIM)


def cuda_module() -> ModuleType:
    """``numba.cuda``, when a GPU (or the simulator) can run its kernels.

    Raises
    ------
    NoDeviceError
        ``numba.cuda.is_available()`` is False: no CUDA GPU or driver, and the
        simulator is off.  The message names ``device="cuda"`` and what to do.
    """
    try:
        from numba import cuda
    except ImportError as exc:  # pragma: no cover - numba ships its CUDA target
        raise NoDeviceError(
            f'device="cuda" needs numba\'s CUDA target, which did not import ({exc}); '
            'fit on the CPU (the default device)') from exc
    if not cuda.is_available():
        raise NoDeviceError(
            'device="cuda" needs an NVIDIA GPU with its driver, and '
            "numba.cuda.is_available() is False here; fit on the CPU (the default device), "
            "or set NUMBA_ENABLE_CUDASIM=1 to run the GPU code on numba's simulator "
            "(slow: for tests on small data)")
    return cuda
