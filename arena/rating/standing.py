"""What the standings are made of: a bot's line, a comparison of two bots, a seat row, and who is ranked.

The value types the one pass (:class:`~arena.rating.ratings.Tally`) fills in and the reports
render; ``docs/standings.md`` explains every column.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from arena.event.setup.config import UNRANKED_ABOVE_FALLBACK_PCT
from arena.rating.sequential import SprtResult
from arena.rating.stats import MeanCI, PairElo
from arena.records.format import GameRecords

__all__ = [
    "CLUSTERED_BY",
    "MEMORY_LEVEL",
    "NOT_RANKED",
    "NOT_RANKED_TITLE",
    "PAIR_LEVEL",
    "PLACE_POINTS",
    "SEAT_POSITIONS",
    "BlockDifferences",
    "Comparison",
    "MemoryTest",
    "PairEffect",
    "RoundMark",
    "SeatRow",
    "Standing",
    "apart_phrase",
    "listed_apart",
    "not_ranked_because",
    "once_unit",
    "played_by_fallback",
]

PLACE_POINTS = (3.0, 2.0, 1.0, 0.0)
NOT_RANKED = ("withdrawn", "disqualified")
"""The statuses that take a bot out of the ranking (it is listed apart)."""
NOT_RANKED_TITLE = "Not ranked: house bots filling tables, withdrawn or disqualified bots, and bots that did not play"
CLUSTERED_BY = "deal set"
"""What the intervals' clusters are: the deal set, which every table of a schedule round plays."""
MEMORY_LEVEL = 0.01
"""The memory test's level: an honest bot is flagged this often (one-sided, later games better than first ones)."""
PAIR_LEVEL = 0.05
"""The pair report's level over the whole report: the chance that any pair of an honest field is flagged (Holm)."""
SEAT_POSITIONS = ("seat 0", "seat 1", "seat 2", "seat 3", "dealer +1", "dealer +2", "dealer +3", "dealer")


@dataclasses.dataclass(frozen=True)
class MemoryTest:
    """A bot's duplicate score on the deal sets it met for the first time and on those it had met before.

    ``first`` is over its first game on each deal set (no card of it dealt to the bot before), ``later`` over its
    other games on it; ``difference`` is later − first with its 95 % interval clustered by deal set, and ``p`` the
    one-sided t test of "no better later" (:data:`MEMORY_LEVEL`). Scores in the records' unit, nan when missing."""

    first: float = math.nan
    later: float = math.nan
    difference: float = math.nan
    low: float = math.nan
    high: float = math.nan
    p: float = math.nan
    deal_sets: int = 0
    """Deal sets between the two (the interval's t has deal sets − 1 df)."""
    first_games: float = 0.0
    later_games: float = 0.0
    ordered: bool = True
    """False for a folder played before the order of play was drawn: which game came first is not known."""

    @property
    def flagged(self) -> bool:
        return self.p < MEMORY_LEVEL  # nan compares False

    def to_dict(self, per_point: int = 1) -> dict[str, Any]:
        """The JSON's ``memory_test``: the scores and the interval in points, ``p``, ``flagged``."""
        return {"first": _finite(self.first / per_point), "later": _finite(self.later / per_point),
                "difference": _finite(self.difference / per_point),
                "interval": None if math.isnan(self.low) else [_finite(self.low / per_point),
                                                                _finite(self.high / per_point)],
                "p": _finite(self.p), "flagged": self.flagged}


@dataclasses.dataclass(frozen=True)
class PairEffect:
    """How bot ``bot`` does against its other tablemates when ``other`` sits at its table, and when it does not.

    ``with_other`` and ``without`` are its duplicate margin per game over each of its tablemates (``other``
    left out), in blocks with ``other`` at the table and in blocks without; ``effect`` is their difference with its
    95 % interval clustered by deal set, ``p`` the one-sided t test of "no better with ``other``", and ``flagged``
    Holm's decision over every pair of the report at :data:`PAIR_LEVEL`. Scores in the records' unit."""

    bot: str
    other: str
    with_other: float
    without: float
    effect: float
    low: float
    high: float
    p: float
    deal_sets: int
    games_with: int
    games_without: int
    flagged: bool = False

    def to_dict(self, per_point: int = 1) -> dict[str, Any]:
        return {"bot": self.bot, "other": self.other, "with": _finite(self.with_other / per_point),
                "without": _finite(self.without / per_point), "effect": _finite(self.effect / per_point),
                "interval": None if math.isnan(self.low) else [_finite(self.low / per_point),
                                                                _finite(self.high / per_point)],
                "p": _finite(self.p), "flagged": self.flagged, "deal_sets": self.deal_sets,
                "games_with": self.games_with, "games_without": self.games_without}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


@dataclasses.dataclass
class Standing:
    """One bot's line of the standings (scores in the records' unit: tenths, or DY points)."""

    bot: str
    rank: int | None = None
    """Its place in the ranking; none for house bots, withdrawn or disqualified bots, and bots without a game."""
    rank_range: tuple[int, int] | None = None
    """The ranks it could hold at 95 % (best, worst), given the uncertainty of the duplicate scores
    (:mod:`arena.rating.ranks`); none when it has no rank."""
    house: bool = False
    status: str = "playing"
    """``playing`` (the event goes on), ``finished`` (it has ended), ``absent``, ``withdrawn`` or ``disqualified``
    (the manifest's word for the bot)."""
    reason: str = ""
    """Why the bot is absent, withdrawn or disqualified, in words."""
    not_ranked: str = ""
    """Why the bot is listed apart from the ranking, in words (:func:`not_ranked_because`); empty for a ranked bot."""
    games: int = 0
    rounds: int = 0
    dup_per_game: float = 0.0
    """Duplicate score per game; nan when no hand of its games has another bot's result yet."""
    dup_low: float = math.nan
    dup_high: float = math.nan
    dup_games: float = 0.0
    """The games the duplicate score is spread over: a hand counts 1/rounds of its game once another
    bot has played it (so all its games, when every hand has been)."""
    clusters: int = 0
    """Deal sets (schedule rounds) in the duplicate score's and MP%'s intervals: their t has clusters − 1 df."""
    blocks: int = 0
    """Blocks (a deal set in all its rotations at one table) it played in."""
    mean_round: float = 0.0
    mean_total: float = 0.0
    place_points: float = 0.0
    matchpoint_pct: float = 0.0
    matchpoint_low: float = math.nan
    matchpoint_high: float = math.nan
    mu: float = 25.0
    sigma: float = 25.0 / 3
    ordinal: float = 0.0
    made_pct: float = 0.0
    abs_error: float = 0.0
    overtricks: float = 0.0
    too_high_pct: float = 0.0
    too_low_pct: float = 0.0
    decisions: int = 0
    """Decisions its seats had to make: a call per deal and 13 cards per round."""
    fallbacks: int = 0
    """Of those, the decisions the arena made for it by fallback."""
    fallback_pct: float = 0.0
    faults: int = 0
    faults_by_kind: dict[str, int] = dataclasses.field(default_factory=dict)
    kept_process: bool = False
    """A launched bot kept one process from game to game (``fresh_process = false``): it could remember a deal
    from one rotation and know the other hands when the deal came round again."""
    memory_test: MemoryTest = dataclasses.field(default_factory=MemoryTest)
    """Its duplicate score on the deal sets it met for the first time and on those it had met before."""

    SCORES = ("dup_per_game", "dup_low", "dup_high", "mean_round", "mean_total")
    """The fields in score units (the rest are counts, shares, places and ratings)."""

    @property
    def exact_pct(self) -> float:
        """Rounds in which it took exactly its call: made (tricks >= call) less called too low (tricks > call)."""
        return self.made_pct - self.too_low_pct

    def to_dict(self, per_point: int = 1) -> dict[str, Any]:
        """JSON-ready form, scores divided by ``per_point`` (``tenths_per_point(rules)`` gives points;
        1 keeps the records' unit); nan and ±inf, which JSON lacks, become null."""
        out: dict[str, Any] = {}
        for key, value in dataclasses.asdict(self).items():
            if key == "memory_test":
                out[key] = self.memory_test.to_dict(per_point)
                continue
            if key in self.SCORES:
                value = value / per_point
            out[key] = None if isinstance(value, float) and not math.isfinite(value) else value
        return out


@dataclasses.dataclass
class Comparison:
    """Bot A against bot B over the games where both sat at the same table."""

    a: str
    b: str
    blocks: int
    """Blocks where both played."""
    games: int
    """Games where both played."""
    diff: MeanCI
    """(A's total − B's total) per game, in the records' unit: the ratio over every game where both
    played, with its t interval clustered by deal set (``diff.n`` counts deal sets)."""
    los: float
    """Likelihood that A is stronger than B: T(mean/se) on the clusters' degrees of freedom."""
    elo: PairElo
    """Pentanomial head-to-head Elo and its 95 % interval, clustered the same way."""
    sprt: SprtResult | None = None
    """The sequential test with all its parameters, when one was asked for."""

    @property
    def pairs(self) -> int:
        """Game pairs: two games of a block in which A and B hold each other's hands."""
        return self.elo.pairs


@dataclasses.dataclass(frozen=True)
class RoundMark:
    """Where each bot stood once a schedule round was scored: the event's course, round by round."""

    round: int
    """The schedule round just scored."""
    dup_per_game: dict[str, float]
    """Each bot's duplicate score per game over the rounds scored so far (the records' unit; nan before
    another bot has played one of its hands)."""
    ordinal: dict[str, float]
    """Each bot's OpenSkill ordinal (mu - 3 sigma) after the round's games were rated."""


@dataclasses.dataclass
class SeatRow:
    """Mean round score of one seat position, across all bots."""

    position: str
    rounds: int
    mean: MeanCI
    """Clustered by deal set, as the standings' intervals."""


def _block_key(block: str) -> tuple[int, ...]:
    """``r3-g2-d3`` -> (3, 2, 3): blocks in schedule order."""
    try:
        return tuple(int(part[1:]) for part in block.split("-"))
    except ValueError:
        return ()


class BlockDifferences:
    """A's game total minus B's, game by game, gathered by block: what the sequential test reads.

    The test takes the blocks in plan order, complete ones only, up to the first block that is not
    complete, so its verdict does not depend on which games happened to finish first.

    Under ``rotation = "once"`` (``once``) A and B never share a table: each plays the round's deal set once, in the
    same seat, against the house trio, and the test's unit is the round (:meth:`units`), its value A's game total
    minus B's on the same cards.
    """

    def __init__(self, a: str, b: str, once: bool = False) -> None:
        self.a = a
        self.b = b
        self.once = once
        self._blocks: dict[str, dict[str, int]] = {}
        """Block id -> game id -> A's total minus B's (keyed by game, so a game counts once); under ``once``, round
        (:func:`once_unit`) -> its one difference, once both games are in."""
        self._held: dict[str, dict[str, int]] = {}
        """Under ``once``: round -> A's and B's game totals, as their games come in."""

    def add(self, block: str, game: str, seats: Sequence[str], totals: Sequence[int]) -> None:
        """One finished game (ignored unless A and B both sat at it; under ``once``, unless one of them did)."""
        if self.once:
            self._add_once(block, seats, totals)
        elif self.a in seats and self.b in seats:
            self._blocks.setdefault(block, {})[game] = totals[seats.index(self.a)] - totals[seats.index(self.b)]

    def add_game(self, game: GameRecords) -> None:
        """One recorded game."""
        self.add(game.block, game.game, game.seats, game.final.totals)

    def _add_once(self, block: str, seats: Sequence[str], totals: Sequence[int]) -> None:
        unit = once_unit(block)
        held = self._held.setdefault(unit, {})
        for bot in (self.a, self.b):
            if bot in seats:
                held[bot] = totals[seats.index(bot)]
        if len(held) == 2:
            self._blocks[unit] = {unit: held[self.a] - held[self.b]}

    def units(self, order: Sequence[str]) -> list[str]:
        """The test's units of the block ids ``order``, in that order: the blocks themselves, or under ``once`` their
        rounds (each once)."""
        if not self.once:
            return list(order)
        return list(dict.fromkeys(once_unit(block) for block in order))

    def complete_prefix(self, order: Sequence[str], rotations: int) -> list[float]:
        """Per block of ``order``, A's total minus B's per game (tenths), up to the first block that
        does not yet hold all its ``rotations`` games (under ``once``: per round, up to the first without A's and
        B's games)."""
        out: list[float] = []
        for block in self.units(order):
            games = self._blocks.get(block, {})
            if len(games) < (1 if self.once else rotations):
                break
            out.append(sum(games.values()) / len(games))
        return out

    def in_schedule_order(self) -> list[float]:
        """Per block where A and B met, in schedule order, A's total minus B's per game (tenths)."""
        return [sum(games.values()) / len(games)
                for _, games in sorted(self._blocks.items(), key=lambda item: (_block_key(item[0]), item[0]))]


def once_unit(block: str) -> str:
    """``r3-g2-d3`` -> ``r3-d3``: the round of a block, the unit of a comparison under ``rotation = "once"``."""
    parts = block.split("-")
    return "-".join(part for part in parts if not part.startswith("g"))


def listed_apart(row: Standing) -> bool:
    """True for a bot listed apart from the ranking (its ``not_ranked`` says why)."""
    return bool(row.not_ranked)


def _apart_by_status(row: Standing) -> str:
    """Why a bot is not ranked whatever the fallback player did: a house bot (it fills tables), withdrawn or
    disqualified, or no game played; empty otherwise."""
    if row.house:
        return row.reason or "house bot (fills tables)"
    if row.status in NOT_RANKED:
        return row.status
    if not row.games:
        return "no game played"
    return ""


def not_ranked_because(row: Standing, fallback_limit: float = UNRANKED_ABOVE_FALLBACK_PCT) -> str:
    """Why a bot is not ranked, in words (empty for a ranked bot): a house bot, withdrawn or disqualified, no game
    played, or more than ``fallback_limit`` % of its decisions made by the fallback player (ranked means played:
    ``faults.unranked_above_fallback_pct``), said as a whole sentence."""
    because = _apart_by_status(row)
    if because or not row.fallback_pct > fallback_limit:
        return because
    return (f"{_fallback_played(row)} ({row.fallbacks} of its {row.decisions} decisions), more than the "
            f"{fallback_limit:g}% a ranked bot may leave to the fallback (faults.unranked_above_fallback_pct), so "
            "these results are the fallback player's, not the bot's")


def played_by_fallback(row: Standing) -> bool:
    """True for a bot listed apart because the fallback player made too many of its decisions."""
    return listed_apart(row) and not _apart_by_status(row)


def apart_phrase(row: Standing) -> str:
    """The few words of a table's status cell for a bot listed apart (``the fallback played 93% for it``; the
    whole sentence is its ``not_ranked``); empty for a ranked bot."""
    return _fallback_played(row) if played_by_fallback(row) else row.not_ranked


def _fallback_played(row: Standing) -> str:
    return f"the fallback played {row.fallback_pct:.0f}% for it"
