"""The arena's own pauses, which no bot's deadline pays for.

A large event holds many live objects, and Python's cyclic garbage collector stops the whole
process while it looks through them, time in which no answer can be read: with the interpreter's
settings it stood a run of 1,000 tables still for 39 of its 124 seconds
(``benchmarks/many_tables.py --default-collector``). So:

- :func:`settle`, called as an arena starts, tunes the collector for a long-running process: what
  exists by then (modules, the configuration) is frozen out of its reach, and a collection of
  young objects runs after 50,000 more objects were made than freed, not 700 (each such
  collection then finds most of the short-lived objects gone already);
- :func:`paused_s` is the time the collector has stopped the process so far: a deadline is
  extended by the pauses that fell inside it, for every kind of bot (remote sessions and
  in-process bots keep their own alarms; stdio and HTTP bots wait with :func:`wait_for`), so a bot
  is never late because the arena stood still.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["THRESHOLDS", "paused_s", "settle", "wait_for"]

_T = TypeVar("_T")

THRESHOLDS = (50_000, 20, 10)
"""The collector's thresholds for a settled arena (the interpreter's are 700, 10, 10)."""

_paused = 0.0
_started = 0.0


def paused_s() -> float:
    """Seconds the garbage collector has stopped this process since :func:`settle` first ran."""
    return _paused


def _clock(phase: str, info: dict[str, int]) -> None:
    global _paused, _started
    if phase == "start":
        _started = time.perf_counter()
    else:
        _paused += time.perf_counter() - _started


def settle() -> None:
    """Tunes the collector for a long-running arena and starts counting its pauses; once a process
    (calling it again does nothing)."""
    if _clock not in gc.callbacks:
        gc.callbacks.append(_clock)
        gc.set_threshold(*THRESHOLDS)
        gc.freeze()


async def wait_for(awaitable: Awaitable[_T], seconds: float | None) -> _T:
    """:func:`asyncio.wait_for`, with the collector's pauses during the wait added to ``seconds``:
    :class:`TimeoutError` (the awaitable cancelled) only once ``seconds`` of the arena's running time
    have gone by."""
    if seconds is None:
        return await awaitable
    task = asyncio.ensure_future(awaitable)
    paused = paused_s()
    try:
        done, _ = await asyncio.wait((task,), timeout=seconds)
        while not done and (owed := paused_s() - paused) > 0:
            paused += owed
            done, _ = await asyncio.wait((task,), timeout=owed)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        await asyncio.wait((task,))  # it has stopped before the caller goes on (a cancel of the caller still ends it)
        if not task.cancelled():
            task.exception()  # what it ended with after its time is not the caller's concern
        raise TimeoutError
    return task.result()
