"""The live leaderboard: a small web page of a running tournament, for the projector in class.

It shows what the event is doing (games done and planned, the bots present and absent, the tables in
play), the standings as they change and the latest faults, and refreshes itself: a small script of
its own asks for the board again every :data:`POLL_S` seconds (without scripts, the page reloads
every few seconds). It reads only what the running arena writes to its results folder: ``status.json``
(about once a second), the records (the standings of the complete games, recomputed when the records
grew, at most every :data:`STANDINGS_EVERY_S` seconds and never more than a tenth of the time, and
only while someone looks; the latest faults from the records' tail) and the manifest; the display
names come from the class roster, when the configuration names one.

Paths a server answers (:mod:`arena.web.live`): ``/`` the page (:func:`render_page`), ``/board`` the board
alone (:func:`render_board`, what the script fetches), ``/live.json`` the same as data. Every text a bot or a
student chose (names, versions, display names) is escaped, and the page runs no script but its own
(:data:`SCRIPT`, which the server's Content-Security-Policy names by its hash) and fetches nothing but the board.

A fault is shown by its kind and where it happened, never by its detail: a detail may name cards (the
hand of a bot that played an illegal card, or whatever a crashing bot put in its error), and while the
event runs the same deal set is still being played, at other tables and in other rotations, by bots
that could read the page. The details are in ``report.html`` when the event ends.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.core.faults import FaultKind
from arena.core.rules import Rules
from arena.core.scoring import tenths_per_point
from arena.errors import ArenaError
from arena.event.plan.status import BotState, Status, read_status
from arena.event.setup.roster import read_roster
from arena.rating.fairplay import memory_words
from arena.rating.html import ADVICE
from arena.rating.pages import Markup, render, script, style
from arena.rating.report import read_folder
from arena.rating.standing import NOT_RANKED_TITLE, Standing
from arena.rating.tables import podium, rank_text, unit_name
from arena.records.format import read_tail
from arena.records.store import ResultsStore

__all__ = ["FAULTS_SHOWN", "POLL_S", "SCRIPT", "Board", "BoardRow", "FaultLine", "Snapshot", "render_board",
           "render_page"]

POLL_S = 2.0
"""Seconds between two refreshes of the board in the browser."""
FAULTS_SHOWN = 8
"""The latest faults shown."""
TAIL_BYTES = 256 << 10
"""How much of the end of ``records.jsonl`` is read for the latest faults."""
STANDINGS_EVERY_S = 2.0
"""Shortest time between two computations of the standings (each reads every record)."""


@dataclasses.dataclass(frozen=True)
class BoardRow:
    """One bot's line of the standings on the board (scores in points, or DY points)."""

    bot: str
    display: str
    rank: int | None
    rank_range: tuple[int, int] | None
    """The ranks it could hold at 95 % (best, worst); none when it has no rank."""
    rank_text: str
    """The same as shown, ``1`` or ``2-4`` (``-`` when it has no rank)."""
    house: bool
    status: str
    reason: str
    games: int
    dup_per_game: float | None
    dup_low: float | None
    dup_high: float | None
    mean_total: float | None
    made_pct: float
    faults: int
    apart: str = ""
    """Why the bot is not ranked, in words (its standings line's ``not_ranked``); empty for a ranked bot."""
    absent_games: int = 0
    """Games whose seat the fallback player took for it because it was not there."""
    memory: str = ""
    """Its memory test's flag in words when it did significantly better on deals it had seen before, else empty."""


@dataclasses.dataclass(frozen=True)
class FaultLine:
    """One of the latest faults, where it happened; ``count`` merges the retries of one decision."""

    bot: str
    display: str
    game: str
    round: int
    trick: int | None
    """The trick, 1-13 as people count (``None`` during the calls)."""
    kind: str
    count: int = 1


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """Everything the board shows at one moment."""

    title: str
    status: Status | None
    live: bool
    """An arena is running and refreshing the status."""
    displays: Mapping[str, str]
    """Bot -> display name (the roster's students who have one)."""
    unit: str
    standings: Sequence[BoardRow]
    faults: Sequence[FaultLine]
    """The latest faults, newest first (a bot's absence is not among them: it is one line per bot, from the
    standings' ``absent_games``)."""
    podium: str = ""
    """The winner and the runner-up once the event has ended (:func:`~arena.rating.report.podium`, with display
    names), else empty."""

    def shown(self, bot: str) -> str:
        """The name the board shows for a bot: its display name and, in brackets, its bot name."""
        return _named(bot, self.displays)

    def to_dict(self) -> dict[str, Any]:
        """The snapshot as JSON-ready data (``/live.json``)."""
        status = self.status
        return {
            "title": self.title, "live": self.live, "unit": self.unit,
            "status": None if status is None else status.to_dict(), "displays": dict(self.displays),
            "standings": [dataclasses.asdict(row) for row in self.standings],
            "faults": [dataclasses.asdict(fault) for fault in self.faults], "podium": self.podium,
        }


class Board:
    """Makes snapshots of a results folder for the board, re-reading each file only when it changed."""

    def __init__(self, folder: Path, roster: Path | None = None, title: str = "") -> None:
        self.folder = folder
        self.roster = roster
        self.title = title or folder.name
        self._lock = threading.Lock()
        self._store = ResultsStore(folder)
        self._displays: tuple[object, dict[str, str]] = (None, {})
        self._standings: tuple[object, Rules, list[Standing]] = (None, Rules.profile(), [])
        """What the standings were computed from, the rules their scores are counted under, and the rows."""
        self._computed = -math.inf
        self._cost = 0.0
        self._faults: tuple[object, list[FaultLine]] = (None, [])

    def snapshot(self) -> Snapshot:
        """What the board shows now."""
        with self._lock:  # one reader of the files at a time, whatever the browsers ask
            try:
                status = read_status(self.folder)
            except ArenaError:  # a status being replaced, or damaged: shown as unknown, never an error page
                status = None
            displays = self._read_displays()
            rules, rows = self._read_standings()
            faults = self._read_faults()
        per_point = tenths_per_point(rules)
        standings = [dataclasses.replace(_row(row, per_point, displays), memory=memory_words(
            _named(row.bot, displays), row.memory_test, rules) if row.memory_test.flagged else "") for row in rows]
        faults = [dataclasses.replace(f, display=displays.get(f.bot, "")) for f in faults]
        title = status.tournament if status is not None else self.title
        # The rule of who won is the standings' own; only the names are the ones the class knows.
        top = podium([dataclasses.replace(row, bot=_named(row.bot, displays)) for row in rows], rules)
        return Snapshot(title, status, status is not None and status.live, displays, unit_name(rules), standings,
                        faults, top)

    def _read_displays(self) -> dict[str, str]:
        if self.roster is None:
            return {}
        stamp = _stamp(self.roster)
        if stamp != self._displays[0]:
            try:
                names = read_roster(self.roster).display_names()
            except ArenaError:  # a roster being edited: the bots' own names until it reads again
                names = {}
            self._displays = (stamp, names)
        return self._displays[1]

    def _read_standings(self) -> tuple[Rules, list[Standing]]:
        stamp = (_stamp(self._store.records_path), _stamp(self._store.manifest_path))
        now = time.monotonic()
        if stamp != self._standings[0] and now - self._computed >= max(STANDINGS_EVERY_S, 10 * self._cost):
            try:
                report = read_folder(self.folder)
            except (ArenaError, OSError):  # a folder being replaced (--fresh): the standings shown stay
                pass
            else:
                self._standings = (stamp, report.rules, report.standings)
            self._computed = time.monotonic()
            self._cost = self._computed - now
        return self._standings[1:]

    def _read_faults(self) -> list[FaultLine]:
        path = self._store.records_path
        stamp = _stamp(path)
        if stamp != self._faults[0]:
            self._faults = (stamp, _latest_faults(path))
        return self._faults[1]


def _stamp(path: Path) -> object:
    """What tells that a file changed: its size and time (``None`` when it is missing)."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def _points(tenths: float, per_point: int) -> float | None:
    return tenths / per_point if math.isfinite(tenths) else None


def _row(row: Standing, per_point: int, displays: Mapping[str, str]) -> BoardRow:
    return BoardRow(
        bot=row.bot, display=displays.get(row.bot, ""), rank=row.rank, rank_range=row.rank_range,
        rank_text=rank_text(row), house=row.house,
        status=row.status,
        reason=row.reason, games=row.games, dup_per_game=_points(row.dup_per_game, per_point),
        dup_low=_points(row.dup_low, per_point), dup_high=_points(row.dup_high, per_point),
        mean_total=_points(row.mean_total, per_point), made_pct=row.made_pct, faults=row.faults,
        apart=row.not_ranked, absent_games=row.faults_by_kind.get(FaultKind.ABSENT.value, 0),
    )


def _named(bot: str, displays: Mapping[str, str]) -> str:
    """``Alice Adhikari (alice)`` for a student with a display name, else the bot's name."""
    display = displays.get(bot, "")
    return f"{display} ({bot})" if display and display != bot else bot


def _latest_faults(path: Path) -> list[FaultLine]:
    """The latest faults of the records' last :data:`TAIL_BYTES`, newest first."""
    found: list[FaultLine] = []
    for record in read_tail(path, TAIL_BYTES):
        for fault in record.faults:
            if fault.kind is FaultKind.ABSENT:  # a fault per game of an absent bot: the board says it once
                continue
            entry = FaultLine(record.seats[fault.seat] if 0 <= fault.seat < 4 else "?", "", record.game,
                              fault.round_number, None if fault.trick is None else fault.trick + 1, fault.kind.value)
            if found and dataclasses.replace(found[-1], count=1) == entry:
                found[-1] = dataclasses.replace(found[-1], count=found[-1].count + 1)
            else:
                found.append(entry)
    return found[::-1][:FAULTS_SHOWN]


# -- the page ----------------------------------------------------------------------------------------


SCRIPT = script("live.js", poll_ms=int(POLL_S * 1000))
"""Fetches the board again every :data:`POLL_S` seconds and puts it in place (the server escaped it)."""


def _state(snapshot: Snapshot) -> tuple[str, str]:
    """The state's class and words."""
    status = snapshot.status
    if status is None:
        return "starting", "starting"
    if status.state in ("starting", "running", "waiting") and not snapshot.live:
        return "ended", "not running"
    return status.state, status.state


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def render_board(snapshot: Snapshot) -> str:
    """The board as HTML (the page's ``<main>``), every text escaped."""
    status = snapshot.status
    ended = _ended(snapshot)
    connected = {session.bot for session in status.sessions} if status is not None else set()
    return render(
        "board.html", snapshot=snapshot, status=status, state=_state(snapshot), ended=ended,
        waiting=_waiting(snapshot), not_ranked_title=NOT_RANKED_TITLE, advice=ADVICE, connected=connected,
        updated=time.strftime("%H:%M:%S", time.localtime(status.updated)) if status is not None else "",
        ranked=[row for row in snapshot.standings if not row.apart],
        apart=[row for row in snapshot.standings if row.apart],
        tables=status.tables if status is not None and snapshot.live else [],
        bots_count=_bots_count(snapshot, connected),
        absent_rows=sorted((row for row in snapshot.standings if row.absent_games), key=lambda row: row.bot),
        signed=_signed, status_cell=_status_cell, how=_how, any_status=_any_status,
    )


def _ended(snapshot: Snapshot) -> bool:
    """True once the event has ended: every game played (or a sequential test decided)."""
    return snapshot.status is not None and snapshot.status.state == "finished"


def _waiting(snapshot: Snapshot) -> str:
    """``Waiting for Zoë Ortiz (zoe): never connected in 5 s.`` while the running arena waits for bots, else empty."""
    status = snapshot.status
    if status is None or not snapshot.live or not status.awaited:
        return ""
    reasons = {bot.bot: bot.reason for bot in status.bots}
    return "Waiting for " + "; ".join(snapshot.shown(bot) + (f": {reasons[bot]}" if reasons.get(bot) else "")
                                      for bot in status.awaited) + "."


def _status_cell(row: BoardRow) -> str:
    """Why a bot is listed apart, and its status when it is news (a bot playing, or finished, says nothing)."""
    news = "" if row.status in ("playing", "finished") else row.status + (f": {row.reason}" if row.reason else "")
    if row.apart and news and news != row.apart:
        return f"{row.apart} ({news})"
    return row.apart or news


def _any_status(rows: Sequence[BoardRow]) -> bool:
    """True when a row has a status to say: else the table has no status column (after the end every ranked bot
    is simply finished)."""
    return any(_status_cell(row) for row in rows)


_HOW = {"remote": "connects over the network", "command": "launched by the arena", "stdio": "launched by the arena",
        "bhoos": "launched by the arena", "bhoos_url": "over HTTP", "python": "in the arena"}
"""How a bot of each kind plays, in words (a roster student's submission is launched by the arena)."""


def _how(bot: BotState, connected: set[str]) -> str:
    if bot.kind == "remote":
        return "connected" if bot.bot in connected else "not connected"
    return _HOW.get(bot.kind, bot.kind)


def _bots_count(snapshot: Snapshot, connected: set[str]) -> str:
    """``3 of 5 present; 1 of 2 connected over the network`` while the event runs; ``5 bots`` after."""
    status = snapshot.status
    if status is None:
        return ""
    if _ended(snapshot) or not snapshot.live:
        return f"{len(status.bots)} bots"
    present = sum(1 for bot in status.bots if bot.state == "playing")
    remote = [bot for bot in status.bots if bot.kind == "remote"]
    online = sum(1 for bot in remote if bot.bot in connected)
    return f"{present} of {len(status.bots)} present" + (
        f"; {online} of {len(remote)} connected over the network" if remote else "")


def render_page(snapshot: Snapshot) -> str:
    """The whole page: the board, and the script that refreshes it."""
    return render("live.html", title=snapshot.title, style=style("live.css"), board=Markup(render_board(snapshot)),
                  script=SCRIPT)
