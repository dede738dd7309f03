"""``check-bot`` and ``game --bot``: one bot, given on the command line, against sample bots.

A bot under test is described as on the command line: an in-process class (``mybot.py:MyBot``), a
command the arena launches (gRPC, with ``{address}``), a stdio command, a Bhoos-style HTTP command or
URL, or a remote bot that connects by itself. :func:`bot_table` turns that into the ``[[bots]]``
table of a configuration, so the bot is seated exactly as it would be in a tournament: the same
launcher, sandbox (its own ``folder``, the ``read_only`` folders), deadlines and fault rules.

:func:`check_bot` runs a battery: the bot as the champion of a small gauntlet against three sample
bots, one deal set under each rules profile asked for, four tables at once, and reads the records
back. Each check says what was asked, what came back and what the rule says, in lines a student can
act on, and says PASS only for what was played: a check over profiles not all played is INCOMPLETE.

Every profile is played at one address: the arena of a profile ends by telling a connected bot to
reconnect, and the next listens on the same port, so a bot that connects by itself (``remote``)
connects once and plays them all. The games are played in a temporary folder, removed at the end
whatever happens; when a check did not pass (or the check was interrupted), the records and the
bot's log are copied to ``logs`` first (:data:`LOGS`), one folder per profile, and the report names
the log.

The check says how it goes as it goes, a line per game through ``log`` (:class:`_Pace`), and stops early, with
a FAIL that names the late decisions, once the bot has missed the deadline in :data:`LATE_IN_A_ROW` decisions
in a row: a bot that is always late would otherwise keep its student waiting a deadline per decision for the
whole battery. A check stopped from outside (Ctrl-C, SIGTERM: the task of :meth:`BotCheck.run` cancelled)
still gives its verdict over what was played (:meth:`BotCheck.verdict`), the rest INCOMPLETE.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from arena.core.faults import FaultKind
from arena.core.rules import PROFILES, Rules
from arena.errors import ArenaError, ConfigError
from arena.event.launch.scratch import remove_leftovers, scratch_folder
from arena.event.plan.schedule import Assignment
from arena.event.play.kinds import KINDS as BEHAVIOURS
from arena.event.play.kinds import Kind
from arena.event.run.summary import RunSummary
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.event.setup.defaults import CHECK_DEADLINE_MS, LATE_IN_A_ROW, LOGS, OPPONENTS
from arena.event.setup.kinds import BotKind
from arena.event.setup.sandboxing import SandboxSettings, sandbox_table
from arena.event.verdicts import (
    GROUPS,
    KIND_WORDS,
    NAME,
    TABLES,
    Battery,
    Check,
    FaultPlace,
    asked_place,
    fault_line,
    log_tail,
    moved_paths,
    name_logs,
    report,
    tally,
    under,
    verdicts,
)
from arena.players.base import DecisionKind
from arena.players.table import Asked
from arena.records.format import GameRecord, GameRecords
from arena.records.store import MANIFEST, ResultsStore

__all__ = ["KINDS", "LATE_IN_A_ROW", "LOGS", "NAME", "OPPONENTS", "BotCheck", "BotUnderTest", "Check", "FaultPlace",
           "bot_table", "check_bot", "default_profiles", "play_one_deal_set", "report"]

KINDS = tuple(BEHAVIOURS)
"""How a bot under test is given: the key of its ``[[bots]]`` table."""


def _kind(kind: str) -> Kind | None:
    """The class of the kind of a bot under test (``None``: no kind of that name)."""
    try:
        return BEHAVIOURS[BotKind(kind)]
    except ValueError:
        return None


def default_profiles(kind: str) -> tuple[str, ...]:
    """The profiles a bot of ``kind`` is checked under when none is named: ``bhoos`` for a contest
    bot, every profile for the others."""
    behaviour = _kind(kind)
    return (behaviour.check_profiles if behaviour is not None else ()) or tuple(PROFILES)


@dataclasses.dataclass(frozen=True)
class BotUnderTest:
    """A bot as the command line gives it: ``kind`` is one of :data:`KINDS`."""

    kind: str
    spec: str = ""
    """The class, command or URL (empty for ``remote``)."""
    token: str = ""
    """A remote bot's token (made by the caller, shown to the user)."""
    folder: Path | None = None
    """A launched bot's own folder, as ``folder`` of a ``[[bots]]`` table (``None``: the default)."""
    read_only: tuple[Path, ...] = ()
    """More folders a sandboxed bot sees read-only, as ``[sandbox] read_only``."""
    sandbox: str | SandboxSettings = ""
    """``[sandbox] mode`` for the bot (empty: the default, ``auto``), or the whole ``[sandbox]`` table (a ladder's:
    ``bwrap``, its limits required)."""
    argv: tuple[str, ...] = ()
    """The command as its parts, in place of ``spec`` (a part may hold a space: a folder called ``my bots``)."""


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


def bot_table(bot: BotUnderTest, name: str = NAME) -> str:
    """The ``[[bots]]`` table of the bot under test."""
    kind = _kind(bot.kind)
    if kind is None:
        raise ConfigError(f"unknown kind of bot {bot.kind!r}; the kinds are: {', '.join(KINDS)}")
    folder = "" if bot.folder is None else f"folder = {_toml(str(bot.folder))}\n"
    command = json.dumps(list(bot.argv)) if bot.argv else _toml(bot.spec)  # a JSON list of strings is TOML too
    return f"\n[[bots]]\nname = {_toml(name)}\n{kind.check_lines(command, _toml(bot.token), folder)}"


def _rules_table(rules: Rules) -> str:
    """``[rules]`` giving exactly ``rules``: the profile, then every switch."""
    data = rules.to_dict()
    lines = [f"profile = {json.dumps(data.pop('profile'))}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in data.items()]
    return "[rules]\n" + "\n".join(lines) + "\n"


def _config_text(
    bot: BotUnderTest, opponent: str, *, rules: Rules, deal_sets: int, seed: int, concurrency: int,
    deadline_ms: int, absent_after_s: float, port: int = 0,
) -> str:
    opponents = "".join(
        f"\n[[bots]]\nname = \"{opponent}-{n}\"\npython = {_toml(OPPONENTS[opponent])}\nseed = {n}\n"
        for n in range(1, 4))
    if isinstance(bot.sandbox, SandboxSettings):
        sandbox_lines = [sandbox_table(dataclasses.replace(bot.sandbox, read_only=(*bot.sandbox.read_only,
                                                                                     *bot.read_only)))]
    else:
        sandbox_lines = ([f"read_only = [{', '.join(_toml(str(path)) for path in bot.read_only)}]\n"]
                         if bot.read_only else []) + ([sandbox_table(bot.sandbox)] if bot.sandbox else [])
    sandbox = "" if not sandbox_lines else "\n[sandbox]\n" + "".join(sandbox_lines)
    return (
        f"[tournament]\nname = \"check\"\nseed = {seed}\ndeal_sets = {deal_sets}\nformat = \"gauntlet\"\n"
        f"concurrency = {concurrency}\nforfeit = \"wait\"\n\n[gauntlet]\nchampion = \"{NAME}\"\n\n"
        f"{_rules_table(rules)}\n[time]\ndeadline_ms = {deadline_ms}\n"
        f"absent_after_s = {absent_after_s}\n\n[server]\nsessions_per_bot = 4\nport = {port}\n{sandbox}"
        + bot_table(bot) + opponents
    )


def play_one_deal_set(
    bot: BotUnderTest, opponent: str, rules: Rules, seed: int, folder: Path, log: Callable[[str], None],
) -> tuple[RunSummary, list[GameRecords]]:
    """``game --bot``: the bot and three sample bots play one deal set (a game in each seat order)."""
    text = _config_text(bot, opponent, rules=rules, deal_sets=1, seed=seed, concurrency=1,
                        deadline_ms=CHECK_DEADLINE_MS, absent_after_s=120)
    summary = asyncio.run(Tournament(parse_config(text, Path.cwd() / "check.toml"), folder, fresh=True, log=log).run())
    return summary, ResultsStore(folder).games()


_MISSED = (FaultKind.LATE, FaultKind.STALLED)
"""The faults of a request the bot left unanswered past its deadline."""


def _seconds(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 100 else f"{ms / 1000:.1f} s"


def _slowest(slowest: float | None, first: float | None) -> str:
    """The progress line's ``slowest decision``: the bot's slowest answer in a game, and apart from it its first,
    when that one held its program's start and took longer (``first``: ``None`` for a bot that does not start with
    its game, or whose first answer did not come)."""
    start = "with your program's start"
    if slowest is None:
        return "slowest decision: none answered" if first is None else (
            f"slowest decision {_seconds(first)} (the first, {start})")
    if first is not None and first > slowest:
        return f"slowest decision {_seconds(slowest)} (the first {_seconds(first)}, {start})"
    return f"slowest decision {_seconds(slowest)}"


class _Pace:
    """Follows the bot under test as the check plays: a line per game through ``log``, and :meth:`stop` once it
    has missed the deadline in :data:`LATE_IN_A_ROW` calls in a row, or as many cards in a row (each kind counted
    apart: an answer in time to a call does not reset the count of late cards). The tournament's judge (it judges
    no standings) and its ``asked``."""

    def __init__(self, total: int, deadline_ms: int, log: Callable[[str], None], *, starts: bool = False) -> None:
        self.total, self.deadline_ms, self.log = total, deadline_ms, log
        self.starts = starts
        """The bot's process starts as its first request of a game is sent (a stdio bot): that answer's time
        holds the start, and is told apart."""
        self.done = 0
        self.slowest: dict[tuple[str, str], float] = {}
        """(profile, game id) -> the bot's slowest answer in that game, in ms (its first apart, if it starts)."""
        self.first: dict[tuple[str, str], float | None] = {}
        """(profile, game id) -> the time of the bot's first answer in that game, in ms, if it starts with it."""
        self.missed: dict[tuple[str, str], int] = {}
        """(profile, game id) -> the bot's decisions past the deadline in that game."""
        self.playing: dict[tuple[str, str], dict[DecisionKind, int]] = {}
        """(profile, game id) -> the requests of each kind the bot answered itself in that game (in time), for each
        game whose requests were watched (none are on the fast path)."""
        self.answered = {kind: 0 for kind in DecisionKind}
        """The requests of each kind the bot answered itself in the games played to the end."""
        self.late: dict[DecisionKind, list[tuple[str, FaultPlace]]] = {kind: [] for kind in DecisionKind}
        """The bot's decisions of each kind past the deadline since its last answer of that kind, as fault lines."""
        self.stopped: DecisionKind | None = None
        """The kind of decision the bot missed the deadline in :data:`LATE_IN_A_ROW` times in a row: the check
        stops."""
        self.stop: Callable[[], object] = lambda: None
        """Stops the games in play: set by the check for each profile it plays."""

    def asked(self, asked: Asked) -> None:
        decision = asked.decision
        if decision.names[decision.seat] != NAME or self.stopped:
            return
        game = (decision.view.rules.profile_name, decision.game_id)
        counts = self.playing.setdefault(game, {kind: 0 for kind in DecisionKind})
        if self.starts and game not in self.first:
            self.first[game] = asked.elapsed_ms
        elif asked.elapsed_ms is not None:
            self.slowest[game] = max(self.slowest.get(game, 0.0), asked.elapsed_ms)
        late = self.late[decision.kind]
        if asked.fault not in _MISSED:
            late.clear()
            if asked.fault is None or asked.fault in GROUPS["messages"]:  # an answer of its own, right or wrong
                counts[decision.kind] += 1
            return
        self.missed[game] = self.missed.get(game, 0) + 1
        where, played = asked_place(asked)
        late.append((fault_line(where, played, asked.detail), where))
        if len(late) >= LATE_IN_A_ROW:
            self.stopped = decision.kind
            self.stop()

    def game_done(self, game: Assignment, record: GameRecord) -> None:
        self.done += 1
        seat = record.seats.index(NAME)
        profile = record.rules.profile_name
        tricks = sum(result.tricks_won[seat] for result in record.rounds)
        faults = sum(fault.seat == seat for fault in record.faults)
        key = (profile, record.game)
        slowest, first, missed = self.slowest.pop(key, None), self.first.pop(key, None), self.missed.pop(key, 0)
        parts = [f"{tricks} tricks taken in {len(record.rounds)} rounds", f"{faults} fault{'s' if faults != 1 else ''}"]
        counts = self.playing.pop(key, None)
        if counts is None:  # played on the fast path, in process, where no request is watched: each answer its own
            counts = {DecisionKind.CALL: len(record.rounds), DecisionKind.PLAY: 13 * len(record.rounds)}
        else:
            parts.append(_slowest(slowest, first))
        for kind, count in counts.items():
            self.answered[kind] += count
        if missed:
            parts.append(f"{missed} past the deadline ({self.deadline_ms} ms)")
        self.log(f"game {self.done} of {self.total} ({profile} rules): {', '.join(parts)}")

    def start(self, games: Sequence[GameRecords]) -> None:
        return None

    def decided(self) -> bool:
        return False

    def refresh(self, force: bool = False) -> None:
        return None

    def progress_line(self) -> str | None:
        return None


class BotCheck:
    """check-bot's battery for one bot: :meth:`run` plays it and returns the checks; :meth:`verdict` gives them
    after a stop from outside.

    Plays at least ``games`` games, a deal set (four games, four tables at once) under each of ``profiles``
    (none: :func:`default_profiles`) and more under the first, every profile at one address, said once through
    ``log``, as is each game played. Raises :class:`ConfigError` for an unknown profile, or a ``logs`` folder
    whose profile folders are not an earlier check's, before anything is played."""

    def __init__(
        self, bot: BotUnderTest, *, opponent: str = "random", games: int = 20, seed: int = 1,
        deadline_ms: int = CHECK_DEADLINE_MS, profiles: Sequence[str] = (), logs: Path = LOGS,
        log: Callable[[str], None] = print, connect_s: float = 60.0,
    ) -> None:
        chosen = tuple(dict.fromkeys(profiles or default_profiles(bot.kind)))
        unknown = [p for p in chosen if p not in PROFILES]
        if unknown:
            raise ConfigError(f"unknown rules profile {unknown[0]!r}; the profiles are: {', '.join(PROFILES)}")
        _check_logs(logs)
        self.bot, self.opponent, self.games, self.seed, self.deadline_ms = bot, opponent, games, seed, deadline_ms
        self.logs, self.log, self.connect_s = logs, log, connect_s
        kind = _kind(bot.kind)
        self.battery = Battery(chosen, Check(kind.first_check if kind is not None else Kind.first_check), {
            "calls": Check(f"calls in the legal range under {under(chosen)}"),
            "cards": Check("only legal cards"),
            "deadline": Check(f"answers within the deadline ({deadline_ms} ms)"),
            "messages": Check("well-formed answers"),
            "alive": Check("stays up to the end of every game"),
        })
        self.deal_sets = {p: 1 for p in chosen}
        """The deal sets played under each profile."""
        self.deal_sets[chosen[0]] += max(0, -(-games // 4) - len(chosen))
        self.battery.scheduled = {p: 4 * n for p, n in self.deal_sets.items()}
        starts = kind is not None and kind.starts_on_first_request
        self.pace = _Pace(self.battery.games, deadline_ms, log, starts=starts)
        self.kept: Path | None = None
        """Where the records and the bot's log were kept, once they were."""
        self.scratch: Path | None = None
        """The temporary folder the games are played in, once it is made (removed as :meth:`run` ends)."""

    async def run(self) -> list[Check]:
        """Plays the battery and returns its checks, in order.

        The games are played in a temporary folder, removed before this returns or raises. When a check did not
        pass, or the check is stopped from outside, the folder of each profile started is copied first to
        ``logs/PROFILE`` (the folders of an earlier check there are replaced), and a failed check names the bot's
        log there."""
        battery = self.battery
        remove_leftovers("check")
        base = self.scratch = scratch_folder("check")
        try:
            try:
                await self._play(base)
            except BaseException:  # an interrupt: what was played so far is kept for the student to read
                with contextlib.suppress(OSError):
                    self.kept = _keep(base, battery.attempted, self.logs)
                    self.log(f"the check was interrupted; its records so far and your bot's log are in {self.kept}")
                raise
            result = self.verdict()
            if not all(c.ok for c in result):
                self.kept = _keep(base, battery.attempted, self.logs)
                name_logs(battery, result, self.kept)
                moved_paths(result, base, self.kept)
            return result
        finally:
            shutil.rmtree(base, ignore_errors=True)

    def verdict(self, stopped_by: str = "") -> list[Check]:
        """The checks over what was played, in order; ``stopped_by`` (``Ctrl-C``, ``SIGTERM``) says what stopped
        the check before its end, and what was not played is INCOMPLETE for that reason."""
        battery = self.battery
        if stopped_by:
            battery = dataclasses.replace(battery, stopped=f"the check was stopped by {stopped_by} after "
                                          f"{battery.played} of {battery.games} games")
        battery = dataclasses.replace(battery, answered=dict(self.pace.answered))
        result = verdicts(battery, interrupted=bool(stopped_by))
        if stopped_by and self.kept is not None:
            name_logs(battery, result, self.kept)
            if self.scratch is not None:
                moved_paths(result, self.scratch, self.kept)
        return result

    async def _play(self, base: Path) -> None:
        """Plays the profiles in turn, in ``base/PROFILE``, at one port, and tallies the faults of the bot
        under test; stops at the first profile the bot did not play to the end, or where it missed the
        deadline :data:`LATE_IN_A_ROW` times in a row."""
        battery, profiles, log = self.battery, self.battery.profiles, self.log
        said: set[str] = set()

        def once(text: str) -> None:  # each profile's arena says the same address: once is enough
            if text not in said:
                said.add(text)
                log(text)

        port = 0
        for index, profile in enumerate(profiles):
            rules = Rules.profile(profile)
            log(f"checking under the {profile} rules (calls {rules.min_call}-{rules.max_call}) ...")
            text = _config_text(self.bot, self.opponent, rules=rules, deal_sets=self.deal_sets[profile],
                                seed=self.seed, concurrency=TABLES, deadline_ms=self.deadline_ms,
                                absent_after_s=self.connect_s, port=port)
            battery.attempted.append(profile)
            try:  # a profile's arena tells a connected bot to reconnect when another profile follows
                tournament = Tournament(parse_config(text, Path.cwd() / "check.toml"), base / profile, fresh=True,
                                        log=once, continued=index < len(profiles) - 1, judge=self.pace,
                                        asked=self.pace.asked)
                playing = asyncio.ensure_future(tournament.run())
                self.pace.stop = playing.cancel
                summary = await playing
            except ArenaError as err:
                battery.failed(battery.start, profile, f"under the {profile} rules: {err}")
                battery.stopped = f"the arena could not start under the {profile} rules (see the first check)"
                return
            except asyncio.CancelledError:
                tally(battery, profile, base / profile)  # the games played to the end before the stop
                task = asyncio.current_task()
                if not self.pace.stopped or (task is not None and task.cancelling()):
                    raise
                self._stopped_early(profile)
                return
            if tournament.address:
                port = int(tournament.address.rpartition(":")[2])
            tally(battery, profile, base / profile)
            if self.pace.stopped:  # the run ended by itself as it was stopped
                self._stopped_early(profile)
                return
            if NAME in summary.awaited or NAME in summary.disqualified:
                reason = summary.awaited.get(NAME) or summary.disqualified[NAME]
                battery.failed(battery.start, profile, f"under the {profile} rules: {reason}")
                battery.start.lines += log_tail(base / profile / "logs" / f"{NAME}.log")
                battery.stopped = f"the bot did not play to the end under the {profile} rules (see the first check)"
                return
            battery.finished.append(profile)

    def _stopped_early(self, profile: str) -> None:
        """The bot missed the deadline in :data:`LATE_IN_A_ROW` calls, or cards, in a row under ``profile``."""
        battery, kind = self.battery, self.pace.stopped or DecisionKind.PLAY
        battery.late, battery.late_kind = list(self.pace.late[kind]), kind
        battery.failed_in(battery.checks["deadline"], profile)
        battery.stopped = (f"your bot missed the deadline ({self.deadline_ms} ms) in {LATE_IN_A_ROW} "
                           f"{KIND_WORDS[kind]} in a row under the {profile} rules, so the check stopped early (see "
                           "the deadline check)")


def check_bot(
    bot: BotUnderTest, *, opponent: str = "random", games: int = 20, seed: int = 1,
    deadline_ms: int = CHECK_DEADLINE_MS, profiles: Sequence[str] = (), logs: Path = LOGS,
    log: Callable[[str], None] = print, connect_s: float = 60.0,
) -> list[Check]:
    """Runs the battery of :class:`BotCheck` on an event loop of its own and returns its checks, in order."""
    check = BotCheck(bot, opponent=opponent, games=games, seed=seed, deadline_ms=deadline_ms, profiles=profiles,
                     logs=logs, log=log, connect_s=connect_s)
    return asyncio.run(check.run())


def _check_logs(logs: Path) -> None:
    """Refuses a ``logs`` folder that :func:`_keep` could not use without deleting what is not its own."""
    if logs.exists() and not logs.is_dir():
        raise ConfigError(f"the folder for the logs of a failed check, {logs}, is a file: give --logs a folder")
    for profile in PROFILES:
        folder = logs / profile
        if folder.exists() and not (folder / MANIFEST).is_file() and any(folder.iterdir()):
            raise ConfigError(f"{folder} is not the folder of an earlier check (it has no {MANIFEST}), and a "
                              "failed check would replace it: give --logs another folder")


def _keep(base: Path, profiles: Sequence[str], logs: Path) -> Path:
    """Copies the folder of each of ``profiles`` from ``base`` to ``logs``, after removing the profile
    folders of an earlier check there; returns ``logs``, absolute."""
    logs = logs.resolve()
    logs.mkdir(parents=True, exist_ok=True)
    for profile in PROFILES:
        shutil.rmtree(logs / profile, ignore_errors=True)
    for profile in profiles:
        if (base / profile).is_dir():
            shutil.copytree(base / profile, logs / profile)
    return logs
