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
:data:`FAULT_REPLAYS_PER_BOT`, :data:`FAULT_REPLAYS`, :data:`SAMPLE_BLOCKS`, :data:`CHART_POINTS`; the
records' pass gathers it: :mod:`arena.rating.digest`).

This module computes what each section shows; the markup is the templates' (``templates/report.html``, a
``report_*.html`` per section, ``report_macros.html`` for cards, cells, heads and links), rendered by
:mod:`arena.rating.pages`. Bots are hostile: every text that comes from the records or the manifest (names,
versions, fault details, game ids) is escaped by the templates' autoescaping, and the page's
Content-Security-Policy lets no script run but its own, and load nothing at all: it opens from disk with no
network. Its one script (opening a replay that a link points to) is an optional nicety; everything is readable
without it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.core.cards import Card, Suit
from arena.core.rules import Rules
from arena.core.scoring import format_score, tenths_per_point
from arena.core.turns import call_order, seat_after
from arena.errors import ArenaError, CardError, RecordsError
from arena.event.plan.manifest import Manifest
from arena.event.plan.status import read_status
from arena.event.setup.roster import read_roster
from arena.rating.digest import Bounds, Digest, round_faults, schedule_key
from arena.rating.fairplay import fairplay_section
from arena.rating.pages import Markup, policy, render, script, style
from arena.rating.plots import Interval, Series, color, dash, interval_plot, line_chart
from arena.rating.report import HEAD_TO_HEAD_FILE, FolderReport, measures, read_folder, write_standings
from arena.rating.standing import NOT_RANKED_TITLE, Comparison, RoundMark, Standing, listed_apart
from arena.rating.tables import (
    SEAT_HEADERS,
    STANDINGS_HEADERS,
    matrix_cell,
    podium,
    rank_text,
    render_comparison,
    seat_cells,
    shown_fault_kinds,
    standings_cells,
    standings_notes,
    unit_name,
)
from arena.records.format import GameRecords, RoundRecord
from arena.records.store import ResultsStore, write_atomic

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
    "rank": "the ranks the bot could hold at 95%, given how sure the points per game are: 2-4 means somewhere from "
            "2nd to 4th; bots whose order may be luck share ranks, and more deal sets narrow them; bots listed apart "
            "have none",
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


# -- what each section shows: its data, computed here; its markup is in templates/report_*.html ----


class _Page:
    """The page under construction, with what every part needs."""

    def __init__(self, folder: Path, report: FolderReport, gathered: Digest, manifest: Manifest | None,
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

    def who(self, bot: str) -> _Who:
        return _Who(self.name(bot), self.anchors.get(bot))

    def replay_command(self, game: str = "GAME") -> str:
        return f"callbreak-arena replay {shlex.quote(str(self.folder))} {game}"


@dataclasses.dataclass(frozen=True)
class _Who:
    """A bot as the page names it, with the anchor of its own section (none when it has none)."""

    name: str
    anchor: str | None


@dataclasses.dataclass(frozen=True)
class _Face:
    """A card as drawn: rank and suit symbol (or the text as it came, when it is no card), and its classes."""

    label: str
    classes: str


@functools.cache
def _face(text: str, *classes: str) -> _Face:
    try:
        card = Card.parse(text)
    except CardError:
        return _Face(text, " ".join(("card", *classes)))
    rank = "10" if card.rank.letter == "T" else card.rank.letter
    red = ("red",) if card.suit in (Suit.HEARTS, Suit.DIAMONDS) else ()
    return _Face(f"{rank}{card.suit.symbol}", " ".join(("card", *red, *classes)))


def _header(page: _Page) -> dict[str, object]:
    manifest = page.manifest
    config: Mapping[str, Any] = manifest.config if manifest is not None else {}
    planned = manifest.plan.game_count if manifest is not None else None
    facts = [f"format {config.get('format', '?')}", f"rules {page.rules.profile_name}",
             f"seed {config.get('seed', '?')}", f"{page.report.deal_sets} deal sets scored",
             f"{page.gathered.games} games" + (f" of {planned} planned" if planned else ""),
             f"{len(page.report.standings)} bots", f"scores in {page.unit}"]
    if config.get("rotation") == "once":  # say so: every bot played each deal set once, against the house trio
        facts.insert(1, "rotation once (each bot against the house trio)")
    top = podium([dataclasses.replace(row, bot=page.name(row.bot)) for row in page.report.standings], page.rules)
    return {"name": manifest.tournament if manifest is not None else page.folder.name, "podium": top,
            "when": _when(page.folder), "facts": facts, "folder": page.folder}


_BREAKABLE = {"matchpoints": ("match", "points"), "overtricks": ("over", "tricks"), "over/under": ("over/", "under"),
              "fallback": ("fall", "back")}
"""Where the standings' longest column names may break (the table fits a 1024-pixel screen)."""


def _breakable(header: str) -> str | tuple[str, str]:
    """A header, or its parts where it may break."""
    for word, (first, rest) in _BREAKABLE.items():
        if header.startswith(word):
            return first, rest + header[len(word):]
    return header


def _standings(page: _Page) -> dict[str, object]:
    rules, rows = page.rules, page.report.standings

    def shown(part: Iterable[Standing]) -> list[dict[str, object]]:
        return [{"bot": row.bot, "who": page.who(row.bot), "house": row.house,
                 "cells": standings_cells(row, rules)} for row in part]

    comparison = page.report.comparison
    seats = page.report.seats
    return {"headers": [_breakable(header) for header in STANDINGS_HEADERS],
            "text_columns": (1, len(STANDINGS_HEADERS) - 2, len(STANDINGS_HEADERS) - 1),
            "ranked": shown(row for row in rows if not listed_apart(row)),
            "apart": shown(row for row in rows if listed_apart(row)), "apart_title": NOT_RANKED_TITLE,
            "notes": standings_notes(rows, rules) if rows else [],
            "glossary": [(header, GLOSSARY[header]) for header in STANDINGS_HEADERS] if rows else [],
            "comparison": comparison,
            "comparison_text": render_comparison(comparison, rules) if comparison is not None else "",
            "measures": measures(comparison) if rows else None, "unit": page.unit, "seat_headers": SEAT_HEADERS,
            "seats": [seat_cells(row, rules) for row in seats] if any(row.rounds for row in seats) else []}


def _scores(page: _Page) -> Markup | None:
    """The interval plot of the bots' duplicate scores; none before a bot has a complete game."""
    scale = page.per_point
    items = []
    for row in page.report.standings:
        if not row.games:
            continue
        low, high = row.dup_low / scale, row.dup_high / scale
        interval = (f"[{low:+.2f}, {high:+.2f}]" if math.isfinite(low) and math.isfinite(high)
                    else "no interval (one deal set)")
        value = row.dup_per_game / scale
        tooltip = (f"{row.bot}: {value:+.2f} {page.unit} per game, 95% interval {interval}" if math.isfinite(value)
                   else f"{row.bot}: no duplicate score yet")
        items.append(Interval(row.bot, value, low, high, color(page.colors[row.bot]), tooltip))
    if not items:
        return None
    return _svg(interval_plot(items, f"duplicate score per game ({page.unit}); 0 is the field's average",
                              "Each bot's duplicate score per game with its 95% interval"))


def _svg(chart: str) -> Markup:
    """A chart of :mod:`arena.rating.plots` as markup: it escapes every label it draws (a bot's name), and the rest
    of it is numbers, colours and dash patterns of its own."""
    return Markup(chart)


def _course(page: _Page) -> dict[str, object] | None:
    """The two line charts of the event's course and their legend; none before a schedule round is scored."""
    marks = page.gathered.marks()
    bots = [row.bot for row in page.report.standings if row.games]
    if not marks or not bots:
        return None
    xs = [position for position, _ in marks]

    def series(pick: Callable[[RoundMark], Mapping[str, float]], scale: float) -> list[Series]:
        return [Series(bot, [pick(mark).get(bot, math.nan) / scale for _, mark in marks],
                       color(page.colors[bot]), dash(page.colors[bot])) for bot in bots]

    scores = line_chart(series(lambda mark: mark.dup_per_game, page.per_point), xs, "schedule rounds scored",
                        f"duplicate score per game ({page.unit})",
                        "Each bot's duplicate score per game so far, after each schedule round")
    ordinals = line_chart(series(lambda mark: mark.ordinal, 1.0), xs, "schedule rounds scored",
                          "OpenSkill ordinal (mu − 3 sigma)", "Each bot's OpenSkill ordinal after each schedule round")
    legend = [{"name": page.name(bot), "color": color(page.colors[bot]), "dashed": bool(dash(page.colors[bot]))}
              for bot in bots]
    return {"scores": _svg(scores), "ordinals": _svg(ordinals), "legend": legend, "rounds": page.gathered.rounds,
            "shown": len(marks)}


def _shade(value: float, largest: float) -> str:
    """A cell's background, as ``rgba`` takes it: blue where the row bot scores more, orange where less, deeper for
    more; none without a difference to show."""
    if not math.isfinite(value) or largest <= 0:
        return ""
    share = min(abs(value) / largest, 1.0) * 0.75
    return f"{'31,119,180' if value > 0 else '230,120,20'},{share:.2f}"


def _matrix(page: _Page) -> dict[str, object]:
    report, rules = page.report, page.rules
    bots = [bot for bot in report.bots if any(a == bot for a, _ in report.matrix)]
    if len(bots) > MATRIX_CELLS_LIMIT:
        return {"too_many": len(bots), "file": HEAD_TO_HEAD_FILE, "rows": []}
    largest = max((abs(c.diff.mean) for c in report.matrix.values() if math.isfinite(c.diff.mean)), default=0.0)

    def meeting(a: str, b: str) -> dict[str, object] | None:
        c = report.matrix.get((a, b))
        if a == b or c is None:
            return {"own": True} if a == b else None
        return {"own": False, "tip": _matrix_tip(c, page), "shade": _shade(c.diff.mean, largest),
                "text": matrix_cell(c, rules)}

    return {"too_many": 0, "bots": bots, "unit": page.unit,
            "rows": [{"who": page.who(a), "cells": [meeting(a, b) for b in bots]} for a in bots]}


def _matrix_tip(c: Comparison, page: _Page) -> str:
    scale = page.per_point
    low, high = c.diff.low / scale, c.diff.high / scale
    interval = f"95% CI [{low:+.2f}, {high:+.2f}]" if math.isfinite(low) and math.isfinite(high) else "no interval"
    return f"{c.a} - {c.b}: {c.diff.mean / scale:+.2f} {page.unit} per game, {interval}, {c.games} games"


DISQUALIFIED_SEAT = ("the bot was disqualified: the fallback player played its seat in the games left of the deal "
                     "sets it had begun (or, before that, while it was absent)")
"""What the ``disqualified`` faults of a disqualified bot (recorded as ``absent``) were."""


def _shown_kinds(row: Standing) -> list[tuple[str, int, str]]:
    """A bot's faults by kind as the standings show them, and what each means."""
    return [(kind, n, DISQUALIFIED_SEAT if kind == "disqualified" else ADVICE.get(kind, ""))
            for kind, n in shown_fault_kinds(row).items()]


def _kinds_text(row: Standing) -> str:
    return ", ".join(f"{kind} {n}" for kind, n, _ in _shown_kinds(row)) or "none"


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.0f}"


def _calling(page: _Page) -> list[dict[str, object]]:
    return [{"who": page.who(row.bot), "kinds": _kinds_text(row),
             "numbers": [row.rounds, _pct(row.exact_pct), _pct(row.made_pct), _pct(row.too_high_pct),
                         _pct(row.too_low_pct), f"{row.abs_error:.2f}", f"{row.overtricks:.2f}",
                         f"{row.fallback_pct:.1f}", row.faults]}
            for row in page.report.standings if row.games]


def _bot(page: _Page, row: Standing) -> dict[str, object]:
    """One bot's section: its numbers, its faults by kind, and its first faults one by one."""
    cells = dict(zip(STANDINGS_HEADERS, standings_cells(row, page.rules), strict=True))
    versions = page.gathered.versions.get(row.bot, [])
    listed = page.gathered.listed_faults(row.bot)
    scores = {"points": cells["points per game"], "interval": cells["95% interval"],
              "matchpoints": cells["matchpoints %"], "exact": _pct(row.exact_pct), "missed": _pct(row.too_high_pct),
              "over": _pct(row.too_low_pct), "overtricks": f"{row.overtricks:.2f}",
              "fallback": f"{row.fallback_pct:.1f}"}
    return {
        "who": page.who(row.bot), "name": row.bot, "games": row.games,
        "rank": f"rank {rank_text(row)}" if row.rank is not None else "not ranked" if not row.house else "house bot",
        "status": f"{row.status}: {row.reason}" if row.reason else row.status,
        "versions": ", ".join(f'"{version}"' for version in versions), "several": len(versions) > 1,
        "scores": scores if row.games else None, "faults": row.faults,
        "kinds": _shown_kinds(row),
        "listed": [{"game": entry.game, "replayed": entry.game in page.replayed, "round": entry.round,
                    "trick": "calls" if entry.trick is None else entry.trick + 1, "seat": entry.seat,
                    "kind": "disqualified" if entry.kind == "absent" and row.status == "disqualified" else entry.kind,
                    "count": entry.count, "detail": entry.detail,
                    "call": entry.fallback if entry.trick is None else None,
                    "card": _face(entry.fallback) if entry.trick is not None and entry.fallback is not None else None}
                   for entry in listed],
        "more": row.faults - sum(entry.count for entry in listed)}


def _bots(page: _Page) -> dict[str, object]:
    return {"bots": [_bot(page, row) for row in page.report.standings], "unit": page.unit, "folder": page.folder,
            "command": page.replay_command()}


def _replay_round(page: _Page, game: GameRecords, record: RoundRecord) -> dict[str, object]:
    """One round of a replayed game: the hands as dealt, the calls, the tricks a column per seat, the faults."""
    rules = record.rules
    seats = game.seats
    call_faults = {f.seat for f in record.faults if f.trick is None}
    trick_faults: dict[tuple[int, int], list[str]] = {}
    for fault in record.faults:
        if fault.trick is not None:
            trick_faults.setdefault((fault.trick, fault.seat), []).append(f"{fault.kind.value}: {fault.detail}")
    hands = [{"seat": seat, "who": page.who(seats[seat]), "dealer": seat == record.dealer,
              "call_fault": seat in call_faults, "call": record.calls[seat], "took": record.tricks_won[seat],
              "score": format_score(rules, record.scores[seat]), "total": format_score(rules, record.totals[seat]),
              "cards": [_face(str(card)) for card in record.hands[seat].cards()]} for seat in range(4)]
    tricks = []
    for number, trick in enumerate(record.tricks):
        by_seat: dict[int, _Face] = {}
        for k, card in enumerate(trick.cards):
            seat = seat_after(trick.leader, k)
            classes = (("lead",) if k == 0 else ()) + (("win",) if seat == trick.winner else ())
            by_seat[seat] = _face(str(card), *classes)
        winner = seats[trick.winner] if 0 <= trick.winner < 4 else "?"
        tricks.append({"number": number + 1, "winner": trick.winner, "winner_name": page.name(winner),
                       "cards": [(by_seat.get(seat), "; ".join(trick_faults.get((number, seat), [])))
                                 for seat in range(4)]})
    faults = [{"seat": f.seat, "who": page.who(seats[f.seat]), "kind": f.kind, "detail": f.detail, "count": f.count,
               "where": "the calls" if f.trick is None else f"trick {f.trick + 1}", "played": f.fallback}
              for f in round_faults(game.game, schedule_key(game.first), record)]
    order = call_order(record.dealer)
    return {"number": record.round, "deal": record.deal, "dealer": record.dealer,
            "trump": f"{record.trump.symbol} {record.trump.noun}", "redeals": record.redeals, "hands": hands,
            "calls": ", ".join(f"seat {s} {record.calls[s]}" for s in order),
            "seats": [(s, page.name(seats[s])) for s in range(4)], "tricks": tricks, "faults": faults}


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


def _replayed(page: _Page, game: GameRecords, why: Sequence[str]) -> dict[str, object]:
    rules = game.first.rules
    final = game.final
    totals = ", ".join(f"{page.name(bot)} {format_score(rules, final.totals[s])}"
                       + (f" (place {final.places[s]})" if len(final.places) == 4 else "")
                       for s, bot in enumerate(game.seats))
    return {"id": game.game, "line": _replay_line(page, game, why), "names": " · ".join(map(page.name, game.seats)),
            "why": "; ".join(why), "deal_set": game.first.deal_set, "rotation": game.first.rotation,
            "rules": rules.profile_name, "totals": totals,
            "rounds": [_replay_round(page, game, record) for record in game.rounds]}


def _replays(page: _Page) -> dict[str, object]:
    first = page.replays[0][0].game if page.replays else "GAME"
    return {"games": [_replayed(page, game, why) for game, why in page.replays], "played": page.gathered.games,
            "per_bot": FAULT_REPLAYS_PER_BOT, "blocks": SAMPLE_BLOCKS, "command": page.replay_command(),
            "example": page.replay_command(first)}


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
    return render("report.html", policy=Markup(_POLICY), title=title, style=style("report.css"), script=_SCRIPT,
                  header=_header(page), standings=_standings(page), scores=_scores(page), course=_course(page),
                  matrix=_matrix(page), calling=_calling(page), bots=_bots(page), replays=_replays(page),
                  fairplay=fairplay_section(page.report.standings, page.report.pairs, page.rules))


# -- the page ------------------------------------------------------------------------------------


def _read(folder: Path, roster: Path | None = None) -> _Page:
    """The standings' one pass over the folder's records, with what the page needs besides (and the display names
    of ``roster``'s students)."""
    store = ResultsStore(folder)
    raw = store.manifest()
    manifest = Manifest.from_dict(raw, str(store.manifest_path)) if raw is not None else None
    gathered = Digest(Bounds(FAULTS_LISTED, FAULT_REPLAYS_PER_BOT, FAULT_REPLAYS, SAMPLE_BLOCKS, CHART_POINTS))
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
