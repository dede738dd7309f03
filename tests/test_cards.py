"""Cards, suits and hands: one text form each, round trips, display order, immutability."""

from __future__ import annotations

import copy
import pickle

import pytest

from arena.core.cards import CARDS, RANKS, SUITS, Card, Hand, Rank, Suit
from arena.errors import ArenaError, CardError

ALL_TEXTS = [rank + suit for suit in SUITS for rank in RANKS]


# --- one card ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_parse_str_round_trip_for_every_card(text: str) -> None:
    card = Card.parse(text)
    assert str(card) == text
    assert Card.parse(str(card)) is card
    assert card.index == SUITS.index(text[1]) * 13 + RANKS.index(text[0])
    assert Card(card.index) is card
    assert CARDS[card.index] is card


def test_the_encoding_is_suit_times_13_plus_rank() -> None:
    assert Card.parse("2S").index == 0
    assert Card.parse("AS").index == 12
    assert Card.parse("2H").index == 13
    assert Card.parse("TD").index == 2 * 13 + 8
    assert Card.parse("AC").index == 51
    assert [str(c) for c in CARDS] == ALL_TEXTS
    assert Card.parse("QH").suit is Suit.HEARTS
    assert Card.parse("QH").rank is Rank.QUEEN


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("qs", "QS", id="lowercase"),
        pytest.param("Qs", "QS", id="mixed-case"),
        pytest.param("th", "TH", id="lowercase-ten"),
        pytest.param("10H", "TH", id="10-for-ten"),
        pytest.param("10h", "TH", id="10-lowercase-suit"),
        pytest.param(" AS ", "AS", id="surrounding-spaces"),
        pytest.param("A♠", "AS", id="spade-symbol"),
        pytest.param("q♥", "QH", id="heart-symbol-lowercase-rank"),
        pytest.param("10♦", "TD", id="diamond-symbol-10"),
        pytest.param("2♣", "2C", id="club-symbol"),
    ],
)
def test_parse_accepts_the_other_spellings(text: str, expected: str) -> None:
    assert str(Card.parse(text)) == expected


@pytest.mark.parametrize(
    ("text", "symbol"),
    [("AS", "A♠"), ("KH", "K♥"), ("TD", "T♦"), ("2C", "2♣")],
)
def test_symbol_is_for_display(text: str, symbol: str) -> None:
    card = Card.parse(text)
    assert card.symbol() == symbol
    assert Card.parse(symbol) is card


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("   ", id="blank"),
        pytest.param("ZZ", id="no-rank-no-suit"),
        pytest.param("1S", id="ace-as-1"),
        pytest.param("AX", id="bad-suit"),
        pytest.param("A", id="rank-only"),
        pytest.param("S", id="suit-only"),
        pytest.param("SA", id="suit-then-rank"),
        pytest.param("11H", id="eleven"),
        pytest.param("ASS", id="trailing-letter"),
        pytest.param("A S", id="inner-space"),
        pytest.param("0H", id="zero"),
    ],
)
def test_bad_card_text_raises_card_error_naming_the_form(text: str) -> None:
    with pytest.raises(CardError) as info:
        Card.parse(text)
    message = str(info.value)
    assert "rank then suit" in message
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, ArenaError)


def test_cards_are_immutable_singletons() -> None:
    card = Card.parse("QS")
    with pytest.raises(AttributeError):
        card.index = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        card.colour = "black"  # type: ignore[attr-defined]
    assert card.index == Card.parse("QS").index
    assert copy.copy(card) is card
    assert copy.deepcopy(card) is card
    assert pickle.loads(pickle.dumps(card)) is card
    assert card == Card.parse("qs")
    assert hash(card) == hash(Card.parse("Q♠"))
    assert card != Card.parse("QH")
    assert len({Card.parse(t) for t in ALL_TEXTS + [t.lower() for t in ALL_TEXTS]}) == 52


def test_within_a_suit_a_higher_index_is_a_higher_card() -> None:
    for suit in SUITS:
        cards = [Card.parse(rank + suit) for rank in RANKS]
        assert cards == sorted(cards)
        assert [c.rank for c in cards] == list(Rank)


@pytest.mark.parametrize("index", [-1, 52], ids=["minus-1", "52"])
def test_card_index_out_of_range_is_a_card_error(index: int) -> None:
    with pytest.raises(CardError):
        Card(index)


# --- suits ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "suit"),
    [
        ("S", Suit.SPADES), ("s", Suit.SPADES), ("spades", Suit.SPADES), ("♠", Suit.SPADES),
        ("H", Suit.HEARTS), ("Hearts", Suit.HEARTS), ("♥", Suit.HEARTS),
        ("d", Suit.DIAMONDS), ("DIAMONDS", Suit.DIAMONDS), ("♦", Suit.DIAMONDS),
        ("C", Suit.CLUBS), ("clubs", Suit.CLUBS), ("♣", Suit.CLUBS),
    ],
)
def test_suit_parse(text: str, suit: Suit) -> None:
    assert Suit.parse(text) is suit
    assert str(suit) == suit.letter == SUITS[suit]


@pytest.mark.parametrize("text", ["X", "", "spade", "SH", "1"])
def test_suit_parse_rejects_other_text(text: str) -> None:
    with pytest.raises(CardError, match="S, H, D or C"):
        Suit.parse(text)


def test_suit_values_and_names() -> None:
    assert [int(s) for s in Suit] == [0, 1, 2, 3]
    assert [s.symbol for s in Suit] == ["♠", "♥", "♦", "♣"]
    assert [s.noun for s in Suit] == ["spades", "hearts", "diamonds", "clubs"]


# --- hands ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "display"),
    [
        pytest.param("AS TH 2C", "AS TH 2C", id="already-in-order"),
        pytest.param("2C TH AS", "AS TH 2C", id="reversed"),
        pytest.param("2S AS 5S KS", "AS KS 5S 2S", id="one-suit-high-to-low"),
        pytest.param("3D 2C KH AS 9C 4H", "AS KH 4H 3D 9C 2C", id="spades-hearts-diamonds-clubs"),
        pytest.param("as, th,2c", "AS TH 2C", id="commas-and-lowercase"),
        pytest.param("10H 10S", "TS TH", id="tens"),
        pytest.param("", "", id="empty"),
    ],
)
def test_hand_parse_and_display_order(text: str, display: str) -> None:
    hand = Hand.parse(text)
    assert str(hand) == display
    assert Hand.parse(str(hand)) == hand
    assert Hand(hand.mask) == hand
    assert [str(c) for c in hand] == display.split()
    assert [str(c) for c in hand.cards()] == display.split()
    assert len(hand) == len(display.split())


def test_hand_mask_has_one_bit_per_card_index() -> None:
    hand = Hand.parse("2S AC QH")
    assert hand.mask == (1 << 0) | (1 << 51) | (1 << (13 + 10))
    assert Card.parse("QH") in hand
    assert Card.parse("QS") not in hand
    assert "QH" not in hand  # only Card objects are members
    assert Hand.of([Card.parse("AC"), Card.parse("2S"), Card.parse("QH")]) == hand
    assert str(hand.of_suit(Suit.HEARTS)) == "QH"
    assert hand.symbols() == "2♠ Q♥ A♣"
    assert not Hand()
    assert Hand.parse("AS")


def test_full_deck_hand() -> None:
    deck = Hand((1 << 52) - 1)
    assert len(deck) == 52
    assert str(deck).split()[:3] == ["AS", "KS", "QS"]
    assert str(deck).split()[-1] == "2C"


@pytest.mark.parametrize(
    ("text", "repeated"),
    [
        pytest.param("AS AS", "AS", id="same-text"),
        pytest.param("AS as", "AS", id="case"),
        pytest.param("TH 10H", "TH", id="ten-spellings"),
        pytest.param("KD 2C K♦", "KD", id="symbol"),
    ],
)
def test_hand_parse_rejects_a_repeated_card(text: str, repeated: str) -> None:
    with pytest.raises(CardError, match=f"{repeated} appears twice"):
        Hand.parse(text)


def test_hand_parse_rejects_a_bad_word() -> None:
    with pytest.raises(CardError, match="rank then suit"):
        Hand.parse("AS KZ 2C")


@pytest.mark.parametrize("mask", [-1, 1 << 52], ids=["negative", "bit-52"])
def test_hand_mask_out_of_range(mask: int) -> None:
    with pytest.raises(CardError):
        Hand(mask)


def test_hands_are_immutable_values() -> None:
    hand = Hand.parse("AS KH")
    with pytest.raises(AttributeError):
        hand.mask = 0  # type: ignore[misc]
    assert hand == Hand.parse("KH AS")
    assert hash(hand) == hash(Hand.parse("KH AS"))
    assert hand != Hand.parse("AS")
    assert {hand, Hand.parse("KH AS")} == {hand}
    assert repr(hand) == "Hand.parse('AS KH')"


@pytest.mark.parametrize(
    "duplicate",
    [
        pytest.param(copy.copy, id="copy"),
        pytest.param(copy.deepcopy, id="deepcopy"),
        pytest.param(lambda h: pickle.loads(pickle.dumps(h)), id="pickle"),
    ],
)
def test_hands_can_be_copied_and_pickled(duplicate: object) -> None:
    hand = Hand.parse("AS KH 2C")
    assert duplicate(hand) == hand  # type: ignore[operator]


def test_a_hand_can_be_indexed_like_the_list_of_its_cards() -> None:
    # A bot's view.hand and view.legal are hands: view.legal[0] must work as a student expects.
    hand = Hand.parse("2C TH AS 7H KD")
    assert hand[0] == Card.parse("AS") and hand[-1] == Card.parse("2C")
    assert hand[1:3] == [Card.parse("TH"), Card.parse("7H")]
    assert hand[:] == hand.cards() == list(hand)
    with pytest.raises(IndexError):
        Hand()[0]


def test_the_kit_exports_the_card_types_a_view_holds() -> None:
    from arena import botkit

    assert botkit.Rank.ACE > botkit.Rank.KING and botkit.Card is Card and botkit.Hand is Hand
