"""What the arena sends a bot most, requests and events, written directly as serialized protobuf bytes.

Requests are built from a :class:`~arena.core.views.SeatView`, never from the game, so no other seat's
unplayed card can reach a bot. They and the events, sent for every decision and every happening, are
written as bytes by a :class:`TableEncoder` that the seats of one table share, so each part of what they
are sent is encoded once (see "the wire format, written directly" below); a :class:`RequestEncoder` is
one seat's handle on it. The hand-written bytes pay for themselves: ``benchmarks/grpc_table.py`` measures
the arena's cost per decision with them, and the tests compare them, byte for byte, with what the
generated message classes build.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TypeVar

from arena.core.cards import card_text
from arena.core.game import RoundSummary, Trick
from arena.core.turns import call_order
from arena.core.views import PublicView, SeatView
from arena.players.base import (
    CallMade,
    CardPlayed,
    Decision,
    DecisionKind,
    EventBody,
    GameEnd,
    GameStart,
    RoundEnd,
    RoundStart,
    TableEvent,
    TrickWon,
)
from arena.transports.grpc.wire import suit_to_proto
from protocol import callbreak_pb2 as pb

__all__ = ["RequestEncoder", "TableEncoder", "table_encoder"]

_TEXT = tuple(card_text(i) for i in range(52))

# -- the wire format, written directly -----------------------------------------------------------
# What the arena sends most, requests and events, is built as serialized bytes rather than through
# message objects. On the wire a message is its fields one after another, each a key (field number
# and wire type) then either a varint or a length and that many bytes (a string, a sub-message, packed
# numbers). So a part that rarely changes is encoded once and joined to the rest as bytes, the parts
# joined in field-number order: the bytes are those protobuf itself would write, and the tests compare
# them, byte for byte, with what the message classes build. gRPC sends bytes as they are (see
# ``arena.transports.grpc.server``).

_LEN = 2
"""Wire type of a length-delimited field (0, the default, is a varint)."""
_U64 = (1 << 64) - 1
_VARINTS = tuple(bytes((i,)) for i in range(128)) + tuple(bytes((i & 0x7F | 0x80, i >> 7)) for i in range(128, 1 << 14))
"""The varints of 0 to 16,383 (one or two bytes): lengths, deadlines, seats, calls, most request ids."""


def _varint(value: int) -> bytes:
    """A varint; a negative number (an int32 score) as its 64-bit two's complement, as protobuf writes it."""
    if 0 <= value < 16384:
        return _VARINTS[value]
    value &= _U64
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(field: int, wire_type: int = 0) -> bytes:
    return _varint(field << 3 | wire_type)


def _field(key: bytes, payload: bytes) -> bytes:
    """A length-delimited field: a sub-message, a string's UTF-8, or packed numbers."""
    return key + _varint(len(payload)) + payload


def _text(key: bytes, text: str) -> bytes:
    return _field(key, text.encode()) if text else b""


def _number(key: bytes, value: int) -> bytes:
    """A number field, left out when 0 (proto3's default), as protobuf writes it."""
    return key + _varint(value) if value else b""


def _packed(key: bytes, values: Sequence[int]) -> bytes:
    return _field(key, b"".join([_varint(v) for v in values])) if values else b""


class _CardRuns:
    """The cards of a mask as the elements of one repeated string field, lowest index first: the mask
    is read in eight slices of 7 bits, each looked up in a table made at import."""

    def __init__(self, field: int) -> None:
        key = _key(field, _LEN)
        self.one = tuple(key + b"\x02" + text.encode() for text in _TEXT)
        """One card as an element of the field."""
        self._slices = tuple(
            tuple(b"".join([self.one[base + bit] for bit in range(7) if bits >> bit & 1 and base + bit < 52])
                  for bits in range(128))
            for base in range(0, 52, 7)
        )

    def of(self, mask: int) -> bytes:
        s0, s1, s2, s3, s4, s5, s6, s7 = self._slices
        return (s0[mask & 127] + s1[mask >> 7 & 127] + s2[mask >> 14 & 127] + s3[mask >> 21 & 127]
                + s4[mask >> 28 & 127] + s5[mask >> 35 & 127] + s6[mask >> 42 & 127] + s7[mask >> 49])


# Field keys, by message, as numbered in callbreak.proto.
_RESPONSE_CALL, _RESPONSE_PLAY, _RESPONSE_EVENT = _key(3, _LEN), _key(4, _LEN), _key(5, _LEN)
_REQ_ID, _REQ_TABLE, _REQ_SEAT, _REQ_DEADLINE, _REQ_BANK = _key(1), _key(2, _LEN), _key(3), _key(4), _key(5)
_REQ_LEGAL_CALLS, _REQ_VIEW, _REQ_RETRY = _key(6, _LEN), _key(7, _LEN), _key(8, _LEN)
_LEGAL_CARDS = _CardRuns(6)
_SEATS = tuple(_number(_REQ_SEAT, seat) for seat in range(4))
_VIEW_GAME_ID, _VIEW_GAME, _VIEW_ROUND, _VIEW_ROUNDS = _key(1, _LEN), _key(2), _key(3), _key(4)
_VIEW_SEAT, _VIEW_DEALER, _VIEW_TRUMP = _key(5), _key(6), _key(7)
_VIEW_CALL, _VIEW_CURRENT, _VIEW_FINISHED = _key(9, _LEN), _key(10, _LEN), _key(11, _LEN)
_VIEW_WON, _VIEW_TOTALS, _VIEW_PAST = _key(12, _LEN), _key(13, _LEN), _key(14, _LEN)
_VIEW_NAME, _VIEW_RULES, _VIEW_SEED = _key(15, _LEN), _key(16, _LEN), _key(17)
_HAND = _CardRuns(8)
_VIEW_SEATS = tuple(_number(_VIEW_SEAT, seat) for seat in range(4))
_TRICK_LEADER, _TRICK_WINNER = _key(1), _key(3)
_TRICK_CARD = _CARD_PLAYED_CARD = tuple(_key(2, _LEN) + b"\x02" + text.encode() for text in _TEXT)
_RESULT_ROUND, _RESULT_CALLS, _RESULT_TRICKS, _RESULT_SCORES = _key(1), _key(2, _LEN), _key(3, _LEN), _key(4, _LEN)
_EVENT_TABLE, _EVENT_SEAT, _EVENT_GAME_ID = _key(1, _LEN), _key(2), _key(3, _LEN)
_EVENT_GAME_START, _EVENT_ROUND_START, _EVENT_CALL = _key(4, _LEN), _key(5, _LEN), _key(6, _LEN)
_EVENT_CARD, _EVENT_TRICK, _EVENT_ROUND_END = _key(7, _LEN), _key(8, _LEN), _key(9, _LEN)
_EVENT_GAME_END, _EVENT_REDEAL = _key(10, _LEN), _key(11, _LEN)
_ROUND_START_HAND = _CardRuns(3)
_CALLS = tuple(tuple(_field(_VIEW_CALL, _number(_key(1), seat) + _number(_key(2), value)) for value in range(14))
               for seat in range(4))
"""A view's ``calls`` element for each seat and value."""


def _trick(trick: Trick) -> bytes:
    """A finished trick's ``Trick`` message (its winner set, 0 included: the field has presence)."""
    cards = trick.cards
    payload = _number(_TRICK_LEADER, trick.leader) + b"".join([_TRICK_CARD[c.index] for c in cards])
    return payload if trick.winner is None else payload + _TRICK_WINNER + _VARINTS[trick.winner]


_WON: dict[tuple[int, ...], bytes] = {}
"""A view's ``tricks_won`` field for each count met (a few hundred are possible)."""


def _won(won: tuple[int, ...]) -> bytes:
    encoded = _WON[won] = _packed(_VIEW_WON, won)
    return encoded


def _round_result(result: RoundSummary) -> bytes:
    return (_number(_RESULT_ROUND, result.round_number) + _packed(_RESULT_CALLS, result.calls)
            + _packed(_RESULT_TRICKS, result.tricks_won) + _packed(_RESULT_SCORES, result.scores))


_Item = TypeVar("_Item")


def _finished_trick(trick: Trick) -> bytes:
    return _field(_VIEW_FINISHED, _trick(trick))


def _past_round(result: RoundSummary) -> bytes:
    return _field(_VIEW_PAST, _round_result(result))


def _grown(items: tuple[_Item, ...], encoded_items: tuple[_Item, ...], encoded: bytes,
           encode: Callable[[_Item], bytes]) -> bytes:
    """The encoding of ``items``, given ``encoded`` for ``encoded_items``: extended when ``items`` only
    added to them (the core hands out a new tuple that starts with the old one), else made anew."""
    n = len(encoded_items)
    if n and len(items) > n and items[n - 1] is encoded_items[-1]:
        return encoded + b"".join([encode(item) for item in items[n:]])
    return b"".join([encode(item) for item in items])


class TableEncoder:
    """Encodes what the arena sends to the seats of one game at one table, each part once.

    The game's fixed part (names, rules), each finished trick and round, each moment's public view
    (one :class:`~arena.core.views.PublicView`, whichever seats are sent it) and each event are
    encoded once and shared by the four seats, which join their own parts (seat, hand, legal cards,
    the request's numbers). Every cache is checked against the values it stands for, so an encoder
    handed another game's view still writes that view exactly, only more slowly.
    """

    def __init__(self, table_id: str, game_id: str, rules_msg: pb.Rules) -> None:
        self.table_id = table_id
        self.game_id = game_id
        self.rules_msg = rules_msg
        self._rules_payload = bytes(rules_msg.SerializeToString())
        self._rules = _field(_VIEW_RULES, self._rules_payload)
        self._game_key: tuple[str, int, tuple[str, ...], int] | None = None
        self._game_head = self._game_rounds = self._game_tail = b""
        self._round_key: tuple[object, ...] = ()
        self._front = self._middle = b""
        self._calls: tuple[int | None, ...] = ()
        self._calls_bytes = b""
        self._tricks: tuple[Trick, ...] = ()
        self._tricks_bytes = b""
        self._past: tuple[RoundSummary, ...] = ()
        self._past_bytes = b""
        self._totals: tuple[int, ...] = ()
        self._totals_bytes = b""
        self._public: PublicView | None = None
        self._public_parts = (b"", b"", b"")
        self._legal_calls: range | None = None
        self._legal_calls_bytes = b""
        self._request_table = _text(_REQ_TABLE, table_id)
        self._heads = tuple(_text(_EVENT_TABLE, table_id) + _number(_EVENT_SEAT, seat) + _text(_EVENT_GAME_ID, game_id)
                            for seat in range(4))
        """The fields of an Event before its kind, for each seat."""
        self._body: EventBody | None = None
        self._body_bytes = b""

    # -- views -----------------------------------------------------------------------------------

    # A view's fields go out in field-number order, as protobuf writes them, so that the bytes are the
    # very bytes protobuf would write: the seat's own fields (seat 5, hand 8) go between shared ones.

    def _game_parts(self, public: PublicView, names: Sequence[str], game_id: str) -> None:
        key = (game_id, public.game_number, tuple(names), public.rules.rounds)
        if key != self._game_key:
            self._game_key = key
            self._game_head = _text(_VIEW_GAME_ID, game_id) + _number(_VIEW_GAME, public.game_number)
            self._game_rounds = _number(_VIEW_ROUNDS, public.rules.rounds)
            self._game_tail = b"".join([_text(_VIEW_NAME, name) for name in names]) + self._rules
            self._public = None  # its parts hold the game's

    def public(self, public: PublicView, names: Sequence[str], game_id: str) -> tuple[bytes, bytes, bytes]:
        """The parts of a view every seat shares at one moment: the fields before the seat's number,
        those between it and the hand, and those after the hand."""
        self._game_parts(public, names, game_id)
        if public is self._public:
            return self._public_parts
        # Finished tricks and rounds only grow within a round and a game, and the core hands out the same
        # tuple until one is added: a new tuple that still starts with the last one encoded is extended.
        tricks = public.tricks
        if tricks is not self._tricks:
            self._tricks_bytes = _grown(tricks, self._tricks, self._tricks_bytes, _finished_trick)
            self._tricks = tricks
        past = public.past_rounds
        if past is not self._past:
            self._past_bytes = _grown(past, self._past, self._past_bytes, _past_round)
            self._past = past
        round_key = (self._game_head, public.round_number, public.dealer, public.trump)
        if round_key != self._round_key:  # a new round (or game)
            _, round_number, dealer, trump = round_key
            self._round_key = round_key
            self._front = self._game_head + _number(_VIEW_ROUND, round_number) + self._game_rounds
            self._middle = _number(_VIEW_DEALER, dealer) + _number(_VIEW_TRUMP, trump + 1)
        calls = public.calls
        if calls != self._calls:  # four times a round
            self._calls = calls
            self._calls_bytes = b"".join([_CALLS[seat][value] for seat in call_order(public.dealer)
                                          if (value := calls[seat]) is not None])
        current = b"".join([_TRICK_CARD[i] for i in public.trick_indices])
        leader = public.leader
        if leader:
            current = _TRICK_LEADER + _VARINTS[leader] + current
        won = public.tricks_won
        tail = b"".join([
            self._calls_bytes, _VIEW_CURRENT, _VARINTS[len(current)], current, self._tricks_bytes,
            _WON.get(won) or _won(won), self._totals_of(public.totals), self._past_bytes, self._game_tail,
        ])
        self._public, self._public_parts = public, (self._front, self._middle, tail)
        return self._public_parts

    def _totals_of(self, totals: tuple[int, ...]) -> bytes:
        # They change once a round, and a negative score takes ten bytes to write.
        if totals != self._totals:
            self._totals, self._totals_bytes = totals, _packed(_VIEW_TOTALS, totals)
        return self._totals_bytes

    def view(self, view: SeatView, names: Sequence[str], game_id: str) -> bytes:
        """A serialized ``SeatView``: the shared parts with this seat's own (its seat and its hand) between,
        and its seed (the last field) after."""
        front, middle, tail = self.public(view.public, names, game_id)
        return front + _VIEW_SEATS[view.seat] + middle + _HAND.of(view.hand_mask) + tail + _number(_VIEW_SEED,
                                                                                                  view.seat_seed)

    # -- requests --------------------------------------------------------------------------------

    def request(self, decision: Decision, request_id: int, deadline_ms: int) -> bytes:
        """The serialized ``ConnectResponse`` carrying the CallRequest or PlayRequest of a decision."""
        view = decision.view
        if decision.kind is DecisionKind.CALL:
            calls = view.legal_calls
            if calls != self._legal_calls:
                self._legal_calls, self._legal_calls_bytes = calls, _packed(_REQ_LEGAL_CALLS, calls)
            envelope, legal = _RESPONSE_CALL, self._legal_calls_bytes
        else:
            envelope, legal = _RESPONSE_PLAY, _LEGAL_CARDS.of(view.legal_mask)
        table = self._request_table if decision.table_id == self.table_id else _text(_REQ_TABLE, decision.table_id)
        seat_view = self.view(view, decision.names, decision.game_id)
        request = b"".join([
            _REQ_ID, _varint(request_id), table, _SEATS[decision.seat], _number(_REQ_DEADLINE, deadline_ms),
            _number(_REQ_BANK, decision.time_bank_ms), legal, _REQ_VIEW, _varint(len(seat_view)), seat_view,
            _text(_REQ_RETRY, decision.retry_reason) if decision.retry_reason else b"",
        ])
        return envelope + _varint(len(request)) + request

    # -- events ----------------------------------------------------------------------------------

    def event(self, event: TableEvent) -> bytes:
        """The serialized ``ConnectResponse`` carrying an event; a body the table shares between seats
        (all but a round's start, which holds the seat's hand) is encoded once."""
        body = event.body
        if body is self._body:
            encoded = self._body_bytes
        else:
            encoded = self._body_bytes = _event_body(body, self._rules_payload)
            self._body = body
        seat = event.seat
        if isinstance(body, GameStart):  # the one body with the addressed seat inside
            encoded = _field(_EVENT_GAME_START, _number(_key(1), seat) + encoded)
        if event.table_id == self.table_id and event.game_id == self.game_id:
            head = self._heads[seat]
        else:
            head = _text(_EVENT_TABLE, event.table_id) + _number(_EVENT_SEAT, seat) + _text(_EVENT_GAME_ID,
                                                                                             event.game_id)
        return _field(_RESPONSE_EVENT, head + encoded)


def _event_body(body: EventBody, rules: bytes) -> bytes:
    """An event's kind field (for a GameStart, the inside of its message less the addressed seat;
    ``rules``: the arena's rules, serialized)."""
    if isinstance(body, CardPlayed):
        return _field(_EVENT_CARD, _number(_key(1), body.seat) + _CARD_PLAYED_CARD[body.card.index])
    if isinstance(body, CallMade):
        return _field(_EVENT_CALL, _number(_key(1), body.seat) + _number(_key(2), body.call))
    if isinstance(body, TrickWon):
        trick = body.trick
        assert trick.winner is not None
        return _field(_EVENT_TRICK, _number(_key(1), trick.winner) + _field(_key(2, _LEN), _trick(trick)))
    if isinstance(body, RoundStart):
        return _field(_EVENT_ROUND_START, _number(_key(1), body.round_number) + _number(_key(2), body.dealer)
                      + _ROUND_START_HAND.of(body.hand.mask) + _number(_key(4), suit_to_proto(body.trump)))
    if isinstance(body, RoundEnd):
        return _field(_EVENT_ROUND_END, _field(_key(1, _LEN), _round_result(body.result))
                      + _packed(_key(2, _LEN), body.totals))
    if isinstance(body, GameStart):
        return (b"".join([_text(_key(2, _LEN), name) for name in body.names])
                + _field(_key(3, _LEN), rules) + _number(_key(4), body.game_number))
    if isinstance(body, GameEnd):
        return _field(_EVENT_GAME_END, _packed(_key(1, _LEN), body.totals) + _packed(_key(2, _LEN), body.places))
    return _field(_EVENT_REDEAL, _text(_key(1, _LEN), body.reason))


_TABLES: weakref.WeakValueDictionary[tuple[str, str, int], TableEncoder] = weakref.WeakValueDictionary()
"""The encoders in use, by (table, game, rules message): the seats of one table share one."""


def table_encoder(table_id: str, game_id: str, rules_msg: pb.Rules) -> TableEncoder:
    """The encoder of one game at one table, shared by the seats that hold it (kept while one does)."""
    key = (table_id, game_id, id(rules_msg))
    encoder = _TABLES.get(key)
    if encoder is None or encoder.rules_msg is not rules_msg:
        encoder = _TABLES[key] = TableEncoder(table_id, game_id, rules_msg)
    return encoder




class RequestEncoder:
    """What one seat is sent: its requests and events, built on its table's shared :class:`TableEncoder`."""

    def __init__(self, rules_msg: pb.Rules) -> None:
        self.rules_msg = rules_msg
        self._table: TableEncoder | None = None
        self.last_request_id = 0
        """The request_id of the last request built (the request a refusal or fallback is about)."""

    def table(self, table_id: str, game_id: str) -> TableEncoder:
        """The shared encoder of that game at that table."""
        table = self._table
        if table is None or table.game_id != game_id or table.table_id != table_id:
            table = self._table = table_encoder(table_id, game_id, self.rules_msg)
        return table

    def request(self, decision: Decision, request_id: int, deadline_ms: int) -> bytes:
        """The serialized ``ConnectResponse`` with the CallRequest or PlayRequest for a decision."""
        self.last_request_id = request_id
        return self.table(decision.table_id, decision.game_id).request(decision, request_id, deadline_ms)

    def event(self, event: TableEvent) -> bytes:
        """The serialized ``ConnectResponse`` with an event."""
        return self.table(event.table_id, event.game_id).event(event)
