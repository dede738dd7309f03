"""The report of a results folder as one self-contained web page, ``report.html``: for a projector in
class, and for each student to read their bot's feedback.

The page holds, from the folder's records and manifest alone, in the standings' one pass over the
records (:func:`~arena.rating.report.read_folder`, so every number is the standings' own):

- the standings, every column of the text standings with its interval, and their notes;
- each bot's duplicate score with its 95 % interval, and the event's course round by round (each
  bot's duplicate score so far and its OpenSkill ordinal after each schedule round), as inline SVG;
- the head-to-head matrix as a heat map;
- calling accuracy and faults by bot;
- a section per bot: its faults with the game, round, trick and detail of each (what to fix);
- replays of some games, cards drawn as cards: the games with faults (a few per bot) and the first
  game of the first blocks. ``callbreak-arena replay DIR GAME`` prints any other.

What it holds is bounded whatever the size of the event (:data:`FAULTS_LISTED`,
:data:`FAULT_REPLAYS_PER_BOT`, :data:`FAULT_REPLAYS`, :data:`SAMPLE_BLOCKS`, :data:`CHART_POINTS`).

Bots are hostile: every text that comes from the records or the manifest (names, versions, fault
details, game ids) is escaped, and the page's Content-Security-Policy lets no script run but its
own, and load nothing at all: it opens from disk with no network. Its one script (opening a replay
that a link points to) is an optional nicety; everything is readable without it.
"""

from __future__ import annotations

import dataclasses
import html
import math
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.core.cards import Card, Hand, Suit
from arena.core.rules import Rules
from arena.core.scoring import format_score, tenths_per_point
from arena.errors import ArenaError, CardError, RecordsError
from arena.event.manifest import Manifest
from arena.event.roster import read_roster
from arena.event.status import read_status
from arena.event.store import ResultsStore, write_atomic
from arena.players.records import GameRecords, RoundRecord
from arena.rating.pages import Markup, policy, render, script, style
from arena.rating.plots import Interval, Series, color, dash, interval_plot, line_chart
from arena.rating.report import HEAD_TO_HEAD_FILE, FolderReport, measures, read_folder, write_standings
from arena.rating.standing import NOT_RANKED_TITLE, Comparison, RoundMark, Standing, listed_apart
from arena.rating.tables import (
    SEAT_HEADERS,
    STANDINGS_HEADERS,
    matrix_cell,
    podium,
    render_comparison,
    seat_cells,
    standings_cells,
    standings_notes,
    unit_name,
)

__all__ = [
    "CHART_POINTS",
    "FAULTS_LISTED",
    "FAULT_REPLAYS",
    "FAULT_REPLAYS_PER_BOT",
    "REPORT_FILE",
    "SAMPLE_BLOCKS",
    "html_report",
    "write_html_report",
    "write_report_files",
]

REPORT_FILE = "report.html"
"""The page's name in a results folder."""
FAULTS_LISTED = 200
"""Faults listed one by one per bot, the first in schedule order (all are counted)."""
FAULT_REPLAYS_PER_BOT = 3
"""Games with a fault of the bot replayed, per bot: its first in schedule order."""
FAULT_REPLAYS = 60
"""Games with faults replayed in all, at most."""
SAMPLE_BLOCKS = 8
"""Other games replayed: the first game of each of the first blocks in schedule order."""
MATRIX_CELLS_LIMIT = 30
"""The heat map is drawn for fields up to this size (every pair is in ``head_to_head.csv``)."""
CHART_POINTS = 300
"""Points per line of the event's course, about, at most (a long event is shown at evenly spaced rounds)."""

ADVICE = {
    "illegal_call": "a call outside the allowed range: answer with one of the calls the request lists",
    "illegal_card": "a card the bot does not hold, may not play now, or not a card at all: answer with one of the "
                    "legal cards the request lists (callbreak-arena rules legal explains any case)",
    "late": "no answer within the deadline: the arena played the fallback; answer sooner",
    "malformed": "a message the arena could not use (empty, or a second hello)",
    "out_of_turn": "an answer of the wrong kind: a card for a call request, or a call for a play request",
    "unknown_request": "an answer to a request that was never sent or is already closed: answer each request "
                       "once, with its request id",
    "disconnect": "the connection ended mid-game and did not come back in time: the fallback played the rest",
    "crash": "the bot raised an error or its process died: the detail says what it raised",
    "stalled": "the connection stopped taking messages, or requests went unanswered: the arena dropped it",
    "flood": "too many stray messages: the arena closed the connection",
    "absent": "the bot was not there: the fallback player took its seat for the whole game",
}
"""What a fault kind means for the bot's author (``docs/bots.md`` has the rules)."""

GLOSSARY = {
    "rank": "the place in the ranking, by points per game; bots listed apart have none",
    "bot": "the bot, under its student's display name when the class roster gives one",
    "points per game": "the duplicate score: what the bot scored per game beyond the other bots that played the "
                       "very same cards in the same seat (0 is the field's average); the ranking's number",
    "95% interval": "how sure the points per game are: if two bots' intervals do not overlap, their order is very "
                    "unlikely to be luck (wide with few deal sets; none with one)",
    "mean round": "the plain mean score per round",
    "mean total": "the plain mean game total; it breaks ties in points per game",
    "place points": "3, 2, 1 or 0 points for finishing 1st to 4th at the table, per game",
    "matchpoints %": "the share of the other bots' results on the same hands that it beat (50 is average), with "
                     "the half-width of its 95% interval",
    "skill mu": "an OpenSkill rating from the places at the table: the estimated skill",
    "skill sigma": "the OpenSkill rating's uncertainty",
    "skill ordinal": "mu − 3 sigma: a cautious OpenSkill rating, a second opinion on who finishes ahead",
    "calls made %": "rounds in which it took at least the tricks it called",
    "call error": "the mean distance between the tricks it took and its call",
    "overtricks": "tricks taken beyond the call, per round",
    "over/under %": "rounds it called too high (missed the call) / too low (took more)",
    "games": "complete games it played",
    "fallback %": "the share of its calls and cards the arena made for it (late, illegal, or it was not there)",
    "faults": "its faults by kind (each is explained in its own section below)",
    "status": "finished, playing, absent, withdrawn or disqualified, and why a bot is not ranked",
}
"""What each column of the standings means, in a line: the glossary under the table (the page must explain
itself: its readers have the page, not the project's documentation)."""

_SCRIPT = script("report.js")
"""Opens the replay a link points to (browsers that do not run it show the replay's summary)."""
_POLICY = policy(_SCRIPT)
"""Nothing is fetched, and no script runs but the page's own, whatever a record holds."""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _key(record: RoundRecord) -> tuple[int, int, int, int]:
    return record.schedule_round, record.group, record.deal_set, record.rotation


@dataclasses.dataclass
class _FaultEntry:
    """A fault of a bot, where it happened, with its repeats: the same answer refused again on the
    retries of one decision is one entry."""

    order: tuple[int, ...]
    game: str
    seat: int
    round: int
    trick: int | None
    kind: str
    detail: str
    fallback: str | None
    count: int = 1

    def repeats(self, earlier: _FaultEntry) -> bool:
        """True when this is ``earlier`` again, on a retry of the same decision (no fallback played yet)."""
        return earlier.fallback is None and (self.game, self.seat, self.round, self.trick, self.kind,
                                             self.detail) == (earlier.game, earlier.seat, earlier.round,
                                                              earlier.trick, earlier.kind, earlier.detail)


def _round_faults(game: str, key: tuple[int, int, int, int], record: RoundRecord) -> list[_FaultEntry]:
    """The faults of one round in order, a fault repeated on the retries of one decision merged."""
    out: list[_FaultEntry] = []
    for index, fault in enumerate(record.faults):
        trick = -1 if fault.trick is None else fault.trick
        entry = _FaultEntry((*key, record.round, trick, index), game, fault.seat, fault.round_number, fault.trick,
                            fault.kind.value, fault.detail, fault.fallback)
        earlier = next((e for e in reversed(out) if e.seat == entry.seat), None)
        if earlier is not None and entry.repeats(earlier):
            earlier.count += 1
            earlier.fallback = entry.fallback
        else:
            out.append(entry)
    return out


def _keep_first(items: list[Any], limit: int, order: Callable[[Any], Any]) -> None:
    """Keeps the ``limit`` first of ``items`` by ``order``, trimming only when they are twice as many
    (so that gathering stays linear in the games read)."""
    if len(items) > 2 * limit:
        items.sort(key=order)
        del items[limit:]


def _by_order(entry: _FaultEntry) -> tuple[int, ...]:
    return entry.order


def _by_key(item: tuple[tuple[int, int, int, int], GameRecords]) -> tuple[int, int, int, int]:
    return item[0]


class _Gathered:
    """What the page shows beyond the standings, gathered game by game in the standings' pass, bounded."""

    def __init__(self) -> None:
        self.rounds = 0
        """Schedule rounds scored."""
        self._marks: list[tuple[int, RoundMark]] = []
        """Every ``stride``-th round scored, with its position (1-based): at most :data:`CHART_POINTS`."""
        self._stride = 1
        self._last: tuple[int, RoundMark] | None = None
        self.games = 0
        self.faults: dict[str, list[_FaultEntry]] = {}
        self.versions: dict[str, list[str]] = {}
        self._fault_games: dict[str, list[tuple[tuple[int, int, int, int], GameRecords]]] = {}
        self._samples: dict[tuple[int, int, int], tuple[int, GameRecords]] = {}

    def add_round(self, mark: RoundMark) -> None:
        self.rounds += 1
        self._last = (self.rounds, mark)
        if (self.rounds - 1) % self._stride:
            return
        self._marks.append(self._last)
        if len(self._marks) > CHART_POINTS:  # keep every other one: still evenly spaced, memory bounded
            self._stride *= 2
            self._marks = [(at, kept) for at, kept in self._marks if (at - 1) % self._stride == 0]

    def marks(self) -> list[tuple[int, RoundMark]]:
        """The rounds to draw, evenly spaced, and the last, with their positions (1-based)."""
        if self._last is None or (self._marks and self._marks[-1][0] == self._last[0]):
            return list(self._marks)
        return [*self._marks, self._last]

    def add_game(self, game: GameRecords) -> None:
        self.games += 1
        key = _key(game.first)
        seats = game.seats
        found: dict[str, list[_FaultEntry]] = {}
        for record in game.rounds:
            for entry in _round_faults(game.game, key, record):
                found.setdefault(seats[entry.seat], []).append(entry)
        for bot, entries in found.items():
            listed = self.faults.setdefault(bot, [])
            listed.extend(entries)
            _keep_first(listed, FAULTS_LISTED, _by_order)
        for bot in found:
            chosen = self._fault_games.setdefault(bot, [])
            chosen.append((key, game))
            _keep_first(chosen, FAULT_REPLAYS_PER_BOT, _by_key)
        block = key[:3]
        held = self._samples.get(block)
        if held is None or key[3] < held[0]:
            self._samples[block] = (key[3], game)
            if len(self._samples) > 2 * SAMPLE_BLOCKS:
                for extra in sorted(self._samples)[SAMPLE_BLOCKS:]:
                    del self._samples[extra]
        for seat, version in enumerate(game.final.versions):
            seen = self.versions.setdefault(seats[seat], [])
            if version and version not in seen and len(seen) < 5:
                seen.append(version)

    def replays(self) -> list[tuple[GameRecords, list[str]]]:
        """The games to replay in schedule order, each with why it is shown."""
        why: dict[str, list[str]] = {}
        games: dict[str, tuple[tuple[int, int, int, int], GameRecords]] = {}
        picked = sorted(((key, bot, game) for bot, chosen in self._fault_games.items()
                         for key, game in sorted(chosen, key=_by_key)[:FAULT_REPLAYS_PER_BOT]),
                        key=lambda item: (item[0], item[1]))
        for key, bot, game in picked:
            if game.game not in games and len(games) >= FAULT_REPLAYS:
                continue
            games[game.game] = (key, game)
            why.setdefault(game.game, []).append(f"the faults of {bot}")
        for block in sorted(self._samples)[:SAMPLE_BLOCKS]:
            rotation, game = self._samples[block]
            games.setdefault(game.game, ((*block, rotation), game))
            why.setdefault(game.game, []).append(f"the first game of block {game.block}")
        return [(game, why[game.game]) for _, game in sorted(games.values(), key=lambda item: item[0])]

    def listed_faults(self, bot: str) -> list[_FaultEntry]:
        return sorted(self.faults.get(bot, []), key=_by_order)[:FAULTS_LISTED]


# -- pieces of the page --------------------------------------------------------------------------


class _Page:
    """The page under construction, with what every part needs."""

    def __init__(self, folder: Path, report: FolderReport, gathered: _Gathered, manifest: Manifest | None,
                 displays: Mapping[str, str] | None = None) -> None:
        self.folder = folder
        self.report = report
        self.gathered = gathered
        self.manifest = manifest
        self.rules: Rules = report.rules
        self.per_point = tenths_per_point(report.rules)
        self.unit = unit_name(report.rules)
        self.anchors = {row.bot: f"bot-{index + 1}" for index, row in enumerate(report.standings)}
        self.colors = {row.bot: index for index, row in enumerate(report.standings)}
        self.replays = gathered.replays()
        self.replayed = {game.game for game, _ in self.replays}
        self.displays: Mapping[str, str] = displays or {}

    def name(self, bot: str) -> str:
        """How the page names a bot: ``Alice Adhikari (alice)`` when the roster gives a display name, else its name."""
        display = self.displays.get(bot, "")
        return f"{display} ({bot})" if display and display != bot else bot

    def bot_link(self, bot: str) -> str:
        anchor = self.anchors.get(bot)
        return f'<a href="#{anchor}">{_esc(self.name(bot))}</a>' if anchor else _esc(self.name(bot))

    def game_link(self, game: str) -> str:
        if game in self.replayed:
            return f'<a href="#{_game_anchor(game)}"><code>{_esc(game)}</code></a>'
        return f"<code>{_esc(game)}</code>"

    def replay_command(self, game: str = "GAME") -> str:
        return f"callbreak-arena replay {shlex.quote(str(self.folder))} {game}"


def _game_anchor(game: str) -> str:
    return "game-" + _esc(game)


def _cells(values: Iterable[object], classes: Sequence[str] = ()) -> str:
    out = []
    for index, value in enumerate(values):
        cls = classes[index] if index < len(classes) and classes[index] else ""
        out.append(f'<td class="{cls}">{value}</td>' if cls else f"<td>{value}</td>")
    return "".join(out)


def _head(headers: Iterable[str], text_columns: Iterable[int] = ()) -> str:
    left = set(text_columns)
    return "<thead><tr>" + "".join(
        f'<th class="text" scope="col">{_esc(h)}</th>' if i in left else f'<th scope="col">{_esc(h)}</th>'
        for i, h in enumerate(headers)) + "</tr></thead>"


_BREAKABLE = {"matchpoints": "match<wbr>points", "overtricks": "over<wbr>tricks", "over/under": "over/<wbr>under",
              "fallback": "fall<wbr>back"}
"""Where the standings' longest column names may break."""


def _standings_section(page: _Page) -> str:
    rules, rows = page.rules, page.report.standings
    text_columns = (1, len(STANDINGS_HEADERS) - 2, len(STANDINGS_HEADERS) - 1)
    classes = [""] * len(STANDINGS_HEADERS)
    classes[1], classes[-2], classes[-1] = "text wrap", "text wrap", "text wrap"

    def table(part: Sequence[Standing]) -> str:
        body = []
        for row in part:
            cells = [_esc(cell) for cell in standings_cells(row, rules)]
            cells[1] = page.bot_link(row.bot) + (" (house)" if row.house else "")
            body.append(f'<tr data-bot="{_esc(row.bot)}">{_cells(cells, classes)}</tr>')
        head = _head(STANDINGS_HEADERS, text_columns)
        for word, broken in _BREAKABLE.items():  # long words that may break: the table fits a 1024-pixel screen
            head = head.replace(f">{word}", f">{broken}")
        return (f'<div class="wide"><table class="standings">{head}'
                f"<tbody>{''.join(body)}</tbody></table></div>")

    ranked = [row for row in rows if not listed_apart(row)]
    apart = [row for row in rows if listed_apart(row)]
    out = ['<section id="standings"><h2>Standings</h2>']
    if not rows:
        out.append("<p>No bot has a complete game yet.</p>")
    if ranked:
        out.append(table(ranked))
    if apart:
        out.append(f"<h3>{_esc(NOT_RANKED_TITLE)}</h3>" + table(apart))
    if rows:
        out.append("".join(f'<p class="note">{_esc(line)}</p>' for line in standings_notes(rows, rules)))
        out.append('<h3>What the columns mean</h3><dl class="glossary">'
                   + "".join(f"<dt>{_esc(h)}</dt><dd>{_esc(GLOSSARY[h])}</dd>" for h in STANDINGS_HEADERS)
                   + "</dl>")
    comparison = page.report.comparison
    if comparison is not None:
        out.append(f"<h3>{_esc(comparison.a)} against {_esc(comparison.b)}</h3>"
                   f"<pre>{_esc(render_comparison(comparison, rules))}</pre>")
    if rows:
        out.append(f"<p>{_esc(measures(comparison))}</p>")
    seats = page.report.seats
    if seats and any(row.rounds for row in seats):
        out.append(f"<h3>Seats</h3><p class=\"note\">Mean round score across all bots, in {_esc(page.unit)}, by "
                   "seat and by distance from the dealer (dealer +1 calls and leads first).</p>"
                   f'<div class="wide"><table class="seats">{_head(SEAT_HEADERS, (0,))}<tbody>'
                   + "".join(f"<tr>{_cells([_esc(c) for c in seat_cells(row, rules)], ['text'])}</tr>"
                             for row in seats)
                   + "</tbody></table></div>")
    out.append("</section>")
    return "".join(out)


def _scores_section(page: _Page) -> str:
    rows = [row for row in page.report.standings if row.games]
    scale = page.per_point
    items = []
    for row in rows:
        low, high = row.dup_low / scale, row.dup_high / scale
        interval = (f"[{low:+.2f}, {high:+.2f}]" if math.isfinite(low) and math.isfinite(high)
                    else "no interval (one deal set)")
        value = row.dup_per_game / scale
        tooltip = (f"{row.bot}: {value:+.2f} {page.unit} per game, 95% interval {interval}" if math.isfinite(value)
                   else f"{row.bot}: no duplicate score yet")
        items.append(Interval(row.bot, value, low, high, color(page.colors[row.bot]), tooltip))
    out = ['<section id="scores"><h2>Duplicate score per game, with its 95 % interval</h2>']
    if not items:
        out.append("<p>No bot has a complete game yet.</p></section>")
        return "".join(out)
    svg = interval_plot(items, f"duplicate score per game ({page.unit}); 0 is the field's average",
                        "Each bot's duplicate score per game with its 95% interval")
    out.append(f"<figure>{svg}<figcaption>The dot is the bot's duplicate score per game (its result minus the "
               "other bots' results on the very same cards); the bar is its 95 % interval, clustered by deal set. "
               "Two bots whose bars do not overlap are very unlikely to be in that order by luck. A dashed bar "
               "runs off the plot: its interval is unbounded (one deal set).</figcaption></figure></section>")
    return "".join(out)


def _legend(page: _Page, bots: Sequence[str]) -> str:
    items = []
    for bot in bots:
        index = page.colors[bot]
        style = f"background:{color(index)}" + (";background:repeating-linear-gradient(90deg,"
                                                f"{color(index)} 0 6px,transparent 6px 9px)" if dash(index) else "")
        items.append(f'<li><span class="swatch" style="{style}"></span>{_esc(page.name(bot))}</li>')
    return f'<ul class="legend">{"".join(items)}</ul>'


def _course_section(page: _Page) -> str:
    marks = page.gathered.marks()
    bots = [row.bot for row in page.report.standings if row.games]
    out = ['<section id="course"><h2>The event round by round</h2>']
    if not marks or not bots:
        out.append("<p>No schedule round has been scored yet.</p></section>")
        return "".join(out)
    xs = [position for position, _ in marks]

    def series(pick: Callable[[RoundMark], Mapping[str, float]], scale: float) -> list[Series]:
        return [Series(bot, [pick(mark).get(bot, math.nan) / scale for _, mark in marks],
                       color(page.colors[bot]), dash(page.colors[bot])) for bot in bots]

    dup = line_chart(series(lambda mark: mark.dup_per_game, page.per_point), xs, "schedule rounds scored",
                     f"duplicate score per game ({page.unit})",
                     "Each bot's duplicate score per game so far, after each schedule round")
    ordinal = line_chart(series(lambda mark: mark.ordinal, 1.0), xs, "schedule rounds scored",
                         "OpenSkill ordinal (mu − 3 sigma)", "Each bot's OpenSkill ordinal after each schedule round")
    rounds = page.gathered.rounds
    shown = "" if len(marks) == rounds else (
        f" {rounds} rounds were scored; the lines show {len(marks)} of them, evenly spaced, and the last.")
    legend = _legend(page, bots)
    out.append(f"<figure>{dup}{legend}<figcaption>The duplicate score per game over the rounds scored so far: "
               "where each line ends is the standings' number. Early rounds swing; a line that settles has "
               f"enough deal sets behind it.{_esc(shown)}</figcaption></figure>"
               f"<figure>{ordinal}{legend}<figcaption>The OpenSkill ordinal (mu − 3 sigma, a cautious rating "
               "from the places at the table) after each round's games were rated in schedule order: a second "
               "opinion that counts who finished ahead, not by how much.</figcaption></figure></section>")
    return "".join(out)


def _heat(value: float, largest: float) -> str:
    """A cell's background: blue where the row bot scores more, orange where less, deeper for more."""
    if not math.isfinite(value) or largest <= 0:
        return ""
    share = min(abs(value) / largest, 1.0) * 0.75
    rgb = "31,119,180" if value > 0 else "230,120,20"
    return f' style="background:rgba({rgb},{share:.2f})"'


def _matrix_section(page: _Page) -> str:
    report, rules = page.report, page.rules
    bots = [bot for bot in report.bots if any(a == bot for a, _ in report.matrix)]
    out = ['<section id="head-to-head"><h2>Head to head</h2>']
    if not report.matrix:
        out.append("<p>No two bots have met at a table yet.</p></section>")
        return "".join(out)
    if len(bots) > MATRIX_CELLS_LIMIT:
        out.append(f"<p>{len(bots)} bots are too many for a matrix here: every pair that met is in "
                   f"<code>{HEAD_TO_HEAD_FILE}</code> in the results folder.</p></section>")
        return "".join(out)
    largest = max((abs(c.diff.mean) for c in report.matrix.values() if math.isfinite(c.diff.mean)), default=0.0)
    header = "".join(f'<th scope="col">{_esc(bot)}</th>' for bot in bots)
    body = []
    for a in bots:
        cells = []
        for b in bots:
            if a == b:
                cells.append('<td class="self">—</td>')
                continue
            c = report.matrix.get((a, b))
            if c is None:
                cells.append("<td></td>")
                continue
            cells.append(f'<td title="{_esc(_matrix_tip(c, page))}"{_heat(c.diff.mean, largest)}>'
                         f"{_esc(matrix_cell(c, rules))}</td>")
        body.append(f'<tr><th class="text" scope="row">{page.bot_link(a)}</th>{"".join(cells)}</tr>')
    out.append(f'<div class="wide"><table class="heat"><thead><tr><th class="text">row against column</th>{header}'
               f"</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
               f'<p class="note">Each cell: the row bot\'s game total minus the column bot\'s, per game, in '
               f"{_esc(page.unit)}, over the games where both sat at the table, and in brackets the likelihood that "
               "the row bot really scores more (LOS). Blue: the row bot scores more; orange: less; the deeper, "
               "the larger the difference.</p></section>")
    return "".join(out)


def _matrix_tip(c: Comparison, page: _Page) -> str:
    scale = page.per_point
    low, high = c.diff.low / scale, c.diff.high / scale
    interval = f"95% CI [{low:+.2f}, {high:+.2f}]" if math.isfinite(low) and math.isfinite(high) else "no interval"
    return f"{c.a} - {c.b}: {c.diff.mean / scale:+.2f} {page.unit} per game, {interval}, {c.games} games"


def _kinds_text(kinds: Mapping[str, int]) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) or "none"


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.0f}"


def _calling_section(page: _Page) -> str:
    headers = ["bot", "rounds", "exact%", "made%", "missed%", "over call%", "|err|", "overtricks", "fallback%",
               "faults", "faults by kind"]
    body = []
    for row in page.report.standings:
        if not row.games:
            continue
        cells = [page.bot_link(row.bot), str(row.rounds), _pct(row.exact_pct), _pct(row.made_pct),
                 _pct(row.too_high_pct), _pct(row.too_low_pct), f"{row.abs_error:.2f}", f"{row.overtricks:.2f}",
                 f"{row.fallback_pct:.1f}", str(row.faults), _esc(_kinds_text(row.faults_by_kind))]
        body.append(f"<tr>{_cells(cells, ['text', *[''] * 9, 'text'])}</tr>")
    out = ['<section id="calling"><h2>Calling and faults</h2>']
    if not body:
        out.append("<p>No bot has a complete game yet.</p></section>")
        return "".join(out)
    out.append(f'<div class="wide"><table class="calling">{_head(headers, (0, 10))}<tbody>{"".join(body)}</tbody>'
               "</table></div>"
               '<p class="note">Per round: exact% took exactly its call; made% at least its call; missed% fewer '
               "tricks than its call (the whole call is lost); over call% more tricks than its call; |err| the "
               "mean distance between tricks and call; overtricks the mean tricks above the call. fallback% is the "
               "share of its decisions the arena made for it.</p></section>")
    return "".join(out)


def _played(fallback: str | None, trick: int | None) -> str:
    """The arena's fallback: a call as a number, a card as a card."""
    if fallback is None:
        return "-"
    return f"call {_esc(fallback)}" if trick is None else _card(fallback)


def _bot_section(page: _Page, row: Standing) -> str:
    rules = page.rules
    cells = dict(zip(STANDINGS_HEADERS, standings_cells(row, rules), strict=True))
    rank = f"rank {row.rank}" if row.rank is not None else "not ranked" if not row.house else "house bot"
    status = f"{row.status}: {row.reason}" if row.reason else row.status
    versions = page.gathered.versions.get(row.bot, [])
    stated = ", ".join(f'"{version}"' for version in versions)
    out = [f'<section class="bot" id="{page.anchors[row.bot]}"><h3>{_esc(page.name(row.bot))}</h3>',
           f"<p>{_esc(rank)}; status {_esc(status)}; {row.games} games"
           + (f"; version{'s' if len(versions) > 1 else ''} {_esc(stated)} (the version the bot states about "
              "itself when it joins: its bot class's <code>version</code>; the arena does not check it)"
              if versions else "") + "</p>"]
    if row.games:
        out.append(f"<p>Duplicate score {_esc(cells['points per game'])} {_esc(page.unit)} per game, 95% interval "
                   f"{_esc(cells['95% interval'])}; matchpoints {_esc(cells['matchpoints %'])}%; calls: exactly made "
                   f"{_pct(row.exact_pct)}% of rounds, missed {_pct(row.too_high_pct)}%, over the call "
                   f"{_pct(row.too_low_pct)}% ({row.overtricks:.2f} overtricks a round); the arena decided "
                   f"{row.fallback_pct:.1f}% of its moves.</p>")
    if not row.faults:
        out.append("<p>No faults.</p></section>")
        return "".join(out)
    kinds = "".join(f'<tr><td class="text"><code>{_esc(kind)}</code></td><td>{n}</td>'
                    f'<td class="text detail">{_esc(ADVICE.get(kind, ""))}</td></tr>'
                    for kind, n in sorted(row.faults_by_kind.items()))
    out.append(f'<p>{row.faults} faults.</p><div class="wide"><table class="kinds">'
               f'{_head(["kind", "faults", "what it means"], (0, 2))}<tbody>{kinds}</tbody></table></div>')
    listed = page.gathered.listed_faults(row.bot)
    lines = []
    for entry in listed:
        trick = "calls" if entry.trick is None else str(entry.trick + 1)
        cells_ = [page.game_link(entry.game), str(entry.round), trick, str(entry.seat), f"<code>{_esc(entry.kind)}"
                  "</code>", str(entry.count), _esc(entry.detail),
                  _played(entry.fallback, entry.trick)]
        lines.append(f"<tr>{_cells(cells_, ['text', '', '', '', 'text', '', 'detail', 'text'])}</tr>")
    more = row.faults - sum(entry.count for entry in listed)
    headers = ["game", "round", "trick", "seat", "kind", "times", "detail", "the arena played"]
    out.append(f'<div class="wide"><table class="faults" data-bot="{_esc(row.bot)}">{_head(headers, (0, 4, 6, 7))}'

               f"<tbody>{''.join(lines)}</tbody></table></div>"
               + (f"<p>… and {more} more faults, not listed here: every fault is in records.jsonl "
                  f"(<code>jq -c '.faults[]' {_esc(page.folder)}/records.jsonl</code>).</p>" if more > 0 else "")
               + '<p class="note">Tricks are numbered 1 to 13 as in the replays (the records count them from 0); '
               "times counts the same answer refused again on the retries of one decision. A linked game is "
               "replayed below; print any game with <code>"
               f"{_esc(page.replay_command())}</code>.</p></section>")
    return "".join(out)


def _bots_section(page: _Page) -> str:
    rows = page.report.standings
    out = ['<section id="bots"><h2>Bot by bot</h2>']
    if not rows:
        out.append("<p>No bot has played yet.</p>")
    else:
        out.append("<p>" + " · ".join(page.bot_link(row.bot) for row in rows) + "</p>")
    out.extend(_bot_section(page, row) for row in rows)
    out.append("</section>")
    return "".join(out)


def _card(text: str, *classes: str) -> str:
    try:
        card = Card.parse(text)
    except CardError:
        return f'<span class="{" ".join(("card", *classes))}">{_esc(text)}</span>'
    rank = "10" if card.rank.letter == "T" else card.rank.letter
    red = ("red",) if card.suit in (Suit.HEARTS, Suit.DIAMONDS) else ()
    return f'<span class="{" ".join(("card", *red, *classes))}">{rank}{card.suit.symbol}</span>'


def _hand(hand: Hand) -> str:
    return "".join(_card(str(card)) for card in hand.cards())


def _suit_name(suit: Suit) -> str:
    return f"{suit.symbol} {suit.noun}"


def _replay_round(page: _Page, game: GameRecords, record: RoundRecord) -> str:
    rules = record.rules
    seats = game.seats
    call_faults = {f.seat for f in record.faults if f.trick is None}
    trick_faults: dict[tuple[int, int], list[str]] = {}
    for fault in record.faults:
        if fault.trick is not None:
            trick_faults.setdefault((fault.trick, fault.seat), []).append(f"{fault.kind.value}: {fault.detail}")
    hands = []
    for seat in range(4):
        dealer = " (dealer)" if seat == record.dealer else ""
        call_class = ' class="fault-call"' if seat in call_faults else ""
        hands.append(f'<div class="who">seat {seat} · {page.bot_link(seats[seat])}{dealer}'
                     f'<div class="nums"><span{call_class}>call {record.calls[seat]}</span> · took '
                     f"{record.tricks_won[seat]} · score {_esc(format_score(rules, record.scores[seat]))} · total "
                     f"{_esc(format_score(rules, record.totals[seat]))}</div></div>"
                     f'<div class="cards">{_hand(record.hands[seat])}</div>')
    order = [(record.dealer + 1 + k) % 4 for k in range(4)]
    calls = ", ".join(f"seat {s} {record.calls[s]}" for s in order)
    rows = []
    for number, trick in enumerate(record.tricks):
        by_seat: dict[int, str] = {}
        for k, card in enumerate(trick.cards):
            seat = (trick.leader + k) % 4
            classes = (("lead",) if k == 0 else ()) + (("win",) if seat == trick.winner else ())
            by_seat[seat] = _card(str(card), *classes)
        cells = []
        for seat in range(4):
            happened = trick_faults.get((number, seat))
            if happened:
                cells.append(f'<td class="fault" title="{_esc("; ".join(happened))}">{by_seat.get(seat, "")}</td>')
            else:
                cells.append(f"<td>{by_seat.get(seat, '')}</td>")
        winner = seats[trick.winner] if 0 <= trick.winner < 4 else "?"
        rows.append(f"<tr><td>{number + 1}</td>{''.join(cells)}<td class=\"text\">seat {trick.winner} "
                    f"{_esc(page.name(winner))}</td></tr>")
    seat_heads = "".join(f'<th scope="col">seat {s}<br>{_esc(page.name(seats[s]))}</th>' for s in range(4))
    redeals = "".join(f'<p class="note">Redealt before this deal: attempt {r.attempt}, {_esc(r.reason)}.</p>'
                      for r in record.redeals)
    faults = "".join(
        f"<li>seat {f.seat} {page.bot_link(seats[f.seat])}, "
        f"{'the calls' if f.trick is None else f'trick {f.trick + 1}'}: <code>{_esc(f.kind)}</code> "
        f"{_esc(f.detail)}" + (f" ({f.count} times)" if f.count > 1 else "")
        + (f" (the arena played {_esc(f.fallback)})" if f.fallback else "") + "</li>"
        for f in _round_faults(game.game, _key(game.first), record))
    return (f'<div class="round"><h4>Round {record.round} (deal {_esc(record.deal)}), dealer seat {record.dealer}, '
            f"trump {_suit_name(record.trump)}</h4>{redeals}"
            f'<div class="hands">{"".join(hands)}</div>'
            f'<p>Calls, from the seat after the dealer: {calls}.</p>'
            f'<div class="wide"><table class="tricks"><thead><tr><th>trick</th>{seat_heads}'
            f'<th class="text">won by</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            + (f'<ul class="round-faults">{faults}</ul>' if faults else "") + "</div>")


def _replay_line(page: _Page, game: GameRecords, why: Sequence[str]) -> str:
    """What sets a replayed game apart in the list: who sat where, who won, its faults, and why it is shown."""
    final = game.final
    rules = game.first.rules
    first = [seat for seat in range(4) if len(final.places) == 4 and final.places[seat] == 1]
    won = " and ".join(f"{page.name(game.seats[seat])}" for seat in first)
    total = format_score(rules, final.totals[first[0]]) if first else ""
    faults: dict[tuple[str, str], int] = {}
    for record in game.rounds:
        for fault in record.faults:
            key = (game.seats[fault.seat] if 0 <= fault.seat < 4 else "?", fault.kind.value)
            faults[key] = faults.get(key, 0) + 1
    count = sum(faults.values())
    fault_text = (f"{count} fault{'s' if count != 1 else ''} ("
                  + ", ".join(f"{page.name(bot)} {kind}" + (f" ×{n}" if n > 1 else "") for (bot, kind), n in
                              faults.items()) + ")") if count else "no faults"
    seats = ", ".join(f"seat {seat} {page.name(bot)}" for seat, bot in enumerate(game.seats))
    winner = f"won by {won} ({total})" + (" tied" if len(first) > 1 else "") if first else "no winner recorded"
    return f"{seats}; {winner}; {fault_text}; shown for {' and '.join(why)}"


def _replays_section(page: _Page) -> str:
    out = ['<section id="replays"><h2>Replays</h2>']
    replays = page.replays
    if not replays:
        out.append("<p>No complete game yet.</p></section>")
        return "".join(out)
    out.append(f"<p>{len(replays)} of {page.gathered.games} games: those with faults (up to "
               f"{FAULT_REPLAYS_PER_BOT} a bot) and the first game of the first {SAMPLE_BLOCKS} blocks. Print any "
               f"other with <code>{_esc(page.replay_command())}</code>, e.g. <code>"
               f"{_esc(page.replay_command(replays[0][0].game))}</code>. Open a game by its title. For each round: "
               "the four hands as dealt with each seat's call, tricks, score and running total, then the 13 "
               "tricks, a column per seat: the card underlined was led, the card framed in green won, and a "
               "shaded cell is where a fault happened (the card shown is the one the arena played).</p><ul>")
    out.extend(f'<li><a href="#{_game_anchor(game.game)}"><code>{_esc(game.game)}</code></a>: '
               f"{_esc(_replay_line(page, game, why))}</li>" for game, why in replays)
    out.append("</ul>")
    for game, why in replays:
        rules = game.first.rules
        final = game.final
        totals = ", ".join(f"{_esc(page.name(bot))} {_esc(format_score(rules, final.totals[s]))}"
                           + (f" (place {final.places[s]})" if len(final.places) == 4 else "")
                           for s, bot in enumerate(game.seats))
        out.append(f'<details class="replay" id="{_game_anchor(game.game)}"><summary>Game '
                   f"<code>{_esc(game.game)}</code>: {_esc(' · '.join(map(page.name, game.seats)))} "
                   f"({_esc('; '.join(why))})"
                   f"</summary><p>Deal set {game.first.deal_set}, rotation {game.first.rotation}, rules "
                   f"{_esc(rules.profile_name)}. Final totals: {totals}.</p>"
                   + "".join(_replay_round(page, game, record) for record in game.rounds) + "</details>")
    out.append("</section>")
    return "".join(out)


def _header(page: _Page) -> str:
    manifest = page.manifest
    config: Mapping[str, Any] = manifest.config if manifest is not None else {}
    name = manifest.tournament if manifest is not None else page.folder.name
    planned = manifest.plan.game_count if manifest is not None else None
    facts = [f"format {config.get('format', '?')}", f"rules {page.rules.profile_name}",
             f"seed {config.get('seed', '?')}", f"{page.report.deal_sets} deal sets scored",
             f"{page.gathered.games} games" + (f" of {planned} planned" if planned else ""),
             f"{len(page.report.standings)} bots", f"scores in {page.unit}"]
    links = [("standings", "Standings"), ("scores", "Duplicate scores"), ("course", "Round by round"),
             ("head-to-head", "Head to head"), ("calling", "Calling and faults"), ("bots", "Bot by bot"),
             ("replays", "Replays")]
    top = podium([dataclasses.replace(row, bot=page.name(row.bot)) for row in page.report.standings], page.rules)
    when = _when(page.folder)
    result = (f'<p class="podium">{_esc(top)}</p>' if top else "") + (
        f'<p class="meta">{_esc(when)}</p>' if when else "")
    return (f"<header><h1>{_esc(name)}</h1>{result}<p class=\"meta\">{_esc(' · '.join(facts))}</p>"
            f"<p class=\"meta\">Recomputed from the records of <code>{_esc(page.folder)}</code>; "
            "<code>callbreak-arena standings DIR</code> prints the same numbers.</p>"
            "<nav>" + "".join(f'<a href="#{a}">{t}</a>' for a, t in links) + "</nav></header>")


def _when(folder: Path) -> str:
    """``ended 2026-03-01 17:42``, when the last run of the event finished it; ``as of ...`` when it has not ended
    (the time of its status, or of its records); empty without either."""
    try:
        status = read_status(folder)
    except RecordsError:
        status = None
    if status is not None:
        moment = status.updated
    else:
        try:
            moment = ResultsStore(folder).records_path.stat().st_mtime
        except OSError:
            return ""
    day = time.strftime("%Y-%m-%d %H:%M", time.localtime(moment))
    return f"ended {day}" if status is not None and status.state == "finished" else f"as of {day}"


def _page(page: _Page) -> str:
    manifest = page.manifest
    title = manifest.tournament if manifest is not None else page.folder.name
    parts = [_header(page), _standings_section(page), _scores_section(page), _course_section(page),
             _matrix_section(page), _calling_section(page), _bots_section(page), _replays_section(page)]
    return render("report.html", policy=Markup(_POLICY), title=title, style=style("report.css"),
                  sections=[Markup(part) for part in parts], script=_SCRIPT)


# -- the page ------------------------------------------------------------------------------------


def _read(folder: Path, roster: Path | None = None) -> _Page:
    """The standings' one pass over the folder's records, with what the page needs besides (and the display names
    of ``roster``'s students)."""
    store = ResultsStore(folder)
    raw = store.manifest()
    manifest = Manifest.from_dict(raw, str(store.manifest_path)) if raw is not None else None
    gathered = _Gathered()
    report = read_folder(folder, on_game=gathered.add_game, on_round=gathered.add_round)
    return _Page(folder, report, gathered, manifest, _displays(roster))


def _displays(roster: Path | None) -> dict[str, str]:
    """The display names of the roster's students; none without a roster, or when it cannot be read (the page
    still names every bot)."""
    if roster is None:
        return {}
    try:
        return read_roster(roster).display_names()
    except (ArenaError, OSError):
        return {}


def html_report(folder: Path, roster: Path | None = None) -> str:
    """The report of ``folder`` as one self-contained HTML page; the bots of ``roster``'s students under their
    display names."""
    return _page(_read(folder, roster))


def write_html_report(folder: Path, out: Path | None = None, roster: Path | None = None) -> None:
    """Writes the page to ``out`` (default ``folder/report.html``), atomically."""
    write_atomic(out if out is not None else folder / REPORT_FILE, html_report(folder, roster))


def write_report_files(folder: Path, roster: Path | None = None) -> None:
    """The standings files and ``report.html`` of ``folder`` from one pass over its records (the
    standings first: they never wait on the page); ``roster``: as :func:`html_report`."""
    page = _read(folder, roster)
    write_standings(folder, page.report)
    write_atomic(folder / REPORT_FILE, _page(page))
