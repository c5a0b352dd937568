"""The weights' own ``exp`` (``_column_kernels.exp``): additions and products only, so
that its loop runs on vectors and gives the same bits on every CPU (NumPy's ``exp``
is its own vectorised one on AVX-512 CPUs and the C library's elsewhere)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleboost.rows import column_kernels as ck


def _exps(x: np.ndarray, top: float = 0.0) -> tuple[np.ndarray, float]:
    x = np.ascontiguousarray(x, dtype=np.float64)
    out, sums = np.empty_like(x), np.zeros(1)
    ck.shifted_exps(x, top, out, 0, x.size, max(1, x.size), sums)
    return out, float(sums[0])


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.abs(got - want) / np.spacing(np.abs(want))


def test_within_rounding_of_the_c_library_over_the_whole_range():
    """Within 2 units in the last place of NumPy's ``exp`` (each is within about 1 of
    the exact value) over every float64 argument that gives a normal number, and
    within one subnormal step below that."""
    x = np.linspace(-760.0, 720.0, 300_001)
    with np.errstate(over="ignore"):
        want = np.exp(x)
    got, _ = _exps(x)
    normal = np.isfinite(want) & (want >= np.finfo(np.float64).tiny)
    assert _ulps(got[normal], want[normal]).max() <= 2.0
    small = want < np.finfo(np.float64).tiny
    assert np.abs(got[small] - want[small]).max() <= 5e-324
    assert np.array_equal(np.isinf(got), np.isinf(want))


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-745.0, max_value=709.0), st.floats(min_value=-50.0, max_value=50.0))
def test_shifted_exps_are_exp_of_the_difference(x, top):
    got, total = _exps(np.array([x, x / 3.0, -abs(x)]), top)
    with np.errstate(over="ignore"):
        want = np.exp(np.array([x, x / 3.0, -abs(x)]) - top)
    finite = np.isfinite(want) & (want >= np.finfo(np.float64).tiny)
    assert (_ulps(got[finite], want[finite]) <= 2.0).all()
    if np.isfinite(got).all():  # the lane's sum, in interleaved_sum's order
        assert total == (got[0] + got[1]) + got[2]


def test_known_values_limits_and_special_values():
    """e, 1/e and 2 to a unit in the last place, the limits of overflow and
    underflow, and the special values as NumPy's."""
    got, _ = _exps(np.array([0.0, -0.0, 1.0, -1.0, math.log(2.0), -745.13, -745.14,
                             709.78, 709.79, np.inf, -np.inf, np.nan]))
    assert got[0] == got[1] == 1.0
    for value, exact in ((got[2], math.e), (got[3], 1 / math.e), (got[4], 2.0)):
        assert abs(value - exact) <= np.spacing(exact)  # 1 unit in the last place
    assert got[5] == 5e-324 and got[6] == 0.0
    assert np.isfinite(got[7]) and got[8] == np.inf
    assert got[9] == np.inf and got[10] == 0.0 and np.isnan(got[11])


def test_a_loop_of_it_runs_on_vectors():
    """The point of the form: LLVM makes vector code of a loop of it, with no call to
    a library's ``exp`` (a loop compiled here: the kernels' cached code cannot be
    inspected)."""
    import re

    import numba as nb

    @nb.njit(cache=False, error_model="numpy", boundscheck=False)
    def loop(x, out):
        for i in range(x.shape[0]):
            out[i] = ck.exp(x[i])

    x = np.linspace(-5.0, 5.0, 64)
    out = np.empty_like(x)
    loop(x, out)
    llvm = "".join(loop.inspect_llvm().values())
    assert re.search(r"<\d+ x double>", llvm)
    assert not re.search(r"call[^\n]*@(llvm\.exp|exp)\b", llvm)
    np.testing.assert_array_equal(out, _exps(x)[0])
