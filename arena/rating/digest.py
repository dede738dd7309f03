"""What the report page shows beyond the standings, gathered game by game in the standings' one pass over the
records: each bot's faults (a fault repeated on the retries of one decision counted once, with its repeats), the games
to replay, the rounds to chart and the versions the bots stated; each bounded whatever the size of the event."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from arena.rating.standing import RoundMark
from arena.records.format import GameRecords, RoundRecord

__all__ = ["Bounds", "Digest", "FaultEntry", "round_faults", "schedule_key"]


@dataclasses.dataclass(frozen=True)
class Bounds:
    """How much a digest keeps: faults listed per bot, games with faults replayed per bot and in all, blocks whose
    first game is replayed, and points per line of the event's course (about, at most)."""

    faults_listed: int
    fault_replays_per_bot: int
    fault_replays: int
    sample_blocks: int
    chart_points: int


def schedule_key(record: RoundRecord) -> tuple[int, int, int, int]:
    """Where a round's game is in the schedule: its round, group, deal set and rotation."""
    return record.schedule_round, record.group, record.deal_set, record.rotation


@dataclasses.dataclass
class FaultEntry:
    """A fault of a bot, where it happened, with its repeats: the same answer refused again on the
    retries of one decision is one entry."""

    order: tuple[int, ...]
    game: str
    seat: int
    round: int
    trick: int | None
    kind: str
    detail: str
    fallback: str | None
    count: int = 1

    def repeats(self, earlier: FaultEntry) -> bool:
        """True when this is ``earlier`` again, on a retry of the same decision (no fallback played yet)."""
        return earlier.fallback is None and (self.game, self.seat, self.round, self.trick, self.kind,
                                             self.detail) == (earlier.game, earlier.seat, earlier.round,
                                                              earlier.trick, earlier.kind, earlier.detail)


def round_faults(game: str, key: tuple[int, int, int, int], record: RoundRecord) -> list[FaultEntry]:
    """The faults of one round in order, a fault repeated on the retries of one decision merged."""
    out: list[FaultEntry] = []
    for index, fault in enumerate(record.faults):
        trick = -1 if fault.trick is None else fault.trick
        entry = FaultEntry((*key, record.round, trick, index), game, fault.seat, fault.round_number, fault.trick,
                            fault.kind.value, fault.detail, fault.fallback)
        earlier = next((e for e in reversed(out) if e.seat == entry.seat), None)
        if earlier is not None and entry.repeats(earlier):
            earlier.count += 1
            earlier.fallback = entry.fallback
        else:
            out.append(entry)
    return out


def _keep_first(items: list[Any], limit: int, order: Callable[[Any], Any]) -> None:
    """Keeps the ``limit`` first of ``items`` by ``order``, trimming only when they are twice as many
    (so that gathering stays linear in the games read)."""
    if len(items) > 2 * limit:
        items.sort(key=order)
        del items[limit:]


def _by_order(entry: FaultEntry) -> tuple[int, ...]:
    return entry.order


def _by_key(item: tuple[tuple[int, int, int, int], GameRecords]) -> tuple[int, int, int, int]:
    return item[0]


class Digest:
    """What the page shows beyond the standings, gathered game by game in the standings' pass, bounded."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.rounds = 0
        """Schedule rounds scored."""
        self._marks: list[tuple[int, RoundMark]] = []
        """Every ``stride``-th round scored, with its position (1-based): at most :attr:`Bounds.chart_points`."""
        self._stride = 1
        self._last: tuple[int, RoundMark] | None = None
        self.games = 0
        self.faults: dict[str, list[FaultEntry]] = {}
        self.versions: dict[str, list[str]] = {}
        self._fault_games: dict[str, list[tuple[tuple[int, int, int, int], GameRecords]]] = {}
        self._samples: dict[tuple[int, int, int], tuple[int, GameRecords]] = {}

    def add_round(self, mark: RoundMark) -> None:
        self.rounds += 1
        self._last = (self.rounds, mark)
        if (self.rounds - 1) % self._stride:
            return
        self._marks.append(self._last)
        if len(self._marks) > self.bounds.chart_points:  # keep every other one: still evenly spaced, memory bounded
            self._stride *= 2
            self._marks = [(at, kept) for at, kept in self._marks if (at - 1) % self._stride == 0]

    def marks(self) -> list[tuple[int, RoundMark]]:
        """The rounds to draw, evenly spaced, and the last, with their positions (1-based)."""
        if self._last is None or (self._marks and self._marks[-1][0] == self._last[0]):
            return list(self._marks)
        return [*self._marks, self._last]

    def add_game(self, game: GameRecords) -> None:
        self.games += 1
        key = schedule_key(game.first)
        seats = game.seats
        found: dict[str, list[FaultEntry]] = {}
        for record in game.rounds:
            for entry in round_faults(game.game, key, record):
                found.setdefault(seats[entry.seat], []).append(entry)
        for bot, entries in found.items():
            listed = self.faults.setdefault(bot, [])
            listed.extend(entries)
            _keep_first(listed, self.bounds.faults_listed, _by_order)
        for bot in found:
            chosen = self._fault_games.setdefault(bot, [])
            chosen.append((key, game))
            _keep_first(chosen, self.bounds.fault_replays_per_bot, _by_key)
        block = key[:3]
        held = self._samples.get(block)
        if held is None or key[3] < held[0]:
            self._samples[block] = (key[3], game)
            if len(self._samples) > 2 * self.bounds.sample_blocks:
                for extra in sorted(self._samples)[self.bounds.sample_blocks:]:
                    del self._samples[extra]
        for seat, version in enumerate(game.final.versions):
            seen = self.versions.setdefault(seats[seat], [])
            if version and version not in seen and len(seen) < 5:
                seen.append(version)

    def replays(self) -> list[tuple[GameRecords, list[str]]]:
        """The games to replay in schedule order, each with why it is shown."""
        why: dict[str, list[str]] = {}
        games: dict[str, tuple[tuple[int, int, int, int], GameRecords]] = {}
        picked = sorted(((key, bot, game) for bot, chosen in self._fault_games.items()
                         for key, game in sorted(chosen, key=_by_key)[:self.bounds.fault_replays_per_bot]),
                        key=lambda item: (item[0], item[1]))
        for key, bot, game in picked:
            if game.game not in games and len(games) >= self.bounds.fault_replays:
                continue
            games[game.game] = (key, game)
            why.setdefault(game.game, []).append(f"the faults of {bot}")
        for block in sorted(self._samples)[:self.bounds.sample_blocks]:
            rotation, game = self._samples[block]
            games.setdefault(game.game, ((*block, rotation), game))
            why.setdefault(game.game, []).append(f"the first game of block {game.block}")
        return [(game, why[game.game]) for _, game in sorted(games.values(), key=lambda item: item[0])]

    def listed_faults(self, bot: str) -> list[FaultEntry]:
        """The faults of ``bot`` listed one by one, the first in schedule order."""
        return sorted(self.faults.get(bot, []), key=_by_order)[:self.bounds.faults_listed]
