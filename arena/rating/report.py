"""The report of a results folder: standings, the A-B comparison, the head-to-head matrix and the
seat report, in text, markdown, JSON or CSV, built from the folder's records and manifest alone in
one streaming pass over the records (:class:`~arena.rating.ratings.Tally`).

Units: see :mod:`arena.rating.tables`, which renders every table of it.

Files. :func:`write_standings` writes ``standings.txt`` and ``standings.md`` (the standings with
their notes, and the comparison under the formats that compare two bots), ``standings.json`` (the
whole report), ``standings.csv`` (one row per bot), ``head_to_head.csv`` (every ordered pair of bots
that met, whatever the size of the field) and, under ``head-to-head`` and ``sprt``,
``comparison.csv`` (the comparison with the sequential test and all its parameters).
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.core.rules import Rules
from arena.core.scoring import tenths_per_point
from arena.errors import RecordsError
from arena.event.plan.manifest import Manifest
from arena.event.plan.status import read_status
from arena.event.setup.config import fallback_limit
from arena.event.setup.formats import SprtOptions, stored_options
from arena.event.setup.kinds import Format, Rotation
from arena.rating.fairplay import pair_lines, pairs_dict
from arena.rating.ratings import Tally
from arena.rating.sequential import sprt
from arena.rating.standing import BlockDifferences, Comparison, PairEffect, RoundMark, SeatRow, Standing
from arena.rating.tables import (
    comparison_dict,
    comparisons_csv,
    json_text,
    render_comparison,
    render_head_to_head,
    render_seat_report,
    render_standings,
    seat_dict,
    standings_dict,
)
from arena.records.format import GameRecords, TornLine, iter_records
from arena.records.store import ResultsStore, write_atomic

__all__ = [
    "HEAD_TO_HEAD_FILE",
    "MATRIX_LIMIT",
    "STANDINGS_FILES",
    "FolderReport",
    "folder_report",
    "measures",
    "read_folder",
    "write_standings",
]

MATRIX_LIMIT = 12
"""The head-to-head matrix is printed in text for fields up to this size (it is in
``head_to_head.csv`` and the JSON report for any size)."""
STANDINGS_FILES = {"standings.txt": "table", "standings.md": "markdown", "standings.json": "json",
                   "standings.csv": "csv"}
"""The standings files of a results folder, and the format of each."""
HEAD_TO_HEAD_FILE = "head_to_head.csv"
COMPARISON_FILE = "comparison.csv"


def measures(comparison: Comparison | None) -> str:
    """The paragraph of the text report that says which measure answers which question
    (``docs/statistics.md`` has the formulas)."""
    points = "points per game (the duplicate score, the primary sort)"
    ahead = "place points, matchpoints % (hand by hand against the field)"
    ending = ("a bot can score more points on average and still finish ahead less often (bold calls win big and "
              "miss often)")
    if comparison is None:
        points += ", and between two bots the head-to-head difference per game with its LOS"
        ahead += " and OpenSkill (skill mu, sigma, ordinal)"
        ending += "."
    else:
        tested = comparison.sprt is not None
        points += (f", and between {comparison.a} and {comparison.b} the duplicate difference per game with its LOS"
                   + (", which the SPRT tests" if tested else ""))
        ahead += ", OpenSkill (skill mu, sigma, ordinal) and the head-to-head Elo (game pairs)"
        ending += (", so the SPRT can accept a version that the Elo sees as even." if tested
                   else ", so the difference and the Elo can disagree.")
    return (f"Which number answers which question. Who scores more points: {points}. Who finishes ahead at the "
            f"table: {ahead}. The two questions can have different answers: {ending}\n")


# -- reading a folder ------------------------------------------------------------------------------


@dataclasses.dataclass
class FolderReport:
    """Everything the records of a results folder say about the bots, from one pass."""

    rules: Rules
    standings: list[Standing]
    comparison: Comparison | None
    """A against B, under the formats that compare two bots (with the SPRT under ``sprt``)."""
    matrix: dict[tuple[str, str], Comparison]
    seats: list[SeatRow]
    deal_sets: int
    """Deal sets (clusters) scored."""
    pairs: list[PairEffect] = dataclasses.field(default_factory=list)
    """The pair report: each bot with and without each other at its table."""

    @property
    def bots(self) -> list[str]:
        return [row.bot for row in self.standings]


def read_folder(folder: Path, on_game: Callable[[GameRecords], object] | None = None,
                on_round: Callable[[RoundMark], object] | None = None) -> FolderReport:
    """Reads a results folder's manifest and, once, line by line, its records; ``on_game`` hears of
    every complete game as it is read, ``on_round`` of the standings after each schedule round is
    scored (what else a report shows comes from the same pass)."""
    store = ResultsStore(folder)
    raw = store.manifest()
    manifest = Manifest.from_dict(raw, str(store.manifest_path)) if raw is not None else None
    config = manifest.config if manifest is not None else {}
    options = config.get("format_options", {})
    compared = config.get("format") in ("head-to-head", "sprt")
    once = config.get("rotation") == Rotation.ONCE
    gathered = BlockDifferences(str(options["a"]), str(options["b"]), once) if config.get("format") == "sprt" else None
    hooks = [hook for hook in (gathered.add_game if gathered is not None else None, on_game) if hook is not None]

    def heard(game: GameRecords) -> None:
        for hook in hooks:
            hook(game)

    tally = Tally(manifest.plan if manifest is not None else None, on_game=heard if hooks else None,
                  on_round=on_round, ordered=manifest is not None and manifest.play_order is not None)
    done = 0
    for record in iter_records(store.records_path, TornLine.SKIP):
        tally.add(record)
        done += record.final
    tally.finish()
    rules = tally.rules
    if rules is None:  # scores of bots without a complete game are not shown, but the rules still name the unit
        data = config.get("rules")
        rules = Rules.from_dict(data) if isinstance(data, dict) else Rules.profile()
    if manifest is not None:
        trio = "house trio: every bot's opponents" if once else ""
        copies = _copies(config, tally.bots)
        fillers = {**{bot: trio for bot in manifest.house}, **copies}
        rows = tally.standings(fillers, manifest.statuses, ended=_ended(folder, manifest, done),
                               fallback_limit=fallback_limit(config))
        kept = _kept_processes(config)
        for row in rows:
            row.kept_process = (row.bot.rpartition("#")[0] if row.bot in copies else row.bot) in kept
    else:
        rows = tally.standings()
    comparison = tally.comparison(str(options["a"]), str(options["b"])) if compared else None
    if comparison is not None and gathered is not None and manifest is not None:
        test = stored_options(Format.SPRT, options)
        assert isinstance(test, SprtOptions)
        scale = tenths_per_point(rules)  # deltas are given in points per game
        plan = manifest.plan
        # The cap is the blocks of the plan, as the run used it (with a deal file the configuration's
        # ``deal_sets`` is only its unused default).
        units = gathered.units([block.id for rnd in plan.walk() for block in rnd.blocks])
        comparison.sprt = sprt(
            gathered.complete_prefix(units, plan.rotations),
            test.delta0 * scale, test.delta1 * scale, alpha=test.alpha, beta=test.beta, burn_in=test.burn_in,
            cap=len(units) or config.get("deal_sets"), method=test.method, per_point=scale, a=comparison.a,
            b=comparison.b,
        )
    bots = [row.bot for row in rows]
    return FolderReport(rules, rows, comparison, tally.matrix(bots), tally.seats(), tally.clusters,
                        tally.pairs(bots))


def _kept_processes(config: Mapping[str, Any]) -> set[str]:
    """The launched gRPC bots of a manifest's configuration that kept one process from game to game
    (``fresh_process = false``; none when every game had a new process)."""
    if config.get("fresh_process", True):
        return set()
    return {str(bot.get("name")) for bot in config.get("bots", []) if isinstance(bot, dict) and bot.get("command")}


def _copies(config: Mapping[str, Any], bots: Sequence[str]) -> dict[str, str]:
    """The second copies of A and B that fill the tables of a head-to-head or a sequential test without
    opponents (``base#2``), each with its line's reason: they are not ranked."""
    options = config.get("format_options", {})
    if config.get("format") not in ("head-to-head", "sprt") or options.get("opponents"):
        return {}
    configured = {str(bot.get("name")) for bot in config.get("bots", []) if isinstance(bot, dict)}
    out = {}
    for bot in bots:
        original = bot.rpartition("#")[0]
        if bot not in configured and original in (options.get("a"), options.get("b")):
            out[bot] = f"a second copy of {original} (fills the table)"
    return out


def _ended(folder: Path, manifest: Manifest, games_done: int) -> bool:
    """True when the event is over: every game of its plan recorded, or its last run finished (a sequential
    test stops when it decides)."""
    planned = manifest.plan.game_count
    if planned and games_done >= planned:
        return True
    try:
        status = read_status(folder)
    except RecordsError:
        return False
    return status is not None and status.state == "finished"


def folder_report(folder: Path, fmt: str = "table", wide: bool = False) -> str:
    """Everything the records of ``folder`` say about the bots (the text standings compact unless ``wide``)."""
    return render_report(read_folder(folder), fmt, wide=wide)


def write_standings(folder: Path, report: FolderReport | None = None) -> None:
    """Recomputes a results folder's report, in one pass over its records (unless ``report`` is that
    pass, already made), into its standings files and ``head_to_head.csv`` (and ``comparison.csv``
    when two bots are compared), each written atomically (a live view reads the old file or the new
    one, whole)."""
    if report is None:
        report = read_folder(folder)
    files = {}
    for name, fmt in STANDINGS_FILES.items():
        if fmt == "csv":
            files[name] = render_standings(report.standings, report.rules, fmt)
        else:  # the text files hold the standings and the comparison; the JSON file everything
            files[name] = render_report(report, fmt, whole=fmt == "json", wide=fmt != "table")
    files[HEAD_TO_HEAD_FILE] = render_head_to_head(report.matrix, report.bots, report.rules, "csv")
    if report.comparison is not None:
        files[COMPARISON_FILE] = comparisons_csv([report.comparison], report.rules)
    for name, text in files.items():
        write_atomic(folder / name, text, durable=False)


# -- the whole report ------------------------------------------------------------------------------


def render_report(report: FolderReport, fmt: str = "table", whole: bool = True, wide: bool = True) -> str:
    """The report in ``fmt``. Text has the standings (every column when ``wide``), the comparison, what
    each measure is for, and (when ``whole``) the head-to-head matrix and the seats; JSON has everything;
    CSV the standings and, after an empty line, the comparison."""
    rules = report.rules
    if fmt == "json":
        return json_text({
            **standings_dict(report.standings, rules),
            "comparison": comparison_dict(report.comparison, rules) if report.comparison else None,
            "head_to_head": [comparison_dict(c, rules) for c in report.matrix.values()],
            "seats": [seat_dict(row, rules) for row in report.seats],
            "pairs": pairs_dict(report.pairs, rules),
        })
    if fmt == "csv":
        text = render_standings(report.standings, rules, "csv")
        if report.comparison is not None:
            text += "\n" + comparisons_csv([report.comparison], rules)
        return text
    parts = [render_standings(report.standings, rules, fmt, wide)]
    if report.comparison is not None:
        parts.append(render_comparison(report.comparison, rules))
    if report.standings:
        said = measures(report.comparison)
        if fmt == "table" and not wide:  # for a terminal: no line beyond 100 characters
            said = textwrap.fill(said.strip(), 100, break_long_words=False, break_on_hyphens=False) + "\n"
        parts.append(said)
    if whole:
        bots = report.bots
        if len(bots) > MATRIX_LIMIT:
            parts.append(f"Head to head: {len(bots)} bots are too many for a table here; every pair that met is in "
                         f"{HEAD_TO_HEAD_FILE} in the results folder (written with the standings files) and in the "
                         "JSON report (--format json).\n")
        elif report.matrix:
            parts.append("Head to head (row bot against column bot: mean difference per game in points, and LOS)\n"
                         + render_head_to_head(report.matrix, bots, rules, fmt))
        parts.append("Seats (mean round score across all bots, in points)\n"
                     + render_seat_report(report.seats, rules, fmt))
        said_pairs = pair_lines(report.pairs, rules)
        if said_pairs and fmt == "table" and not wide:  # as the measures: no line beyond 100 characters
            said_pairs = [textwrap.fill(line, 100, break_long_words=False, break_on_hyphens=False)
                          for line in said_pairs]
        if said_pairs:
            parts.append("\n".join(said_pairs) + "\n")
    return "\n".join(parts)
