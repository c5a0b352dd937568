"""MABoost's variants, updates and projections as objects (Naghibi & Pfister 2014).

Each object is what one step of the box does: the tests check it against the paper's
formula on a few rows, and that the objects are values (picklable, equal by value)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from oracleboost.boosters.mirror.algorithm import MirrorState
from oracleboost.boosters.mirror.maps import EntropyMap, EuclideanMap
from oracleboost.boosters.mirror.updates import (
    ActiveUpdate,
    EuclideanNear,
    LazyUpdate,
    MadaBoostUpdate,
    MapProjection,
    Normalised,
    Softmax,
    SparseBoostUpdate,
)
from oracleboost.boosters.mirror.variants import (
    VARIANTS,
    MABoost,
    MadaBoost,
    MaxMargin,
    Smooth,
    make_variant,
)
from oracleboost.engine.rounds import StopReason
from oracleboost.rows.blocks import RowBlocks

RNG = np.random.default_rng(0)
Z = np.log(RNG.uniform(0.1, 1.0, 9))
W = RNG.uniform(0.1, 1.0, 9)
W /= W.sum()
STEP = RNG.uniform(-0.3, 0.3, 9)


def _state(**kw) -> MirrorState:
    return MirrorState(w=W, z=Z, f=np.zeros(9), t=kw.pop("t", 3),
                       potential=kw.pop("potential", 0.5), rng=None, **kw)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_each_variant_is_a_value_made_by_its_name(name):
    variant = make_variant(name, smoothness=4.0, sparsity=0.25)
    assert variant.name == name
    assert pickle.loads(pickle.dumps(variant)) == variant
    assert hash(variant) == hash(make_variant(name, smoothness=4.0, sparsity=0.25))


def test_the_step_of_algorithm_1_and_of_theorem_2():
    """(b): η_t = ν γ_t / L; max-margin: over √(t + 1) after t rounds; the potential
    adds η γ − L η² / 2 (Theorem 1's regret sum)."""
    state = _state(t=3)
    eta, alpha, potential = MABoost().step(0.5, 0.2, state, 4.0, 9)
    assert eta == 0.5 * 0.2 / 4.0 and alpha == 0.0
    assert potential == pytest.approx(0.5 + eta * 0.2 - 4.0 * eta**2 / 2, rel=1e-15)
    eta_mm, _, _ = MaxMargin().step(0.5, 0.2, state, 4.0, 9)
    assert eta_mm == pytest.approx(eta / math.sqrt(4.0), rel=1e-15)


def test_sparseboost_step_and_stop():
    """Eq. 36: η = ν (1 − s) γ ‖y‖₁ / N and α = s γ ‖y‖₁; a state of zeros stops."""
    variant = make_variant("sparse", sparsity=0.25)
    eta, alpha, _ = variant.step(1.0, 0.4, _state(mass=0.8), 1.0, 10)
    assert eta == pytest.approx(0.75 * 0.4 * 0.8 / 10, rel=1e-15)
    assert alpha == pytest.approx(0.25 * 0.4 * 0.8, rel=1e-15)
    assert variant.stop(10, 10) == StopReason.ZERO_WEIGHTS and variant.stop(9, 10) is None
    assert not variant.algorithm_1 and variant.accepts(EuclideanMap(), "active")
    assert not variant.accepts(EntropyMap(), "active")
    assert not variant.accepts(EuclideanMap(), "lazy")


def test_madaboost_step_halt_and_bound():
    """Algorithm 3: η = ν ε γ; ε = 0 halts before the oracle is asked; the bound
    √(2 / Σγ²) at ν = 1 only."""
    variant = MadaBoost()
    eta, _, potential = variant.step(1.0, 0.3, _state(error=0.2, potential=1.0), 1.0, 9)
    assert eta == pytest.approx(0.2 * 0.3, rel=1e-15) and potential == 1.0 + 0.3**2
    assert variant.halt(_state(error=0.0)) == StopReason.ZERO_TRAINING_ERROR
    assert variant.halt(_state(error=0.1)) is None
    assert variant.bound(EntropyMap(), 8.0, 9, True, 1.0) == 0.5
    assert math.isnan(variant.bound(EntropyMap(), 8.0, 9, True, 0.5))


def test_smooth_bound_is_no_lower_than_one_over_k():
    """Theorem 3: the error is at most 1/k once Theorem 1's bound is below it."""
    smooth, plain = Smooth(smoothness=4.0), MABoost()
    assert plain.bound(EntropyMap(), 10.0, 9, True, 1.0) == math.exp(-10.0)
    assert smooth.bound(EntropyMap(), 10.0, 9, True, 1.0) == 0.25
    assert smooth.bound(EntropyMap(), 0.1, 9, True, 1.0) == math.exp(-0.1)
    assert math.isnan(smooth.bound(EuclideanMap(), 10.0, 9, False, 1.0))


def test_each_update_writes_its_point():
    """(c): lazy ∇R(z) + η d, active ∇R(w) + η d, SparseBoost max(0, y + η d − α η)
    (eq. 29), the MadaBoost variant log s + min(0, log z + η d) (Lemma 5)."""
    mirror, log_s = EntropyMap(), np.log(RNG.uniform(0.5, 2.0, 9))
    cases = [(LazyUpdate(), Z + STEP, Z + STEP), (ActiveUpdate(), np.log(W) + STEP, None),
             (SparseBoostUpdate(), np.maximum(W + STEP - 0.01, 0.0), None),
             (MadaBoostUpdate(), log_s + np.minimum(Z + STEP, 0.0), Z + STEP)]
    for update, expected, dual_expected in cases:
        z = W if isinstance(update, SparseBoostUpdate) else Z
        out = np.empty(9)
        dual = update.dual_rows(out, 9)
        update.point(out, dual, STEP, z, W, mirror,
                     log_s if update.log_weights else None, 0.01)
        np.testing.assert_allclose(out, expected, rtol=1e-15, err_msg=update.name)
        if dual_expected is not None:
            np.testing.assert_allclose(dual, dual_expected, rtol=1e-15, err_msg=update.name)
        assert (dual is None) == (not update.keeps_dual)
        assert pickle.loads(pickle.dumps(update)) == update


def test_each_update_names_its_projection():
    """(d): the lazy entropy update uncapped is a softmax (the fused pass); the
    Euclidean map starts near the last threshold; SparseBoost normalises y."""
    assert type(LazyUpdate().projection(EntropyMap(), None)) is Softmax
    assert Softmax.fused and not MapProjection.fused
    assert type(LazyUpdate().projection(EntropyMap(), 0.5)) is MapProjection
    assert type(ActiveUpdate().projection(EntropyMap(), None)) is MapProjection
    assert type(ActiveUpdate().projection(EuclideanMap(), None)) is EuclideanNear
    assert type(LazyUpdate().projection(EuclideanMap(), None)) is EuclideanNear
    assert type(SparseBoostUpdate().projection(EuclideanMap(), None)) is Normalised
    assert type(MadaBoostUpdate().projection(EntropyMap(), None)) is MapProjection


def test_projections_land_on_the_simplex():
    blocks = RowBlocks(9)
    for projection, point, mirror in [(Softmax(), Z, EntropyMap()),
                                      (MapProjection(), Z, EntropyMap()),
                                      (EuclideanNear(), W + STEP, EuclideanMap())]:
        w, log_norm, _ = projection(blocks, point, cap=None, mirror=mirror, mass=1.0,
                                    log_norm=0.0, near=None)
        assert w.min() >= 0.0 and abs(w.sum() - 1.0) < 1e-12, projection
    y = np.maximum(W + STEP, 0.0)
    w, _, _ = Normalised()(blocks, y, cap=None, mirror=EuclideanMap(), mass=y.sum(),
                           log_norm=0.0, near=None)
    np.testing.assert_allclose(w, y / y.sum(), rtol=1e-15)
    w, _, _ = Normalised()(blocks, np.zeros(9), cap=None, mirror=EuclideanMap(), mass=0.0,
                           log_norm=0.0, near=None)
    assert not w.any()
