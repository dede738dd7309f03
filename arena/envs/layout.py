"""The action indices and the observation vector a learning agent sees, written once for every environment.

Actions (:data:`ACTIONS` = 66, the same under every profile):

- ``0``-``51``: play the card of that index, in the card order of :mod:`arena.core.cards`
  (``suit * 13 + rank``, suits ``S H D C``, ranks ``2`` to ``A``: ``0`` is ``2S``, ``12`` is ``AS``,
  ``13`` is ``2H``, ``51`` is ``AC``);
- ``52 + v`` for ``v`` in 0-13: call ``v`` tricks (:data:`CALL_BASE`). No profile allows a call of 0
  and most allow less than 1-13; the mask says which calls are legal, so one policy serves every profile.

The observation of a seat is a float32 vector of :data:`OBSERVATION_SIZE` = 547 values, everything
that seat may know and nothing more. Blocks "by seat" hold four parts in the order of play starting
with the observing seat: part 0 is the seat itself, part 1 the seat after it, and so on.

=========  =====  ====================================================================================
offset     size   what
=========  =====  ====================================================================================
0          52     the seat's own cards still in hand (1 per card held)
52         4×52   by seat: every card that seat has played this round, the current trick's included
260        4×52   by seat: the card that seat has put on the current trick
468        4      by seat: 1 for the seat that leads the current trick (or will lead it)
472        4×14   by seat: its call, one-hot over 0-13, where 0 means "not called yet"
528        4      by seat: tricks won this round ÷ 13
532        4      by seat: game total before this round, in score units ÷ the largest round score
                  the rules allow (:func:`score_scale`); so between ``-rounds`` and ``rounds``
536        1      the round number ÷ the rounds in a game
537        2      the phase: ``[1, 0]`` while any call is to be made, ``[0, 1]`` once all four are in
539        4      the trump suit, one-hot in the order S H D C
543        4      by seat: 1 for the dealer
=========  =====  ====================================================================================

The action mask is an int8 vector of :data:`ACTIONS` values, 1 for each legal action of the seat to
act and all 0 for any other seat. Two encoders make the vector and agree value for value
(``tests/test_envs.py`` checks them at every decision of seeded games): :func:`observation_of` from a
seat's view (what a bot is handed, in-process or over the network), and :class:`Tracker`, which the
environments keep up to date card by card, because building the vector afresh at every step would
cost several times the step itself.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.core.cards import card_text
from arena.core.game import Game, Round
from arena.core.rules import Rules
from arena.core.scoring import score_table
from arena.core.turns import places_after, seat_after
from arena.core.views import Phase, View

__all__ = [
    "ACTIONS",
    "CALLS",
    "CALL_BASE",
    "CARD_ACTIONS",
    "DEALER",
    "HAND",
    "LEADER",
    "OBSERVATION_SIZE",
    "PHASE",
    "PLAYED",
    "ROUND",
    "TOTALS",
    "TRICK",
    "TRUMP",
    "WON",
    "Observation",
    "Tracker",
    "action_text",
    "call_mask",
    "card_mask",
    "no_mask",
    "observation_bounds",
    "observation_of",
    "score_scale",
]

CARD_ACTIONS = 52
"""Actions 0-51 play the card of that index."""
CALL_BASE = 52
"""Action ``CALL_BASE + v`` calls ``v`` tricks."""
ACTIONS = CALL_BASE + 14
"""The number of actions: 52 cards and the calls 0-13."""

HAND = 0
PLAYED = 52
TRICK = 260
LEADER = 468
CALLS = 472
WON = 528
TOTALS = 532
ROUND = 536
PHASE = 537
TRUMP = 539
DEALER = 543
OBSERVATION_SIZE = 547
"""The length of the observation vector (the offsets above are its blocks; see the module docstring)."""

Observation = dict[str, npt.NDArray[Any]]
"""What an agent observes: ``{"observation": float32 vector, "action_mask": int8 vector}``."""

_SEATS_AT = tuple(OBSERVATION_SIZE * seat for seat in range(4))
"""Where each seat's observation begins in a :class:`Tracker`'s memory."""


def _parts(start: int, width: int) -> tuple[tuple[int, int, int, int], ...]:
    """For each absolute seat, where its part of the by-seat block at ``start`` (parts ``width`` wide) begins in
    each of the four observations of a :class:`Tracker`'s memory."""
    def part(seat: int, absolute: int) -> int:
        return _SEATS_AT[seat] + start + width * places_after(seat, absolute)

    return tuple((part(0, absolute), part(1, absolute), part(2, absolute), part(3, absolute)) for absolute in range(4))


_CALL_PARTS = _parts(CALLS, 14)
_LEADER_PARTS, _WON_PARTS, _TOTAL_PARTS, _DEALER_PARTS = (_parts(start, 1) for start in (LEADER, WON, TOTALS, DEALER))
_PLAYED_AT = tuple(
    tuple((_SEATS_AT[seat] + HAND + card, *(at + card for at in played), *(at + card for at in trick))
          for card in range(52))
    for seat, played, trick in zip(range(4), _parts(PLAYED, 52), _parts(TRICK, 52), strict=True)
)
"""``_PLAYED_AT[seat][card]``: where ``seat`` playing ``card`` writes in a :class:`Tracker`'s memory: the card in its
own hand, then in each observation's played block (four places) and trick block (four places)."""
_TRICK_SPANS = tuple(slice(at + TRICK, at + LEADER + 4) for at in _SEATS_AT)
"""Each observation's trick and leader blocks (side by side), which a finished trick clears."""
_TRICK_CLEARED = memoryview(bytes(4 * (LEADER + 4 - TRICK))).cast("f")
_BLANK = memoryview(bytes(4 * 4 * OBSERVATION_SIZE)).cast("f")
"""A :class:`Tracker`'s memory before a deal: a new deal sets every block from zero."""
_MASK_AT = 4 * OBSERVATION_SIZE
"""Where the action mask begins in the memory of a seat to act's observation and mask (:meth:`Tracker.to_play`)."""


def _suit_bytes(bits: int) -> bytes:
    return bytes(bits >> rank & 1 for rank in range(13))


_SUIT_BYTES = tuple(_suit_bytes(bits) for bits in range(8192))
"""The 13 mask bytes of each pattern of one suit's cards: four look-ups make a card mask."""
_NO_CALLS = bytes(ACTIONS - CARD_ACTIONS)
_FLOATS = np.frombuffer(b"".join(_SUIT_BYTES), np.int8).astype(np.float32).tobytes()
_SUIT_FLOATS = tuple(_FLOATS[52 * bits:52 * bits + 52] for bits in range(8192))
"""The 13 float32 values (as bytes) of a hand's cards of one suit, for each pattern of them: a deal writes four."""


_JOIN = bytearray().join
"""Joins byte strings into a new bytearray, the writable memory of new arrays, in one allocation."""
_ARRAY = np.ndarray
_INT8, _FLOAT32 = np.dtype(np.int8), np.dtype(np.float32)
"""The types of a mask and of a vector, made once: numpy makes an array over memory faster from a type than
from its name."""


def card_mask(legal: int) -> npt.NDArray[np.int8]:
    """The action mask of a seat whose legal cards are the mask ``legal`` (a new array)."""
    s = _SUIT_BYTES
    return _ARRAY(ACTIONS, _INT8, _JOIN((s[legal & 0x1FFF], s[legal >> 13 & 0x1FFF], s[legal >> 26 & 0x1FFF],
                                         s[legal >> 39], _NO_CALLS)))


def call_mask(calls: range) -> npt.NDArray[np.int8]:
    """The action mask of a seat to call, allowed the calls ``calls`` (a new array)."""
    mask = np.zeros(ACTIONS, np.int8)
    mask[CALL_BASE + calls.start:CALL_BASE + calls.stop] = 1
    return mask


def no_mask() -> npt.NDArray[np.int8]:
    """The action mask of a seat that is not to act (a new array)."""
    return np.zeros(ACTIONS, np.int8)


def action_text(action: int) -> str:
    """An action in words: ``AS`` or ``call 4``."""
    if 0 <= action < CARD_ACTIONS:
        return card_text(action)
    if CALL_BASE <= action < ACTIONS:
        return f"call {action - CALL_BASE}"
    return f"action {action} (there is none: actions run from 0 to {ACTIONS - 1})"


@functools.lru_cache(maxsize=64)
def score_scale(rules: Rules) -> int:
    """The largest score, in score units (tenths, or DY points), that one round can give or take under ``rules``."""
    table = score_table(rules)
    return max(abs(score) for call in rules.call_range for score in table[call])


def observation_bounds(rules: Rules) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The lowest and highest value of each place of the observation vector under ``rules``."""
    low = np.zeros(OBSERVATION_SIZE, np.float32)
    high = np.ones(OBSERVATION_SIZE, np.float32)
    low[TOTALS:TOTALS + 4] = -rules.rounds
    high[TOTALS:TOTALS + 4] = rules.rounds
    return low, high


def observation_of(view: View) -> Observation:
    """What the seat of ``view`` observes: the vector and the action mask of the module docstring.

    Works from any view (a :class:`~arena.core.views.SeatView` in-process, a
    :class:`~arena.kit.view.RemoteView` over the network): it reads only the attributes of
    :class:`~arena.core.views.View`.
    """
    vector = np.zeros(OBSERVATION_SIZE, np.float32)
    me = view.seat
    rules = view.rules
    for card in view.hand:
        vector[HAND + card.index] = 1.0
    for trick in view.tricks:
        for k, card in enumerate(trick.cards):
            vector[PLAYED + 52 * places_after(me, seat_after(trick.leader, k)) + card.index] = 1.0
    for k, card in enumerate(view.trick):
        part = places_after(me, seat_after(view.leader, k))
        vector[PLAYED + 52 * part + card.index] = 1.0
        vector[TRICK + 52 * part + card.index] = 1.0
    vector[LEADER + places_after(me, view.leader)] = 1.0
    scale = score_scale(rules)
    for seat in range(4):
        part = places_after(me, seat)
        call = view.calls[seat]
        vector[CALLS + 14 * part + (call or 0)] = 1.0
        vector[WON + part] = view.tricks_won[seat] / 13
        vector[TOTALS + part] = view.totals[seat] / scale
    vector[ROUND] = view.round_number / rules.rounds
    calling = None in view.calls
    vector[PHASE + (0 if calling else 1)] = 1.0
    vector[TRUMP + int(view.trump)] = 1.0
    vector[DEALER + places_after(me, view.dealer)] = 1.0
    if not view.to_act:
        mask = no_mask()
    elif calling:
        mask = call_mask(view.legal_calls)
    else:
        mask = card_mask(view.legal_mask)
    return {"observation": vector, "action_mask": mask}


class Tracker:
    """The four seats' observations of one game, kept up to date as calls and cards are made.

    One float32 memory holds the four observations one after the other; a seat's observation is a copy
    of its part (a new array each time; for the seat to act, :meth:`to_play` and :meth:`to_call` copy it once
    with the mask after it, under two arrays), and a call or a card sets the values it changes in each of the
    four. The caller tells the tracker of each call (:meth:`called`) and card (:meth:`played`) after
    applying it to the game, and of each new deal (:meth:`dealt`): what a trick or a round changed it reads
    from the game, never works out. ``values`` restores a copy: the bytes of another tracker's memory.
    """

    __slots__ = ("_calling", "_cells", "_memory", "_rows", "_scale", "_seats", "_tails", "_whole", "rules")

    def __init__(self, rules: Rules, values: bytes = b"") -> None:
        self.rules = rules
        self._memory = bytearray(values or _BLANK)
        """The memory, seat 0's observation first."""
        self._cells = memoryview(self._memory).cast("f")
        """The memory as single float32 values, which a card or a call sets: a memoryview sets one faster than an
        ``array`` does, and several times faster than numpy."""
        self._seats = np.frombuffer(self._memory, np.float32).reshape(4, OBSERVATION_SIZE)
        """The same memory as numpy sees it, a row per seat: blocks are set through it."""
        whole = self._whole = memoryview(self._memory)
        """The memory as bytes, which a deal sets in one copy."""
        self._rows = tuple(whole[4 * at:4 * (at + OBSERVATION_SIZE)] for at in _SEATS_AT)
        """Each seat's observation as bytes, made once: the memory of a new array is a copy of one."""
        self._calling = call_mask(rules.call_range).tobytes()
        """The mask bytes of a seat to call."""
        self._scale = score_scale(rules)
        self._tails: dict[tuple[int, int, int, int], tuple[bytes, ...]] = {}
        """By deal (leader, dealer, trump, round number): :meth:`_dealt_tails`."""

    def __reduce__(self) -> tuple[type[Tracker], tuple[Rules, bytes]]:
        # A copy or a pickle holds the memory's bytes and makes the views of a new one.
        return Tracker, (self.rules, bytes(self._memory))

    @property
    def table(self) -> npt.NDArray[np.float32]:
        """The whole table (a new array): the four hands (52 values each, by seat), then the observation blocks
        with absolute seats, which are seat 0's."""
        seats = self._seats
        return np.concatenate((seats[:, HAND:HAND + 52].ravel(), seats[0, HAND + 52:]))

    def observation(self, seat: int) -> npt.NDArray[np.float32]:
        """``seat``'s observation vector now (a new array)."""
        return _ARRAY(OBSERVATION_SIZE, _FLOAT32, bytearray(self._rows[seat]))

    def to_play(self, seat: int, legal: int) -> Observation:
        """What ``seat`` observes when it is to play one of the cards ``legal`` (a mask): its vector and its
        action mask, two new arrays over one new memory (one copy for both: this runs at every card)."""
        s = _SUIT_BYTES
        memory = _JOIN((self._rows[seat], s[legal & 0x1FFF], s[legal >> 13 & 0x1FFF], s[legal >> 26 & 0x1FFF],
                        s[legal >> 39], _NO_CALLS))
        return {"observation": _ARRAY(OBSERVATION_SIZE, _FLOAT32, memory),
                "action_mask": _ARRAY(ACTIONS, _INT8, memory, _MASK_AT)}

    def to_call(self, seat: int) -> Observation:
        """What ``seat`` observes when it is to call: :meth:`to_play`'s arrays, with the calls the rules allow."""
        memory = _JOIN((self._rows[seat], self._calling))
        return {"observation": _ARRAY(OBSERVATION_SIZE, _FLOAT32, memory),
                "action_mask": _ARRAY(ACTIONS, _INT8, memory, _MASK_AT)}

    def dealt(self, game: Game) -> None:
        """The game's current round has just been dealt (a new round, or a redeal)."""
        rnd = game.round
        moment = (rnd.leader, rnd.dealer, rnd.trump, rnd.round_number)
        tails = self._tails.get(moment)
        if tails is None:
            tails = self._tails[moment] = self._dealt_tails(*moment)
        # Each observation is its hand (four suits of float32 values) and the rest of its row as a deal leaves it,
        # joined in one copy; the totals, the one part that differs from game to game, are set after.
        f, (a, b, c, d) = _SUIT_FLOATS, rnd.hands
        self._whole[:] = _JOIN((
            f[a & 0x1FFF], f[a >> 13 & 0x1FFF], f[a >> 26 & 0x1FFF], f[a >> 39], tails[0],
            f[b & 0x1FFF], f[b >> 13 & 0x1FFF], f[b >> 26 & 0x1FFF], f[b >> 39], tails[1],
            f[c & 0x1FFF], f[c >> 13 & 0x1FFF], f[c >> 26 & 0x1FFF], f[c >> 39], tails[2],
            f[d & 0x1FFF], f[d >> 13 & 0x1FFF], f[d >> 26 & 0x1FFF], f[d >> 39], tails[3]))
        self.finished(game)  # the totals so far

    def _dealt_tails(self, leader: int, dealer: int, trump: int, round_number: int) -> tuple[bytes, ...]:
        """What follows the hand in each seat's observation just after a deal of ``round_number`` by ``dealer``,
        ``leader`` to lead and ``trump`` trumps, the totals at 0 (made once per such deal, and kept)."""
        cells = memoryview(bytearray(_BLANK)).cast("f")
        round_value, trump_at = round_number / self.rules.rounds, TRUMP + trump
        for seat, at in enumerate(_SEATS_AT):
            cells[at + ROUND] = round_value
            cells[at + PHASE] = cells[at + trump_at] = 1.0
            for part in _CALL_PARTS[seat]:
                cells[part] = 1.0
        for part in _LEADER_PARTS[leader]:
            cells[part] = 1.0
        for part in _DEALER_PARTS[dealer]:
            cells[part] = 1.0
        memory = cells.cast("B")
        return tuple(bytes(memory[4 * (at + PLAYED):4 * (at + OBSERVATION_SIZE)]) for at in _SEATS_AT)

    def called(self, seat: int, value: int, rnd: Round) -> None:
        """``seat`` has called ``value`` in ``rnd`` (the round it was called in, not thrown in)."""
        cells = self._cells
        for at in _CALL_PARTS[seat]:
            cells[at] = 0.0
            cells[at + value] = 1.0
        if rnd.phase is Phase.PLAYING:
            for at in _SEATS_AT:
                cells[at + PHASE] = 0.0
                cells[at + PHASE + 1] = 1.0

    def played(self, seat: int, card: int, rnd: Round) -> None:
        """``seat`` has played ``card`` in ``rnd``."""
        cells = self._cells
        held, a, b, c, d, e, f, g, h = _PLAYED_AT[seat][card]
        cells[held] = 0.0
        cells[a] = cells[b] = cells[c] = cells[d] = 1.0
        if rnd.led >= 0:  # the trick goes on (the round forgets the suit led once a trick is over)
            cells[e] = cells[f] = cells[g] = cells[h] = 1.0
            return
        # The trick is over: the game has counted it; the winner leads the next one. A memoryview sets a
        # slice from another of its type with one copy, several times faster than numpy fills it.
        cleared = _TRICK_CLEARED
        s0, s1, s2, s3 = _TRICK_SPANS
        cells[s0] = cleared
        cells[s1] = cleared
        cells[s2] = cleared
        cells[s3] = cleared
        winner = rnd.winners[-1]
        a, b, c, d = _LEADER_PARTS[winner]
        cells[a] = cells[b] = cells[c] = cells[d] = 1.0
        a, b, c, d = _WON_PARTS[winner]
        cells[a] = cells[b] = cells[c] = cells[d] = rnd.tricks_won[winner] / 13

    def finished(self, game: Game) -> None:
        """The game is over: the totals now count its last round, as a seat's view of the end does."""
        cells, scale, totals = self._cells, self._scale, game.totals
        for seat, (a, b, c, d) in enumerate(_TOTAL_PARTS):
            cells[a] = cells[b] = cells[c] = cells[d] = totals[seat] / scale
