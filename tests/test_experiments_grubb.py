"""Reproductions of Grubb & Bagnell (2011) Figures 1–3, driven through
``oracleboost.experiments`` in quick mode.

Each registered experiment runs once (module-scoped fixtures) and must draw itself to a
PNG.  Measured in quick mode (the assertions leave room):

* Figure 3, letter (2,000 rows, 200 weak learners): final training hinge naive 1.007
  (6 distinct stumps), repeated 0.845, residual 0.385.
* Figure 2 (synthetic ranking, 150 weak learners): final test disagreement naive
  0.162, repeated 0.145, residual 0.158 (0.5 at f = 0).
* Figure 1 (16 + 16 synthetic 12×12 terrain maps, 40 five-unit nets, η_t = 0.03/√t) is
  chaotic: the nets' L-BFGS fits round differently with the OpenBLAS kernel
  (OPENBLAS_CORETYPE) and, for Prescott and Nehalem, with its thread count (1 or 2).
  Over booster seeds 0–4 × kernels Haswell/SkylakeX/Sandybridge/Prescott/Nehalem ×
  1 and 2 threads (35 distinct runs): held-out loss from 12 (f = 0) to naive 8.11–22.42
  (its min 8.09–9.48), repeated 8.53–28.01, residual 8.11–40.50 (the true cost scores
  8.11); training loss from 9.98–10.24 to naive 7.09–7.66, repeated 7.79–8.33,
  residual 6.93–11.11.  Seed 0 with SkylakeX gives naive 8.11, with Haswell 9.98.
"""

from __future__ import annotations

import numpy as np
import pytest
from quick_runs import quick_run, reads_quick_runs
from threadpoolctl import threadpool_limits

from oracleboost.experiments import EXPERIMENTS, Curves
from oracleboost.experiments.grubb_bagnell2011 import _completed

ALGORITHMS = ("naive", "repeated", "residual")

FIGURE3 = ("letter", "pendigits", "satimage", "splice")


@pytest.fixture(autouse=True)
def one_blas_thread():
    """One BLAS thread, as tests/test_reproduce_cache.py runs these experiments: Figure
    1's 5-unit nets make tiny products, many times slower on two threads of a busy
    2-core machine (measured under load: 63 s of CPU against 7.4 s on one thread).  The
    ranges above were measured on 1 and 2 threads."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _run(name: str) -> Curves:
    return quick_run(name)  # (shared with test_experiments_telgarsky)


def test_registry_names():
    expected = {"grubb2011-figure1", "grubb2011-figure2"} | {
        f"grubb2011-figure3-{d}" for d in FIGURE3
    }
    assert expected <= set(EXPERIMENTS)


def test_completed_maps_learners_to_finished_outer_iterations():
    # repeated projection: outer iterations of 1, 2, 3 learners, then a truncated one
    outer = np.array([1, 2, 2, 3, 3, 3, 4])
    np.testing.assert_array_equal(_completed(outer, 7), [0, 0, 2, 2, 2, 5, 6])
    # naive / residual stopped early after 3 learners: continued flat
    np.testing.assert_array_equal(_completed(np.array([1, 2, 3]), 5), [0, 1, 2, 2, 2])


@reads_quick_runs
@pytest.mark.parametrize(
    "name",
    ["grubb2011-figure1", "grubb2011-figure2"]
    + [f"grubb2011-figure3-{d}" for d in FIGURE3],
)
def test_experiment_draws_png(name, tmp_path):
    curves = _run(name)
    assert isinstance(curves, Curves)
    for values in curves.series.values():
        assert len(values) == len(curves.x)
        assert np.all(np.isfinite(values))
    path = curves.save(tmp_path / f"{name}.png")
    with open(path, "rb") as fh:
        head = fh.read(8)
    assert head == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / f"{name}.png").stat().st_size > 1000
    assert curves.to_text()


@reads_quick_runs
def test_figure3_letter_naive_stalls_residual_progresses():
    curves = _run("grubb2011-figure3-letter")
    assert list(curves.series) == list(ALGORITHMS)
    naive = curves.series["naive"][-1]
    assert naive > 0.9  # measured 1.007: stuck at the f = 0 value 1
    assert curves.series["residual"][-1] < naive - 0.3  # measured 0.385
    assert curves.series["repeated"][-1] < naive  # measured 0.845
    assert "distinct stumps" in curves.notes
    for p in ALGORITHMS:
        assert len(curves.aux[f"{p} training error"]) == len(curves.x)


@reads_quick_runs
def test_figure2_test_disagreement_falls():
    curves = _run("grubb2011-figure2")
    assert list(curves.series) == list(ALGORITHMS)
    for p in ALGORITHMS:
        assert curves.series[p][-1] < 0.35  # 0.5 at f = 0; measured 0.145–0.162
    assert "MSLR-WEB10K" in curves.notes


@reads_quick_runs
def test_figure1_held_out_loss_falls_below_f0():
    """Figure 1 analogue on terrain maps (quick mode, booster seed 0).  Only claims that
    held in all 35 distinct runs measured (booster seeds 0–4 × OpenBLAS kernels
    Haswell/SkylakeX/Sandybridge/Prescott/Nehalem × 1 and 2 OpenBLAS threads; the
    thread count changes the run for Prescott and Nehalem only) are asserted, each
    with its worst case over those runs:

    * naive and repeated projection's training loss falls by more than 10 %: final /
      first at most 0.761 (naive) and 0.832 (repeated);
    * residual projection's training loss falls below its start at some learner (min /
      first at most 0.860) but need not end lower: final / first 0.69–1.10;
    * the first net already helps on held-out maps: held-out loss after one learner
      9.24–9.95 (the same for all three algorithms) against 12 at f = 0;
    * naive projection's held-out loss gets well below f = 0's: its min over the 40
      learners is 8.09–9.48, at most 0.79 × 12, asserted < 0.85 × 12;
    * residual projection's ||Δ|| grows (the nets' edge on MMP's spiky residual falls
      towards 0, see the notes): final / first 31.6–38.1, asserted > 20.

    Not asserted, because it fails for some seeds or kernels in quick mode: naive's
    *final* held-out loss (8.11–22.42) ending below f = 0's (it ends above 12 in 8 of
    the 35 runs, e.g. 22.42 for seed 1 with Haswell), below 0.75 × 12 (fails in 18),
    below its first value (fails in 14) or within 0.5 of the true cost's 8.11 (fails
    in 20; seed 0 with Haswell ends at 9.98, the failure reported).  Those hold
    at full size (32 + 32 maps, 100 learners, about 8 s a run; not run here): over the
    same 35 seed × kernel × thread runs naive ends at 7.13–7.74 (at most 0.645 × 12,
    between 0.82 and 0.21 below the true cost's 7.95) and its held-out curve never
    rises above its first value; residual's training loss still may end above its
    start there (final / first 0.63–1.71), and its ||Δ|| grows 81–92×."""
    curves = _run("grubb2011-figure1")
    test0 = curves.reference["held-out R at f = 0"]
    assert test0 == pytest.approx(12.0)
    for p in ALGORITHMS:
        train = curves.series[f"{p} (train)"]
        if p == "residual":
            assert train.min() < 0.95 * train[0]  # worst 0.860
        else:
            assert train[-1] < 0.9 * train[0]  # worst 0.761 naive, 0.832 repeated
        assert curves.series[f"{p} (test)"][0] < test0 - 1  # worst 9.95
    naive = curves.series["naive (test)"]
    assert naive.min() < 0.85 * test0  # worst 9.48 (0.79 × 12)
    rn = curves.aux["residual residual norm"]
    assert rn[-1] > 20 * rn[0]  # worst 31.6×
    assert "held-out" in curves.notes
