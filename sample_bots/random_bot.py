"""The random bot: a uniformly random legal call and card.

Its choices come from a generator seeded by its own seed and the position: the game (deal set),
the round, the seat and the hand it was dealt. It therefore plays the same way on the same hand,
in-process or over the network, alone or at many tables at once, which keeps duplicate
tournaments reproducible. It also offers the in-process fast path (``fast_call``/``fast_card``),
which makes exactly the same choices.

    CALLBREAK_TOKEN=T python sample_bots/random_bot.py --arena 127.0.0.1:50051 [--seed 7]

(the token comes from the environment variable ``CALLBREAK_TOKEN``; ``--token T`` also works, but a
command line is visible to every user of the machine).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from arena.botkit import Bot, run
from arena.core.cards import CARDS, Card
from arena.core.views import View

__all__ = ["RandomBot"]


def _kth_bit(mask: int, k: int) -> int:
    """The index of the k-th lowest set bit of ``mask``."""
    while k:
        mask &= mask - 1
        k -= 1
    return (mask & -mask).bit_length() - 1


class RandomBot(Bot):
    """Calls and plays uniformly at random among the legal choices."""

    name = "random"
    version = "2"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._streams: list[random.Random | None] = [None, None, None, None]

    def _stream(self, seat: int, game: int, round_number: int, dealt: int) -> random.Random:
        # One stream per seat and round, keyed by the hand dealt (a redeal gives a fresh stream).
        key = ((((self.seed << 32) + game) << 8) + round_number << 2) + seat << 52 | dealt
        return random.Random(key)

    def call(self, view: View) -> int:
        """A random legal call."""
        stream = self._stream(view.seat, view.game_number, view.round_number, view.hand_mask)
        calls = view.legal_calls
        return calls[int(stream.random() * len(calls))]

    def play(self, view: View) -> Card:
        """A random legal card: the same draw the fast path makes at this point of the stream."""
        seat = view.seat
        dealt = view.hand_mask
        played_by_me = 0
        for trick in view.tricks:
            mine = trick.cards[(seat - trick.leader) % 4]
            dealt |= mine.bit
            played_by_me += 1
        if (seat - view.leader) % 4 < len(view.trick):  # cannot happen: it is this seat's turn
            raise AssertionError("asked to play a card already played")
        stream = self._stream(seat, view.game_number, view.round_number, dealt)
        for _ in range(played_by_me + 1):  # the call's draw, then one per card already played
            stream.random()
        legal = view.legal_mask
        return CARDS[_kth_bit(legal, int(stream.random() * legal.bit_count()))]

    # -- the in-process fast path ---------------------------------------------------------

    def fast_call(self, seat: int, game: int, round_number: int, hand: int, calls: Sequence[int]) -> int:
        """:meth:`call` for the fast path: ``hand`` is the dealt mask, ``calls`` the legal calls."""
        stream = self._streams[seat] = self._stream(seat, game, round_number, hand)
        return calls[int(stream.random() * len(calls))]

    def fast_card(self, seat: int, legal: int) -> int:
        """:meth:`play` for the fast path: the index of a random set bit of ``legal``."""
        k = int(self._streams[seat].random() * legal.bit_count())  # type: ignore[union-attr]
        while k:
            legal &= legal - 1
            k -= 1
        return (legal & -legal).bit_length() - 1


if __name__ == "__main__":
    raise SystemExit(run(RandomBot))
