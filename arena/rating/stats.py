"""Statistics of duplicate results: intervals, likelihood of superiority, the sequential test, Elo.

Everything here is a pure function of plain numbers (standard library only), so the standings and
the head-to-head report can be recomputed from the records by anyone. The unit of independent
evidence is a *block*: one deal set played in every seat rotation. Intervals and tests are always
computed on one number per block, never on single games, because games of a block share their cards.

Distributions
    ``normal_cdf(x)`` is Φ(x) = ½·erfc(−x/√2). ``normal_quantile(p)`` is its inverse, by Wichura's
    algorithm AS 241 (the one behind :class:`statistics.NormalDist`, accurate to about 1e-16).
    ``t_cdf(t, df)`` is Student's t distribution with ``df`` degrees of freedom, summed exactly by the
    finite series of Abramowitz & Stegun 26.7.3/26.7.4 in θ = atan(t/√df) (df/2 terms); above
    df = 1000, by Hill's transform of t into a normal deviate (algorithm 395, relative error ~1e-14).
    ``t_quantile(p, df)`` inverts it: exact closed forms for df = 1 (tan(π(p − ½))) and df = 2
    ((2p − 1)/√(2p(1 − p))); otherwise a Cornish-Fisher start (A&S 26.7.5: the normal quantile z plus
    corrections in powers of 1/df) polished by Newton steps t ← t − (F(t) − p)/f(t) on that series.
    Above df = 1000 the Cornish-Fisher series alone is exact to 1e-10 or better and is returned.
    Checked against scipy: relative error below 1e-10 for 1e-6 ≤ p ≤ 1 − 1e-6 and every df; in the
    extreme tails (p = 1e-12) the series' 1 − A(t) cancellation costs digits (about 1e-5 relative).

Mean and interval (``mean_ci``)
    With n block values x₁…xₙ: the mean x̄ = Σx/n; the sample standard deviation
    s = √(Σ(x − x̄)²/(n − 1)); the standard error s/√n; the interval x̄ ± t·s/√n with
    t = t_quantile(½ + level/2, n − 1), so 2.26 for 10 blocks and 95 %, falling to 1.96 for many.
    No values: everything is nan. One value: the mean, and an unbounded interval (−∞, +∞), since one
    block says nothing about the spread. Identical values: sd 0 and low = high = mean.

Clustered ratio (``ClusteredMean``), what the standings use
    Results that share cards are not independent: every table of a schedule round plays the same
    deal set, so a bot's blocks of one round are one *cluster*. Each cluster c brings a total y_c
    (say, the bot's duplicate points in that round) and a weight n_c (the games they came from).
    The estimate is the ratio R = Σy/Σn (points per game over all the games), and its standard
    error the cluster-robust (sandwich, linearised ratio) one with the usual small-sample factor
    G/(G − 1), G the number of clusters:
        se² = G/(G − 1) · Σ_c (y_c − R·n_c)² / (Σ_c n_c)²
    and the interval R ± t·se with t = t_quantile(½ + level/2, G − 1): the degrees of freedom come
    from the clusters, not from the games. With equal weights this is exactly ``mean_ci`` of the
    cluster means y_c/n_c. It is accumulated cluster by cluster in constant memory (the sums of
    y², y·n and n², taken about the first cluster's ratio so that they do not cancel). One cluster
    gives an unbounded interval, as one block does above.

Difference of two clustered ratios (``ClusteredPair``), what the rank ranges compare
    The clusters two bots share, kept beside their two ``ClusteredMean``: R_a − R_b has the linearised
    variance G/(G − 1) · Σ_c ((y_ac − R_a·n_ac)/W_a − (y_bc − R_b·n_bc)/W_b)², G the clusters of either,
    which counts that on the same cards what one bot wins the others lose.

Likelihood of superiority (``los``)
    LOS = P(true mean > 0 | data). With ``df`` (the clusters less one) it is T_df(mean/se), the t
    distribution: for normal cluster means and a flat prior this is exactly the posterior
    probability, and P(LOS ≥ 0.95) is 5 % when the true mean is 0, whatever the number of clusters
    (the normal Φ(mean/se) gives about 9 % at 5 clusters). Few clusters make the t's tails heavy, so
    LOS stays modest until the clusters agree: with 2 clusters (df 1) an LOS of 95 % needs the mean
    6.3 standard errors above 0 (1.64 for the normal). Without ``df``: Φ(mean/se). 0.5 when the mean is 0; 1 or 0
    when se = 0 and the mean is positive or negative.

Pentanomial head-to-head Elo (``pentanomial_elo``, ``PairTally``), as chess testing counts game pairs
    A game pair is two games in which A and B hold each other's hands. Each game scores 1 if A
    finished ahead of B, ½ on an exact tie and 0 otherwise, so a pair scores 0, ½, 1, 1½ or 2 (the
    bins LL, LD, WL+DD, WD, WW). The per-game score is s = (WW + ¾·WD + ½·(WL + DD) + ¼·LD)/N, and
    Elo(s) = −400·log10(1/s − 1). Its interval is the clustered t interval above on the pair
    scores (the pairs of one deal set form a cluster; without clusters each pair is its own), each
    end turned into Elo. An end at or beyond a score of 0 or 1 is unbounded (−∞ or +∞): Elo has no
    finite value there, and clamping it (as a fixed ±2400) would pretend to a precision the data do
    not have. A sweep (every pair won, or every pair lost) has no point estimate at all; it is
    reported as "no lost pairs in N" with the exact one-sided bound for zero failures
    (Clopper-Pearson): if none of G clusters held a pair that was not won, the chance q of such a
    cluster is below 1 − (α/2)^(1/G) with confidence 1 − α/2, so s ≥ (α/2)^(1/G) and the interval
    is [Elo((α/2)^(1/G)), +∞). Conservative (a lost cluster is counted as scoring 0), and honest
    about how little a handful of pairs can say.

Matchpoints and the datum of the field (bridge scoring), for the results of several bots on one hand
    ``matchpoints``: each result's share of the *other* results it beat, a tie counting half, in [0, 1].
    ``loo_datum_diffs``: each result minus the mean of the other results (the cross-IMP datum without
    the IMP table). It equals the mean of the pairwise differences (own − other), and the diffs of a
    hand sum to zero, so a bot's luck with the cards cancels when it is compared on the same hands.
    ``field_datum_diffs`` and ``field_matchpoints`` do the same with an owner for each result: a
    result is compared only with the results of *other* owners, never with its owner's own results
    on the same hand (with 5 to 8 bots a bot holds each hand at several tables of a round); a
    result with no other owner's result beside it gets ``None`` (it is not compared at all).
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Hashable, Sequence
from statistics import NormalDist

__all__ = [
    "PAIR_BINS",
    "ClusteredMean",
    "ClusteredPair",
    "MeanCI",
    "PairElo",
    "PairTally",
    "field_datum_diffs",
    "field_matchpoints",
    "loo_datum_diffs",
    "los",
    "matchpoints",
    "mean_ci",
    "normal_cdf",
    "normal_quantile",
    "one_sided_difference",
    "pentanomial_counts",
    "pentanomial_elo",
    "t_cdf",
    "t_quantile",
]

_STANDARD_NORMAL = NormalDist()
_LARGE_DF = 1000  # above this, closed approximations exact to ~1e-11 replace the df/2-term series
_PAIR_SCORES = (0.0, 0.5, 1.0, 1.5, 2.0)
PAIR_BINS = ("LL", "LD", "WL+DD", "WD", "WW")
"""The pentanomial bins, by pair score 0, ½, 1, 1½, 2."""


# -- distributions ------------------------------------------------------------------------------


def _check_probability(p: float) -> None:
    if not 0.0 <= p <= 1.0:  # also rejects nan
        raise ValueError(f"a probability must lie in [0, 1], not {p}")


def normal_cdf(x: float) -> float:
    """Φ(x), the standard normal distribution function."""
    # erfc keeps full relative precision in the lower tail, where 1 + erf(x) would cancel.
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def normal_quantile(p: float) -> float:
    """Φ⁻¹(p), the standard normal quantile (Wichura's AS 241): ±inf at p = 0 or 1."""
    _check_probability(p)
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    return _STANDARD_NORMAL.inv_cdf(p)


def _t_two_sided(t: float, df: int) -> float:
    # A(t|df) = P(|T| ≤ t) for t ≥ 0, by the finite series of A&S 26.7.3 (odd df) and 26.7.4 (even df).
    theta = math.atan(t / math.sqrt(df))
    cos2 = math.cos(theta) ** 2
    if df % 2:
        term = total = math.cos(theta) if df > 1 else 0.0
        for k in range(3, df - 1, 2):
            term *= cos2 * (k - 1) / k
            total += term
        return 2.0 / math.pi * (theta + math.sin(theta) * total)
    term = total = 1.0
    for k in range(2, df - 1, 2):
        term *= cos2 * (k - 1) / k
        total += term
    return math.sin(theta) * total


def _t_upper_hill(t: float, df: int) -> float:
    # Hill's normalising transform (CACM algorithm 395) for many degrees of freedom: t becomes a
    # standard normal deviate y, and P(T > t) = 1 − Φ(y), with a relative error near 1e-14 above df = 1000.
    a = df - 0.5
    b = 48 * a * a
    y = a * math.log1p(t * t / df)
    y = (((((-0.4 * y - 3.3) * y - 24.0) * y - 85.5) / (0.8 * y * y + 100.0 + b) + y + 3.0) / b + 1.0) * math.sqrt(y)
    return normal_cdf(-y)


def _t_density(t: float, df: int) -> float:
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))


def _check_df(df: int) -> None:
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")


def t_cdf(t: float, df: int) -> float:
    """P(T ≤ t) for Student's t with ``df`` degrees of freedom."""
    _check_df(df)
    if math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    if df > _LARGE_DF:
        upper = _t_upper_hill(abs(t), df)
        return 1.0 - upper if t >= 0 else upper
    half = 0.5 * _t_two_sided(abs(t), df)
    return 0.5 + half if t >= 0 else 0.5 - half


def _cornish_fisher(z: float, df: int) -> float:
    # A&S 26.7.5: the t quantile as the normal quantile plus corrections in powers of 1/df.
    z2 = z * z
    g1 = z * (z2 + 1) / 4
    g2 = z * ((5 * z2 + 16) * z2 + 3) / 96
    g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384
    g4 = z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160
    return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df


def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom (``t_quantile(0.975, 9)`` = 2.262)."""
    _check_probability(p)
    _check_df(df)
    if p == 0.5:
        return 0.0
    if p in (0.0, 1.0):
        return math.inf if p == 1.0 else -math.inf
    # Solve for the upper tail probability on t ≥ 0; the t distribution is symmetric.
    tail = min(p, 1.0 - p)
    sign = 1.0 if p > 0.5 else -1.0
    if df == 1:
        return sign / math.tan(math.pi * tail)
    if df == 2:
        return sign * (1.0 - 2.0 * tail) / math.sqrt(2.0 * tail * (1.0 - tail))
    t = _cornish_fisher(-normal_quantile(tail), df)
    if df > _LARGE_DF:
        return sign * t
    for _ in range(60):
        upper = 0.5 * (1.0 - _t_two_sided(t, df))
        step = (upper - tail) / _t_density(t, df)
        # The upper tail is convex on t ≥ 0: from below the root Newton never overshoots, and from
        # above it lands below the root, or past zero, in which case t is halved instead.
        t = t + step if t + step > 0 else t / 2
        if abs(step) <= 1e-13 * max(1.0, t):
            break
    return sign * t


# -- means and intervals ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MeanCI:
    """A mean of independent block values and its t interval."""

    mean: float
    low: float
    high: float
    n: int
    sd: float
    """Sample standard deviation (divided by n − 1); nan for fewer than two values."""

    @property
    def se(self) -> float:
        """Standard error of the mean, sd/√n (nan for fewer than two values)."""
        return self.sd / math.sqrt(self.n) if self.n > 1 else math.nan

    @property
    def df(self) -> int:
        """Degrees of freedom of the interval's t: n − 1 (0 for fewer than two values)."""
        return max(self.n - 1, 0)

    @property
    def los(self) -> float:
        """Likelihood that the true mean is above zero, from the t distribution (nan below two values)."""
        return los(self.mean, self.se, self.df) if self.n > 1 else math.nan


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    # Two passes with exact summation. Identical values (one value included) are caught first, so
    # that they give exactly (value, 0), which rounding in fsum(values)/n would not guarantee.
    n = len(values)
    if min(values) == max(values):
        return float(values[0]), (0.0 if n > 1 else math.nan)
    mean = math.fsum(values) / n
    return mean, math.sqrt(math.fsum((x - mean) ** 2 for x in values) / (n - 1))


def mean_ci(values: Sequence[float], level: float = 0.95) -> MeanCI:
    """The mean of the values (one per independent block) with its two-sided t interval."""
    _check_level(level)
    n = len(values)
    if n == 0:
        return MeanCI(math.nan, math.nan, math.nan, 0, math.nan)
    mean, sd = _mean_sd(values)
    if n == 1:
        return MeanCI(mean, -math.inf, math.inf, 1, sd)
    half = t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    return MeanCI(mean, mean - half, mean + half, n, sd)


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level must lie in (0, 1), not {level}")


class ClusteredMean:
    """A ratio of sums over independent clusters, Σy/Σn, and its cluster-robust t interval, streamed.

    Each :meth:`add` is one cluster (one deal set): a total ``y`` and the weight ``n`` it is spread
    over (games, hands). Memory is constant, whatever the number of clusters.
    """

    __slots__ = ("_nn", "_scale", "_shift", "_yn", "_yy", "clusters", "total", "weight")

    def __init__(self) -> None:
        self.clusters = 0
        self.total = 0.0
        """Σy over the clusters."""
        self.weight = 0.0
        """Σn over the clusters."""
        self._shift = 0.0
        self._yy = self._yn = self._nn = 0.0
        self._scale = 0.0

    def add(self, total: float, weight: float) -> None:
        """One more cluster; a cluster of no weight carries no evidence and is left out."""
        if weight < 0:
            raise ValueError(f"a cluster's weight cannot be negative, not {weight}")
        if weight == 0:
            return
        if not self.clusters:
            self._shift = total / weight
        # Sums about the first cluster's ratio: Σ(y − R·n)² is then a difference of small numbers.
        y = total - self._shift * weight
        self.clusters += 1
        self.total += total
        self.weight += weight
        self._yy += y * y
        self._yn += y * weight
        self._nn += weight * weight
        self._scale += total * total

    @property
    def mean(self) -> float:
        """Σy/Σn (nan without a cluster)."""
        return self.total / self.weight if self.clusters else math.nan

    def squares(self) -> float:
        """Σ_c (y_c − R·n_c)², the clusters' squared distance from the ratio (0 without a cluster)."""
        if not self.clusters:
            return 0.0
        r = self.total / self.weight - self._shift
        squares = max(self._yy - 2.0 * r * self._yn + r * r * self._nn, 0.0)
        # Rounding leaves a trace of spread where every cluster has the same ratio: a spread below
        # 1e-13 of the totals' own size is rounding, not data.
        return 0.0 if squares <= 1e-26 * self._scale else squares

    def interval(self, level: float = 0.95) -> MeanCI:
        """The ratio with its t interval on clusters − 1 degrees of freedom; ``n`` counts clusters and
        ``sd`` is the standard error times √clusters (with equal weights: the sd of the cluster means)."""
        _check_level(level)
        g = self.clusters
        if g == 0:
            return MeanCI(math.nan, math.nan, math.nan, 0, math.nan)
        ratio = self.total / self.weight
        if g == 1:
            return MeanCI(ratio, -math.inf, math.inf, 1, math.nan)
        se = math.sqrt(g / (g - 1) * self.squares()) / self.weight
        half = t_quantile(0.5 + level / 2, g - 1) * se
        return MeanCI(ratio, ratio - half, ratio + half, g, se * math.sqrt(g))


class ClusteredPair:
    """What two :class:`ClusteredMean` share, for the standard error of the difference of their ratios.

    Each :meth:`add` is one cluster both have, with each one's total and weight in it. With the two
    means A and B (ratios R_a, R_b over weights W_a, W_b, G clusters between them, shared or not) the
    difference R_a − R_b has the linearised cluster-robust variance

        se² = G/(G − 1) · Σ_c ((y_ac − R_a·n_ac)/W_a − (y_bc − R_b·n_bc)/W_b)²

    (a cluster one of them lacks adds 0 for it), which counts the correlation of the two in the
    clusters they share: with 4 bots at one table the duplicate scores of a round add up to zero, so
    two bots' scores move against each other and their difference varies more than either. Memory
    is constant, as for :class:`ClusteredMean`.
    """

    __slots__ = ("_a", "_an", "_b", "_bn", "_nn", "_yy", "shared")

    def __init__(self) -> None:
        self.shared = 0
        """Clusters both have."""
        self._a = self._b = 0.0
        self._yy = self._an = self._bn = self._nn = 0.0

    def add(self, a_total: float, a_weight: float, b_total: float, b_weight: float) -> None:
        """One cluster both have (a cluster of no weight, left out of a :class:`ClusteredMean`, is left out here)."""
        if a_weight <= 0 or b_weight <= 0:
            return
        if not self.shared:
            self._a, self._b = a_total / a_weight, b_total / b_weight
        # About the first shared cluster's ratios, as ClusteredMean keeps its sums.
        u, v = a_total - self._a * a_weight, b_total - self._b * b_weight
        self.shared += 1
        self._yy += u * v
        self._an += u * b_weight
        self._bn += a_weight * v
        self._nn += a_weight * b_weight

    def cross(self, a: ClusteredMean, b: ClusteredMean) -> float:
        """Σ_c (y_ac − R_a·n_ac)(y_bc − R_b·n_bc) over the shared clusters, given the two means."""
        if not self.shared:
            return 0.0
        r, s = a.mean - self._a, b.mean - self._b
        return self._yy - s * self._an - r * self._bn + r * s * self._nn

    def difference(self, a: ClusteredMean, b: ClusteredMean) -> tuple[float, float, int]:
        """(R_a − R_b, its standard error, the clusters G between them); the error is nan below two clusters."""
        g = a.clusters + b.clusters - self.shared
        diff = a.mean - b.mean
        if g < 2 or not a.clusters or not b.clusters:
            return diff, math.nan, g
        spread = (a.squares() / a.weight ** 2 + b.squares() / b.weight ** 2
                  - 2.0 * self.cross(a, b) / (a.weight * b.weight))
        return diff, math.sqrt(g / (g - 1) * max(spread, 0.0)), g


def one_sided_difference(pair: ClusteredPair, a: ClusteredMean, b: ClusteredMean,
                         level: float = 0.95) -> tuple[float, float, float, float, int]:
    """A − B, two clustered means and what they share (:class:`ClusteredPair`): the difference, its two-sided
    ``level`` interval, the p-value of the one-sided t test of "A − B is 0 or less" on the clusters less one
    degrees of freedom (1 − LOS), and the clusters; nan where they are too few."""
    diff, se, clusters = pair.difference(a, b)
    if math.isnan(se) or math.isnan(diff):
        return diff, math.nan, math.nan, math.nan, clusters
    half = t_quantile(0.5 + level / 2, clusters - 1) * se
    return diff, diff - half, diff + half, 1.0 - los(diff, se, clusters - 1), clusters


def los(mean: float, se: float, df: int | None = None) -> float:
    """Likelihood of superiority: how sure we are that the true mean is above zero; T_df(mean/se)
    with ``df`` degrees of freedom (the clusters less one), Φ(mean/se) without."""
    if se < 0:
        raise ValueError(f"a standard error cannot be negative, not {se}")
    if math.isnan(mean) or math.isnan(se):
        return math.nan
    if se == 0:
        return 0.5 if mean == 0 else 1.0 if mean > 0 else 0.0
    return normal_cdf(mean / se) if df is None else t_cdf(mean / se, df)


# -- pentanomial head-to-head -------------------------------------------------------------------


def pentanomial_counts(pairs: Sequence[float]) -> tuple[int, int, int, int, int]:
    """Game pairs per bin: (LL, LD, WL+DD, WD, WW), from pair scores 0, ½, 1, 1½, 2."""
    tally = PairTally()
    tally.add_cluster(pairs)
    c = tally.counts
    return c[0], c[1], c[2], c[3], c[4]


def _elo(score: float) -> float:
    """Elo(s) = −400·log10(1/s − 1); −∞ at or below 0 and +∞ at or above 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: an even score is +0.0, not -0.0


@dataclasses.dataclass(frozen=True)
class PairElo:
    """The pentanomial head-to-head Elo of A over B, with its interval."""

    counts: tuple[int, int, int, int, int]
    """Game pairs per bin: LL, LD, WL+DD, WD, WW."""
    clusters: int
    """Independent groups the pairs came in (deal sets); the interval's t has clusters − 1 df."""
    score: float
    """A's mean score per game over the pairs, in [0, 1]; nan without pairs."""
    elo: float
    """Elo(score); nan without pairs and on a sweep, where it has no finite value."""
    low: float
    """The interval's lower end; −∞ when the interval reaches a score of 0; nan when every cluster
    scored alike (no spread, so no interval)."""
    high: float
    """The interval's upper end; +∞ when it reaches a score of 1; nan as ``low``."""

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def sweep(self) -> str | None:
        """``"won"`` when A won every pair outright (no lost pairs), ``"lost"`` when it lost every one."""
        n = self.pairs
        if n and self.counts[4] == n:
            return "won"
        if n and self.counts[0] == n:
            return "lost"
        return None

    def describe(self, signed: bool = True) -> str:
        """``+120.4 [+35.0, +210.9]``, ``+765.0 [+553.1, +inf]``, or on a sweep
        ``no lost pairs in 8: at least +85.2 (95 %)``; ``-`` without pairs."""
        if not self.pairs:
            return "-"
        if self.sweep == "won":
            return f"no lost pairs in {self.pairs}: at least {_elo_text(self.low)}"
        if self.sweep == "lost":
            return f"no won pairs in {self.pairs}: at most {_elo_text(self.high)}"
        if math.isnan(self.low):
            return f"{_elo_text(self.elo)} (no interval: all {self.clusters} deal sets scored alike)"
        return f"{_elo_text(self.elo)} [{_elo_text(self.low)}, {_elo_text(self.high)}]"


def _elo_text(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:+.1f}"


class PairTally:
    """Game pairs gathered cluster by cluster (one deal set at a time), in constant memory."""

    __slots__ = ("_score", "counts")

    def __init__(self) -> None:
        self.counts = [0, 0, 0, 0, 0]
        self._score = ClusteredMean()

    def add_cluster(self, pairs: Sequence[float]) -> None:
        """The pair scores (0, ½, 1, 1½, 2) of one cluster; an empty cluster is left out."""
        if not pairs:
            return
        for pair in pairs:
            if pair not in _PAIR_SCORES:
                raise ValueError(f"a game pair scores 0, 0.5, 1, 1.5 or 2, not {pair}")
            self.counts[_PAIR_SCORES.index(pair)] += 1
        self._score.add(math.fsum(pairs) / 2, len(pairs))  # a pair is two games: its score per game

    def elo(self, level: float = 0.95) -> PairElo:
        """The Elo, its interval, and on a sweep the exact one-sided bound (see the module's docstring)."""
        _check_level(level)
        counts = (self.counts[0], self.counts[1], self.counts[2], self.counts[3], self.counts[4])
        n, g = sum(counts), self._score.clusters
        if not n:
            return PairElo(counts, 0, math.nan, math.nan, math.nan, math.nan)
        if counts[4] == n or counts[0] == n:
            bound = (0.5 - level / 2) ** (1.0 / g)  # the least score a sweep of g clusters admits
            if counts[4] == n:
                return PairElo(counts, g, 1.0, math.nan, _elo(bound), math.inf)
            return PairElo(counts, g, 0.0, math.nan, -math.inf, _elo(1.0 - bound))
        ci = self._score.interval(level)
        if ci.low == ci.high:
            # Every deal set scored alike (all WD, say): no spread to measure, so no interval, rather
            # than one of zero width.
            return PairElo(counts, g, ci.mean, _elo(ci.mean), math.nan, math.nan)
        return PairElo(counts, g, ci.mean, _elo(ci.mean), _elo(ci.low), _elo(ci.high))


def pentanomial_elo(
    pairs: Sequence[float], level: float = 0.95, clusters: Sequence[Hashable] | None = None,
) -> PairElo:
    """Head-to-head Elo of A over B from game-pair scores, with its interval. ``clusters`` names the
    cluster of each pair (its deal set); without it every pair is a cluster of its own."""
    tally = PairTally()
    if clusters is None:
        for pair in pairs:
            tally.add_cluster([pair])
    else:
        if len(clusters) != len(pairs):
            raise ValueError("give one cluster for every pair")
        grouped: dict[Hashable, list[float]] = {}
        for pair, cluster in zip(pairs, clusters, strict=True):
            grouped.setdefault(cluster, []).append(pair)
        for group in grouped.values():
            tally.add_cluster(group)
    return tally.elo(level)


# -- one hand, several results ------------------------------------------------------------------


def matchpoints(scores: Sequence[float]) -> list[float]:
    """Each result's share of the other results on the same hand that it beat (ties half), in [0, 1]."""
    n = len(scores)
    if n == 1:
        return [0.5]
    ordered = sorted(scores)
    out = []
    for x in scores:
        below = bisect.bisect_left(ordered, x)
        tied = bisect.bisect_right(ordered, x) - below - 1  # not counting itself
        out.append((below + 0.5 * tied) / (n - 1))
    return out


def loo_datum_diffs(scores: Sequence[float]) -> list[float]:
    """Each result minus the mean of the other results on the same hand (0 for a lone result)."""
    n = len(scores)
    if n == 1:
        return [0.0]
    total = math.fsum(scores)
    # x − (S − x)/(n − 1) = (n·x − S)/(n − 1): the mean of the pairwise differences x − x'.
    return [(n * x - total) / (n - 1) for x in scores]


def field_datum_diffs(scores: Sequence[float], owners: Sequence[Hashable]) -> list[float | None]:
    """Each result minus the mean of the results of *other* owners on the same hand; ``None`` for a
    result no other owner's result stands beside."""
    n, total = len(scores), math.fsum(scores)
    own_n: dict[Hashable, int] = {}
    own_total: dict[Hashable, float] = {}
    for x, owner in zip(scores, owners, strict=True):
        own_n[owner] = own_n.get(owner, 0) + 1
        own_total[owner] = own_total.get(owner, 0.0) + x
    out: list[float | None] = []
    for x, owner in zip(scores, owners, strict=True):
        others = n - own_n[owner]
        out.append(x - (total - own_total[owner]) / others if others else None)
    return out


def field_matchpoints(scores: Sequence[float], owners: Sequence[Hashable]) -> list[float | None]:
    """Each result's share of the *other* owners' results on the same hand that it beat (ties
    half), in [0, 1]; ``None`` for a result no other owner's result stands beside."""
    n = len(scores)
    owned: dict[Hashable, int] = {}
    for owner in owners:
        owned[owner] = owned.get(owner, 0) + 1
    # One pass over the results in score order, a group of equal scores at a time: the results
    # below a group, less the owner's own among them, are the other owners' results it beat.
    order = sorted(range(n), key=scores.__getitem__)
    below_own: dict[Hashable, int] = {}
    out: list[float | None] = [None] * n
    i = 0
    while i < n:
        x = scores[order[i]]
        j = i + 1
        while j < n and scores[order[j]] == x:
            j += 1
        tied_own: dict[Hashable, int] = {}
        for k in order[i:j]:
            tied_own[owners[k]] = tied_own.get(owners[k], 0) + 1
        for k in order[i:j]:
            owner = owners[k]
            others = n - owned[owner]
            if others:
                out[k] = (i - below_own.get(owner, 0) + 0.5 * (j - i - tied_own[owner])) / others
        for owner, count in tied_own.items():
            below_own[owner] = below_own.get(owner, 0) + count
        i = j
    return out
