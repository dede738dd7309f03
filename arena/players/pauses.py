"""The arena's own pauses, which no bot's deadline pays for.

A large event holds many live objects (a thousand tables, about a million), and Python's cyclic
garbage collector stops the whole process while it looks through them: with the interpreter's
defaults, a full collection during a 1,000-table run took 0.8 s, in which no answer can be read,
and the collections together took a fifth of the run. So:

- :func:`settle`, called as an arena starts, tunes the collector for a long-running process: what
  exists by then (modules, the configuration) is frozen out of its reach, and a collection of
  young objects runs after 50,000 more objects were made than freed, not 700 (each such
  collection then finds most of the short-lived objects gone already);
- :func:`paused_s` is the time the collector has stopped the process so far: a deadline is
  extended by the pauses that fell inside it (remote and in-process bots), so a bot is never late
  because the arena stood still.
"""

from __future__ import annotations

import gc
import time

__all__ = ["THRESHOLDS", "paused_s", "settle"]

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
