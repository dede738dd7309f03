"""Faults over real gRPC: one misbehaving bot (tests/fake_bots.py) and three good ones at a table.

Each test checks the three things the protocol promises for a mistake: the game still finishes,
the fault is in the record (kind, seat, fallback), and the bot got the Notices of section 6.
"""

from __future__ import annotations

from typing import Any

import pytest

from arena.core.cards import Card, Hand, card_text
from arena.core.dealing import seeded_deals
from arena.core.faults import Fault, FaultKind, fallback_card
from arena.core.game import Round
from arena.core.rules import Rules
from arena.players.table import TableSettings
from arena.records.format import GameRecord
from tests.conftest import BotProcess, Bots, arena, check_record, run
from tests.helpers.seating import seat_and_play

NAMES = ["s0", "s1", "s2", "s3"]
NEPALI = Rules.profile("nepali")


def play_with(
    bots: Bots, mode: str, seat: int, *extra: str, rules: Rules = NEPALI, table: TableSettings | None = None,
    seed: int = 21, until: tuple[str, object] | None = None, **server_settings: Any,
) -> tuple[GameRecord, BotProcess, list[BotProcess]]:
    """One game: the fake bot ``mode`` at ``seat``, fake ``good`` bots elsewhere; after it, the arena
    stays up ``until`` the misbehaving bot prints a line with that key and value. ``server_settings``
    go to the arena's :class:`ServerSettings`."""

    async def scenario() -> GameRecord:
        settings = table or TableSettings(deadline_ms=5000, max_retries=3)
        async with arena(NAMES, rules, table=settings, **server_settings) as (server, port):
            for s, name in enumerate(NAMES):
                bots.fake(mode if s == seat else "good", port, name, *(extra if s == seat else ()))
            record = await seat_and_play(server, NAMES, seeded_deals(seed, 1), timeout=20)
            if until is not None:
                await bots.processes[seat].wait_for_line(*until)
            return record

    record = run(scenario())
    check_record(record, rules)
    procs = bots.processes
    for proc in procs:  # the arena ended the tournament: every bot has its last word, then exits
        proc.wait(10)
    return record, procs[seat], [p for s, p in enumerate(procs) if s != seat]


def expected_fallback(request: dict[str, Any]) -> str:
    """The fallback of section 6 for a logged request: the lowest call, or the lowest card."""
    if request["request"] == "call":
        return str(min(request["legal"]))
    mask = Hand.parse(" ".join(request["legal"])).mask
    return card_text(fallback_card(mask, request["trump"] - 1))  # proto suits count from 1


def kinds(faults: list[Fault]) -> list[FaultKind]:
    return [f.kind for f in faults]


def assert_others_clean(record: GameRecord, seat: int, others: list[BotProcess]) -> None:
    assert all(f.seat == seat for f in record.faults)
    for proc in others:
        assert proc.notices() == [], proc.name
        assert proc.lines()[-1]["end"] == "OK"


# --- late answers and the time bank -------------------------------------------------------------


def test_a_late_answer_gets_the_fallback_and_a_late_notice(bots: Bots) -> None:
    # Generous for the good bots (a loaded CI machine can stall a process for a few hundred ms).
    table = TableSettings(deadline_ms=1500, max_retries=3)
    record, slow, others = play_with(bots, "slow", 1, "--at", "3", "--sleep", "2.5", table=table,
                                     until=("notice", "NOTICE_KIND_LATE_ANSWER"))

    [fault] = record.faults
    assert (fault.seat, fault.kind) == (1, FaultKind.LATE)
    assert "deadline" in fault.detail
    request = slow.requests()[2]
    assert request["request"] == "play"
    assert fault.fallback == expected_fallback(request)
    assert (fault.round_number, fault.trick) == (1, 1)
    notices = slow.notices()
    assert [n["notice"] for n in notices] == ["NOTICE_KIND_FALLBACK_PLAYED", "NOTICE_KIND_LATE_ANSWER"]
    assert all(n["id"] == request["id"] for n in notices)
    assert f"played {fault.fallback} for you" in notices[0]["detail"]
    # The fallback card really was played at that trick.
    trick = record.rounds[0].tricks[1]
    assert trick.cards[(1 - trick.leader) % 4] == Card.parse(fault.fallback)
    assert_others_clean(record, 1, others)


def test_a_late_call_gets_the_lowest_call(bots: Bots) -> None:
    table = TableSettings(deadline_ms=1500, max_retries=3)
    record, _, _ = play_with(bots, "slow", 2, "--at", "1", "--sleep", "2.5", rules=Rules.profile("strict"),
                             table=table)
    [fault] = record.faults
    assert (fault.seat, fault.kind, fault.fallback, fault.trick) == (2, FaultKind.LATE, "2", None)
    assert record.rounds[0].calls[2] == 2


def test_an_answer_within_the_time_bank_is_accepted_and_spends_it(bots: Bots) -> None:
    table = TableSettings(deadline_ms=200, time_bank_ms=2000, max_retries=3)
    record, slow, others = play_with(bots, "slow", 0, "--at", "2", "--sleep", "0.6", table=table)

    assert record.faults == []
    assert slow.notices() == []
    requests = slow.requests()
    assert all(r["deadline_ms"] == 200 for r in requests)  # the deadline, told apart from the bank
    banks = [r["time_bank_ms"] for r in requests]
    assert banks[:2] == [2000, 2000]
    assert 0 < banks[2] <= 1600, banks[2]  # 600 ms of thought, 200 of them within the deadline
    assert banks[2:] == sorted(banks[2:], reverse=True)  # spent, never given back
    assert_others_clean(record, 0, others)


def test_a_silent_bot_gets_the_fallback_at_every_card(bots: Bots) -> None:
    rules = Rules.profile("nepali", rounds=1)
    table = TableSettings(deadline_ms=200, time_bank_ms=1000, max_retries=3)
    record, silent, others = play_with(bots, "silent", 3, rules=rules, table=table, unresponsive_after=0)

    assert kinds(record.faults) == [FaultKind.LATE] * 13
    plays = [r for r in silent.requests() if r["request"] == "play"]
    assert [f.fallback for f in record.faults] == [expected_fallback(r) for r in plays]
    assert [f.trick for f in record.faults] == list(range(13))
    notices = silent.notices()
    assert [n["notice"] for n in notices] == ["NOTICE_KIND_FALLBACK_PLAYED"] * 13
    assert [n["id"] for n in notices] == [r["id"] for r in plays]
    # The first late answer ran through the whole bank; the rest of the game has none.
    assert plays[0]["time_bank_ms"] > 0
    assert [r["time_bank_ms"] for r in plays[1:]] == [0] * 12
    assert_others_clean(record, 3, others)


def test_a_bot_that_answers_nothing_is_dropped_as_stalled_after_three_requests(bots: Bots) -> None:
    rules = Rules.profile("nepali", rounds=1)
    table = TableSettings(deadline_ms=200, max_retries=3)
    record, silent, others = play_with(bots, "silent", 3, rules=rules, table=table, unresponsive_after=3,
                                       reconnect_grace_s=0.5)

    # The third late answer drops the connection (a stall, at that decision); at the next one the
    # seat waits the grace, then is given up (a disconnect).
    assert kinds(record.faults) == [FaultKind.LATE] * 3 + [FaultKind.STALLED, FaultKind.DISCONNECT]
    third, stall, gone = record.faults[2:]
    assert stall.trick == third.trick and gone.trick == third.trick + 1
    assert "left 3 requests in a row unanswered and sent nothing" in stall.detail
    assert stall.fallback is None and gone.fallback is not None  # the drop, then the seat given up
    assert "did not come back within 0.5 s" in gone.detail
    assert silent.lines()[-1]["end"] == "UNAVAILABLE"
    assert "left 3 requests in a row unanswered" in silent.lines()[-1]["details"]
    assert_others_clean(record, 3, others)


# --- a broken connection ------------------------------------------------------------------------


def test_a_crashed_bot_is_played_by_fallback_to_the_end(bots: Bots) -> None:
    record, crashed, others = play_with(bots, "crash", 2, "--at", "5")

    assert crashed.wait(10) == 3
    [fault] = record.faults
    assert (fault.seat, fault.kind, fault.round_number, fault.trick) == (2, FaultKind.DISCONNECT, 1, 3)
    assert fault.fallback is not None
    # From the crash on, every call of seat 2 is the lowest and every card the lowest legal one.
    for result in record.rounds:
        rnd = Round(NEPALI, [h.mask for h in result.hands], result.dealer, int(result.trump), result.round_number)
        for caller in [(result.dealer + 1 + k) % 4 for k in range(4)]:
            rnd.call(result.calls[caller])
        if result.round_number > 1:
            assert result.calls[2] == 1
        for t, trick in enumerate(result.tricks):
            for card in trick.cards:
                if rnd.current_seat == 2 and (result.round_number, t) >= (1, 3):
                    assert card.index == fallback_card(rnd.legal_mask(), rnd.trump), (result.round_number, t)
                rnd.play_index(card.index)
    assert_others_clean(record, 2, others)


# --- answers the arena cannot use ---------------------------------------------------------------


def test_illegal_answers_are_refused_asked_again_then_fallen_back(bots: Bots) -> None:
    record, cheat, others = play_with(bots, "illegal", 1)

    calls = [f for f in record.faults if f.kind is FaultKind.ILLEGAL_CALL]
    cards = [f for f in record.faults if f.kind is FaultKind.ILLEGAL_CARD]
    assert len(record.faults) == len(calls) + len(cards) == 8
    assert all(f.seat == 1 for f in record.faults)
    # Asked max_retries (3) more times, then the fallback: the last fault of each decision names it.
    assert [f.fallback for f in calls] == [None, None, None, "1"]
    assert all("99 is not a legal call" in f.detail for f in calls)
    assert record.rounds[0].calls[1] == 1
    lines = cheat.lines()
    answered = {line["id"]: line["value"] for line in lines if "answer" in line}
    refused = [r for r in cheat.requests() if answered[r["id"]] not in r["legal"]]
    assert [r["request"] for r in refused] == ["call"] * 4 + ["play"] * 4
    assert [f.fallback for f in cards] == [None, None, None, expected_fallback(refused[4])]
    assert answered[refused[4]["id"]] in refused[4]["hand"]  # held, but not allowed
    assert "is not allowed" in cards[0].detail
    assert "you do not hold" in cards[1].detail and "you do not hold" in cards[3].detail
    assert "'XX' is not a card" in cards[2].detail

    # The conversation: refused with the rule, asked again with a new id and that rule, then the fallback.
    conversation = [line for line in lines if "request" in line or "notice" in line]
    for first in (refused[0], refused[4]):
        steps = conversation[conversation.index(first):][:8]
        assert len({steps[i]["id"] for i in (0, 2, 4, 6)}) == 4
        for k in range(3):
            request, notice, again = steps[2 * k], steps[2 * k + 1], steps[2 * k + 2]
            assert notice["notice"] == "NOTICE_KIND_ILLEGAL_ANSWER"
            assert notice["id"] == request["id"]
            assert notice["table"] == "t1"
            assert again["request"] == first["request"] and again["retry_reason"] == notice["detail"]
            assert again["legal"] == request["legal"]
        assert steps[7]["notice"] == "NOTICE_KIND_FALLBACK_PLAYED"
        assert steps[7]["id"] == steps[6]["id"]
        assert f"played {expected_fallback(first)} for you" in steps[7]["detail"]
    # Each refusal names the rule the record holds for it.
    refusals = [n["detail"] for n in cheat.notices() if n["notice"] == "NOTICE_KIND_ILLEGAL_ANSWER"]
    assert refusals == [f.detail for f in calls[:3] + cards[:3]]
    assert {n["notice"] for n in cheat.notices()} == {"NOTICE_KIND_ILLEGAL_ANSWER", "NOTICE_KIND_FALLBACK_PLAYED"}
    assert_others_clean(record, 1, others)


def test_garbage_messages_are_ignored_with_a_notice(bots: Bots) -> None:
    record, garbage, others = play_with(bots, "garbage", 0)

    assert kinds(record.faults) == [FaultKind.MALFORMED] * 2
    assert {f.seat for f in record.faults} == {0}
    assert [f.fallback for f in record.faults] == [None, None]
    assert "empty message" in record.faults[0].detail and "second Hello" in record.faults[1].detail
    notices = garbage.notices()
    assert [n["notice"] for n in notices] == ["NOTICE_KIND_MALFORMED_MESSAGE"] * 2
    assert [n["id"] for n in notices] == [0, 0]
    assert garbage.lines()[-1]["end"] == "OK"
    assert_others_clean(record, 0, others)


@pytest.mark.parametrize("at", [3, 70])  # 70: the seat's very last request of the game
def test_an_answer_to_an_unknown_request_is_ignored(bots: Bots, at: int) -> None:
    record, wrong, others = play_with(bots, "wrong-id", 3, "--at", str(at))

    [fault] = record.faults
    assert (fault.seat, fault.kind, fault.fallback) == (3, FaultKind.UNKNOWN_REQUEST, None)
    assert len(wrong.requests()) == 70
    request = wrong.requests()[at - 1]
    assert str(request["id"] + 1000) in fault.detail
    [notice] = wrong.notices()
    assert notice["notice"] == "NOTICE_KIND_UNKNOWN_REQUEST_ID"
    assert notice["id"] == request["id"] + 1000
    # The right answer that followed was taken: the card the bot chose is in the trick.
    answers = [line for line in wrong.lines() if line.get("answer") and line["id"] == request["id"]]
    assert len(answers) == 1
    assert_others_clean(record, 3, others)


def test_an_answer_of_the_wrong_kind_is_ignored_and_the_request_stays_open(bots: Bots) -> None:
    record, wrong, others = play_with(bots, "wrong-kind", 2)

    [fault] = record.faults
    assert (fault.seat, fault.kind, fault.fallback) == (2, FaultKind.OUT_OF_TURN, None)
    first_play = next(r for r in wrong.requests() if r["request"] == "play")
    [notice] = wrong.notices()
    assert notice["notice"] == "NOTICE_KIND_OUT_OF_TURN"
    assert (notice["id"], notice["table"]) == (first_play["id"], "t1")
    # The request stayed open: the card sent after the CallAnswer was played, no new request came.
    answers = [line for line in wrong.lines() if line.get("id") == first_play["id"] and "answer" in line]
    assert [a["answer"] for a in answers] == ["call", "play"]
    assert not any(r["retry_reason"] for r in wrong.requests())
    first_trick = record.rounds[0].tricks[0]
    assert str(first_trick.cards[(2 - first_trick.leader) % 4]) == answers[1]["value"]
    assert_others_clean(record, 2, others)
