"""Conversion to and from the protocol: rules, seat views, and the request encoder's caches."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from arena.core.cards import Suit
from arena.core.dealing import seeded_deals
from arena.core.game import Game, Phase
from arena.core.rules import PROFILES, Rules
from arena.core.views import SeatView
from arena.net.wire import RemoteView, RequestEncoder, rules_from_proto, rules_to_proto, view_from_proto, view_to_proto
from arena.players.base import Decision, DecisionKind
from protocol import callbreak_pb2 as pb

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
                               retry_reason=request.retry_reason)
    play = response.play_request
    return view_from_proto(play.view, play.table_id, legal_cards=play.legal_cards, retry_reason=play.retry_reason)


@pytest.mark.parametrize(("rules", "seed"), GAMES)
def test_a_remote_view_reads_back_the_seat_view(rules: Rules, seed: int) -> None:
    encoder = RequestEncoder(rules_to_proto(rules))
    count = 0
    for request_id, decision in enumerate(decisions(rules, seed), 1):
        view: SeatView = decision.view
        response = encoder.request(decision, request_id, decision.deadline_ms)
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
def test_a_reused_encoder_builds_the_same_bytes_as_a_fresh_one(rules: Rules, seed: int) -> None:
    rules_msg = rules_to_proto(rules)
    per_seat = [RequestEncoder(rules_msg) for _ in range(4)]  # as a table uses them, across both games
    shared = RequestEncoder(rules_msg)  # one encoder for every seat: its caches change hands every turn
    for request_id, decision in enumerate(decisions(rules, seed), 1):
        fresh = RequestEncoder(rules_msg).request(decision, request_id, 700).SerializeToString()
        assert per_seat[decision.seat].request(decision, request_id, 700).SerializeToString() == fresh, request_id
        assert shared.request(decision, request_id, 700).SerializeToString() == fresh, request_id
        names = list(reversed(NAMES))  # a changed seating must not reuse the cached names
        assert shared.view(decision.view, names, decision.game_id) == view_to_proto(
            decision.view, rules_msg, names, decision.game_id)


def test_an_encoder_reused_for_a_new_game_at_the_same_position_starts_afresh() -> None:
    """Two games with the same deals and the same first tricks, told apart only by game id."""
    rules = Rules.profile()
    rules_msg = rules_to_proto(rules)
    encoder = RequestEncoder(rules_msg)
    first = list(decisions(rules, 7, games=1))
    again = [Decision(d.kind, d.table_id, "other-game", d.seat, d.view, d.names, 1, 0) for d in first]
    for request_id, decision in enumerate([*first[:150], *again[:150], *first[100:]], 1):
        fresh = RequestEncoder(rules_msg).request(decision, request_id, 1).SerializeToString()
        assert encoder.request(decision, request_id, 1).SerializeToString() == fresh


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
