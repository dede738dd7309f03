"""Durable tournament records: an append-only JSON Lines file and a manifest, in one folder.

``results/<tournament>/manifest.json`` holds the configuration, the plan and the bots' standing
(withdrawn, disqualified); ``records.jsonl`` holds one record per round played at a table,
written and flushed as each round ends, fsynced as a group commit at most
:attr:`ResultsStore.sync_interval` later (a timer sees to it while an event loop runs). The
format is public (``docs/records.md``): load it with pandas or jq.

Resume reads the records back. A torn last line (a power cut in the middle of a write) is
detected and cut off; the rounds of a game that did not finish are dropped, so the game is
played again from its start; every game whose last round is recorded is skipped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from arena.core.cards import card_text
from arena.core.game import RoundResult
from arena.errors import RecordsError
from arena.event.records import FORMAT_VERSION, GameRecords, RoundRecord, group_games, parse_record
from arena.event.schedule import Assignment
from arena.players.table import GameRecord

__all__ = ["ResultsStore", "game_lines", "read_lines", "read_records", "round_json", "write_atomic"]

_TEXT = tuple(card_text(i) for i in range(52))
MANIFEST = "manifest.json"
RECORDS = "records.jsonl"


def game_lines(
    tournament: str, seed: int, deals: str, assignment: Assignment, record: GameRecord, first: int = 0
) -> list[str]:
    """The records of a game's rounds from ``first`` on, one JSON line per round, in the public format.

    ``record`` may be a game in progress: its last round is then not marked final.
    """
    # The fields shared by every round of the game are encoded once; each line is that prefix
    # followed by the round's own fields.
    head = _json({
        "v": FORMAT_VERSION, "tournament": tournament, "game": assignment.id, "block": assignment.block,
        "schedule_round": assignment.round, "group": assignment.group, "deal_set": assignment.deal_set,
        "rotation": assignment.rotation, "seed": seed, "deals": deals, "rules": record.rules.to_dict(),
        "seats": list(assignment.seats), "first_dealer": assignment.first_dealer,
    })[:-1]
    over = any(record.places)
    lines = []
    last = len(record.rounds) - 1
    for index in range(first, len(record.rounds)):
        result = record.rounds[index]
        final = over and index == last
        data: dict[str, Any] = {
            "faults": [f.to_dict() for f in record.faults if f.round_number == result.round_number],
            "redeals": [
                {"attempt": r.attempt, "reason": r.reason}
                for r in record.redeals if r.round_number == result.round_number
            ],
            "fallbacks": list(record.fallbacks[index]) if index < len(record.fallbacks) else [0, 0, 0, 0],
            "final": final,
        }
        if final:
            data["places"] = list(record.places)
            data["versions"] = list(record.versions)
        data["timings"] = {"think_ms": [round(t, 3) for t in record.think_ms]} if final else {}
        lines.append(
            f'{head},"deal":"{assignment.deal_set}.{result.round_number}.{result.attempt}",'
            f"{round_json(result)[1:-1]},{_json(data)[1:]}\n"
        )
    return lines


def round_json(result: RoundResult) -> str:
    """``json.dumps(round_dict(result))`` (compact), built directly: records are written for
    every round of every game, and this is most of their cost."""
    tricks = ",".join(
        f'{{"leader":{t.leader},"cards":["{_TEXT[t.cards[0].index]}","{_TEXT[t.cards[1].index]}",'
        f'"{_TEXT[t.cards[2].index]}","{_TEXT[t.cards[3].index]}"],"winner":{t.winner}}}'
        for t in result.tricks
    )
    c, w, sc, to = result.calls, result.tricks_won, result.scores, result.totals
    return (
        f'{{"round":{result.round_number},"attempt":{result.attempt},"dealer":{result.dealer},'
        f'"trump":"{result.trump.letter}","hands":["{result.hands[0]}","{result.hands[1]}","{result.hands[2]}",'
        f'"{result.hands[3]}"],"calls":[{c[0]},{c[1]},{c[2]},{c[3]}],"tricks":[{tricks}],'
        f'"tricks_won":[{w[0]},{w[1]},{w[2]},{w[3]}],"scores":[{sc[0]},{sc[1]},{sc[2]},{sc[3]}],'
        f'"totals":[{to[0]},{to[1]},{to[2]},{to[3]}]}}'
    )


def _json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"))


def read_lines(path: Path, repair: bool = False, skip_torn: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """The JSON objects of a records file with their line numbers. A torn last line (no newline,
    or not JSON) is an error, unless ``repair`` cuts it off the file or ``skip_torn`` leaves it out
    (a reader of a folder being written, which may see a line half written); damage anywhere else
    is always an error, with its line."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    torn = bool(raw) and not raw.endswith(b"\n")
    records: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(lines, start=1):
        last = number == len(lines)
        try:
            record = json.loads(line) if not (last and torn) else None
        except ValueError:
            record = None
        if not isinstance(record, dict):
            if not last:
                raise RecordsError(f"{path}, line {number}: not a JSON record; the file is damaged")
            if skip_torn:
                break
            if not repair:
                raise RecordsError(f"{path}, line {number}: the last record is incomplete (a torn write)")
            with path.open("r+b") as f:
                f.truncate(len(raw) - len(line) - (0 if torn else 1))
                f.flush()
                os.fsync(f.fileno())
            break
        records.append((number, record))
    return records


def read_records(path: Path, repair: bool = False) -> list[RoundRecord]:
    """The records of a file as typed values (see :func:`read_lines` for damage and repair)."""
    return [parse_record(data, number, path.name) for number, data in read_lines(path, repair)]


class ResultsStore:
    """One tournament's results folder."""

    def __init__(self, folder: Path, sync_interval: float = 0.2) -> None:
        self.folder = folder
        self.manifest_path = folder / MANIFEST
        self.records_path = folder / RECORDS
        self.sync_interval = sync_interval
        """Longest time written records may wait for their fsync (0: fsync every append)."""
        self._file: TextIO | None = None
        self._synced = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._syncing: concurrent.futures.Future[None] | None = None
        self._syncer: concurrent.futures.ThreadPoolExecutor | None = None

    def manifest(self) -> dict[str, Any] | None:
        """The manifest, if the folder has one."""
        if not self.manifest_path.exists():
            return None
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise RecordsError(f"{self.manifest_path} cannot be read: {err}") from None
        if not isinstance(data, dict):
            raise RecordsError(f"{self.manifest_path} is not a JSON object")
        return data

    def write_manifest(self, manifest: Mapping[str, Any]) -> None:
        """Writes the manifest atomically (a reader sees the old one or the new one, whole)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_atomic(self.manifest_path, json.dumps(manifest, indent=1, sort_keys=True) + "\n")

    def clear(self) -> None:
        """Removes the records and the manifest (a fresh start)."""
        for path in (self.records_path, self.manifest_path):
            if path.exists():
                path.unlink()

    def open(self) -> list[GameRecords]:
        """Opens the folder for a run: repairs a torn last line, drops the rounds of games that did
        not finish (they are played again), and returns the complete games."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.manifest() is None and self.records_path.exists() and self.records_path.stat().st_size:
            raise RecordsError(
                f"{self.records_path} holds records but {self.manifest_path.name} is missing, so nothing says "
                "which tournament they belong to: restore the manifest, or use --fresh to discard the records"
            )
        lines = read_lines(self.records_path, repair=True)
        records = [parse_record(data, number, RECORDS) for number, data in lines]
        games = group_games(records)
        complete = {g.game for g in games}
        if any(r.game not in complete for r in records):  # rounds of unfinished games: played again
            write_atomic(self.records_path, "".join(_line(data) for (_, data), r in zip(lines, records, strict=True)
                                                    if r.game in complete))
        return games

    def append(self, lines: Iterable[str]) -> None:
        """Appends record lines: written and flushed at once, and fsynced as a group commit, at most
        :attr:`sync_interval` seconds after they were written (and always by :meth:`close`)."""
        text = "".join(lines)
        if self._file is None:
            self._file = self.records_path.open("a", encoding="utf-8")
        self._file.write(text)
        self._file.flush()
        now = time.monotonic()
        if now - self._synced >= self.sync_interval:
            self._sync()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self._timer = loop.call_later(self.sync_interval - (now - self._synced), self._sync)

    def _sync(self) -> None:
        self._timer = None
        self._synced = time.monotonic()
        if self._file is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            os.fsync(self._file.fileno())
            return
        del loop  # an event loop serves bots: the fsync, which can take a while, goes to a worker thread
        if self._syncing is None or self._syncing.done():
            if self._syncer is None:
                self._syncer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="fsync")
            self._syncing = self._syncer.submit(os.fsync, self._file.fileno())

    def close(self) -> None:
        """Makes every record durable and closes the file."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._syncing is not None:
            self._syncing.result()  # the file must not close under a sync in flight on the worker thread
            self._syncing = None
        if self._syncer is not None:
            self._syncer.shutdown()
            self._syncer = None
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None

    def records(self) -> list[RoundRecord]:
        """Every record (a torn last line is an error here: run the tournament to repair it)."""
        return read_records(self.records_path)

    def games(self) -> list[GameRecords]:
        """The complete games, in file order (a last line still being written is left out)."""
        lines = read_lines(self.records_path, skip_torn=True)
        return group_games([parse_record(data, number, RECORDS) for number, data in lines])


def _line(record: Mapping[str, Any]) -> str:
    return _json(record) + "\n"


def write_atomic(path: Path, text: str, *, durable: bool = True) -> None:
    """Writes ``text`` aside and renames it over ``path``: a reader sees all or nothing. ``durable``
    also fsyncs the file and its folder (a live view that is rewritten every second need not be)."""
    temp = path.with_suffix(path.suffix + ".tmp")
    with temp.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        if durable:
            os.fsync(f.fileno())
    os.replace(temp, path)
    if not durable:
        return
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
