"""Compile every GPU kernel that the GPU tests launch to PTX for a real GPU, without one.

numba's CUDA simulator runs the kernels as Python, so it cannot see what numba's CUDA
target would refuse or type otherwise when it compiles them (an operation it does not
support, ``uint64`` and ``int64`` unified as a float, a tuple it cannot return).  This
script closes that gap where numba finds libNVVM (a CUDA toolkit's, or the
``nvidia-cuda-nvcc`` wheel's), GPU or not:

1. a child process runs the GPU tests on the simulator and records every kernel launch
   (the kernel, its factory's arguments, its arguments' numba types);
2. this process, with the simulator off, builds the same kernels for the real target
   and compiles each recorded signature to PTX (``numba.cuda.compile_ptx``, compute
   capability 9.0: the H100 and H200).

Run it from the repository's root::

    python tools/cuda_ptx_check.py            # the whole GPU suite (minutes)
    python tools/cuda_ptx_check.py -k multiclass

It prints each kernel and signature compiled, and exits with 1 if any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_cuda_*.py")
               if p.name != "test_cuda_ptx.py")

#: The kernel factories, by the module and qualified name prefix of their kernels.
_FACTORIES = {
    "oracleboost.cuda.row_kernels": "row_kernels",
    "oracleboost.cuda.class_kernels": "class_kernels",
    "oracleboost.cuda.stump_kernels": "kernels",
    "oracleboost.cuda.quantile": "_kernels",
    "oracleboost.cuda.draws": "_kernels",
}


def _type_of(arg) -> list:
    """A launch argument's numba type, as JSON: an array's dtype, dimensions and layout,
    or a scalar's type name."""
    import numba
    import numpy as np

    ary = getattr(arg, "_ary", arg)  # (the simulator's device array wraps a NumPy one)
    if isinstance(ary, np.ndarray):
        t = numba.typeof(ary)
        return ["array", ary.dtype.str, t.ndim, t.layout]
    return ["scalar", str(numba.typeof(arg))]


def record(path: str, tests: list[str], select: str | None) -> int:
    """Run ``tests`` on the simulator, writing every launch's signature to ``path``."""
    import numba.core.config

    numba.core.config.ENABLE_CUDASIM = True
    import pytest

    from oracleboost.cuda import device
    from oracleboost.cuda import stump_kernels as sk

    seen: dict[str, dict] = {}
    launch = device._Counted.__getitem__

    def recording(self, config):
        configured = launch(self, config)
        fn = getattr(self.kernel, "fn", None) or self.kernel.py_func

        def run(*args):
            entry = {"module": fn.__module__, "name": fn.__name__,
                     "key": getattr(self, "factory_key", None),
                     "types": [_type_of(a) for a in args]}
            seen[json.dumps(entry, sort_keys=True)] = entry
            return configured(*args)

        return run

    histogram_kernel = sk.histogram_kernel

    def keyed(bins, features, channels):
        kernel = histogram_kernel(bins, features, channels)
        kernel.factory_key = [int(bins), int(features), int(channels)]
        return kernel

    device._Counted.__getitem__ = recording
    sk.histogram_kernel = keyed
    args = ["-q", "-p", "no:cacheprovider", "-n", "0", "-x", *tests]
    if select:
        args += ["-k", select]
    code = pytest.main(args)
    Path(path).write_text(json.dumps(list(seen.values()), indent=1))
    return int(code)


def compile_all(path: str) -> int:
    """Compile every recorded signature for the real target; the number that failed."""
    import importlib
    from types import SimpleNamespace

    import numba
    import numba.cuda.dispatcher
    import numpy as np
    from numba import cuda, types

    # The kernels are built, never launched, here: no driver is asked for anything.  A
    # device function compiles for the current device's compute capability: 9.0.
    cuda.is_available = lambda: True
    numba.cuda.dispatcher.get_current_device = lambda: SimpleNamespace(
        compute_capability=(9, 0))
    entries = json.loads(Path(path).read_text())
    failed = 0
    for entry in sorted(entries, key=lambda e: (e["module"], e["name"])):
        module = importlib.import_module(entry["module"])
        if entry["name"] == "histogram":
            kernel = module.histogram_kernel(*entry["key"])
        else:
            kernel = getattr(getattr(module, _FACTORIES[entry["module"]])(), entry["name"])
        sig = []
        for t in entry["types"]:
            if t[0] == "array":
                sig.append(types.Array(numba.from_dtype(np.dtype(t[1])), t[2], t[3]))
            else:
                sig.append(getattr(types, t[1]))
        label = f"{entry['module'].rsplit('.', 1)[-1]}.{entry['name']}{tuple(sig)}"
        try:
            cuda.compile_ptx(kernel.kernel.py_func, tuple(sig), cc=(9, 0))
        except Exception as exc:  # noqa: BLE001 - every failure is reported
            failed += 1
            print(f"FAILED {label}\n    {type(exc).__name__}: {str(exc)[:2000]}")
        else:
            print(f"ok     {label}")
    print(f"{len(entries) - failed} of {len(entries)} signatures compiled to PTX (sm_90)")
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", dest="select", default=None,
                        help="only the tests pytest's -k selects")
    parser.add_argument("--record", metavar="FILE", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.record:
        return record(options.record, TESTS, options.select)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "launches.json")
        child = [sys.executable, __file__, "--record", path]
        if options.select:
            child += ["-k", options.select]
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
        done = subprocess.run(child, cwd=ROOT, env=env)
        if done.returncode != 0:
            print("the GPU tests failed on the simulator; fix them first")
            return 1
        return 1 if compile_all(path) else 0


if __name__ == "__main__":
    sys.exit(main())
