"""The sequential test of two bots: a GSPRT on the mean block difference, as fishtest runs for chess engines.

Each block (one deal set played in all its rotations with A and B at the table) gives one value:
A's total minus B's, per game. The test weighs H0 (the mean difference is Δ0) against H1 (it is Δ1)
by the log-likelihood ratio (LLR) of the blocks so far, gives no verdict before ``burn_in`` blocks,
and stops at the first block where the LLR leaves (ln(β/(1 − α)), ln((1 − β)/α)): H0 below, H1
above. At the cap without a verdict it says ``no decision``: no hypothesis is accepted at error
rates nobody chose.

How the LLR is computed (``method``):

- ``el`` (the default): the empirical likelihood, as fishtest's ``LLRcalc``. Each hypothesis gets the
  most likely distribution on the values actually observed whose mean is that hypothesis's Δ; the
  LLR is the log of the ratio of the two likelihoods. No variance is plugged in, so the skew of
  real block differences (a bot that wins big and loses small) does not bias it. While the blocks
  do not yet reach past both Δ0 and Δ1 (no distribution on them has that mean), ``alt2`` stands in.
- ``alt2``: the normal approximation with the variance estimated from the blocks (fishtest's
  ``LLR_alt2``); ``alt``: its exact-normal variant. Both divide by a variance that moves with the
  mean on skewed data, which lets the error rates drift above α and β;
  ``benchmarks/sprt_calibration.py`` measures by how much.

``docs/statistics.md`` gives the formulas, their assumptions and references.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Literal

from arena.rating.stats import MeanCI, mean_ci

__all__ = [
    "DEFAULT_METHOD", "METHODS", "Method", "RunningLlr", "SequentialTest", "SprtResult", "Verdict", "describe",
    "empirical_log_likelihood", "fishtest_line", "sprt",
]

Verdict = Literal["H1", "H0", "continue", "no decision"]
Method = Literal["el", "alt", "alt2"]
METHODS: tuple[Method, ...] = ("el", "alt", "alt2")
DEFAULT_METHOD: Method = "el"
"""The empirical-likelihood LLR: the one whose error rates the calibration benchmark holds at 0.05."""


@dataclasses.dataclass(frozen=True)
class SprtResult:
    """The state of a sequential test after the blocks it used, with every parameter of the test."""

    n: int
    """Blocks used: up to the decision, the cap, or all of them while the test continues."""
    mean: float
    sd: float
    """Sample standard deviation (n − 1), as in ``ci``; the LLR itself divides by n, as fishtest."""
    llr: float
    lower: float
    """ln(β/(1 − α)): at or below it, H0 is accepted."""
    upper: float
    """ln((1 − β)/α): at or above it, H1 is accepted."""
    verdict: Verdict
    los: float
    ci: MeanCI
    delta0: float = 0.0
    """H0's mean difference (A − B per block), in the units of the values."""
    delta1: float = 1.0
    """H1's mean difference, in the units of the values."""
    alpha: float = 0.05
    """The rate at which H1 may be accepted when H0 holds."""
    beta: float = 0.05
    """The rate at which H0 may be accepted when H1 holds."""
    burn_in: int = 10
    """Blocks before any verdict."""
    cap: int | None = None
    """The most blocks the test may use (None: no cap); at the cap without a verdict, ``no decision``."""
    method: Method = DEFAULT_METHOD
    per_point: int = 1
    """Units of the values in one point (10 when they are tenths), for :func:`describe`."""
    a: str = "A"
    b: str = "B"

    @property
    def decided(self) -> bool:
        """True when H0 or H1 was accepted."""
        return self.verdict in ("H0", "H1")


# -- the empirical likelihood ----------------------------------------------------------------------


def empirical_log_likelihood(values: Sequence[float], counts: Sequence[int], mean: float,
                             start: float = 0.0) -> tuple[float, float]:
    """The log of the largest likelihood of the observations under a distribution on ``values`` with
    expected value ``mean``, relative to the observed frequencies; and its Lagrange multiplier θ.

    ``mean`` must lie strictly between the smallest and the largest value. The maximum puts weight
    counts[i] / (n·(1 + θ·(values[i] − mean))) on each value, where θ is the root of
    f(θ) = Σ counts[i]·g[i] / (1 + θ·g[i]) with g = values − mean; the log likelihood is then
    −Σ counts[i]·ln(1 + θ·g[i]) (0 when ``mean`` is the observed mean, negative elsewhere).
    ``start`` is a first guess for θ (the root of the previous block, in a running test).
    """
    low = min(values) - mean
    high = max(values) - mean
    if not low < 0.0 < high:
        raise ValueError(f"the mean {mean} must lie strictly between the smallest and largest value")
    # Every weight stays positive exactly when 1 + θ·g > 0 for every g: θ in (−1/high, −1/low). f falls
    # from +∞ to −∞ across that interval, so it holds exactly one root; the bracket shrinks around it.
    lo, hi = -1.0 / high, -1.0 / low
    theta = start if lo < start < hi else 0.0
    tolerance = 1e-12 * max(1, sum(counts))
    log1p = math.log1p
    loglik = 0.0
    for _ in range(200):
        f = slope = loglik = 0.0
        for x, c in zip(values, counts, strict=True):
            g = x - mean
            q = g / (1.0 + theta * g)
            f += c * q
            slope += c * q * q
            loglik -= c * log1p(theta * g)
        # −Σ c·ln(1 + θg) is convex in θ with its minimum at the root; one Newton step from θ lowers
        # it by about f²/(2·slope), so that is how far this value still is from the answer.
        if f > 0.0:
            lo = theta
        else:
            hi = theta
        step = theta + f / slope
        if f * f <= 2.0 * tolerance * slope:
            return loglik - f * f / (2.0 * slope), step if lo <= step <= hi else theta
        theta = step if lo < step < hi else (lo + hi) / 2.0  # Newton, or bisection when it leaves the bracket
    return loglik, theta


class RunningLlr:
    """The log-likelihood ratio of H1 (mean Δ1) against H0 (mean Δ0), block by block."""

    def __init__(self, delta0: float, delta1: float, method: Method = DEFAULT_METHOD) -> None:
        if delta1 == delta0:
            raise ValueError("delta1 must differ from delta0: the test decides between the two")
        if method not in METHODS:
            raise ValueError(f"the LLR method is one of {', '.join(METHODS)}, not {method!r}")
        self.delta0 = delta0
        self.delta1 = delta1
        self.method = method
        self.n = 0
        self.mean = 0.0
        self._m2 = 0.0
        self._floor = 1e-9 * max(1.0, abs(delta1 - delta0)) ** 2
        self._values: list[float] = []
        self._counts: list[int] = []
        self._index: dict[float, int] = {}
        self._low = math.inf
        self._high = -math.inf
        self._theta0 = self._theta1 = 0.0

    def add(self, value: float) -> float:
        """One more block; returns the LLR of all the blocks so far."""
        self.n += 1
        # Welford's running mean and sum of squares: one pass, and stable when the mean is large.
        delta = value - self.mean
        self.mean += delta / self.n
        self._m2 += delta * (value - self.mean)
        if self.method == "el":
            where = self._index.get(value)
            if where is None:
                self._index[value] = len(self._values)
                self._values.append(value)
                self._counts.append(1)
            else:
                self._counts[where] += 1
            self._low = min(self._low, value)
            self._high = max(self._high, value)
        return self.llr()

    def llr(self) -> float:
        """The LLR of the blocks so far (0 before the first)."""
        if self.n == 0:
            return 0.0
        d0, d1 = self.delta0, self.delta1
        if self.method == "el" and self._low < min(d0, d1) and max(d0, d1) < self._high:
            l0, self._theta0 = empirical_log_likelihood(self._values, self._counts, d0, self._theta0)
            l1, self._theta1 = empirical_log_likelihood(self._values, self._counts, d1, self._theta1)
            return l1 - l0
        var = max(self._m2 / self.n, self._floor)
        if self.method == "alt":
            return self.n / 2 * math.log((var + (self.mean - d0) ** 2) / (var + (self.mean - d1) ** 2))
        # alt2, and el while a hypothesis lies outside the blocks' range (no distribution on the
        # observed values has that mean).
        return self.n * (d1 - d0) * (2 * self.mean - d0 - d1) / (2 * var)


class SequentialTest:
    """A sequential test fed one block at a time; :func:`sprt` feeds it a whole list."""

    def __init__(
        self, delta0: float, delta1: float, alpha: float = 0.05, beta: float = 0.05, burn_in: int = 10,
        cap: int | None = None, method: Method = DEFAULT_METHOD, *, per_point: int = 1, a: str = "A", b: str = "B",
    ) -> None:
        if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta <= 1.0):
            raise ValueError(f"need 0 < alpha, beta and alpha + beta <= 1, not alpha={alpha}, beta={beta}")
        if burn_in < 2:
            raise ValueError(f"the burn-in must be at least 2 blocks, not {burn_in}")
        if cap is not None and cap < 1:
            raise ValueError(f"the cap must be at least 1 block, not {cap}")
        if per_point < 1:
            raise ValueError(f"per_point must be at least 1, not {per_point}")
        self._llr = RunningLlr(delta0, delta1, method)
        self.alpha, self.beta, self.burn_in, self.cap = alpha, beta, burn_in, cap
        self.per_point, self.a, self.b = per_point, a, b
        self.lower = math.log(beta / (1 - alpha))
        self.upper = math.log((1 - beta) / alpha)
        self.values: list[float] = []
        """The blocks used."""
        self.llr = 0.0
        self.verdict: Verdict = "continue"

    def add(self, value: float) -> bool:
        """One more block (ignored once the test has stopped); returns True when the test has stopped."""
        if self.verdict != "continue":
            return True
        self.values.append(value)
        self.llr = self._llr.add(value)
        n = len(self.values)
        if n >= self.burn_in and self.llr >= self.upper:
            self.verdict = "H1"
        elif n >= self.burn_in and self.llr <= self.lower:
            self.verdict = "H0"
        elif n == self.cap:
            self.verdict = "no decision"
        return self.verdict != "continue"

    def extend(self, values: Iterable[float]) -> bool:
        """Blocks in order, up to the first at which the test stops; True when it has stopped."""
        for value in values:
            if self.add(value):
                return True
        return self.verdict != "continue"

    def result(self) -> SprtResult:
        """The state of the test."""
        ci = mean_ci(self.values)
        n = len(self.values)
        return SprtResult(
            n=n, mean=ci.mean, sd=ci.sd, llr=self.llr, lower=self.lower, upper=self.upper, verdict=self.verdict,
            los=ci.los, ci=ci, delta0=self._llr.delta0,
            delta1=self._llr.delta1, alpha=self.alpha, beta=self.beta, burn_in=self.burn_in, cap=self.cap,
            method=self._llr.method, per_point=self.per_point, a=self.a, b=self.b,
        )


def sprt(
    values: Sequence[float], delta0: float, delta1: float, alpha: float = 0.05, beta: float = 0.05,
    burn_in: int = 10, cap: int | None = None, method: Method = DEFAULT_METHOD, *, per_point: int = 1,
    a: str = "A", b: str = "B",
) -> SprtResult:
    """The GSPRT on block differences: H0 mean Δ0 against H1 mean Δ1, stopping at the first bound crossed."""
    test = SequentialTest(delta0, delta1, alpha, beta, burn_in, cap, method, per_point=per_point, a=a, b=b)
    test.extend(values)
    return test.result()


# -- in words --------------------------------------------------------------------------------------


def _blocks(n: int) -> str:
    return f"{n} block{'' if n == 1 else 's'}"


def _points(result: SprtResult, value: float, signed: bool = False) -> str:
    return f"{value / result.per_point:{'+' if signed else ''}.2f}"


def _side(result: SprtResult, bound: float, above: bool) -> str:
    """``A - B is above +0.50 points per game``; ``A scores more than B`` when the bound is 0."""
    a, b = result.a, result.b
    if _points(result, bound) in ("0.00", "-0.00"):
        return f"{a} scores {'more' if above else 'less'} than {b}"
    return f"{a} - {b} is {'above' if above else 'below'} {_points(result, bound, signed=True)} points per game"


def _hypotheses(result: SprtResult) -> str:
    """What H0 and H1 say, and the error rates: ``H0: A - B = +0.00 points per game; H1: ... ; alpha ...``."""
    difference = f"{result.a} - {result.b} ="
    return (f"H0: {difference} {_points(result, result.delta0, signed=True)} points per game; "
            f"H1: {difference} {_points(result, result.delta1, signed=True)}; "
            f"alpha {result.alpha:g}, beta {result.beta:g}")


def _measured(result: SprtResult) -> str:
    """``; measured: A - B -3.10 points per game (95% CI -4.02 to -2.18): A scores less than B`` (the last
    clause only when the whole interval is on one side of 0): what the verdict's blocks showed."""
    if result.n == 0 or not math.isfinite(result.mean):
        return ""
    a, b = result.a, result.b
    text = f"; measured: {a} - {b} {_points(result, result.mean, signed=True)} points per game"
    low, high = result.ci.low, result.ci.high
    if not (math.isfinite(low) and math.isfinite(high)):
        return text
    text += f" (95% CI {_points(result, low, signed=True)} to {_points(result, high, signed=True)})"
    if high < 0:
        return f"{text}: {a} scores less than {b}"
    if low > 0:
        return f"{text}: {a} scores more than {b}"
    return text


def describe(result: SprtResult) -> str:
    """The verdict in words, restating H0, H1, alpha and beta.

    Accepting H1 says the difference lies beyond Δ0 on H1's side (wrongly at most α of the time when
    it is Δ0 or less); accepting H0 says it falls short of Δ1 (wrongly at most β of the time when it
    is Δ1 or more). Neither says the difference *is* Δ0 or Δ1."""
    up = result.delta1 > result.delta0
    blocks = _blocks(result.n)
    llr = f"LLR {result.llr:.2f}, bounds ({result.lower:.2f}, {result.upper:.2f})"
    hypotheses = _hypotheses(result)
    if result.verdict in ("H1", "H0"):
        side = (_side(result, result.delta0, up) if result.verdict == "H1"
                else _side(result, result.delta1, not up))
        measured = _measured(result)
        if measured.endswith(side):  # "A scores more than B" once is enough
            measured = measured[: measured.rindex(":")]
        return f"{result.verdict} accepted after {blocks}: {side}{measured} ({hypotheses})"
    if result.verdict == "no decision":
        return (f"no decision: the cap of {blocks} was reached with the {llr}, between the bounds; "
                f"the blocks cannot tell H0 from H1 ({hypotheses})")
    if result.n < result.burn_in:
        return f"no verdict yet: {blocks} of the burn-in of {result.burn_in} before any verdict ({llr}); {hypotheses}"
    return f"no verdict yet after {blocks} ({llr}); {hypotheses}"


def fishtest_line(result: SprtResult) -> str:
    """One line as fishtest shows a test: LLR (bounds) [Δ0, Δ1], then the blocks and the mean difference."""
    # Before the burn-in the LLR is not yet a test (a few blocks can put it anywhere): the count is shown instead.
    early = result.n < result.burn_in and result.verdict == "continue"
    llr = f"burn-in {result.n} of {result.burn_in} blocks" if early else f"LLR {result.llr:.2f}"
    line = (f"{llr} ({result.lower:.2f}, {result.upper:.2f}) "
            f"[{_points(result, result.delta0)}, {_points(result, result.delta1)}] {_blocks(result.n)}")
    if result.n == 0:
        return line
    mean = f"{_points(result, result.mean, signed=True)} points per game"
    if not math.isfinite(result.ci.low):
        return f"{line}, {result.a} - {result.b} {mean}"
    return (f"{line}, {result.a} - {result.b} {mean} "
            f"(95% CI {_points(result, result.ci.low, signed=True)} to {_points(result, result.ci.high, signed=True)})")
