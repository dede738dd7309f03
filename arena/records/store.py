"""Durable tournament records: an append-only JSON Lines file and a manifest, in one folder.

``results/<tournament>/manifest.json`` holds the configuration, the plan and the bots' standing
(withdrawn, disqualified); ``seat_key`` (mode 0600) the event's secret key of the seat seeds
(:func:`arena.core.dealing.seat_seed`), made with the folder and read back on resume;
``records.jsonl`` holds one record per round played at a table, written and flushed as each round
ends. The fsync is a group commit on a worker thread of its
own (a timer thread, whatever runs the store: an event loop or not), started at most
:attr:`ResultsStore.sync_interval` after the first record it covers was written, and never more
often than once per interval; :meth:`ResultsStore.close` fsyncs whatever is left. The format is
public (``docs/records.md``), and written and read by :mod:`arena.records.format` alone: the store
keeps the file.

Resume reads the records back. A torn last line (a power cut in the middle of a write) is
detected and cut off; the rounds of a game that did not finish are dropped, so the game is
played again from its start; every game whose last round is recorded is skipped.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from arena.core.dealing import SEAT_KEY_BYTES
from arena.errors import RecordsError
from arena.records.format import (
    GameRecords,
    RoundRecord,
    TornLine,
    group_games,
    iter_records,
    parse_record,
    read_lines,
    read_records,
)

__all__ = ["ResultsStore", "write_atomic"]

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
SEAT_KEY = "seat_key"


class ResultsStore:
    """One tournament's results folder."""

    def __init__(
        self, folder: Path, sync_interval: float = 0.2, *, clock: Callable[[], float] = time.monotonic,
        timer: Callable[[float, Callable[[], None]], threading.Timer] = threading.Timer,
    ) -> None:
        self.folder = folder
        self.manifest_path = folder / MANIFEST
        self.records_path = folder / RECORDS
        self.seat_key_path = folder / SEAT_KEY
        self.sync_interval = sync_interval
        """Longest wait, in seconds, between writing a record and starting the fsync that makes it
        durable (0: fsync in every append)."""
        self.clock = clock
        """Monotonic seconds, read where the group commit decides when its next fsync is due."""
        self.timer = timer
        """Makes the group commit's thread: calls its function once the delay has passed on :attr:`clock`,
        unless cancelled first (a test gives a clock it advances and a timer that follows it)."""
        self._file: TextIO | None = None
        self._lock = threading.Lock()
        """Guards the counts below and :attr:`_commit`, shared with the group-commit thread."""
        self._written = 0
        """Appends written and flushed to the file."""
        self._synced = 0
        """Appends covered by a finished fsync."""
        self._last_start = -math.inf
        """When the last fsync began (on :attr:`clock`): the next waits for the interval after it."""
        self._commit: threading.Timer | None = None
        """The group commit waiting for its time or running, if any."""
        self._closing = False
        self._error: OSError | None = None
        """What a group commit's fsync raised, raised again by the next append or close."""

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

    def seat_key(self, given: bytes | None = None) -> bytes:
        """The event's key of the seat seeds: the folder's (a resumed event hands out the same seeds), else
        ``given`` (``tournament.seat_key``), else :data:`~arena.core.dealing.SEAT_KEY_BYTES` random bytes; a
        key new to the folder is written to its ``seat_key`` file, which only the arena's user may read. A
        ``given`` key other than the folder's is refused: the games recorded were played with the folder's."""
        path = self.seat_key_path
        try:
            text = path.read_text(encoding="ascii")
        except FileNotFoundError:
            key = given if given is not None else secrets.token_bytes(SEAT_KEY_BYTES)
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(path, key.hex() + "\n", mode=0o600)
            return key
        except (OSError, UnicodeDecodeError) as err:
            raise RecordsError(f"{path} cannot be read: {err}") from None
        try:
            key = bytes.fromhex(text.strip())
        except ValueError:
            key = b""
        if len(key) != SEAT_KEY_BYTES:
            raise RecordsError(f"{path} does not hold a seat key ({2 * SEAT_KEY_BYTES} hexadecimal digits): restore "
                               "the file, or use --fresh to discard these results and start again")
        if given is not None and given != key:
            raise RecordsError(f"tournament.seat_key is not the key {path} holds, with which the games recorded "
                               "there were played: give that key, leave tournament.seat_key out (the folder's "
                               "is used), or use --fresh to discard these results and start again")
        if path.stat().st_mode & 0o077:  # someone opened it up: the arena's user alone may read it
            path.chmod(0o600)
        return key

    def clear(self) -> None:
        """Removes the records, the manifest and the seat key (a fresh start)."""
        for path in (self.records_path, self.manifest_path, self.seat_key_path):
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
        lines = list(read_lines(self.records_path, TornLine.REPAIR))
        records = [parse_record(data, number, str(self.records_path)) for number, data in lines]
        games = group_games(records)
        complete = {g.game for g in games}
        if any(r.game not in complete for r in records):  # rounds of unfinished games: played again
            write_atomic(self.records_path, "".join(_line(data) for (_, data), r in zip(lines, records, strict=True)
                                                    if r.game in complete))
        return games

    def append(self, lines: Iterable[str]) -> None:
        """Appends record lines: written and flushed at once; fsynced by the group commit at most
        :attr:`sync_interval` seconds later (at once when it is 0), and always by :meth:`close`."""
        self._raise_commit_error()
        text = "".join(lines)
        if self._file is None:
            self._file = self.records_path.open("a", encoding="utf-8")
        self._file.write(text)
        self._file.flush()
        if self.sync_interval <= 0:
            os.fsync(self._file.fileno())
            return
        with self._lock:
            self._written += 1
            if self._commit is None:
                self._schedule()

    @property
    def unsynced(self) -> int:
        """Appends written but not yet covered by a finished fsync."""
        with self._lock:
            return self._written - self._synced

    def _schedule(self) -> None:
        """Starts the group commit, due one interval after the last fsync began (at once if that is
        past). Every append it has to cover came after that fsync began, so none waits longer than
        the interval. Called with the lock held."""
        delay = max(0.0, self._last_start + self.sync_interval - self.clock())
        commit = self.timer(delay, self._group_commit)
        commit.name = "fsync records"
        commit.daemon = True  # never holds up an exit: what was written is in the system's hands already
        self._commit = commit
        commit.start()

    def _group_commit(self) -> None:
        """On the timer's thread: fsyncs every append written so far, then starts the next commit
        if appends came in meanwhile."""
        with self._lock:
            covered = self._written
            self._last_start = self.clock()
            file = self._file
        try:
            if file is not None:  # close() waits for this thread before it closes the file
                os.fsync(file.fileno())
        except OSError as err:
            with self._lock:
                self._error = err
                self._commit = None
            return
        with self._lock:
            self._synced = max(self._synced, covered)
            if self._written > covered and not self._closing:
                self._schedule()
            else:
                self._commit = None

    def _raise_commit_error(self) -> None:
        with self._lock:
            error, self._error = self._error, None
        if error is not None:
            raise error

    def close(self) -> None:
        """Makes every record durable and closes the file."""
        with self._lock:
            self._closing = True
            commit = self._commit
        if commit is not None:
            commit.cancel()  # a commit still waiting for its time need not run: the fsync below covers it
            commit.join()  # one running must finish before the file closes under it
        try:
            if self._file is not None:
                self._file.flush()
                os.fsync(self._file.fileno())
                self._file.close()
                self._file = None
            with self._lock:
                self._synced = self._written
            self._raise_commit_error()
        finally:
            with self._lock:
                self._closing = False
                self._commit = None

    def records(self) -> list[RoundRecord]:
        """Every record (a torn last line is an error here: run the tournament to repair it)."""
        return read_records(self.records_path)

    def games(self) -> list[GameRecords]:
        """The complete games, in file order (a last line still being written is left out)."""
        return group_games(list(iter_records(self.records_path, TornLine.SKIP)))


def _line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":")) + "\n"


def write_atomic(path: Path, text: str, *, durable: bool = True, mode: int | None = None) -> None:
    """Writes ``text`` aside and renames it over ``path``: a reader sees all or nothing. ``durable``
    also fsyncs the file and its folder (a live view that is rewritten every second need not be);
    ``mode``, if given, is the file's mode from the moment it exists (0o600: a secret)."""
    temp = path.with_suffix(path.suffix + ".tmp")
    if mode is not None:
        temp.unlink(missing_ok=True)  # a leftover of a crash may have another mode
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        os.fchmod(descriptor, mode)  # whatever the umask took away
        opened = os.fdopen(descriptor, "w", encoding="utf-8")
    else:
        opened = temp.open("w", encoding="utf-8")
    with opened as f:
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
