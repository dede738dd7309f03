"""The Python bot kit's Bot API: write ``call(view)`` and ``play(view)``, then ``run()``.

A whole bot::

    from arena.botkit import Bot, run

    class LowestBot(Bot):
        name = "lowest"

        def call(self, view):
            return view.legal_calls[0]

        def play(self, view):
            return view.legal.cards()[-1]

    if __name__ == "__main__":
        raise SystemExit(run(LowestBot))

The ``view`` is a :class:`~arena.kit.view.RemoteView` (a :class:`~arena.core.views.View`) with the
same attributes as the in-process :class:`~arena.core.views.SeatView`, so the same class plays both
ways; ``view.deadline_ms`` is the time the arena gives the decision (0: no limit), for a bot that
budgets its thinking. ``run(factory)`` (:mod:`arena.kit.runner`) reads the command line and keeps the
bot connected until the tournament is over; a session with the arena, with the instances and threads
it makes, is :mod:`arena.kit.session`.

A ``call``, ``play`` or ``on_event`` that raises has its traceback printed to stderr, and the bot
plays on. When ``call`` or ``play`` raised (or the instance for the game could not be made), the kit
tells the arena at once with a ``BotError`` (the exception's type and message, and the file and line
of the bot's own code where it was raised: :func:`~arena.players.tracebacks.raised_at`); the arena
records a ``crash`` fault with them, plays its fallback for that decision and asks the bot again at
its next one. An arena that does not read ``BotError`` (``Welcome.takes_bot_errors`` unset: an older
one) is sent none; that decision is then left unanswered and the arena's deadline takes its course.
"""

from __future__ import annotations

import sys
from typing import Any

from arena.core.cards import Card
from arena.core.views import View
from arena.errors import ArenaError
from protocol import callbreak_pb2 as pb

__all__ = ["Bot", "Refused"]


class Bot:
    """Base class of a bot: override :meth:`call` and :meth:`play`; the rest is optional.

    Over the network the kit calls these methods from a worker thread, never two at a time on one
    instance.
    """

    name = "bot"
    version = "0"

    def call(self, view: View) -> int:
        """How many tricks to call: a value of ``view.legal_calls``."""
        raise NotImplementedError

    def play(self, view: View) -> Card | str:
        """Which card to play: one of ``view.legal``."""
        raise NotImplementedError

    def on_event(self, event: pb.Event) -> None:
        """Called for every event when overridden (the kit then asks the arena for events)."""

    @property
    def wants_events(self) -> bool:
        """True when the class overrides :meth:`on_event` (an arena asks ``wants_events`` of any bot)."""
        return type(self).on_event is not Bot.on_event

    def on_notice(self, notice: pb.Notice) -> None:
        """Called for every notice; prints it to stderr by default."""
        kind = _enum_name(pb.NoticeKind, notice.kind)
        print(f"[{self.name}] arena notice {kind}: {notice.detail}", file=sys.stderr, flush=True)


class Refused(ArenaError):
    """The arena refused the bot; ``reason`` is the ``RefusalReason`` value, ``detail`` its words."""

    def __init__(self, reason: int, detail: str) -> None:
        super().__init__(f"{_enum_name(pb.RefusalReason, reason)}: {detail}")
        self.reason = reason
        self.detail = detail


def _enum_name(enum: Any, value: int) -> str:
    """The name of a protocol enum value, or its number when this kit is older than the arena."""
    try:
        return str(enum.Name(value))
    except ValueError:
        return str(value)

