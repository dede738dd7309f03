"""The sequential test: its LLR against independent computations, its bounds and stopping rules, and
its words. Its error rates on block differences of real games: tests/test_sprt_calibration.py."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.rating.sequential import (
    DEFAULT_METHOD,
    METHODS,
    Method,
    RunningLlr,
    SequentialTest,
    describe,
    empirical_log_likelihood,
    fishtest_line,
    sprt,
)
from arena.rating.stats import mean_ci, t_cdf

# --- the empirical likelihood against brute force ------------------------------------------------


def _golden_max(f: object, low: float, high: float) -> float:
    """The maximum of a concave function on [low, high], by golden-section search."""
    assert callable(f)
    ratio = (math.sqrt(5) - 1) / 2
    a, b = low, high
    for _ in range(200):
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        if f(c) < f(d):
            a = c
        else:
            b = d
    return float(f((a + b) / 2))


def brute_log_likelihood(values: Sequence[float], mean: float) -> float:
    """The largest Σ log(p(x)/f(x)) over distributions p on three distinct values with expected value
    ``mean`` (f: the observed frequencies), found by searching the one free weight (the middle value's)."""
    counts = {v: values.count(v) for v in set(values)}
    x1, x2, x3 = sorted(counts)
    n = len(values)

    def loglik(p2: float) -> float:
        # p1 + p2 + p3 = 1 and p1·x1 + p2·x2 + p3·x3 = mean fix p1 and p3 once p2 is chosen.
        p1 = (x3 - mean - p2 * (x3 - x2)) / (x3 - x1)
        p3 = 1 - p1 - p2
        if min(p1, p2, p3) <= 0:
            return -math.inf
        return sum(c * math.log(n * p / c) for c, p in zip((counts[x1], counts[x2], counts[x3]), (p1, p2, p3),
                                                          strict=True))

    # The feasible p2 lie where p1 and p3 are both positive.
    high = min((x3 - mean) / (x3 - x2), (mean - x1) / (x2 - x1))
    return _golden_max(loglik, 0.0, high)


@pytest.mark.parametrize(("values", "mean"), [
    ([1.0, 2.0, 5.0], 3.0),
    ([-3.0, 0.0, 0.0, 4.0, 4.0, 4.0, 0.0], 0.5),
    ([-20.0, 7.5, 7.5, 7.5, 30.0], -10.0),
    ([2.0, 3.0, 100.0, 3.0], 99.0),
])
def test_empirical_likelihood_is_the_constrained_maximum(values: list[float], mean: float) -> None:
    distinct = sorted(set(values))
    counts = [values.count(v) for v in distinct]
    loglik, theta = empirical_log_likelihood(distinct, counts, mean)
    assert loglik == pytest.approx(brute_log_likelihood(values, mean), abs=1e-7)
    # The weights of the maximum: positive, summing to 1, with the asked expected value.
    n = len(values)
    weights = [c / (n * (1 + theta * (x - mean))) for x, c in zip(distinct, counts, strict=True)]
    assert all(w > 0 for w in weights)
    assert math.fsum(weights) == pytest.approx(1.0, abs=1e-9)
    assert math.fsum(w * x for w, x in zip(weights, distinct, strict=True)) == pytest.approx(mean, abs=1e-7)
    assert loglik == pytest.approx(sum(c * math.log(n * w / c) for c, w in zip(counts, weights, strict=True)),
                                   abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-200, 200), min_size=3, max_size=40), st.floats(0.01, 0.99), st.integers(0, 3))
def test_empirical_likelihood_on_three_values_matches_brute_force(raw: list[int], where: float, start: int) -> None:
    values = [float(v % 3 * 7 + (v % 2)) for v in raw]  # three or fewer distinct values
    distinct = sorted(set(values))
    if len(distinct) != 3:
        return
    mean = distinct[0] + where * (distinct[-1] - distinct[0])
    counts = [values.count(v) for v in distinct]
    guesses = (0.0, 1e6, -1e6, 0.01)  # a warm start from anywhere, even outside the bracket
    loglik, _ = empirical_log_likelihood(distinct, counts, mean, guesses[start])
    assert loglik == pytest.approx(brute_log_likelihood(values, mean), abs=1e-6)
    assert loglik <= 1e-12  # the observed frequencies themselves are the unconstrained maximum


def test_empirical_likelihood_at_the_observed_mean_is_zero_and_refuses_a_mean_outside() -> None:
    values, counts = [-2.0, 1.0, 4.0], [1, 2, 1]
    loglik, theta = empirical_log_likelihood(values, counts, 1.0)
    assert loglik == pytest.approx(0.0, abs=1e-12) and theta == pytest.approx(0.0, abs=1e-12)
    for outside in (-2.0, 4.0, 9.0):
        with pytest.raises(ValueError, match="strictly between"):
            empirical_log_likelihood(values, counts, outside)


SPRT_VALUES = [3.0, -2.0, 5.0, 1.0, 0.5, 4.0, -1.0, 2.5, 0.0, 3.5, 1.5, -0.5]


def test_el_llr_is_the_difference_of_the_two_constrained_maxima() -> None:
    # LLR = Σ ln(p1(x)/p0(x)) over the blocks, each p the maximum-likelihood distribution on the
    # observed values with its hypothesis' mean: the difference of the two log likelihoods.
    values = [1.0, 2.0, 5.0, 2.0, 1.0, 5.0, 5.0]
    llr = sprt(values, 2.5, 3.5, burn_in=100).llr
    assert sprt(values, 2.5, 3.5, burn_in=100).method == DEFAULT_METHOD == "el"
    assert llr == pytest.approx(brute_log_likelihood(values, 3.5) - brute_log_likelihood(values, 2.5), abs=1e-7)
    # Near the observed mean it is fishtest's normal approximation (alt2), as a likelihood ratio should be.
    mean = sum(SPRT_VALUES) / len(SPRT_VALUES)
    near = (mean + 0.001, mean + 0.003)
    assert sprt(SPRT_VALUES, *near, burn_in=100).llr == pytest.approx(
        sprt(SPRT_VALUES, *near, burn_in=100, method="alt2").llr, rel=1e-2)


def test_el_falls_back_to_alt2_while_a_hypothesis_lies_outside_the_blocks() -> None:
    # No distribution on the observed values has a mean outside their range, so there the LLR is the
    # normal (alt2) one: it decides, in the right direction, and never fails.
    def alt2(values: Sequence[float], d0: float, d1: float) -> float:
        return sprt(values, d0, d1, burn_in=100, method="alt2").llr

    inside = [0.0, 1.0, 3.0, 4.0]
    for d0, d1 in ((0.0, 2.0), (1.0, 4.0), (2.0, 6.0), (-1.0, 2.0), (5.0, 6.0), (-3.0, -2.0)):
        assert sprt(inside, d0, d1, burn_in=100).llr == alt2(inside, d0, d1)
    assert sprt(inside, 1.0, 2.0, burn_in=100).llr != alt2(inside, 1.0, 2.0)
    # A much stronger bot (every block far above both hypotheses) is accepted right after the burn-in.
    strong = [40.0 + (i % 5) for i in range(40)]
    result = sprt(strong, 0.0, 5.0)
    assert result.verdict == "H1" and result.n == 10 and result.llr == alt2(strong[:10], 0.0, 5.0)
    # All blocks equal: the variance floor keeps the sign, and the test decides.
    assert sprt([0.9] * 12, 0.0, 1.0).verdict == "H1"
    assert sprt([0.4] * 12, 0.0, 1.0).verdict == "H0"
    assert sprt([0.0] * 12, 0.0, 50.0).verdict == "H0"


def test_running_llr_matches_the_list_at_every_block() -> None:
    rng = random.Random(3)
    values = [round(rng.gauss(1.0, 10.0), 1) for _ in range(60)]
    for method in METHODS:
        running = RunningLlr(0.0, 2.0, method)
        path = [running.add(v) for v in values]
        assert path == [sprt(values[:k], 0.0, 2.0, burn_in=1000, method=method).llr for k in range(1, 61)]


# --- the normal forms (fishtest's alt and alt2) ----------------------------------------------------


def test_llr_alt_is_the_normal_likelihood_ratio() -> None:
    values = SPRT_VALUES
    n = len(values)
    # Each hypothesis gets the mean square distance of the blocks from its own mean as the variance.
    r0 = sum((x - 0.0) ** 2 for x in values) / n
    r1 = sum((x - 1.0) ** 2 for x in values) / n
    result = sprt(values, 0.0, 1.0, burn_in=100, method="alt")
    assert result.llr == pytest.approx(n / 2 * math.log(r0 / r1), rel=1e-12)

    # ... which is the log of the ratio of the two maximised normal likelihoods.
    def log_likelihood(mu: float, var: float) -> float:
        return sum(-0.5 * math.log(2 * math.pi * var) - (x - mu) ** 2 / (2 * var) for x in values)

    assert result.llr == pytest.approx(log_likelihood(1.0, r1) - log_likelihood(0.0, r0), rel=1e-12)
    assert result.verdict == "continue"
    assert result.ci == mean_ci(values)
    assert (result.mean, result.sd) == (result.ci.mean, result.ci.sd)
    # LOS from the t distribution on n - 1 degrees of freedom, as every LOS of the report.
    assert result.los == pytest.approx(t_cdf(result.mean / (result.ci.sd / math.sqrt(n)), n - 1), rel=1e-12)


def test_llr_alt2_is_the_fishtest_brownian_formula() -> None:
    values = SPRT_VALUES
    n = len(values)
    mean = sum(values) / n
    var0 = sum((x - mean) ** 2 for x in values) / n  # divided by n, as fishtest
    result = sprt(values, 0.0, 1.0, burn_in=100, method="alt2")
    assert result.llr == pytest.approx(n * (1.0 - 0.0) * (2 * mean - 0.0 - 1.0) / (2 * var0), rel=1e-12)
    # For a small Δ1 − Δ0, alt is alt2 with the variance (r0 + r1)/2; both agree near the mean.
    d0, d1 = 1.0, 1.01
    r0, r1 = (sum((x - d) ** 2 for x in values) / n for d in (d0, d1))
    alt = sprt(values, d0, d1, burn_in=100, method="alt").llr
    assert alt == pytest.approx(n * (d1 - d0) * (2 * mean - d0 - d1) / (r0 + r1), rel=1e-5)
    around = (mean - 0.005, mean + 0.005)
    assert sprt(values, *around, burn_in=100, method="alt").llr == pytest.approx(
        sprt(values, *around, burn_in=100, method="alt2").llr, rel=1e-5)


def test_alt_is_slow_for_differences_far_above_delta1() -> None:
    # With alt, r0 and r1 both grow with a large difference, so the LLR per block shrinks; alt2's
    # grows, and el (which falls back to alt2 while both hypotheses lie below every block) with it.
    values = [40.0 + (i % 5) for i in range(40)]
    alt, alt2, el = (sprt(values, 0.0, 5.0, method=m) for m in ("alt", "alt2", "el"))
    assert alt2.verdict == el.verdict == "H1" and alt2.n == el.n == 10
    assert alt.verdict == "H1" and alt.n > alt2.n


# --- bounds, stopping, burn-in and cap -------------------------------------------------------------


def test_bounds_for_alpha_beta_five_percent() -> None:
    result = sprt([], 0.0, 2.0)
    assert result.lower == pytest.approx(-2.944438979, abs=1e-9)
    assert result.upper == pytest.approx(2.944438979, abs=1e-9)
    assert (result.n, result.verdict, result.llr) == (0, "continue", 0.0)
    assert math.isnan(result.mean)
    asymmetric = sprt([], 0.0, 2.0, alpha=0.01, beta=0.1)
    assert (asymmetric.lower, asymmetric.upper) == pytest.approx((math.log(0.1 / 0.99), math.log(90)))


@pytest.mark.parametrize("method", METHODS)
def test_stops_at_the_first_crossing_and_ignores_later_blocks(method: Method) -> None:
    values = [2.0, 3.0, 1.5, 2.5] * 5 + [-50.0] * 30
    first = sprt(values, 0.0, 1.0, burn_in=4, method=method)
    assert first.verdict == "H1"
    assert first.n < 20
    assert sprt(values[: first.n], 0.0, 1.0, burn_in=4, method=method) == first
    # The same blocks fed one at a time: the decision comes at the same block, with the same state.
    states = [sprt(values[:k], 0.0, 1.0, burn_in=4, method=method).verdict for k in range(len(values) + 1)]
    assert states.index("H1") == first.n
    test = SequentialTest(0.0, 1.0, burn_in=4, method=method)
    stopped = [test.add(v) for v in values]
    assert stopped.index(True) == first.n - 1 and all(stopped[first.n - 1:])
    assert test.result() == first


@pytest.mark.parametrize("method", METHODS)
def test_waits_for_the_burn_in(method: Method) -> None:
    values = [0.9, 1.1, 1.0, 1.2, 0.8, 1.0, 0.9, 1.1, 1.0, 1.2, 0.8, 1.0]
    assert sprt(values[:9], 0.0, 1.0, method=method).verdict == "continue"
    assert sprt(values[:9], 0.0, 1.0, method=method).llr > 2.944
    assert sprt(values, 0.0, 1.0, method=method).verdict == "H1"
    assert sprt(values, 0.0, 1.0, method=method).n == 10


@pytest.mark.parametrize("method", METHODS)
def test_reverse_hypotheses(method: Method) -> None:
    # Δ1 below Δ0 (testing for a regression) works with the roles of the sides swapped.
    assert sprt([-3.0, -2.0, -1.5, -2.5] * 5, 0.0, -1.0, method=method).verdict == "H1"
    assert sprt([3.0, 2.0, 1.5, 2.5] * 5, 0.0, -1.0, method=method).verdict == "H0"


@pytest.mark.parametrize("mean", [0.6, 0.4, -0.6, -0.4])
@pytest.mark.parametrize("method", METHODS)
def test_the_cap_gives_no_decision(mean: float, method: Method) -> None:
    # Blocks so spread out that 12 of them cannot decide: at the cap the test says so, whatever side
    # of the midpoint the mean is on (no fixed-sample guess), and later blocks are ignored.
    values = [mean + 10.0, mean - 10.0] * 6 + [100.0] * 5
    result = sprt(values, 0.0, 1.0, burn_in=2, cap=12, method=method)
    assert result.verdict == "no decision" and not result.decided
    assert result.n == 12
    assert result.mean == pytest.approx(mean)
    assert result.lower < result.llr < result.upper
    assert sprt(values[:11], 0.0, 1.0, burn_in=2, cap=12, method=method).verdict == "continue"
    # A cap below the burn-in can only end the same way.
    assert sprt(values, 0.0, 1.0, burn_in=30, cap=12, method=method).verdict == "no decision"


def test_the_result_carries_every_parameter() -> None:
    result = sprt([1.0, 2.0, 3.0], -5.0, 15.0, alpha=0.1, beta=0.2, burn_in=3, cap=40, method="alt",
                  per_point=10, a="new", b="old")
    assert (result.delta0, result.delta1, result.alpha, result.beta, result.burn_in, result.cap, result.method,
            result.per_point, result.a, result.b) == (-5.0, 15.0, 0.1, 0.2, 3, 40, "alt", 10, "new", "old")
    assert sprt([1.0], 0.0, 1.0).method == "el" and sprt([1.0], 0.0, 1.0).cap is None


def test_rejects_bad_parameters() -> None:
    for kwargs in ({"delta1": 0.0}, {"alpha": 0.0}, {"beta": 1.0}, {"alpha": 0.6, "beta": 0.6},
                   {"burn_in": 1}, {"cap": 0}, {"method": "alt3"}, {"per_point": 0}):
        arguments: dict[str, object] = {"delta0": 0.0, "delta1": 1.0, **kwargs}
        with pytest.raises(ValueError):
            sprt([1.0, 2.0], **arguments)  # type: ignore[arg-type]


# --- in words -------------------------------------------------------------------------------------


def test_describe_restates_the_hypotheses_and_the_errors() -> None:
    # A verdict says which side of the other hypothesis the difference lies on, never that it *is*
    # Δ0 or Δ1; then restates both hypotheses and the error rates.
    h1 = sprt([14.0, 6.0] * 106, 0.0, 10.0, burn_in=10, per_point=10)
    assert h1.verdict == "H1" and h1.n == 10
    assert describe(h1) == ("H1 accepted after 10 blocks: A scores more than B; measured: A - B +1.00 points per "
                            "game (95% CI +0.70 to +1.30) "
                            "(H0: A - B = +0.00 points per game; H1: A - B = +1.00; alpha 0.05, beta 0.05)")
    h0 = sprt([-4.0, 4.0] * 20, 0.0, 25.0, burn_in=10, per_point=10, a="new", b="old")
    assert h0.verdict == "H0"
    assert describe(h0).startswith("H0 accepted after 10 blocks: new - old is below +2.50 points per game; "
                                   "measured: new - old +0.00 points per game (95% CI ")
    assert describe(h0).endswith(") (H0: new - old = +0.00 points per game; H1: new - old = +2.50; "
                                 "alpha 0.05, beta 0.05)")
    regression = sprt([-14.0, -6.0] * 10, 5.0, -10.0, burn_in=10, per_point=10, alpha=0.01, beta=0.1)
    assert describe(regression) == (
        "H1 accepted after 10 blocks: A - B is below +0.50 points per game; measured: A - B -1.00 points per game "
        "(95% CI -1.30 to -0.70): A scores less than B "
        "(H0: A - B = +0.50 points per game; H1: A - B = -1.00; alpha 0.01, beta 0.1)")
    kept = sprt([14.0, 6.0] * 10, 5.0, -10.0, burn_in=10, per_point=10)
    assert describe(kept).startswith("H0 accepted after 10 blocks: A - B is above -1.00 points per game")


def test_describe_says_no_decision_at_the_cap_and_why_while_it_runs() -> None:
    capped = sprt([10.0, -10.0] * 6, 0.0, 1.0, burn_in=10, cap=12)
    assert describe(capped) == (
        f"no decision: the cap of 12 blocks was reached with the LLR {capped.llr:.2f}, bounds (-2.94, 2.94), "
        "between the bounds; the blocks cannot tell H0 from H1 (H0: A - B = +0.00 points per game; "
        "H1: A - B = +1.00; alpha 0.05, beta 0.05)")
    early = sprt([10.0, -10.0], 0.0, 1.0, burn_in=30)
    assert describe(early).startswith("no verdict yet: 2 blocks of the burn-in of 30 before any verdict (LLR ")
    running = sprt([10.0, -10.0] * 20, 0.0, 1.0, burn_in=30)
    assert running.verdict == "continue"
    assert describe(running).startswith("no verdict yet after 40 blocks (LLR ")
    assert describe(running).endswith("H0: A - B = +0.00 points per game; H1: A - B = +1.00; alpha 0.05, beta 0.05")


def test_fishtest_line() -> None:
    values = [12.0, -3.0, 8.0, 0.0, 5.0, -1.0, 9.0, 2.0]
    result = sprt(values, 0.0, 10.0, burn_in=8, per_point=10, a="new", b="old")
    ci = mean_ci(values)
    assert fishtest_line(result) == (
        f"LLR {result.llr:.2f} (-2.94, 2.94) [0.00, 1.00] 8 blocks, new - old {ci.mean / 10:+.2f} points per game "
        f"(95% CI {ci.low / 10:+.2f} to {ci.high / 10:+.2f})")
    assert fishtest_line(sprt([], 0.0, 10.0, per_point=10)) == (
        "burn-in 0 of 10 blocks (-2.94, 2.94) [0.00, 1.00] 0 blocks")
    assert fishtest_line(sprt([4.0], 0.0, 10.0, per_point=10)).endswith("1 block, A - B +0.40 points per game")


def test_the_progress_line_shows_the_burn_in_not_an_llr_before_it() -> None:
    # Before the burn-in a few blocks can put the LLR anywhere (-1680 was seen): no LLR is shown yet.
    values = [-120.0, -80.0] * 4
    early = sprt(values, 0.0, 10.0, burn_in=30, per_point=10, a="new", b="old")
    assert early.verdict == "continue" and early.llr < early.lower
    line = fishtest_line(early)
    assert line.startswith("burn-in 8 of 30 blocks (-2.94, 2.94) [0.00, 1.00] 8 blocks, new - old -10.00")
    assert "LLR" not in line
