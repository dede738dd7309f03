"""Rank ranges: the ranks each entry of a ranked list could hold at 95 %, given the uncertainty of its score.

A list of N entries in order, best first, and a pairwise judgement "entry i is significantly ahead of
entry j" (for i above j) give each entry the range

    best = 1 + (entries significantly ahead of it),   worst = N − (entries it is significantly ahead of)

shown ``1`` when both ends agree and ``2-4`` when they do not. It is Chatbot Arena's upper-bound rank
("one plus the number of models significantly better") made two-sided. Its position in the list always
lies in its range, since only an entry above can be ahead of it. The range misses the entry's true rank only
if some comparison of the entry with another is wrong in its direction, so with N − 1 comparisons each
wrong at most (1 − level)/(N − 1) of the time (:func:`pair_quantile`: a one-sided test at that level,
Bonferroni's bound over the entry's comparisons) the range holds its true rank at least ``level`` of the
time. ``docs/statistics.md`` gives the argument and the coverage measured by simulation.

The judgement itself belongs to the caller: the standings compare two bots' duplicate scores per game,
clustered by deal set; the ladder compares two versions' ratings. Each also counts two entries as apart
whenever the 95 % intervals it shows beside them do not overlap, so a range never contradicts the
intervals on the same line.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

from arena.rating.stats import normal_quantile, t_quantile

__all__ = ["LEVEL", "RankRange", "pair_quantile", "rank_ranges"]

LEVEL = 0.95
"""How often a range holds the entry's true rank, at least."""


@dataclasses.dataclass(frozen=True)
class RankRange:
    """The ranks an entry could hold: from ``best`` to ``worst`` (1 is first)."""

    best: int
    worst: int

    def __str__(self) -> str:
        return str(self.best) if self.best == self.worst else f"{self.best}-{self.worst}"

    def pair(self) -> tuple[int, int]:
        """``(best, worst)``: the JSON's ``rank_range``."""
        return self.best, self.worst


@functools.lru_cache(maxsize=4096)
def pair_quantile(field: int, df: int | None = None, level: float = LEVEL) -> float:
    """What a comparison in a list of ``field`` entries must pass: the one-sided 1 − (1 − level)/(field − 1)
    quantile of Student's t on ``df`` degrees of freedom (the normal's without ``df``)."""
    if field < 2:
        raise ValueError(f"a comparison needs a list of at least two entries, not {field}")
    p = 1.0 - (1.0 - level) / (field - 1)
    return normal_quantile(p) if df is None else t_quantile(p, df)


def rank_ranges(count: int, ahead: Callable[[int, int], bool]) -> list[RankRange]:
    """The ranges of ``count`` entries in order, best first; ``ahead(i, j)`` (``i < j``) says whether entry
    ``i`` is significantly ahead of entry ``j``. Asks every pair once, in a fixed order."""
    above = [0] * count
    below = [0] * count
    for i in range(count):
        for j in range(i + 1, count):
            if ahead(i, j):
                below[i] += 1
                above[j] += 1
    return [RankRange(1 + above[i], count - below[i]) for i in range(count)]
