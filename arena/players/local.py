"""In-process Python bots as players, and :func:`play_out` for quick games without a table."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from typing import Protocol

from arena.core.cards import Card
from arena.core.faults import FaultKind, PlayerFault
from arena.core.game import Game, Phase
from arena.core.views import View
from arena.players.base import Decision, DecisionKind, QuietPlayer, TableEvent

__all__ = ["InProcessBot", "LocalPlayer", "play_out"]


class InProcessBot(Protocol):
    """What an in-process bot implements: ``call(view)`` and ``play(view)``."""

    def call(self, view: View) -> int:
        """A call in ``view.legal_calls``."""
        ...

    def play(self, view: View) -> Card | str:
        """A card of ``view.legal``."""
        ...


class LocalPlayer(QuietPlayer):
    """An in-process Python bot. Exceptions from the bot become ``crash`` faults, not crashes."""

    def __init__(self, bot: InProcessBot, name: str | None = None) -> None:
        self.bot = bot
        self.name = name or str(getattr(bot, "name", type(bot).__name__))
        on_event = getattr(bot, "on_event", None)
        self._on_event = on_event if callable(on_event) else None
        self.wants_events = self._on_event is not None

    async def decide(self, decision: Decision) -> tuple[object, float]:
        start = time.perf_counter()
        try:
            if decision.kind is DecisionKind.CALL:
                answer: object = self.bot.call(decision.view)
            else:
                answer = self.bot.play(decision.view)
        except Exception as err:  # a bot's bug is a fault of that seat, never of the tournament
            raise PlayerFault(FaultKind.CRASH, f"the bot raised {type(err).__name__}: {err}") from err
        if isinstance(answer, Card):
            answer = str(answer)
        return answer, (time.perf_counter() - start) * 1000.0

    async def notify(self, event: TableEvent) -> None:
        if self._on_event is not None:
            with contextlib.suppress(Exception):  # an event handler's failure must not stop the game
                self._on_event(event)


def play_out(game: Game, bots: Sequence[InProcessBot]) -> None:
    """Plays the rest of ``game`` step by step with in-process bots (by seat), through their views.

    No fault handling: an illegal call or card raises. Tables use :func:`arena.players.table.play_game`.
    """
    while not game.over:
        seat = game.current_seat
        view = game.view(seat)
        if game.phase is Phase.CALLING:
            game.call(bots[seat].call(view))
        else:
            game.play(bots[seat].play(view))

