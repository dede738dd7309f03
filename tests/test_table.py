"""The table runner in-process: crashes, illegal answers, fallbacks, records and events."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from arena.core.cards import SUIT_MASK, Card, Hand, Suit, card_text
from arena.core.dealing import seeded_deals
from arena.core.faults import Fault, FaultKind, fallback_call, fallback_card
from arena.core.rules import Rules
from arena.core.views import View
from arena.players.base import (
    CallMade,
    CardPlayed,
    GameEnd,
    GameStart,
    RedealMade,
    RoundEnd,
    RoundStart,
    TableEvent,
    TrickWon,
)
from arena.players.local import LocalPlayer
from arena.players.table import TableSettings, play_game
from arena.records.format import GameRecord
from sample_bots.random_bot import RandomBot
from tests.conftest import check_record, without_timings

NEPALI = Rules.profile("nepali")


class Lowest:
    """Deterministic: the lowest call and the first legal card in display order."""

    name = "lowest"

    def call(self, view: View) -> int:
        return view.legal_calls[0]

    def play(self, view: View) -> Card | str:
        return view.legal.cards()[0]


class Scripted(Lowest):
    """Gives the scripted answers first (one per decision, calls and cards alike), then plays well."""

    def __init__(self, calls: list[Any] | None = None, cards: list[Any] | None = None) -> None:
        self.calls = list(calls or [])
        self.cards = list(cards or [])
        self.views: list[View] = []

    def call(self, view: View) -> Any:
        self.views.append(view)
        if self.calls:
            answer = self.calls.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer
        return super().call(view)

    def play(self, view: View) -> Any:
        self.views.append(view)
        if self.cards:
            answer = self.cards.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer(view) if callable(answer) else answer
        return super().play(view)


def play(bots: list[Any], rules: Rules = NEPALI, seed: int = 1, max_retries: int = 3) -> GameRecord:
    players = [LocalPlayer(bot, f"p{seat}") for seat, bot in enumerate(bots)]
    settings = TableSettings(deadline_ms=0, max_retries=max_retries)
    record = asyncio.run(play_game(rules, players, seeded_deals(seed, 1), settings=settings))
    check_record(record, rules)
    return record


def not_held(view: View) -> str:
    return card_text(next(i for i in range(52) if not view.hand_mask >> i & 1))


def held_not_legal(view: View) -> str:
    extra = view.hand_mask & ~view.legal_mask
    return card_text(extra.bit_length() - 1) if extra else not_held(view)


# --- crashes ------------------------------------------------------------------------------------


def test_a_bot_that_raises_gets_a_crash_fault_and_the_fallback() -> None:
    bot = Scripted(calls=[RuntimeError("bad call")], cards=[ZeroDivisionError("oops"), ValueError("again")])
    record = play([Lowest(), bot, Lowest(), Lowest()])
    assert [(f.seat, f.kind) for f in record.faults] == [(1, FaultKind.CRASH)] * 3
    call, card1, card2 = record.faults
    assert "RuntimeError: bad call" in call.detail
    assert (call.fallback, call.trick) == ("1", None)
    assert record.rounds[0].calls[1] == 1
    assert "ZeroDivisionError: oops" in card1.detail and (card1.trick, card2.trick) == (0, 1)
    # A crash is not a disconnect: the bot is asked again at its next turn and plays from then on.
    for fault, view in zip((card1, card2), bot.views[1:3], strict=True):
        assert fault.fallback == card_text(fallback_card(view.legal_mask, view.trump))
        trick = record.rounds[0].tricks[fault.trick]  # type: ignore[index]
        assert str(trick.cards[(1 - trick.leader) % 4]) == fault.fallback
    assert len(bot.views) == 5 * 14


# --- illegal answers ----------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [99, 0, 14, -1, "3", 2.0, True, None])
def test_an_illegal_call_is_asked_again_then_the_lowest_call_is_made(answer: Any) -> None:
    rules = Rules.profile("strict")  # calls from 2
    bot = Scripted(calls=[answer] * 4)
    record = play([bot, Lowest(), Lowest(), Lowest()], rules)
    assert [f.kind for f in record.faults] == [FaultKind.ILLEGAL_CALL] * 4
    assert [f.fallback for f in record.faults] == [None, None, None, "2"]
    assert all(f"{answer!r} is not a legal call" in f.detail and "from 2 to 13" in f.detail for f in record.faults)
    assert record.rounds[0].calls[0] == 2
    assert len(bot.views) == 3 + 5 * 14  # the first call asked four times, every other decision once


def test_a_good_answer_after_a_refusal_is_taken() -> None:
    bot = Scripted(calls=[99, 7])
    record = play([bot, Lowest(), Lowest(), Lowest()])
    assert [(f.kind, f.fallback) for f in record.faults] == [(FaultKind.ILLEGAL_CALL, None)]
    assert record.rounds[0].calls[0] == 7


@pytest.mark.parametrize("max_retries", [0, 1, 5])
def test_max_retries_sets_how_often_the_arena_asks_again(max_retries: int) -> None:
    bot = Scripted(cards=[not_held] * (max_retries + 1))
    record = play([bot, Lowest(), Lowest(), Lowest()], max_retries=max_retries)
    assert [f.kind for f in record.faults] == [FaultKind.ILLEGAL_CARD] * (max_retries + 1)
    assert [f.fallback is not None for f in record.faults] == [False] * max_retries + [True]


def test_illegal_cards_are_refused_with_the_rule_then_the_lowest_card_is_played() -> None:
    bot = Scripted(cards=[held_not_legal, not_held, "XX", 12])
    # Seat 1 plays second: the first trick's led suit usually leaves cards it may not play.
    record = play([Lowest(), bot, Lowest(), Lowest()], seed=4)
    faults = record.faults
    assert [f.kind for f in faults] == [FaultKind.ILLEGAL_CARD] * 4
    view = bot.views[1]
    assert view.hand_mask & ~view.legal_mask, "pick a seed where seat 1 holds a card it may not play"
    assert "is not allowed" in faults[0].detail
    assert "you do not hold" in faults[1].detail
    assert "'XX' is not a card" in faults[2].detail
    assert "12 is not a card" in faults[3].detail
    expected = card_text(fallback_card(view.legal_mask, view.trump))
    assert [f.fallback for f in faults] == [None, None, None, expected]
    trick = record.rounds[0].tricks[0]
    assert str(trick.cards[(1 - trick.leader) % 4]) == expected


def test_a_card_object_is_accepted_like_its_text() -> None:
    class CardObjects(Lowest):
        def play(self, view: View) -> Card:
            return view.legal.cards()[-1]

    assert play([CardObjects(), Lowest(), Lowest(), Lowest()]).faults == []


# --- the fallback rule --------------------------------------------------------------------------


def mask(text: str) -> int:
    return Hand.parse(text).mask


@pytest.mark.parametrize(("legal", "trump", "expected"), [
    ("2S 2H 2C", Suit.SPADES, "2C"),
    ("2S 2H 2D", Suit.SPADES, "2D"),
    ("2S 2H", Suit.SPADES, "2H"),
    ("2S 2H", Suit.CLUBS, "2H"),
    ("3S 3D", Suit.DIAMONDS, "3S"),  # a non-trump before a trump, even a spade
    ("5S 5H 5D 5C", Suit.HEARTS, "5C"),
    ("5S 5H 5D 5C", Suit.CLUBS, "5D"),
    ("5S 5H 5D 5C", Suit.DIAMONDS, "5C"),
    ("5S 5H", Suit.HEARTS, "5S"),
    ("2S 3C", Suit.SPADES, "2S"),  # the lowest rank first, even a trump
    ("AS KH QD JC", Suit.CLUBS, "JC"),
    ("AS", Suit.SPADES, "AS"),
    ("TH 9H 3H", Suit.SPADES, "3H"),
])
def test_fallback_card(legal: str, trump: Suit, expected: str) -> None:
    assert card_text(fallback_card(mask(legal), trump)) == expected


def reference_fallback(legal: int, trump: int) -> int:
    """The rule of the protocol, written plainly: lowest rank, non-trump first, then C D H S."""
    suit_order = {3: 0, 2: 1, 1: 2, 0: 3}  # clubs, diamonds, hearts, spades
    cards = [i for i in range(52) if legal >> i & 1]
    return min(cards, key=lambda i: (i % 13, i // 13 == trump, suit_order[i // 13]))


def test_fallback_card_matches_the_rule_on_random_masks() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        legal = rng.getrandbits(52) & rng.choice([(1 << 52) - 1, SUIT_MASK[0] | SUIT_MASK[2], rng.getrandbits(52)])
        if legal:
            trump = rng.randrange(4)
            assert fallback_card(legal, trump) == reference_fallback(legal, trump)


def test_fallback_card_refuses_an_empty_set_and_the_call_is_the_lowest() -> None:
    with pytest.raises(ValueError):
        fallback_card(0, 0)
    assert fallback_call(range(2, 14)) == 2
    assert fallback_call(range(1, 9)) == 1


# --- records ------------------------------------------------------------------------------------


def test_the_record_is_json_and_the_same_for_the_same_bots() -> None:
    def game() -> GameRecord:
        return play([RandomBot(1), Scripted(calls=[99]), RandomBot(3), Lowest()], Rules.profile("dy"), seed=8)

    first, second = game(), game()
    text = json.dumps(first.to_dict(), sort_keys=True)
    assert json.loads(text)["faults"] == [Fault(1, FaultKind.ILLEGAL_CALL, first.faults[0].detail, 1, None).to_dict()]
    assert json.dumps(without_timings(first), sort_keys=True) == json.dumps(without_timings(second), sort_keys=True)
    data = json.loads(text)
    assert len(data["rounds"]) == 10
    assert data["timings"]["decisions"] == first.decisions
    for result, round_data in zip(first.rounds, data["rounds"], strict=True):
        assert round_data["hands"] == [str(h) for h in result.hands]
        assert sum(len(t["cards"]) for t in round_data["tricks"]) == 52


# --- events -------------------------------------------------------------------------------------


class Listener(Lowest):
    def __init__(self) -> None:
        self.events: list[TableEvent] = []

    def on_event(self, event: TableEvent) -> None:
        self.events.append(event)


def test_events_reach_a_bot_that_listens() -> None:
    listener = Listener()
    record = play([Lowest(), Lowest(), listener, Lowest()], seed=6)
    events = listener.events
    bodies = [e.body for e in events]
    kinds = [type(b) for b in bodies]
    per_round = [RoundStart] + [CallMade] * 4 + ([CardPlayed] * 4 + [TrickWon]) * 13 + [RoundEnd]
    assert kinds == [GameStart, *per_round * 5, GameEnd]
    assert {(e.table_id, e.game_id, e.seat) for e in events} == {("t1", "g1", 2)}
    start = bodies[0]
    assert isinstance(start, GameStart)
    assert start.names == ("p0", "p1", "p2", "p3") and start.game_number == 1 and start.rules == Rules.profile()
    starts = [b for b in bodies if isinstance(b, RoundStart)]
    for round_start, result in zip(starts, record.rounds, strict=True):
        assert round_start.hand == result.hands[2]  # its own hand only
        assert (round_start.round_number, round_start.dealer, round_start.trump) == (
            result.round_number, result.dealer, result.trump)
    calls = [(b.seat, b.call) for b in bodies if isinstance(b, CallMade)]
    assert calls[:4] == [(s, record.rounds[0].calls[s]) for s in (0, 1, 2, 3)]
    cards = [b.card for b in bodies if isinstance(b, CardPlayed)]
    assert cards == [c for r in record.rounds for t in r.tricks for c in t.cards]
    tricks = [b.trick for b in bodies if isinstance(b, TrickWon)]
    assert tricks == [t for r in record.rounds for t in r.tricks]
    ends = [b for b in bodies if isinstance(b, RoundEnd)]
    assert [e.totals for e in ends] == [r.totals for r in record.rounds]
    assert [e.result for e in ends] == [r.summary() for r in record.rounds]
    assert bodies[-1] == GameEnd(record.totals, record.places)


def test_a_redeal_comes_right_before_the_new_deal() -> None:
    """Under redeal_below the four calls come first, then RedealMade, then the new RoundStart."""
    listener = Listener()
    rules = Rules.profile("nepali", rounds=1, redeal_below=10)
    record = play([Lowest(), Lowest(), listener, Lowest()], seed=6, rules=rules)
    bodies = [e.body for e in listener.events]
    assert record.redeals  # the lowest calls total 4, less than 10: thrown in (up to the redeal limit)
    first = bodies.index(next(b for b in bodies if isinstance(b, RedealMade)))
    assert [type(b) for b in bodies[first - 5: first + 2]] == [RoundStart, CallMade, CallMade, CallMade, CallMade,
                                                             RedealMade, RoundStart]
    assert sum(isinstance(b, RedealMade) for b in bodies) == len(record.redeals)


def test_a_failing_event_handler_does_not_stop_the_game() -> None:
    class Broken(Lowest):
        def on_event(self, event: TableEvent) -> None:
            raise RuntimeError("handler bug")

    record = play([Broken(), Lowest(), Lowest(), Lowest()])
    assert record.faults == []


def test_a_bot_without_on_event_gets_no_events() -> None:
    assert not LocalPlayer(Lowest()).wants_events
    assert LocalPlayer(Listener()).wants_events
