"""The house bot: a uniformly random legal call and card, which fills a field to a multiple of four.

Its choices are a pure function of its own seed and the position: the game (deal set), the round,
the seat and the hand it was dealt. That position names sixteen 32-bit draws, the BLAKE2b-512 digest
of ``{seed}/{game}/{round}/{seat}/{dealt mask}`` read as big-endian numbers: the call takes the first
draw, the k-th card the seat plays in the round the (k+1)-th. A draw d picks choice ``d * n >> 32`` of
the n legal ones, calls from the lowest, cards by index (uniform up to n in 2**32). So the bot plays
the same way on the same hand, in-process or over the network, alone or at many tables at once,
which keeps duplicate tournaments reproducible, and it has no generator to seed or replay: a
decision reads its draw straight from the digest of its position. It also offers the in-process fast
path (``fast_call``/``fast_card``, :mod:`arena.players.fast`), which makes exactly the same choices.

It lives in the package because the arena needs it (house bots, ``check-bot --opponents random``, the
``game`` command): the sample random bot is this class with the bot kit, to play over the network.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator, Sequence

from arena.core.cards import CARDS, Card
from arena.core.turns import places_after
from arena.core.views import View

__all__ = ["HouseBot"]

_DRAWS = struct.Struct(">16I").unpack
"""The 64 bytes of a digest as sixteen 32-bit draws; a seat makes at most 14 decisions a deal."""


def _kth_bit(mask: int, k: int) -> int:
    """The index of the k-th lowest set bit of ``mask``."""
    while k:
        mask &= mask - 1
        k -= 1
    return (mask & -mask).bit_length() - 1


class HouseBot:
    """Calls and plays uniformly at random among the legal choices (an in-process bot: no bot kit)."""

    name = "random"
    version = "3"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._last: tuple[tuple[int, int, int, int], tuple[int, ...]] = ((-1, -1, -1, -1), ())
        """The position of the last decision through a view, and its draws."""
        self._cards: list[Iterator[int]] = [iter(()), iter(()), iter(()), iter(())]
        """The fast path: the draws of each seat's next cards in the round it is playing."""

    def _draws(self, seat: int, game: int, round_number: int, dealt: int) -> tuple[int, ...]:
        """The draws of one seat's deal (a redeal deals a new hand: new draws)."""
        position = b"%d/%d/%d/%d/%d" % (self.seed, game, round_number, seat, dealt)
        return _DRAWS(hashlib.blake2b(position, digest_size=64).digest())

    def _view_draws(self, view: View, dealt: int) -> tuple[int, ...]:
        key = (view.seat, view.game_number, view.round_number, dealt)
        last_key, draws = self._last
        if key != last_key:
            draws = self._draws(*key)
            self._last = (key, draws)
        return draws

    def call(self, view: View) -> int:
        """A random legal call."""
        calls = view.legal_calls
        return calls[self._view_draws(view, view.hand_mask)[0] * len(calls) >> 32]

    def play(self, view: View) -> Card:
        """A random legal card: the same draw the fast path makes at this point of the round."""
        seat = view.seat
        dealt = view.hand_mask
        played_by_me = 0
        for trick in view.tricks:
            dealt |= trick.cards[places_after(trick.leader, seat)].bit
            played_by_me += 1
        if places_after(view.leader, seat) < len(view.trick):  # cannot happen: it is this seat's turn
            raise AssertionError("asked to play a card already played")
        legal = view.legal_mask
        draw = self._view_draws(view, dealt)[1 + played_by_me]
        return CARDS[_kth_bit(legal, draw * legal.bit_count() >> 32)]

    # -- the in-process fast path ---------------------------------------------------------

    def fast_call(self, seat: int, game: int, round_number: int, hand: int, calls: Sequence[int]) -> int:
        """:meth:`call` for the fast path: ``hand`` is the dealt mask, ``calls`` the legal calls."""
        draws = iter(self._draws(seat, game, round_number, hand))
        self._cards[seat] = draws
        return calls[next(draws) * len(calls) >> 32]

    def fast_card(self, seat: int, legal: int) -> int:
        """:meth:`play` for the fast path: the index of a random set bit of ``legal``."""
        k = next(self._cards[seat]) * legal.bit_count() >> 32
        while k:
            legal &= legal - 1
            k -= 1
        return (legal & -legal).bit_length() - 1
