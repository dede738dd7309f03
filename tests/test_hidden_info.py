"""No message to a seat ever holds a card that is, at that moment, in another seat's unplayed hand.

Four spy bots (tests/fake_bots.py ``good --dump``, two of them with events) play whole games over
real gRPC and log every message they receive, byte for byte. After the game, the record (every
initial hand, every trick) says which cards each seat could not know at each moment, and every
string in every message is searched for them. The checker is itself tested on leaks made on purpose.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator

import pytest
from google.protobuf.message import Message

from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.records.format import GameRecord
from protocol import callbreak_pb2 as pb
from tests.conftest import BotProcess, Bots, arena, run
from tests.helpers.seating import seat_and_play

NAMES = ["spy0", "spy1", "spy2", "spy3"]
CARD = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][SHDC](?![A-Za-z0-9])")


def card_strings(msg: Message) -> set[str]:
    """Every card named anywhere in a message: in any string field, however deep, even inside prose."""
    found: set[str] = set()
    for field, value in msg.ListFields():
        values = value if field.is_repeated else [value]
        for item in values:
            if field.type == field.TYPE_MESSAGE:
                found |= card_strings(item)
            elif field.type == field.TYPE_STRING:
                found.update(CARD.findall(item))
    return found


class Knowledge:
    """Which cards each seat may not know at each moment of a recorded game."""

    def __init__(self, record: GameRecord) -> None:
        self.hands: dict[int, list[set[str]]] = {}
        self.played: dict[int, list[tuple[int, str]]] = {}
        """By round: (seat, card) in play order."""
        for result in record.rounds:
            self.hands[result.round_number] = [{str(c) for c in hand} for hand in result.hands]
            self.played[result.round_number] = [
                ((trick.leader + k) % 4, str(card)) for trick in result.tricks for k, card in enumerate(trick.cards)
            ]

    def hidden(self, seat: int, round_number: int, n_played: int) -> set[str]:
        """The other seats' unplayed cards once ``n_played`` cards of the round are down."""
        out: set[str] = set()
        for other, hand in enumerate(self.hands[round_number]):
            if other != seat:
                out |= hand
        return out - {card for _, card in self.played[round_number][:n_played]}

    def own(self, seat: int, round_number: int, n_played: int) -> set[str]:
        """The seat's own cards still in hand at that moment."""
        gone = {card for s, card in self.played[round_number][:n_played] if s == seat}
        return self.hands[round_number][seat] - gone

    def leaks(self, msg: Message, seat: int, round_number: int, n_played: int) -> set[str]:
        return card_strings(msg) & self.hidden(seat, round_number, n_played)


def received(proc: BotProcess) -> list[pb.ConnectResponse]:
    return [pb.ConnectResponse.FromString(base64.b64decode(line["raw"])) for line in proc.lines() if "raw" in line]


def moments(knowledge: Knowledge, seat: int, messages: list[pb.ConnectResponse], events: bool,
            ) -> Iterator[tuple[pb.ConnectResponse, int, int]]:
    """Each message with the moment it was sent: (round, cards of the round played).

    The moment comes from the stream itself (round starts, cards played, the views of requests), and
    every step is checked against the record, so a message cannot hide behind a wrong moment.
    """
    round_number, n, ended = 1, 0, False
    for msg in messages:
        kind = msg.WhichOneof("kind")
        if kind == "event":
            event = msg.event
            assert event.seat == seat
            what = event.WhichOneof("kind")
            if what == "round_start":
                round_number, n, ended = event.round_start.round_number, 0, False
                assert set(event.round_start.hand) == knowledge.hands[round_number][seat]
            elif what == "redeal":
                assert n == 0 or ended
                yield msg, round_number + 1 if ended else round_number, 0
                continue
            elif what == "card_played":
                n += 1
                assert (event.card_played.seat, event.card_played.card) == knowledge.played[round_number][n - 1]
            elif what == "trick_won":
                assert n % 4 == 0 and n > 0
            elif what == "round_end":
                assert n == 52
                ended = True
        elif kind in ("call_request", "play_request"):
            request = getattr(msg, kind)
            view = request.view
            assert view.seat == request.seat == seat
            position = sum(len(t.cards) for t in view.finished_tricks) + len(view.current_trick.cards)
            if events:  # a request comes after the events that led to it
                assert (view.round_number, position) == (round_number, n)
            round_number, n, ended = view.round_number, position, False
            shown = [card for t in view.finished_tricks for card in t.cards] + list(view.current_trick.cards)
            assert shown == [card for _, card in knowledge.played[round_number][:n]]
            assert set(view.hand) == knowledge.own(seat, round_number, n)
        yield msg, round_number, n


def play_spied(bots: Bots, rules: Rules, seed: int) -> tuple[GameRecord, list[BotProcess]]:
    async def scenario() -> GameRecord:
        async with arena(NAMES, rules) as (server, port):
            for seat, name in enumerate(NAMES):
                bots.fake("good", port, name, "--dump", *(["--events"] if seat % 2 == 0 else []))
            return await seat_and_play(server, NAMES, seeded_deals(seed, 1), timeout=20)

    record = run(scenario())
    for spy in bots.processes:  # all it received is logged once it has seen the stream end
        assert spy.wait(10) == 0, spy.stderr()
    return record, list(bots.processes)


@pytest.mark.parametrize(("rules", "seed"), [
    pytest.param(Rules.profile("nepali"), 12, id="nepali"),
    pytest.param(Rules.profile("dy"), 13, id="dy"),  # ten rounds; two redeals (a hand without trump)
])
def test_no_message_shows_another_seats_unplayed_card(bots: Bots, rules: Rules, seed: int) -> None:
    record, spies = play_spied(bots, rules, seed)
    assert record.faults == []
    knowledge = Knowledge(record)
    for seat, spy in enumerate(spies):
        events = seat % 2 == 0
        messages = received(spy)
        kinds = [m.WhichOneof("kind") for m in messages]
        assert kinds[0] == "welcome"
        requests = kinds.count("call_request") + kinds.count("play_request")
        assert requests == len(record.rounds) * 14
        assert kinds.count("event") == (0 if not events else 2 + len(record.redeals) + len(record.rounds) * 71)
        seen = 0
        for msg, round_number, n in moments(knowledge, seat, messages, events):
            leaked = knowledge.leaks(msg, seat, round_number, n)
            assert not leaked, f"seat {seat} was sent {sorted(leaked)} at round {round_number}, card {n}: {msg}"
            seen += len(card_strings(msg))
        assert seen > requests * 13  # the checker does see cards: the seat's own, and the played ones
    if rules.redeal_no_trump:
        assert record.redeals, "pick a seed with a redeal, so that Redeal events are checked too"


def test_the_checker_catches_a_leak(bots: Bots) -> None:
    record, spies = play_spied(bots, Rules.profile("nepali", rounds=1), 12)
    knowledge = Knowledge(record)
    messages = received(spies[0])
    request_msg, round_number, n = next(
        (m, r, k) for m, r, k in moments(knowledge, 0, messages, True) if m.WhichOneof("kind") == "play_request" and k
    )
    assert knowledge.leaks(request_msg, 0, round_number, n) == set()
    other = sorted(knowledge.own(1, round_number, n))[0]  # a card seat 1 still holds

    in_hand = pb.ConnectResponse()
    in_hand.CopyFrom(request_msg)
    in_hand.play_request.view.hand.append(other)
    assert knowledge.leaks(in_hand, 0, round_number, n) == {other}

    in_legal = pb.ConnectResponse()
    in_legal.CopyFrom(request_msg)
    in_legal.play_request.legal_cards.append(other)
    assert knowledge.leaks(in_legal, 0, round_number, n) == {other}

    in_prose = pb.ConnectResponse(notice=pb.Notice(kind=pb.NOTICE_KIND_ILLEGAL_ANSWER,
                                                   detail=f"you cannot play {other}, seat 1 holds it"))
    assert knowledge.leaks(in_prose, 0, round_number, n) == {other}

    start = pb.ConnectResponse(event=pb.Event(round_start=pb.RoundStart(
        round_number=1, hand=sorted(knowledge.hands[1][2])
    )))
    assert knowledge.leaks(start, 0, 1, 0) == knowledge.hands[1][2]

    # A card already played is public, whoever played it; so is one's own hand.
    leader, played = knowledge.played[round_number][0]
    public = pb.ConnectResponse(notice=pb.Notice(detail=f"{played} was led"))
    assert knowledge.leaks(public, 0, round_number, n) == set()
    own = pb.ConnectResponse(event=pb.Event(round_start=pb.RoundStart(hand=sorted(knowledge.hands[1][0]))))
    assert knowledge.leaks(own, 0, 1, 0) == set()
    # ... but not before it was played.
    assert knowledge.leaks(public, (leader + 1) % 4, round_number, 0) == {played}
