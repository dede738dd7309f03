"""A person at the table in a browser: a player whose answers come from a page (``callbreak-arena play --web``).

:class:`WebSeat` is a :class:`~arena.players.base.Player` like the terminal's
:class:`~arena.players.human.HumanPlayer`: the table runner asks it, judges its answers with the rules core and
tells it what happens. What the page shows is :class:`SeatState`, made only from what the seat is told and asked
(its own hand, the calls, the cards played, the tricks won, the scores), so it holds nothing another seat hides.
The last trick won stays in :attr:`SeatState.last` until the next is won, whoever leads meanwhile, and
:attr:`SeatState.log` holds every trick of the round and of the round before, its cards by seat and its winner.
:meth:`WebSeat.answer` hands the page's answer to the waiting decision and returns the rules' refusal, in the
words the terminal shows, or ``None`` once the answer was played. Every change counts one more
:attr:`SeatState.version`, which :meth:`WebSeat.changed` waits for.
"""

from __future__ import annotations

import asyncio
import dataclasses

from arena.core.cards import Card, Suit
from arena.core.faults import FaultKind
from arena.core.rules import Rules
from arena.core.turns import seat_after
from arena.players.base import (
    CallMade,
    CardPlayed,
    Decision,
    DecisionKind,
    GameEnd,
    GameStart,
    RedealMade,
    RoundEnd,
    RoundStart,
    TableEvent,
    TrickWon,
)

__all__ = ["LogLine", "RoundLine", "SeatState", "TrickLine", "WebSeat", "refusal_text"]

NOT_YOUR_TURN = "it is not your turn yet: wait until the page asks you for a call or a card"
LOG_ROUNDS = 2
"""The rounds whose lines of what happened the page keeps: this one and the one before (a game may have a hundred)."""


def refusal_text(reason: str) -> str:
    """A refused answer as a person reads it: the rules' own words (``6D is not allowed: 3C was led ...``)."""
    # The rules' words already say "... is not allowed" of a held card: said once, not twice.
    return reason[:1].upper() + reason[1:] if " is not allowed" in reason else f"Not allowed: {reason}"


@dataclasses.dataclass(frozen=True)
class RoundLine:
    """A round as scored: by seat, the call, the tricks won, the score and the game total after it."""

    number: int
    calls: tuple[int, ...]
    tricks_won: tuple[int, ...]
    scores: tuple[int, ...]
    totals: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class TrickLine:
    """A trick won: its round, its number in the round, its cards by seat in the order played, and who won it."""

    round_number: int
    number: int
    cards: tuple[tuple[int, Card], ...]
    winner: int


@dataclasses.dataclass(frozen=True)
class LogLine:
    """A line of what happened, in the round it happened in: words, or a trick won."""

    round_number: int
    text: str = ""
    trick: TrickLine | None = None


@dataclasses.dataclass
class SeatState:
    """What one seat's page shows: what that seat may know, and what it is asked."""

    name: str
    seat: int = 0
    names: tuple[str, ...] = ()
    rules: Rules = dataclasses.field(default_factory=Rules.profile)
    round_number: int = 0
    dealer: int = 0
    trump: Suit = Suit.SPADES
    hand: list[Card] = dataclasses.field(default_factory=list)
    calls: list[int | None] = dataclasses.field(default_factory=lambda: [None] * 4)
    trick: list[tuple[int, Card]] = dataclasses.field(default_factory=list)
    """The cards on the table, by seat, in the order they were played."""
    last: TrickLine | None = None
    """The last trick won, until the next is won (into the next round's calls, too)."""
    tricks_won: list[int] = dataclasses.field(default_factory=lambda: [0] * 4)
    rounds: list[RoundLine] = dataclasses.field(default_factory=list)
    asked: DecisionKind | None = None
    """What the seat is asked for now, if anything."""
    legal: frozenset[Card] = frozenset()
    """The cards it may play, when asked for a card."""
    legal_calls: tuple[int, ...] = ()
    refusal: str = ""
    """Why its last answer was refused (empty once an answer is played)."""
    log: list[LogLine] = dataclasses.field(default_factory=list)
    """What happened in this round and the one before, oldest first."""
    totals: tuple[int, ...] = (0, 0, 0, 0)
    places: tuple[int, ...] = ()
    """The places once the game is over (empty before)."""
    version: int = 0

    def who(self, seat: int) -> str:
        """A seat as the page names it: ``you``, or the player's name."""
        return "you" if seat == self.seat else self.names[seat] if self.names else f"seat {seat + 1}"

    @property
    def over(self) -> bool:
        return bool(self.places)


class WebSeat:
    """A seat played by a person through a page; never hurried (give the table no deadline)."""

    version = "person"
    wants_events = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.state = SeatState(name)
        self._answers: asyncio.Queue[object] = asyncio.Queue()
        self._outcome: asyncio.Future[str | None] | None = None
        self._changed = asyncio.Event()

    def bump(self) -> None:
        """Counts a change of what the page shows (and wakes the pages waiting for one)."""
        self.state.version += 1
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def changed(self, since: int, timeout: float) -> None:
        """Returns once :attr:`SeatState.version` is past ``since``, or after ``timeout`` seconds."""
        if self.state.version > since:
            return
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            return

    def _settle(self, outcome: str | None) -> None:
        if self._outcome is not None and not self._outcome.done():
            self._outcome.set_result(outcome)
        self._outcome = None

    def _say(self, text: str = "", trick: TrickLine | None = None) -> None:
        kept = self.state.round_number - LOG_ROUNDS + 1
        self.state.log = [*(line for line in self.state.log if line.round_number >= kept),
                          LogLine(self.state.round_number, text, trick)]

    async def answer(self, value: object) -> str | None:
        """Plays the page's answer (an ``int`` call or a card's text): the refusal in words, or ``None`` once it
        is played."""
        if self.state.asked is None or self._outcome is not None:
            return NOT_YOUR_TURN[:1].upper() + NOT_YOUR_TURN[1:]
        self._outcome = asyncio.get_running_loop().create_future()
        outcome = self._outcome
        self.state.asked = None
        self._answers.put_nowait(value)
        return await outcome

    async def decide(self, decision: Decision) -> tuple[object, float]:
        state, view = self.state, decision.view
        state.names, state.seat = decision.names, decision.seat
        state.asked = decision.kind
        if decision.kind is DecisionKind.CALL:
            state.legal_calls, state.legal = tuple(view.legal_calls), frozenset()
        else:
            state.legal_calls, state.legal = (), frozenset(view.legal.cards())
        self.bump()
        return await self._answers.get(), 0.0

    async def refused(self, decision: Decision, reason: str) -> None:
        self.state.refusal = refusal_text(reason)
        self._settle(self.state.refusal)

    async def fallback(self, decision: Decision, detail: str) -> None:
        self.state.asked = None
        self._say(f"The arena played for you: {detail}")
        self._settle(None)
        self.bump()

    async def notify(self, event: TableEvent) -> None:
        state, body = self.state, event.body
        state.seat = event.seat
        if isinstance(body, GameStart):
            state.names, state.rules = body.names, body.rules
        elif isinstance(body, RoundStart):
            state.round_number, state.dealer, state.trump = body.round_number, body.dealer, body.trump
            state.hand = list(body.hand.cards())
            state.calls, state.tricks_won = [None] * 4, [0] * 4
            state.trick = []
            self._say(f"Round {body.round_number}: {state.who(body.dealer)} dealt; trump {body.trump.noun}")
        elif isinstance(body, CallMade):
            state.calls[body.seat] = body.call
            self._say(f"{state.who(body.seat)} {'call' if body.seat == state.seat else 'calls'} {body.call}")
            if body.seat == state.seat:
                state.refusal = ""
                self._settle(None)
        elif isinstance(body, CardPlayed):
            state.trick.append((body.seat, body.card))
            if body.seat == state.seat:
                state.hand = [card for card in state.hand if card != body.card]
                state.refusal = ""
                self._settle(None)
        elif isinstance(body, TrickWon):
            trick = body.trick
            assert trick.winner is not None
            state.tricks_won[trick.winner] += 1
            state.last = TrickLine(state.round_number, sum(state.tricks_won),
                                   tuple((seat_after(trick.leader, k), card) for k, card in enumerate(trick.cards)),
                                   trick.winner)
            state.trick = []
            self._say(trick=state.last)
        elif isinstance(body, RoundEnd):
            result = body.result
            state.rounds.append(RoundLine(result.round_number, tuple(result.calls), tuple(result.tricks_won),
                                          tuple(result.scores), tuple(body.totals)))
            state.totals = tuple(body.totals)
        elif isinstance(body, GameEnd):
            state.totals, state.places = tuple(body.totals), tuple(body.places)
            self._say("The game is over")
        elif isinstance(body, RedealMade):
            self._say(f"Round {body.round_number} is dealt again: {body.reason}")
        self.bump()

    def drain_faults(self) -> list[tuple[FaultKind, str]]:
        return []

    async def close(self) -> None:
        return None
