"""In-process Python bots as table seats, and :func:`play_out` for quick games without a table.

How an in-process bot plays at a table:

- **A worker thread each.** A :class:`LocalPlayer` (one seat of one game) runs its bot's
  ``call(view)``, ``play(view)`` and ``on_event(event)`` in a daemon thread of its own, started at
  the seat's first request and kept for the whole game. The calls run there one at a time, in the
  order the table made them, so bot code never runs on two threads at once, and never on the
  arena's event loop: a slow bot holds up its own table only, while the loop goes on serving the
  others. (A bot computing in pure Python still shares the interpreter lock with the loop: it
  slows the other tables down a little, it cannot stop them.) A bot built on the bot kit that does
  not override ``on_event`` is sent no events, as over the network.
- **The deadline applies.** A decision waits for the bot's answer at most the table's deadline
  plus what is left of the seat's time bank (no limit when the deadline is 0). Past that, it is a
  ``late`` fault and the fallback is played, exactly as for a remote bot. The think time recorded
  for an answer is the time the bot spent on it in its thread.
- **An overrun runs on.** A thread cannot be stopped: a call that overran its time keeps running
  until it returns, and its answer is then thrown away. The seat's later calls wait behind it in
  the thread's queue and are judged by their own deadlines, so while the bot is stuck each of its
  decisions is late too. Events wait in the thread's queue, ahead of the seat's next decision;
  the table never waits for them, except for a game's last event, which it waits for at most as
  long as the seat's last decision could have (1 s before its first decision), and not at all
  while the bot is stuck.
- **Crashes are faults.** Whatever a bot raises, ``SystemExit`` and ``KeyboardInterrupt``
  included, is a ``crash`` fault of that seat, never the arena's exit: the fallback plays that
  decision and the seat is asked as usual at its next one. Its detail names the exception, its
  message and where the bot's own code raised it (:func:`crash_detail`, :func:`raised_at`), e.g.
  ``the bot raised ZeroDivisionError: division by zero, at bot.py:12``. What ``on_event`` raises is
  ignored.
- **Nothing is left behind.** :meth:`LocalPlayer.close`, called when the game ends, lets the thread
  end once it has nothing left to run; the thread also ends by itself when the player is
  garbage-collected or has been idle for a minute. A bot stuck for ever keeps its thread, but a
  daemon thread never keeps the arena's process from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from arena.core.cards import Card
from arena.core.faults import FaultKind, PlayerFault, bounded
from arena.core.game import Game, Phase
from arena.core.views import View
from arena.players.base import Decision, DecisionKind, GameEnd, QuietPlayer, TableEvent
from arena.players.pauses import paused_s
from arena.players.tracebacks import raised_at

__all__ = ["InProcessBot", "LocalPlayer", "crash_detail", "play_out", "raised_at"]

_IDLE_S = 60.0
"""A worker thread with nothing to run for this long ends (a new one starts if work comes)."""
_FIRST_EVENT_WAIT_S = 1.0
"""How long an event waits for the bot's handler before the seat's first decision sets the limit."""


def crash_detail(error_type: str, message: str, file: str = "", line: int = 0) -> str:
    """The detail of a ``crash`` fault for an error a bot raised, each part of the bot's text cut short
    (:func:`~arena.core.faults.bounded`): ``the bot raised ZeroDivisionError: division by zero, at bot.py:12``."""
    detail = f"the bot raised {bounded(error_type) or 'an error'}"
    if message:
        detail += f": {bounded(message)}"
    if file:
        detail += f", at {bounded(file)}" + (f":{line}" if line else "")
    return detail


class InProcessBot(Protocol):
    """What an in-process bot implements: ``call(view)`` and ``play(view)``."""

    def call(self, view: View) -> int:
        """A call in ``view.legal_calls``."""
        ...

    def play(self, view: View) -> Card | str:
        """A card of ``view.legal``."""
        ...


_Outcome = tuple[object, float, BaseException | None]
"""What a bot call gave: its return value, the time it took in ms, and what it raised."""
_Job = tuple[Callable[[Any], object], object, asyncio.AbstractEventLoop, asyncio.Future[_Outcome]]
"""A bot call to run, its argument, and the loop and future waiting for its outcome."""


def _settle(future: asyncio.Future[_Outcome], outcome: _Outcome) -> None:
    if not future.done():  # the waiter may have given up (late) or been cancelled
        future.set_result(outcome)


class _Worker:
    """The daemon thread that runs one seat's bot calls, one at a time, in order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        """Calls to run; ``None`` wakes the thread to see whether it may end."""
        self._lock = threading.Lock()
        self._open = 0
        """Calls handed over and not finished yet (guarded by the lock, like the two below)."""
        self._thread: threading.Thread | None = None
        self._closing = False

    @property
    def busy(self) -> bool:
        """Whether calls handed over earlier are still unfinished (a stuck or slow bot)."""
        return self._open > 0

    def submit(self, job: _Job) -> None:
        """Queues ``job``, starting the thread if there is none."""
        with self._lock:
            self._open += 1
            self._jobs.put(job)
            if self._thread is None:
                # A daemon thread, not an executor's worker: those are joined at exit, and a bot
                # stuck for ever would then keep the arena from exiting.
                self._thread = threading.Thread(target=self._run, name=f"bot {self.name}", daemon=True)
                self._thread.start()

    def close(self) -> None:
        """Lets the thread end once it has run what is queued; never blocks."""
        with self._lock:
            if self._thread is not None and not self._closing:
                self._closing = True
                self._jobs.put(None)

    def _run(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=_IDLE_S)
            except queue.Empty:
                job = None
            if job is None:
                with self._lock:
                    self._closing = False
                    if self._open == 0:  # calls queued after a close keep the thread going
                        self._thread = None
                        return
                continue
            self._execute(job)
            del job  # do not hold the view or event until the next call comes

    def _execute(self, job: _Job) -> None:
        """Runs one bot call and hands its outcome back to the waiting loop."""
        call, argument, loop, future = job
        start = time.perf_counter()
        try:
            value, error = call(argument), None
        except BaseException as err:  # SystemExit too: a bot's way out is a fault of its seat
            value, error = None, err
        outcome = (value, (time.perf_counter() - start) * 1000.0, error)
        with self._lock:
            self._open -= 1
        # The last thing before the thread waits again: the loop wakes up wanting the interpreter lock.
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits for this answer any more
            loop.call_soon_threadsafe(_settle, future, outcome)


def _event_handler(bot: object) -> Callable[[TableEvent], object] | None:
    """The bot's ``on_event``, unless it has none or only the bot kit's default, which does nothing."""
    handler = getattr(bot, "on_event", None)
    if not callable(handler) or getattr(bot, "wants_events", True) is False:
        return None  # no handler, or one the bot says does nothing (the bot kit's default)
    return handler  # type: ignore[no-any-return]


class LocalPlayer(QuietPlayer):
    """An in-process Python bot as a seat, run in a worker thread of its own (see the module docstring)."""

    def __init__(self, bot: InProcessBot, name: str | None = None) -> None:
        self.bot = bot
        self.name = name or str(getattr(bot, "name", type(bot).__name__))
        self.version = bounded(str(getattr(bot, "version", "")))
        self._on_event = _event_handler(bot)
        self.wants_events = self._on_event is not None
        # The bot's methods are looked up in the worker thread, so a missing one is a crash fault.
        self._ask: dict[DecisionKind, Callable[[View], object]] = {
            DecisionKind.CALL: lambda view: bot.call(view),
            DecisionKind.PLAY: lambda view: bot.play(view),
        }
        self._event_wait_s: float | None = _FIRST_EVENT_WAIT_S
        self._stuck = False
        """The seat's last decision ran past its time (its thread may be busy with it for ever)."""
        self._worker = _Worker(self.name)
        self._finalizer = weakref.finalize(self, self._worker.close)
        self._finalizer.atexit = False

    async def decide(self, decision: Decision) -> tuple[object, float]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_Outcome] = loop.create_future()
        limit_ms = decision.deadline_ms + decision.time_bank_ms if decision.deadline_ms else 0
        self._event_wait_s = limit_ms / 1000.0 if limit_ms else None
        sent = time.perf_counter()
        timer = (loop.call_later(limit_ms / 1000.0, _expire, future, sent, self._worker.busy, paused_s())
                 if limit_ms else None)
        # The last thing before awaiting: the thread wakes up wanting the interpreter lock.
        self._worker.submit((self._ask[decision.kind], decision.view, loop, future))
        try:
            answer, elapsed, error = await future
        except PlayerFault:
            self._stuck = True  # late: its thread is still busy with this call
            raise
        finally:
            if timer is not None:
                timer.cancel()
        self._stuck = False
        if error is not None:  # a bot's bug, or its way out, is a fault of that seat, never of the tournament
            try:
                said = str(error)
            except Exception:
                said = ""
            file, line = raised_at(error) or ("", 0)
            raise PlayerFault(FaultKind.CRASH, crash_detail(type(error).__name__, said, file, line)) from error
        if isinstance(answer, Card):
            answer = str(answer)
        return answer, elapsed

    async def notify(self, event: TableEvent) -> None:
        handler = self._on_event
        if handler is None:
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_Outcome] = loop.create_future()
        if self._stuck or not isinstance(event.body, GameEnd):
            # The event waits in the bot's queue, ahead of its next decision; the table goes on. Only
            # the game's last event is waited for (a little, behind the events still queued), so the
            # bot has seen the whole game; not when the bot is stuck in a decision that overran.
            self._worker.submit((handler, event, loop, future))
            return
        wait = self._event_wait_s
        timer = loop.call_later(wait, _stop_waiting, future) if wait is not None else None
        self._worker.submit((handler, event, loop, future))
        try:
            await future  # what the handler raised is ignored: an event must not stop the game
        finally:
            if timer is not None:
                timer.cancel()

    async def close(self) -> None:
        """The game is over: the worker thread ends once idle. Never blocks; calling it again does nothing."""
        self._worker.close()


def _expire(future: asyncio.Future[_Outcome], sent: float, behind: bool, paused: float) -> None:
    if future.done():
        return
    owed = paused_s() - paused
    if owed > 0:  # the arena's process stood still meanwhile: the bot gets that time back
        asyncio.get_running_loop().call_later(owed, _expire, future, sent, behind, paused + owed)
        return
    waited = (time.perf_counter() - sent) * 1000.0
    busy = " (the bot was still busy with an earlier call that ran past its time)" if behind else ""
    future.set_exception(PlayerFault(FaultKind.LATE, f"no answer within {waited:.0f} ms: the deadline passed{busy}"))


def _stop_waiting(future: asyncio.Future[_Outcome]) -> None:
    if not future.done():
        future.set_result((None, 0.0, None))


def play_out(game: Game, bots: Sequence[InProcessBot]) -> None:
    """Plays the rest of ``game`` step by step with in-process bots (by seat), through their views.

    No fault handling and no threads: an illegal call or card raises. Tables use
    :func:`arena.players.table.play_game`.
    """
    while not game.over:
        seat = game.current_seat
        view = game.view(seat)
        if game.phase is Phase.CALLING:
            game.call(bots[seat].call(view))
        else:
            game.play(bots[seat].play(view))
