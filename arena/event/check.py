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
from arena.event.config import parse_config
from arena.event.defaults import CHECK_DEADLINE_MS, LOGS, OPPONENTS
from arena.event.kinds import BotKind
from arena.event.sandbox import SandboxSettings, sandbox_table
from arena.event.scratch import remove_leftovers, scratch_folder
from arena.event.summary import RunSummary
from arena.event.tournament import Tournament
from arena.records.format import GameRecords, RoundRecord
from arena.records.store import MANIFEST, ResultsStore

__all__ = ["KINDS", "LOGS", "OPPONENTS", "BotUnderTest", "Check", "FaultPlace", "bot_table", "check_bot",
           "default_profiles", "play_one_deal_set", "report"]

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


def _run(
    text: str, folder: Path, log: Callable[[str], None], *, continued: bool = False,
) -> tuple[RunSummary, str]:
    """Plays the configuration ``text`` in ``folder``; returns what the run did and the address it
    listened on (empty when it needed no arena server)."""
    config = parse_config(text, Path.cwd() / "check.toml")
    tournament = Tournament(config, folder, fresh=True, log=log, continued=continued)
    summary = asyncio.run(tournament.run())
    return summary, tournament.address


def play_one_deal_set(
    bot: BotUnderTest, opponent: str, rules: Rules, seed: int, folder: Path, log: Callable[[str], None],
) -> tuple[RunSummary, list[GameRecords]]:
    """``game --bot``: the bot and three sample bots play one deal set (a game in each seat order)."""
    text = _config_text(bot, opponent, rules=rules, deal_sets=1, seed=seed, concurrency=1,
                        deadline_ms=CHECK_DEADLINE_MS, absent_after_s=120)
    summary, _ = _run(text, folder, log)
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


def _where(record: RoundRecord, trick: int | None) -> str:
    moment = "the calls" if trick is None else f"trick {trick + 1}"
    return f"{record.rules.profile_name} rules, game {record.game}, round {record.round}, {moment}"


def _fault_line(record: RoundRecord, seat: int, trick: int | None, detail: str) -> str:
    hand, played = _hand_before(record, seat, trick)
    asked = ("asked for a call" if trick is None else
             f"asked for a card, the trick so far: {' '.join(played) or 'none (you lead)'}")
    return f"{_where(record, trick)}: {asked}; your hand: {' '.join(hand)}. {detail}"


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
    played: int = 0
    decisions: int = 0
    think: float = 0.0

    def failed(self, check: Check, profile: str, line: str, where: FaultPlace | None = None) -> None:
        check.fail(line, where)
        under = self.failed_under.setdefault(check.name, [])
        if profile not in under:
            under.append(profile)


def check_bot(
    bot: BotUnderTest, *, opponent: str = "random", games: int = 20, seed: int = 1,
    deadline_ms: int = CHECK_DEADLINE_MS, profiles: Sequence[str] = (), logs: Path = LOGS,
    log: Callable[[str], None] = print, connect_s: float = 60.0,
) -> list[Check]:
    """Runs the battery and returns its checks, in order. Plays at least ``games`` games, a deal set
    (four games, four tables at once) under each of ``profiles`` (none: :func:`default_profiles`) and
    more under the first, every profile at one address, said once through ``log``.

    The games are played in a temporary folder, removed before this returns or raises. When a check
    did not pass, or the check is interrupted, the folder of each profile started is copied first to
    ``logs/PROFILE`` (the folders of an earlier check there are replaced), and a failed check names
    the bot's log there. Raises :class:`ConfigError` for an unknown profile, or a ``logs`` folder
    whose profile folders are not an earlier check's, before anything is played."""
    chosen = tuple(dict.fromkeys(profiles or default_profiles(bot.kind)))
    unknown = [p for p in chosen if p not in PROFILES]
    if unknown:
        raise ConfigError(f"unknown rules profile {unknown[0]!r}; the profiles are: {', '.join(PROFILES)}")
    _check_logs(logs)
    battery = _Battery(chosen, Check("starts and connects" if bot.kind != "python" else "loads and plays"), {
        "calls": Check(f"calls in the legal range under {_under(chosen)}"),
        "cards": Check("only legal cards"),
        "deadline": Check(f"answers within the deadline ({deadline_ms} ms)"),
        "messages": Check("well-formed answers"),
        "alive": Check("stays up to the end of every game"),
    })
    remove_leftovers("check")
    base = scratch_folder("check")
    try:
        try:
            _play(battery, bot, base, opponent=opponent, games=games, seed=seed, deadline_ms=deadline_ms,
                  log=log, connect_s=connect_s)
        except BaseException:  # an interrupt: what was played so far is kept for the student to read
            with contextlib.suppress(OSError):
                kept = _keep(base, battery.attempted, logs)
                log(f"the check was interrupted; its records so far and your bot's log are in {kept}")
            raise
        result = _verdicts(battery, games)
        if not all(c.ok for c in result):
            _name_logs(battery, result, _keep(base, battery.attempted, logs), games)
        return result
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _play(
    battery: _Battery, bot: BotUnderTest, base: Path, *, opponent: str, games: int, seed: int, deadline_ms: int,
    log: Callable[[str], None], connect_s: float,
) -> None:
    """Plays the profiles in turn, in ``base/PROFILE``, at one port, and tallies the faults of the bot
    under test; stops at the first profile the bot did not play to the end."""
    profiles = battery.profiles
    per_profile = {p: 1 for p in profiles}
    per_profile[profiles[0]] += max(0, -(-games // 4) - len(profiles))
    said: set[str] = set()

    def once(text: str) -> None:  # each profile's arena says the same address: once is enough
        if text not in said:
            said.add(text)
            log(text)

    port = 0
    for index, profile in enumerate(profiles):
        rules = Rules.profile(profile)
        log(f"checking under the {profile} rules (calls {rules.min_call}-{rules.max_call}) ...")
        text = _config_text(bot, opponent, rules=rules, deal_sets=per_profile[profile], seed=seed,
                            concurrency=TABLES, deadline_ms=deadline_ms, absent_after_s=connect_s, port=port)
        battery.attempted.append(profile)
        try:  # a profile's arena tells a connected bot to reconnect when another profile follows
            summary, address = _run(text, base / profile, once, continued=index < len(profiles) - 1)
        except ArenaError as err:
            battery.failed(battery.start, profile, f"under the {profile} rules: {err}")
            battery.stopped = f"the arena could not start under the {profile} rules (see the first check)"
            return
        if address:
            port = int(address.rpartition(":")[2])
        _tally(battery, profile, base / profile)
        if NAME in summary.awaited or NAME in summary.disqualified:
            reason = summary.awaited.get(NAME) or summary.disqualified[NAME]
            battery.failed(battery.start, profile, f"under the {profile} rules: {reason}")
            battery.start.lines += _log_tail(base / profile / "logs" / f"{NAME}.log")
            battery.stopped = f"the bot did not play to the end under the {profile} rules (see the first check)"
            return
        battery.finished.append(profile)


def _tally(battery: _Battery, profile: str, folder: Path) -> None:
    """Counts the games of ``folder`` and files each fault of the bot under test under its check."""
    for game in ResultsStore(folder).games():
        battery.played += 1
        seat = game.seats.index(NAME)
        battery.decisions += 14 * len(game.rounds)  # a call and 13 cards a round
        battery.think += game.final.think_ms[seat] if game.final.think_ms else 0.0
        for record in game.rounds:
            for fault in record.faults:
                if fault.seat != seat:
                    continue
                for key, kinds in _GROUPS.items():
                    if fault.kind in kinds:
                        hand, _ = _hand_before(record, seat, fault.trick)
                        where = FaultPlace(profile, record.game, record.round,
                                           None if fault.trick is None else fault.trick + 1, " ".join(hand))
                        battery.failed(battery.checks[key], profile,
                                       _fault_line(record, seat, fault.trick, fault.detail), where)


def _verdicts(battery: _Battery, games: int) -> list[Check]:
    """The checks, each with its lines counted and cut to :data:`SHOWN_PER_CHECK`, INCOMPLETE where a
    profile was not played, and the check of the whole."""
    missing = [p for p in battery.profiles if p not in battery.finished]
    for check in battery.checks.values():
        check.lines = _counted(check.lines)
        if len(check.lines) > SHOWN_PER_CHECK:
            more = len(check.lines) - SHOWN_PER_CHECK
            check.lines = [*check.lines[:SHOWN_PER_CHECK], f"... and {more} more like these"]
        if missing:
            check.unfinished(f"not played under the {_listed(missing)} rules: {battery.stopped}")
    whole = Check(f"{games} full games without a fault")
    if battery.played < games or missing:
        why = f": {battery.stopped}" if battery.stopped else ""
        whole.fail(f"only {battery.played} of {games} games were played{why}")
    elif not all(c.passed for c in battery.checks.values()):
        whole.fail("see the checks above")
    else:
        whole.lines.append(f"{battery.played} games under {_under(battery.profiles)}, up to {TABLES} tables "
                           f"at once; about {battery.think / max(battery.decisions, 1):.1f} ms per decision")
    return [battery.start, *battery.checks.values(), whole]


def _name_logs(battery: _Battery, checks: Sequence[Check], kept: Path, games: int) -> None:
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
    return ["the last lines of its log:", *(f"    {line}" for line in tail)]


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
