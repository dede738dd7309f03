"""Statistics against known truth: table values, exact formulas, and simulated bots of known strength.

The simulations draw Callbreak-like game totals (five rounds of a bimodal make-or-miss score, in
tenths) from exact distributions, so the true mean of every quantity is known, and check that the
95 % intervals cover it 95 % of the time and that the SPRT makes its two errors at the nominal rates.
Every simulation is seeded, so the figures below are exact and the tests deterministic.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.rating.sequential import Method, SprtResult, sprt
from arena.rating.stats import (
    loo_datum_diffs,
    los,
    matchpoints,
    mean_ci,
    normal_cdf,
    normal_quantile,
    pentanomial_counts,
    pentanomial_elo,
    t_cdf,
    t_quantile,
)

# --- distributions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("df", "expected"),
    [(1, 12.7062), (2, 4.3027), (3, 3.1824), (5, 2.5706), (10, 2.2281), (20, 2.0860), (30, 2.0423),
     (60, 2.0003), (120, 1.9799), (1000, 1.9623), (10**6, 1.96), (10**9, 1.95996)],
)
def test_t_quantile_975_matches_tables(df: int, expected: float) -> None:
    decimals = len(str(expected).split(".")[1])
    assert round(t_quantile(0.975, df), decimals) == expected


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [(0.95, 1, 6.313752), (0.995, 1, 63.656741), (0.9, 4, 1.533206), (0.99, 7, 2.997952),
     (0.995, 15, 2.946713), (0.999, 40, 3.306878), (0.75, 9, 0.702722), (0.6, 3, 0.276671)],
)
def test_t_quantile_other_levels(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=1e-6)
    assert t_quantile(1 - p, df) == pytest.approx(-expected, abs=1e-6)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 12, 33, 100, 999, 1000, 1001, 5000, 10**6])
@pytest.mark.parametrize("p", [1e-6, 0.001, 0.025, 0.2, 0.5, 0.7, 0.95, 0.999, 1 - 1e-6])
def test_t_quantile_inverts_t_cdf(p: float, df: int) -> None:
    assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, rel=1e-9)


def test_t_cdf_closed_forms() -> None:
    # df = 1 is the Cauchy distribution; df = 2 has F(t) = ½ + t/(2√(2 + t²)).
    for t in (-7.5, -1.0, 0.0, 0.3, 2.0, 40.0):
        assert t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-15)
        assert t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)), abs=1e-15)
    assert t_cdf(math.inf, 5) == 1.0
    assert t_cdf(-math.inf, 5) == 0.0
    assert t_cdf(1.5, 10**7) == pytest.approx(normal_cdf(1.5), abs=1e-7)


@pytest.mark.parametrize(
    ("p", "z"),
    [(0.5, 0.0), (0.975, 1.959963984540054), (0.95, 1.6448536269514722), (0.995, 2.5758293035489004),
     (0.8413447460685429, 1.0), (0.9986501019683699, 3.0)],
)
def test_normal_quantile_and_cdf_at_known_points(p: float, z: float) -> None:
    assert normal_quantile(p) == pytest.approx(z, abs=1e-9)
    assert normal_quantile(1 - p) == pytest.approx(-z, abs=1e-9)
    assert normal_cdf(z) == pytest.approx(p, rel=1e-12)
    assert normal_cdf(z) + normal_cdf(-z) == pytest.approx(1.0, abs=1e-15)


def test_normal_far_tail() -> None:
    # erfc keeps the relative precision of tiny tail probabilities.
    assert normal_quantile(1e-10) == pytest.approx(-6.361340902404056, rel=1e-13)
    assert normal_cdf(-6.361340902404056) == pytest.approx(1e-10, rel=1e-12)
    assert normal_cdf(-30.0) == pytest.approx(4.906713927148187e-198, rel=1e-12)


def test_distribution_edges() -> None:
    assert normal_quantile(0.0) == -math.inf
    assert normal_quantile(1.0) == math.inf
    assert t_quantile(0.0, 3) == -math.inf
    assert t_quantile(1.0, 3) == math.inf
    assert t_quantile(0.5, 1) == 0.0
    for bad in (-0.1, 1.1, math.nan):
        with pytest.raises(ValueError):
            normal_quantile(bad)
        with pytest.raises(ValueError):
            t_quantile(bad, 4)
    with pytest.raises(ValueError):
        t_quantile(0.975, 0)


# --- mean and interval ---------------------------------------------------------------------------


def test_mean_ci_by_hand() -> None:
    # mean 3, sample variance ((−2)² + (−1)² + 0 + 1² + 2²)/4 = 2.5, t(0.975, 4) = 2.776445.
    ci = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)
    assert (ci.mean, ci.n) == (3.0, 5)
    assert ci.sd == pytest.approx(math.sqrt(2.5), rel=1e-15)
    assert (ci.low, ci.high) == pytest.approx((3.0 - half, 3.0 + half), rel=1e-12)
    assert ci.se == pytest.approx(math.sqrt(0.5), rel=1e-15)
    narrow = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0], level=0.5)
    assert narrow.high - narrow.mean == pytest.approx(0.740697 * math.sqrt(0.5), rel=1e-5)


def test_mean_ci_edges() -> None:
    empty = mean_ci([])
    assert empty.n == 0
    assert all(math.isnan(x) for x in (empty.mean, empty.low, empty.high, empty.sd, empty.se))
    one = mean_ci([7.0])
    assert (one.mean, one.low, one.high, one.n) == (7.0, -math.inf, math.inf, 1)
    assert math.isnan(one.sd)
    flat = mean_ci([0.1] * 9)
    assert (flat.mean, flat.low, flat.high, flat.sd) == (0.1, 0.1, 0.1, 0.0)
    with pytest.raises(ValueError):
        mean_ci([1.0, 2.0], level=1.0)


def test_mean_ci_is_shift_equivariant_and_large_offsets_stay_exact() -> None:
    values = [3.0, -1.5, 4.25, 0.0, 2.5]
    base = mean_ci(values)
    shifted = mean_ci([x + 1e9 for x in values])
    assert shifted.mean - 1e9 == pytest.approx(base.mean, abs=1e-6)
    assert shifted.sd == pytest.approx(base.sd, rel=1e-9)


@pytest.mark.parametrize(
    ("mean", "se", "expected"),
    [(0.0, 1.0, 0.5), (0.0, 0.0, 0.5), (1.0, 0.0, 1.0), (-1.0, 0.0, 0.0), (1.959963984540054, 1.0, 0.975),
     (-2.0, 2.0, 0.15865525393145707), (5.0, math.inf, 0.5)],
)
def test_los(mean: float, se: float, expected: float) -> None:
    assert los(mean, se) == pytest.approx(expected, abs=1e-12)


def test_los_rejects_negative_se_and_passes_nan() -> None:
    with pytest.raises(ValueError):
        los(1.0, -1.0)
    assert math.isnan(los(math.nan, 1.0))


# --- SPRT: formula and edges ---------------------------------------------------------------------


def test_sprt_bounds_for_alpha_beta_five_percent() -> None:
    result = sprt([], 0.0, 2.0)
    assert result.lower == pytest.approx(-2.944438979, abs=1e-9)
    assert result.upper == pytest.approx(2.944438979, abs=1e-9)
    assert (result.n, result.verdict, result.llr) == (0, "continue", 0.0)
    assert math.isnan(result.mean)
    asymmetric = sprt([], 0.0, 2.0, alpha=0.01, beta=0.1)
    assert (asymmetric.lower, asymmetric.upper) == pytest.approx((math.log(0.1 / 0.99), math.log(90)))


SPRT_VALUES = [3.0, -2.0, 5.0, 1.0, 0.5, 4.0, -1.0, 2.5, 0.0, 3.5, 1.5, -0.5]


def test_sprt_llr_alt_is_the_normal_likelihood_ratio() -> None:
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
    assert result.los == pytest.approx(normal_cdf(result.mean / (result.ci.sd / math.sqrt(n))), rel=1e-12)


def test_sprt_llr_alt2_is_the_fishtest_brownian_formula() -> None:
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


def test_sprt_stops_at_the_first_crossing_and_ignores_later_blocks() -> None:
    values = [2.0, 3.0] * 10 + [-50.0] * 30
    first = sprt(values, 0.0, 1.0, burn_in=4)
    assert first.verdict == "H1"
    assert first.n < 20
    assert sprt(values[: first.n], 0.0, 1.0, burn_in=4) == first
    # The same blocks fed one at a time: the decision comes at the same block.
    states = [sprt(values[:k], 0.0, 1.0, burn_in=4).verdict for k in range(len(values) + 1)]
    assert states.index("H1") == first.n


def test_sprt_waits_for_the_burn_in() -> None:
    values = [0.9, 1.1, 1.0, 1.2, 0.8, 1.0, 0.9, 1.1, 1.0, 1.2, 0.8, 1.0]
    methods: tuple[Method, ...] = ("alt", "alt2")
    for method in methods:
        assert sprt(values[:9], 0.0, 1.0, method=method).verdict == "continue"
        assert sprt(values[:9], 0.0, 1.0, method=method).llr > 2.944
        assert sprt(values, 0.0, 1.0, method=method).verdict == "H1"
        assert sprt(values, 0.0, 1.0, method=method).n == 10


def test_sprt_reverse_hypotheses_and_zero_variance() -> None:
    # All blocks identical: the variance floor keeps the LLR's sign, so the test still decides.
    assert sprt([0.9] * 12, 0.0, 1.0).verdict == "H1"
    assert sprt([0.4] * 12, 0.0, 1.0).verdict == "H0"
    # Δ1 below Δ0 (testing for a regression) works with the roles of the sides swapped.
    assert sprt([-3.0, -2.0] * 10, 0.0, -1.0).verdict == "H1"
    assert sprt([3.0, 2.0] * 10, 0.0, -1.0).verdict == "H0"


@pytest.mark.parametrize(
    ("mean", "delta1", "verdict"),
    [(0.6, 1.0, "H1 (cap)"), (0.4, 1.0, "H0 (cap)"), (-0.6, -1.0, "H1 (cap)"), (-0.4, -1.0, "H0 (cap)")],
)
@pytest.mark.parametrize("method", ["alt", "alt2"])
def test_sprt_cap_uses_the_midpoint(mean: float, delta1: float, verdict: str, method: Method) -> None:
    # Blocks so spread out that 12 of them cannot decide: the cap gives the fixed-sample verdict.
    values = [mean + 10.0, mean - 10.0] * 6 + [100.0] * 5
    result = sprt(values, 0.0, delta1, burn_in=2, cap=12, method=method)
    assert result.verdict == verdict
    assert result.n == 12
    assert result.mean == pytest.approx(mean)
    assert result.lower < result.llr < result.upper


def test_sprt_rejects_bad_parameters() -> None:
    for kwargs in ({"delta1": 0.0}, {"alpha": 0.0}, {"beta": 1.0}, {"alpha": 0.6, "beta": 0.6},
                   {"burn_in": 1}, {"cap": 0}, {"method": "alt3"}):
        arguments: dict[str, object] = {"delta0": 0.0, "delta1": 1.0, **kwargs}
        with pytest.raises(ValueError):
            sprt([1.0, 2.0], **arguments)  # type: ignore[arg-type]


# --- pentanomial head-to-head --------------------------------------------------------------------


def _pairs(ll: int, ld: int, wl_dd: int, wd: int, ww: int) -> list[float]:
    return [0.0] * ll + [0.5] * ld + [1.0] * wl_dd + [1.5] * wd + [2.0] * ww


@pytest.mark.parametrize("counts", [(3, 5, 20, 9, 6), (0, 0, 10, 0, 0), (1, 0, 0, 0, 1), (2, 7, 1, 0, 0)])
def test_pentanomial_score_formula(counts: tuple[int, int, int, int, int]) -> None:
    pairs = _pairs(*counts)
    random.Random(1).shuffle(pairs)
    assert pentanomial_counts(pairs) == counts
    ll, ld, wl_dd, wd, ww = counts
    n = sum(counts)
    s = (ww + 0.75 * wd + 0.5 * wl_dd + 0.25 * ld) / n
    var = (ww * (1 - s) ** 2 + wd * (0.75 - s) ** 2 + wl_dd * (0.5 - s) ** 2 + ld * (0.25 - s) ** 2
           + ll * s**2) / n
    z = 1.959963984540054

    def elo(x: float) -> float:
        x = min(max(x, 1e-6), 1 - 1e-6)
        return -400 * math.log10(1 / x - 1)

    expected = (elo(s), elo(s - z * math.sqrt(var / n)), elo(s + z * math.sqrt(var / n)))
    assert pentanomial_elo(pairs) == pytest.approx(expected, abs=1e-9)


def test_pentanomial_known_values_and_edges() -> None:
    # 3 in 4 points per pair is +190.85 Elo; an even score is 0 with a symmetric interval.
    elo, low, high = pentanomial_elo([1.5] * 8)
    assert (elo, low, high) == pytest.approx((190.848501887865,) * 3)
    elo, low, high = pentanomial_elo(_pairs(2, 3, 10, 3, 2))
    assert elo == 0.0
    assert low == pytest.approx(-high)
    # A clean sweep is clamped, not infinite: s = 1 − 1e-6.
    assert pentanomial_elo([2.0] * 5) == pytest.approx((400 * math.log10(1e6 - 1),) * 3)
    assert pentanomial_elo([0.0] * 5)[0] == pytest.approx(-400 * math.log10(1e6 - 1))
    assert all(math.isnan(x) for x in pentanomial_elo([]))
    assert pentanomial_counts([]) == (0, 0, 0, 0, 0)
    with pytest.raises(ValueError):
        pentanomial_counts([0.75])


# --- one hand, several results -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "points"),
    [([30, 41, -40, 20], [2 / 3, 1.0, 0.0, 1 / 3]),
     ([30, 30, -40, 20], [5 / 6, 5 / 6, 0.0, 1 / 3]),
     ([10, 10, 10, 10], [0.5, 0.5, 0.5, 0.5]),
     ([5, -5], [1.0, 0.0]),
     ([7], [0.5]),
     ([], [])],
)
def test_matchpoints(scores: list[float], points: list[float]) -> None:
    assert matchpoints(scores) == pytest.approx(points)
    if len(scores) > 1:
        # A hand hands out (n − 1)·n/2 comparisons' worth of points in all: the mean share is ½.
        assert sum(matchpoints(scores)) == pytest.approx(len(scores) / 2)


@pytest.mark.parametrize(
    ("scores", "diffs"),
    [([30, 41, -40, 20], [30 - 7, 41 - 10 / 3, -40 - 91 / 3, 20 - 31 / 3]),
     ([10, 10, 10], [0.0, 0.0, 0.0]),
     ([5, -5], [10.0, -10.0]),
     ([7], [0.0]),
     ([], [])],
)
def test_loo_datum_diffs(scores: list[float], diffs: list[float]) -> None:
    out = loo_datum_diffs(scores)
    assert out == pytest.approx(diffs)
    assert math.fsum(out) == pytest.approx(0.0, abs=1e-12)
    # The leave-one-out datum is the mean of the pairwise differences.
    for i, x in enumerate(scores):
        others = [x - y for j, y in enumerate(scores) if j != i]
        assert out[i] == pytest.approx(sum(others) / len(others) if others else 0.0)


SCORES = st.lists(st.integers(min_value=-130, max_value=133), max_size=12)


@given(SCORES)
def test_hand_invariants(scores: list[int]) -> None:
    points = matchpoints(scores)
    diffs = loo_datum_diffs(scores)
    assert len(points) == len(diffs) == len(scores)
    assert all(0.0 <= p <= 1.0 for p in points)
    assert math.fsum(diffs) == pytest.approx(0.0, abs=1e-9)
    assert sum(points) == pytest.approx(len(scores) / 2)
    # Both scorings keep the order of the results, and equal results score equally.
    for (x, p, d), (y, q, e) in itertools.combinations(zip(scores, points, diffs, strict=True), 2):
        if x < y:
            assert p < q
            assert d < e
        elif x == y:
            assert (p, d) == (q, e)


# --- a Callbreak-like score model with exact moments ---------------------------------------------
# One round, in tenths: a call c from the style's call weights; made (at the style's make rate) it
# scores 10c plus a few overtricks, missed it scores −10c. Bimodal and skewed, as real round scores
# are. A game total is the sum of five rounds; its exact distribution is the five-fold convolution.

Pmf = dict[int, float]


def _round_pmf(call_weights: Sequence[float], make: float, over_weights: Sequence[float]) -> Pmf:
    pmf: Pmf = {}
    calls = sum(call_weights)
    overs = sum(over_weights)
    for call, wc in enumerate(call_weights, start=1):
        pmf[-10 * call] = pmf.get(-10 * call, 0.0) + wc / calls * (1 - make)
        for extra, wo in enumerate(over_weights):
            pmf[10 * call + extra] = pmf.get(10 * call + extra, 0.0) + wc / calls * make * wo / overs
    return pmf


def _sum_pmf(pmf: Pmf, times: int) -> Pmf:
    total: Pmf = {0: 1.0}
    for _ in range(times):
        nxt: Pmf = {}
        for a, pa in total.items():
            for b, pb in pmf.items():
                nxt[a + b] = nxt.get(a + b, 0.0) + pa * pb
        total = nxt
    return total


class Sampler:
    """An exact discrete distribution: its mean, variance, and seeded draws."""

    def __init__(self, pmf: Pmf) -> None:
        self.values = sorted(pmf)
        self.cum = list(itertools.accumulate(pmf[v] for v in self.values))
        self.mean = math.fsum(v * p for v, p in pmf.items())
        self.var = math.fsum((v - self.mean) ** 2 * p for v, p in pmf.items())

    def draw(self, rng: random.Random, k: int) -> list[int]:
        """``k`` independent draws."""
        return rng.choices(self.values, cum_weights=self.cum, k=k)


class Style:
    """A bot's calling style: the distributions of its round scores and of its game totals."""

    def __init__(self, call_weights: Sequence[float], make: float, over_weights: Sequence[float]) -> None:
        pmf = _round_pmf(call_weights, make, over_weights)
        self.round = Sampler(pmf)
        self.game = Sampler(_sum_pmf(pmf, 5))


STEADY = Style([4, 18, 30, 25, 13, 6, 3, 1], make=0.75, over_weights=[50, 30, 14, 6])
BOLD = Style([2, 10, 24, 28, 20, 10, 4, 2], make=0.66, over_weights=[62, 25, 9, 4])
CAUTIOUS = Style([10, 30, 32, 18, 7, 2, 1, 0], make=0.86, over_weights=[35, 35, 20, 10])
SHAKY = Style([4, 18, 30, 25, 13, 6, 3, 1], make=0.62, over_weights=[50, 30, 14, 6])
FIELD = (STEADY, BOLD, CAUTIOUS, SHAKY)
LUCK = 3  # block luck: this many centred round scores of the bot's style, per game of the block


def test_score_model() -> None:
    # A game total has five times a round's mean and variance; the styles differ by over 1.5 points
    # a game (so the bots have distinct true strengths); round scores are bimodal: nothing in (−10, 10).
    for style in FIELD:
        assert style.game.mean == pytest.approx(5 * style.round.mean)
        assert style.game.var == pytest.approx(5 * style.round.var)
        assert not any(-10 < v < 10 for v in style.round.values)
    means = sorted(style.game.mean for style in FIELD)
    assert all(b - a > 15 for a, b in itertools.pairwise(means))


def _moments(values: Sequence[float]) -> tuple[float, float, float, float]:
    n = len(values)
    mean = sum(values) / n
    var = sum((x - mean) ** 2 for x in values) / n
    skew = sum((x - mean) ** 3 for x in values) / n / var**1.5
    kurt = sum((x - mean) ** 4 for x in values) / n / var**2 - 3
    return mean, math.sqrt(var), skew, kurt


# --- coverage of the 95 % interval: a duplicate tournament of four bots of known strength ---------
# A block is one deal set played in the four seat rotations, so each bot holds each of the 4 hands
# once. A bot's result on a hand = the hand's card luck (shared by everyone who holds it) + the bot's
# block luck (how this deal set suits its style, shared by its 4 games: LUCK centred round scores,
# a make-or-miss swing) + its own game total (the noise of play). The per-block duplicate score is
# the mean over the 4 hands of the leave-one-out datum difference: card luck cancels, and its true
# mean is the bot's mean game total minus the mean of the other three bots' mean totals.


def _tournament_blocks(rng: random.Random, blocks: int) -> list[list[float]]:
    """Per bot of FIELD, its per-game duplicate score (tenths) in each block."""
    cards = STEADY.game.draw(rng, 4 * blocks)
    games = [style.game.draw(rng, 4 * blocks) for style in FIELD]
    rounds = [style.round.draw(rng, blocks) for style in FIELD]
    out: list[list[float]] = [[] for _ in FIELD]
    for j in range(blocks):
        luck = [LUCK * (r[j] - style.round.mean) for r, style in zip(rounds, FIELD, strict=True)]
        sums = [0.0] * len(FIELD)
        for h in range(4 * j, 4 * j + 4):
            results = [cards[h] + luck[b] + games[b][h] for b in range(len(FIELD))]
            for b, diff in enumerate(loo_datum_diffs(results)):
                sums[b] += diff
        for b in range(len(FIELD)):
            out[b].append(sums[b] / 4)
    return out


TRUE_DUPLICATE = [
    style.game.mean - sum(o.game.mean for o in FIELD if o is not style) / (len(FIELD) - 1) for style in FIELD
]


def test_tournament_model_is_lumpy_and_centred_on_the_truth() -> None:
    for values, truth in zip(_tournament_blocks(random.Random(0), 20_000), TRUE_DUPLICATE, strict=True):
        mean, sd, skew, kurt = _moments(values)
        assert abs(mean - truth) < 3 * sd / math.sqrt(len(values))
        # Visibly not normal: skewed left by the miss cliff, and flat or peaked.
        assert skew < -0.15
        assert abs(kurt) > 0.1


def _coverage(blocks: int, tournaments: int, seed: int) -> float:
    rng = random.Random(seed)
    covered = total = 0
    for _ in range(tournaments):
        for values, truth in zip(_tournament_blocks(rng, blocks), TRUE_DUPLICATE, strict=True):
            ci = mean_ci(values)
            covered += ci.low <= truth <= ci.high
            total += 1
    return covered / total


# Measured with these seeds (2,000 tournaments × 4 bots = 8,000 intervals per row).
COVERAGE = {8: 0.9475, 20: 0.950625, 50: 0.950125}


@pytest.mark.parametrize("blocks", [8, 20, 50])
def test_mean_ci_covers_the_true_mean_95_percent_of_the_time(blocks: int) -> None:
    coverage = _coverage(blocks, tournaments=2000, seed=blocks)
    assert 0.93 <= coverage <= 0.97, coverage
    assert coverage == COVERAGE[blocks]


# --- SPRT calibration ----------------------------------------------------------------------------
# Block differences of A (BOLD) against B (STEADY) from the same model: the mean over the block's 4
# hands of A's game total minus B's, plus A's block luck minus B's. Card luck cancels exactly (both
# hold every hand). Standardised with the exact moments and rescaled to SIGMA around the chosen true
# mean, so the shape stays (lumpy: flatter than a normal, excess kurtosis about −0.36, from the
# make-or-miss swings) and the truth is exact.

SIGMA = 10.0  # points per game, per block
DELTA1 = 2.0  # points per game: δ1 = Δ1/σ = 0.2, so about 2·0.9·2.944/δ1² ≈ 132 blocks per test
_RAW_MEAN = BOLD.game.mean - STEADY.game.mean
_RAW_SD = math.sqrt((BOLD.game.var + STEADY.game.var) / 4 + LUCK**2 * (BOLD.round.var + STEADY.round.var))


def _block_differences(rng: random.Random, blocks: int, true_mean: float) -> list[float]:
    a, b = BOLD.game.draw(rng, 4 * blocks), STEADY.game.draw(rng, 4 * blocks)
    ra, rb = BOLD.round.draw(rng, blocks), STEADY.round.draw(rng, blocks)
    out = []
    for j in range(blocks):
        games = sum(a[h] - b[h] for h in range(4 * j, 4 * j + 4)) / 4
        luck = LUCK * (ra[j] - BOLD.round.mean) - LUCK * (rb[j] - STEADY.round.mean)
        out.append(true_mean + SIGMA * (games + luck - _RAW_MEAN) / _RAW_SD)
    return out


def test_block_difference_model() -> None:
    mean, sd, skew, kurt = _moments(_block_differences(random.Random(0), 50_000, DELTA1))
    assert mean == pytest.approx(DELTA1, abs=3 * SIGMA / math.sqrt(50_000))
    assert sd == pytest.approx(SIGMA, rel=0.02)
    assert abs(skew) > 0.1 or abs(kurt) > 0.1


def _run_sprt(rng: random.Random, true_mean: float, method: Method, cap: int = 2000, burn_in: int = 10) -> SprtResult:
    # Blocks arrive in chunks; sprt() reads them in order and stops at the first crossing, so this
    # is the same as asking after every block.
    values: list[float] = []
    while True:
        values += _block_differences(rng, 64, true_mean)
        result = sprt(values, 0.0, DELTA1, burn_in=burn_in, cap=cap, method=method)
        if result.verdict != "continue":
            return result


def _calibration(
    true_mean: float, runs: int, seed: int, method: Method = "alt", burn_in: int = 10
) -> tuple[float, float, int]:
    """Share of tests accepting H1, mean length in blocks, and how many tests hit the cap."""
    rng = random.Random(seed)
    results = [_run_sprt(rng, true_mean, method, burn_in=burn_in) for _ in range(runs)]
    accepted = sum(r.verdict.startswith("H1") for r in results) / runs
    return accepted, sum(r.n for r in results) / runs, sum(r.verdict.endswith("(cap)") for r in results)


# Measured with these seeds, 1,000 tests under each hypothesis (share accepting H1, mean blocks):
# the expected length of a normal SPRT with known variance is 2·0.9·2.944/0.2² ≈ 132 blocks.
CALIBRATION = {"H0": (0.052, 138.828), "H1": (0.949, 138.29)}


def test_sprt_false_accept_rate_under_h0() -> None:
    accepted, length, capped = _calibration(0.0, runs=1000, seed=1)
    assert 0.03 <= accepted <= 0.07, accepted
    assert 100 <= length <= 200
    assert capped == 0
    assert (accepted, length) == pytest.approx(CALIBRATION["H0"], abs=1e-9)


def test_sprt_power_under_h1() -> None:
    accepted, length, capped = _calibration(DELTA1, runs=1000, seed=2)
    assert 0.93 <= accepted <= 0.97, accepted
    assert 100 <= length <= 200
    assert capped == 0
    assert (accepted, length) == pytest.approx(CALIBRATION["H1"], abs=1e-9)


# The default method (alt2) with the tournaments' default burn-in of 30 blocks, same model and seeds.
CALIBRATION_ALT2 = {"H0": (0.06, 131.143), "H1": (0.939, 129.41)}


def test_sprt_alt2_with_a_burn_in_of_30_is_calibrated() -> None:
    false_accepts, length0, capped0 = _calibration(0.0, runs=1000, seed=1, method="alt2", burn_in=30)
    power, length1, capped1 = _calibration(DELTA1, runs=1000, seed=2, method="alt2", burn_in=30)
    assert 0.03 <= false_accepts <= 0.07, false_accepts
    assert 0.93 <= power <= 0.97, power
    assert capped0 == capped1 == 0
    assert (false_accepts, length0) == pytest.approx(CALIBRATION_ALT2["H0"], abs=1e-9)
    assert (power, length1) == pytest.approx(CALIBRATION_ALT2["H1"], abs=1e-9)


def test_alt_is_slow_for_differences_far_above_delta1() -> None:
    # The documented reason alt2 is the default: with alt, r0 and r1 both grow with a large
    # difference, so the LLR per block shrinks; alt2's grows.
    values = [40.0 + (i % 5) for i in range(40)]
    alt, alt2 = sprt(values, 0.0, 5.0, method="alt"), sprt(values, 0.0, 5.0, method="alt2")
    assert alt2.verdict == "H1" and alt2.n == 10
    assert alt.verdict == "H1" and alt.n > alt2.n
