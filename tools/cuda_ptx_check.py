"""Compile every GPU kernel that the GPU tests launch for a real GPU, without one.

numba's CUDA simulator runs the kernels as Python, so it cannot see what numba's CUDA
target would refuse or type otherwise when it compiles them (an operation it does not
support, ``uint64`` and ``int64`` unified as a float, a tuple it cannot return), nor
what the GPU's own assembler makes of them.  This script closes that gap where numba
finds libNVVM (a CUDA toolkit's, or the ``nvidia-cuda-nvcc`` wheel's), GPU or not:

1. pytest runs the GPU tests on the simulator (in as many processes as ``-n`` says,
   this module loaded as a plugin in each) and records every kernel launch (the
   kernel, its factory's arguments, its arguments' numba types);
2. this process, with the simulator off, builds the same kernels for the real target
   and compiles each recorded signature to PTX (``numba.cuda.compile_ptx``, compute
   capability 9.0: the H100 and H200), and the stump histograms at the shapes a GPU
   launches (256 bins, 3 to 8 features a block: the simulator's launches are smaller);
3. where the CUDA toolkit's ``ptxas`` is found, it assembles each PTX for ``sm_90`` and
   reads what a launch of 256 threads needs: registers, stack, spills, static shared
   memory, and so the occupancy of an SM (64 K registers, 228 KiB of shared memory,
   2,048 threads);
4. where ``cuobjdump`` is found too (the toolkit's, or the ``nvidia-cuda-cuobjdump``
   wheel's), it reads the machine code's atomics and counts those made of
   compare-and-swap loops: a float's ``atomic.max`` (retried only when it would
   raise the value), and any 64-bit integer add in shared memory, which a GPU has no
   instruction for (the kernels add 64-bit sums there as two 32-bit words).

Run it from the repository's root::

    python tools/cuda_ptx_check.py                 # the GPU suite (8 min on 2 cores)
    python tools/cuda_ptx_check.py -k multiclass
    python tools/cuda_ptx_check.py --save launches.json      # keep the record
    python tools/cuda_ptx_check.py --launches launches.json  # check it again (1 min)

A record stays valid while the kernels' arguments do not change.  It prints each kernel
and signature, and exits with 1 if one did not compile or assemble, needs more than
48 KiB of static shared memory (what a block gets without opting in to more), or adds
a 64-bit integer in shared memory by a compare-and-swap loop.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
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


#: The kernels made a size at a time (the sizes compile-time constants), by name: their
#: factory in ``oracleboost.cuda.stump_kernels``.
_SIZED = {"histogram": "histogram_kernel", "histogram_rows": "histogram_rows_kernel"}


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


#: The environment variable that turns this module, loaded by pytest as a plugin in
#: every worker (``-p cuda_ptx_check``), into a recorder: the folder it writes to.
_RECORD_TO = "ORACLEBOOST_RECORD_LAUNCHES"
_SEEN: dict[str, dict] = {}


def pytest_configure(config) -> None:
    """(The plugin.)  Record every kernel launch of this process's tests."""
    if not os.environ.get(_RECORD_TO):
        return
    from oracleboost.cuda import device
    from oracleboost.cuda import stump_kernels as sk

    launch = device._Counted.__getitem__

    def recording(self, config):
        configured = launch(self, config)
        fn = getattr(self.kernel, "fn", None) or self.kernel.py_func

        def run(*args):
            entry = {"module": fn.__module__, "name": fn.__name__,
                     "key": getattr(self, "factory_key", None),
                     "types": [_type_of(a) for a in args]}
            _SEEN[json.dumps(entry, sort_keys=True)] = entry
            return configured(*args)

        return run

    def keyed(factory):
        def make(bins, features, channels):
            kernel = factory(bins, features, channels)
            kernel.factory_key = [int(bins), int(features), int(channels)]
            return kernel
        return make

    device._Counted.__getitem__ = recording
    for name in _SIZED.values():
        setattr(sk, name, keyed(getattr(sk, name)))


def pytest_unconfigure(config) -> None:
    """(The plugin.)  This process's launches, into a file of its own."""
    folder = os.environ.get(_RECORD_TO)
    if folder:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(folder, f"{worker}.json").write_text(json.dumps(list(_SEEN.values())))


def record(path: str, tests: list[str], select: str | None, jobs: int) -> int:
    """Run ``tests`` on the simulator in ``jobs`` processes, writing every launch's
    signature to ``path``; pytest's exit code."""
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", **{_RECORD_TO: folder})
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).parent), *filter(None, [env.get("PYTHONPATH")])])
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                Path(__file__).stem, "-n", str(jobs), "-x", *tests]
        if select:
            args += ["-k", select]
        code = subprocess.run(args, cwd=ROOT, env=env).returncode
        seen: dict[str, dict] = {}
        for part in sorted(Path(folder).glob("*.json")):
            for entry in json.loads(part.read_text()):
                seen[json.dumps(entry, sort_keys=True)] = entry
    Path(path).write_text(json.dumps(list(seen.values()), indent=1))
    return code


#: A GPU's launch of the row kernels and the histogram (``oracleboost.cuda.Launch``'s
#: default): 256 threads a block; the histogram at its largest bins and features.
THREADS = 256
GPU_HISTOGRAMS = {"histogram": [(256, 8, 1), (256, 8, 2)],
                  "histogram_rows": [(256, 8, 3), (256, 3, 8)]}

#: An SM of the H100 and H200 (compute capability 9.0): 64 K 32-bit registers, given to
#: a warp in units of 256; 228 KiB of shared memory (1 KiB of it kept a block); 2,048
#: threads and 32 blocks.
_SM = {"registers": 65536, "register_unit": 256, "shared": 228 * 1024,
       "shared_reserved": 1024, "threads": 2048, "blocks": 32}
_BLOCK_SHARED = 48 * 1024


def _tool(name: str) -> str | None:
    """The path of a CUDA tool: on PATH, in $CUDA_HOME/bin, or in an nvidia wheel."""
    found = shutil.which(name)
    if found:
        return found
    places = [Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin"]
    try:
        import nvidia  # the namespace package of NVIDIA's wheels

        places += [Path(p) / sub / "bin" for p in nvidia.__path__ for sub in ("cu13", "cu12")]
    except ImportError:
        pass
    for place in places:
        if (place / name).is_file():
            return str(place / name)
    return None


def occupancy(registers: int, shared: int, threads: int = THREADS) -> float:
    """The share of an SM's 2,048 threads that blocks of ``threads`` using
    ``registers`` a thread and ``shared`` bytes of static shared memory keep resident."""
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // _SM["register_unit"]) * _SM["register_unit"]
    blocks = min(_SM["registers"] // (per_warp * warps) if per_warp else _SM["blocks"],
                 _SM["shared"] // (shared + _SM["shared_reserved"]),
                 _SM["threads"] // threads, _SM["blocks"])
    return blocks * threads / _SM["threads"]


def assemble(ptx: str, ptxas: str, cuobjdump: str | None) -> dict:
    """``ptx`` assembled for sm_90: its resources, and its compare-and-swap atomics."""
    with tempfile.TemporaryDirectory() as tmp:
        source, binary = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
        Path(source).write_text(ptx)
        done = subprocess.run([ptxas, "-arch=sm_90", "-v", source, "-o", binary],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"ptxas: {done.stderr.strip()[:2000]}")
        info = done.stderr
        used = re.search(r"Used (\d+) registers", info)
        smem = re.search(r"(\d+) bytes smem", info)
        stack = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                          r"(\d+) bytes spill loads", info)
        out = {"registers": int(used.group(1)) if used else 0,
               "shared": int(smem.group(1)) if smem else 0,
               "stack": int(stack.group(1)) if stack else 0,
               "spills": int(stack.group(2)) + int(stack.group(3)) if stack else 0}
        if cuobjdump:
            sass = subprocess.run([cuobjdump, "-sass", binary], capture_output=True,
                                  text=True, check=True).stdout
            ops = re.findall(r"\b(ATOMS|ATOMG|ATOM)\.([A-Z0-9_.]+)", sass)
            out["shared_spin"] = sum(1 for u, o in ops if u == "ATOMS" and "CAST.SPIN" in o)
            out["cas"] = sum(1 for u, o in ops if ".CAS" in "." + o and "CAST.SPIN" not in o)
    out["occupancy"] = occupancy(out["registers"], out["shared"])
    return out


def _signature(types_json: list) -> tuple:
    import numba
    import numpy as np
    from numba import types

    sig = []
    for t in types_json:
        if t[0] == "array":
            sig.append(types.Array(numba.from_dtype(np.dtype(t[1])), t[2], t[3]))
        else:
            scalar = getattr(types, t[1], None)
            if not isinstance(scalar, types.Number | types.Boolean):
                raise ValueError(f"a recorded argument type is not a number: {t!r}")
            sig.append(scalar)
    return tuple(sig)


def _kernel(entry: dict):
    """The kernel a record's entry names, built by its factory: only this package's
    kernel modules, and only the kernels their factories make (a record is data: it
    names nothing else to import or call)."""
    import importlib

    name, where = entry["name"], entry["module"]
    if where not in _FACTORIES:
        raise ValueError(f"a recorded kernel's module is not a kernel module: {where!r}")
    module = importlib.import_module(where)
    if name in _SIZED and where == "oracleboost.cuda.stump_kernels":
        key = entry["key"]
        if not (isinstance(key, list) and len(key) == 3
                and all(isinstance(x, int) and 0 < x <= 4096 for x in key)):
            raise ValueError(f"a recorded kernel's sizes are not three ints: {key!r}")
        return getattr(module, _SIZED[name])(*key)
    made = vars(getattr(module, _FACTORIES[where])())
    if name not in made or name.startswith("_"):
        raise ValueError(f"{where} makes no kernel named {name!r}")
    return made[name]


def compile_all(path: str) -> int:
    """Compile (and, with ``ptxas``, assemble) every recorded signature for the real
    target; the number that failed a check."""
    from types import SimpleNamespace

    import numba
    import numba.cuda.dispatcher
    from numba import cuda

    # The kernels are built, never launched, here: no driver is asked for anything.  A
    # device function compiles for the current device's compute capability: 9.0.
    cuda.is_available = lambda: True
    numba.cuda.dispatcher.get_current_device = lambda: SimpleNamespace(
        compute_capability=(9, 0))
    entries = json.loads(Path(path).read_text())
    for name, keys in GPU_HISTOGRAMS.items():  # a GPU's shapes, on a recorded signature
        recorded = [e for e in entries if e["name"] == name]
        for key in keys:
            if recorded and not any(e["key"] == list(key) for e in recorded):
                entries.append(dict(recorded[0], key=list(key)))
    ptxas = _tool("ptxas")
    cuobjdump = _tool("cuobjdump") if ptxas else None
    if not ptxas:
        print("ptxas not found (a CUDA toolkit's bin, or CUDA_HOME): PTX only")
    elif not cuobjdump:
        print("cuobjdump not found (pip install nvidia-cuda-cuobjdump): no atomics read")
    failed = 0
    rows = []
    for entry in sorted(entries, key=lambda e: (e["module"], e["name"], str(e.get("key")))):
        kernel = _kernel(entry)
        sig = _signature(entry["types"])
        key = f"[{','.join(map(str, entry['key']))}]" if entry.get("key") else ""
        label = f"{entry['module'].rsplit('.', 1)[-1]}.{entry['name']}{key}"
        try:
            ptx, _ = cuda.compile_ptx(kernel.kernel.py_func, sig, cc=(9, 0))
            used = assemble(ptx, ptxas, cuobjdump) if ptxas else None
        except Exception as exc:  # noqa: BLE001 - every failure is reported
            failed += 1
            print(f"FAILED {label}{sig}\n    {type(exc).__name__}: {str(exc)[:2000]}")
            continue
        problems = []
        if used and used["shared"] > _BLOCK_SHARED:
            problems.append(f"{used['shared']} bytes of static shared memory")
        if used and used.get("shared_spin"):
            problems.append(f"{used['shared_spin']} compare-and-swap loops in shared memory")
        failed += bool(problems)
        print(f"{'FAILED' if problems else 'ok    '} {label}{sig}"
              + (f"\n    {'; '.join(problems)}" if problems else ""))
        if used:
            rows.append((label, used))
    if rows:
        _table(rows)
    what = "compiled to PTX and assembled" if ptxas else "compiled to PTX"
    print(f"{len(entries) - failed} of {len(entries)} signatures {what} (sm_90)")
    return failed


def _table(rows: list[tuple[str, dict]]) -> None:
    """Each kernel's resources, its worst signature (most registers) a line."""
    worst: dict[str, dict] = {}
    for label, used in rows:
        if label not in worst or used["registers"] > worst[label]["registers"]:
            worst[label] = used
    atomics = "cuobjdump" if "cas" in next(iter(worst.values())) else None
    print(f"\n{'kernel':44} regs stack spill  smem occupancy"
          + ("  CAS loops" if atomics else ""))
    for label, u in sorted(worst.items()):
        print(f"{label:44} {u['registers']:4} {u['stack']:5} {u['spills']:5} "
              f"{u['shared']:5} {u['occupancy']:9.0%}"
              + (f"  {u['cas'] + u['shared_spin']:9}" if atomics else ""))
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", dest="select", default=None,
                        help="only the tests pytest's -k selects")
    parser.add_argument("-n", dest="jobs", type=int, default=os.cpu_count() or 1,
                        help="processes that run the tests (default: every core)")
    parser.add_argument("--launches", metavar="FILE",
                        help="check the launches recorded in FILE (no tests are run)")
    parser.add_argument("--save", metavar="FILE", help="keep the record in FILE")
    options = parser.parse_args()
    if options.launches:
        return 1 if compile_all(options.launches) else 0
    with tempfile.TemporaryDirectory() as tmp:
        path = options.save or os.path.join(tmp, "launches.json")
        if record(path, TESTS, options.select, options.jobs) != 0:
            print("the GPU tests failed on the simulator; fix them first")
            return 1
        return 1 if compile_all(path) else 0


if __name__ == "__main__":
    sys.exit(main())
