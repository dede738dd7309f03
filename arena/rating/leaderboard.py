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
student chose (names, versions, display names) is escaped, and the page's Content-Security-Policy
(:data:`POLICY`) lets no script run but its own and fetch nothing but the board.

A fault is shown by its kind and where it happened, never by its detail: a detail may name cards (the
hand of a bot that played an illegal card, or whatever a crashing bot put in its error), and while the
event runs the same deal set is still being played, at other tables and in other rotations, by bots
that could read the page. The details are in ``report.html`` when the event ends.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import html
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
from arena.event.roster import read_roster
from arena.event.status import Status, read_status
from arena.event.store import ResultsStore
from arena.players.records import read_tail
from arena.rating.html import ADVICE
from arena.rating.ratings import NOT_RANKED_TITLE, Standing, not_ranked_because
from arena.rating.report import podium, read_folder, unit_name

__all__ = ["FAULTS_SHOWN", "POLICY", "POLL_S", "Board", "BoardRow", "FaultLine", "Snapshot", "render_board",
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
    """Why the bot is not ranked (:func:`~arena.rating.ratings.not_ranked_because`); empty for a ranked bot."""
    absent_games: int = 0
    """Games whose seat the fallback player took for it because it was not there."""


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
        standings = [_row(row, per_point, displays) for row in rows]
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
        bot=row.bot, display=displays.get(row.bot, ""), rank=row.rank, house=row.house, status=row.status,
        reason=row.reason, games=row.games, dup_per_game=_points(row.dup_per_game, per_point),
        dup_low=_points(row.dup_low, per_point), dup_high=_points(row.dup_high, per_point),
        mean_total=_points(row.mean_total, per_point), made_pct=row.made_pct, faults=row.faults,
        apart=not_ranked_because(row), absent_games=row.faults_by_kind.get(FaultKind.ABSENT.value, 0),
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


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


_SCRIPT = (
    "(function(){var board=document.getElementById('board'),note=document.getElementById('note');"
    "function tick(){fetch('board',{cache:'no-store'}).then(function(r){if(!r.ok)throw new Error(r.status);"
    "return r.text();}).then(function(t){board.innerHTML=t;note.textContent='';})"
    ".catch(function(){note.textContent='The arena cannot be reached (it has ended, or stopped): the last "
    "board received is shown. The final standings are in report.html in the results folder.';})"
    f".finally(function(){{setTimeout(tick,{int(POLL_S * 1000)});}});}}"
    f"setTimeout(tick,{int(POLL_S * 1000)});}})();"
)
"""Fetches the board again every :data:`POLL_S` seconds and puts it in place (the server escaped it)."""
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
POLICY = (f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{_SCRIPT_HASH}'; connect-src 'self'; "
          "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""No script but the page's own, nothing fetched but the board, whatever a bot calls itself."""

_STYLE = """
:root{--ink:#111;--muted:#555;--line:#c8c8c8;--band:#eef1f6;--accent:#1f4e99;--ok:#1d7a34;--bad:#b3261e;--warn:#8a5a00}
*{box-sizing:border-box}
body{font:20px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:var(--ink);margin:0;
 padding:.6rem 1.2rem 1rem;background:#fff}
h1{font-size:2.1rem;margin:.2rem 0}h2{font-size:1.3rem;margin:.8rem 0 .3rem;color:var(--accent)}
.meta{color:var(--muted);margin:.1rem 0 .4rem}.note{color:var(--muted);font-size:.8rem}
.state{display:inline-block;padding:.05rem .6rem;border-radius:1rem;font-weight:700;color:#fff;background:var(--muted)}
.state.running{background:var(--ok)}.state.waiting,.state.starting{background:var(--warn)}
.state.finished{background:var(--accent)}.state.stopped,.state.interrupted,.state.ended{background:var(--bad)}
progress{width:14rem;height:1rem;vertical-align:middle}
.grid{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:1.4rem;align-items:start}
@media (max-width:1280px){.grid{grid-template-columns:1fr}}
.grid>*{min-width:0;overflow-x:auto}
@media (max-width:600px){body{font-size:16px;padding:.4rem .6rem}h1{font-size:1.6rem}}
.podium{font-size:1.25rem;margin:.3rem 0 .2rem}.waiting{color:var(--warn);font-weight:600}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:.15rem .4rem;text-align:right;vertical-align:top}
th{background:var(--band);font-size:.85rem}td.text,th.text{text-align:left}
table.standings td{font-size:1.05rem;white-space:nowrap}table.standings td.rank{font-weight:700}
table.standings td.why{white-space:normal;font-size:.85rem}table.standings td.who{white-space:normal}
.who small{color:var(--muted);font-size:.75em;margin-left:.3rem}
tr.apart td{color:var(--muted)}
ul.bots{list-style:none;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:.3rem}
ul.absent{margin:.2rem 0 .4rem;padding-left:1.2rem;font-size:.9rem}
ul.bots li{padding:.05rem .5rem;border-radius:.3rem;border:1px solid var(--line);font-size:.85rem}
ul.bots li.playing{border-color:var(--ok);color:var(--ok)}ul.bots li.absent{border-color:var(--warn);color:var(--warn)}
ul.bots li.broken,ul.bots li.withdrawn,ul.bots li.disqualified{border-color:var(--bad);color:var(--bad)}
table.small td,table.small th{font-size:.8rem}td.detail{text-align:left;overflow-wrap:anywhere}
"""


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


def _who(bot: str, display: str) -> str:
    """A student's display name and, smaller and in brackets, the bot's name (words apart in any copy of the text)."""
    return f"{_esc(display)} <small>({_esc(bot)})</small>" if display and display != bot else _esc(bot)


def render_board(snapshot: Snapshot) -> str:
    """The board as HTML (the page's ``<main>``), every text escaped."""
    status = snapshot.status
    css, words = _state(snapshot)
    head = [f"<h1>{_esc(snapshot.title)}</h1>", f'<p class="meta"><span class="state {_esc(css)}">{_esc(words)}</span>']
    if status is not None:
        planned = max(status.games_planned, status.games_done)
        head.append(f' games <strong id="games-done">{status.games_done}</strong> of {planned} '
                    f'<progress value="{status.games_done}" max="{max(planned, 1)}"></progress>')
        if status.address and snapshot.live:
            head.append(f" · arena at <code>{_esc(status.address)}</code>")
        head.append(f" · updated {_esc(time.strftime('%H:%M:%S', time.localtime(status.updated)))}")
        if status.message and snapshot.live:
            head.append(f"<br>{_esc(status.message)}")
        if status.test:
            head.append(f"<br>sequential test: {_esc(status.test)}")
    head.append("</p>")
    if _ended(snapshot):
        top = snapshot.podium or "no bot is ranked."
        head.append(f'<p class="podium"><strong>The event has ended.</strong> {_esc(top)}</p>')
    elif snapshot.standings and _waiting(snapshot):
        head.append(f'<p class="waiting">{_esc(_waiting(snapshot))}</p>')
    return ("<header>" + "".join(head) + "</header>" + '<div class="grid"><section id="standings">'
            + _standings(snapshot) + "</section><aside>" + _tables(snapshot) + _bots(snapshot) + _faults(snapshot)
            + "</aside></div>")


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


def _standings_table(snapshot: Snapshot, rows: Sequence[BoardRow], apart: bool) -> str:
    said = any(_status_cell(row) for row in rows)  # after the end every ranked bot is simply finished: no column
    last = f'<th class="text">{"why not ranked" if apart else "status"}</th>' if said else ""
    out = [f'<table class="standings{" apart" if apart else ""}"><thead><tr><th>#</th><th class="text">bot</th>'
           "<th>games</th><th>points per game</th><th>95% interval</th><th>mean total</th><th>calls made %</th>"
           "<th>faults</th>"
           f"{last}</tr></thead><tbody>"]
    for row in rows:
        interval = (f"[{_signed(row.dup_low)}, {_signed(row.dup_high)}]"
                    if row.dup_low is not None or row.dup_high is not None else "-")
        out.append(
            f'<tr data-bot="{_esc(row.bot)}">'
            f'<td class="rank">{row.rank if row.rank is not None else "-"}</td>'
            f'<td class="text who">{_who(row.bot, row.display)}{" (house)" if row.house else ""}</td>'
            f'<td class="games">{row.games}</td><td>{_signed(row.dup_per_game)}</td><td>{interval}</td>'
            f"<td>{_signed(row.mean_total)}</td><td>{row.made_pct:.0f}</td><td>{row.faults}</td>"
            + (f'<td class="text why">{_esc(_status_cell(row))}</td>' if said else "") + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _standings(snapshot: Snapshot) -> str:
    rows = snapshot.standings
    out = ["<h2>Standings</h2>"]
    if not rows:
        soon = snapshot.status is not None and snapshot.status.games_done > 0
        waiting = _waiting(snapshot)
        return out[0] + ("<p>The standings are on their way.</p>" if soon else
                         "<p>No complete game yet: the standings appear after the first games.</p>") + (
            f'<p class="waiting">{_esc(waiting)}</p>' if waiting else "")
    ranked = [row for row in rows if not row.apart]
    apart = [row for row in rows if row.apart]
    if ranked:
        out.append(_standings_table(snapshot, ranked, apart=False))
    if apart:
        out.append(f"<h3>{_esc(NOT_RANKED_TITLE)}</h3>" + _standings_table(snapshot, apart, apart=True))
    out.append(f"<p class=\"note\">Scores in {_esc(snapshot.unit)}: points per game is the duplicate score (how much "
               "better than the others who held the same cards), with its 95% interval; calls made % the rounds whose "
               "call was made. From the complete games. Ranked means played: a bot the fallback player played for "
               "(it was not there) is listed apart, and so are the house bots that fill the tables.</p>")
    return "".join(out)


def _tables(snapshot: Snapshot) -> str:
    status = snapshot.status
    tables = status.tables if status is not None and snapshot.live else []
    if not tables and (_ended(snapshot) or not snapshot.live):
        return ""  # nothing is played any more: no empty section on the projector
    out = [f"<h2>Tables in play ({len(tables)})</h2>"]
    if not tables:
        return out[0] + "<p class=\"note\">None right now.</p>"
    out.append('<table class="small"><thead><tr><th class="text">table</th><th class="text">game</th>'
               '<th class="text">seats</th><th>rounds</th></tr></thead><tbody>')
    for table in tables:
        seats = ", ".join(_who(bot, snapshot.displays.get(bot, "")) for bot in table.seats)
        fallback = f" (fallback for {_esc(', '.join(table.fallback))})" if table.fallback else ""
        out.append(f'<tr><td class="text">{_esc(table.table)}</td><td class="text">{_esc(table.game)}</td>'
                   f'<td class="text">{seats}{fallback}</td><td>{table.rounds_done}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


_HOW = {"remote": "connects over the network", "command": "launched by the arena", "stdio": "launched by the arena",
        "bhoos": "launched by the arena", "bhoos_url": "over HTTP", "python": "in the arena"}
"""How a bot of each kind plays, in words (a roster student's submission is launched by the arena)."""


def _how(kind: str, connected: bool) -> str:
    if kind == "remote":
        return "connected" if connected else "not connected"
    return _HOW.get(kind, kind)


def _bots(snapshot: Snapshot) -> str:
    status = snapshot.status
    if status is None:
        return ""
    connected = {session.bot for session in status.sessions}
    if _ended(snapshot) or not snapshot.live:
        count = f"{len(status.bots)} bots"
    else:
        present = sum(1 for bot in status.bots if bot.state == "playing")
        remote = [bot for bot in status.bots if bot.kind == "remote"]
        online = sum(1 for bot in remote if bot.bot in connected)
        count = f"{present} of {len(status.bots)} present" + (
            f"; {online} of {len(remote)} connected over the network" if remote else "")
    out = [f"<h2>Bots ({count})</h2><ul class=\"bots\">"]
    for bot in status.bots:
        why = bot.state + (f": {bot.reason}" if bot.reason else "")
        who = _who(bot.bot, snapshot.displays.get(bot.bot, ""))
        out.append(f'<li class="{_esc(bot.state)}" title="{_esc(why)}">{who}'
                   f' · <small>{_esc(_how(bot.kind, bot.bot in connected))}</small></li>')
    colours = "" if _ended(snapshot) else (" Green: present; amber: absent; red: broken, withdrawn or "
                                           "disqualified.")
    out.append("</ul><p class=\"note\">Launched by the arena: a submitted bot (or a command of the configuration) "
               "that the arena starts itself; connected / not connected: a bot that connects over the network with "
               f"its token; in the arena: a bot inside the arena's own process.{colours}</p>")
    return "".join(out)


def _faults(snapshot: Snapshot) -> str:
    out = ['<section id="faults"><h2>Latest faults</h2>']
    absent = sorted((row for row in snapshot.standings if row.absent_games), key=lambda row: row.bot)
    if absent:
        out.append('<ul class="absent">' + "".join(
            f"<li>{_who(row.bot, row.display)}: not there for {row.absent_games} game"
            f"{'s' if row.absent_games != 1 else ''}; the fallback player took its seats</li>" for row in absent)
            + "</ul>")
    if not snapshot.faults:
        out.append("<p class=\"note\">No other fault in the latest games.</p>" if absent else
                   "<p class=\"note\">None in the latest games.</p>")
        return "".join(out) + "</section>"
    out.append('<table class="small"><thead><tr><th class="text">bot</th><th class="text">kind</th>'
               '<th class="text">where</th><th class="text">what</th></tr></thead><tbody>')
    for fault in snapshot.faults:
        where = f"{fault.game}, round {fault.round}" + (f", trick {fault.trick}" if fault.trick is not None else "")
        times = f" ({fault.count} times)" if fault.count > 1 else ""
        out.append(f'<tr><td class="text">{_who(fault.bot, fault.display)}</td><td class="text">{_esc(fault.kind)}'
                   f'{times}</td><td class="text">{_esc(where)}</td>'
                   f'<td class="detail">{_esc(ADVICE.get(fault.kind, ""))}</td></tr>')
    out.append("</tbody></table><p class=\"note\">What each fault was in detail (it may name cards of a deal still "
               "being played) is in report.html when the event ends.</p></section>")
    return "".join(out)


def render_page(snapshot: Snapshot) -> str:
    """The whole page: the board, and the script that refreshes it."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_esc(snapshot.title)}: live</title>"
            '<noscript><meta http-equiv="refresh" content="5"></noscript>'
            f"<style>{_STYLE}</style></head>\n<body><main id=\"board\">{render_board(snapshot)}</main>"
            f'<p id="note" class="note"></p><script>{_SCRIPT}</script></body></html>\n')
