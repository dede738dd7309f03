"""Seeded deals, the seating draw, and deal files.

A deal is a pure function of (seed, game, round, attempt); ``docs/dealing.md`` gives the
algorithm step by step so another language can reproduce it byte for byte:

1. key = UTF-8 of ``callbreak-arena/deal/v1/{seed}/{game}/{round}/{attempt}`` (decimal numbers);
2. a stream of bytes: ``SHA-256(key || counter)`` for counter = 0, 1, 2, ... as 4-byte big-endian,
   the digests concatenated; read as 32-bit big-endian unsigned integers;
3. Fisher-Yates on the deck ``[0, 1, ..., 51]`` (card indices of :mod:`arena.core.cards`): for i from
   51 down to 1, draw x from the stream until ``x < 2**32 - 2**32 % (i + 1)``, then swap
   positions i and ``x % (i + 1)``;
4. dealt one at a time: deck position k goes to hand ``k % 4``, where hand 0 is the seat after
   the dealer (the first to call and lead) and hand 3 the dealer, who receives the last card.

Deal files hold one deal per line: ``game.round.attempt: hand0 | hand1 | hand2 | hand3``, each
hand its 13 cards in the order dealt, so the line gives back the deck order exactly.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import hmac
import operator
import struct
from collections.abc import Callable, Iterable

from arena.core.cards import SUIT_MASK, Card, Hand, card_text
from arena.core.turns import four
from arena.errors import CardError, DealFileError

__all__ = [
    "SEAT_KEY_BYTES",
    "Deal",
    "DealFile",
    "DealSource",
    "draw_seating",
    "seat_seed",
    "seeded_deal",
    "seeded_deals",
    "shuffled_deck",
]

_TWO32 = 1 << 32
_ALL_CARDS = frozenset(range(52))


@dataclasses.dataclass(frozen=True)
class Deal:
    """The 52 cards of one deal in the order dealt; position k goes to hand ``k % 4``."""

    deck: tuple[int, ...]
    """Card indices in dealing order."""
    masks: tuple[int, int, int, int] = dataclasses.field(init=False, repr=False, compare=False)
    """The four hands as masks, hand 0 first."""

    def __post_init__(self) -> None:
        deck = self.deck
        if len(deck) != 52 or set(deck) != _ALL_CARDS:
            raise CardError("a deal must hold each of the 52 cards exactly once")
        bit = _BIT.__getitem__
        masks = (
            sum(map(bit, deck[0::4])), sum(map(bit, deck[1::4])),
            sum(map(bit, deck[2::4])), sum(map(bit, deck[3::4])),
        )
        object.__setattr__(self, "masks", masks)

    @property
    def hands(self) -> tuple[Hand, Hand, Hand, Hand]:
        """The four hands, hand 0 being the seat after the dealer and hand 3 the dealer."""
        m = self.masks
        return Hand(m[0]), Hand(m[1]), Hand(m[2]), Hand(m[3])

    @property
    def last_card(self) -> Card:
        """The last card dealt (to the dealer); the DY trump in ``last_card`` mode."""
        return Card(self.deck[51])

    def has_no_trump_hand(self, trump: int) -> bool:
        """True when some hand holds no card of the trump suit."""
        return any(not mask & SUIT_MASK[trump] for mask in self.masks)

    def to_line(self, game: int, round_number: int, attempt: int) -> str:
        """The deal-file line for this deal."""
        hands = (" ".join(card_text(self.deck[k]) for k in range(h, 52, 4)) for h in range(4))
        return f"{game}.{round_number}.{attempt}: " + " | ".join(hands)


DealSource = Callable[[int, int], Deal]
"""Gives the deal for (round number, redeal attempt) of one game."""


_BLOCKS = 7
_LIMIT = tuple(_TWO32 - _TWO32 % n if n else 0 for n in range(53))
_BIT = tuple(1 << i for i in range(52))


def _draws(key: bytes, blocks: int) -> tuple[int, ...]:
    """The first ``8 * blocks`` 32-bit draws of the SHA-256 counter stream of ``key``."""
    base = hashlib.sha256(key)
    buf = bytearray()
    for counter in range(blocks):
        block = base.copy()
        block.update(counter.to_bytes(4, "big"))
        buf += block.digest()
    return struct.unpack(f">{8 * blocks}I", buf)


_STEPS = tuple((i, i + 1, _LIMIT[i + 1]) for i in range(51, 0, -1))
_POSITIONS, _SIZES, _LIMITS = (tuple(column) for column in zip(*_STEPS, strict=True))


def shuffled_deck(key: str) -> list[int]:
    """The 52 card indices shuffled by Fisher-Yates from the SHA-256 counter stream of ``key``."""
    raw = key.encode("utf-8")
    blocks = _BLOCKS
    draws = _draws(raw, blocks)
    deck = list(range(52))
    # Almost every shuffle rejects no draw (each step rejects with a chance below 52 in 2**32): the
    # steps then take draws 0-50 in turn, which one comparison of all 51 at once confirms. The loop
    # after it is the general case.
    if not any(map(operator.ge, draws, _LIMITS)):  # map stops at the shorter: the first 51 draws
        for i, j in zip(_POSITIONS, map(operator.mod, draws, _SIZES), strict=True):
            deck[i], deck[j] = deck[j], deck[i]
        return deck
    k = 0
    for i, n, limit in _STEPS:
        while True:
            if k == len(draws):  # rejections used up the prefetched draws (rare): extend the stream
                blocks *= 2
                draws = _draws(raw, blocks)
            x = draws[k]
            k += 1
            if x < limit:  # rejection keeps every position equally likely
                break
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _check_numbers(seed: int, game: int, round_number: int, attempt: int) -> None:
    if seed < 0 or game < 1 or round_number < 1 or attempt < 0:
        raise ValueError(
            f"deal numbers out of range: seed {seed} (>= 0), game {game} (>= 1), "
            f"round {round_number} (>= 1), attempt {attempt} (>= 0)"
        )


@functools.lru_cache(maxsize=1024)  # the rotations of a deal set replay the same deals
def seeded_deal(seed: int, game: int, round_number: int, attempt: int = 0) -> Deal:
    """The deal for (seed, game, round, attempt); see the module docstring for the algorithm."""
    _check_numbers(seed, game, round_number, attempt)
    return Deal(tuple(shuffled_deck(f"callbreak-arena/deal/v1/{seed}/{game}/{round_number}/{attempt}")))


def seeded_deals(seed: int, game: int) -> DealSource:
    """The deal source of one game (one deal set) of a seeded tournament."""

    def source(round_number: int, attempt: int) -> Deal:
        return seeded_deal(seed, game, round_number, attempt)

    return source


SEAT_KEY_BYTES = 32
"""The length of a seat-seed key: 32 random bytes (``secrets.token_bytes``), written as 64 hex digits."""


def seat_seed(key: bytes, deal_set: int, round_number: int, seat: int, hand: int) -> int:
    """The seed the arena hands ``seat`` in round ``round_number`` of deal set ``deal_set`` (the game number),
    the seat holding ``hand`` (the mask of the 13 cards dealt to it): the first 8 bytes, big-endian, of
    HMAC-SHA256 keyed by ``key`` of the UTF-8 message
    ``callbreak-arena/seat-seed/v2/{deal_set}/{round_number}/{seat}/{hand}`` (decimal numbers), or 1 where
    those bytes are all zero (0 on the wire means "no seed given").

    It is made of what the seat is told and nothing else, so nobody learns another hand from it, even
    with the key; without the key it is a number nobody can predict. Every rotation of a deal set hands
    the same seed to whoever sits in that seat with those cards: two versions of a stochastic bot that
    draw from it make the same random draws in the same place (common random numbers).
    """
    if not key:
        raise ValueError("a seat-seed key must not be empty")
    if not 0 <= seat <= 3:
        raise ValueError(f"seats are numbered 0 to 3, not {seat}")
    message = b"callbreak-arena/seat-seed/v2/%d/%d/%d/%d" % (deal_set, round_number, seat, hand)
    return int.from_bytes(hmac.digest(key, message, "sha256")[:8], "big") or 1


def draw_seating(seed: int, game: int) -> tuple[tuple[int, int, int, int], int]:
    """The ``master`` profile's draw: which player sits in each seat, and the first dealer.

    Players 0-3 each draw a card (player p takes deck position p of the shuffle keyed
    ``callbreak-arena/seating/v1/{seed}/{game}``). The highest card (by rank, then suit in the
    order S H D C as the tie-break of distinct cards) sits in seat 0, the next in seat 1, and so on;
    the highest card deals first, so the seat holding it is seat 0 and seat 1 calls first.
    Returns ``(seating, first_dealer)`` where ``seating[seat]`` is the player in that seat.
    """
    _check_numbers(seed, game, 1, 0)
    deck = shuffled_deck(f"callbreak-arena/seating/v1/{seed}/{game}")

    def strength(player: int) -> tuple[int, int]:
        card = deck[player]
        return card % 13, -(card // 13)

    order = sorted(range(4), key=strength, reverse=True)
    return four(order), 0


class DealFile:
    """Deals read from a deal file, keyed by (game, round, attempt)."""

    def __init__(self, deals: dict[tuple[int, int, int], Deal]) -> None:
        self.deals = deals

    @classmethod
    def parse(cls, text: str, name: str = "deal file") -> DealFile:
        """Reads deal-file text; a malformed line raises :class:`DealFileError` naming it."""
        deals: dict[tuple[int, int, int], Deal] = {}
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            where = f"{name}, line {number}"
            key_text, sep, rest = line.partition(":")
            parts = key_text.strip().split(".")
            if not sep or len(parts) != 3 or not all(p.isdigit() for p in parts):
                raise DealFileError(
                    f"{where}: a deal line starts with game.round.attempt and a colon, like "
                    f"'1.1.0: AS KD ... | ... | ... | ...'; got {raw.strip()[:40]!r}"
                )
            key = (int(parts[0]), int(parts[1]), int(parts[2]))
            if key[0] < 1 or key[1] < 1:
                raise DealFileError(f"{where}: game and round numbers start at 1")
            if key in deals:
                raise DealFileError(f"{where}: deal {key_text.strip()} appears twice")
            hands = rest.split("|")
            if len(hands) != 4:
                raise DealFileError(f"{where}: a deal needs four hands separated by '|', found {len(hands)}")
            deck: list[int] = [0] * 52
            seen: set[int] = set()
            for h, hand_text in enumerate(hands):
                words = hand_text.split()
                if len(words) != 13:
                    raise DealFileError(f"{where}: hand {h} has {len(words)} cards; every hand needs 13")
                for i, word in enumerate(words):
                    try:
                        card = Card.parse(word).index
                    except CardError as err:
                        raise DealFileError(f"{where}: {err}") from None
                    if card in seen:
                        raise DealFileError(f"{where}: card {card_text(card)} appears twice")
                    seen.add(card)
                    deck[4 * i + h] = card
            deals[key] = Deal(tuple(deck))
        if not deals:
            raise DealFileError(f"{name}: no deals found")
        return cls(deals)

    @staticmethod
    def format(lines: Iterable[tuple[int, int, int, Deal]], header: str = "") -> str:
        """Deal-file text for (game, round, attempt, deal) entries."""
        out = ["# callbreak-arena deals v1: game.round.attempt: hand0 | hand1 | hand2 | hand3"]
        if header:
            out.append(f"# {header}")
        out.extend(deal.to_line(g, r, a) for g, r, a, deal in lines)
        return "\n".join(out) + "\n"

    def source(self, game: int) -> DealSource:
        """The deal source for one game; a deal missing from the file raises :class:`DealFileError`."""

        def source(round_number: int, attempt: int) -> Deal:
            try:
                return self.deals[(game, round_number, attempt)]
            except KeyError:
                raise DealFileError(
                    f"the deal file has no deal {game}.{round_number}.{attempt} "
                    f"(game {game}, round {round_number}, redeal attempt {attempt})"
                ) from None

        return source

    @property
    def games(self) -> list[int]:
        """The game numbers present, in order."""
        return sorted({g for g, _, _ in self.deals})
