"""The pair report: for each ordered pair of bots (A, B), A's margin over its other tablemates in its blocks with B
at the table and in its blocks without, deal set by deal set, flagged by Holm's step-down (``docs/statistics.md``).
The standings' one pass (:class:`~arena.rating.ratings.Tally`) and the ladder both fill one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Iterable, Sequence
from typing import Protocol

from arena.rating.standing import PAIR_LEVEL, PairEffect
from arena.rating.stats import ClusteredMean, ClusteredPair, one_sided_difference

__all__ = ["PAIRED_BOTS", "PairReport", "Played"]


PAIRED_BOTS = 64
"""The largest field whose rank ranges compare the bots pair by pair with what they share (2,016 pairs at most);
a larger one bounds each difference's standard error by the sum of the two bots' own (wider ranges, never
narrower than the data allow), so that memory stays bounded whatever the field. The pair report is kept for
such a field only."""


class _Effect:
    """Bot A's margin over its other tablemates, in blocks with bot B at the table and in blocks without."""

    __slots__ = ("both", "games_with", "games_without", "with_other", "without")

    def __init__(self) -> None:
        self.with_other = ClusteredMean()
        self.without = ClusteredMean()
        self.both = ClusteredPair()
        self.games_with = 0
        self.games_without = 0

    def add(self, with_other: tuple[float, float, float], without: tuple[float, float, float]) -> None:
        """One deal set: (margin, tablemate-games, games) with B at A's table and without."""
        self.with_other.add(with_other[0], with_other[1])
        self.without.add(without[0], without[1])
        self.both.add(with_other[0], with_other[1], without[0], without[1])
        self.games_with += round(with_other[2])
        self.games_without += round(without[2])


class Played(Protocol):
    """A finished game as the pair report reads it."""

    @property
    def seats(self) -> tuple[str, ...]: ...

    @property
    def totals(self) -> Sequence[float]: ...


class PairReport:
    """The pair report's sums, deal set by deal set: for each ordered pair of bots (A, B), A's margin over its other
    tablemates in its blocks with B at the table and in its blocks without (:class:`_Effect`)."""

    def __init__(self) -> None:
        self.effects: dict[tuple[str, str], _Effect] = {}

    def add_round(self, blocks: Iterable[Sequence[Played]], bots: Iterable[str]) -> None:
        """One deal set: its blocks' games; ``bots``, every bot of the event so far. For each bot A of the round and
        each other bot B, A's margin over its tablemates other than B (game totals, summed over a block's games:
        over a block each holds every hand) in its blocks with B at the table, and over all its tablemates in its
        blocks without B."""
        margins: dict[str, list[float]] = {}
        """A -> its margin over all its tablemates this round, the tablemate-games and the games."""
        together: dict[tuple[str, str], list[float]] = {}
        """(A, B) -> over A's blocks with B: its margin over the others, their tablemate-games, the games, and the
        blocks' whole margin and tablemate-games."""
        for block_games in blocks:
            for a in sorted({bot for game in block_games for bot in game.seats}):
                margin = 0.0
                count = games = 0
                against: dict[str, list[float]] = {}
                for game in block_games:
                    if a not in game.seats:
                        continue
                    mine = game.totals[game.seats.index(a)]
                    games += 1
                    for seat, other in enumerate(game.seats):
                        if other != a:
                            margin += mine - game.totals[seat]
                            count += 1
                            pair = against.setdefault(other, [0.0, 0])
                            pair[0] += mine - game.totals[seat]
                            pair[1] += 1
                acc = margins.setdefault(a, [0.0, 0, 0])
                acc[0] += margin
                acc[1] += count
                acc[2] += games
                for b, (own, met) in against.items():
                    # With B: A's margin over the others of the block (B's own share taken out), then the block's
                    # whole margin and count, which the margin without B leaves out.
                    shared = together.setdefault((a, b), [0.0, 0, 0, 0.0, 0])
                    for at, value in enumerate((margin - own, count - met, games, margin, count)):
                        shared[at] += value
        every = sorted(bots)
        for a in sorted(margins):
            whole = margins[a]
            for b in every:
                if b == a:
                    continue
                sat = together.get((a, b))
                with_other: tuple[float, float, float] = (0.0, 0.0, 0.0)
                without = (whole[0], whole[1], whole[2])
                if sat is not None:
                    with_other = (sat[0], sat[1], sat[2])
                    without = (whole[0] - sat[3], whole[1] - sat[4], whole[2] - sat[2])
                effect = self.effects.get((a, b))
                if effect is None:
                    effect = self.effects[a, b] = _Effect()
                effect.add(with_other, without)

    def report(self, bots: Collection[str]) -> list[PairEffect]:
        """Every ordered pair of ``bots`` that sat together, flagged by Holm's step-down over the report's p-values
        at :data:`PAIR_LEVEL` in all."""
        out = []
        for (a, b), sums in sorted(self.effects.items()):
            if a not in bots or b not in bots or not sums.games_with:
                continue
            diff, low, high, p, clusters = one_sided_difference(sums.both, sums.with_other, sums.without)
            out.append(PairEffect(a, b, sums.with_other.mean, sums.without.mean, diff, low, high, p, clusters,
                                  sums.games_with, sums.games_without))
        tested = sorted((effect.p, index) for index, effect in enumerate(out) if not math.isnan(effect.p))
        for rank, (p, index) in enumerate(tested):
            if p > PAIR_LEVEL / (len(tested) - rank):
                break  # Holm: the first p-value above its threshold stops the flags
            out[index] = dataclasses.replace(out[index], flagged=True)
        return out
