"""check-bot's verdict: the checks of its battery, where each fault was seen, the tally of the games played, and
the report a student reads.

:class:`Battery` is what playing the profiles of a check gave; :func:`tally` files each fault of the bot under
test (:data:`NAME`) in a results folder under its check (:data:`GROUPS`), in a line that says where it was, what
was asked, the bot's hand and what went wrong; :func:`verdicts` gives the checks over what was played, PASS only
for what was played, and :func:`report` writes them. The run of the battery is :mod:`arena.event.check`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from arena.core.faults import FaultKind
from arena.core.rules import PROFILES
from arena.core.turns import play_order
from arena.core.words import listed
from arena.players.base import DecisionKind
from arena.players.table import Asked
from arena.records.format import RoundRecord
from arena.records.store import ResultsStore

__all__ = ["GROUPS", "KIND_WORDS", "NAME", "TABLES", "Battery", "Check", "FaultPlace", "asked_place", "fault_line",
           "log_tail", "moved_paths", "name_logs", "report", "tally", "under", "verdicts"]

NAME = "yours"
"""The name of the bot under test in its games."""
TABLES = 4
"""Tables the bot under test plays at once during the checks."""


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


def fault_line(where: FaultPlace, played: Sequence[str], detail: str) -> str:
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


def asked_place(asked: Asked) -> tuple[FaultPlace, list[str]]:
    """Where a request watched as it was answered (or not) was, and the cards of its trick so far."""
    decision = asked.decision
    view = decision.view
    trick = len(view.tricks) + 1 if decision.kind is DecisionKind.PLAY else None
    where = FaultPlace(view.rules.profile_name, decision.game_id, view.round_number, trick,
                       " ".join(map(str, view.hand)))
    return where, [str(card) for card in view.trick]


GROUPS: dict[str, tuple[FaultKind, ...]] = {
    "calls": (FaultKind.ILLEGAL_CALL,),
    "cards": (FaultKind.ILLEGAL_CARD,),
    "deadline": (FaultKind.LATE,),
    "messages": (FaultKind.MALFORMED, FaultKind.OUT_OF_TURN, FaultKind.UNKNOWN_REQUEST, FaultKind.FLOOD),
    "alive": (FaultKind.CRASH, FaultKind.DISCONNECT, FaultKind.STALLED, FaultKind.ABSENT),
}
SHOWN_PER_CHECK = 5
"""Fault lines shown per check (the count says how many more there were)."""


def under(profiles: Sequence[str]) -> str:
    """The profiles a check covers, in words: ``every rules profile`` or ``the bhoos rules``."""
    return "every rules profile" if set(profiles) == set(PROFILES) else f"the {listed(profiles)} rules"


@dataclasses.dataclass
class Battery:
    """What playing the profiles of a check gave: the checks, and what was played."""

    profiles: tuple[str, ...]
    start: Check
    checks: dict[str, Check]
    """The checks of the records, by key of :data:`GROUPS`."""
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




KIND_WORDS = {DecisionKind.CALL: "calls", DecisionKind.PLAY: "cards"}
"""A kind of decision, in the plural, in a student's words."""


def tally(battery: Battery, profile: str, folder: Path) -> None:
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
                for key, kinds in GROUPS.items():
                    if fault.kind in kinds:
                        where, played = _place(record, seat, fault.trick)
                        battery.failed(battery.checks[key], profile, fault_line(where, played, fault.detail), where)




_SUBJECTS: dict[str, tuple[DecisionKind, ...]] = {
    "calls": (DecisionKind.CALL,),
    "cards": (DecisionKind.PLAY,),
    "messages": (DecisionKind.CALL, DecisionKind.PLAY),
}
"""The checks of what the bot answers, by key of :data:`GROUPS`: the kinds of answer each needs to have seen."""


def _unplayed(battery: Battery) -> str:
    """The profiles of a check not played, or played in part, in words (empty: all were played)."""
    none = [p for p in battery.profiles if not battery.played_in.get(p)]
    part = [f"{battery.played_in[p]} of {battery.scheduled[p]} games under the {p} rules" for p in battery.profiles
            if 0 < battery.played_in.get(p, 0) < battery.scheduled[p]]
    words = ([f"not played under the {listed(none)} rules"] if none else []) + (
        [f"only {listed(part)} played"] if part else [])
    return ", and ".join(words)


def verdicts(battery: Battery, *, interrupted: bool = False) -> list[Check]:
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
            what = KIND_WORDS[battery.late_kind]
            check.lines = [*late, *([f"... and {more} more like these"] if more else []),
                           f"the check stopped after these {len(late)} {what} in a row past the deadline: a bot "
                           "this slow would keep you waiting a deadline per decision for the whole check"]
            check.passed = False
            check.first = check.first or battery.late[0][1]
        elif len(check.lines) > SHOWN_PER_CHECK:
            more = len(check.lines) - SHOWN_PER_CHECK
            check.lines = [*check.lines[:SHOWN_PER_CHECK], f"... and {more} more like these"]
        unanswered = [KIND_WORDS[kind] for kind in _SUBJECTS.get(key, ()) if not battery.answered.get(kind)]
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
        whole.lines.append(f"{battery.played} games under {under(battery.profiles)}, up to {TABLES} tables "
                           f"at once; about {battery.think / max(battery.decisions, 1):.1f} ms per decision")
    return [*checks, whole]


def moved_paths(checks: Sequence[Check], base: Path, kept: Path) -> None:
    """Each path into the games' temporary folder ``base`` that a check's lines name (a launched bot's log, in
    the reason it did not start), turned into the same path in ``kept``, where it still is once the check ends."""
    for check in checks:
        for old in dict.fromkeys((str(base), str(base.resolve()))):
            check.lines = [line.replace(old, str(kept)) for line in check.lines]


def name_logs(battery: Battery, checks: Sequence[Check], kept: Path) -> None:
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


def _counted(lines: list[str]) -> list[str]:
    """``lines`` with repeats (the retries of one decision) told once, with their count."""
    counts: dict[str, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    return [line if n == 1 else f"{line} ({n} times: refused and asked again)" for line, n in counts.items()]


def log_tail(log: Path, lines: int = 8) -> list[str]:
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
