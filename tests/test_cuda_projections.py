"""MABoost's projections with their rows on the GPU, on numba's CUDA simulator: the
Euclidean projection onto the (capped) simplex
(:func:`oracleboost.optim.row_projections.euclidean_simplex_rows_near`) and the KL
projection onto a capped simplex (:func:`~oracleboost.optim.row_projections.
kl_simplex_rows`) on :class:`~oracleboost.cuda.blocks.DeviceBlocks`: the same
selection, its passes the device twins (:mod:`oracleboost.cuda.stages`).

Against the CPU's projection the weights agree to rounding and the exact zeros are the
same rows (the KL weights: to 1e-14 relatively, with the device's ``exp``): the
threshold is found from the same breakpoints, with the bracket's sums
made in fixed point on the device where the CPU adds floats in lane order (measured:
equal bits on most inputs, a few 1e-18 apart on the others).  The refinement passes
(pivots, counts, the sample) are reached at a few hundred rows by lowering the module's
``GATHER`` (the breakpoints gathered at once) for the test.
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda_simulator import simulator_here, test_in_a_child_process  # noqa: F401

from oracleboost.cuda import cuda_module
from oracleboost.cuda.blocks import DeviceBlocks
from oracleboost.optim import row_projections as rp
from oracleboost.rows.blocks import RowBlocks


def _point(n: int, seed: int) -> np.ndarray:
    """A MABoost-like point: weights near 1/n moved by steps, with ties."""
    rng = np.random.RandomState(seed)
    z = rng.randn(n) * 0.01 + 1.0 / n
    z[::7] = np.round(z[::7], 3)
    return z


def _caps(kind: str, n: int):
    if kind == "none":
        return None
    if kind == "scalar":
        return 3.0 / n
    return np.where(np.arange(n) % 3 == 0, 1.2 / n, np.inf)  # a capped secondary set


def _both(z, cap, near=None):
    n = z.size
    cpu, near_cpu = rp.euclidean_simplex_rows_near(RowBlocks(n, n, n_jobs=1), z, cap, near)
    cuda = cuda_module()
    dev_cap = cuda.to_device(cap) if isinstance(cap, np.ndarray) else cap
    w, near_dev = rp.euclidean_simplex_rows_near(DeviceBlocks(n), cuda.to_device(z), dev_cap,
                                                 near)
    return cpu, w, near_cpu, near_dev


def _same(cpu, w) -> None:
    got = w.copy_to_host()
    np.testing.assert_array_equal(got == 0.0, cpu == 0.0)  # the same support
    np.testing.assert_allclose(got, cpu, rtol=0, atol=1e-15)
    assert abs(got.sum() - 1.0) <= 1e-14


@pytest.mark.parametrize("caps", ["none", "scalar", "rows"])
def test_the_gathered_projection_is_the_cpu_s(caps):
    """Few breakpoints: the first pass gathers them all (3 passes)."""
    z = _point(200, 0)
    cpu, w, _, _ = _both(z, _caps(caps, z.size))
    _same(cpu, w)


@pytest.fixture
def small_gather(monkeypatch):
    """A bracket is gathered only under 40 breakpoints: the selection refines."""
    monkeypatch.setattr(rp, "GATHER", 40)
    monkeypatch.setattr(rp, "SAMPLE", 16)
    monkeypatch.setattr(rp, "KEEP", 64)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("caps", ["none", "scalar", "rows"])
def test_the_refined_projection_is_the_cpu_s(small_gather, caps, seed):
    """Pivots, counts between them and the sample on the device: the bracket is
    refined, then gathered; and the next projection started near the threshold."""
    z = _point(500, seed)
    cap = _caps(caps, z.size)
    cpu, w, near_cpu, near_dev = _both(z, cap)
    _same(cpu, w)
    assert near_dev is not None and near_cpu is not None
    assert near_dev.tau == pytest.approx(near_cpu.tau, rel=1e-12, abs=1e-18)
    # the next round's point, near the last: its first pass takes pivots near τ
    moved = z + np.random.RandomState(seed + 10).randn(z.size) * 1e-4
    cpu, w, _, _ = _both(moved, cap, near_dev)
    _same(cpu, w)


def test_the_projection_does_not_depend_on_the_launch(small_gather):
    z = _point(500, 4)
    cuda = cuda_module()
    outs = [rp.euclidean_simplex_rows(DeviceBlocks(z.size, grid), cuda.to_device(z),
                                      2.5 / z.size).copy_to_host()
            for grid in (None, (3, 5), (1, 16))]
    assert outs[0].tobytes() == outs[1].tobytes() == outs[2].tobytes()


@pytest.mark.parametrize("bad, cap, match", [
    ("nan", None, "z contains NaN"),
    ("inf", None, "z contains inf"),
    (None, 0.5 / 200, "cap is infeasible"),
])
def test_bad_points_and_caps_get_the_cpu_s_errors(bad, cap, match):
    z = _point(200, 5)
    if bad == "nan":
        z[3] = np.nan
    elif bad == "inf":
        z[3] = np.inf
    with pytest.raises(ValueError, match=match):
        rp.euclidean_simplex_rows(DeviceBlocks(z.size), cuda_module().to_device(z), cap)


# -- the KL projection onto a capped simplex (the entropy map's S_k and S_c) ---------------
def _log_point(n: int, seed: int) -> np.ndarray:
    """Log-weights spread over a few decades, every eleventh row a zero weight."""
    lz = np.random.RandomState(seed).randn(n) * 2.0
    lz[::11] = -np.inf
    return lz


def _kl_both(lz, cap):
    n = lz.size
    cpu = rp.kl_simplex_rows(RowBlocks(n, n, n_jobs=1), lz, cap)
    cuda = cuda_module()
    dev_cap = cuda.to_device(cap) if isinstance(cap, np.ndarray) else cap
    return cpu, rp.kl_simplex_rows(DeviceBlocks(n), cuda.to_device(lz), dev_cap)


def _kl_same(cpu, w, cap) -> None:
    """Equal to rounding relatively (the exps are the device's, the sums fixed-point);
    the same rows at their caps exactly, and the same zeros."""
    got = w.copy_to_host()
    capped = cap if np.ndim(cap) == 0 else cap
    np.testing.assert_array_equal(got == capped, cpu == capped)
    np.testing.assert_array_equal(got == 0.0, cpu == 0.0)
    np.testing.assert_allclose(got, cpu, rtol=1e-14, atol=0)
    assert abs(got.sum() - 1.0) <= 1e-14


@pytest.mark.parametrize("caps", ["scalar", "rows"])
def test_the_gathered_kl_projection_is_the_cpu_s(caps):
    lz = _log_point(200, 1)
    cap = 4.0 / 200 if caps == "scalar" else np.where(np.arange(200) % 3 == 0, 0.8 / 200,
                                                      np.inf)
    _kl_same(*_kl_both(lz, cap), cap)


@pytest.mark.parametrize("seed", [2, 3])
@pytest.mark.parametrize("caps", ["scalar", "rows"])
def test_the_refined_kl_projection_is_the_cpu_s(small_gather, caps, seed):
    lz = _log_point(500, seed)
    cap = 2.5 / 500 if caps == "scalar" else np.where(np.arange(500) % 3 == 0, 0.7 / 500,
                                                      np.inf)
    _kl_same(*_kl_both(lz, cap), cap)


def test_caps_that_just_cover_the_support_give_the_caps():
    """Caps summing to 1 on the rows with z > 0: w is the cap there, 0 elsewhere."""
    lz = _log_point(220, 4)
    support = np.isfinite(lz).sum()
    cpu, w = _kl_both(lz, 1.0 / support)
    np.testing.assert_array_equal(w.copy_to_host(), cpu)


@pytest.mark.parametrize("bad, match", [
    ("nan", "log_z contains NaN"),
    ("caps", "cap is infeasible on the support of z"),
])
def test_bad_log_points_and_caps_get_the_cpu_s_errors(bad, match):
    lz = _log_point(220, 5)
    cap = 2.0 / 220
    if bad == "nan":
        lz[4] = np.nan
    else:
        cap = 1.0 / 220  # sums to 1 over every row, below 1 over the support
    with pytest.raises(ValueError, match=match):
        rp.kl_simplex_rows(DeviceBlocks(lz.size), cuda_module().to_device(lz), cap)
