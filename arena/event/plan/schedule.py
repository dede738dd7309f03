"""Scheduling: which bots sit at which table, in which seats, on which deals.

A schedule is made of plain, frozen :class:`Block` records with stable ids, each giving its
:class:`Assignment` games. Each schedule round plays one deal set; within a round every group
(table) plays the same deal set, as every table plays the same boards in bridge, and plays it in
every rotation, so each bot of the group holds every hand (``cyclic``: 4 rotations; ``full``: all
24 seatings). The rotation group, a *block*, is the unit of scheduling, logging, statistics and
resume.

Before its seats are drawn a block is a :class:`Lineup`: the round, the group's number, the deal
set and the four bots in the design's order. Planning works on lineups, which cost next to nothing
to make; :meth:`Schedule.seat` draws a lineup's seat order (a seeded shuffle, the costly part)
when its games are about to be played or checked.

A group's seat order depends only on the seed, the round and the four bots in it, and groups of
four are numbered in colexicographic order of the field (the groups of the first n bots come
before any group with bot n+1), so the blocks of a field stay the same when a bot is added at the
end: a late entrant adds blocks and changes none.

The order of play (:func:`play_order`) is drawn from the seed too: the blocks of a round in a random order, and
each block's rotations in a random order, so that the game in which a bot first meets a deal set is a random one of
its games on it (the memory test of the standings compares that game with the later ones).

Groups per format:

- ``round-robin``: every group of four, for up to 8 bots; above that, a partition of the bots into
  tables each round, balanced so that every pair meets about equally often: the affine plane
  AG(2,4) for 16 bots (every pair meets exactly once every 5 rounds), otherwise greedy pair
  balancing. The field is padded with unranked house bots to a multiple of four.
- ``gauntlet``: the champion with every group of three from the field.
- ``head-to-head``: bots A and B with two pool opponents drawn for each block (A and B opposite
  each other), or with a second copy of each when there is no pool.
- ``swiss``: balanced opening rounds, then tables of bots with neighbouring standings.

Under ``rotation = "once"`` (round-robin, head-to-head and sprt) no bot meets another at a table: each bot's
block is one game, the bot in the round's seat (:func:`once_seat`, the same for every bot) and the house trio
(:data:`HOUSE_TRIO`) in the other three, so each bot holds a deal set's cards once in the whole event and every
bot of a round holds the same cards in the same seat against the same opponents.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple

from arena.core.dealing import draw_seating
from arena.event.setup.formats import (
    HOUSE_TRIO,
    FormatOptions,
    GauntletOptions,
    HeadToHeadOptions,
    RoundRobinOptions,
    SwissOptions,
)
from arena.event.setup.kinds import Format, Rotation

__all__ = ["HOUSE_TRIO", "Assignment", "Block", "Lineup", "PlayOrder", "Schedule", "affine_plane_16",
           "balanced_partition", "colex", "once_groups", "once_order", "once_seat", "play_order", "seatings"]

Standings = Callable[[], Mapping[str, float]]
"""Current score per bot, for adaptive (swiss) rounds."""


def block_id(round_number: int, group: int, deal_set: int) -> str:
    """The id of a block: ``r<round>-g<group>-d<deal set>``."""
    return f"r{round_number}-g{group}-d{deal_set}"


@dataclasses.dataclass(frozen=True)
class Assignment:
    """One game to play: a deal set at one table in one rotation."""

    round: int
    """The schedule round, from 1."""
    group: int
    """The table group within the round, from 1."""
    deal_set: int
    """The deal set (the game number of the deals)."""
    rotation: int
    """Which seating of the group (0-3 cyclic, 0-23 full)."""
    seats: tuple[str, str, str, str]
    """The bot in each seat."""
    first_dealer: int
    """The seat that deals the first round."""

    @property
    def block(self) -> str:
        """The id of the block: one deal set in all its rotations at one table."""
        return block_id(self.round, self.group, self.deal_set)

    @property
    def id(self) -> str:
        """The stable id of this game."""
        return f"{self.block}-p{self.rotation}"


@dataclasses.dataclass(frozen=True)
class Block:
    """One deal set played in all its rotations by one group of four bots."""

    round: int
    group: int
    deal_set: int
    order: tuple[str, str, str, str]
    """The bots round the table in the first rotation (seat 0 to 3)."""
    first_dealer: int

    @property
    def id(self) -> str:
        """The stable id of the block."""
        return block_id(self.round, self.group, self.deal_set)

    @property
    def bots(self) -> frozenset[str]:
        return frozenset(self.order)

    def games(self, rotation_kind: str) -> list[Assignment]:
        """The games of the block, one per seating."""
        return [Assignment(self.round, self.group, self.deal_set, rotation, seats, self.first_dealer)
                for rotation, seats in enumerate(seatings(self.order, rotation_kind))]

    def to_list(self) -> list[object]:
        """The compact form the manifest stores."""
        return [self.round, self.group, self.deal_set, list(self.order), self.first_dealer]

    @classmethod
    def from_list(cls, item: object) -> Block:
        """Reads :meth:`to_list`; raises ``ValueError`` on anything else."""
        if not isinstance(item, list) or len(item) != 5 or not isinstance(item[3], list) or len(item[3]) != 4:
            raise ValueError(f"not a block: {item!r}")
        r, g, d, order, dealer = item
        if not all(isinstance(v, int) for v in (r, g, d, dealer)) or not all(isinstance(b, str) for b in order):
            raise ValueError(f"not a block: {item!r}")
        return cls(r, g, d, (order[0], order[1], order[2], order[3]), dealer)


class Lineup(NamedTuple):
    """A block before its seats are drawn: which four bots play which deal set, in the design's order."""

    round: int
    group: int
    deal_set: int
    members: tuple[str, ...]
    """The four bots in the order the design lists them (the seat order is drawn from it)."""

    @property
    def id(self) -> str:
        """The stable id of the block."""
        return block_id(self.round, self.group, self.deal_set)

    @property
    def bots(self) -> frozenset[str]:
        return frozenset(self.members)


def colex(items: Sequence[str], k: int) -> list[tuple[str, ...]]:
    """The k-subsets of ``items`` (each in the items' order), in colexicographic order: every
    subset of the first n items comes before any subset holding item n+1."""
    combos = itertools.combinations(range(len(items)), k)
    return [tuple(items[i] for i in c) for c in sorted(combos, key=lambda c: c[::-1])]


def seatings(order: Sequence[str], rotation_kind: str) -> list[tuple[str, str, str, str]]:
    """The seatings of a group: cyclic rotations, all 24 permutations, or (``once``) the one seating."""
    if rotation_kind == Rotation.ONCE:
        return [(order[0], order[1], order[2], order[3])]
    if rotation_kind == "cyclic":
        return [(order[(0 - r) % 4], order[(1 - r) % 4], order[(2 - r) % 4], order[(3 - r) % 4]) for r in range(4)]
    return [(order[p[0]], order[p[1]], order[p[2]], order[p[3]]) for p in itertools.permutations(range(4))]


class PlayOrder(NamedTuple):
    """When a block's games are played: its place among the blocks of its round, and its rotations in turn."""

    draw: int
    """The block's draw: the blocks of a round are played in the order of their draws (then of their groups)."""
    rotations: tuple[int, ...]
    """The block's rotation numbers in the order they are played."""

    def turn(self, rotation: int) -> int:
        """The place of ``rotation`` among the block's games, from 0 (the first played)."""
        return self.rotations.index(rotation)


def play_order(seed: int, round_number: int, deal_set: int, bots: Iterable[str], rotations: int) -> PlayOrder:
    """The order in which a block's games are played, drawn from the seed, the round, the deal set and the four
    bots (not the group's number, so a block keeps its order when the field around it changes).

    Each bot's games on a deal set are played one after another in this order (the dispatcher holds a game back
    while an earlier one of the same bot on the same deal set is not recorded), so the first of them is a game
    in which the bot had not been dealt the deal set before, and it is a random one of its games on it."""
    rng = random.Random(f"callbreak-arena/play-order/v1/{seed}/{round_number}/{deal_set}/{'|'.join(sorted(bots))}")
    draw = rng.getrandbits(64)
    order = list(range(rotations))
    rng.shuffle(order)
    return PlayOrder(draw, tuple(order))


def affine_plane_16() -> list[list[tuple[int, int, int, int]]]:
    """The 5 parallel classes of AG(2,4): 16 points in tables of 4, every pair together exactly once."""
    # GF(4) = {0, 1, a, a+1} as 0..3 with XOR addition and this multiplication table.
    mul = [[0, 0, 0, 0], [0, 1, 2, 3], [0, 2, 3, 1], [0, 3, 1, 2]]
    points = [(x, y) for x in range(4) for y in range(4)]
    classes: list[list[tuple[int, int, int, int]]] = []
    for m in range(4):  # lines y = m x + c
        lines = []
        for c in range(4):
            line = [4 * x + (mul[m][x] ^ c) for x in range(4)]
            lines.append((line[0], line[1], line[2], line[3]))
        classes.append(lines)
    classes.append([(4 * x, 4 * x + 1, 4 * x + 2, 4 * x + 3) for x in range(4)])  # lines x = c
    assert len(points) == 16
    return classes


def once_seat(seed: int, round_number: int) -> int:
    """The seat in which every bot holds the deal set of round ``round_number`` under ``rotation = "once"``: each run
    of four rounds (1-4, 5-8, ...) takes the four seats once each, in an order drawn from the seed."""
    cycle, place = divmod(round_number - 1, 4)
    seats = [0, 1, 2, 3]
    random.Random(f"{seed}/once/{cycle}").shuffle(seats)
    return seats[place]


def once_order(bot: str, seat: int) -> list[str]:
    """A bot's game under ``rotation = "once"``: the bot in ``seat``, the house trio in the other seats, in turn."""
    trio = iter(HOUSE_TRIO)
    return [bot if number == seat else next(trio) for number in range(4)]


def once_groups(bots: Sequence[str]) -> list[tuple[str, ...]]:
    """The blocks of a round under ``rotation = "once"``: each bot (in the field's order) with the house trio."""
    return [(bot, *HOUSE_TRIO) for bot in bots]


BALANCE_TRIES = 32
"""Greedy partitions tried per round; the one that keeps pair meetings most even is kept."""


def balanced_partition(
    bots: Sequence[str], meetings: dict[frozenset[str], int], rng: random.Random, tries: int = BALANCE_TRIES
) -> list[tuple[str, ...]]:
    """Tables of four for one round, keeping pair meeting counts even (``meetings`` is updated).

    Each try seats the bots greedily from a seeded shuffle, each table taking the bots that have
    met its members least; the try with the smallest sum of squared meeting counts wins.
    """
    best: tuple[int, list[tuple[str, ...]]] | None = None
    for _ in range(tries):
        left = list(bots)
        rng.shuffle(left)
        tables: list[tuple[str, ...]] = []
        while left:
            table = [left.pop(0)]
            while len(table) < 4:
                pick = min(
                    range(len(left)),
                    key=lambda i: (sum(meetings.get(frozenset((left[i], t)), 0) ** 2 for t in table), i),
                )
                table.append(left.pop(pick))
            tables.append(tuple(table))
        cost = sum(
            (meetings.get(frozenset(pair), 0) + 1) ** 2
            for seated in tables for pair in itertools.combinations(seated, 2)
        )
        if best is None or cost < best[0]:
            best = (cost, tables)
    assert best is not None
    for seated in best[1]:
        for a, b in itertools.combinations(seated, 2):
            meetings[frozenset((a, b))] = meetings.get(frozenset((a, b)), 0) + 1
    return best[1]


def _unused(stem: str, number: int, taken: Sequence[str]) -> str:
    """``stem`` and the first number from ``number`` on that names no bot in ``taken``."""
    # A bot of the configuration may already be called "house-1" or "v2#2".
    while f"{stem}{number}" in taken:
        number += 1
    return f"{stem}{number}"


class Schedule:
    """The games of a tournament, in order, with stable ids."""

    def __init__(
        self, *, bots: Sequence[str], format: str, rotation: str, deal_sets: Sequence[int], seed: int,
        options: FormatOptions | None = None, draw_seats: bool = False, standings: Standings | None = None,
    ) -> None:
        self.bots = list(bots)
        self.format = Format(format)
        self.rotation = rotation
        self.deal_sets = deal_sets if isinstance(deal_sets, range) else list(deal_sets)
        """The deal set of each round (a ``range`` stays one: a million rounds cost nothing to hold)."""
        self.seed = seed
        self.options: FormatOptions = options or RoundRobinOptions()
        self.draw_seats = draw_seats
        self.standings = standings
        self.house: list[str] = []
        """Unranked filler bots added to the field."""
        self._pad()
        self.copies: dict[str, str] = {}
        """Second copies of A and B (head-to-head without a pool): copy name -> bot."""
        if self.format.compares_two and not self._pair().opponents and self.rotation != Rotation.ONCE:
            for original in (self._pair().a, self._pair().b):
                self.copies[_unused(f"{original}#", 2, [*self.bots, *self.copies])] = original
        self._meetings: dict[frozenset[str], int] = {}
        self._planned: dict[int, list[tuple[str, ...]]] = {}
        """The groups of each round asked so far, in the designs where a round depends on those before it."""
        self._every_round: list[tuple[str, ...]] | None = None
        """The groups of every round, in the designs where they are the same each round."""

    def _pair(self) -> HeadToHeadOptions:
        """The options of a head-to-head or a sequential test."""
        assert isinstance(self.options, HeadToHeadOptions), self.options
        return self.options

    def _opening(self, round_number: int) -> bool:
        """True for a round drawn as in a round-robin: every round of one, a swiss's opening rounds."""
        if isinstance(self.options, SwissOptions):
            return round_number <= self.options.opening_rounds
        return self.format == Format.ROUND_ROBIN

    def _pad(self) -> None:
        """Pads a partitioned field with house bots to a multiple of four (reusing earlier ones); under
        ``rotation = "once"`` the house bots are the trio every bot meets, and the field needs no padding."""
        if self.rotation == Rotation.ONCE:
            self.house = list(HOUSE_TRIO)
            return
        if (self.format in (Format.ROUND_ROBIN, Format.SWISS) and len(self.bots) > 8) or self.format == Format.SWISS:
            spare = list(self.house)
            while len(self.bots) % 4:
                name = spare.pop(0) if spare else _unused("house-", len(self.house) + 1, self.bots)
                if name not in self.house:
                    self.house.append(name)
                self.bots.append(name)

    def set_field(self, bots: Sequence[str]) -> None:
        """Plans the rounds to come for these bots (a swiss field a bot has left), padded anew."""
        self.bots = list(bots)
        self._every_round = None
        self._pad()

    @property
    def rotations(self) -> int:
        """Games per block."""
        return Rotation(self.rotation).seatings

    @property
    def complete(self) -> bool:
        """True when every round holds every group of the design (round robin up to 8 bots,
        gauntlet, head-to-head); false for partitions of the field (above 8 bots, swiss)."""
        return self.format == Format.GAUNTLET or self.format.compares_two or (
            self.format == Format.ROUND_ROBIN and (len(self.bots) <= 8 or self.rotation == Rotation.ONCE)
        )

    @property
    def adaptive(self) -> bool:
        """True when later rounds depend on results (swiss)."""
        return self.format == Format.SWISS

    @property
    def sequential(self) -> bool:
        """True when the run may stop before the last round (an SPRT that has decided)."""
        return self.format == Format.SPRT

    def groups(self, round_number: int) -> list[tuple[str, ...]]:
        """The tables of a schedule round (rounds must be asked in order for adaptive formats)."""
        if round_number in self._planned:
            return self._planned[round_number]
        if self.rotation == Rotation.ONCE:
            return self._once_groups()
        fmt = self.format
        if fmt in (Format.ROUND_ROBIN, Format.GAUNTLET) and self.complete:
            # The same groups every round: made once, and not kept per round (a plan may have millions).
            if self._every_round is None:
                self._every_round = self._fixed_groups()
            return self._every_round
        rng = random.Random(f"{self.seed}/groups/{round_number}")
        if fmt in (Format.ROUND_ROBIN, Format.SWISS) and len(self.bots) == 16 and self._opening(round_number):
            plane = affine_plane_16()[(round_number - 1) % 5]
            return [tuple(self.bots[i] for i in line) for line in plane]
        if fmt.compares_two:  # A and B opposite each other
            a, b, pool = self._pair().a, self._pair().b, list(self._pair().opponents)
            o1, o2 = rng.sample(pool, 2) if pool else tuple(self.copies)
            return [(a, o1, b, o2)]
        # The rounds below depend on the rounds before them: each is made once, in order, and kept.
        if self._opening(round_number):
            groups = balanced_partition(self.bots, self._meetings, rng)
        else:  # swiss, after its opening rounds
            scores = self.standings() if self.standings else {}
            ranked = sorted(self.bots, key=lambda b: (-scores.get(b, 0.0), self.bots.index(b)))
            groups = [tuple(ranked[i: i + 4]) for i in range(0, len(ranked), 4)]
        self._planned[round_number] = groups
        return groups

    def _once_groups(self) -> list[tuple[str, ...]]:
        """Every round's blocks under ``rotation = "once"``: A's and B's under head-to-head and sprt, else each
        bot's."""
        if self._every_round is None:
            pair = self._pair() if self.format.compares_two else None
            self._every_round = once_groups([pair.a, pair.b] if pair is not None else self.bots)
        return self._every_round

    def _fixed_groups(self) -> list[tuple[str, ...]]:
        if self.format == Format.ROUND_ROBIN:
            return colex(self.bots, 4)
        assert isinstance(self.options, GauntletOptions), self.options
        champion = self.options.champion
        return [(champion, *trio) for trio in colex([b for b in self.bots if b != champion], 3)]

    def _order(self, group: Sequence[str], round_number: int, group_number: int, deal_set: int) -> tuple[
        list[str], int
    ]:
        if self.rotation == Rotation.ONCE:  # the same seats at every bot's table of the round
            group = once_order(group[0], once_seat(self.seed, round_number))
        if self.draw_seats:
            seating, first_dealer = draw_seating(self.seed, deal_set)
            return [group[seating[i]] for i in range(4)], first_dealer
        if self.rotation == Rotation.ONCE:
            return list(group), 3
        order = list(group)
        if not self.format.compares_two:
            # Vary which bot sits on whose left from block to block (cyclic rotations keep it fixed).
            # Keyed by the four bots, not the group's number, so a block never changes when the
            # field around it does.
            random.Random(f"{self.seed}/order/{round_number}/{'|'.join(sorted(group))}").shuffle(order)
        return order, 3

    def block(self, round_number: int, group_number: int, group: Sequence[str]) -> Block:
        """The block of ``group`` in a round: its deal set, seat order and first dealer."""
        deal_set = self.deal_sets[round_number - 1]
        order, first_dealer = self._order(group, round_number, group_number, deal_set)
        return Block(round_number, group_number, deal_set, (order[0], order[1], order[2], order[3]), first_dealer)

    def round_blocks(self, round_number: int) -> list[Block]:
        """The blocks of one schedule round, as a fresh plan makes them."""
        return [self.seat(lineup) for lineup in self.round_lineups(round_number)]

    def round_lineups(self, round_number: int) -> list[Lineup]:
        """The blocks of one schedule round before their seats are drawn (cheap: no shuffle)."""
        deal_set = self.deal_sets[round_number - 1]
        return [Lineup(round_number, number, deal_set, group)
                for number, group in enumerate(self.groups(round_number), start=1)]

    def seat(self, lineup: Lineup | Block) -> Block:
        """The block of a lineup: its seat order and first dealer drawn from the seed (a block is
        returned as it is)."""
        if isinstance(lineup, Block):
            return lineup
        order, first_dealer = self._order(lineup.members, lineup.round, lineup.group, lineup.deal_set)
        return Block(lineup.round, lineup.group, lineup.deal_set, (order[0], order[1], order[2], order[3]),
                     first_dealer)

    def meet(self, groups: Sequence[Sequence[str]]) -> None:
        """Counts the meetings of groups played in a round planned earlier (kept as it was), so the
        partitions of later rounds balance against them."""
        for seated in groups:
            for a, b in itertools.combinations(seated, 2):
                self._meetings[frozenset((a, b))] = self._meetings.get(frozenset((a, b)), 0) + 1

    def round_assignments(self, round_number: int) -> list[Assignment]:
        """The games of one schedule round, in order."""
        return [game for block in self.round_blocks(round_number) for game in block.games(self.rotation)]

    def __iter__(self) -> Iterator[Assignment]:
        for round_number in range(1, len(self.deal_sets) + 1):
            yield from self.round_assignments(round_number)

    @property
    def rounds(self) -> int:
        """Schedule rounds (one deal set each)."""
        return len(self.deal_sets)

    def total(self) -> int:
        """Games in the whole schedule (for progress bars)."""
        if self.rotation == Rotation.ONCE:
            per_round = len(self._once_groups())
        elif self.format == Format.ROUND_ROBIN and len(self.bots) <= 8:
            per_round = len(list(itertools.combinations(self.bots, 4)))
        elif self.format == Format.GAUNTLET:
            per_round = len(list(itertools.combinations(range(len(self.bots) - 1), 3)))
        elif self.format.compares_two:
            per_round = 1
        else:
            per_round = len(self.bots) // 4
        return per_round * self.rotations * self.rounds
