"""The plan of a tournament and its manifest: which blocks are to be played, and how a plan
changes between runs on the same results folder.

A plan is a list of :class:`~arena.event.schedule.Block` records, round by round. The manifest
(``manifest.json``) stores it with the configuration and the standing of the bots that no longer
play (withdrawn, disqualified). A run on a folder that already holds records re-plans:

- the *identity* of the configuration (seed, deals, rules, format, rotation, time and fault
  settings) must be unchanged, or the folder is refused: its records would mean something else;
- a bot whose definition changed (command, class, options, seed) is refused too: give a new
  version a new name;
- everything else may change, and the plan follows: more or fewer deal sets (never fewer than the
  rounds already played), late entrants, bots removed from the configuration (withdrawn), and
  operational settings (concurrency, server, absence policy).

Every recorded block whose bots, rules and deals are unchanged stays valid. In designs where every
round holds every group (round robin up to 8 bots, gauntlet, head-to-head), a late entrant's
groups are added to every round, played or not. In partitioned designs (more than 8 bots, swiss)
a round with recorded games keeps its tables, and rounds not yet played are planned afresh for the
new field. Unplayed blocks of a bot that no longer plays are dropped whole; its played blocks stay.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arena import __version__
from arena.errors import RecordsError
from arena.event.config import TournamentConfig
from arena.event.schedule import Assignment, Block, Schedule

__all__ = [
    "MANIFEST_VERSION",
    "BotStatus",
    "Manifest",
    "Plan",
    "Planner",
    "change_summary",
    "check_bots",
    "describe_difference",
    "digest",
]

MANIFEST_VERSION = 2
STATUSES = ("withdrawn", "disqualified", "absent")


@dataclasses.dataclass(frozen=True)
class BotStatus:
    """Why a bot does not (or did not always) play: withdrawn, disqualified, or absent when a run stopped."""

    status: str
    reason: str


@dataclasses.dataclass
class Plan:
    """The blocks to play, in order, and the blocks dropped from it."""

    rotation: str
    rounds: int
    adaptive: bool
    sequential: bool
    blocks: list[Block]
    field: list[str]
    """The bots the plan was made for, house bots included (a changed field re-plans unplayed rounds)."""
    dropped: list[Block] = dataclasses.field(default_factory=list)

    @property
    def rotations(self) -> int:
        """Games per block."""
        return 4 if self.rotation == "cyclic" else 24

    def games(self) -> list[Assignment]:
        """Every planned game, block by block."""
        return [game for block in self.blocks for game in block.games(self.rotation)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rotation": self.rotation, "rounds": self.rounds, "adaptive": self.adaptive,
            "sequential": self.sequential, "blocks": [b.to_list() for b in self.blocks], "field": self.field,
            "dropped": [b.to_list() for b in self.dropped],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
        return cls(
            rotation=str(data["rotation"]), rounds=int(data["rounds"]), adaptive=bool(data["adaptive"]),
            sequential=bool(data["sequential"]), blocks=[Block.from_list(b) for b in data["blocks"]],
            field=[str(b) for b in data["field"]], dropped=[Block.from_list(b) for b in data.get("dropped", [])],
        )


@dataclasses.dataclass
class Manifest:
    """What a results folder records about its tournament (``manifest.json``)."""

    tournament: str
    config: dict[str, Any]
    """The configuration's canonical form (tokens left out)."""
    identity: str
    """SHA-256 of the configuration's identity (:meth:`TournamentConfig.identity`)."""
    plan: Plan
    house: list[str]
    """Unranked filler bots."""
    statuses: dict[str, BotStatus] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": MANIFEST_VERSION, "arena_version": __version__, "tournament": self.tournament,
            "config": self.config, "identity": self.identity, "plan": self.plan.to_dict(), "house_bots": self.house,
            "statuses": {bot: {"status": s.status, "reason": s.reason} for bot, s in sorted(self.statuses.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "manifest.json") -> Manifest:
        """Reads :meth:`to_dict`; a manifest of another format version or a damaged one is refused."""
        version = data.get("format_version")
        if version != MANIFEST_VERSION:
            raise RecordsError(
                f"{where} is of format version {version}, written by an earlier version of callbreak-arena; this "
                f"version reads format {MANIFEST_VERSION}: use a new results folder, or --fresh to start this one again"
            )
        try:
            statuses = {bot: BotStatus(str(s["status"]), str(s["reason"])) for bot, s in data["statuses"].items()}
            return cls(
                tournament=str(data["tournament"]), config=dict(data["config"]), identity=str(data["identity"]),
                plan=Plan.from_dict(data["plan"]), house=[str(h) for h in data["house_bots"]], statuses=statuses,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise RecordsError(f"{where} is damaged: {err!r}") from None


def describe_difference(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> str:
    """The first difference between two configurations, in words."""
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        name = f"{prefix}{key}"
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            return describe_difference(a, b, f"{name}.")
        if a is None:
            return f"{name} is new (now {_words(b)})"
        if b is None:
            return f"{name} was {_words(a)} and is now unset"
        return f"{name} was {_words(a)}, now {_words(b)}"
    return "nothing"


def _words(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_words(v) for v in value) + "]" if value else "empty"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    return json.dumps(value)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class Planner:
    """Plans the rounds of a tournament in order, keeping what an earlier plan fixed.

    ``previous`` is the plan stored by an earlier run (or ``None``), ``played`` the ids of blocks
    with recorded games, ``excluded`` the bots that no longer play. Rounds are planned one at a
    time (:meth:`round`), in order, because partitions balance against the rounds before them and
    swiss rounds follow the standings.
    """

    def __init__(
        self, schedule: Schedule, previous: Plan | None, played: Iterable[str], excluded: Iterable[str],
        field_changed: bool,
    ) -> None:
        self.schedule = schedule
        self.played = set(played)
        self.excluded = set(excluded)
        self.field_changed = field_changed
        self._planned: dict[int, list[Block]] = {}
        """The blocks the previous plan would play, by round."""
        self._known: dict[int, list[Block]] = {}
        """Those and the blocks it had dropped: a block of the same bots keeps its id."""
        for block in previous.blocks if previous else []:
            self._planned.setdefault(block.round, []).append(block)
        for block in (previous.blocks + previous.dropped) if previous else []:
            self._known.setdefault(block.round, []).append(block)
        self.dropped: list[Block] = []
        """Blocks of the previous plan not in this one."""
        self.added: list[Block] = []
        """Blocks of this plan not in the previous one."""

    def round(self, number: int) -> list[Block]:
        """The blocks of round ``number`` (call for 1, 2, ... in order)."""
        planned = sorted(self._planned.get(number, []), key=lambda b: b.group)
        known = sorted(self._known.get(number, []), key=lambda b: b.group)
        schedule = self.schedule
        if schedule.complete:
            blocks = self._complete(number, known)
        elif any(b.id in self.played for b in planned) or (planned and not self.field_changed):
            blocks = planned  # a round once played (or a plan nothing changed) keeps its tables
            schedule.meet([b.order for b in planned])
        else:
            blocks = schedule.round_blocks(number)
        kept = [b for b in blocks if b.id in self.played or not b.bots & self.excluded]
        kept_ids = {b.id for b in kept}
        planned_ids = {b.id for b in planned}
        self.dropped.extend(b for b in planned if b.id not in kept_ids)
        self.added.extend(b for b in kept if b.id not in planned_ids)
        return kept

    def _complete(self, number: int, known: list[Block]) -> list[Block]:
        fresh = self.schedule.round_blocks(number)
        if not known:
            return fresh
        by_bots = {b.bots: b for b in known}
        next_group = max(b.group for b in known) + 1
        out = []
        for block in fresh:
            kept = by_bots.get(block.bots)
            if kept is None:  # a group of a late entrant: numbered after the round's earlier groups
                kept = dataclasses.replace(block, group=next_group)
                next_group += 1
            out.append(kept)
        fresh_bots = {b.bots for b in fresh}
        out.extend(b for b in known if b.id in self.played and b.bots not in fresh_bots)  # played blocks stay
        out.sort(key=lambda b: b.group)
        return out


def check_bots(old: Mapping[str, Any], new: TournamentConfig) -> None:
    """Refuses a configuration in which a bot that has played changed its definition."""
    before = {b["name"]: b for b in old.get("bots", [])}
    for bot in new.bots:
        was = before.get(bot.name)
        if was is not None and "{token}" in was.get("command", []):
            # Recorded before the token left the command line: that change does not change the bot.
            command = list(was["command"])
            at = command.index("{token}")
            del command[at - 1 if at and command[at - 1].startswith("-") else at: at + 1]
            was = {**was, "command": command}
        now = bot.to_dict()
        if was is not None and was != now:
            raise RecordsError(
                f"bot {bot.name!r} is not the bot its recorded games were played by: "
                f"{describe_difference(was, now)}. Give the new version a new name (it joins as a late entrant), "
                "or use --fresh to start the tournament again"
            )


def change_summary(
    old: Manifest, new_config: TournamentConfig, planner: Planner, removed: Sequence[str], rounds: int,
    statuses: Mapping[str, BotStatus],
) -> list[str]:
    """What changed between the stored plan and the new one, one sentence each."""
    lines = []
    old_rounds = old.plan.rounds
    if rounds != old_rounds:
        low, high = sorted((old_rounds, rounds))
        span = f"round {high}" if high == low + 1 else f"rounds {low + 1}-{high}"
        lines.append(f"deal sets: {old_rounds} -> {rounds} ({span} {'added' if rounds > old_rounds else 'removed'})")
    before = {b["name"] for b in old.config.get("bots", [])}
    entrants = [b.name for b in new_config.bots if b.name not in before]
    if entrants:
        lines.append(f"late {'entrants' if len(entrants) > 1 else 'entrant'}: {', '.join(entrants)}")
    for bot in removed:
        if bot in statuses:
            lines.append(f"{bot} is no longer in the configuration: withdrawn (its played blocks stay)")
        else:
            lines.append(f"{bot} is no longer in the configuration (it had played no game)")
    if planner.added:
        lines.append(f"{_plural(len(planner.added), 'new block')} to play")
    if planner.dropped:
        lines.append(f"{_plural(len(planner.dropped), 'unplayed block')} dropped")
    return lines


def digest(data: Mapping[str, Any]) -> str:
    """SHA-256 of a canonical JSON form."""
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

