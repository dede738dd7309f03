"""The manifest of a results folder (``manifest.json``) and what a run that opens the folder again must keep.

The manifest holds the configuration's canonical form and the SHA-256 of its identity, the plan
(:class:`~arena.event.plan.plan.Plan`), the house bots, and why each bot that does not (or did not always)
play is out. A run on a folder that already holds records compares its configuration with the
stored one: a changed identity refuses the folder, as does a bot whose definition changed
(:func:`refuse_drift`); what else changed is told in sentences (:func:`change_summary`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from arena import __version__
from arena.errors import RecordsError
from arena.event.plan.plan import Plan
from arena.event.plan.planner import Planner
from arena.event.plan.status import BotCondition
from arena.event.setup.config import TournamentConfig

__all__ = [
    "MANIFEST_VERSION",
    "PLAY_ORDER",
    "BotStatus",
    "Manifest",
    "change_summary",
    "describe_difference",
    "digest",
    "refuse_drift",
]

MANIFEST_VERSION = 3
"""Format 3 stores the plan's design; format 2 (still read) listed every block."""
LISTED_VERSION = 2
PLAY_ORDER = "drawn"
"""``play_order`` of a manifest whose games were played for each bot in the order drawn from the seed
(:func:`~arena.event.plan.schedule.play_order`), one game of a bot on a deal set after another."""


@dataclasses.dataclass(frozen=True)
class BotStatus:
    """Why a bot does not (or did not always) play: withdrawn, disqualified, or absent when a run stopped."""

    status: BotCondition
    reason: str


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
    play_order: str | None = PLAY_ORDER
    """How the games were ordered for each bot (:data:`PLAY_ORDER`); ``None`` for a folder begun before the order
    of play was drawn, whose memory test cannot say which game came first."""

    def to_dict(self) -> dict[str, Any]:
        out = {
            "format_version": MANIFEST_VERSION, "arena_version": __version__, "tournament": self.tournament,
            "config": self.config, "identity": self.identity, "plan": self.plan.to_dict(), "house_bots": self.house,
            "statuses": {bot: {"status": s.status, "reason": s.reason} for bot, s in sorted(self.statuses.items())},
        }
        if self.play_order is not None:
            out["play_order"] = self.play_order
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "manifest.json") -> Manifest:
        """Reads :meth:`to_dict` (format 3) or a manifest of format 2; any other format, or a damaged
        manifest, is refused. The plan is not made here: :meth:`Plan.verify` checks it."""
        version = data.get("format_version")
        if version not in (LISTED_VERSION, MANIFEST_VERSION):
            raise RecordsError(
                f"{where} is of format version {version}, which this version of callbreak-arena does not read (it "
                f"reads formats {LISTED_VERSION} and {MANIFEST_VERSION}): use a new results folder, or --fresh to "
                "start this one again"
            )
        try:
            statuses = {bot: BotStatus(BotCondition(str(s["status"])), str(s["reason"]))
                        for bot, s in data["statuses"].items()}
            raw = data["plan"]
            plan = Plan.from_listing(raw) if version == LISTED_VERSION else Plan.from_dict(raw)
            return cls(
                tournament=str(data["tournament"]), config=dict(data["config"]), identity=str(data["identity"]),
                plan=plan, house=[str(h) for h in data["house_bots"]], statuses=statuses,
                play_order=str(data["play_order"]) if "play_order" in data else None,
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


def refuse_drift(old: Mapping[str, Any], new: TournamentConfig) -> None:
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
        lines.append(f"{_plural(planner.added, 'new block')} to play")
    if planner.dropped:
        lines.append(f"{_plural(planner.dropped, 'unplayed block')} dropped")
    return lines


def digest(data: Mapping[str, Any]) -> str:
    """SHA-256 of a canonical JSON form."""
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

