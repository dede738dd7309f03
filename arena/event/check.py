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
from arena.core.turns import play_order
from arena.errors import ArenaError, ConfigError
from arena.event.launch.scratch import remove_leftovers, scratch_folder
from arena.event.plan.schedule import Assignment
from arena.event.run.summary import RunSummary
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.event.setup.defaults import CHECK_DEADLINE_MS, LATE_IN_A_ROW, LOGS, OPPONENTS
from arena.event.setup.kinds import BotKind
from arena.event.setup.sandboxing import SandboxSettings, sandbox_table
from arena.players.base import DecisionKind
from arena.players.table import Asked
from arena.records.format import GameRecord, GameRecords, RoundRecord
from arena.records.store import MANIFEST, ResultsStore

__all__ = ["KINDS", "LATE_IN_A_ROW", "LOGS", "OPPONENTS", "BotCheck", "BotUnderTest", "Check", "FaultPlace",
           "bot_table", "check_bot", "default_profiles", "play_one_deal_set", "report"]

KINDS = (BotKind.PYTHON, BotKind.COMMAND, BotKind.STDIO, BotKind.BHOOS, BotKind.BHOOS_URL, BotKind.REMOTE)
"""How a bot under test is given: the key of its ``[[bots]]`` table."""
NAME = "yours"
"""The name of the bot under test in its games."""
TABLES = 4
"""Tables the bot under test plays at once during the checks."""
BHOOS_KINDS = ("bhoos", "bhoos_url")
"""Kinds of bot checked under the ``bhoos`` profile alone unless told otherwise: a contest bot
plays by the contest's rules (calls 1 to 8), which the other profiles do not share."""


def default_profiles(kind: str) -> tuple[str, ...]:
    """The profiles a bot of ``kind`` is checked under when none is named: ``bhoos`` for a contest
    bot, every profile for the others."""
    return ("bhoos",) if kind in BHOOS_KINDS else tuple(PROFILES)


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


@dataclasses.dataclass(frozen=True)
class FaultPlace:
    """Where a check first saw its fault: the rules, the game, the round, the trick and the bot's hand."""

    profile: str
    game: str
    """The game's id in the check's records."""
    round: int
    trick: int | None
    """From 1; ``None`` during the calls."""
    hand: str
    """The bot's hand when it was asked, as card texts."""


@dataclasses.dataclass
class Check:
    """One check of the battery: PASS only when it passed over everything it covers, and what to fix if not."""

    name: str
    passed: bool = True
    """No fault of its kind was seen."""
    lines: list[str] = dataclasses.field(default_factory=list)
    complete: bool = True
    """Everything it covers was played (every profile asked for)."""
    first: FaultPlace | None = None
    """Where its first fault was seen, when it was seen in a game."""

    def fail(self, line: str, where: FaultPlace | None = None) -> None:
        self.passed = False
        self.lines.append(line)
        if self.first is None:
            self.first = where

    def unfinished(self, line: str) -> None:
        """Part of what it covers was not played: ``line`` says which, and why."""
        self.complete = False
        self.lines.append(line)

    @property
    def ok(self) -> bool:
        """Passed, over everything it covers."""
        return self.passed and self.complete

    @property
    def verdict(self) -> str:
        """``PASS``, ``FAIL`` (a fault was seen) or ``INCOMPLETE`` (no fault, but not everything was played)."""
        return "PASS" if self.ok else "FAIL" if not self.passed else "INCOMPLETE"


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


def bot_table(bot: BotUnderTest, name: str = NAME) -> str:
    """The ``[[bots]]`` table of the bot under test."""
    if bot.kind not in KINDS:
        raise ConfigError(f"unknown kind of bot {bot.kind!r}; the kinds are: {', '.join(KINDS)}")
    if bot.kind == "remote":
        return f"\n[[bots]]\nname = {_toml(name)}\nremote = true\ntoken = {_toml(bot.token)}\n"
    folder = "" if bot.folder is None else f"folder = {_toml(str(bot.folder))}\n"
    command = json.dumps(list(bot.argv)) if bot.argv else _toml(bot.spec)  # a JSON list of strings is TOML too
    return f"\n[[bots]]\nname = {_toml(name)}\n{bot.kind} = {command}\n{folder}"


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


def _hand_before(record: RoundRecord, seat: int, trick: int | None) -> tuple[list[str], list[str]]:
    """The seat's hand when it was asked (before ``trick``), and the cards of that trick before its turn."""
    hand = [str(card) for card in record.hands[seat]]
    played: list[str] = []
    for index, entry in enumerate(record.tricks):
        if trick is None or index > trick:
            break
        order = play_order(entry.leader)
        for position, card in zip(order, map(str, entry.cards), strict=False):
            if index == trick:
                if position == seat:
                    break
                played.append(card)
            elif position == seat and card in hand:
                hand.remove(card)
    return hand, played


def _line(where: FaultPlace, played: Sequence[str], detail: str) -> str:
    """A fault in a student's words: where it was, what was asked, the bot's hand, and what went wrong."""
    moment = "the calls" if where.trick is None else f"trick {where.trick}"
    asked = ("asked for a call" if where.trick is None else
             f"asked for a card, the trick so far: {' '.join(played) or 'none (you lead)'}")
    return (f"{where.profile} rules, game {where.game}, round {where.round}, {moment}: {asked}; your hand: "
            f"{where.hand}. {detail}")


def _place(record: RoundRecord, seat: int, trick: int | None) -> tuple[FaultPlace, list[str]]:
    """Where a fault of a record was (``trick`` from 0), and the cards of that trick before the seat's turn."""
    hand, played = _hand_before(record, seat, trick)
    where = FaultPlace(record.rules.profile_name, record.game, record.round, None if trick is None else trick + 1,
                       " ".join(hand))
    return where, played


def _asked_place(asked: Asked) -> tuple[FaultPlace, list[str]]:
    """Where a request watched as it was answered (or not) was, and the cards of its trick so far."""
    decision = asked.decision
    view = decision.view
    trick = len(view.tricks) + 1 if decision.kind is DecisionKind.PLAY else None
    where = FaultPlace(view.rules.profile_name, decision.game_id, view.round_number, trick,
                       " ".join(map(str, view.hand)))
    return where, [str(card) for card in view.trick]


_GROUPS: dict[str, tuple[FaultKind, ...]] = {
    "calls": (FaultKind.ILLEGAL_CALL,),
    "cards": (FaultKind.ILLEGAL_CARD,),
    "deadline": (FaultKind.LATE,),
    "messages": (FaultKind.MALFORMED, FaultKind.OUT_OF_TURN, FaultKind.UNKNOWN_REQUEST, FaultKind.FLOOD),
    "alive": (FaultKind.CRASH, FaultKind.DISCONNECT, FaultKind.STALLED, FaultKind.ABSENT),
}
SHOWN_PER_CHECK = 5
"""Fault lines shown per check (the count says how many more there were)."""


def _listed(profiles: Sequence[str]) -> str:
    """``nepali``, ``nepali and master``, ``nepali, master and bhoos``."""
    return profiles[0] if len(profiles) == 1 else f"{', '.join(profiles[:-1])} and {profiles[-1]}"


def _under(profiles: Sequence[str]) -> str:
    """The profiles a check covers, in words: ``every rules profile`` or ``the bhoos rules``."""
    return "every rules profile" if set(profiles) == set(PROFILES) else f"the {_listed(profiles)} rules"


@dataclasses.dataclass
class _Battery:
    """What playing the profiles of a check gave: the checks, and what was played."""

    profiles: tuple[str, ...]
    start: Check
    checks: dict[str, Check]
    """The checks of the records, by key of :data:`_GROUPS`."""
    attempted: list[str] = dataclasses.field(default_factory=list)
    """The profiles whose run was started."""
    finished: list[str] = dataclasses.field(default_factory=list)
    """The profiles played to the end."""
    stopped: str = ""
    """Why the profiles after the last finished one were not played, in words."""
    failed_under: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    """The profiles under which each check (by name) failed."""
    scheduled: dict[str, int] = dataclasses.field(default_factory=dict)
    """The games scheduled under each profile."""
    played_in: dict[str, int] = dataclasses.field(default_factory=dict)
    """The games played to the end under each profile."""
    answered: dict[DecisionKind, int] = dataclasses.field(default_factory=dict)
    """The requests of each kind the bot answered itself in the games played to the end (its own call or card,
    legal or not, well-formed or not: not one the fallback played for it)."""
    played: int = 0
    decisions: int = 0
    think: float = 0.0
    late: list[tuple[str, FaultPlace]] = dataclasses.field(default_factory=list)
    """The decisions past the deadline that stopped the check early, as fault lines (none: it was not)."""
    late_kind: DecisionKind = DecisionKind.PLAY
    """The kind of those decisions: calls or cards."""

    @property
    def games(self) -> int:
        """The games scheduled under every profile."""
        return sum(self.scheduled.values())

    def failed(self, check: Check, profile: str, line: str, where: FaultPlace | None = None) -> None:
        check.fail(line, where)
        self.failed_in(check, profile)

    def failed_in(self, check: Check, profile: str) -> None:
        """Notes that ``check`` failed under ``profile`` (its log is named under it)."""
        under = self.failed_under.setdefault(check.name, [])
        if profile not in under:
            under.append(profile)


_KIND_WORDS = {DecisionKind.CALL: "calls", DecisionKind.PLAY: "cards"}
"""A kind of decision, in the plural, in a student's words."""
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
            if asked.fault is None or asked.fault in _GROUPS["messages"]:  # an answer of its own, right or wrong
                counts[decision.kind] += 1
            return
        self.missed[game] = self.missed.get(game, 0) + 1
        where, played = _asked_place(asked)
        late.append((_line(where, played, asked.detail), where))
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
        self.battery = _Battery(chosen, Check("starts and connects" if bot.kind != "python" else "loads and plays"), {
            "calls": Check(f"calls in the legal range under {_under(chosen)}"),
            "cards": Check("only legal cards"),
            "deadline": Check(f"answers within the deadline ({deadline_ms} ms)"),
            "messages": Check("well-formed answers"),
            "alive": Check("stays up to the end of every game"),
        })
        self.deal_sets = {p: 1 for p in chosen}
        """The deal sets played under each profile."""
        self.deal_sets[chosen[0]] += max(0, -(-games // 4) - len(chosen))
        self.battery.scheduled = {p: 4 * n for p, n in self.deal_sets.items()}
        self.pace = _Pace(self.battery.games, deadline_ms, log, starts=bot.kind == "stdio")
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
                _name_logs(battery, result, self.kept)
                _moved(result, base, self.kept)
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
        result = _verdicts(battery, interrupted=bool(stopped_by))
        if stopped_by and self.kept is not None:
            _name_logs(battery, result, self.kept)
            if self.scratch is not None:
                _moved(result, self.scratch, self.kept)
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
                _tally(battery, profile, base / profile)  # the games played to the end before the stop
                task = asyncio.current_task()
                if not self.pace.stopped or (task is not None and task.cancelling()):
                    raise
                self._stopped_early(profile)
                return
            if tournament.address:
                port = int(tournament.address.rpartition(":")[2])
            _tally(battery, profile, base / profile)
            if self.pace.stopped:  # the run ended by itself as it was stopped
                self._stopped_early(profile)
                return
            if NAME in summary.awaited or NAME in summary.disqualified:
                reason = summary.awaited.get(NAME) or summary.disqualified[NAME]
                battery.failed(battery.start, profile, f"under the {profile} rules: {reason}")
                battery.start.lines += _log_tail(base / profile / "logs" / f"{NAME}.log")
                battery.stopped = f"the bot did not play to the end under the {profile} rules (see the first check)"
                return
            battery.finished.append(profile)

    def _stopped_early(self, profile: str) -> None:
        """The bot missed the deadline in :data:`LATE_IN_A_ROW` calls, or cards, in a row under ``profile``."""
        battery, kind = self.battery, self.pace.stopped or DecisionKind.PLAY
        battery.late, battery.late_kind = list(self.pace.late[kind]), kind
        battery.failed_in(battery.checks["deadline"], profile)
        battery.stopped = (f"your bot missed the deadline ({self.deadline_ms} ms) in {LATE_IN_A_ROW} "
                           f"{_KIND_WORDS[kind]} in a row under the {profile} rules, so the check stopped early (see "
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


def _tally(battery: _Battery, profile: str, folder: Path) -> None:
    """Counts the games of ``folder`` and files each fault of the bot under test under its check."""
    for game in ResultsStore(folder).games():
        battery.played += 1
        battery.played_in[profile] = battery.played_in.get(profile, 0) + 1
        seat = game.seats.index(NAME)
        battery.decisions += 14 * len(game.rounds)  # a call and 13 cards a round
        battery.think += game.final.think_ms[seat] if game.final.think_ms else 0.0
        for record in game.rounds:
            for fault in record.faults:
                if fault.seat != seat:
                    continue
                for key, kinds in _GROUPS.items():
                    if fault.kind in kinds:
                        where, played = _place(record, seat, fault.trick)
                        battery.failed(battery.checks[key], profile, _line(where, played, fault.detail), where)


_SUBJECTS: dict[str, tuple[DecisionKind, ...]] = {
    "calls": (DecisionKind.CALL,),
    "cards": (DecisionKind.PLAY,),
    "messages": (DecisionKind.CALL, DecisionKind.PLAY),
}
"""The checks of what the bot answers, by key of :data:`_GROUPS`: the kinds of answer each needs to have seen."""


def _unplayed(battery: _Battery) -> str:
    """The profiles of a check not played, or played in part, in words (empty: all were played)."""
    none = [p for p in battery.profiles if not battery.played_in.get(p)]
    part = [f"{battery.played_in[p]} of {battery.scheduled[p]} games under the {p} rules" for p in battery.profiles
            if 0 < battery.played_in.get(p, 0) < battery.scheduled[p]]
    words = ([f"not played under the {_listed(none)} rules"] if none else []) + (
        [f"only {_listed(part)} played"] if part else [])
    return ", and ".join(words)


def _verdicts(battery: _Battery, *, interrupted: bool = False) -> list[Check]:
    """The checks, each a copy with its lines counted and cut to :data:`SHOWN_PER_CHECK` (the deadline's after
    every late decision that stopped the check early), INCOMPLETE where a profile was not played, or where the bot
    gave none of the answers a check judges, and the check of the whole. ``interrupted``: the check was stopped
    from outside, which is no fault of the bot."""
    games = battery.games
    missing = [p for p in battery.profiles if p not in battery.finished]
    unplayed = _unplayed(battery)
    start = dataclasses.replace(battery.start, lines=list(battery.start.lines))
    if interrupted and not battery.played and start.passed:
        start.unfinished(f"no game was played to the end: {battery.stopped}")
    checks = [start]
    for key, each in battery.checks.items():
        check = dataclasses.replace(each, lines=_counted(each.lines))
        if key == "deadline" and battery.late:
            late = [line for line, _ in battery.late]
            more = len([line for line in check.lines if line not in late])  # a late decision may be recorded too
            what = _KIND_WORDS[battery.late_kind]
            check.lines = [*late, *([f"... and {more} more like these"] if more else []),
                           f"the check stopped after these {len(late)} {what} in a row past the deadline: a bot "
                           "this slow would keep you waiting a deadline per decision for the whole check"]
            check.passed = False
            check.first = check.first or battery.late[0][1]
        elif len(check.lines) > SHOWN_PER_CHECK:
            more = len(check.lines) - SHOWN_PER_CHECK
            check.lines = [*check.lines[:SHOWN_PER_CHECK], f"... and {more} more like these"]
        unanswered = [_KIND_WORDS[kind] for kind in _SUBJECTS.get(key, ()) if not battery.answered.get(kind)]
        if check.passed and battery.played and unanswered:
            games_played = f"{battery.played} game{'s' if battery.played != 1 else ''}"
            check.unfinished(f"nothing to check: in the {games_played} played, your bot answered none of its "
                             f"{' or '.join(unanswered)} in time (the fallback played them for it; see the deadline "
                             "check)")
        if missing and unplayed:
            check.unfinished(f"{unplayed}: {battery.stopped}")
        checks.append(check)
    whole = Check(f"{games} full games without a fault")
    if battery.played < games or missing:
        why = f": {battery.stopped}" if battery.stopped else ""
        if not interrupted:
            whole.fail(f"only {battery.played} of {games} games were played{why}")
        else:
            if not all(c.passed for c in checks):
                whole.fail("see the checks above")
            whole.unfinished(f"only {battery.played} of {games} games were played{why}")
    elif not all(c.passed for c in checks):
        whole.fail("see the checks above")
    else:
        whole.lines.append(f"{battery.played} games under {_under(battery.profiles)}, up to {TABLES} tables "
                           f"at once; about {battery.think / max(battery.decisions, 1):.1f} ms per decision")
    return [*checks, whole]


def _moved(checks: Sequence[Check], base: Path, kept: Path) -> None:
    """Each path into the games' temporary folder ``base`` that a check's lines name (a launched bot's log, in
    the reason it did not start), turned into the same path in ``kept``, where it still is once the check ends."""
    for check in checks:
        for old in dict.fromkeys((str(base), str(base.resolve()))):
            check.lines = [line.replace(old, str(kept)) for line in check.lines]


def _name_logs(battery: _Battery, checks: Sequence[Check], kept: Path) -> None:
    """Under each failed check, the bot's log kept for each profile it failed under (launched bots
    have one), and under the check of the whole, where the games are kept."""
    for check in checks:
        for profile in battery.failed_under.get(check.name, ()):
            path = kept / profile / "logs" / f"{NAME}.log"
            if path.is_file():
                check.lines.append(f"your bot's log ({profile} rules): {path}")
    whole = checks[-1]
    if battery.played:
        folder = kept / battery.attempted[0] if len(battery.attempted) == 1 else kept / "PROFILE"
        whole.lines.append(f"the games are kept in {folder}: `callbreak-arena replay {folder} GAME` shows one, "
                           "trick by trick")


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


def _counted(lines: list[str]) -> list[str]:
    """``lines`` with repeats (the retries of one decision) told once, with their count."""
    counts: dict[str, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    return [line if n == 1 else f"{line} ({n} times: refused and asked again)" for line, n in counts.items()]


def _log_tail(log: Path, lines: int = 8) -> list[str]:
    """The last ``lines`` lines of a bot's log, to show under a check (none when there is no log)."""
    try:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return []
    return ["the last lines of its log:", *(f"    {_terminal_safe(line)}" for line in tail)]


def _terminal_safe(line: str) -> str:
    """``line`` with every control character escaped (``\\x1b``), so a bot's log cannot move the cursor,
    rewrite a line of the report or set the terminal's title or clipboard."""
    return "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in line)


def report(checks: Sequence[Check]) -> str:
    """The battery's report: a line per check, PASS, FAIL or INCOMPLETE, and under a check that did not
    pass what to fix. A line of many lines (a fault's detail with a traceback) is shown whole, indented."""
    out = []
    for check in checks:
        out.append(f"{check.verdict}  {check.name}")
        for line in check.lines:
            first, *rest = line.split("\n")
            out.append(f"      {first}")
            out += [f"        {more}" for more in rest]
    passed = sum(c.ok for c in checks)
    out.append(f"\n{passed} of {len(checks)} checks passed")
    return "\n".join(out) + "\n"
