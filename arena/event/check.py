"""``check-bot`` and ``game --bot``: one bot, given on the command line, against sample bots.

A bot under test is described as on the command line: an in-process class (``mybot.py:MyBot``), a
command the arena launches (gRPC, with ``{address}``), a stdio command, a Bhoos-style HTTP command or
URL, or a remote bot that connects by itself. :func:`bot_table` turns that into the ``[[bots]]``
table of a configuration, so the bot is seated exactly as it would be in a tournament: the same
launcher, sandbox, deadlines and fault rules.

:func:`check_bot` runs a battery: the bot as the champion of a small gauntlet against three sample
bots, one deal set under each rules profile, four tables at once, and reads the records back. Each
check says what was asked, what came back and what the rule says, in lines a student can act on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from arena.core.faults import FaultKind
from arena.core.rules import PROFILES, Rules
from arena.errors import ArenaError, ConfigError
from arena.event.config import parse_config
from arena.event.records import GameRecords, RoundRecord
from arena.event.store import ResultsStore
from arena.event.tournament import RunSummary, Tournament

__all__ = ["KINDS", "OPPONENTS", "BotUnderTest", "Check", "bot_table", "check_bot", "play_one_deal_set"]

KINDS = ("python", "command", "stdio", "bhoos", "bhoos_url", "remote")
"""How a bot under test is given: the key of its ``[[bots]]`` table."""
OPPONENTS = {
    "random": "sample_bots.random_bot:RandomBot",
    "heuristic": "sample_bots.heuristic_bot:HeuristicBot",
    "montecarlo": "sample_bots.montecarlo_bot:MonteCarloBot",
}
"""The sample bots a bot under test plays against, by strength."""
NAME = "yours"
"""The name of the bot under test in its games."""
CHECK_DEADLINE_MS = 2000
"""The deadline of the checks: the default of a tournament."""
TABLES = 4
"""Tables the bot under test plays at once during the checks."""


@dataclasses.dataclass(frozen=True)
class BotUnderTest:
    """A bot as the command line gives it: ``kind`` is one of :data:`KINDS`."""

    kind: str
    spec: str = ""
    """The class, command or URL (empty for ``remote``)."""
    token: str = ""
    """A remote bot's token (made by the caller, shown to the user)."""


@dataclasses.dataclass
class Check:
    """One check of the battery: passed, and what to fix if not."""

    name: str
    passed: bool = True
    lines: list[str] = dataclasses.field(default_factory=list)

    def fail(self, line: str) -> None:
        self.passed = False
        self.lines.append(line)


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


def bot_table(bot: BotUnderTest, name: str = NAME) -> str:
    """The ``[[bots]]`` table of the bot under test."""
    if bot.kind not in KINDS:
        raise ConfigError(f"unknown kind of bot {bot.kind!r}; the kinds are: {', '.join(KINDS)}")
    if bot.kind == "remote":
        return f"\n[[bots]]\nname = {_toml(name)}\nremote = true\ntoken = {_toml(bot.token)}\n"
    return f"\n[[bots]]\nname = {_toml(name)}\n{bot.kind} = {_toml(bot.spec)}\n"


def _rules_table(rules: Rules) -> str:
    """``[rules]`` giving exactly ``rules``: the profile, then every switch."""
    data = rules.to_dict()
    lines = [f"profile = {json.dumps(data.pop('profile'))}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in data.items()]
    return "[rules]\n" + "\n".join(lines) + "\n"


def _config_text(
    bot: BotUnderTest, opponent: str, *, rules: Rules, deal_sets: int, seed: int, concurrency: int,
    deadline_ms: int, absent_after_s: float,
) -> str:
    opponents = "".join(
        f"\n[[bots]]\nname = \"{opponent}-{n}\"\npython = {_toml(OPPONENTS[opponent])}\nseed = {n}\n"
        for n in range(1, 4))
    return (
        f"[tournament]\nname = \"check\"\nseed = {seed}\ndeal_sets = {deal_sets}\nformat = \"gauntlet\"\n"
        f"concurrency = {concurrency}\nforfeit = \"wait\"\n\n[gauntlet]\nchampion = \"{NAME}\"\n\n"
        f"{_rules_table(rules)}\n[time]\ndeadline_ms = {deadline_ms}\n"
        f"absent_after_s = {absent_after_s}\n\n[server]\nsessions_per_bot = 4\n"
        + bot_table(bot) + opponents
    )


def _run(text: str, folder: Path, log: Callable[[str], None]) -> RunSummary:
    config = parse_config(text, Path.cwd() / "check.toml")
    return asyncio.run(Tournament(config, folder, fresh=True, log=log).run())


def play_one_deal_set(
    bot: BotUnderTest, opponent: str, rules: Rules, seed: int, folder: Path, log: Callable[[str], None],
) -> tuple[RunSummary, list[GameRecords]]:
    """``game --bot``: the bot and three sample bots play one deal set (a game in each seat order)."""
    text = _config_text(bot, opponent, rules=rules, deal_sets=1, seed=seed, concurrency=1,
                        deadline_ms=CHECK_DEADLINE_MS, absent_after_s=120)
    summary = _run(text, folder, log)
    return summary, ResultsStore(folder).games()


def _hand_before(record: RoundRecord, seat: int, trick: int | None) -> tuple[list[str], list[str]]:
    """The seat's hand when it was asked (before ``trick``), and the cards of that trick before its turn."""
    hand = record.hands[seat].split()
    played: list[str] = []
    for index, entry in enumerate(record.tricks):
        if trick is None or index > trick:
            break
        order = [(entry.leader + k) % 4 for k in range(4)]
        for position, card in zip(order, entry.cards, strict=False):
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


def check_bot(
    bot: BotUnderTest, *, opponent: str = "random", games: int = 20, seed: int = 1,
    deadline_ms: int = CHECK_DEADLINE_MS, profiles: Sequence[str] = tuple(PROFILES), folder: Path | None = None,
    log: Callable[[str], None] = print, connect_s: float = 60.0,
) -> list[Check]:
    """Runs the battery and returns its checks, in order. Plays at least ``games`` games, a deal set
    (four games, four tables at once) under each of ``profiles`` and more under the first."""
    own = folder is None
    base = Path(tempfile.mkdtemp(prefix="callbreak-check-")) if folder is None else folder
    per_profile = {p: 1 for p in profiles}
    per_profile[profiles[0]] += max(0, -(-games // 4) - len(profiles))
    start = Check("starts and connects" if bot.kind != "python" else "loads and plays")
    checks = {"calls": Check("calls in the legal range under every rules profile"),
              "cards": Check("only legal cards"),
              "deadline": Check(f"answers within the deadline ({deadline_ms} ms)"),
              "messages": Check("well-formed answers"),
              "alive": Check("stays up to the end of every game")}
    played = 0
    decisions = 0
    think = 0.0
    try:
        for profile in profiles:
            rules = Rules.profile(profile)
            log(f"checking under the {profile} rules (calls {rules.min_call}-{rules.max_call}) ...")
            text = _config_text(bot, opponent, rules=rules, deal_sets=per_profile[profile], seed=seed,
                                concurrency=TABLES, deadline_ms=deadline_ms, absent_after_s=connect_s)
            try:
                summary = _run(text, base / profile, log)
            except ArenaError as err:
                start.fail(str(err))
                break
            if NAME in summary.awaited or NAME in summary.disqualified:
                reason = summary.awaited.get(NAME) or summary.disqualified[NAME]
                start.fail(f"under the {profile} rules: {reason}")
                _log_tail(base / profile / "logs" / f"{NAME}.log", start)
                break
            for game in ResultsStore(base / profile).games():
                played += 1
                seat = game.seats.index(NAME)
                decisions += 14 * len(game.rounds)  # a call and 13 cards a round
                think += game.final.think_ms[seat] if game.final.think_ms else 0.0
                for record in game.rounds:
                    for fault in record.faults:
                        if fault.seat != seat:
                            continue
                        for key, kinds in _GROUPS.items():
                            if fault.kind in kinds:
                                check = checks[key]
                                line = _fault_line(record, seat, fault.trick, fault.detail)
                                check.fail(line)
    finally:
        result = [start, *checks.values()]
        if own and all(c.passed for c in result):
            shutil.rmtree(base, ignore_errors=True)
    for check in checks.values():
        check.lines = _counted(check.lines)
        if len(check.lines) > SHOWN_PER_CHECK:
            more = len(check.lines) - SHOWN_PER_CHECK
            check.lines = [*check.lines[:SHOWN_PER_CHECK], f"... and {more} more like these"]
    whole = Check(f"{games} full games without a fault")
    if not start.passed:
        whole.fail("not played: the bot did not start")
    elif played < games:
        whole.fail(f"only {played} games were played")
    elif not all(c.passed for c in checks.values()):
        whole.fail(f"see the checks above; the games are in {base}/PROFILE (`callbreak-arena replay "
                   f"{base}/PROFILE GAME` shows one, trick by trick)")
    else:
        whole.lines.append(f"{played} games, up to {TABLES} tables at once; about "
                           f"{think / max(decisions, 1):.1f} ms per decision")
    result.append(whole)
    return result


def _counted(lines: list[str]) -> list[str]:
    """``lines`` with repeats (the retries of one decision) told once, with their count."""
    counts: dict[str, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    return [line if n == 1 else f"{line} ({n} times: refused and asked again)" for line, n in counts.items()]


def _log_tail(log: Path, check: Check, lines: int = 8) -> None:
    try:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return
    check.lines.append(f"the last lines of its log ({log}):")
    check.lines += [f"    {line}" for line in tail]


def report(checks: Sequence[Check]) -> str:
    """The battery's report: a line per check, PASS or FAIL, and under a failed check what to fix."""
    out = []
    for check in checks:
        out.append(f"{'PASS' if check.passed else 'FAIL'}  {check.name}")
        out += [f"      {line}" for line in check.lines]
    passed = sum(c.passed for c in checks)
    out.append(f"\n{passed} of {len(checks)} checks passed")
    return "\n".join(out) + "\n"
