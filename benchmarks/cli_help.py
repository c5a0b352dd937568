"""How long ``oracleboost --help`` takes, and what the command-line module adds to it.

Run: ``python benchmarks/cli_help.py [--repeats N]`` (default 7; at least 5).  Not a
test: it measures and prints, and sets no threshold (the target, under 1 s, is read from
the table).

Each repeat starts fresh processes, interleaved so that a busy moment of the machine
touches every row alike:

* ``python -m oracleboost --help``: the wall time of the whole command, interpreter
  start-up included (``oracleboost --help`` through the installed script, when it is on
  ``PATH``, is timed too);
* ``python -c "import oracleboost"`` and ``python -c "pass"``: the package's import and
  the bare interpreter, so that the row ``--help minus import oracleboost`` is what the
  command line itself adds.

It then reports, from one ``python -X importtime -m oracleboost --help``, the cumulative
import time of ``oracleboost`` and of ``oracleboost.cli`` and the five slowest modules
that ``--help`` imports.  Rows: the median of the repeats and their spread (min-max).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def _wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def _importtime() -> dict[str, tuple[int, int]]:
    """``module -> (self µs, cumulative µs)`` from ``-X importtime`` of ``--help``."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "oracleboost", "--help"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            check=True)
    times: dict[str, tuple[int, int]] = {}
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|")
        if own.strip().isdigit():
            times[name.strip()] = (int(own), int(cumulative))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="fresh runs a row (>= 5)")
    args = parser.parse_args()
    if args.repeats < 5:
        parser.error("--repeats must be at least 5 (a median and a spread)")

    rows = {
        "python -m oracleboost --help": [sys.executable, "-m", "oracleboost", "--help"],
        "python -c 'import oracleboost'": [sys.executable, "-c", "import oracleboost"],
        "python -c 'pass' (the interpreter)": [sys.executable, "-c", "pass"],
    }
    script = shutil.which("oracleboost")
    if script:
        rows["oracleboost --help (installed script)"] = [script, "--help"]
    for cmd in rows.values():  # once each, untimed: the files are in the page cache
        _wall(cmd)
    seconds: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.repeats):
        for name, cmd in rows.items():
            seconds[name].append(_wall(cmd))
    helps = seconds["python -m oracleboost --help"]
    package = seconds["python -c 'import oracleboost'"]
    seconds["--help minus import oracleboost"] = [
        h - p for h, p in zip(helps, package, strict=True)]

    print(f"oracleboost --help, {args.repeats} fresh processes a row, {os.cpu_count()} CPUs, "
          f"Python {sys.version.split()[0]}")
    width = max(len(name) for name in seconds)
    print(f"{'':{width}}  {'median':>8}  {'min-max':>15}")
    for name, values in seconds.items():
        spread = f"{min(values) * 1e3:.0f}-{max(values) * 1e3:.0f} ms"
        print(f"{name:{width}}  {statistics.median(values) * 1e3:6.0f} ms  {spread:>15}")

    times = _importtime()
    print("\nimport time (cumulative, one run of python -X importtime -m oracleboost --help):")
    for module in ("oracleboost", "oracleboost.cli", "oracleboost._cli_support", "argparse"):
        if module in times:
            print(f"  {module:28} {times[module][1] / 1e3:7.1f} ms")
    slowest = sorted(times.items(), key=lambda kv: kv[1][0], reverse=True)[:5]
    print("  slowest modules by their own time: "
          + ", ".join(f"{m} {own / 1e3:.1f} ms" for m, (own, _) in slowest))
    heavy = [m for m in times if m.split(".")[0] in ("numpy", "scipy", "sklearn", "matplotlib")]
    print(f"  numpy, scipy, scikit-learn or matplotlib imported: {'yes' if heavy else 'no'}")


if __name__ == "__main__":
    main()
