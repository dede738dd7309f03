"""The sequential test of two bots: fishtest's GSPRT on the mean of the block differences.

H0: the true mean difference per block is Δ0; H1: it is Δ1. The log-likelihood ratio (LLR) is the
log of how much more likely the n blocks so far are if the mean is Δ1 than if it is Δ0, treating
block values as normal. Stop and accept H1 when LLR ≥ ln((1 − β)/α); accept H0 when
LLR ≤ ln(β/(1 − α)); otherwise play another block. With α = β = 0.05 the bounds are ±2.944, and
the test should wrongly accept H1 when H0 holds about 5 % of the time (α), and wrongly accept H0
when H1 holds about 5 % of the time (β).
The variance of the blocks is unknown and must be estimated; the two forms differ only there.
With d̄ the mean and v = Σ(d − d̄)²/n (divided by n, not n − 1, as fishtest does):
- ``method="alt"`` (fishtest ``LLR_alt``): each hypothesis gets its own best-fitting
  spread, the mean square distance of the blocks from its mean, r₀ = v + (d̄ − Δ0)² and
  r₁ = v + (d̄ − Δ1)², and LLR = (n/2)·ln(r₀/r₁). This is exactly the log ratio of the two
  normal likelihoods, each with its mean fixed at its hypothesis and its variance fitted.
- ``method="alt2"`` (default; fishtest ``LLR_alt2``, its Brownian approximation): one variance for both,
  LLR = n·(Δ1 − Δ0)·(2·d̄ − Δ0 − Δ1)/(2·v). For a small Δ1 − Δ0 the two agree: expanding the
  logarithm gives the alt2 formula with v replaced by (r₀ + r₁)/2.
Which to use. With about a hundred blocks per test, the sampling noise in v makes alt2's LLR
wobble, and a wobbling LLR crosses the wrong bound more often. In simulated Callbreak blocks (the
lumpy model of tests/test_stats.py; Δ0 = 0, Δ1 = 0.2 standard deviations, α = β = 0.05, 10,000
tests under each hypothesis) with a burn-in of 10 blocks, alt2 wrongly accepted H1 in 7.1 % of
the tests with 93.8 % power; alt gave 5.3 % and 95.0 %, close to a test that knew the true
variance (4.6 % and 95.5 %). A burn-in of 30 blocks brings alt2 to 5.8 % and 94.4 %. But alt
has a flaw of its own: when the true difference is far above Δ1, both r₀ and r₁ grow with it
and their ratio tends to 1, so the LLR climbs slowly and a much stronger bot takes longer to be
accepted than one just at Δ1 (in a run with a difference eight times Δ1, 23-25 blocks instead
of 10). alt2's LLR grows with the difference. The default is therefore alt2, the formula
fishtest's normal approximation is known by, and tournaments use a burn-in of 30 blocks unless
told otherwise; alt stays available for short tests of small differences.
The blocks are read in order and the test stops at the first bound it crosses; blocks after that
are ignored, so asking after every block and asking once at the end give the same answer.
No decision is taken before ``burn_in`` blocks, because a variance estimated from a handful of
blocks can be far too small. If every block so far has the same value, v = 0 and the LLR could
divide by zero; v is floored at 1e-9·max(1, |Δ1 − Δ0|)², which keeps the LLR's sign (the side of
the midpoint the blocks are on) and lets the test decide.
At the cap (``cap`` blocks without a decision) a fixed-sample verdict is given, marked "(cap)":
H1 when d̄ lies on Δ1's side of the midpoint (Δ0 + Δ1)/2, else H0. The midpoint is where both
LLRs change sign, so it splits the two kinds of error evenly, as the SPRT's symmetric bounds do.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Literal

from arena.rating.stats import MeanCI, los, mean_ci

__all__ = ["Method", "SprtResult", "Verdict", "sprt"]

Verdict = Literal["H1", "H0", "continue", "H1 (cap)", "H0 (cap)"]
Method = Literal["alt", "alt2"]


@dataclasses.dataclass(frozen=True)
class SprtResult:
    """The state of a sequential test after the blocks it used."""

    n: int
    """Blocks used: up to the decision, the cap, or all of them while the test continues."""
    mean: float
    sd: float
    """Sample standard deviation (n − 1), as in ``ci``; the LLR itself divides by n, as fishtest."""
    llr: float
    lower: float
    upper: float
    verdict: Verdict
    los: float
    ci: MeanCI


def _llr(method: Method, n: int, mean: float, var: float, delta0: float, delta1: float) -> float:
    if method == "alt":
        return n / 2 * math.log((var + (mean - delta0) ** 2) / (var + (mean - delta1) ** 2))
    return n * (delta1 - delta0) * (2 * mean - delta0 - delta1) / (2 * var)


def sprt(
    values: Sequence[float], delta0: float, delta1: float, alpha: float = 0.05, beta: float = 0.05,
    burn_in: int = 10, cap: int | None = None, method: Method = "alt2",
) -> SprtResult:
    """Fishtest's normal GSPRT on block differences: H0 mean Δ0 against H1 mean Δ1, stopping at the first bound."""
    if delta1 == delta0:
        raise ValueError("delta1 must differ from delta0: the test decides between the two")
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta <= 1.0):
        raise ValueError(f"need 0 < alpha, beta and alpha + beta <= 1, not alpha={alpha}, beta={beta}")
    if burn_in < 2:
        raise ValueError(f"the burn-in must be at least 2 blocks, not {burn_in}")
    if cap is not None and cap < 1:
        raise ValueError(f"the cap must be at least 1 block, not {cap}")
    if method not in ("alt", "alt2"):
        raise ValueError(f"the LLR method is 'alt' or 'alt2', not {method!r}")
    lower = math.log(beta / (1 - alpha))
    upper = math.log((1 - beta) / alpha)
    floor = 1e-9 * max(1.0, abs(delta1 - delta0)) ** 2
    limit = len(values) if cap is None else min(len(values), cap)
    verdict: Verdict = "continue"
    n, mean, m2, llr = 0, 0.0, 0.0, 0.0
    # Welford's running mean and sum of squares: one pass, and stable when the mean is large.
    for x in values[:limit]:
        n += 1
        delta = x - mean
        mean += delta / n
        m2 += delta * (x - mean)
        llr = _llr(method, n, mean, max(m2 / n, floor), delta0, delta1)
        if n >= burn_in and llr >= upper:
            verdict = "H1"
            break
        if n >= burn_in and llr <= lower:
            verdict = "H0"
            break
    else:
        if cap is not None and n == cap:
            verdict = "H1 (cap)" if (delta1 - delta0) * (mean - (delta0 + delta1) / 2) > 0 else "H0 (cap)"
    ci = mean_ci(values[:n])
    return SprtResult(
        n=n, mean=ci.mean, sd=ci.sd, llr=llr, lower=lower, upper=upper, verdict=verdict,
        los=los(ci.mean, ci.se) if n > 1 else math.nan, ci=ci,
    )


