"""A worker's memory during a fit on a dask array three times larger than its limit.

``examples/fit_on_dask_array.py`` at its defaults: two worker processes of one thread
and 1 GiB each, with distributed's default thresholds (spill at 70 %, pause at 80 %,
restart at 95 % of ``memory_limit``), fit MABoost on X of 3,145,728 × 128 float64 (3 GiB:
together the two workers could not hold it), made chunk by chunk on the workers, then
predict on it.  The example reports each worker's peak resident memory against its
limit (:func:`oracleboost.worker_memory.watch_worker_memory`, sampled inside each worker
every 10 ms), and whether a worker was restarted meanwhile.

The budget the example states: about 350 MiB for the process with the library and its
compiled kernels, a byte a feature a row for the rows' bins, 8 float64 a row of MABoost's
state, and one float64 partition of X while it is binned; 60-65 % of the limit measured
on two cores.  The test asserts each peak stays below the pause threshold (a paused
worker stops running the fit's tasks) and that no worker restarted.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from oracleboost.worker_memory import watch_worker_memory  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "fit_on_dask_array.py"
PAUSE = 0.80  # distributed.worker.memory.pause, its default

_PEAK = re.compile(r"^worker (\S+): peak ([\d,]+) MiB of ([\d,]+) MiB \((\d+) %\)$", re.M)
_DATA = re.compile(r"^X: ([\d,]+) × (\d+) float64 = ([\d.]+) GiB on (\d+) workers of "
                   r"(\d+) MiB each$", re.M)


def _mib(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_example_at_its_defaults_stays_within_each_workers_memory(tmp_path):
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                          timeout=900, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    data = _DATA.search(done.stdout)
    assert data is not None, done.stdout
    rows, d, workers, limit = (_mib(data[1]), int(data[2]), int(data[4]), int(data[5]))
    assert rows * d * 8 >= 3 * limit * 2**20  # X: at least 3 × one worker's limit
    assert workers == 2
    peaks = _PEAK.findall(done.stdout)
    print("\n".join(m.group(0) for m in _PEAK.finditer(done.stdout)))
    assert "restarted or lost" not in done.stdout, done.stdout
    assert len(peaks) == 2, done.stdout  # both workers, there from start to end
    for worker, peak, of, _ in peaks:
        assert _mib(of) == limit
        assert 0 < _mib(peak) <= PAUSE * limit, (worker, peak, limit)
    assert "10 rounds (max_rounds)" in done.stdout


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  memory_limit="1GiB", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        yield client


def _hold(n: int, seconds: float) -> float:
    import numpy as np

    a = np.ones(n)  # written: its pages are resident
    time.sleep(seconds)
    return float(a.sum())


def test_watch_reports_each_workers_peak_against_its_limit(client):
    import psutil

    worker = sorted(client.scheduler_info()["workers"])[0]
    before = client.run(lambda: psutil.Process().memory_info().rss)[worker]
    with watch_worker_memory(client) as memory:
        assert memory.peaks == {}  # filled when the block ends
        # 256 MiB on one worker, held for a moment (half a second: many samples), then
        # let go: within the peak it reports
        future = client.submit(_hold, 2**25, 0.5, workers=[worker], pure=False)
        assert future.result() == 2**25
    assert set(memory.peaks) == set(client.scheduler_info()["workers"])
    assert memory.restarted == []
    assert memory.peaks[worker] >= before + 200 * 2**20, (before, memory.peaks[worker])
    assert set(memory.limits.values()) == {1024 * 2**20}
    report = memory.report()
    assert len(report.splitlines()) == 2 and report.count("of 1,024 MiB") == 2
    assert all(0 < memory.fraction(w) < 1 for w in memory.peaks)


def test_watch_names_the_workers_restarted_meanwhile(client):
    before = set(client.scheduler_info()["workers"])
    with watch_worker_memory(client) as memory:
        client.restart()
    assert memory.peaks == {}  # their peaks left with the processes
    assert set(memory.restarted) >= before
    assert "restarted or lost meanwhile, peak unknown" in memory.report()


def test_watch_refuses_a_bad_interval(client):
    with pytest.raises(ValueError, match="interval=0"):
        with watch_worker_memory(client, interval=0):
            pass
