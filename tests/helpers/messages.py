"""The protocol messages the arena sends, built field by field with the generated classes: what the
tests compare the encoder's hand-written bytes with."""

from __future__ import annotations

from collections.abc import Sequence

from arena.core.cards import card_text
from arena.core.views import SeatView
from arena.players.base import (
    CallMade,
    CardPlayed,
    Decision,
    DecisionKind,
    GameEnd,
    GameStart,
    RoundEnd,
    RoundStart,
    TableEvent,
    TrickWon,
)
from arena.transports.grpc.encoder import RequestEncoder
from arena.transports.grpc.wire import rules_to_proto, suit_to_proto
from protocol import callbreak_pb2 as pb

_TEXT = tuple(card_text(i) for i in range(52))


def _cards(mask: int) -> list[str]:
    """The cards of a mask as text, lowest index first (as the encoder writes them)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(_TEXT[low.bit_length() - 1])
        mask ^= low
    return out


def encoded_view(
    encoder: RequestEncoder, view: SeatView, names: Sequence[str], game_id: str, table_id: str = "",
) -> pb.SeatView:
    """The view of one seat as the encoder writes it into a request, read back as a message."""
    return pb.SeatView.FromString(encoder.table(table_id, game_id).view(view, names, game_id))


def view_to_proto(view: SeatView, rules_msg: pb.Rules, names: Sequence[str], game_id: str) -> pb.SeatView:
    """The complete view of one seat, built only from what that seat may know, with the message classes
    (the plain form of what :class:`~arena.transports.grpc.encoder.TableEncoder` writes as bytes)."""
    msg = pb.SeatView(
        game_id=game_id, game_number=view.game_number, round_number=view.round_number,
        rounds_in_game=view.rules.rounds, seat=view.seat, dealer=view.dealer, trump=suit_to_proto(view.trump),
        hand=_cards(view.hand_mask), tricks_won=view.tricks_won, total_tenths=view.totals, player_names=names,
        rules=rules_msg, seat_seed=view.seat_seed,
    )
    calls = view.calls
    for seat in view.call_order:
        value = calls[seat]
        if value is not None:
            msg.calls.add(seat=seat, value=value)
    msg.current_trick.leader = view.leader
    msg.current_trick.cards.extend([str(c) for c in view.trick])
    for trick in view.tricks:
        msg.finished_tricks.add(leader=trick.leader, cards=[str(c) for c in trick.cards], winner=trick.winner)
    for past in view.past_rounds:
        msg.past_rounds.add(round_number=past.round_number, calls=past.calls, tricks=past.tricks_won,
                            score_tenths=past.scores)
    return msg


def request_to_proto(decision: Decision, request_id: int, deadline_ms: int, rules_msg: pb.Rules) -> pb.ConnectResponse:
    """The request for a decision built with the message classes (the plain form of
    :meth:`~arena.transports.grpc.encoder.TableEncoder.request`)."""
    view = decision.view
    response = pb.ConnectResponse()
    request: pb.CallRequest | pb.PlayRequest
    if decision.kind is DecisionKind.CALL:
        request = response.call_request
        request.legal_calls.extend(view.legal_calls)
    else:
        request = response.play_request
        request.legal_cards.extend(_cards(view.legal_mask))
    request.request_id = request_id
    request.table_id = decision.table_id
    request.seat = decision.seat
    request.deadline_ms = deadline_ms
    request.time_bank_ms = decision.time_bank_ms
    request.retry_reason = decision.retry_reason
    request.view.CopyFrom(view_to_proto(view, rules_msg, decision.names, decision.game_id))
    return response


def event_message(event: TableEvent, rules_msg: pb.Rules | None = None) -> pb.ConnectResponse:
    """A table event as a message, built with the message classes (the plain form of
    :meth:`~arena.transports.grpc.encoder.TableEncoder.event`; ``rules_msg``: the rules of a ``GameStart``
    already converted)."""
    body = event.body
    msg = pb.Event(table_id=event.table_id, seat=event.seat, game_id=event.game_id)
    if isinstance(body, CardPlayed):
        msg.card_played.seat = body.seat
        msg.card_played.card = _TEXT[body.card.index]
    elif isinstance(body, CallMade):
        msg.call_made.seat = body.seat
        msg.call_made.call = body.call
    elif isinstance(body, TrickWon):
        trick = body.trick
        msg.trick_won.winner = trick.winner
        msg.trick_won.trick.leader = trick.leader
        msg.trick_won.trick.cards.extend([_TEXT[c.index] for c in trick.cards])
        msg.trick_won.trick.winner = trick.winner
    elif isinstance(body, RoundStart):
        msg.round_start.round_number = body.round_number
        msg.round_start.dealer = body.dealer
        msg.round_start.hand.extend(_cards(body.hand.mask))
        msg.round_start.trump = suit_to_proto(body.trump)
    elif isinstance(body, RoundEnd):
        result = body.result
        msg.round_end.result.round_number = result.round_number
        msg.round_end.result.calls.extend(result.calls)
        msg.round_end.result.tricks.extend(result.tricks_won)
        msg.round_end.result.score_tenths.extend(result.scores)
        msg.round_end.total_tenths.extend(body.totals)
    elif isinstance(body, GameStart):
        msg.game_start.seat = event.seat
        msg.game_start.player_names.extend(body.names)
        msg.game_start.game_number = body.game_number
        msg.game_start.rules.CopyFrom(rules_msg if rules_msg is not None else rules_to_proto(body.rules))
    elif isinstance(body, GameEnd):
        msg.game_end.total_tenths.extend(body.totals)
        msg.game_end.places.extend(body.places)
    else:
        msg.redeal.reason = body.reason
    return pb.ConnectResponse(event=msg)
