"""The table runner: one game of a profile with four players, returned as a record.

The runner asks each seat in turn through the :class:`~arena.players.Player` interface and
judges the raw answers with the rules core. Faults are data: an illegal answer is refused with
the rule it broke and asked again up to ``max_retries`` times, then the fallback is played; a
late, crashed or disconnected seat gets the fallback at once. Every fault lands in the record.

Players that follow the game get typed events (:mod:`arena.players.base`), in the order things
happen: ``GameStart``; for each round ``RoundStart``, four ``CallMade``, then (four
``CardPlayed`` and a ``TrickWon``) thirteen times and ``RoundEnd``; finally ``GameEnd``. A deal
thrown in gives ``RedealMade`` right before the ``RoundStart`` of the new deal: after the four
``CallMade`` when the calls were too low, with no ``CallMade`` when a hand held no trump (the
thrown-in hands are never shown).

Every decision the arena makes for a seat (a fallback call or card) is counted per round, so the
standings can say what share of a bot's decisions it really made. The game comes back as a
:class:`~arena.records.format.GameRecord`, which the records module writes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from arena.core.cards import CARDS, Card, Hand, Suit, card_text
from arena.core.dealing import DealSource
from arena.core.faults import ANSWER_TEXT_LIMIT, Fault, FaultKind, PlayerFault, fallback_call, fallback_card, shown
from arena.core.game import Game, Phase
from arena.core.rules import Rules
from arena.core.turns import four
from arena.errors import CardError
from arena.players.base import (
    CallMade,
    CardPlayed,
    Decision,
    DecisionKind,
    EventBody,
    GameEnd,
    GameStart,
    Player,
    RedealMade,
    RoundEnd,
    RoundStart,
    TableEvent,
    TrickWon,
)
from arena.records.format import GameRecord

__all__ = ["Asked", "TableSettings", "play_game"]


@dataclasses.dataclass(frozen=True)
class TableSettings:
    """Time control and fault handling at a table."""

    deadline_ms: int = 1000
    """Time for one decision (0: no limit)."""
    time_bank_ms: int = 0
    """Extra time per seat for the whole game, spent by answers past the deadline."""
    max_retries: int = 3
    """Times an illegal answer is asked again before the fallback is played."""

    def __post_init__(self) -> None:
        if self.deadline_ms < 0 or self.time_bank_ms < 0 or self.max_retries < 0:
            raise ValueError("deadline_ms, time_bank_ms and max_retries must be 0 or more")


@dataclasses.dataclass(frozen=True, slots=True)
class Asked:
    """One request to a seat and how it went, for whoever follows the play as it goes (``on_asked`` of
    :func:`play_game`): the answer's time, or the fault that came instead of an answer."""

    decision: Decision
    elapsed_ms: float | None
    """How long the answer took; ``None`` when none came (``fault`` says why)."""
    fault: FaultKind | None = None
    detail: str = ""
    """The fault's detail, in the words of its record."""


_NONE = (0, 0, 0, 0)
_INDEX_OF = {card_text(index): index for index in range(52)}


class _Table:
    """The state of one game in progress at a table."""

    def __init__(
        self, rules: Rules, players: Sequence[Player], deals: DealSource, table_id: str, game_id: str,
        game_number: int, first_dealer: int, settings: TableSettings, seat_key: bytes | None,
    ) -> None:
        if len(players) != 4:
            raise ValueError(f"a table needs four players, not {len(players)}")
        self.rules = rules
        self.players = list(players)
        self.names = tuple(p.name for p in players)
        self.table_id = table_id
        self.game_id = game_id
        self.settings = settings
        self.game = Game(rules, deals, game_number=game_number, first_dealer=first_dealer, seat_key=seat_key)
        self.faults: list[Fault] = []
        self.bank = [settings.time_bank_ms] * 4
        self.think_ms = [0.0, 0.0, 0.0, 0.0]
        self.decisions = [0, 0, 0, 0]
        self.dead: list[str | None] = [None, None, None, None]
        """Why a seat gets the fallback for the rest of the game (gone, or absent), or None."""
        self.fallbacks: dict[int, list[int]] = {}
        """Round number -> the decisions the arena made for each seat in that round."""
        self.listeners = [seat for seat in range(4) if players[seat].wants_events]
        self.on_round: Callable[[GameRecord], None] | None = None
        self.on_asked: Callable[[Asked], None] | None = None

    async def tell(self, body: EventBody, seats: Sequence[int] | None = None) -> None:
        for seat in self.listeners if seats is None else seats:
            if self.dead[seat] is None:
                await self.players[seat].notify(TableEvent(self.table_id, self.game_id, seat, body))

    def where(self) -> tuple[int, int | None]:
        rnd = self.game.round
        return rnd.round_number, (len(rnd.winners) if rnd.phase is Phase.PLAYING else None)

    def fault(self, seat: int, kind: FaultKind, detail: str, fallback: str | None = None) -> None:
        round_number, trick = self.where()
        self.faults.append(Fault(seat, kind, detail, round_number, trick, fallback))

    async def decide(self, kind: DecisionKind) -> int:
        """Asks the current seat until it gives a legal answer, or plays the fallback; returns the call
        or the card index."""
        game = self.game
        seat = game.current_seat
        player = self.players[seat]
        view = game.view(seat, self.settings.deadline_ms)
        for stray_kind, detail in player.drain_faults():
            self.fault(seat, stray_kind, detail)
        retries = 0
        reason = ""
        while self.dead[seat] is None:
            deadline = self.settings.deadline_ms
            decision = Decision(
                kind, self.table_id, self.game_id, seat, view, self.names, deadline, self.bank[seat], reason
            )
            self.decisions[seat] += 1
            try:
                answer, elapsed = await player.decide(decision)
            except PlayerFault as err:
                if self.on_asked is not None:
                    self.on_asked(Asked(decision, None, err.kind, err.detail))
                strays = player.drain_faults()  # what the player saw on the way (a stall), recorded here
                if err.gone:
                    self.dead[seat] = err.detail
                elif err.kind is FaultKind.LATE and deadline:
                    self.bank[seat] = 0  # the wait ran through the whole bank
                value = await self.fall_back(seat, decision, err.kind, err.detail)
                for stray_kind, detail in strays:
                    self.fault(seat, stray_kind, detail)
                return value
            if self.on_asked is not None:
                self.on_asked(Asked(decision, elapsed))
            self.think_ms[seat] += elapsed
            if deadline and elapsed > deadline:
                self.bank[seat] = max(0, self.bank[seat] - int(elapsed - deadline))
            refusal, value = self.judge(kind, answer)
            if refusal is None:
                return value
            self.fault(seat, FaultKind.ILLEGAL_CALL if kind is DecisionKind.CALL else FaultKind.ILLEGAL_CARD, refusal)
            retries += 1
            if retries > self.settings.max_retries:
                return await self.fall_back(
                    seat, decision, None, f"{retries} illegal answers in a row; the last: {refusal}"
                )
            reason = refusal
            await player.refused(decision, refusal)
        # A seat that is gone plays the fallback until the game ends; why was recorded once.
        self.count_fallback(seat)
        return self.fallback_value(kind)

    def count_fallback(self, seat: int) -> None:
        counts = self.fallbacks.setdefault(self.game.round.round_number, [0, 0, 0, 0])
        counts[seat] += 1

    def judge(self, kind: DecisionKind, answer: object) -> tuple[str | None, int]:
        """``(None, the call or card index)`` when ``answer`` is legal now, else the rule it breaks,
        in a student's words."""
        rnd = self.game.round
        if kind is DecisionKind.CALL:
            legal = self.rules.call_range
            if isinstance(answer, bool) or not isinstance(answer, int) or answer not in legal:
                return (
                    f"{shown(answer)} is not a legal call: call a whole number from {legal[0]} to {legal[-1]} "
                    f"under the {self.rules.profile_name} rules"
                ), 0
            return None, answer
        # What a bot sent reaches the record only through shown(): no card's text is that long.
        if not isinstance(answer, str) or len(answer) > ANSWER_TEXT_LIMIT:
            return f"{shown(answer)} is not a card: answer with a card like AS, TH or 2C", 0
        index = _INDEX_OF.get(answer)  # a card as it was sent; anything else through the parser
        if index is None:
            try:
                index = Card.parse(answer).index
            except CardError as err:
                return str(err), 0
        if not rnd.legal_mask() >> index & 1:
            hand = rnd.hands[rnd.current_seat]
            if not hand >> index & 1:
                return f"you do not hold {card_text(index)}: your hand is {Hand(hand)}", 0
            return f"{card_text(index)} is not allowed: {rnd.legal_reason()}", 0
        return None, index

    def fallback_value(self, kind: DecisionKind) -> int:
        rnd = self.game.round
        if kind is DecisionKind.CALL:
            return fallback_call(self.rules.call_range)
        return fallback_card(rnd.legal_mask(), rnd.trump)

    async def fall_back(self, seat: int, decision: Decision, kind: FaultKind | None, detail: str) -> int:
        value = self.fallback_value(decision.kind)
        self.count_fallback(seat)
        shown = str(value) if decision.kind is DecisionKind.CALL else card_text(value)
        if kind is not None:
            self.fault(seat, kind, detail, shown)
        else:  # the retries ran out: the illegal answers are recorded; mark the last with the fallback
            last = self.faults[-1]
            self.faults[-1] = dataclasses.replace(last, fallback=shown)
        if self.dead[seat] is None:
            await self.players[seat].fallback(decision, f"the arena played {shown} for you: {detail}")
        return value

    async def play(self) -> GameRecord:
        game = self.game
        rules = self.rules
        await self.tell(GameStart(self.names, rules, game.game_number))
        started: tuple[int, int] | None = None
        redeals_seen = 0
        results_seen = 0
        while not game.over:
            rnd = game.round
            if started != (rnd.round_number, rnd.attempt):
                started = (rnd.round_number, rnd.attempt)
                for redeal in game.redeals[redeals_seen:]:
                    await self.tell(RedealMade(redeal.round_number, redeal.reason))
                redeals_seen = len(game.redeals)
                for seat in self.listeners:
                    await self.tell(RoundStart(rnd.round_number, rnd.dealer, Suit(rnd.trump), Hand(rnd.hands[seat])),
                                    [seat])
            seat = game.current_seat
            if rnd.phase is Phase.CALLING:
                value = await self.decide(DecisionKind.CALL)
                game.call(value)
                if self.listeners:
                    await self.tell(CallMade(seat, value))
                continue
            index = await self.decide(DecisionKind.PLAY)
            tricks_before = len(rnd.winners)
            game.play_index(index)
            if self.listeners:
                await self.tell(CardPlayed(seat, CARDS[index]))
                if len(rnd.winners) > tricks_before:
                    await self.tell(TrickWon(rnd.finished_tricks()[-1]))
                for result in game.results[results_seen:]:
                    await self.tell(RoundEnd(result.summary(), result.totals))
            if len(game.results) > results_seen and not game.over and self.on_round is not None:
                self.on_round(self.snapshot())  # the game's last round is reported once all is known
            results_seen = len(game.results)
        for seat, player in enumerate(self.players):  # a stray message after the seat's last decision
            for stray_kind, detail in player.drain_faults():
                self.fault(seat, stray_kind, detail)
        record = self.snapshot()
        if self.on_round is not None:
            self.on_round(record)
        await self.tell(GameEnd(tuple(game.totals), record.places))
        return record

    def snapshot(self) -> GameRecord:
        """The record of the game so far (places only once it is over)."""
        game = self.game
        return GameRecord(
            table_id=self.table_id, game=self.game_id, deal_set=game.game_number, rules=self.rules,
            seats=self.names, first_dealer=game.first_dealer, rounds=list(game.results),
            redeals=list(game.redeals), faults=list(self.faults), totals=tuple(game.totals),
            places=game.places() if game.over else (0, 0, 0, 0), think_ms=list(self.think_ms),
            decisions=list(self.decisions),
            fallbacks=[four(self.fallbacks.get(r.round_number, _NONE)) for r in game.results],
            versions=tuple(p.version for p in self.players),
        )


async def play_game(
    rules: Rules, players: Sequence[Player], deals: DealSource, *, table_id: str = "t1", game_id: str = "g1",
    game_number: int = 1, first_dealer: int = 3, settings: TableSettings | None = None,
    on_round: Callable[[GameRecord], None] | None = None, seat_key: bytes | None = None,
    on_asked: Callable[[Asked], None] | None = None,
) -> GameRecord:
    """Plays one whole game with four players (by seat) and returns its record. Never raises for a bot's fault.

    ``on_round``, if given, receives the record so far each time a round ends (the last time with
    the whole game), so a caller can store every round as soon as it is played; ``on_asked``, each request to a
    seat as it is answered (or not). ``seat_key`` is the event's key of the seat seeds (``None``: the views carry
    none).
    """
    table = _Table(rules, players, deals, table_id, game_id, game_number, first_dealer, settings or TableSettings(),
                   seat_key)
    table.on_round = on_round
    table.on_asked = on_asked
    return await table.play()
