"""The report of a results folder: standings, the A-B comparison, the head-to-head matrix and the
seat report, in text, markdown, JSON or CSV. Built from the folder's records and manifest alone."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from arena.core.rules import Rules
from arena.core.scoring import tenths_per_point
from arena.event.plan import Manifest
from arena.event.records import GameRecords
from arena.event.store import ResultsStore, write_atomic
from arena.rating.ratings import (
    Comparison,
    Standing,
    compare,
    compute_standings,
    head_to_head,
    render_comparison,
    render_head_to_head,
    render_seat_report,
    render_standings,
    seat_report,
)

__all__ = ["STANDINGS_FILES", "folder_report", "folder_standings", "write_standings"]

MATRIX_LIMIT = 12
"""The head-to-head matrix is shown for fields up to this size."""


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclasses.dataclass
class _Folder:
    """What a results folder holds, read once."""

    manifest: Manifest | None
    games: list[GameRecords]
    rules: Rules

    @classmethod
    def read(cls, folder: Path) -> _Folder:
        store = ResultsStore(folder)
        raw = store.manifest()
        manifest = Manifest.from_dict(raw, str(store.manifest_path)) if raw is not None else None
        games = store.games()
        if games:
            rules = games[0].first.rules
        else:  # scores of bots without a complete game are not shown, but the rules still name the unit
            data = manifest.config.get("rules") if manifest is not None else None
            rules = Rules.from_dict(data) if isinstance(data, dict) else Rules.profile()
        return cls(manifest, games, rules)

    def standings(self) -> list[Standing]:
        manifest = self.manifest
        if manifest is None:
            return compute_standings(self.games)
        return compute_standings(self.games, manifest.house, manifest.statuses)


def folder_standings(folder: Path) -> tuple[list[Standing], Rules]:
    """The standings of a results folder, and the rules its scores are counted under."""
    read = _Folder.read(folder)
    return read.standings(), read.rules


def _planned_blocks(manifest: Manifest) -> int | None:
    """The blocks the plan holds: the sequential test's cap, as the run used it (with a deal file the
    configuration's ``deal_sets`` is only its unused default)."""
    return len(manifest.plan.blocks) or None


def _comparison(read: _Folder) -> Comparison | None:
    """A against B, for the formats that compare two bots (with the SPRT under ``sprt``)."""
    manifest = read.manifest
    if manifest is None or manifest.config.get("format") not in ("head-to-head", "sprt"):
        return None
    config = manifest.config
    options = config.get("format_options", {})
    if config.get("format") != "sprt":
        return compare(read.games, options["a"], options["b"])
    scale = tenths_per_point(read.rules)  # deltas are given in points per game
    plan = manifest.plan
    return compare(
        read.games, options["a"], options["b"],
        delta0=options.get("delta0", 0.0) * scale, delta1=options["delta1"] * scale,
        alpha=options.get("alpha", 0.05), beta=options.get("beta", 0.05), burn_in=options.get("burn_in", 30),
        cap=_planned_blocks(manifest) or config.get("deal_sets"), method=options.get("method", "alt2"),
        order=[block.id for block in plan.blocks], rotations=plan.rotations,
    )


def folder_report(folder: Path, fmt: str = "table") -> str:
    """Everything the records of ``folder`` say about the bots."""
    read = _Folder.read(folder)
    rules = read.rules
    rows = read.standings()
    if fmt == "csv":
        return render_standings(rows, rules, "csv")
    comparison = _comparison(read)
    bots = [r.bot for r in rows]
    matrix = head_to_head(read.games, bots) if len(bots) <= MATRIX_LIMIT else {}
    seats = seat_report(read.games)
    if fmt == "json":
        return json.dumps(_plain({
            "standings": [r.to_dict() for r in rows],
            "comparison": comparison,
            "head_to_head": list(matrix.values()),
            "seats": seats,
        }), indent=2) + "\n"
    parts = [render_standings(rows, rules, fmt)]
    if comparison is not None:
        parts.append(render_comparison(comparison, rules))
    if matrix:
        parts.append("Head to head (row bot against column bot: mean difference per game, and LOS)\n"
                     + render_head_to_head(matrix, bots, rules, fmt))
    parts.append("Seats (mean round score across all bots)\n" + render_seat_report(seats, rules, fmt))
    return "\n".join(parts)


STANDINGS_FILES = {"standings.txt": "table", "standings.md": "markdown", "standings.json": "json",
                   "standings.csv": "csv"}
"""The standings files of a results folder, and the format of each."""


def write_standings(folder: Path) -> None:
    """Recomputes the standings of a results folder into its standings files, each written atomically
    (a live view reads the old file or the new one, whole)."""
    rows, rules = folder_standings(folder)
    for name, fmt in STANDINGS_FILES.items():
        write_atomic(folder / name, render_standings(rows, rules, fmt), durable=False)
