"""A schedule round in flight in the standings' one pass (:class:`~arena.rating.ratings.Tally`): what the pass keeps
of each finished game until the round is scored, the results on each of its hands, its seat sums, and how two bots'
games of a round compare (game pairs at a table, the same hands under ``rotation = "once"``).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

from arena.core.turns import places_after
from arena.rating.standing import SEAT_POSITIONS
from arena.records.format import GameRecords

__all__ = ["KeptGame", "OpenRound", "game_key", "game_pairs", "same_hands"]


def game_key(game: GameRecords) -> tuple[int, int, int, int]:
    first = game.first
    return first.schedule_round, first.group, first.deal_set, first.rotation


@dataclasses.dataclass(slots=True)
class KeptGame:
    """What a scored round still needs of a finished game."""

    key: tuple[int, int, int, int]
    block: str
    seats: tuple[str, ...]
    totals: tuple[int, ...]
    places: tuple[int, ...]
    read: int
    """Its place among the games read (the records' order): a bot's games on a deal set are recorded in the order
    it played them."""


class OpenRound:
    """A schedule round not scored yet: its games, the results on each of its hands, its seat sums."""

    __slots__ = ("games", "hands", "planned", "seats")

    def __init__(self) -> None:
        self.games: list[KeptGame] = []
        self.hands: dict[tuple[str, int], list[tuple[str, int, float, int]]] = {}
        """(deal, seat) -> (bot, score, the share of a game the hand is: 1/rounds of its game, the game's index in
        :attr:`games`)."""
        self.seats: dict[str, list[int]] = {}
        """Seat position -> [sum of scores, rounds]."""
        self.planned: set[str] = set()
        """The ids of its games the plan holds (the round is complete when it has them all)."""

    def add(self, game: GameRecords, read: int) -> None:
        final = game.final
        index = len(self.games)
        self.games.append(KeptGame(game_key(game), final.block, final.seats, final.totals, final.places, read))
        share = 1.0 / len(game.rounds)
        for record in game.rounds:
            for seat, bot in enumerate(record.seats):
                score = record.scores[seat]
                self.hands.setdefault((record.deal, seat), []).append((bot, score, share, index))
                distance = places_after(record.dealer, seat)
                for key in (SEAT_POSITIONS[seat], SEAT_POSITIONS[3 + distance] if distance else "dealer"):
                    sums = self.seats.setdefault(key, [0, 0])
                    sums[0] += score
                    sums[1] += 1


def game_pairs(games: Sequence[KeptGame], a: str, b: str) -> list[float]:
    """The scores of game pairs of one block, two games in which A and B hold each other's hands
    (1 per game A finished ahead of B, 1/2 for an exact tie), as chess testing pairs games with
    colours reversed; games are paired greedily in schedule order."""
    entries = [(g.seats, g.totals[g.seats.index(a)] - g.totals[g.seats.index(b)]) for g in games]
    out: list[float] = []
    paired: set[int] = set()
    for i, (seats, diff) in enumerate(entries):
        if i in paired:
            continue
        ia, ib = seats.index(a), seats.index(b)
        for j in range(i + 1, len(entries)):
            other, other_diff = entries[j]
            if j not in paired and other[ia] == b and other[ib] == a:
                paired.update((i, j))
                out.append(sum(1.0 if d > 0 else 0.5 if d == 0 else 0.0 for d in (diff, other_diff)))
                break
    return out


def same_hands(games: Sequence[KeptGame], differences: dict[tuple[str, str], list[int]],
                paired: dict[tuple[str, str], list[float]]) -> None:
    """Under ``rotation = "once"``: every two games of a round (one deal set) compared seat by seat, where two bots
    held the same hands (the other three seats the house trio's, the same in both games): A's game total minus B's
    is one game's difference, in ``differences`` as the table's are (a sum, games and blocks). No game pairs: A and B
    never hold each other's hands."""
    for one, other in itertools.combinations(games, 2):
        for seat, (a, b) in enumerate(zip(one.seats, other.seats, strict=True)):
            if a == b:
                continue
            diff = one.totals[seat] - other.totals[seat]
            for key, sign in (((a, b), 1), ((b, a), -1)):
                counts = differences.setdefault(key, [0, 0, 0])
                counts[0] += sign * diff
                counts[1] += 1
                counts[2] += 1
                paired.setdefault(key, [])
