"""The ladder's leaderboard: the active versions ranked by ordinal, with their duplicate scores and rank ranges.

Scores: a version's *duplicate score* is the mean of its block scores over its rated blocks, in points per game
(a block's score is stored in tenths per game), with the 95 % t interval of that mean, each block one cluster
(:func:`score_interval`). A version is ranked once it is active and has played its placement blocks (and at
least one). Its rank is its place by ordinal, shown as its *rank range* (:func:`rank_versions`): the ranks it
could hold at 95 %, given the uncertainty of the ratings.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.ladder.db import (
    BlockResult,
    Entrant,
    Rating,
    Version,
    VersionState,
)
from arena.rating.ranks import pair_quantile, rank_ranges
from arena.rating.stats import MeanCI, t_quantile

__all__ = ["Leaderboard", "Standing", "leaderboard", "rank_versions", "score_interval"]


_LEVEL = 0.95


def score_interval(blocks: int, total: float, squares: float) -> MeanCI:
    """The mean of ``blocks`` block scores from their sum and sum of squares, with its 95 % t interval: what
    :func:`~arena.rating.stats.mean_ci` gives for the scores themselves (no interval for one block)."""
    if blocks <= 0:
        return MeanCI(math.nan, math.nan, math.nan, 0, math.nan)
    mean = total / blocks
    if blocks == 1:
        return MeanCI(mean, -math.inf, math.inf, 1, math.nan)
    sd = math.sqrt(max(0.0, (squares - blocks * mean * mean) / (blocks - 1)))
    half = t_quantile(0.5 + _LEVEL / 2, blocks - 1) * sd / math.sqrt(blocks)
    return MeanCI(mean, mean - half, mean + half, blocks, sd)


@dataclasses.dataclass(frozen=True)
class Standing:
    """One active version on the leaderboard. Ranked versions have a rank; those in placement have none."""

    entrant: str
    display: str
    version: str
    games: int
    blocks: int
    mu: float | None
    sigma: float | None
    ordinal: float | None
    """mu - 3 sigma; ``None`` before the first rated block."""
    duplicate_score: float | None
    """Points per game above the table's mean: the mean block score, over its rated blocks."""
    interval: tuple[float, float] | None
    """The duplicate score's 95 % t interval, each block one cluster; ``None`` below two blocks."""
    faults: int
    """Faults in all its blocks."""
    rank: int | None
    """Its place on the leaderboard, by ordinal (1, 2, 3, ...); ``None`` in placement."""
    rank_range: tuple[int, int] | None
    """The ranks it could hold at 95 % (best, worst): :func:`rank_versions`; ``None`` in placement."""
    tie: bool
    """Not significantly behind the version above (:func:`rank_versions`'s judgement): their order may be luck."""
    placement: bool
    """Still playing its placement blocks: listed apart, not ranked."""


@dataclasses.dataclass(frozen=True)
class Leaderboard:
    """The ranked versions, best first, and those still in placement."""

    ranked: tuple[Standing, ...]
    placement: tuple[Standing, ...]
    placement_blocks: int


def leaderboard(session: Session, placement_blocks: int) -> Leaderboard:
    """The active versions: ranked by ordinal once they have played ``placement_blocks`` rated blocks (and at
    least one), the others listed apart; one statement."""
    faults = (select(BlockResult.version_id, func.sum(BlockResult.faults).label("faults"))
              .group_by(BlockResult.version_id).subquery())
    rows = session.execute(
        select(Version.label, Entrant.name, Entrant.display, Rating.mu, Rating.sigma, Rating.games, Rating.blocks,
               Rating.score_sum, Rating.score_squares, func.coalesce(faults.c.faults, 0))
        .join(Entrant, Entrant.id == Version.entrant_id)
        .outerjoin(Rating, Rating.version_id == Version.id)
        .outerjoin(faults, faults.c.version_id == Version.id)
        .where(Version.state == VersionState.ACTIVE))
    ranked: list[Standing] = []
    apart: list[Standing] = []
    for label, name, display, mu, sigma, games, blocks, total, squares, fault_count in rows:
        blocks = blocks or 0
        score = score_interval(blocks, total or 0.0, squares or 0.0)
        interval = ((score.low / 10, score.high / 10) if math.isfinite(score.low) and math.isfinite(score.high)
                    else None)
        row = Standing(entrant=name, display=display or name, version=label, games=games or 0, blocks=blocks, mu=mu,
                       sigma=sigma, ordinal=None if mu is None or sigma is None else mu - 3 * sigma,
                       duplicate_score=score.mean / 10 if blocks else None, interval=interval,
                       faults=int(fault_count), rank=None, rank_range=None, tie=False,
                       placement=mu is None or blocks < max(1, placement_blocks))
        (apart if row.placement else ranked).append(row)
    ranked.sort(key=lambda r: (-(r.ordinal or 0.0), -(r.mu or 0.0), r.version))
    apart.sort(key=lambda r: (-r.blocks, r.version))
    return Leaderboard(tuple(rank_versions(ranked)), tuple(apart), placement_blocks)


def rank_versions(rows: Sequence[Standing], adjusted: bool = True) -> list[Standing]:
    """``rows`` (rated versions, best ordinal first) with their place (``rank``), their rank range (the ranks each
    could hold at 95 %: :mod:`arena.rating.ranks`) and whether it is not significantly behind the version above
    (``tie``). A version is significantly ahead of one below it when their 95 % intervals of points per game do
    not overlap (the intervals shown beside the ranks never contradict them), or when their ratings differ by
    more than :func:`~arena.rating.ranks.pair_quantile` combined sigmas (μ1 − μ2 against
    √(σ1² + σ2²), OpenSkill's posteriors taken as normal). ``adjusted=False`` judges each pair by its own
    two-sided 95 % test, as if it were the only comparison: the benchmark's foil."""
    field = len(rows)
    judged = field if adjusted else 3  # pair_quantile(3) is the one-sided 97.5 % quantile

    def ahead(i: int, j: int) -> bool:
        upper, lower = rows[i], rows[j]
        if upper.interval is not None and lower.interval is not None and upper.interval[0] > lower.interval[1]:
            return True
        if upper.mu is None or lower.mu is None or upper.sigma is None or lower.sigma is None:
            return False
        return upper.mu - lower.mu > pair_quantile(judged) * math.hypot(upper.sigma, lower.sigma)

    ranges = rank_ranges(field, ahead)
    return [dataclasses.replace(row, rank=position, rank_range=span.pair(), tie=position > 1 and not ahead(i - 1, i))
            for i, (position, row, span) in enumerate(zip(range(1, field + 1), rows, ranges, strict=True))]
