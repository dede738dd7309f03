"""A person at the table, in a terminal: ``callbreak-arena play``.

The person sees what their seat may know and nothing more, as a bot does: their hand sorted by
suit, the calls, the trick on the table, and the cards they may play. A refused answer is
explained in the words the rules tool uses (``6D is not allowed: 3C was led and you hold AC ...``); cards are
shown as they are typed (``AS``), grouped by suit, with the tricks won so far against each call
and asked again; the arena never plays for a person (no deadline, no fallback). Everything the
other seats do is told as it happens. The end of the input (Ctrl-D) leaves the game.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from arena.core.cards import Hand, Suit
from arena.core.faults import FaultKind
from arena.core.rules import Rules
from arena.core.scoring import format_score
from arena.core.turns import seat_after
from arena.errors import ArenaError
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

__all__ = ["HumanPlayer", "LeftTheGame", "show_hand"]

SYMBOLS = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.DIAMONDS: "♦", Suit.CLUBS: "♣"}


class LeftTheGame(ArenaError):
    """The person ended their input: the game stops."""


def show_hand(hand: Hand) -> str:
    """A hand by suit, high to low, each card as it is typed: ``♠ AS KS 7S   ♥ QH 3H   ♦ -   ♣ TC 9C 2C``."""
    groups = []
    for suit in (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS):
        cards = [str(card) for card in hand.cards() if card.suit is suit]
        groups.append(f"{SYMBOLS[suit]} {' '.join(cards) or '-'}")
    return "   ".join(groups)


class HumanPlayer:
    """A seat played by a person: ``ask`` reads a line (``None`` at the end of input), ``say`` prints one."""

    version = "person"
    wants_events = True

    def __init__(self, name: str, ask: Callable[[str], str | None], say: Callable[[str], None]) -> None:
        self.name = name
        self._ask = ask
        self._say = say
        self._names: Sequence[str] = ()
        self._seat = 0
        self._rules = Rules.profile()

    def _who(self, seat: int) -> str:
        return "you" if seat == self._seat else self._names[seat] if self._names else f"seat {seat + 1}"

    async def decide(self, decision: Decision) -> tuple[object, float]:
        view = decision.view
        self._names, self._seat = decision.names, decision.seat
        if decision.kind is DecisionKind.CALL:
            calls = ", ".join(f"{self._who(s)} {c}" for s, c in enumerate(view.calls) if c is not None)
            self._say(f"\nYour hand: {show_hand(view.hand)}")
            if calls:
                self._say(f"Calls so far: {calls}")
            low, high = view.legal_calls[0], view.legal_calls[-1]
            prompt = f"Your call ({low}-{high}): "
        else:
            self._say(f"\nYour hand: {show_hand(view.hand)}")
            table = " ".join(f"{self._who(seat_after(view.leader, k))}:{card}" for k, card in enumerate(view.trick))
            self._say(f"On the table: {table or 'nothing, you lead'}")
            won = ", ".join(f"{self._who(s)} {view.tricks_won[s]} of {view.calls[s]}" for s in range(4))
            self._say(f"Tricks won of the calls: {won}")
            self._say(f"You may play: {' '.join(str(c) for c in view.legal.cards())}")
            prompt = "Your card: "
        line = await asyncio.to_thread(self._ask, prompt)
        if line is None:
            raise LeftTheGame()
        answer = line.strip()
        if decision.kind is DecisionKind.CALL:
            return (int(answer) if answer.lstrip("-").isdigit() else answer), 0.0
        return answer.upper(), 0.0

    async def refused(self, decision: Decision, reason: str) -> None:
        # The rules' words already say "... is not allowed" of a held card: said once, not twice.
        self._say(reason[:1].upper() + reason[1:] if " is not allowed" in reason else f"Not allowed: {reason}")

    async def fallback(self, decision: Decision, detail: str) -> None:
        self._say(f"The arena played for you: {detail}")

    async def notify(self, event: TableEvent) -> None:
        body = event.body
        self._seat = event.seat
        if isinstance(body, GameStart):
            self._names, self._rules = body.names, body.rules
            others = ", ".join(f"{n} (seat {s + 1})" for s, n in enumerate(body.names) if s != event.seat)
            self._say(f"A game of {body.rules.rounds} rounds, rules {body.rules.profile_name}. You are seat "
                      f"{event.seat + 1}; playing clockwise: {others}.")
        elif isinstance(body, RoundStart):
            self._say(f"\n=== Round {body.round_number}: {self._who(body.dealer)} dealt; trump "
                      f"{SYMBOLS[body.trump]} {body.trump.noun} ({body.trump.letter}) ===")
        elif isinstance(body, CallMade) and body.seat != event.seat:
            self._say(f"{self._who(body.seat)} calls {body.call}")
        elif isinstance(body, CardPlayed) and body.seat != event.seat:
            self._say(f"{self._who(body.seat)} plays {body.card}")
        elif isinstance(body, TrickWon):
            trick = body.trick
            assert trick.winner is not None
            cards = " ".join(f"{self._who(seat_after(trick.leader, k))}:{c}" for k, c in enumerate(trick.cards))
            self._say(f"  {cards}  ->  {self._who(trick.winner)} {'win' if trick.winner == event.seat else 'wins'}"
                      " the trick")
        elif isinstance(body, RoundEnd):
            result = body.result
            self._say(f"Round {result.round_number} over:")
            for seat in range(4):
                self._say(f"  {self._who(seat):>12}: called {result.calls[seat]}, won {result.tricks_won[seat]}, "
                          f"score {format_score(self._rules, result.scores[seat])}, total "
                          f"{format_score(self._rules, body.totals[seat])}")
        elif isinstance(body, GameEnd):
            order = sorted(range(4), key=lambda s: (body.places[s], s))
            self._say("\nThe game is over:")
            for seat in order:
                self._say(f"  {body.places[seat]}. {self._who(seat)}  {format_score(self._rules, body.totals[seat])}")
        elif isinstance(body, RedealMade):
            self._say(f"Round {body.round_number} is dealt again: {body.reason}")

    def drain_faults(self) -> list[tuple[FaultKind, str]]:
        return []

    async def close(self) -> None:
        return None
