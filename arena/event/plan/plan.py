"""The plan of a tournament: which blocks are to be played, and how a plan changes between runs on
the same results folder.

A plan is the blocks of every round, in order (:class:`~arena.event.plan.schedule.Block`), and the blocks
dropped from it. The manifest (``manifest.json``) does not list them: it stores the plan's
*design* (format, seed, deal sets, options, the field), from which :class:`Plan` makes the rounds
again as they are needed, with only what departs from the design written out:

- ``cuts``: a bot taken out of the tournament, and the round from which its blocks are dropped;
- ``listed``: rounds kept whole because they are not what the design and the cuts make (swiss
  rounds, which follow the standings; rounds kept from an earlier field; rounds where some of a
  withdrawn bot's blocks were played and some not).

It also stores the plan's size and its SHA-256 (:meth:`Plan.fingerprint`), so that a run or an
audit that makes the plan again can check it is the plan the folder was played to. A million deal
sets of a round robin make a manifest of a few kilobytes, planned in seconds.

A run on a folder that already holds records re-plans:

- the *identity* of the configuration (seed, deals, rules, format, rotation, time and fault
  settings) must be unchanged, or the folder is refused: its records would mean something else;
- a bot whose definition changed (command, class, options, seed) is refused too: give a new
  version a new name;
- everything else may change, and the plan follows: more or fewer deal sets (never fewer than the
  rounds already played), late entrants, bots removed from the configuration (withdrawn), and
  operational settings (concurrency, workers, server, absence policy).

Every recorded block whose bots, rules and deals are unchanged stays valid. In designs where every
round holds every group (round robin up to 8 bots, gauntlet, head-to-head), a late entrant's
groups are added to every round, played or not. In partitioned designs (more than 8 bots, swiss)
a round with recorded games keeps its tables, and rounds not yet played are planned afresh for the
new field. Unplayed blocks of a bot that no longer plays are dropped whole; its played blocks stay.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

from arena.errors import RecordsError
from arena.event.plan.schedule import Assignment, Block, Lineup, Schedule
from arena.event.setup.formats import schedule_options
from arena.event.setup.kinds import Rotation

__all__ = ["Design", "Entry", "Plan", "PlanBuilder", "PlanRound"]

Entry = Lineup | Block
"""A block of a plan: a :class:`Lineup` made by the design (its seats drawn when needed) or a
:class:`Block` as stored."""


def _runs(numbers: Sequence[int]) -> list[list[int]]:
    """Consecutive numbers as ``[first, last]`` runs: ``[1, 2, 3, 7] -> [[1, 3], [7, 7]]``."""
    if isinstance(numbers, range) and numbers.step == 1:
        return [[numbers.start, numbers.stop - 1]] if len(numbers) else []
    out: list[list[int]] = []
    for n in numbers:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


def _numbers(runs: Sequence[Sequence[int]]) -> Sequence[int]:
    """The inverse of :func:`_runs` (one run stays a ``range``)."""
    if len(runs) == 1:
        return range(int(runs[0][0]), int(runs[0][1]) + 1)
    return [n for first, last in runs for n in range(int(first), int(last) + 1)]


@dataclasses.dataclass(frozen=True)
class Design:
    """What makes a plan's rounds: the parameters of its :class:`~arena.event.plan.schedule.Schedule`
    (the field is the plan's own)."""

    format: str
    seed: int
    deal_sets: Sequence[int]
    """The deal set of each round."""
    options: Mapping[str, Any]
    draw_seats: bool

    def schedule(self, field: Sequence[str], rotation: str) -> Schedule:
        """A fresh schedule of this design: its rounds, asked in order, are the design's."""
        return Schedule(bots=field, format=self.format, rotation=rotation, deal_sets=self.deal_sets, seed=self.seed,
                        options=schedule_options(self.format, self.options), draw_seats=self.draw_seats)

    def steady(self, field: Sequence[str]) -> bool:
        """True when every round holds the same groups (round robin up to 8 bots, gauntlet): a round
        is then made without the rounds before it, and runs of rounds are written down at once."""
        return self.format == "gauntlet" or (self.format == "round-robin" and len(field) <= 8)

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format, "seed": self.seed, "deal_sets": _runs(self.deal_sets),
                "options": dict(self.options), "draw_seats": self.draw_seats}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Design:
        return cls(format=str(data["format"]), seed=int(data["seed"]), deal_sets=_numbers(data["deal_sets"]),
                   options=dict(data["options"]), draw_seats=bool(data["draw_seats"]))


@dataclasses.dataclass(frozen=True)
class PlanRound:
    """One round of a plan: its blocks in plan order, and the blocks dropped from it."""

    number: int
    blocks: Sequence[Entry]
    dropped: Sequence[Entry] = ()


def _key(entry: Entry) -> tuple[int, int, tuple[str, ...]]:
    return entry.group, entry.deal_set, tuple(sorted(entry.bots))


def _normal(dropped: Iterable[Entry]) -> list[Entry]:
    """Dropped blocks in a canonical order (group, deal set, bots), each once."""
    seen: dict[tuple[int, int, tuple[str, ...]], Entry] = {}
    for entry in dropped:
        seen.setdefault(_key(entry), entry)
    return [seen[key] for key in sorted(seen)]


def _lines(number: int, blocks: Iterable[Entry], dropped: Iterable[Entry]) -> str:
    """A round as the text the plan's SHA-256 is taken over (the same whether its blocks were made by
    the design or stored): a line per block, ``+`` kept or ``-`` dropped, then round, group, deal set
    and the bots in sorted order."""
    return "".join(
        [f"+ {number} {e.group} {e.deal_set} {','.join(sorted(e.bots))}\n" for e in blocks]
        + [f"- {number} {e.group} {e.deal_set} {','.join(sorted(e.bots))}\n" for e in dropped])


class Plan:
    """The blocks to play, round by round, and the blocks dropped from it: made from a
    :class:`Design` with the rounds that depart from it stored whole, or (``design`` ``None``)
    every round stored.

    ``Plan(rotation, rounds, adaptive, sequential, blocks, field, dropped)`` is a plan whose blocks
    are all listed (as format 2 of the manifest stored them).
    """

    def __init__(
        self, rotation: str, rounds: int, adaptive: bool, sequential: bool, blocks: Iterable[Block] = (),
        field: Sequence[str] = (), dropped: Iterable[Block] = (), *, design: Design | None = None,
        cuts: Mapping[str, int] | None = None, listed: Mapping[int, PlanRound] | None = None,
        size: tuple[int, int] | None = None, sha256: str | None = None,
    ) -> None:
        self.rotation = rotation
        self.rounds = rounds
        self.adaptive = adaptive
        self.sequential = sequential
        self.field = list(field)
        """The bots the plan was made for, house bots included (a changed field re-plans unplayed rounds)."""
        self.design = design
        self.cuts: dict[str, int] = dict(cuts or {})
        """Bot -> the first round from which the design's blocks with that bot are dropped."""
        self.listed: dict[int, PlanRound] = dict(listed or {})
        """The rounds stored whole, by number."""
        kept: dict[int, list[Entry]] = {}
        gone: dict[int, list[Entry]] = {}
        for block in blocks:
            kept.setdefault(block.round, []).append(block)
        for block in dropped:
            gone.setdefault(block.round, []).append(block)
        for number in sorted(set(kept) | set(gone)):
            self.listed[number] = PlanRound(number, kept.get(number, []), _normal(gone.get(number, [])))
        self._seater: Schedule | None = None
        if size is None or sha256 is None:
            sha256, blocks_count, dropped_count = self.fingerprint()
            size = (blocks_count, dropped_count)
        self.block_count, self.dropped_count = size
        self.sha256: str = sha256
        """SHA-256 of the plan (:meth:`fingerprint`) as it was written down (a plan listed in a manifest of
        format 2, which had none, is taken as it reads)."""

    @property
    def rotations(self) -> int:
        """Games per block."""
        return Rotation(self.rotation).seatings

    @property
    def game_count(self) -> int:
        """Games in the plan."""
        return self.block_count * self.rotations

    # -- reading -------------------------------------------------------------------------------------

    def walk(self) -> Iterator[PlanRound]:
        """Every round, in order (made as it is reached: a million rounds hold no more memory than one).

        The stored rounds and cuts are read as each round is reached, so a walk under way follows a
        bot taken out meanwhile (:meth:`take_out`)."""
        design = self.design
        schedule = design.schedule(self.field, self.rotation) if design is not None else None
        for number in range(1, self.rounds + 1):
            made = schedule.round_lineups(number) if schedule is not None else []  # in order, always
            listed = self.listed.get(number)
            if listed is not None:
                yield listed
            elif self.cuts:
                yield _cut(number, made, self.cuts)
            else:
                yield PlanRound(number, made)

    @property
    def steady(self) -> bool:
        """True when the plan is made by a design whose rounds each hold the same groups
        (:meth:`Design.steady`): any round can then be made on its own (:meth:`round_at`)."""
        return self.design is not None and self.design.steady(self.field)

    def round_at(self, number: int) -> PlanRound:
        """Round ``number`` of a :attr:`steady` plan, made on its own."""
        listed = self.listed.get(number)
        if listed is not None:
            return listed
        if self.design is None or number > self.rounds:
            return PlanRound(number, [])
        assert self.steady, "only a steady design makes a round without the rounds before it"
        made = self._schedule().round_lineups(number)
        return _cut(number, made, self.cuts) if self.cuts else PlanRound(number, made)

    def _schedule(self) -> Schedule:
        if self._seater is None:
            assert self.design is not None  # only a design makes lineups
            self._seater = self.design.schedule(self.field, self.rotation)
        return self._seater

    def seat(self, entry: Entry) -> Block:
        """The block of an entry, its seats drawn."""
        if isinstance(entry, Block):
            return entry
        return self._schedule().seat(entry)

    def blocks(self) -> Iterator[Block]:
        """Every planned block, in plan order, its seats drawn."""
        for rnd in self.walk():
            for entry in rnd.blocks:
                yield self.seat(entry)

    def dropped(self) -> Iterator[Entry]:
        """Every block dropped from the plan."""
        for rnd in self.walk():
            yield from rnd.dropped

    def games(self) -> Iterator[Assignment]:
        """Every planned game, block by block."""
        for block in self.blocks():
            yield from block.games(self.rotation)

    def fingerprint(self) -> tuple[str, int, int]:
        """The plan's SHA-256 (of :func:`_lines` for every round in order), blocks and dropped blocks."""
        digest_ = hashlib.sha256()
        blocks = dropped = 0
        design = self.design
        if design is not None and design.steady(self.field):
            # Runs of rounds the design makes are written down at once, between the rounds stored whole.
            number = 1
            for listed in [*sorted(self.listed), self.rounds + 1]:
                if listed > number:
                    kept, gone = self.add_steady(digest_, number, listed - 1)
                    blocks, dropped = blocks + kept, dropped + gone
                if listed <= self.rounds:
                    rnd = self.listed[listed]
                    digest_.update(_lines(listed, rnd.blocks, rnd.dropped).encode())
                    blocks, dropped = blocks + len(rnd.blocks), dropped + len(rnd.dropped)
                number = listed + 1
            return digest_.hexdigest(), blocks, dropped
        for rnd in self.walk():
            if rnd.blocks or rnd.dropped:
                digest_.update(_lines(rnd.number, rnd.blocks, rnd.dropped).encode())
                blocks += len(rnd.blocks)
                dropped += len(rnd.dropped)
        return digest_.hexdigest(), blocks, dropped

    def add_steady(self, digest_: Any, first: int, last: int) -> tuple[int, int]:
        """Adds the text of rounds ``first`` to ``last`` as the (steady) design and the cuts make them
        to ``digest_``, without making a lineup; returns the blocks and dropped blocks they hold."""
        design = self.design
        assert design is not None
        groups = design.schedule(self.field, self.rotation).groups(first)
        names = [",".join(sorted(g)) for g in groups]
        deal_sets = design.deal_sets
        bounds = sorted({first, last + 1, *(c for c in self.cuts.values() if first < c <= last)})
        blocks = dropped = 0
        for start, end in itertools.pairwise(bounds):  # the same cuts apply throughout
            gone = {bot for bot, cut in self.cuts.items() if cut <= start}
            kept = [(g, names[g - 1]) for g, group in enumerate(groups, 1) if not gone & set(group)]
            cut = [(g, names[g - 1]) for g, group in enumerate(groups, 1) if gone & set(group)]
            # One round's text, its round and deal set left to fill in (names never hold a "%").
            lines = [f"+ %(r)d {g} %(d)d {n}\n" for g, n in kept] + [f"- %(r)d {g} %(d)d {n}\n" for g, n in cut]
            template = "".join(lines) if len(lines) > 1 else lines[0].replace("%(r)d", "%d").replace("%(d)d", "%d")
            for chunk in range(start, end, 4096):
                numbers = range(chunk, min(end, chunk + 4096))
                if len(lines) > 1:
                    text = "".join([template % {"r": r, "d": deal_sets[r - 1]} for r in numbers])
                else:
                    text = "".join([template % (r, deal_sets[r - 1]) for r in numbers])
                digest_.update(text.encode())
            blocks += len(kept) * (end - start)
            dropped += len(cut) * (end - start)
        return blocks, dropped

    def verify(self, where: str = "manifest.json") -> None:
        """Makes the plan again and checks it against its stored SHA-256 and size."""
        sha, blocks, dropped = self.fingerprint()
        if (sha, blocks, dropped) != (self.sha256, self.block_count, self.dropped_count):
            raise RecordsError(_not_rebuilt(where, self.sha256, sha))

    # -- changing ------------------------------------------------------------------------------------

    def put_round(self, number: int, blocks: Sequence[Entry], dropped: Sequence[Entry]) -> None:
        """Stores a round planned during the run (a swiss round), its seats drawn."""
        self.listed[number] = PlanRound(number, [self.seat(b) for b in blocks], _normal(self.seat(b) for b in dropped))
        self._reseal()

    def take_out(self, bot: str, released: int, dropped_now: Sequence[Entry], played: Collection[str]) -> int:
        """Drops the blocks of ``bot`` not begun: in the rounds up to ``released`` (those the run has
        begun to play), the blocks ``dropped_now``; in later rounds, every block not ``played`` (ids).
        The bot is cut from the round after the last in which it keeps a block, as a run that opens the
        folder would cut it, so that the same plan is always written the same way. Returns how many
        blocks were dropped."""
        gone = {b.id for b in dropped_now}

        def split(rnd: PlanRound) -> tuple[list[Entry], list[Entry]]:
            keep: list[Entry] = []
            drop = list(rnd.dropped)
            for entry in rnd.blocks:
                if bot in entry.bots and (entry.id in gone if rnd.number <= released else entry.id not in played):
                    drop.append(entry)
                else:
                    keep.append(entry)
            return keep, drop

        def keeps(rnd: PlanRound) -> bool:
            return any(bot in e.bots for e in split(rnd)[0])

        design = self.design
        cuts = self.cuts
        if self.steady:
            # Only the rounds stored whole, those of the blocks dropped now and those where the bot has
            # blocks played beyond the rounds released can depart from the design with the new cut.
            groups = {g for g, members in enumerate(self._schedule().groups(1), start=1) if bot in members}
            later = [r for r, g in map(_round_and_group, played) if r > released and g in groups]
            slow = set(self.listed) | {b.round for b in dropped_now}
            if later:
                last = max(later)
                slow |= set(range(released + 1, last + 1))
            else:
                last = next((r for r in range(released, 0, -1) if keeps(self.round_at(r))), 0)
            if groups:
                cuts = {**cuts, bot: last + 1}
            builder = PlanBuilder(self.rotation, self.rounds, self.adaptive, self.sequential, self.field, design, cuts)
            number = 1
            for r in sorted(n for n in slow if n <= self.rounds):
                builder.add_steady(number, r - 1)
                builder.add(r, *split(self.round_at(r)))
                number = r + 1
            builder.add_steady(number, self.rounds)
        else:
            if design is not None and bot in self.field:
                last = max((rnd.number for rnd in self.walk() if keeps(rnd)), default=0)
                cuts = {**cuts, bot: last + 1}
            builder = PlanBuilder(self.rotation, self.rounds, self.adaptive, self.sequential, self.field, design,
                                  cuts)
            for rnd in self.walk():
                builder.add(rnd.number, *split(rnd))
        before = self.dropped_count
        self._adopt(builder.plan())
        return self.dropped_count - before

    def _adopt(self, other: Plan) -> None:
        self.cuts, self.listed = other.cuts, other.listed
        self.block_count, self.dropped_count, self.sha256 = other.block_count, other.dropped_count, other.sha256

    def _reseal(self) -> None:
        self.sha256, self.block_count, self.dropped_count = self.fingerprint()

    # -- the manifest's form -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "rotation": self.rotation, "rounds": self.rounds, "adaptive": self.adaptive,
            "sequential": self.sequential, "field": self.field,
            "design": self.design.to_dict() if self.design is not None else None,
            "cuts": dict(sorted(self.cuts.items())),
            "listed": [self._listed_form(self.listed[n]) for n in sorted(self.listed)],
            "block_count": self.block_count, "dropped_count": self.dropped_count, "sha256": self.sha256,
        }

    def _listed_form(self, rnd: PlanRound) -> list[Any]:
        return [rnd.number, [self.seat(b).to_list() for b in rnd.blocks], [self.seat(b).to_list() for b in rnd.dropped]]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
        """Reads :meth:`to_dict` (cheap: nothing is made until the plan is walked)."""
        design = Design.from_dict(data["design"]) if data["design"] is not None else None
        listed = {}
        for number, blocks, dropped in data["listed"]:
            listed[int(number)] = PlanRound(int(number), [Block.from_list(b) for b in blocks],
                                            [Block.from_list(b) for b in dropped])
        return cls(
            rotation=str(data["rotation"]), rounds=int(data["rounds"]), adaptive=bool(data["adaptive"]),
            sequential=bool(data["sequential"]), field=[str(b) for b in data["field"]], design=design,
            cuts={str(b): int(r) for b, r in data["cuts"].items()}, listed=listed,
            size=(int(data["block_count"]), int(data["dropped_count"])), sha256=str(data["sha256"]),
        )

    @classmethod
    def from_listing(cls, data: Mapping[str, Any]) -> Plan:
        """Reads the plan of a manifest of format 2, which listed every block."""
        return cls(
            rotation=str(data["rotation"]), rounds=int(data["rounds"]), adaptive=bool(data["adaptive"]),
            sequential=bool(data["sequential"]), blocks=[Block.from_list(b) for b in data["blocks"]],
            field=[str(b) for b in data["field"]], dropped=[Block.from_list(b) for b in data.get("dropped", [])],
        )


def _round_and_group(block_id: str) -> tuple[int, int]:
    """``(round, group)`` of a block id ``r<round>-g<group>-d<deal set>``."""
    r, g, _ = block_id.split("-")
    return int(r[1:]), int(g[1:])


def _cut(number: int, made: Sequence[Lineup], cuts: Mapping[str, int]) -> PlanRound:
    """A round of the design with the blocks of bots cut from this round on dropped."""
    gone = {bot for bot, first in cuts.items() if first <= number}
    if not gone:
        return PlanRound(number, made)
    return PlanRound(number, [e for e in made if not e.bots & gone], [e for e in made if e.bots & gone])


def _not_rebuilt(where: str, stored: str, made: str) -> str:
    return (f"{where} does not make the plan it was written with (its plan's SHA-256 is {stored[:12]}..., this "
            f"version of callbreak-arena makes {made[:12]}... from its design): it was written by a version that "
            "plans differently, or it was changed by hand. Use a new results folder, or --fresh to start again")


class PlanBuilder:
    """Writes a plan down round by round, in order: each round the design (and the cuts) would make
    is left to the design; any other is stored whole. Takes the SHA-256 and the size on the way."""

    def __init__(
        self, rotation: str, rounds: int, adaptive: bool, sequential: bool, field: Sequence[str],
        design: Design | None, cuts: Mapping[str, int] | None = None,
    ) -> None:
        self._plan = Plan(rotation, rounds, adaptive, sequential, field=field, design=design, cuts=cuts,
                          size=(0, 0), sha256="")
        self._schedule = design.schedule(field, rotation) if design is not None else None
        self._digest = hashlib.sha256()
        self._blocks = 0
        self._dropped = 0
        self._next = 1

    def add(self, number: int, blocks: Sequence[Entry], dropped: Sequence[Entry] = ()) -> None:
        """The next round (rounds must come 1, 2, 3, ...)."""
        assert number == self._next, f"round {number} after {self._next - 1}"
        self._next += 1
        dropped = _normal(dropped)
        plan = self._plan
        if blocks or dropped:
            self._digest.update(_lines(number, blocks, dropped).encode())
            self._blocks += len(blocks)
            self._dropped += len(dropped)
        if self._schedule is None:
            if blocks or dropped:
                plan.listed[number] = PlanRound(number, [plan.seat(b) for b in blocks],
                                                [plan.seat(b) for b in dropped])
            return
        made = _cut(number, self._schedule.round_lineups(number), plan.cuts)
        if not (self._same(made.blocks, blocks) and self._same(made.dropped, dropped)):
            plan.listed[number] = PlanRound(number, [plan.seat(b) for b in blocks], [plan.seat(b) for b in dropped])

    def add_steady(self, first: int, last: int) -> int:
        """Rounds ``first`` to ``last`` (the next ones) as the steady design and the cuts make them,
        written down at once; returns the blocks they hold."""
        assert first == self._next and self._plan.steady
        if last < first:
            return 0
        kept, gone = self._plan.add_steady(self._digest, first, last)
        self._blocks += kept
        self._dropped += gone
        self._next = last + 1
        return kept

    def _same(self, made: Sequence[Entry], given: Sequence[Entry]) -> bool:
        if len(made) != len(given):
            return False
        for a, b in zip(made, given, strict=True):
            if type(a) is type(b):
                if a != b:
                    return False
            elif (a.group, a.deal_set, a.bots) != (b.group, b.deal_set, b.bots) or (
                    self._plan.seat(a) != self._plan.seat(b)):
                return False  # a stored block equals a lineup only when the lineup seats to it
        return True

    @property
    def draft(self) -> Plan:
        """The plan being written down (its rounds, design and cuts; its size and SHA-256 come last)."""
        return self._plan

    def plan(self) -> Plan:
        """The plan written down (every round up to :attr:`Plan.rounds` must have been added)."""
        plan = self._plan
        for number in range(self._next, plan.rounds + 1):
            self.add(number, [], [])
        plan.block_count, plan.dropped_count, plan.sha256 = self._blocks, self._dropped, self._digest.hexdigest()
        return plan
