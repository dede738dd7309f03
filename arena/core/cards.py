"""Cards, suits and hands, with one text form each.

A card is written rank then suit: ``AS KH TD 2C`` (``T`` is ten; suits ``S H D C``).
Parsing also accepts lower case, ``10`` for ten and the suit symbols; ``str()`` always gives
the letter form, and :meth:`Card.symbol` gives ``A♠`` for display to people.

Integer encoding (the only place it is written down): card index ``= suit * 13 + rank``, with
suits ``S=0 H=1 D=2 C=3`` and ranks ``2=0 3=1 ... K=11 A=12``. A hand is a 52-bit mask with bit
``index`` set for each card held; :class:`Hand` hides the mask behind a set-like value.
Within a suit a higher index is a higher card, so "cards of suit s above card c" is one mask.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from typing import overload

from arena.errors import CardError

__all__ = [
    "ABOVE",
    "CARDS",
    "FULL_DECK",
    "RANKS",
    "SUITS",
    "SUIT_MASK",
    "SUIT_OF",
    "Card",
    "Hand",
    "Rank",
    "Suit",
    "card_text",
]

RANKS = "23456789TJQKA"
"""Rank letters from lowest to highest; a rank's value is its position here."""

SUITS = "SHDC"
"""Suit letters in suit-value order (spades 0, hearts 1, diamonds 2, clubs 3)."""

_SYMBOLS = "♠♥♦♣"
_NAMES = ("spades", "hearts", "diamonds", "clubs")
_SYMBOL_TO_LETTER = {sym: letter for sym, letter in zip(_SYMBOLS, SUITS, strict=True)}


class Suit(enum.IntEnum):
    """The four suits; the value is the suit's number in the card encoding."""

    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @classmethod
    def parse(cls, text: str) -> Suit:
        """Reads ``S``, ``spades``, ``♠`` (any case) as a suit."""
        t = text.strip()
        t = _SYMBOL_TO_LETTER.get(t, t).upper()
        if len(t) == 1 and t in SUITS:
            return cls(SUITS.index(t))
        for suit in cls:
            if t == suit.name:
                return suit
        raise CardError(f"{text!r} is not a suit: write S, H, D or C (spades, hearts, diamonds, clubs)")

    @property
    def letter(self) -> str:
        """The one-letter form, ``S H D C``."""
        return SUITS[self]

    @property
    def symbol(self) -> str:
        """The symbol for display, ``♠ ♥ ♦ ♣``."""
        return _SYMBOLS[self]

    @property
    def noun(self) -> str:
        """The plural English name, as in "you have no hearts"."""
        return _NAMES[self]

    def __str__(self) -> str:
        return self.letter


class Rank(enum.IntEnum):
    """The thirteen ranks, ace high; the value is the rank's number in the card encoding."""

    TWO = 0
    THREE = 1
    FOUR = 2
    FIVE = 3
    SIX = 4
    SEVEN = 5
    EIGHT = 6
    NINE = 7
    TEN = 8
    JACK = 9
    QUEEN = 10
    KING = 11
    ACE = 12

    @property
    def letter(self) -> str:
        """The one-character form, ``2``-``9``, ``T J Q K A``."""
        return RANKS[self]

    def __str__(self) -> str:
        return self.letter


SUIT_MASK: tuple[int, ...] = tuple(0x1FFF << (13 * s) for s in range(4))
"""Bitmask of all thirteen cards of each suit, indexed by suit number."""

SUIT_OF: tuple[int, ...] = tuple(i // 13 for i in range(52))
"""Suit number of each card index."""

ABOVE: tuple[int, ...] = tuple(SUIT_MASK[i // 13] & ~((1 << (i + 1)) - 1) for i in range(52))
"""For each card index, the mask of the higher cards of the same suit."""

FULL_DECK = (1 << 52) - 1
"""The mask of all 52 cards."""


def _parse_index(text: str) -> int:
    t = text.strip()
    if not t:
        raise CardError("an empty string is not a card: write rank then suit, like AS, TH or 2C")
    suit_char = _SYMBOL_TO_LETTER.get(t[-1], t[-1]).upper()
    rank_text = t[:-1].upper()
    if rank_text == "10":
        rank_text = "T"
    if len(rank_text) != 1 or rank_text not in RANKS or suit_char not in SUITS:
        raise CardError(
            f"{text!r} is not a card: write rank then suit, like AS, TH or 2C "
            "(ranks A K Q J T 9 8 7 6 5 4 3 2, suits S H D C)"
        )
    return SUITS.index(suit_char) * 13 + RANKS.index(rank_text)


class Card:
    """One playing card; there are exactly 52 instances, so ``is`` and ``==`` agree."""

    __slots__ = ("index",)

    index: int
    """The card's number, ``suit * 13 + rank`` (0-51)."""

    def __new__(cls, index: int) -> Card:
        if not 0 <= index < 52:
            raise CardError(f"{index} is not a card index: card indices run from 0 to 51")
        return _CARDS[index]

    @classmethod
    def _make(cls, index: int) -> Card:
        card = object.__new__(cls)
        object.__setattr__(card, "index", index)
        return card

    @classmethod
    def parse(cls, text: str) -> Card:
        """Reads ``QS``, ``qs``, ``10H`` or ``Q♠``; raises :class:`CardError` otherwise."""
        return _CARDS[_parse_index(text)]

    @property
    def suit(self) -> Suit:
        """The card's suit."""
        return Suit(self.index // 13)

    @property
    def rank(self) -> Rank:
        """The card's rank."""
        return Rank(self.index % 13)

    @property
    def bit(self) -> int:
        """The card's bit in a hand mask."""
        return 1 << self.index

    def symbol(self) -> str:
        """The display form for people, ``A♠``."""
        return RANKS[self.index % 13] + _SYMBOLS[self.index // 13]

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("cards are immutable")

    def __reduce__(self) -> tuple[type[Card], tuple[int]]:
        return (Card, (self.index,))

    def __str__(self) -> str:
        return _TEXT[self.index]

    def __repr__(self) -> str:
        return f"Card.parse({_TEXT[self.index]!r})"

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return self.index

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index


_TEXT: tuple[str, ...] = tuple(RANKS[i % 13] + SUITS[i // 13] for i in range(52))
_CARDS: tuple[Card, ...] = tuple(Card._make(i) for i in range(52))
CARDS = _CARDS
"""The 52 cards, indexed by card index."""


class _SuitTable(dict[int, tuple[tuple[int, ...], str]]):
    """The cards of one suit held in a 13-bit pattern, high to low: their indices, and their text
    followed by a space (empty for no card). Each pattern is worked out once, when first met (there
    are 8,192 per suit)."""

    def __init__(self, suit: int) -> None:
        super().__init__()
        self.base = 13 * suit

    def __missing__(self, bits: int) -> tuple[tuple[int, ...], str]:
        indices = tuple(self.base + rank for rank in range(12, -1, -1) if bits >> rank & 1)
        entry = self[bits] = (indices, "".join(_TEXT[i] + " " for i in indices))
        return entry


_SUIT_TABLES = tuple(_SuitTable(suit) for suit in range(4))
_RECENT_TEXTS: dict[int, str] = {}
"""The text of the hands written lately, by mask."""


def _display_order(mask: int) -> tuple[int, ...]:
    # Spades first, then hearts, diamonds, clubs; high to low within a suit.
    s, h, d, c = _SUIT_TABLES
    return s[mask & 0x1FFF][0] + h[mask >> 13 & 0x1FFF][0] + d[mask >> 26 & 0x1FFF][0] + c[mask >> 39][0]


class Hand:
    """An immutable set of cards, backed by a 52-bit mask; ``str()`` is ``AS KS 7H 2C``."""

    __slots__ = ("mask",)

    mask: int
    """The bitmask of the cards held (see the module docstring for the encoding)."""

    def __init__(self, mask: int = 0) -> None:
        if mask < 0 or mask > FULL_DECK:
            raise CardError(f"{mask} is not a hand mask (must be between 0 and 2**52 - 1)")
        object.__setattr__(self, "mask", mask)

    @classmethod
    def of_mask(cls, mask: int) -> Hand:
        """The hand of a mask known to be valid (no range check: for the engine's own masks)."""
        hand = object.__new__(cls)
        object.__setattr__(hand, "mask", mask)
        return hand

    @classmethod
    def parse(cls, text: str) -> Hand:
        """Reads cards separated by spaces or commas; a repeated card is an error."""
        mask = 0
        for word in text.replace(",", " ").split():
            index = _parse_index(word)
            if mask >> index & 1:
                raise CardError(f"{_TEXT[index]} appears twice in {text.strip()!r}")
            mask |= 1 << index
        return cls(mask)

    @classmethod
    def of(cls, cards: Iterable[Card]) -> Hand:
        """The hand holding these cards."""
        mask = 0
        for card in cards:
            mask |= 1 << card.index
        return cls(mask)

    def cards(self) -> list[Card]:
        """The cards in display order: spades, hearts, diamonds, clubs, high to low."""
        return [_CARDS[i] for i in _display_order(self.mask)]

    def of_suit(self, suit: Suit) -> Hand:
        """The cards of one suit."""
        return Hand(self.mask & SUIT_MASK[suit])

    def symbols(self) -> str:
        """The display form for people, ``A♠ K♠ 7♥``."""
        return " ".join(card.symbol() for card in self.cards())

    def __iter__(self) -> Iterator[Card]:
        return iter(self.cards())

    @overload
    def __getitem__(self, index: int) -> Card: ...

    @overload
    def __getitem__(self, index: slice) -> list[Card]: ...

    def __getitem__(self, index: int | slice) -> Card | list[Card]:
        """The cards in display order, as a list would give them: ``hand[0]`` is the highest spade held
        (or the highest card of the first suit held), ``hand[-1]`` the lowest club."""
        return self.cards()[index]

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __contains__(self, card: object) -> bool:
        return isinstance(card, Card) and bool(self.mask >> card.index & 1)

    def __bool__(self) -> bool:
        return self.mask != 0

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("hands are immutable")

    def __reduce__(self) -> tuple[type[Hand], tuple[int]]:
        return (Hand, (self.mask,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hand) and other.mask == self.mask

    def __hash__(self) -> int:
        return hash(("Hand", self.mask))

    def __str__(self) -> str:
        # Records write four hands a round, the same four in each rotation of a duplicate deal set: the
        # hands written lately are remembered, and a new one is a table lookup per suit, not a step per card.
        mask = self.mask
        text = _RECENT_TEXTS.get(mask)
        if text is None:
            s, h, d, c = _SUIT_TABLES
            text = (s[mask & 0x1FFF][1] + h[mask >> 13 & 0x1FFF][1] + d[mask >> 26 & 0x1FFF][1] + c[mask >> 39][1])[:-1]
            if len(_RECENT_TEXTS) >= 4096:
                _RECENT_TEXTS.clear()
            _RECENT_TEXTS[mask] = text
        return text

    def __repr__(self) -> str:
        return f"Hand.parse({str(self)!r})"


def card_text(index: int) -> str:
    """The text form of a card index (used on hot paths that avoid Card objects)."""
    return _TEXT[index]
