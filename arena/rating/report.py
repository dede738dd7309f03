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
from arena.event.store import ResultsStore
from arena.rating.ratings import (
    compare,
    compute_standings,
    head_to_head,
    render_comparison,
    render_head_to_head,
    render_seat_report,
    render_standings,
    seat_report,
)

__all__ = ["folder_report"]

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


def _planned_blocks(manifest: dict[str, Any]) -> int | None:
    """The blocks the plan holds: the sequential test's cap, as the run used it (with a deal file the
    configuration's ``deal_sets`` is only its unused default)."""
    games = manifest.get("plan", {}).get("games")
    if not isinstance(games, list):
        return None
    return len({str(game).rsplit("-p", 1)[0] for game in games}) or None


def folder_report(folder: Path, fmt: str = "table") -> str:
    """Everything the records of ``folder`` say about the bots."""
    store = ResultsStore(folder)
    manifest = store.manifest() or {}
    records = store.records()
    rules = Rules.from_dict(records[0]["rules"]) if records else Rules.profile()
    house = manifest.get("house_bots", [])
    rows = compute_standings(records, house)
    if fmt == "csv":
        return render_standings(rows, rules, "csv")
    config = manifest.get("config", {})
    options = config.get("format_options", {})
    comparison = None
    if config.get("format") in ("head-to-head", "sprt"):
        scale = tenths_per_point(rules)
        sequential = config.get("format") == "sprt"
        comparison = compare(
            records, options["a"], options["b"],
            delta0=options.get("delta0", 0.0) * scale if sequential else None,
            delta1=options["delta1"] * scale if sequential else None,
            alpha=options.get("alpha", 0.05), beta=options.get("beta", 0.05), burn_in=options.get("burn_in", 30),
            cap=_planned_blocks(manifest) or config.get("deal_sets"), method=options.get("method", "alt2"),
        )
    bots = [r.bot for r in rows]
    matrix = head_to_head(records, bots) if len(bots) <= MATRIX_LIMIT else {}
    seats = seat_report(records)
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
