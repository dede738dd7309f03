"""The logs of launched bots: what a bot writes to its standard error, kept up to a limit per bot and per event.

A launched process's standard error is a pipe the arena reads in bounded chunks (:meth:`BotLogs.copy`):
what fits under the limits goes to the bot's log, the rest is read and dropped, so a bot never blocks
on a full pipe and never fills the disk. The first time a log reaches a limit it gets a line saying so,
and when the process's output ends, a line with the bytes dropped. The limits count the bot's own
output, a log's size when it is first used (an event that resumes) included; the arena's own lines in
the log (a launch, an exit) are not counted. A write that fails (a full disk) drops its bytes too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import BinaryIO

__all__ = ["BOT_LOG_LIMIT", "EVENT_LOG_LIMIT", "BotLogs", "size_text"]

BOT_LOG_LIMIT = 16 * 2**20
"""Bytes of its own output a bot's log keeps, over all its processes of one event (16 MiB)."""
EVENT_LOG_LIMIT = 256 * 2**20
"""Bytes of output the logs of all the bots of one event keep together (256 MiB)."""
_CHUNK = 64 * 1024
"""Bytes read from a pipe at a time."""


def size_text(count: int) -> str:
    """A number of bytes for a person: ``1,234 bytes``, ``16 MiB``, ``11.2 GiB``."""
    if count < 2**20:
        return f"{count:,} bytes"
    for unit, size in (("GiB", 2**30), ("MiB", 2**20)):
        if count >= size:
            return f"{count / size:.1f}".removesuffix(".0") + f" {unit}"
    raise AssertionError("unreachable")


class BotLogs:
    """The logs of one event's launched bots, and what each of them may still keep."""

    def __init__(self, bot_limit: int = BOT_LOG_LIMIT, event_limit: int = EVENT_LOG_LIMIT) -> None:
        self.bot_limit = bot_limit
        self.event_limit = event_limit
        self._kept: dict[Path, int] = {}
        """Bytes in each log (its size when first used, then what this run added)."""
        self._total = 0
        self._marked: set[Path] = set()
        """Logs that have their line saying they reached a limit."""

    def _room(self, log: Path) -> int:
        if log not in self._kept:
            with contextlib.suppress(OSError):
                self._kept[log] = log.stat().st_size
            self._kept.setdefault(log, 0)
            self._total += self._kept[log]
        return max(0, min(self.bot_limit - self._kept[log], self.event_limit - self._total))

    async def copy(self, fd: int, log: Path) -> int:
        """Reads the pipe ``fd`` (and closes it) to its end, appending what fits to ``log``; the bytes dropped."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2 * _CHUNK, loop=loop)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(fd, "rb", buffering=0))
        dropped = 0
        whole_line = True
        """Whether what was last written to the log ends a line (a line of the arena's starts on one of its own)."""
        try:
            with log.open("ab", buffering=0) as out:
                while data := await reader.read(_CHUNK):
                    room = self._room(log)
                    kept = data[:room]
                    if kept:
                        try:
                            out.write(kept)
                            whole_line = kept.endswith(b"\n")
                        except OSError:
                            kept = b""
                        self._kept[log] += len(kept)
                        self._total += len(kept)
                    dropped += len(data) - len(kept)
                    if len(kept) < len(data) and log not in self._marked:
                        self._marked.add(log)
                        which = (f"its limit of {size_text(self.bot_limit)}" if self._kept[log] >= self.bot_limit
                                 else f"the limit of {size_text(self.event_limit)} for all the bots' logs")
                        self._line(out, f"this log reached {which}: what the bot writes from now on is dropped",
                                   whole_line)
                        whole_line = True
                if dropped:
                    self._line(out, f"{size_text(dropped)} of its output dropped (the log's limit)", whole_line)
        finally:
            transport.close()
        return dropped

    @staticmethod
    def _line(out: BinaryIO, text: str, whole_line: bool) -> None:
        """One line of the arena's in a log, on a line of its own."""
        with contextlib.suppress(OSError):
            out.write(("" if whole_line else "\n").encode() + f"--- {text}\n".encode())
