"""The GPU itself: numba's CUDA target, imported only when a fit asks for the GPU.

``import oracleboost`` never imports ``numba.cuda``: the GPU backend is reached through
:func:`cuda_module`, called inside the functions that run on the device.  Numba reads
``NUMBA_ENABLE_CUDASIM`` when its configuration loads; with it set (or
``numba.core.config.ENABLE_CUDASIM = True`` before ``numba.cuda`` is first imported)
the kernels run on numba's simulator, on the CPU, one Python thread a GPU thread: how
every machine tests the GPU code, on small data.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["TRAFFIC", "NoDeviceError", "Profile", "Traffic", "counted", "cuda_module",
           "fetch", "profiled", "simulated", "upload"]


class Traffic:
    """What this process has asked of the GPU: kernel launches and copies each way.

    A round's cost on a GPU is mostly latency: each launch, and each copy back (which
    waits for every kernel before it), costs microseconds whatever the rows.  The device
    layer launches every kernel through :func:`counted` and copies through :func:`fetch`
    and :func:`upload`, so a test reads a round's counts here (the difference of two
    snapshots) and catches a regression without timing anything."""

    def __init__(self) -> None:
        self.launches = 0
        self.to_host = 0
        self.to_device = 0
        #: the :class:`Profile` that times every launch and copy back, within
        #: :func:`profiled` (None: nothing is timed)
        self.profile: Profile | None = None

    def snapshot(self) -> tuple[int, int, int]:
        """``(launches, copies to the host, copies to the device)`` so far."""
        return self.launches, self.to_host, self.to_device


#: The process's counts (:class:`Traffic`).
TRAFFIC = Traffic()


class Profile:
    """Where a GPU's time goes, kernel by kernel (within :func:`profiled`).

    Each launch is bracketed by two CUDA events on the default stream, so a kernel's
    *device* time is what the GPU spent from the one to the other; its *host* time is
    the wall time of the launch call itself (numba's checking and marshalling of the
    arguments: what the CPU spends to start it).  A copy back's host time includes its
    wait for every kernel before it.  A round whose kernels' device times sum far below
    its wall time is bound by launches and copies, not by the GPU's memory."""

    def __init__(self) -> None:
        self._events: list[tuple[str, Any, Any]] = []
        #: by kernel: ``[launches, host seconds]``
        self.host: dict[str, list[float]] = {}
        #: copies back: ``[copies, host seconds]``
        self.fetches = [0, 0.0]

    def launch(self, name: str, configured: Callable[..., None], args: tuple) -> None:
        """Launch ``configured(*args)``, timed."""
        cuda = cuda_module()
        start, end = cuda.event(), cuda.event()
        start.record()
        t0 = time.perf_counter()
        configured(*args)
        t1 = time.perf_counter()
        end.record()
        count = self.host.setdefault(name, [0, 0.0])
        count[0] += 1
        count[1] += t1 - t0
        self._events.append((name, start, end))

    def device(self) -> dict[str, float]:
        """Each kernel's device seconds, summed over its launches (waits for the GPU)."""
        out: dict[str, float] = {}
        for name, start, end in self._events:
            end.synchronize()
            out[name] = out.get(name, 0.0) + start.elapsed_time(end) / 1e3
        return out


@contextmanager
def profiled() -> Iterator[Profile]:
    """Time every kernel launch and copy back of the block (a :class:`Profile`)::

        with profiled() as profile:
            model.fit(X_gpu, y)
        profile.device()   # {kernel: seconds on the GPU}
    """
    previous, profile = TRAFFIC.profile, Profile()
    TRAFFIC.profile = profile
    try:
        yield profile
    finally:
        TRAFFIC.profile = previous


class _Counted:
    """A kernel whose launches :data:`TRAFFIC` counts: ``kernel[grid](*args)`` as
    numba's."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.__name__ = getattr(kernel, "__name__", "kernel")

    def __getitem__(self, config: Any) -> Callable[..., None]:
        configured = self.kernel[config]

        def launch(*args: Any) -> None:
            TRAFFIC.launches += 1
            if TRAFFIC.profile is None:
                configured(*args)
            else:
                TRAFFIC.profile.launch(self.__name__, configured, args)

        return launch


def counted(kernel: Any) -> _Counted:
    """``kernel`` (a numba CUDA kernel) with its launches counted in :data:`TRAFFIC`."""
    return _Counted(kernel)


def fetch(a: Any) -> np.ndarray:
    """The device array ``a`` copied to the host (counted in :data:`TRAFFIC`)."""
    TRAFFIC.to_host += 1
    if TRAFFIC.profile is None:
        return a.copy_to_host()
    t0 = time.perf_counter()
    host = a.copy_to_host()
    TRAFFIC.profile.fetches[0] += 1
    TRAFFIC.profile.fetches[1] += time.perf_counter() - t0
    return host


def upload(a: Any) -> Any:
    """The host array ``a`` copied to the device (counted in :data:`TRAFFIC`)."""
    TRAFFIC.to_device += 1
    return cuda_module().to_device(a)


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
