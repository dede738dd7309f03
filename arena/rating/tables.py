"""The tables of a report (standings, comparisons, head to head, seats) as text, markdown, JSON or CSV.

Units. Text shows points (DY points under ``dy``), and says so under the standings. JSON and CSV
give the same numbers in the same unit, points, never the records' tenths, and name it: a top-level
``unit`` in JSON, a ``unit`` column in CSV.
"""

from __future__ import annotations

import csv
import io
import json
import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from tabulate import tabulate

from arena.core.rules import Rules
from arena.core.scoring import tenths_per_point
from arena.rating.fairplay import MEMORY_CSV, memory_csv, memory_lines
from arena.rating.sequential import describe, fishtest_line
from arena.rating.standing import (
    CLUSTERED_BY,
    NOT_RANKED,
    NOT_RANKED_TITLE,
    Comparison,
    SeatRow,
    Standing,
    apart_phrase,
    listed_apart,
    played_by_fallback,
)
from arena.rating.stats import PAIR_BINS, MeanCI

__all__ = [
    "COMPACT_HEADERS",
    "CSV_RANK_RANGE",
    "SEAT_HEADERS",
    "STANDINGS_HEADERS",
    "compact_cells",
    "comparison_dict",
    "comparisons_csv",
    "json_text",
    "matrix_cell",
    "podium",
    "rank_text",
    "render_comparison",
    "render_head_to_head",
    "render_seat_report",
    "render_standings",
    "seat_cells",
    "seat_dict",
    "shown_fault_kinds",
    "standings_cells",
    "standings_dict",
    "standings_notes",
    "unit_name",
]

LEVEL = 0.95
"""The intervals' confidence level."""


def json_text(data: Any) -> str:
    """``data`` as the report's JSON text: indented, one line feed at the end."""
    return json.dumps(data, indent=2) + "\n"


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def unit_name(rules: Rules) -> str:
    """What a shown score counts: ``points``, or ``DY points``."""
    return "DY points" if tenths_per_point(rules) == 1 else "points"


def _clusters_text(rows: Sequence[Standing]) -> tuple[int, bool]:
    counts = [row.clusters for row in rows if row.games]
    return (max(counts), len(set(counts)) > 1) if counts else (0, False)


def _intervals(rows: Sequence[Standing]) -> dict[str, Any]:
    clusters, _ = _clusters_text(rows)
    return {"level": LEVEL, "method": "Student's t on the clusters, ratio estimator", "clustered_by": CLUSTERED_BY,
            "clusters": clusters, "df": max(clusters - 1, 0)}


def _result(rows: Sequence[Standing], rules: Rules) -> dict[str, Any] | None:
    """The winner and runner-up the ``master`` profile asks the report to name."""
    if rules.profile_name != "master":
        return None
    ranked = [row.bot for row in rows if row.rank is not None]
    return {"winner": ranked[0] if ranked else None, "runner_up": ranked[1] if len(ranked) > 1 else None,
            "decided_by": "the first two ranked bots of the standings: the highest duplicate score per game "
                          "(then mean total, then name)"}


def standings_dict(rows: Sequence[Standing], rules: Rules) -> dict[str, Any]:
    """The standings as JSON: the unit, how the intervals were made, the result, and a line per bot in points."""
    per_point = tenths_per_point(rules)
    ranked = [row.bot for row in rows if row.rank is not None]
    ended = any(row.status == "finished" for row in rows)
    return {"unit": unit_name(rules), "intervals": _intervals(rows), "result": _result(rows, rules),
            "ended": ended, "winner": ranked[0] if ended and ranked else None,
            "runner_up": ranked[1] if ended and len(ranked) > 1 else None,
            "standings": [row.to_dict(per_point) for row in rows]}


# -- standings --------------------------------------------------------------------------------------


def _points(rules: Rules, tenths: float, sign: bool = True) -> str:
    if math.isnan(tenths):
        return "-"
    if math.isinf(tenths):
        return "inf" if tenths > 0 else "-inf"
    value = tenths / tenths_per_point(rules)
    return f"{value:+.2f}" if sign else f"{value:.2f}"


def _interval(rules: Rules, low: float, high: float) -> str:
    return f"[{_points(rules, low)}, {_points(rules, high)}]"


def shown_fault_kinds(row: Standing) -> dict[str, int]:
    """A bot's faults by kind as the standings show them: a disqualified bot's ``absent`` faults (the games the
    fallback player played in its seat) are ``disqualified``."""
    if row.status != "disqualified" or "absent" not in row.faults_by_kind:
        return dict(sorted(row.faults_by_kind.items()))
    kinds = {kind: n for kind, n in row.faults_by_kind.items() if kind != "absent"}
    return dict(sorted({**kinds, "disqualified": row.faults_by_kind["absent"]}.items()))


def _faults_text(row: Standing) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in shown_fault_kinds(row).items()) or "0"


def _number(value: float, spec: str) -> str:
    return "-" if math.isnan(value) else format(value, spec)


def _matchpoints_text(row: Standing) -> str:
    if math.isnan(row.matchpoint_pct):
        return "-"
    half = (row.matchpoint_high - row.matchpoint_low) / 2
    return f"{row.matchpoint_pct:.1f}±{half:.1f}" if math.isfinite(half) else f"{row.matchpoint_pct:.1f}±inf"


STANDINGS_HEADERS = ["rank", "bot", "points per game", "95% interval", "mean round", "mean total", "place points",
                     "matchpoints %", "skill mu", "skill sigma", "skill ordinal", "calls made %", "call error",
                     "overtricks", "over/under %", "games", "fallback %", "faults", "status"]
"""The columns of the wide standings (``--wide``, the standings files, report.html): every measure, named in
words (``docs/standings.md`` explains each)."""
COMPACT_HEADERS = ["rank", "bot", "points per game", "95% interval", "matchpoints %", "calls made %", "games",
                   "faults", "status"]
"""The columns of the standings printed in a terminal: what most readers need, in under 100 characters (the
status only when some bot's is not simply ``playing`` or ``finished``)."""


CSV_RANK_RANGE = ("rank_best", "rank_worst")
"""The CSV's columns for a bot's ``rank_range``, beside ``rank`` (empty when it is not ranked)."""

_TWO_LINES = {"points per game": "points\nper game", "95% interval": "95%\ninterval",
              "matchpoints %": "match-\npoints %", "calls made %": "calls\nmade %"}


def _status_text(row: Standing, wide: bool) -> str:
    """The status cell: the bot's status, and why it is not ranked (in full when ``wide``)."""
    why = apart_phrase(row)
    if row.status in NOT_RANKED or row.status == "absent":
        return f"{row.status}: {row.reason}" if wide and row.reason else row.status
    return f"{row.status}, {why}" if why else row.status


def rank_text(row: Standing) -> str:
    """The rank column: the ranks the bot could hold at 95 %, ``1`` or ``2-4`` (``-`` when it is not ranked)."""
    if row.rank_range is None:
        return "-" if row.rank is None else str(row.rank)
    best, worst = row.rank_range
    return str(best) if best == worst else f"{best}-{worst}"


def standings_cells(row: Standing, rules: Rules) -> list[str | int]:
    """One bot's line of the standings as shown, a value per column of :data:`STANDINGS_HEADERS`
    (scores in points; the rank and the games as numbers): what every text and HTML rendering of the
    standings prints."""
    return [
        rank_text(row), row.bot + (" (house)" if row.house else ""),
        _points(rules, row.dup_per_game), _interval(rules, row.dup_low, row.dup_high),
        _points(rules, row.mean_round), _points(rules, row.mean_total), _number(row.place_points, ".2f"),
        _matchpoints_text(row), _number(row.mu, ".1f"), _number(row.sigma, ".2f"),
        _number(row.ordinal, ".1f"), _number(row.made_pct, ".0f"), _number(row.abs_error, ".2f"),
        _number(row.overtricks, ".2f"),
        f"{row.too_high_pct:.0f}/{row.too_low_pct:.0f}" if row.games else "-", row.games,
        _number(row.fallback_pct, ".1f"), _faults_text(row), _status_text(row, wide=True),
    ]


def compact_cells(row: Standing, rules: Rules) -> list[str | int]:
    """One bot's line of the compact standings, a value per column of :data:`COMPACT_HEADERS`."""
    return [
        rank_text(row), row.bot + (" (house)" if row.house else ""),
        _points(rules, row.dup_per_game), _interval(rules, row.dup_low, row.dup_high), _matchpoints_text(row),
        _number(row.made_pct, ".0f"), row.games, row.faults, _status_text(row, wide=False),
    ]


def _markdown_cell(cell: str | int) -> str | int:
    # A "|" inside a cell would end it: GitHub's tables take the escaped form.
    return cell.replace("|", "\\|") if isinstance(cell, str) else cell


def _standings_table(rows: Sequence[Standing], rules: Rules, fmt: str, wide: bool = True) -> str:
    headers, cells = (STANDINGS_HEADERS, standings_cells) if wide else (COMPACT_HEADERS, compact_cells)
    table = [cells(row, rules) for row in rows]
    if not wide and len({line[-1] for line in table}) == 1 and table[0][-1] in ("playing", "finished"):
        # Every bot of the table simply plays on, or has finished (the winner's line says so): no column for it.
        headers, table = headers[:-1], [line[:-1] for line in table]
    if fmt == "table" and not wide:  # two-line headers keep the compact table narrow
        headers = [_TWO_LINES.get(h, h) for h in headers]
    if fmt == "markdown":
        headers = [str(_markdown_cell(h)) for h in headers]
        table = [[_markdown_cell(cell) for cell in line] for line in table]
    return tabulate(table, headers=headers, tablefmt="github" if fmt == "markdown" else "simple",
                    disable_numparse=True) + "\n"


def standings_notes(rows: Sequence[Standing], rules: Rules, wide: bool = True) -> list[str]:
    """The lines under the standings: the unit, how the intervals were made, the launched bots that kept their
    processes across rotations, and under ``master`` the winner and runner-up; first, why each bot the fallback
    player played for is not ranked."""
    unit = unit_name(rules)
    lines = [f"{row.bot} is not ranked: {row.not_ranked}." for row in rows if played_by_fallback(row)]
    lines += [f"{row.bot}'s {row.faults} faults are every fault recorded ({_faults_text(row)}): "
              "each wrong answer and each of its retries, and each game the fallback player played in its seat after "
              "its disqualification; the disqualification counts faulty decisions, a decision's retries as one."
              for row in rows if row.status == "disqualified" and row.faults]
    lines += [f"Scores in {unit}. Points per game is the duplicate score: what a bot scored beyond the other bots "
             "that played the same cards in the same seat (0 is the field's average), with its 95% interval; "
             "matchpoints % is the share of those hands where it did better, with the half-width of its 95% interval."
             + ("" if wide else " --wide shows every measure.")]
    clusters, uneven = _clusters_text(rows)
    if clusters:
        some = "up to " if uneven else ""
        lines.append(f"95% intervals: Student's t clustered by {CLUSTERED_BY} (every table of a schedule round plays "
                     f"the same deal set, so a bot's games of one round are one cluster): {some}{clusters} deal "
                     f"set{'s' if clusters != 1 else ''}, {some}{clusters - 1} df"
                     + (" (a bot's own count is its `clusters` in JSON and CSV)." if uneven else "."))
    kept = [row.bot for row in rows if row.kept_process]
    if kept:
        lines.append(f"Launched bots kept their processes from game to game (fresh_process = false): "
                     f"{', '.join(kept)}. A bot could remember a deal from one rotation and know the other three "
                     "hands when the deal came round again.")
    result = _result(rows, rules)
    if result is not None:
        if result["winner"] is None:
            lines.append("Winner: none yet (no bot is ranked).")
        else:
            runner_up = f"; runner-up: {result['runner_up']}" if result["runner_up"] else ""
            lines.append(f"Winner: {result['winner']}{runner_up} (the first two ranked bots: the highest duplicate "
                         "score per game, then mean total).")
    return lines


def podium(rows: Sequence[Standing], rules: Rules) -> str:
    """``Winner: A (+2.10 points per game); runner-up: B (+0.40)`` once the event has ended (its bots are
    ``finished``), else empty: the line atop the standings, report.html and the live page."""
    if not any(row.status == "finished" for row in rows):
        return ""
    ranked = [row for row in rows if row.rank is not None]
    if not ranked:
        return "The event has ended; no bot is ranked."
    unit = unit_name(rules)
    first = ranked[0]
    text = f"Winner: {first.bot} ({_points(rules, first.dup_per_game)} {unit} per game)"
    if len(ranked) > 1:
        text += f"; runner-up: {ranked[1].bot} ({_points(rules, ranked[1].dup_per_game)})"
    return text


def render_standings(rows: Sequence[Standing], rules: Rules, fmt: str = "table", wide: bool = True) -> str:
    """The standings as text (``table``, ``markdown``), ``json`` or ``csv``, in points. In text, the
    winner heads an ended event's standings, the bots listed apart (house bots, withdrawn, disqualified, or
    played for by the fallback) follow the ranking in a section of their own, and notes say the unit and how
    the intervals were made; ``wide`` shows every measure (else :data:`COMPACT_HEADERS`)."""
    if fmt == "json":
        return json_text(standings_dict(rows, rules))
    if fmt == "csv":
        out = io.StringIO()
        # A spreadsheet reads "2-4" as a date: the range is two columns of whole numbers.
        fields = [name for f in Standing.__dataclass_fields__ if f != "faults_by_kind"
                  for name in (CSV_RANK_RANGE if f == "rank_range" else MEMORY_CSV if f == "memory_test" else (f,))
                  ] + ["unit"]
        writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        per_point, unit = tenths_per_point(rules), unit_name(rules)
        for row in rows:
            data = row.to_dict(per_point)
            data.pop("faults_by_kind")
            data.pop("memory_test")
            span = data.pop("rank_range") or (None, None)
            writer.writerow({**data, **dict(zip(CSV_RANK_RANGE, span, strict=True)),
                             **memory_csv(row.memory_test, rules, row.bot), "unit": unit})
        return out.getvalue()
    gap = "\n" if fmt == "markdown" else ""
    top = podium(rows, rules)
    text = f"{top}\n\n" if top else ""
    apart = [row for row in rows if listed_apart(row)]
    text += _standings_table([row for row in rows if not listed_apart(row)], rules, fmt, wide)
    if apart:
        text += f"\n{NOT_RANKED_TITLE}\n{gap}" + _standings_table(apart, rules, fmt, wide)
    reasons = [f"{row.bot}: {row.status}: {row.reason}" for row in rows
               if row.reason and (row.status in NOT_RANKED or row.status == "absent")]
    if reasons and not wide:  # the wide table has them in its status column
        text += "\n" + gap.join(line + "\n" for line in reasons)
    if rows:
        notes = standings_notes(rows, rules, wide) + memory_lines(rows, rules)
        if fmt == "table" and not wide:  # for a terminal: no line beyond 100 characters
            notes = [textwrap.fill(line, 100, break_long_words=False, break_on_hyphens=False) for line in notes]
        text += "\n" + (gap or "").join(line + "\n" for line in notes)
    return text


# -- comparisons ------------------------------------------------------------------------------------


def _mean_dict(ci: MeanCI, per_point: int) -> dict[str, Any]:
    return {"mean": _finite(ci.mean / per_point), "low": _finite(ci.low / per_point),
            "high": _finite(ci.high / per_point), "se": _finite(ci.se / per_point), "clusters": ci.n, "df": ci.df}


def comparison_dict(c: Comparison, rules: Rules) -> dict[str, Any]:
    """A comparison as JSON: differences in points per game, the LOS and its df, the Elo, the SPRT."""
    per_point = tenths_per_point(rules)
    elo = c.elo
    out: dict[str, Any] = {
        "a": c.a, "b": c.b, "unit": unit_name(rules), "blocks": c.blocks, "games": c.games, "pairs": c.pairs,
        "diff": _mean_dict(c.diff, per_point), "los": _finite(c.los), "los_df": c.diff.df,
        "elo": {"elo": _finite(elo.elo), "low": _finite(elo.low), "high": _finite(elo.high),
                "score": _finite(elo.score), "pairs": elo.pairs, "clusters": elo.clusters, "sweep": elo.sweep,
                "counts": dict(zip(PAIR_BINS, elo.counts, strict=True)), "text": elo.describe()},
        "sprt": None,
    }
    s = c.sprt
    if s is not None:
        # The test's own blocks: the complete blocks of the plan, in plan order, up to its decision.
        out["sprt"] = {
            "n": s.n, "verdict": s.verdict, "llr": s.llr, "lower": s.lower, "upper": s.upper,
            "mean": _finite(s.mean / per_point), "sd": _finite(s.sd / per_point),
            "low": _finite(s.ci.low / per_point), "high": _finite(s.ci.high / per_point), "los": _finite(s.ci.los),
            "delta0": s.delta0 / per_point, "delta1": s.delta1 / per_point, "alpha": s.alpha, "beta": s.beta,
            "burn_in": s.burn_in, "cap": s.cap, "method": s.method, "text": describe(s),
            "fishtest": fishtest_line(s),
        }
    return out


COMPARISON_FIELDS = ["a", "b", "unit", "blocks", "games", "clusters", "df", "diff", "diff_low", "diff_high", "diff_se",
                     "los", "pairs", *(f"pairs_{b.lower().replace('+', '_')}" for b in PAIR_BINS), "elo", "elo_low",
                     "elo_high", "elo_sweep"]
SPRT_FIELDS = ["sprt_n", "sprt_verdict", "sprt_llr", "sprt_lower", "sprt_upper", "sprt_mean", "sprt_low", "sprt_high",
               "sprt_delta0", "sprt_delta1", "sprt_alpha", "sprt_beta", "sprt_burn_in", "sprt_cap", "sprt_method"]


def _csv_value(value: Any) -> Any:
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    return "" if value is None else value


def _comparison_row(c: Comparison, rules: Rules) -> dict[str, Any]:
    data = comparison_dict(c, rules)
    diff, elo = data["diff"], c.elo
    row: dict[str, Any] = {
        "a": c.a, "b": c.b, "unit": data["unit"], "blocks": c.blocks, "games": c.games, "clusters": diff["clusters"],
        "df": diff["df"], "diff": diff["mean"], "diff_low": diff["low"], "diff_high": diff["high"],
        "diff_se": diff["se"], "los": data["los"], "pairs": c.pairs,
        **{f"pairs_{b.lower().replace('+', '_')}": n for b, n in zip(PAIR_BINS, elo.counts, strict=True)},
        "elo": elo.elo, "elo_low": elo.low, "elo_high": elo.high, "elo_sweep": elo.sweep,
    }
    if data["sprt"] is not None:
        row.update({f"sprt_{key}": value for key, value in data["sprt"].items() if f"sprt_{key}" in SPRT_FIELDS})
    return {key: _csv_value(value) for key, value in row.items()}


def comparisons_csv(comparisons: Sequence[Comparison], rules: Rules) -> str:
    """Comparisons as CSV, a row each, with the sequential test's columns when one of them has it."""
    out = io.StringIO()
    with_sprt = any(c.sprt is not None for c in comparisons)
    writer = csv.DictWriter(out, fieldnames=COMPARISON_FIELDS + (SPRT_FIELDS if with_sprt else []))
    writer.writeheader()
    for c in comparisons:
        writer.writerow(_comparison_row(c, rules))
    return out.getvalue()


def render_head_to_head(matrix: Mapping[tuple[str, str], Comparison], bots: Sequence[str], rules: Rules,
                        fmt: str = "table") -> str:
    """The head-to-head matrix: row bot against column bot, mean difference per game and LOS (text);
    every ordered pair with all its numbers (``json``, ``csv``)."""
    if fmt == "json":
        return json_text([comparison_dict(c, rules) for c in matrix.values()])
    if fmt == "csv":
        return comparisons_csv(list(matrix.values()), rules)
    table = [[a, *(matrix_cell(matrix.get((a, b)), rules) for b in bots)] for a in bots]
    return tabulate(table, headers=["vs", *bots], tablefmt="github" if fmt == "markdown" else "simple",
                    disable_numparse=True) + "\n"


def matrix_cell(c: Comparison | None, rules: Rules) -> str:
    """A cell of the head-to-head matrix: the mean difference per game in points and the LOS
    (empty for bots that never met)."""
    if c is None:
        return ""
    diff = _points(rules, c.diff.mean)
    return diff if math.isnan(c.los) else f"{diff} ({100 * c.los:.0f}%)"


def render_comparison(c: Comparison, rules: Rules) -> str:
    """A against B in words and numbers: difference, LOS, Elo, and the SPRT verdict with its parameters."""
    unit = unit_name(rules)
    df = c.diff.df
    lines = [
        f"{c.a} vs {c.b}: {c.blocks} blocks, {c.games} games, {c.diff.n} deal sets",
        f"  duplicate difference per game: {_points(rules, c.diff.mean)} {unit} "
        f"(95% CI {_interval(rules, c.diff.low, c.diff.high)}; t on {df} df, clustered by {CLUSTERED_BY})",
        f"  likelihood of superiority: {100 * c.los:.1f}% (t, {df} df)" if not math.isnan(c.los)
        else "  likelihood of superiority: - (needs two deal sets)",
        f"  head-to-head Elo (pentanomial, {c.pairs} game pairs in {c.elo.clusters} deal sets): {c.elo.describe()}",
    ]
    s = c.sprt
    if s is not None:
        cap = f"a cap of {s.cap} blocks" if s.cap is not None else "no cap"
        lines += [f"  SPRT: {describe(s)}",
                  f"    {fishtest_line(s)}",
                  f"    burn-in {s.burn_in} blocks, {cap}, LLR method {s.method}; the complete blocks of the plan, "
                  "in plan order"]
    return "\n".join(lines) + "\n"


# -- seats ------------------------------------------------------------------------------------------


def seat_dict(row: SeatRow, rules: Rules) -> dict[str, Any]:
    """A line of the seat report as JSON, its mean in points."""
    return {"position": row.position, "rounds": row.rounds, "mean": _mean_dict(row.mean, tenths_per_point(rules))}


SEAT_HEADERS = ["position", "rounds", "mean round", "95% CI"]


def seat_cells(row: SeatRow, rules: Rules) -> list[str | int]:
    """One line of the seat report as shown, a value per column of :data:`SEAT_HEADERS`."""
    return [row.position, row.rounds, _points(rules, row.mean.mean),
            _interval(rules, row.mean.low, row.mean.high)]


def render_seat_report(rows: Sequence[SeatRow], rules: Rules, fmt: str = "table") -> str:
    """Mean round score by seat and by dealer distance, with 95 % intervals."""
    table = [seat_cells(r, rules) for r in rows]
    return tabulate(table, headers=SEAT_HEADERS,
                    tablefmt="github" if fmt == "markdown" else "simple", disable_numparse=True) + "\n"
