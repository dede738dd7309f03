"""Seeded deals (checked against an independent implementation), deal files and the seating draw."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

import arena.core.dealing as dealing
from arena.core.cards import SUIT_MASK, Card, Hand
from arena.core.dealing import Deal, DealFile, draw_seating, seeded_deal, seeded_deals
from arena.errors import CardError, DealFileError
from arena.event.setup.config import read_deal_file

TEST_VECTOR = (
    "1.1.0: KC TD AD 7H TS QH 3S JC 3C 9C 8H 3D QD | 5D 4S 7D 9D 9S 7C AH 3H 6D TC 4C KH AC | "
    "5S 4D 5H JD 2C 8D 6H 6S 9H 2S 6C JH AS | KD QC 4H 2D 8S 7S QS 5C 8C KS TH 2H JS"
)


# --- an independent implementation of docs/dealing.md ---------------------------------------------


def reference_stream(key: str) -> Iterator[int]:
    """32-bit big-endian draws of SHA-256(key || counter), counter as 4 bytes big-endian."""
    for counter in itertools.count():
        block = hashlib.sha256(key.encode("utf-8") + counter.to_bytes(4, "big")).digest()
        for k in range(0, 32, 4):
            yield int.from_bytes(block[k:k + 4], "big")


def reference_shuffle(draws: Iterator[int]) -> list[int]:
    deck = list(range(52))
    for i in range(51, 0, -1):
        n = i + 1
        x = next(draws)
        while x >= 2**32 - 2**32 % n:
            x = next(draws)
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def reference_deck(key: str) -> list[int]:
    return reference_shuffle(reference_stream(key))


def reference_deal(seed: int, game: int, round_number: int, attempt: int) -> list[list[int]]:
    deck = reference_deck(f"callbreak-arena/deal/v1/{seed}/{game}/{round_number}/{attempt}")
    hands: list[list[int]] = [[], [], [], []]
    for k, card in enumerate(deck):
        hands[k % 4].append(card)
    return hands


REFERENCE_KEYS = list(
    itertools.product((0, 1, 7, 12345, 2**40), (1, 2, 9), (1, 2, 5, 10), (0, 1, 3, 20))
)[:200]


def test_seeded_deal_matches_the_reference_implementation_for_200_keys() -> None:
    assert len(set(REFERENCE_KEYS)) == 200
    for seed, game, round_number, attempt in REFERENCE_KEYS:
        deal = seeded_deal(seed, game, round_number, attempt)
        hands = reference_deal(seed, game, round_number, attempt)
        assert [list(deal.deck[h::4]) for h in range(4)] == hands, (seed, game, round_number, attempt)
        assert deal.masks == tuple(sum(1 << c for c in hand) for hand in hands)


def _crafted_stream(rejections: int) -> list[int]:
    # 2**32 - 1 is rejected for every n that is not a power of two (n = 52 first).
    return [2**32 - 1] * rejections + list(itertools.islice(reference_stream("crafted"), 200))


def _patch_draws(monkeypatch: pytest.MonkeyPatch, stream: list[int]) -> None:
    def draws(key: bytes, blocks: int) -> tuple[int, ...]:
        return tuple(stream[: 8 * blocks])

    monkeypatch.setattr(dealing, "_draws", draws)


@pytest.mark.parametrize("rejections", [1, 3, 5])
def test_rejected_draws_are_skipped(monkeypatch: pytest.MonkeyPatch, rejections: int) -> None:
    stream = _crafted_stream(rejections)
    _patch_draws(monkeypatch, stream)
    deck = dealing.shuffled_deck("any key")
    assert deck == reference_shuffle(iter(stream))
    # A rejected draw is simply skipped: the deck is the one the stream without it gives.
    assert deck == reference_shuffle(iter(stream[rejections:]))


def test_a_shuffle_needing_more_than_the_prefetched_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = _crafted_stream(6)
    _patch_draws(monkeypatch, stream)
    assert dealing.shuffled_deck("any key") == reference_shuffle(iter(stream))


def test_test_vector() -> None:
    assert seeded_deal(1, 1, 1).to_line(1, 1, 0) == TEST_VECTOR
    assert seeded_deal(1, 1, 1, 0) == seeded_deal(1, 1, 1)


@pytest.mark.parametrize(
    ("numbers", "line"),
    [
        ((1, 1, 1, 0), TEST_VECTOR),
        ((0, 1, 1, 0), "1.1.0: QH 5D 7S 3S 5C AD 3C JS 9S 7C TD 5S 4C | TS KC TC 9C 4H 5H 6S 7H 8S 4D JC 8H 6D | "
                       "QC AH 7D 3D 8D 3H 6H TH 2C 6C AS 9H 9D | QS AC 4S 2S JH KS KH KD JD 2D 8C 2H QD"),
        ((42, 3, 2, 1), "3.2.1: AH QD 5C 9C QH 7C 8H 3H TS JH 7H KD 3D | 9D AC 4H 3C 9S 5S JD JC KH 7S 8C QS 4C | "
                        "6C TD 2D 6D 8S TH 2C 7D KS TC 5D 4S AD | KC 8D 4D 5H 2S 3S 6S QC 6H 2H 9H JS AS"),
    ],
    ids=["seed-1", "seed-0", "seed-42-game-3-round-2-attempt-1"],
)
def test_documented_vectors(numbers: tuple[int, int, int, int], line: str) -> None:
    seed, game, round_number, attempt = numbers
    assert seeded_deal(seed, game, round_number, attempt).to_line(game, round_number, attempt) == line
    hands = reference_deal(seed, game, round_number, attempt)
    assert line.split(": ", 1)[1] == " | ".join(" ".join(str(Card(c)) for c in hand) for hand in hands)


# --- determinism and shape -----------------------------------------------------------------------


def test_same_numbers_same_deck() -> None:
    for numbers in [(1, 1, 1, 0), (99, 4, 3, 2), (0, 1, 5, 0)]:
        first = seeded_deal(*numbers)
        assert seeded_deal(*numbers).deck == first.deck
        assert seeded_deal(*numbers) == first


@pytest.mark.parametrize(
    "other",
    [(2, 1, 1, 0), (1, 2, 1, 0), (1, 1, 2, 0), (1, 1, 1, 1)],
    ids=["seed", "game", "round", "attempt"],
)
def test_any_number_changes_the_deck(other: tuple[int, int, int, int]) -> None:
    assert seeded_deal(*other).deck != seeded_deal(1, 1, 1, 0).deck


def test_many_deals_are_all_different() -> None:
    decks = {seeded_deal(5, game, rnd, attempt).deck for game in (1, 2) for rnd in range(1, 11) for attempt in (0, 1)}
    assert len(decks) == 40


def test_seeded_deals_is_the_source_of_one_game() -> None:
    source = seeded_deals(8, 3)
    assert source(2, 1) == seeded_deal(8, 3, 2, 1)
    assert source(5, 0) == seeded_deal(8, 3, 5, 0)


@pytest.mark.parametrize(
    "numbers",
    [(-1, 1, 1, 0), (1, 0, 1, 0), (1, 1, 0, 0), (1, 1, 1, -1)],
    ids=["negative-seed", "game-0", "round-0", "negative-attempt"],
)
def test_deal_numbers_out_of_range(numbers: tuple[int, int, int, int]) -> None:
    with pytest.raises(ValueError, match="out of range"):
        seeded_deal(*numbers)


def test_each_deal_is_52_distinct_cards_in_four_hands_of_13() -> None:
    for rnd in range(1, 51):
        deal = seeded_deal(3, 1, rnd)
        assert sorted(deal.deck) == list(range(52))
        assert [len(h) for h in deal.hands] == [13, 13, 13, 13]
        assert deal.masks[0] | deal.masks[1] | deal.masks[2] | deal.masks[3] == (1 << 52) - 1
        for k in range(4):
            assert deal.hands[k] == Hand.of(Card(c) for c in deal.deck[k::4])
            assert deal.hands[k].mask == deal.masks[k]
        assert deal.last_card == Card(deal.deck[51])
        assert deal.last_card in deal.hands[3]  # the dealer receives the last card


def test_every_card_lands_in_every_hand_about_a_quarter_of_the_time() -> None:
    counts = [[0] * 4 for _ in range(52)]
    n = 2000
    for rnd in range(1, n + 1):
        deck = seeded_deal(2024, 1, rnd).deck
        for position, card in enumerate(deck):
            counts[card][position % 4] += 1
    # Expected 500, standard deviation about 19.4: a bound of +-100 is over five deviations.
    for card in range(52):
        assert sum(counts[card]) == n
        for hand in range(4):
            assert 400 <= counts[card][hand] <= 600, (Card(card), hand, counts[card])


def test_every_deck_position_sees_every_card() -> None:
    seen = [set() for _ in range(52)]  # type: list[set[int]]
    for rnd in range(1, 1001):
        for position, card in enumerate(seeded_deal(77, 1, rnd).deck):
            seen[position].add(card)
    assert all(len(s) == 52 for s in seen)


def test_deal_refuses_a_bad_deck() -> None:
    with pytest.raises(CardError):
        Deal(tuple(range(51)))
    with pytest.raises(CardError):
        Deal((0, *range(51)))


def test_has_no_trump_hand() -> None:
    # Hand 0 gets all the spades: deck positions 0, 4, 8, ... hold spades 0..12.
    deck = [0] * 52
    others = iter(range(13, 52))
    for k in range(52):
        deck[k] = k // 4 if k % 4 == 0 else next(others)
    deal = Deal(tuple(deck))
    assert deal.masks[0] == SUIT_MASK[0]
    assert deal.has_no_trump_hand(0)
    assert not seeded_deal(1, 1, 1).has_no_trump_hand(0)


# --- deal files ----------------------------------------------------------------------------------


def _entries() -> list[tuple[int, int, int, Deal]]:
    return [(g, r, a, seeded_deal(11, g, r, a)) for g in (1, 2) for r in range(1, 6) for a in (0, 1)]


def test_deal_file_format_parse_round_trip() -> None:
    entries = _entries()
    text = DealFile.format(entries, header="seed 11")
    assert text.startswith("# callbreak-arena deals v1")
    assert "# seed 11\n" in text
    assert text.endswith("\n")
    parsed = DealFile.parse(text)
    assert parsed.games == [1, 2]
    for g, r, a, deal in entries:
        assert parsed.deals[(g, r, a)].deck == deal.deck
        assert parsed.source(g)(r, a) == deal
    assert DealFile.format([(g, r, a, parsed.deals[(g, r, a)]) for g, r, a, _ in entries], header="seed 11") == text


def test_deal_file_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "deals.txt"
    path.write_text(DealFile.format(_entries()), encoding="utf-8")
    source = read_deal_file(path).source(2)
    for r in range(1, 6):
        assert source(r, 0) == seeded_deal(11, 2, r, 0)
        assert source(r, 0).last_card == seeded_deal(11, 2, r, 0).last_card


def test_deal_file_missing_on_disk(tmp_path: Path) -> None:
    with pytest.raises(DealFileError, match="cannot read deal file"):
        read_deal_file(tmp_path / "nowhere.txt")


def test_deal_file_comments_and_blank_lines() -> None:
    text = f"# header\n\n   \n{TEST_VECTOR}  # a trailing comment\n\n"
    parsed = DealFile.parse(text)
    assert list(parsed.deals) == [(1, 1, 0)]
    assert parsed.deals[(1, 1, 0)] == seeded_deal(1, 1, 1)


def test_deal_file_accepts_other_card_spellings() -> None:
    line = TEST_VECTOR.replace("TD", "10D").replace("KC", "kc").replace("AS", "A♠")
    assert DealFile.parse(line).deals[(1, 1, 0)] == seeded_deal(1, 1, 1)


def test_source_raises_for_a_missing_deal() -> None:
    source = DealFile.parse(TEST_VECTOR).source(1)
    assert source(1, 0) == seeded_deal(1, 1, 1)
    with pytest.raises(DealFileError, match=r"no deal 1\.1\.1"):
        source(1, 1)
    with pytest.raises(DealFileError, match=r"no deal 1\.2\.0"):
        source(2, 0)
    with pytest.raises(DealFileError, match=r"no deal 2\.1\.0"):
        DealFile.parse(TEST_VECTOR).source(2)(1, 0)


GOOD = TEST_VECTOR
HANDS = TEST_VECTOR.split(": ", 1)[1].split(" | ")


def _with_hand(h: int, text: str) -> str:
    hands = list(HANDS)
    hands[h] = text
    return "1.1.0: " + " | ".join(hands)


BAD_LINES = {
    "wrong-card": (GOOD.replace("7H", "ZZ"), "'ZZ' is not a card"),
    "duplicate-card": (GOOD.replace("7H", "KC"), "KC appears twice"),
    "hand-of-12": (_with_hand(1, HANDS[1].rsplit(" ", 1)[0]), "hand 1 has 12 cards"),
    "hand-of-14": (_with_hand(2, HANDS[2] + " 7H"), "hand 2 has 14 cards"),
    "three-hands": ("1.1.0: " + " | ".join(HANDS[:3]), "found 3"),
    "five-hands": (GOOD + " | AS", "found 5"),
    "missing-prefix": (GOOD.split(": ", 1)[1], "game.round.attempt"),
    "prefix-without-colon": (GOOD.replace("1.1.0:", "1.1.0"), "game.round.attempt"),
    "two-part-id": (GOOD.replace("1.1.0:", "1.1:"), "game.round.attempt"),
    "non-numeric-id": (GOOD.replace("1.1.0:", "1.x.0:"), "game.round.attempt"),
    "round-0": (GOOD.replace("1.1.0:", "1.0.0:"), "start at 1"),
}


@pytest.mark.parametrize(("line", "reason"), list(BAD_LINES.values()), ids=list(BAD_LINES))
@pytest.mark.parametrize("number", [1, 4])
def test_malformed_deal_line_names_line_and_reason(line: str, reason: str, number: int) -> None:
    before = ["# deals", seeded_deal(1, 1, 2).to_line(1, 2, 0), ""][: number - 1]
    text = "\n".join([*before, line, seeded_deal(1, 1, 3).to_line(1, 3, 0)]) + "\n"
    with pytest.raises(DealFileError) as info:
        DealFile.parse(text, name="deals.txt")
    message = str(info.value)
    assert f"line {number}:" in message
    assert f"line {number}" in message and "deals.txt" in message
    assert reason in message


def test_duplicate_deal_id_names_the_second_line() -> None:
    text = "\n".join(["# deals", TEST_VECTOR, seeded_deal(1, 1, 2).to_line(1, 2, 0), TEST_VECTOR])
    with pytest.raises(DealFileError) as info:
        DealFile.parse(text)
    assert "line 4" in str(info.value)
    assert "1.1.0 appears twice" in str(info.value)


def test_malformed_file_on_disk_names_path_and_line(tmp_path: Path) -> None:
    path = tmp_path / "deals.txt"
    path.write_text(f"# deals\n{TEST_VECTOR}\n1.1.1: AS\n", encoding="utf-8")
    with pytest.raises(DealFileError) as info:
        read_deal_file(path)
    assert str(path) in str(info.value)
    assert "line 3" in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("\n\n", id="blank-lines"),
        pytest.param("# only a comment\n", id="comment"),
    ],
)
def test_a_deal_file_without_deals_is_refused(text: str) -> None:
    # There is no line to name here: the message says the file holds no deal.
    with pytest.raises(DealFileError, match="no deals found"):
        DealFile.parse(text, name="deals.txt")


# --- the seating draw ----------------------------------------------------------------------------


def test_draw_seating_is_deterministic_and_a_permutation() -> None:
    seen = set()
    for seed in range(300):
        seating, first_dealer = draw_seating(seed, 1)
        assert draw_seating(seed, 1) == (seating, first_dealer)
        assert sorted(seating) == [0, 1, 2, 3]
        assert 0 <= first_dealer <= 3
        seen.add(seating)
    assert len(seen) == 24  # every seating happens


def test_draw_seating_follows_the_documented_draw() -> None:
    for seed, game in itertools.product(range(60), (1, 2)):
        deck = reference_deck(f"callbreak-arena/seating/v1/{seed}/{game}")
        # Highest card first: rank, then suit S > H > D > C.
        order = sorted(range(4), key=lambda p: (deck[p] % 13, -(deck[p] // 13)), reverse=True)
        assert draw_seating(seed, game) == (tuple(order), 0)


def test_draw_seating_changes_with_the_game() -> None:
    assert len({draw_seating(5, game) for game in range(1, 40)}) > 1
