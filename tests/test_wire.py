"""Conversion to and from the protocol: rules, seat views, events, and the encoder's caches.

What the arena sends most is written as bytes directly (:class:`arena.transports.grpc.encoder.TableEncoder`); every
such message is checked here against the one the generated classes build, byte for byte.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from typing import Any

import pytest

from arena.core.cards import Suit
from arena.core.dealing import seeded_deals
from arena.core.game import Game, Phase
from arena.core.rules import PROFILES, Rules
from arena.core.views import SeatView
from arena.kit.view import RemoteView, view_from_proto
from arena.players.base import Decision, DecisionKind, QuietPlayer, RedealMade, RoundStart, TableEvent
from arena.players.table import play_game
from arena.transports.grpc import encoder as encoding
from arena.transports.grpc.encoder import RequestEncoder
from arena.transports.grpc.wire import rules_from_proto, rules_to_proto
from protocol import callbreak_pb2 as pb
from tests.helpers.messages import encoded_view, event_message, request_to_proto, view_to_proto

# --- rules ----------------------------------------------------------------------------------------

SWITCHED = [
    ("nepali", {"trump": "H"}),
    ("nepali", {"min_call": 2, "max_call": 8, "exact8_wins": True}),
    ("nepali", {"penalty": "shortfall", "overtrick": 0, "redeal_below": 10}),
    ("nepali", {"lower_trump": "trump", "first_lead_no_trump": True, "must_beat": False}),
    ("pagat", {"pagat_bonus": 16, "rounds": 3, "trump": "C"}),
    ("dy", {"must_trump": True, "lower_trump": "trump", "redeal_no_trump": False, "trump": "D"}),
    ("master", {"draw_seating": False, "rounds": 1}),
    ("bhoos", {"must_trump": False}),
]


@pytest.mark.parametrize("rules", [
    *(pytest.param(Rules.profile(name), id=name) for name in PROFILES),
    *(pytest.param(Rules.profile(name, **switches), id=f"{name}-{i}") for i, (name, switches) in enumerate(SWITCHED)),
])
def test_rules_round_trip(rules: Rules) -> None:
    msg = rules_to_proto(rules)
    assert rules_from_proto(msg) == rules
    assert rules_from_proto(pb.Rules.FromString(msg.SerializeToString())) == rules
    assert msg.profile == rules.profile_name
    assert (msg.min_call, msg.max_call, msg.rounds) == (rules.min_call, rules.max_call, rules.rounds)
    assert msg.trump_suit == int(rules.trump) + 1


def test_last_card_trump_is_sent_as_unspecified_and_read_back() -> None:
    """The proto: trump_suit is SUIT_UNSPECIFIED in TRUMP_MODE_LAST_CARD (the round's trump is in each view)."""
    rules = Rules.profile("dy", trump_mode="last_card")
    msg = rules_to_proto(rules)
    assert msg.trump_mode == pb.TRUMP_MODE_LAST_CARD
    assert msg.trump_suit == pb.SUIT_UNSPECIFIED
    assert rules_from_proto(msg) == rules


def test_rules_from_proto_refuses_unknown_values() -> None:
    msg = rules_to_proto(Rules.profile())
    for field, value in (("scoring", 0), ("lower_trump", 9), ("trump_suit", 0), ("trump_mode", 0)):
        bad = pb.Rules()
        bad.CopyFrom(msg)
        setattr(bad, field, value)
        with pytest.raises(ValueError):
            rules_from_proto(bad)


# --- seat views -------------------------------------------------------------------------------------

NAMES = ("alpha", "beta", "gamma", "delta")
ATTRIBUTES = (
    "seat", "game_number", "round_number", "dealer", "trump", "rules", "hand", "hand_mask", "calls", "call_order",
    "leader", "trick", "tricks", "tricks_won", "totals", "past_rounds", "played", "legal", "legal_mask",
    "legal_calls", "to_act", "phase",
)


def decisions(rules: Rules, seed: int, games: int = 2) -> Iterator[Decision]:
    """A decision at every turn of ``games`` seeded games, played by random legal choices."""
    rng = random.Random(seed)
    for number in range(1, games + 1):
        game = Game(rules, seeded_deals(seed, number), game_number=number, first_dealer=(seed + number) % 4)
        while not game.over:
            seat = game.current_seat
            calling = game.phase is Phase.CALLING
            yield Decision(
                DecisionKind.CALL if calling else DecisionKind.PLAY, "t9", f"g{seed}-{number}", seat,
                game.view(seat), NAMES, 1000 + seat, 250 * seat, "" if rng.random() < 0.9 else "a reason",
            )
            if calling:
                game.call(rng.choice(game.legal_calls()))
            else:
                legal = game.legal_mask()
                game.play_index(rng.choice([i for i in range(52) if legal >> i & 1]))


GAMES = [
    pytest.param(Rules.profile("nepali"), 1, id="nepali"),
    pytest.param(Rules.profile("strict"), 2, id="strict"),
    pytest.param(Rules.profile("dy", rounds=4), 3, id="dy"),  # redeals when a hand has no trump
    pytest.param(Rules.profile("pagat", redeal_below=20, rounds=3), 4, id="pagat-redeals"),
    pytest.param(Rules.profile("bhoos", trump_mode="last_card", exact8_wins=True), 5, id="bhoos-last-card"),
]


def remote_view(response: pb.ConnectResponse) -> RemoteView:
    if response.WhichOneof("kind") == "call_request":
        request = response.call_request
        return view_from_proto(request.view, request.table_id, legal_calls=request.legal_calls,
                               retry_reason=request.retry_reason, deadline_ms=request.deadline_ms)
    play = response.play_request
    return view_from_proto(play.view, play.table_id, legal_cards=play.legal_cards, retry_reason=play.retry_reason,
                           deadline_ms=play.deadline_ms)


@pytest.mark.parametrize(("rules", "seed"), GAMES)
def test_a_remote_view_reads_back_the_seat_view(rules: Rules, seed: int) -> None:
    encoder = RequestEncoder(rules_to_proto(rules))
    count = 0
    for request_id, decision in enumerate(decisions(rules, seed), 1):
        view: SeatView = decision.view
        response = pb.ConnectResponse.FromString(encoder.request(decision, request_id, decision.deadline_ms))
        remote = remote_view(response)
        for name in ATTRIBUTES:
            assert getattr(remote, name) == getattr(view, name), (name, request_id)
        assert (remote.table_id, remote.game_id, remote.names) == ("t9", decision.game_id, NAMES)
        assert remote.retry_reason == decision.retry_reason
        request = getattr(response, response.WhichOneof("kind"))
        assert (request.request_id, request.seat, request.deadline_ms, request.time_bank_ms) == (
            request_id, decision.seat, decision.deadline_ms, decision.time_bank_ms)
        assert request.view.rounds_in_game == rules.rounds
        count += 1
    assert count > 2 * rules.rounds * 40


@pytest.mark.parametrize(("rules", "seed"), GAMES)
def test_the_encoded_request_is_the_message_the_classes_build(rules: Rules, seed: int) -> None:
    """The bytes written directly parse to the message built field by field with the generated classes,
    and protobuf serializes that message to the same bytes."""
    rules_msg = rules_to_proto(rules)
    encoder = RequestEncoder(rules_msg)
    for request_id, decision in enumerate(decisions(rules, seed), 1):
        encoded = encoder.request(decision, request_id * 997, 700 + decision.seat)
        expected = request_to_proto(decision, request_id * 997, 700 + decision.seat, rules_msg)
        assert pb.ConnectResponse.FromString(encoded) == expected, request_id
        assert encoded == expected.SerializeToString(), request_id


@pytest.mark.parametrize(("rules", "seed"), GAMES)
def test_a_reused_encoder_builds_the_same_bytes_as_a_fresh_one(rules: Rules, seed: int) -> None:
    rules_msg = rules_to_proto(rules)
    per_seat = [RequestEncoder(rules_msg) for _ in range(4)]  # as a table uses them, across both games
    shared = RequestEncoder(rules_msg)  # one encoder for every seat: its caches change hands every turn
    for request_id, decision in enumerate(decisions(rules, seed), 1):
        fresh = RequestEncoder(pb.Rules.FromString(rules_msg.SerializeToString())).request(decision, request_id, 700)
        assert per_seat[decision.seat].request(decision, request_id, 700) == fresh, request_id
        assert shared.request(decision, request_id, 700) == fresh, request_id
        names = list(reversed(NAMES))  # a changed seating must not reuse the cached names
        assert encoded_view(shared, decision.view, names, decision.game_id) == view_to_proto(
            decision.view, rules_msg, names, decision.game_id)


def test_an_encoder_reused_for_a_new_game_at_the_same_position_starts_afresh() -> None:
    """Two games with the same deals and the same first tricks, told apart only by game id."""
    rules = Rules.profile()
    rules_msg = rules_to_proto(rules)
    encoder = RequestEncoder(rules_msg)
    first = list(decisions(rules, 7, games=1))
    again = [Decision(d.kind, d.table_id, "other-game", d.seat, d.view, d.names, 1, 0) for d in first]
    for request_id, decision in enumerate([*first[:150], *again[:150], *first[100:]], 1):
        fresh = request_to_proto(decision, request_id, 1, rules_msg).SerializeToString()
        assert encoder.request(decision, request_id, 1) == fresh


def test_a_view_carries_its_own_hand_and_the_round_trump() -> None:
    rules = Rules.profile("dy", trump_mode="last_card")
    game = Game(rules, seeded_deals(3, 1))
    for seat in range(4):
        msg = view_to_proto(game.view(seat), rules_to_proto(rules), NAMES, "g1")
        remote = RemoteView(msg, "t")
        assert remote.hand.mask == game.round.hands[seat]
        assert len(msg.hand) == 13
        assert remote.trump is Suit(game.round.trump)
        assert msg.trump == game.round.trump + 1
        assert msg.rules.trump_suit == pb.SUIT_UNSPECIFIED


def test_the_views_of_one_moment_share_their_public_part_and_its_encoding() -> None:
    game = Game(Rules.profile(), seeded_deals(5, 1))
    game.call(3)
    views = [game.view(seat) for seat in range(4)]
    assert all(view.public is views[0].public for view in views)  # one snapshot of the moment for all seats
    encoder = RequestEncoder(rules_to_proto(game.rules)).table("t1", "g1")
    parts = encoder.public(views[0].public, NAMES, "g1")
    assert all(encoder.public(view.public, NAMES, "g1") is parts for view in views)
    game.call(4)
    assert game.view(0).public is not views[0].public  # a new moment, a new snapshot


# --- deadlines --------------------------------------------------------------------------------------


def test_a_remote_view_tells_the_deadline_of_its_request() -> None:
    rules = Rules.profile()
    decision = next(decisions(rules, 3))
    request = pb.ConnectResponse.FromString(RequestEncoder(rules_to_proto(rules)).request(decision, 1, 640))
    assert request.call_request.deadline_ms == 640
    view = remote_view(request)
    assert view.deadline_ms == 640
    assert RemoteView(request.call_request.view, "t9").deadline_ms == 0  # none given: no limit


# --- events -------------------------------------------------------------------------------------


class Listener(QuietPlayer):
    """Follows the game, and plays the first legal call or card."""

    wants_events = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.events: list[TableEvent] = []

    async def decide(self, decision: Decision) -> tuple[object, float]:
        view = decision.view
        if decision.kind is DecisionKind.CALL:
            return view.legal_calls[0], 0.0
        return str(view.legal.cards()[0]), 0.0

    async def notify(self, event: TableEvent) -> None:
        self.events.append(event)


def table_events(rules: Rules, seed: int) -> list[TableEvent]:
    """Every event each seat was told in one game, in the order they were told."""
    players = [Listener(name) for name in NAMES]
    record = asyncio.run(play_game(rules, players, seeded_deals(seed, 1), table_id="t4", game_id="g4"))
    assert record.faults == []
    events = [event for player in players for event in player.events]
    kinds = {type(event.body).__name__ for event in events}
    assert kinds >= {"GameStart", "RoundStart", "CallMade", "CardPlayed", "TrickWon", "RoundEnd", "GameEnd"}
    return events


@pytest.mark.parametrize(("rules", "seed"), [
    pytest.param(Rules.profile("nepali", rounds=2), 1, id="nepali"),
    pytest.param(Rules.profile("dy", rounds=3), 13, id="dy-redeals"),
])
def test_the_encoded_events_are_the_messages_the_classes_build(rules: Rules, seed: int) -> None:
    rules_msg = rules_to_proto(rules)
    events = table_events(rules, seed)
    if rules.redeal_no_trump:
        assert any(isinstance(event.body, RedealMade) for event in events)
    encoders = [RequestEncoder(rules_msg) for _ in range(4)]
    for event in events:
        assert encoders[event.seat].event(event) == event_message(event, rules_msg).SerializeToString(), event


def test_an_event_is_encoded_once_for_all_the_seats_of_its_table(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = Rules.profile("nepali", rounds=1)
    rules_msg = rules_to_proto(rules)
    encoded: list[object] = []
    event_body = encoding._event_body

    def counted(body: Any, rules_bytes: bytes) -> bytes:
        encoded.append(body)
        return event_body(body, rules_bytes)

    monkeypatch.setattr(encoding, "_event_body", counted)
    events = sorted(table_events(rules, 2), key=lambda event: event.seat)
    by_order = [[event for event in events if event.seat == seat] for seat in range(4)]
    encoders = [RequestEncoder(rules_msg) for _ in range(4)]  # one per seat, as remote seats hold them
    for told in zip(*by_order, strict=True):  # as the table tells them: each event to every seat in turn
        for event in told:
            encoders[event.seat].event(event)
    bodies = {id(event.body) for event in events}
    assert len(encoded) == len(bodies) < len(events)  # the hand of a round's start differs by seat; nothing else
    assert sum(isinstance(body, RoundStart) for body in encoded) == 4
