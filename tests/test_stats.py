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

from arena.rating.sequential import sprt
from arena.rating.stats import (
    ClusteredMean,
    PairTally,
    field_datum_diffs,
    field_matchpoints,
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


# --- SPRT edges (the test itself: tests/test_sequential.py) -------------------------------------


def test_sprt_reverse_hypotheses_and_zero_variance() -> None:
    # All blocks identical: the variance floor keeps the LLR's sign, so the test still decides.
    assert sprt([0.9] * 12, 0.0, 1.0).verdict == "H1"
    assert sprt([0.4] * 12, 0.0, 1.0).verdict == "H0"
    # Δ1 below Δ0 (testing for a regression) works with the roles of the sides swapped.
    assert sprt([-3.0, -2.0] * 10, 0.0, -1.0).verdict == "H1"
    assert sprt([3.0, 2.0] * 10, 0.0, -1.0).verdict == "H0"


# --- pentanomial head-to-head --------------------------------------------------------------------


def _pairs(ll: int, ld: int, wl_dd: int, wd: int, ww: int) -> list[float]:
    return [0.0] * ll + [0.5] * ld + [1.0] * wl_dd + [1.5] * wd + [2.0] * ww


def _elo(x: float) -> float:
    return -math.inf if x <= 0 else math.inf if x >= 1 else -400 * math.log10(1 / x - 1)


@pytest.mark.parametrize("counts", [(3, 5, 20, 9, 6), (0, 0, 9, 1, 0), (1, 0, 0, 0, 1), (2, 7, 1, 0, 0)])
def test_pentanomial_score_formula(counts: tuple[int, int, int, int, int]) -> None:
    pairs = _pairs(*counts)
    random.Random(1).shuffle(pairs)
    assert pentanomial_counts(pairs) == counts
    ll, ld, wl_dd, wd, ww = counts
    n = sum(counts)
    s = (ww + 0.75 * wd + 0.5 * wl_dd + 0.25 * ld) / n
    # Each pair its own cluster: the sample variance of the per-game pair scores, and t on n - 1 df.
    var = (ww * (1 - s) ** 2 + wd * (0.75 - s) ** 2 + wl_dd * (0.5 - s) ** 2 + ld * (0.25 - s) ** 2
           + ll * s**2) / (n - 1)
    half = t_quantile(0.975, n - 1) * math.sqrt(var / n)
    elo = pentanomial_elo(pairs)
    assert (elo.score, elo.clusters, elo.pairs, elo.counts) == (pytest.approx(s), n, n, counts)
    assert (elo.elo, elo.low, elo.high) == pytest.approx((_elo(s), _elo(s - half), _elo(s + half)), abs=1e-9)


def test_pentanomial_known_values_and_edges() -> None:
    # 3 in 4 points per pair is +190.85 Elo; an even score is 0 with a symmetric interval.
    elo = pentanomial_elo([1.5] * 7 + [1.0])
    assert elo.elo == pytest.approx(_elo(11.5 / 16)) and elo.low < elo.elo < elo.high
    assert pentanomial_elo([1.5] * 8).elo == pytest.approx(190.848501887865)
    elo = pentanomial_elo(_pairs(2, 3, 10, 3, 2))
    assert elo.elo == 0.0
    assert elo.low == pytest.approx(-elo.high)
    # An interval that reaches a score of 1 is unbounded there, not clamped to a fake +2400.
    near = pentanomial_elo([2.0] * 19 + [1.5])
    assert near.high == math.inf and 500 < near.low < near.elo < 800
    assert near.describe() == f"{near.elo:+.1f} [{near.low:+.1f}, +inf]"
    assert pentanomial_elo([1.0, 2.0]).low == -math.inf  # one df: the t interval spans every score
    assert all(math.isnan(x) for x in (pentanomial_elo([]).elo, pentanomial_elo([]).score))
    assert pentanomial_elo([]).describe() == "-"
    assert pentanomial_counts([]) == (0, 0, 0, 0, 0)
    with pytest.raises(ValueError):
        pentanomial_counts([0.75])


def test_a_sweep_has_no_point_estimate_and_an_exact_one_sided_bound() -> None:
    # No lost pair in G clusters: the chance of a cluster that is not swept is below 1 - 0.025^(1/G)
    # at 97.5 %, so the score is at least 0.025^(1/G) (a lost cluster counted as 0).
    won = pentanomial_elo([2.0] * 5)
    assert won.sweep == "won" and math.isnan(won.elo) and won.score == 1.0 and won.high == math.inf
    assert won.low == pytest.approx(-400 * math.log10(1 / 0.025 ** (1 / 5) - 1))
    assert won.describe() == f"no lost pairs in 5: at least {won.low:+.1f}"
    lost = pentanomial_elo([0.0] * 5)
    assert lost.sweep == "lost" and lost.high == pytest.approx(-won.low) and lost.low == -math.inf
    assert lost.describe() == f"no won pairs in 5: at most {-won.low:+.1f}"
    # Five pairs say little: even a clean sweep of them bounds the Elo only near 0.
    assert -20 < won.low < 0
    # Clusters, not pairs, are the independent evidence: 20 pairs in 10 deal sets bound like 10.
    clustered = pentanomial_elo([2.0] * 20, clusters=[n // 2 for n in range(20)])
    assert clustered.pairs == 20 and clustered.clusters == 10
    assert clustered.low == pytest.approx(-400 * math.log10(1 / 0.025 ** (1 / 10) - 1))
    assert clustered.low < pentanomial_elo([2.0] * 20).low
    with pytest.raises(ValueError):
        pentanomial_elo([2.0, 1.0], clusters=[1])


def test_pair_tally_clusters_as_the_ratio_estimator() -> None:
    tally = PairTally()
    tally.add_cluster([2.0, 0.5])
    tally.add_cluster([])  # no pairs: no cluster
    tally.add_cluster([1.0, 2.0, 1.5])
    tally.add_cluster([0.5])
    elo = tally.elo()
    per_game = ClusteredMean()
    for cluster in ([2.0, 0.5], [1.0, 2.0, 1.5], [0.5]):
        per_game.add(sum(cluster) / 2, len(cluster))
    ci = per_game.interval()
    assert elo.clusters == 3 and elo.counts == (0, 2, 1, 1, 2)
    assert elo.score == pytest.approx(ci.mean)
    assert (elo.elo, elo.low, elo.high) == pytest.approx((_elo(ci.mean), _elo(ci.low), _elo(ci.high)))


# --- clustered means and LOS ---------------------------------------------------------------------


def test_clustered_mean_by_hand() -> None:
    # Clusters (total, weight): the ratio R = 12/8 = 1.5; residuals y - R n: 3 - 3 = 0, 7 - 4.5 = 2.5,
    # 2 - 4.5 = -2.5; se^2 = 3/2 * 12.5 / 8^2.
    sums = ClusteredMean()
    for total, weight in ((3.0, 2.0), (7.0, 3.0), (2.0, 3.0)):
        sums.add(total, weight)
    sums.add(5.0, 0.0)  # no weight, no evidence
    ci = sums.interval()
    se = math.sqrt(1.5 * 12.5) / 8
    assert (ci.mean, ci.n, ci.df) == (1.5, 3, 2)
    assert ci.se == pytest.approx(se)
    assert (ci.low, ci.high) == pytest.approx((1.5 - t_quantile(0.975, 2) * se, 1.5 + t_quantile(0.975, 2) * se))
    assert ci.los == pytest.approx(t_cdf(1.5 / se, 2))
    with pytest.raises(ValueError):
        sums.add(1.0, -1.0)


@given(st.lists(st.tuples(st.floats(-1e4, 1e4), st.integers(1, 40)), min_size=2, max_size=30))
def test_clustered_mean_with_equal_weights_is_mean_ci_of_the_cluster_means(clusters: list[tuple[float, int]]) -> None:
    weight = clusters[0][1]
    sums = ClusteredMean()
    for total, _ in clusters:
        sums.add(total * weight, weight)
    ci, reference = sums.interval(), mean_ci([total for total, _ in clusters])
    assert ci.n == reference.n and ci.mean == pytest.approx(reference.mean, abs=1e-6)
    assert ci.sd == pytest.approx(reference.sd, rel=1e-6, abs=1e-6)


def test_clustered_mean_edges() -> None:
    empty = ClusteredMean().interval()
    assert empty.n == 0 and math.isnan(empty.mean) and math.isnan(ClusteredMean().mean)
    one = ClusteredMean()
    one.add(10.0, 4.0)
    assert (one.interval().mean, one.interval().low, one.interval().high) == (2.5, -math.inf, math.inf)
    assert math.isnan(one.interval().los)
    flat = ClusteredMean()
    for weight in (1.0, 3.0, 7.0, 0.2):
        flat.add(0.1 * weight, weight)  # every cluster at the same ratio: no spread, only rounding
    ci = flat.interval()
    assert ci.low == ci.high == ci.mean == pytest.approx(0.1) and ci.sd == 0.0
    shifted = ClusteredMean()
    for total, weight in ((3.0, 2.0), (7.0, 3.0), (2.0, 3.0)):
        shifted.add(total + 1e9 * weight, weight)
    assert shifted.interval().se == pytest.approx(math.sqrt(1.5 * 12.5) / 8, rel=1e-6)


def test_los_with_degrees_of_freedom_is_the_t_distribution() -> None:
    assert los(2.0, 1.0, 4) == pytest.approx(t_cdf(2.0, 4))
    assert los(0.0, 1.0, 3) == 0.5 and los(1.0, 0.0, 3) == 1.0
    assert los(1.0, 1.0, 10**7) == pytest.approx(los(1.0, 1.0), abs=1e-7)


def test_los_from_t_is_calibrated_when_there_is_no_difference() -> None:
    # 5 clusters, true mean 0: LOS >= 0.95 should happen 5 % of the time. With the normal it happens
    # P(T4 >= 1.645) = 8.7 % of the time, as the user reports measured (0.087-0.092).
    assert 1 - t_cdf(normal_quantile(0.95), 4) == pytest.approx(0.0875, abs=5e-4)
    rng = random.Random(5)
    trials, t_hits, normal_hits = 20_000, 0, 0
    for _ in range(trials):
        ci = mean_ci([rng.gauss(0.0, 1.0) for _ in range(5)])
        t_hits += los(ci.mean, ci.se, ci.df) >= 0.95
        normal_hits += los(ci.mean, ci.se) >= 0.95
    assert 0.045 <= t_hits / trials <= 0.055
    assert 0.08 <= normal_hits / trials <= 0.095


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


@pytest.mark.parametrize(
    ("scores", "owners", "diffs", "points"),
    [([10, 10, 0, 0, 5], "aabcc", [25 / 3, 25 / 3, -6.25, -20 / 3, -5 / 3], [1.0, 1.0, 0.125, 1 / 6, 1 / 3]),
     ([30, 41, -40, 20], "abcd", [30 - 7, 41 - 10 / 3, -40 - 91 / 3, 20 - 31 / 3], [2 / 3, 1.0, 0.0, 1 / 3]),
     ([7, 9], "aa", [None, None], [None, None]),
     ([7, 9, 3], "aab", [4.0, 6.0, -5.0], [1.0, 1.0, 0.0])],
)
def test_the_field_leaves_out_every_result_of_the_owner(
    scores: list[int], owners: str, diffs: list[float | None], points: list[float | None],
) -> None:
    assert field_datum_diffs(scores, list(owners)) == pytest.approx(diffs)
    assert field_matchpoints(scores, list(owners)) == pytest.approx(points)


SCORES = st.lists(st.integers(min_value=-130, max_value=133), max_size=12)


@given(SCORES)
def test_distinct_owners_make_the_field_the_leave_one_out(scores: list[int]) -> None:
    owners = list(range(len(scores)))
    if len(scores) > 1:
        assert field_datum_diffs(scores, owners) == pytest.approx(loo_datum_diffs(scores))
        assert field_matchpoints(scores, owners) == pytest.approx(matchpoints(scores))


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


def test_pairs_that_all_score_alike_get_no_interval_rather_than_a_zero_width_one() -> None:
    # Three deal sets of one WD pair each: the same score everywhere, nothing to measure spread by.
    elo = pentanomial_elo([1.5, 1.5, 1.5], clusters=[1, 2, 3])
    assert elo.elo == pytest.approx(_elo(0.75)) and math.isnan(elo.low) and math.isnan(elo.high)
    assert elo.describe() == f"+{_elo(0.75):.1f} (no interval: all 3 deal sets scored alike)"
    spread = pentanomial_elo([1.5, 1.0, 1.5], clusters=[1, 2, 3])
    assert spread.low < spread.elo < spread.high
