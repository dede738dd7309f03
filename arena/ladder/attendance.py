"""A remote version's attendance at a block: which of its games the fallback played because it was not there, whether
the block counts, and the block's note that says so.

A remote version is its entrant's own bot, connecting over gRPC; it can be away. Each game of its block waits up to
``[remote] patience_s`` for it, then the fallback player takes its seat for the whole game (an ``absent`` fault at
its first decision), and keeps it for the rest of the block, as in any tournament (a block's games go on without a
bot once they began without it). The rule (``docs/ladder.md`` says it in words):

- a block counts, with everything its records hold, unless the fallback played every game of one of its remote
  versions from its start: the games the fallback played for a version are that version's games, its results and
  its rating move as any (leaving a block it is losing loses it, so it cannot choose which blocks count);
- a block is void (kept, not counted) when the fallback played every game of a remote version from its start: the
  version was not there when the block's first game began;
- either way, a block in which a version was away for a game is a *miss*; ``[remote] set_aside_after`` misses in a
  row set it aside (:mod:`arena.ladder.service`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from arena.core.faults import FaultKind
from arena.records.format import GameRecords

__all__ = ["Attendance", "attendance", "games_words"]

LEFT = (FaultKind.DISCONNECT, FaultKind.STALLED)
"""The faults of a seat whose connection ended mid-game: the fallback played the rest of the game for it."""


def games_words(numbers: Sequence[int]) -> str:
    """``game 3``, ``games 3-4``, ``games 1 and 3``, ``games 1, 2 and 4``."""
    if len(numbers) == 1:
        return f"game {numbers[0]}"
    if list(numbers) == list(range(numbers[0], numbers[-1] + 1)):
        return f"games {numbers[0]}-{numbers[-1]}"
    return f"games {', '.join(str(n) for n in numbers[:-1])} and {numbers[-1]}"


def _counts(numbers: Sequence[int]) -> str:
    return "which counts" if len(numbers) == 1 else "which count"


@dataclasses.dataclass(frozen=True)
class Attendance:
    """Where a version was in a block's games (numbered from 1, in the order they were played)."""

    version: str
    games: int
    """The games of the block it sat in: four, or one under ``[blocks] rotation = "once"``."""
    away: tuple[int, ...]
    """The games it was not there for when they began: the fallback player took its seat (an ``absent`` fault)."""
    whole: tuple[int, ...]
    """The games the fallback played from their first decision: those it was away for, and those whose first
    request its bot left unanswered as its connection ended."""
    left: tuple[int, ...]
    """The other games its connection ended in, the fallback playing the rest of them."""

    @property
    def came(self) -> bool:
        """The fallback did not play all its games from their start: it took its seat at one of them (at the first,
        since the fallback keeps a seat it took, but for a block resumed after a stop), and the block counts."""
        return len(self.away) < self.games

    @property
    def missed(self) -> bool:
        """It was away for a game: a miss."""
        return bool(self.away)

    def note(self) -> str:
        """What happened, in a sentence for the block's page ("" when it played every game to its end)."""
        name, whole, games = self.version, self.whole, self.games
        if not self.came and games == 1:
            return f"{name} was not there when its game began: the fallback played it, so the block is void"
        if not self.came:
            return (f"{name} was not there when the block's first game began: the fallback played all {games} of its "
                    "games, so the block is void")
        said = []
        left = list(self.left)
        if whole and whole[0] > 1 and whole == tuple(range(whole[0], games + 1)):  # it left and never came back
            last = whole[0] - 1
            if last in left:
                left.remove(last)
                said.append(f"{name}'s connection ended during game {last}; the fallback played the rest of it and "
                            f"its {games_words(whole)}, {_counts(whole)}")
            else:
                said.append(f"{name} left after game {last}; the fallback played its {games_words(whole)}, "
                            f"{_counts(whole)}")
        elif whole:
            said.append(f"the fallback played {name}'s {games_words(whole)} from the start, {_counts(whole)}")
        if left:
            said.append(f"{name}'s connection ended during {games_words(left)}; the fallback played the rest of "
                        f"{'it' if len(left) == 1 else 'them'}, {_counts(left)}")
        return "; ".join(said)


def attendance(games: Sequence[GameRecords], version: str) -> Attendance:
    """Where ``version`` was in ``games`` (a block's, in the order played), from the faults of its seats."""
    away: list[int] = []
    whole: list[int] = []
    left: list[int] = []
    for number, game in enumerate(games, start=1):
        if version not in game.seats:
            continue
        seat = game.seats.index(version)
        faults = [fault for record in game.rounds for fault in record.faults if fault.seat == seat]
        played = [fault for fault in faults if fault.fallback is not None]  # the decisions the fallback made
        if any(fault.kind == FaultKind.ABSENT for fault in faults):
            away.append(number)
            whole.append(number)
        elif played and played[0].kind in LEFT and (played[0].round_number, played[0].trick) == (1, None):
            whole.append(number)  # gone at its first decision: the fallback played the game from its start
        elif any(fault.kind in LEFT for fault in faults):
            left.append(number)
    sat = sum(version in game.seats for game in games)  # all of a block's games, or under "once" its one
    return Attendance(version, sat, tuple(away), tuple(whole), tuple(left))
