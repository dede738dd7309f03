"""The fair-play reports in words and columns: each bot's memory test and the pair report.

The numbers come from the standings' one pass (:meth:`~arena.rating.ratings.Tally.standings` gives each bot its
:class:`~arena.rating.standing.MemoryTest`, :meth:`~arena.rating.ratings.Tally.pairs` the
:class:`~arena.rating.standing.PairEffect` of every pair that sat together); ``docs/statistics.md`` says what each
compares, at which level, and what a flag means and does not. A flag is for a person to look at, with the games.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from arena.core.rules import Rules
from arena.core.scoring import tenths_per_point
from arena.rating.standing import MEMORY_LEVEL, PAIR_LEVEL, MemoryTest, PairEffect, Standing

__all__ = [
    "MEMORY_CSV",
    "MEMORY_HEADERS",
    "PAIR_HEADERS",
    "fairplay_section",
    "memory_cells",
    "memory_csv",
    "memory_lines",
    "memory_text",
    "memory_words",
    "pair_cells",
    "pair_lines",
    "pair_words",
    "pairs_dict",
]

MEMORY_CSV = ("memory_first", "memory_later", "memory_difference", "memory_low", "memory_high", "memory_p",
              "memory_flagged", "memory_test")
"""The standings CSV's columns of the memory test (``memory_test`` holds it in words)."""
MEMORY_HEADERS = ["bot", "first games", "later games", "later - first", "95% interval", "p", "memory test"]
PAIR_HEADERS = ["bot", "other at its table", "with", "without", "effect", "95% interval", "p", "deal sets",
                "flagged"]


def _points(value: float, per_point: int) -> str:
    return "-" if math.isnan(value) else f"{value / per_point:+.1f}"


def _p(p: float) -> str:
    return "< 0.0001" if p < 0.0001 else f"= {p:.4f}"


def memory_words(bot: str, test: MemoryTest, rules: Rules) -> str:
    """A flagged bot's memory test in a sentence: ``x did better on deals it had seen before: +2.3 points a game
    [+1.1, +3.5], p = 0.0004; a bot that remembers deals would; see docs/statistics.md``."""
    per_point = tenths_per_point(rules)
    return (f"{bot} did better on deals it had seen before: {_points(test.difference, per_point)} "
            f"{'DY points' if per_point == 1 else 'points'} a game [{_points(test.low, per_point)}, "
            f"{_points(test.high, per_point)}], p {_p(test.p)}; a bot that remembers deals would; "
            "see docs/statistics.md")


def memory_text(bot: str, test: MemoryTest, rules: Rules) -> str:
    """Any bot's memory test in words: the flag's sentence, or what was compared, or why nothing could be."""
    if test.flagged:
        return memory_words(bot, test, rules)
    per_point = tenths_per_point(rules)
    if not test.ordered:
        return "no memory test: the games were played before each bot's games on a deal set came one after another"
    if math.isnan(test.first):
        return "no memory test yet: no first game compared"
    if math.isnan(test.later):
        return (f"first games {_points(test.first, per_point)} a game; no later games (no deal set seen twice): "
                "nothing to compare, not flagged")
    if math.isnan(test.p):
        return (f"first games {_points(test.first, per_point)}, later {_points(test.later, per_point)} a game; "
                "one deal set: no test yet")
    return (f"not flagged: first games {_points(test.first, per_point)}, later {_points(test.later, per_point)} a "
            f"game, difference {_points(test.difference, per_point)} [{_points(test.low, per_point)}, "
            f"{_points(test.high, per_point)}], p {_p(test.p)}")


def memory_lines(rows: Sequence[Standing], rules: Rules) -> list[str]:
    """The lines under the standings: each flagged bot's sentence, or that none is."""
    tested = [row for row in rows if row.games and row.memory_test.ordered]
    if not tested:
        return []
    flagged = [memory_words(row.bot, row.memory_test, rules) for row in tested if row.memory_test.flagged]
    if flagged:
        return [f"Memory test (a one-sided t test at {MEMORY_LEVEL:.0%}, clustered by deal set): "
                f"{len(flagged)} flagged, for a person to look at with the games.", *flagged]
    if all(math.isnan(row.memory_test.later) for row in tested):
        return ["Memory test: no bot played a deal set twice, so there are no later games to compare."]
    return [f"Memory test (a one-sided t test at {MEMORY_LEVEL:.0%}, clustered by deal set): no bot did "
            "significantly better on deals it had seen before."]


def memory_csv(test: MemoryTest, rules: Rules, bot: str) -> dict[str, Any]:
    """The memory test's CSV columns (:data:`MEMORY_CSV`), in points; empty where there is no value."""
    per_point = tenths_per_point(rules)

    def cell(value: float, scale: int = per_point) -> str | float:
        return "" if math.isnan(value) else value / scale

    return dict(zip(MEMORY_CSV, (cell(test.first), cell(test.later), cell(test.difference), cell(test.low),
                                 cell(test.high), cell(test.p, 1), test.flagged, memory_text(bot, test, rules)),
                    strict=True))


def pair_words(effect: PairEffect, rules: Rules) -> str:
    """A flagged pair in a sentence."""
    per_point = tenths_per_point(rules)
    return (f"{effect.bot} did better against its other tablemates when {effect.other} sat at its table: "
            f"{_points(effect.effect, per_point)} {'DY points' if per_point == 1 else 'points'} a game "
            f"[{_points(effect.low, per_point)}, {_points(effect.high, per_point)}], p {_p(effect.p)}; "
            f"{effect.other} may be giving it tricks; see docs/statistics.md")


def pair_lines(effects: Sequence[PairEffect], rules: Rules) -> list[str]:
    """The pair report's lines for a text report: how many pairs were compared, and each flagged one."""
    compared = [e for e in effects if not math.isnan(e.p)]
    if not effects:
        return []
    if not compared:
        return ["Pair report: every pair that met always sat together (or too few deal sets), so no bot's score "
                "can be compared with and without another at its table."]
    flagged = [pair_words(e, rules) for e in effects if e.flagged]
    head = (f"Pair report ({len(compared)} ordered pairs compared; Holm's step-down at {PAIR_LEVEL:.0%} over the "
            "whole report): ")
    if not flagged:
        return [head + "no pair flagged."]
    return [head + f"{len(flagged)} flagged, for a person to look at with the games.", *flagged]


def pair_cells(effect: PairEffect, rules: Rules) -> list[str | int]:
    """A row of the pair report's table, a value per column of :data:`PAIR_HEADERS`."""
    per_point = tenths_per_point(rules)
    return [effect.bot, effect.other, _points(effect.with_other, per_point), _points(effect.without, per_point),
            _points(effect.effect, per_point),
            "-" if math.isnan(effect.low) else f"[{_points(effect.low, per_point)}, {_points(effect.high, per_point)}]",
            "-" if math.isnan(effect.p) else f"{effect.p:.4f}", effect.deal_sets, "flagged" if effect.flagged else ""]


def pairs_dict(effects: Sequence[PairEffect], rules: Rules) -> list[dict[str, Any]]:
    """The JSON's ``pairs``: every ordered pair that sat together, in points."""
    per_point = tenths_per_point(rules)
    return [effect.to_dict(per_point) for effect in effects]


def memory_cells(row: Standing, rules: Rules) -> list[str | int]:
    """A bot's row of the memory test's table, a value per column of :data:`MEMORY_HEADERS`."""
    test, per_point = row.memory_test, tenths_per_point(rules)
    return [row.bot, _points(test.first, per_point), _points(test.later, per_point),
            _points(test.difference, per_point),
            "-" if math.isnan(test.low) else f"[{_points(test.low, per_point)}, {_points(test.high, per_point)}]",
            "-" if math.isnan(test.p) else f"{test.p:.4f}",
            "flagged" if test.flagged else memory_text(row.bot, test, rules).partition(":")[0]]


def fairplay_section(rows: Sequence[Standing], effects: Sequence[PairEffect], rules: Rules) -> dict[str, Any]:
    """What report.html's fair-play section shows: the memory test of every bot with games, its flags in words,
    and the pair report."""
    with_games = [row for row in rows if row.games]
    return {"unit": "DY points" if tenths_per_point(rules) == 1 else "points",
            "memory_level": f"{MEMORY_LEVEL:.0%}", "pair_level": f"{PAIR_LEVEL:.0%}",
            "memory_headers": MEMORY_HEADERS, "memory": [memory_cells(row, rules) for row in with_games],
            "memory_flags": memory_lines(with_games, rules), "pair_headers": PAIR_HEADERS,
            "pairs": [pair_cells(effect, rules) for effect in effects], "pair_lines": pair_lines(effects, rules)}
