"""What every page of the ladder's site shares: the bounds of every query, the organiser's switches, a version as
a page links it, what is missing and why, the public form of a text, and the records of a done block.

No text shown names a path of the server: every text that comes from a bot or a record passes
:func:`public_text`. Cards are read from a block's records only once the block is done or void
(:data:`SHOWN_STATES`).
"""

from __future__ import annotations

import dataclasses
import re
import sys
import tempfile
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.ladder.db import (
    Block,
    BlockState,
    Entrant,
    LadderState,
    Version,
    aware,
)
from arena.ladder.service import FINAL
from arena.rating.html import REPORT_FILE
from arena.records.format import GameRecords
from arena.records.store import ResultsStore

__all__ = [
    "CHECKS_SHOWN", "FAULTS_SHOWN", "MEMORY_BLOCKS", "PLAYING_SHOWN", "RATING_POINTS", "RECENT_BLOCKS",
    "SHOWN_STATES", "TESTS_SHOWN", "VERSIONS_SHOWN", "FaultLine", "LadderView", "Missing", "Seat", "block_games",
    "fault_lines", "final_report", "ladder_view", "maybe_aware", "public_text", "seat_by_label", "seat_of",
    "seats_of",
]


RECENT_BLOCKS = 10
"""Done blocks of an entrant whose records their page reads (their games and faults)."""
VERSIONS_SHOWN = 50
CHECKS_SHOWN = 200
RATING_POINTS = 2000
FAULTS_SHOWN = 100
TESTS_SHOWN = 200
PLAYING_SHOWN = 100
MEMORY_BLOCKS = 2000
"""The newest done blocks of a version its memory test reads (each block's sums are read once, and kept)."""
SHOWN_STATES = (BlockState.DONE, BlockState.VOID)
"""The block states whose cards may be shown: nobody plays those deals any more."""


@dataclasses.dataclass(frozen=True)
class LadderView:
    """The organiser's switches, as every page may say them."""

    paused: bool
    frozen: bool
    final_state: str
    """``""`` (none), ``playing`` or ``done``."""
    final_deal_sets: int
    final_report: bool
    """The final is done and its report.html is there (the site serves it)."""


@dataclasses.dataclass(frozen=True)
class Seat:
    """A version as a page links it: its label and its entrant."""

    version: str
    entrant: str


@dataclasses.dataclass(frozen=True)
class Missing:
    """What a page would show is not there, or not to be shown; ``why``, in a sentence."""

    why: str


@dataclasses.dataclass(frozen=True)
class FaultLine:
    """A fault, where it happened: the game, the round, the trick (from 1; ``None`` during the calls)."""

    block_id: int
    game: str
    version: str
    seat: int
    round: int
    trick: int | None
    kind: str
    detail: str
    fallback: str | None


_PATH = re.compile(r"(?<![\w.~:/…-])(?:/[^\s/'\"`<>(){}\[\],;:|]+){2,}/?")
"""An absolute path of two steps or more (``/usr/lib``, ``/tmp/x/bot.py``): not one step (``</b>``), nor a part of
a relative path, a URL or a number (``a/b``, ``http://x/y``, ``1/2``)."""


def _server_folders() -> list[str]:
    """Folders of the server a text may name, longest first: the Python that runs the ladder (its virtual
    environment) and the temporary folder; a path in them may hold a space, which :data:`_PATH` would stop at."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, tempfile.gettempdir()}
    return sorted((f.rstrip("/") for f in found if f.rstrip("/").count("/") > 1), key=len, reverse=True)


def public_text(text: str, folder: Path) -> str:
    """``text`` (what a bot wrote, what a check or a record says) with no path of the server in it: a path in the
    ladder's folder ``folder`` becomes relative to it (``versions/<hash>/bot.py``), the Python's and the
    temporary folder's an ellipsis (``…/lib/python3.11/...``), and any other absolute path its last step after
    an ellipsis (``…/bot.py``)."""
    if "/" not in text:
        return text
    for prefix in {str(folder.resolve()).rstrip("/") + "/", str(folder).rstrip("/") + "/"}:
        text = text.replace(prefix, "")
    for other in _server_folders():
        text = text.replace(other + "/", "…/")
    return _PATH.sub(lambda found: "…/" + found.group(0).rstrip("/").rsplit("/", 1)[-1], text)


def final_report(folder: Path) -> Path:
    """Where the final's report.html is (or will be), in the ladder's folder."""
    return folder / FINAL / REPORT_FILE


def ladder_view(session: Session, folder: Path) -> LadderView:
    """The ladder's state (as a ladder without its row of state would have it)."""
    state = session.get(LadderState, 1)
    if state is None:
        return LadderView(False, False, "", 0, False)
    done = state.final_state == "done" and final_report(folder).is_file()
    return LadderView(state.paused, state.frozen, state.final_state, state.final_deal_sets, done)


def seats_of(session: Session, ids: Iterable[int]) -> dict[int, Seat]:
    """The versions of ``ids`` as seats, in one statement."""
    wanted = set(ids)
    if not wanted:
        return {}
    rows = session.execute(select(Version.id, Version.label, Entrant.name)
                           .join(Entrant, Entrant.id == Version.entrant_id).where(Version.id.in_(wanted)))
    return {version_id: Seat(label, name) for version_id, label, name in rows}


def seat_of(seats: dict[int, Seat], version_id: int) -> Seat:
    return seats.get(version_id, Seat(f"version {version_id}", ""))


def seat_by_label(seats: dict[int, Seat], label: str) -> Seat:
    for seat in seats.values():
        if seat.version == label:
            return seat
    return Seat(label, "")


def maybe_aware(moment: datetime | None) -> datetime | None:
    return aware(moment) if moment is not None else None


def block_games(folder: Path, played: Block) -> list[GameRecords]:
    """A block's complete games, in rotation order (under ``rotation = "once"``: version by version)."""
    return sorted(ResultsStore(folder / played.folder).games(), key=lambda g: (g.first.rotation, g.first.group))


def fault_lines(block_id: int, record: GameRecords, folder: Path) -> list[FaultLine]:
    return [FaultLine(block_id, record.game, r.seats[f.seat] if 0 <= f.seat < 4 else "?", f.seat, r.round,
                      None if f.trick is None else f.trick + 1, f.kind.value, public_text(f.detail, folder),
                      f.fallback)
            for r in record.rounds for f in r.faults]
