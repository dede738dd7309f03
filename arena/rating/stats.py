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

Likelihood of superiority (``los``)
    LOS = Φ(mean/se): the probability, under a normal approximation with a flat prior, that the true
    mean is above zero. 0.5 when the mean is 0; 1 or 0 when se = 0 and the mean is positive or negative.

Pentanomial head-to-head Elo (``pentanomial_elo``), as chess testing counts game pairs
    A game pair is two games in which A and B hold each other's hands. Each game scores 1 if A
    finished ahead of B, ½ on an exact tie and 0 otherwise, so a pair scores 0, ½, 1, 1½ or 2 (the
    bins LL, LD, WL+DD, WD, WW). The per-pair score is s = mean(pair)/2, the same as
    (WW + ¾·WD + ½·(WL + DD) + ¼·LD)/N. Its standard deviation σ is taken over pairs (divided by N),
    the interval is s ± z·σ/√N with z = normal_quantile(½ + level/2), 1.96 at 95 %; each end is turned into
    Elo by Elo(s) = −400·log10(1/s − 1). Scores are clamped into [1e-6, 1 − 1e-6] first, so a clean
    sweep gives about ±2400 Elo instead of infinity.

Matchpoints and the leave-one-out datum (bridge scoring), for the results of several bots on one hand
    ``matchpoints``: each result's share of the *other* results it beat, a tie counting half, in [0, 1].
    ``loo_datum_diffs``: each result minus the mean of the other results (the cross-IMP datum without
    the IMP table). It equals the mean of the pairwise differences (own − other), and the diffs of a
    hand sum to zero, so a bot's luck with the cards cancels when it is compared on the same hands.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Sequence
from statistics import NormalDist

__all__ = [
    "MeanCI",
    "loo_datum_diffs",
    "los",
    "matchpoints",
    "mean_ci",
    "normal_cdf",
    "normal_quantile",
    "pentanomial_counts",
    "pentanomial_elo",
    "t_cdf",
    "t_quantile",
]

_STANDARD_NORMAL = NormalDist()
_LARGE_DF = 1000  # above this, closed approximations exact to ~1e-11 replace the df/2-term series
_ELO_CLAMP = 1e-6
_PAIR_SCORES = (0.0, 0.5, 1.0, 1.5, 2.0)


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
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level must lie in (0, 1), not {level}")
    n = len(values)
    if n == 0:
        return MeanCI(math.nan, math.nan, math.nan, 0, math.nan)
    mean, sd = _mean_sd(values)
    if n == 1:
        return MeanCI(mean, -math.inf, math.inf, 1, sd)
    half = t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    return MeanCI(mean, mean - half, mean + half, n, sd)


def los(mean: float, se: float) -> float:
    """Likelihood of superiority Φ(mean/se): how sure we are that the true mean is above zero."""
    if se < 0:
        raise ValueError(f"a standard error cannot be negative, not {se}")
    if math.isnan(mean) or math.isnan(se):
        return math.nan
    if se == 0:
        return 0.5 if mean == 0 else 1.0 if mean > 0 else 0.0
    return normal_cdf(mean / se)


# -- pentanomial head-to-head -------------------------------------------------------------------


def pentanomial_counts(pairs: Sequence[float]) -> tuple[int, int, int, int, int]:
    """Game pairs per bin: (LL, LD, WL+DD, WD, WW), from pair scores 0, ½, 1, 1½, 2."""
    counts = [0] * 5
    for pair in pairs:
        if pair not in _PAIR_SCORES:
            raise ValueError(f"a game pair scores 0, 0.5, 1, 1.5 or 2, not {pair}")
        counts[_PAIR_SCORES.index(pair)] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def _elo(score: float) -> float:
    score = min(max(score, _ELO_CLAMP), 1.0 - _ELO_CLAMP)
    return -400.0 * math.log10(1.0 / score - 1.0)


def pentanomial_elo(pairs: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """Head-to-head Elo of A over B from game-pair scores, with its interval: (elo, low, high)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level must lie in (0, 1), not {level}")
    counts = pentanomial_counts(pairs)
    n = len(pairs)
    if n == 0:
        return math.nan, math.nan, math.nan
    scores = [k / 4 for k in range(5)]  # per-game score of each bin: 0, ¼, ½, ¾, 1
    s = math.fsum(c * a for c, a in zip(counts, scores, strict=True)) / n
    var = math.fsum(c * (a - s) ** 2 for c, a in zip(counts, scores, strict=True)) / n
    half = normal_quantile(0.5 + level / 2) * math.sqrt(var / n)
    return _elo(s), _elo(s - half), _elo(s + half)


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
