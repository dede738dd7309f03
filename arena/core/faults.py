"""Bot faults as data: what went wrong, where, and the fallback the arena played instead.

A fault never stops a game or a tournament. The table records it with the seat, the kind, a
detail a student can read, and where in the game it happened; when a decision cannot be had, the
arena plays the documented fallback and says so in the record:

- the fallback call is the lowest legal call;
- the fallback card is the lowest legal card: the lowest rank, and among cards of that rank a
  non-trump before a trump, then clubs, diamonds, hearts, spades.

Whatever a bot sent is repeated in a detail, a record, a log line or a notice only through
:func:`shown` (an answer, at most :data:`ANSWER_TEXT_LIMIT` characters) or :func:`bounded` (its own
free text, at most :data:`FREE_TEXT_LIMIT`): a bot cannot write megabytes into the records.
"""

from __future__ import annotations

import dataclasses
import enum
import reprlib

from arena.core.cards import SUIT_MASK
from arena.errors import ArenaError

__all__ = [
    "ANSWER_TEXT_LIMIT",
    "FREE_TEXT_LIMIT",
    "Fault",
    "FaultKind",
    "PlayerFault",
    "bounded",
    "fallback_call",
    "fallback_card",
    "shown",
]

ANSWER_TEXT_LIMIT = 40
"""Characters of a bot's answer (a card's text, a call) that a detail, a record, a log line or a notice
repeats; a longer card text is not a card."""
FREE_TEXT_LIMIT = 100
"""Characters of a bot's own free text (the name or version in its Hello, an error it raised) that the
arena keeps."""


class FaultKind(enum.Enum):
    """The kinds of fault a seat can commit."""

    ILLEGAL_CALL = "illegal_call"
    """A call outside the legal range (refused, asked again)."""
    ILLEGAL_CARD = "illegal_card"
    """A card not held, not legal now, or not a card at all (refused, asked again)."""
    LATE = "late"
    """No answer within the deadline (and time bank): the fallback was played."""
    MALFORMED = "malformed"
    """A message the arena could not use: empty, or a second hello."""
    OUT_OF_TURN = "out_of_turn"
    """An answer of the wrong kind: a card for a call request, or a call for a play request."""
    UNKNOWN_REQUEST = "unknown_request"
    """An answer to a request that was never sent to this bot, or is no longer open."""
    DISCONNECT = "disconnect"
    """The bot's connection ended mid-game and it did not come back within the reconnect grace:
    fallback play until the game ends."""
    CRASH = "crash"
    """The bot raised an error (in-process, or a kit bot that told the arena so at once), or its process
    died."""
    STALLED = "stalled"
    """The bot's connection stopped taking messages, or the bot left several requests in a row
    unanswered without sending anything: the arena dropped the connection."""
    FLOOD = "flood"
    """The bot sent more stray messages (answers to requests that are not open, answers of the wrong
    kind, malformed messages) than the arena takes in a short time: the arena closed the connection."""
    ABSENT = "absent"
    """The bot was not there to play (absent past the tournament's patience, withdrawn or
    disqualified): the fallback player took its seat for the whole game."""


@dataclasses.dataclass(frozen=True, slots=True)
class Fault:
    """One fault, recorded where it happened."""

    seat: int
    kind: FaultKind
    detail: str
    """What went wrong, in words a student understands."""
    round_number: int
    trick: int | None
    """The trick (0-12) being played, or ``None`` during the calls."""
    fallback: str | None = None
    """The call or card the arena played instead, if it had to."""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "seat": self.seat, "kind": self.kind.value, "detail": self.detail,
            "round": self.round_number, "trick": self.trick, "fallback": self.fallback,
        }


class PlayerFault(ArenaError):
    """Raised by a player that could not give a decision (late, disconnected, crashed); ``gone``
    when the seat cannot play again in this game (the fallback takes it to the end)."""

    def __init__(self, kind: FaultKind, detail: str, *, gone: bool = False) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.gone = gone or kind in (FaultKind.DISCONNECT, FaultKind.STALLED, FaultKind.ABSENT)


_REPR = reprlib.Repr()
_REPR.maxlevel = 2
_REPR.maxtuple = _REPR.maxlist = _REPR.maxarray = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = 4
_REPR.maxdeque = 4
_REPR.maxlong = _REPR.maxstring = _REPR.maxother = ANSWER_TEXT_LIMIT


def shown(value: object, limit: int = ANSWER_TEXT_LIMIT) -> str:
    """What a bot sent, as a detail quotes it: its ``repr``, or, when that is longer than ``limit``
    characters between the quotes, as much of its start as fits, an ellipsis and its length:
    ``'AAAA…' (3,900,000 characters)``."""
    if isinstance(value, str):
        whole = repr(value[: limit + 1])
        if len(value) <= limit and len(whole) <= limit + 2:
            return whole
        # As many characters as fit in ``limit`` once escaped (a control character takes up to ten).
        low, high = 0, min(len(value), limit)
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if len(repr(value[:mid])) <= limit + 2 else (low, mid - 1)
        start = repr(value[:low])
        return f"{start[:-1]}…{start[-1]} ({len(value):,} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * limit:
        return f"an integer of {value.bit_length():,} bits"  # repr of a huge int is slow, or refused
    try:  # an in-process bot may answer anything: only the start of its repr is kept
        return _REPR.repr(value)[: 4 * limit]
    except Exception:
        return f"a {type(value).__name__}"


def bounded(text: str, limit: int = FREE_TEXT_LIMIT) -> str:
    """A bot's own free text (its name, its version, an error it raised) as the arena keeps it: the text
    itself when it is short and printable, else as :func:`shown` quotes it."""
    return text if len(text) <= limit and text.isprintable() else shown(text, limit)


def fallback_call(legal_calls: range) -> int:
    """The lowest legal call."""
    return legal_calls[0]


# Suit preference among cards of the lowest rank: clubs, diamonds, hearts, spades.
_SUIT_ORDER = (3, 2, 1, 0)


def fallback_card(legal: int, trump: int) -> int:
    """The index of the lowest legal card (see the module docstring for the tie-break)."""
    if not legal:
        raise ValueError("no legal card to fall back on")
    best_rank = min(index % 13 for index in range(52) if legal >> index & 1)
    suits = [s for s in _SUIT_ORDER if s != trump] + [trump]
    for suit in suits:
        index = suit * 13 + best_rank
        if legal & SUIT_MASK[suit] and legal >> index & 1:
            return index
    raise AssertionError("unreachable: some suit holds the lowest rank")
