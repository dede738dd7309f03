"""Whose turn: seats 0-3 in playing order, who deals each round and who acts first, and four values by seat.

Seat s+1 plays after seat s, and seat 0 after seat 3. The seat after the dealer calls first and
leads the first trick; the deal passes to the next seat each round. Nothing else in the package
writes these down.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["NEXT_SEAT", "call_order", "dealer_of", "four", "places_after", "play_order", "seat_after"]

NEXT_SEAT: tuple[int, int, int, int] = (1, 2, 3, 0)
"""The seat that plays after each seat (a table rather than a function: the game reads it at every card)."""


def call_order(dealer: int) -> tuple[int, int, int, int]:
    """The seats in calling (and first-trick) order: the seat after the dealer first, the dealer last."""
    return play_order(dealer + 1)


def seat_after(seat: int, places: int) -> int:
    """The seat ``places`` places after ``seat`` in playing order (a negative ``places`` counts back).

    Card k of a trick was played by ``seat_after(leader, k)``.
    """
    return (seat + places) & 3


def places_after(first: int, seat: int) -> int:
    """How many places (0-3) after ``first`` the seat ``seat`` plays: the inverse of :func:`seat_after`."""
    return (seat - first) & 3


def play_order(leader: int) -> tuple[int, int, int, int]:
    """The seats in the order they play a trick that ``leader`` leads."""
    # Arithmetic rather than NEXT_SEAT: a seat number read from a damaged record still gives four seats.
    return leader & 3, (leader + 1) & 3, (leader + 2) & 3, (leader + 3) & 3


def dealer_of(first_dealer: int, round_number: int) -> int:
    """The dealer of round ``round_number`` (from 1) of a game whose first round ``first_dealer`` dealt."""
    return (first_dealer + round_number - 1) & 3


def four(values: Sequence[int]) -> tuple[int, int, int, int]:
    """The first four values, one per seat, as a tuple a type checker knows holds four."""
    return values[0], values[1], values[2], values[3]
