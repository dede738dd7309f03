"""The table runner against scripted seats: how it judges each answer, what it records and what it tells a seat.

The seats are :class:`tests.helpers.scripted.Scripted`: no bot, no thread, no process, so each case says exactly
what the seat answers and reads back exactly what the table asked and told it.
"""

from __future__ import annotations

import asyncio

import pytest

from arena.core.cards import CARDS, Card, card_text
from arena.core.dealing import seeded_deals
from arena.core.faults import Fault, FaultKind, PlayerFault, fallback_call, fallback_card
from arena.core.rules import Rules
from arena.players.base import (
    CallMade,
    CardPlayed,
    Decision,
    DecisionKind,
    GameEnd,
    GameStart,
    RoundEnd,
    RoundStart,
    TrickWon,
)
from arena.players.table import TableSettings, play_game
from arena.records.format import GameRecord
from tests.conftest import check_record
from tests.helpers.scripted import LEGAL, Answer, Scripted, Step, Wait

ONE_ROUND = Rules.profile("nepali", rounds=1)


def play(seat0: Scripted, settings: TableSettings | None = None, seed: int = 1) -> GameRecord:
    """One game of one round: ``seat0`` and three scripted seats that always answer legally."""
    players = [seat0, *(Scripted(name=f"p{seat}") for seat in (1, 2, 3))]
    record = asyncio.run(play_game(ONE_ROUND, players, seeded_deals(seed, 1), settings=settings or TableSettings()))
    check_record(record, ONE_ROUND)
    return record


def plays_of(record: GameRecord, seat: int) -> list[Card]:
    """The cards ``seat`` played in the game's one round, trick by trick."""
    return [trick.cards[(seat - trick.leader) % 4] for trick in record.rounds[0].tricks]


def first_play(step: Step) -> Scripted:
    """A seat that gives ``step`` at its first request for a card, and legal answers everywhere else."""
    answered: list[Decision] = []

    def script(decision: Decision) -> Step:
        if decision.kind is DecisionKind.PLAY and not answered:
            answered.append(decision)
            return step(decision) if callable(step) else step
        return LEGAL

    return Scripted(script, name="p0")


def test_a_card_not_held_is_refused_with_the_hand_and_asked_again() -> None:
    def not_held(decision: Decision) -> str:
        return str(next(card for card in CARDS if card not in decision.view.hand))

    seat = first_play(not_held)
    record = play(seat)
    asked, refused, again = [entry for entry in seat.log if entry[0] != "notify"][1:4]
    hand = asked[1].view.hand
    sent = next(card for card in CARDS if card not in hand)
    reason = f"you do not hold {sent}: your hand is {hand}"
    assert record.faults == [Fault(0, FaultKind.ILLEGAL_CARD, reason, 1, 0)]
    assert refused == ("refused", asked[1], reason)
    assert again[0] == "decide" and again[1].retry_reason == reason and again[1].view is asked[1].view
    assert [entry[0] for entry in seat.log].count("fallback") == 0
    assert record.fallbacks == [(0, 0, 0, 0)]
    assert record.decisions[0] == 13 + 1 + 1  # the call, thirteen cards, and the answer asked again


def test_illegal_answers_past_the_retries_are_judged_and_the_fallback_is_played() -> None:
    def off_suit(decision: Decision) -> str:
        view = decision.view
        held_not_allowed = [card for card in view.hand.cards() if card not in view.legal]
        return str(held_not_allowed[0]) if held_not_allowed else "ZZ"

    seat = Scripted(lambda d: off_suit(d) if d.kind is DecisionKind.PLAY else LEGAL, name="p0")
    record = play(seat, TableSettings(max_retries=1))
    # Every card it is asked for is answered wrong twice (a card it holds but may not play when it has one,
    # else no card at all), so every card of its round is the arena's fallback.
    requests = [r for r in seat.requests if r.kind is DecisionKind.PLAY]
    assert len(requests) == 26 and record.fallbacks == [(13, 0, 0, 0)]
    assert len(record.faults) == 26 and {f.kind for f in record.faults} == {FaultKind.ILLEGAL_CARD}
    fallbacks = [entry for entry in seat.log if entry[0] == "fallback"]
    assert len(fallbacks) == 13
    for first, second, (_, decision, detail) in zip(record.faults[::2], record.faults[1::2], fallbacks, strict=True):
        view = decision.view
        played = card_text(fallback_card(view.legal_mask, view.trump))
        assert first.fallback is None and second.fallback == played
        assert detail == f"the arena played {played} for you: 2 illegal answers in a row; the last: {second.detail}"
        assert decision.retry_reason == first.detail
    assert [str(card) for card in plays_of(record, 0)] == [f.fallback for f in record.faults[1::2]]
    words = {f.detail.split(": ", 1)[0].split(" ", 1)[1] for f in record.faults}
    assert words <= {"is not allowed", "is not a card"} and "is not allowed" in words
    assert all(f.detail.startswith("'ZZ' is not a card") or "is not allowed: " in f.detail for f in record.faults)


@pytest.mark.parametrize(("answer", "shown"), [(14, "14"), (0, "0"), (-1, "-1"), (True, "True"), ("3", "'3'"),
                                               (None, "None"), (2.0, "2.0")])
def test_a_call_out_of_range_or_not_a_whole_number_is_refused_in_words(answer: object, shown: str) -> None:
    seat = Scripted([answer], name="p0")
    record = play(seat)
    reason = f"{shown} is not a legal call: call a whole number from 1 to 13 under the nepali rules"
    assert record.faults == [Fault(0, FaultKind.ILLEGAL_CALL, reason, 1, None)]
    assert [r.retry_reason for r in seat.requests[:2]] == ["", reason]
    assert record.rounds[0].calls[0] == 1  # its second answer, the lowest legal call


def test_a_crashed_seat_gets_the_fallback_and_is_asked_again_next_time() -> None:
    seat = Scripted([PlayerFault(FaultKind.CRASH, "ValueError: boom (at bot.py:3)")], name="p0")
    record = play(seat)
    call = fallback_call(ONE_ROUND.call_range)
    assert record.faults == [Fault(0, FaultKind.CRASH, "ValueError: boom (at bot.py:3)", 1, None, str(call))]
    assert record.rounds[0].calls[0] == call and record.fallbacks == [(1, 0, 0, 0)]
    notice = f"the arena played {call} for you: ValueError: boom (at bot.py:3)"
    assert ("fallback", seat.requests[0], notice) in seat.log
    assert len(seat.requests) == 14  # the call it crashed on, then all thirteen cards asked of it


def test_a_seat_that_is_gone_is_never_asked_or_told_again() -> None:
    seat = Scripted([LEGAL, PlayerFault(FaultKind.DISCONNECT, "the bot's connection closed")], name="p0")
    record = play(seat)
    assert len(seat.requests) == 2 and record.fallbacks == [(13, 0, 0, 0)]
    assert record.faults == [Fault(0, FaultKind.DISCONNECT, "the bot's connection closed", 1, 0,
                                   str(plays_of(record, 0)[0]))]
    assert seat.log[-1] == ("decide", seat.requests[1])  # no fallback notice, no event after it


def test_a_stray_fault_is_recorded_where_the_table_next_asks_the_seat() -> None:
    seat = Scripted(name="p0", strays=[(FaultKind.UNKNOWN_REQUEST, "an answer to request 9, which was never sent")])
    record = play(seat)
    assert record.faults == [Fault(0, FaultKind.UNKNOWN_REQUEST, "an answer to request 9, which was never sent", 1,
                                   None)]
    assert record.fallbacks == [(0, 0, 0, 0)]


def test_an_error_of_the_player_itself_is_not_taken_for_a_bot_fault() -> None:
    """A player turns what its bot does into answers or PlayerFaults; any other exception is the arena's own
    bug, and the table lets it out rather than record it against the bot."""
    seat = Scripted([RuntimeError("a bug in the player")], name="p0")
    with pytest.raises(RuntimeError, match="a bug in the player"):
        play(seat)


def test_a_late_answer_spends_the_time_bank_and_a_late_fault_empties_it() -> None:
    settings = TableSettings(deadline_ms=1000, time_bank_ms=2000)
    seat = Scripted([Answer(LEGAL, ms=1500), LEGAL, PlayerFault(FaultKind.LATE, "no answer within 2500 ms")],
                    name="p0")
    record = play(seat, settings)
    banks = [r.time_bank_ms for r in seat.requests]
    assert banks[:4] == [2000, 1500, 1500, 0] and set(banks[4:]) == {0}
    assert [(f.kind, f.fallback) for f in record.faults] == [(FaultKind.LATE, str(plays_of(record, 0)[1]))]
    assert record.think_ms[0] == 1500


def test_a_real_wait_is_measured_and_charged_to_the_bank() -> None:
    seat = Scripted([Wait(0.06, LEGAL)], name="p0")
    play(seat, TableSettings(deadline_ms=10, time_bank_ms=1000))
    bank = seat.requests[1].time_bank_ms
    assert bank <= 1000 - 50  # at least 60 ms waited, 10 of them within the deadline


def test_a_seat_is_told_everything_in_the_order_it_happens() -> None:
    seat = Scripted(name="p0")
    quiet = Scripted(name="p1", wants_events=False)
    players = [seat, quiet, Scripted(name="p2"), Scripted(name="p3")]
    record = asyncio.run(play_game(ONE_ROUND, players, seeded_deals(1, 1), first_dealer=3))
    played = record.rounds[0]
    assert record.redeals == [] and quiet.events == []

    expected: list[object] = [GameStart(("p0", "p1", "p2", "p3"), ONE_ROUND, 1),
                              RoundStart(1, 3, played.trump, played.hands[0])]
    for caller in range(4):  # the seat after the dealer calls first
        expected += ["decide call"] if caller == 0 else []
        expected.append(CallMade(caller, played.calls[caller]))
    for trick in played.tricks:
        for k, card in enumerate(trick.cards):
            expected += ["decide play"] if (trick.leader + k) % 4 == 0 else []
            expected.append(CardPlayed((trick.leader + k) % 4, card))
        expected.append(TrickWon(trick))
    expected += [RoundEnd(played.summary(), played.totals), GameEnd(record.totals, record.places)]

    told = [f"decide {entry[1].kind.value}" if entry[0] == "decide" else entry[1].body for entry in seat.log]
    assert told == expected
    assert all(entry[1].seat == 0 and entry[1].game_id == "g1" for entry in seat.log if entry[0] == "notify")
