"""Resume and preparation: from a configuration and the results folder's records to the plan of a run.

:func:`open_folder` opens the results folder and reads what it holds; :func:`prepare` checks the
configuration against the folder's manifest (saying in words what changed), restores the statuses of
the bots taken out, counts the faults of the games recorded, and plans the games, returning a
:class:`Preparation`: what is recorded, what is left to play, and the identity that ties the folder to
the tournament. Nothing here writes: the runner writes the manifest it is given.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.errors import ConfigError, RecordsError
from arena.event.plan.manifest import (
    PLAY_ORDER,
    BotStatus,
    Manifest,
    change_summary,
    describe_difference,
    digest,
    refuse_drift,
)
from arena.event.plan.plan import Design, PlanBuilder, PlanRound
from arena.event.plan.planner import Planner, write_plan
from arena.event.plan.schedule import Block, Schedule
from arena.event.plan.status import TAKEN_OUT, BotCondition
from arena.event.run.policy import FaultPolicy
from arena.event.run.tally import Tally
from arena.event.setup.botconfig import BotConfig, PythonBot
from arena.event.setup.bots import HOUSE_BOT
from arena.event.setup.config import TournamentConfig
from arena.records.format import GameRecords
from arena.records.store import ResultsStore

__all__ = ["Preparation", "Recorded", "add_house", "as_begun", "identity", "open_folder", "prepare", "schedule_of"]


@dataclasses.dataclass(frozen=True)
class Recorded:
    """The games recorded before this run, as the plan must seat them again."""

    seats: Mapping[str, tuple[tuple[str, ...], int]]
    """Each game's seats and first dealer, by game id."""
    blocks: frozenset[str]
    """The blocks with games recorded."""

    def check(self, block: Block, rotation: str, folder: Path, manifest: str) -> None:
        """Refuses a plan whose seats differ from those of the games recorded in its blocks."""
        if not self.seats:
            return
        for game in block.games(rotation):
            seen = self.seats.get(game.id)
            if seen is not None and seen != (game.seats, game.first_dealer):
                raise RecordsError(
                    f"game {game.id} of {folder} was recorded with the seats {list(seen[0])} (first dealer "
                    f"{seen[1]}), but the plan made from {manifest} seats {list(game.seats)} "
                    f"(first dealer {game.first_dealer}): the folder was played by a version of callbreak-arena that "
                    "seats blocks differently. Use a new results folder, or --fresh to start again"
                )


@dataclasses.dataclass(frozen=True)
class Preparation:
    """What a run starts from."""

    games: list[GameRecords]
    """The games recorded before this run."""
    recorded: Recorded
    statuses: dict[str, BotStatus]
    """The bots taken out (before this run, or now, by the faults of the games recorded), in that order."""
    policy: FaultPolicy
    """The fault policy, with the games recorded counted."""
    bots: dict[str, BotConfig]
    """Every bot of the run: the configuration's, the copies the format makes and the house bots."""
    schedule: Schedule
    planner: Planner
    manifest: Manifest
    """The manifest of this run (to be written before anything is played)."""
    rounds: Iterator[PlanRound] | None
    """For fixed plans, the walk of the plan (released a window at a time); ``None`` for swiss."""
    changes: list[str]
    """What changed in the plan since the folder's last run, one sentence each."""
    tally: Tally
    """The games recorded, counted."""


def identity(config: TournamentConfig) -> dict[str, Any]:
    """What ties a results folder to its tournament: the configuration's identity, and the deal file's digest."""
    found = config.identity()
    if config.deal_file is not None:
        found["deal_file_sha256"] = hashlib.sha256(config.deal_file.read_bytes()).hexdigest()
    return found


def as_begun(config: TournamentConfig, folder: Path) -> TournamentConfig:
    """``config`` with the ``fresh_process`` that ``folder``, if it holds results, was begun with: for the events
    whose configuration the arena writes itself (a ladder's block or final, a block of ``rate``), which resume as
    they began, even when an earlier version began them (whose launched bots kept their processes from game to
    game by default; their reports then say so). A configuration of the user's is refused instead, in words
    that give the line to add (:func:`prepare`)."""
    begun = ((ResultsStore(folder).manifest() or {}).get("config") or {}).get("fresh_process")
    return dataclasses.replace(config, fresh_process=begun) if isinstance(begun, bool) else config


def _process_changed(folder: Path, was: bool) -> str:
    """Why a folder begun under the other ``fresh_process`` is refused, and the line that resumes it."""
    how = ("its launched bots had a new process for every game" if was else
           "its launched bots kept their processes from game to game (the default of earlier versions)")
    line = "fresh_process = true" if was else "fresh_process = false"
    return (f"{folder} was begun with {line}: {how}. To finish it as it was begun, put the line {line} in the "
            "configuration's [tournament] table; or use a new results folder, or --fresh to discard these results "
            "and start again")


def open_folder(store: ResultsStore, fresh: bool) -> tuple[list[GameRecords], Manifest | None]:
    """Opens the results folder (emptied first when ``fresh``): the complete games it holds, and its manifest."""
    folder = store.folder
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{folder} is a file, not a results folder: name a folder (it is made if missing)")
    try:
        if fresh:
            store.clear()
        games = store.open()
    except OSError as err:
        raise ConfigError(f"cannot use {folder} as the results folder: {err.strerror or err}") from None
    raw = store.manifest()
    return games, Manifest.from_dict(raw, str(store.manifest_path)) if raw is not None else None


def add_house(bots: dict[str, BotConfig], names: Sequence[str]) -> None:
    """Adds the house bots named (the ones already there are kept)."""
    for name in names:
        bots.setdefault(name, BotConfig(name, PythonBot(HOUSE_BOT), house=True))


def schedule_of(config: TournamentConfig, field: Sequence[str], deal_sets: Sequence[int],
                standings: Callable[[], dict[str, float]] | None = None) -> Schedule:
    """The schedule of ``config``'s design for the bots ``field`` (in that order) on ``deal_sets``: what a run plans
    (``standings`` pairs the rounds of a swiss)."""
    return Schedule(
        bots=field, format=config.format, rotation=config.rotation, deal_sets=deal_sets, seed=config.seed,
        options=config.format_options, draw_seats=config.rules.draw_seating, standings=standings,
    )


def _play_order(previous: Manifest | None, games: Sequence[GameRecords]) -> str | None:
    """The manifest's ``play_order``: kept from the folder's manifest, and drawn for a folder begun now; a folder
    whose games were played before the order was drawn stays without one."""
    if previous is None or (previous.play_order is None and not games):
        return PLAY_ORDER
    return previous.play_order


def prepare(
    config: TournamentConfig, games: list[GameRecords], previous: Manifest | None, ties: Mapping[str, Any], *,
    folder: Path, where: str, deal_sets: Sequence[int], standings: Callable[[], dict[str, float]],
) -> Preparation:
    """Checks the configuration against the folder's previous manifest and plans the run (reading nothing).

    ``games`` and ``previous`` are what :func:`open_folder` read from ``folder``; ``ties`` is the tournament's
    :func:`identity`; ``where`` names the manifest in errors; ``standings`` gives the swiss pairing the
    standings of the rounds played.
    """
    bots = {b.name: b for b in config.bots}
    statuses: dict[str, BotStatus] = {}
    policy = FaultPolicy(config.disqualify_after)
    removed: list[str] = []
    if previous is not None:
        old_identity = {k: previous.config.get(k) for k in ties}
        if digest(old_identity) != digest(ties):
            was = old_identity.get("fresh_process")
            if isinstance(was, bool) and digest({**old_identity, "fresh_process": not was}) == digest(ties):
                raise RecordsError(_process_changed(folder, was))  # nothing else changed
            raise RecordsError(
                f"{folder} holds another tournament's results: {describe_difference(old_identity, ties)}. "
                "Use a new results folder, or --fresh to discard these results and start again"
            )
        refuse_drift(previous.config, config)
        statuses.update({b: s for b, s in previous.statuses.items() if s.status in TAKEN_OUT})
        played_bots = {bot for game in games for bot in game.seats}
        for item in previous.config.get("bots", []):
            name = item["name"]
            if name not in bots:
                removed.append(name)
                if name in played_bots and name not in statuses:
                    statuses[name] = BotStatus(BotCondition.WITHDRAWN, "removed from the configuration")
    for game in games:
        for bot in policy.add_game(game.seats, [f for r in game.rounds for f in r.faults]):
            if bot not in statuses:
                statuses[bot] = BotStatus(BotCondition.DISQUALIFIED, policy.reason(bot))
    excluded = {bot for bot, s in statuses.items() if s.status in TAKEN_OUT} | set(removed)
    # A fixed plan is made for the bots of the configuration, the ones taken out included (their
    # blocks not begun are dropped), so that a run again with nothing changed plans the same;
    # swiss pairs each round anew among the bots still playing.
    field = [b.name for b in config.bots if b.name not in excluded or config.format != "swiss"]
    if len([b for b in field if b not in excluded]) < 2:
        raise ConfigError("fewer than 2 bots are left to play: the others are withdrawn or disqualified")
    schedule = schedule_of(config, field, deal_sets, standings)
    house = sorted(set(schedule.house) | set(previous.house if previous else []))
    for copy, original in schedule.copies.items():
        if original in bots:
            bots[copy] = dataclasses.replace(bots[original], name=copy)
    add_house(bots, house)
    played = frozenset(game.block for game in games)
    recorded = Recorded({game.game: (game.seats, game.first.first_dealer) for game in games}, played)
    beyond = max((game.first.schedule_round for game in games), default=0)
    if beyond > schedule.rounds:
        raise RecordsError(
            f"the configuration plans {schedule.rounds} deal sets, but round {beyond} of {folder} "
            f"already has recorded games: keep at least {beyond} deal sets, or use --fresh"
        )
    field_changed = previous is not None and previous.plan.field != schedule.bots
    if previous is not None:
        previous.plan.verify(where)
    planner = Planner(schedule, previous.plan if previous else None, played, excluded, field_changed)
    # A fixed plan is written down by its design (the swiss rounds, made as the run goes, are stored whole);
    # the bots taken out are cut from the round after the last in which they played.
    design = None if schedule.adaptive else Design(
        config.format, config.seed, deal_sets,
        config.format_options.plan_options(), config.rules.draw_seating)
    cuts = {bot: 1 + max((g.first.schedule_round for g in games if bot in g.seats), default=0)
            for bot in excluded if bot in schedule.bots} if design is not None else {}
    builder = PlanBuilder(config.rotation, schedule.rounds, schedule.adaptive, schedule.sequential,
                          list(schedule.bots), design, cuts)
    plan = builder.plan() if schedule.adaptive else write_plan(planner, builder)
    manifest = Manifest(
        tournament=config.name, config={**config.to_dict(), **ties}, identity=digest(ties), plan=plan, house=house,
        statuses=statuses, play_order=_play_order(previous, games),
    )
    changes = [] if previous is None else change_summary(previous, config, planner, sorted(removed),
                                                         schedule.rounds, statuses)
    tally = Tally()
    for game in games:
        tally.note(game.seats, game.final.totals, game.first.schedule_round, [f for r in game.rounds for f in r.faults])
    return Preparation(games, recorded, statuses, policy, bots, schedule, planner, manifest,
                       None if schedule.adaptive else plan.walk(), changes, tally)
