"""Each rule written once: the game, its fast path and the rules tool agree on legal cards, their
reasons and trick winners over random deals, and the rules core holds one copy of each rule."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.core.cards import ABOVE, FULL_DECK, SUIT_MASK, SUIT_OF, Suit
from arena.core.dealing import seeded_deal, seeded_deals
from arena.core.game import Game, Phase, Round
from arena.core.rules import (
    LINES,
    PROFILES,
    TAKES,
    LowerTrump,
    Reason,
    Rules,
    explain,
    legal_cards,
    legal_from,
    legal_mask,
    legal_table,
    legal_with_reason,
    trick_winner,
)
from arena.core.turns import NEXT_SEAT, call_order, dealer_of, four
from arena.errors import IllegalCall

ARENA = Path(__file__).resolve().parent.parent / "arena"

RULE_SETS = [
    *PROFILES.values(),
    Rules.profile("nepali", lower_trump="trump"),
    Rules.profile("nepali", must_trump=False),
    Rules.profile("nepali", trump_mode="last_card"),
    Rules.profile("pagat", first_lead_no_trump=True, lower_trump="trump"),
    Rules.profile("bhoos", must_beat=False, trump="H"),
]


def pick(rng: random.Random, mask: int) -> int:
    k = rng.randrange(mask.bit_count())
    for _ in range(k):
        mask &= mask - 1
    return (mask & -mask).bit_length() - 1


def tool_says(rnd: Round, seat: int) -> tuple[int, Reason]:
    """What the rules tool (``callbreak-arena rules``) answers for the seat to play in ``rnd``."""
    return legal_with_reason(rnd.rules, rnd.hands[seat], rnd.trick, rnd.trump, not rnd.winners)


def check_tricks(rnd: Round) -> None:
    """Every finished trick was won by the seat the rules tool names."""
    for t, trick in enumerate(rnd.tricks):
        cards = [card.index for card in trick.cards]
        assert trick.winner == (trick.leader + trick_winner(cards, rnd.trump)) & 3, t
        assert rnd.winners[t] == trick.winner


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(st.sampled_from(RULE_SETS), st.integers(0, 2**32), st.integers(0, 3), st.sampled_from(list(Suit)))
def test_step_by_step_the_game_and_the_rules_tool_agree(rules: Rules, seed: int, dealer: int, trump: Suit) -> None:
    rnd = Round(rules, list(seeded_deal(seed, 1, 1).masks), dealer, int(trump))
    rng = random.Random(seed)
    while rnd.phase is Phase.CALLING:
        rnd.call(rng.choice(rules.call_range))
    while rnd.phase is Phase.PLAYING:
        seat = rnd.current_seat
        legal, reason = tool_says(rnd, seat)
        assert rnd.legal_mask() == legal
        assert rnd.legal_reason() == explain(reason, rnd.hands[seat], rnd.trick, rnd.trump, legal)
        rnd.play_index(pick(rng, legal))
    check_tricks(rnd)


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(st.sampled_from(RULE_SETS), st.integers(0, 2**32), st.integers(0, 3), st.sampled_from(list(Suit)))
def test_the_fast_path_and_the_rules_tool_agree(rules: Rules, seed: int, dealer: int, trump: Suit) -> None:
    rnd = Round(rules, list(seeded_deal(seed, 1, 1).masks), dealer, int(trump))
    rng = random.Random(seed)
    offered = 0

    def choose_card(seat: int, legal: int) -> int:
        nonlocal offered
        offered += 1
        # The fast path keeps the hands and the cards played up to date as it goes.
        assert legal == tool_says(rnd, seat)[0]
        return pick(rng, legal)

    rnd.playout(lambda seat, r: rng.choice(rules.call_range), choose_card)
    assert offered == 52
    check_tricks(rnd)


@settings(max_examples=40, deadline=None, database=None, derandomize=True)
@given(st.sampled_from(RULE_SETS), st.integers(0, 2**32), st.integers(0, 3))
def test_whole_games_by_playout_and_by_steps_agree(rules: Rules, seed: int, first_dealer: int) -> None:
    def by_steps() -> Game:
        game = Game(rules, seeded_deals(seed, 1), first_dealer=first_dealer)
        rng = random.Random(seed)
        while not game.over:
            if game.phase is Phase.CALLING:
                game.call(rng.choice(game.legal_calls()))
            else:
                game.play_index(pick(rng, game.legal_mask()))
        return game

    fast = Game(rules, seeded_deals(seed, 1), first_dealer=first_dealer)
    rng = random.Random(seed)
    fast.playout(lambda seat, r: rng.choice(rules.call_range), lambda seat, legal: pick(rng, legal))
    slow = by_steps()
    assert fast.results == slow.results
    assert fast.totals == slow.totals
    assert fast.redeals == slow.redeals


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.sampled_from(RULE_SETS), st.integers(0, FULL_DECK), st.integers(-1, 51), st.integers(0, 51),
       st.sampled_from(list(Suit)), st.booleans())
def test_the_table_gives_a_legal_set_inside_the_hand(
    rules: Rules, hand: int, led_card: int, win: int, trump: Suit, first_trick: bool
) -> None:
    led = SUIT_OF[led_card] if led_card >= 0 else -1
    legal, _reason = legal_mask(rules, hand, led, win if led >= 0 else -1, int(trump), first_trick)
    assert legal & ~hand == 0
    assert bool(legal) == bool(hand), "a seat holding cards always has a legal one"


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.sampled_from(RULE_SETS), st.integers(0, FULL_DECK), st.integers(-1, 51), st.integers(0, 51),
       st.sampled_from(list(Suit)), st.booleans())
def test_the_legal_cards_a_round_asks_for_are_those_of_the_rule_with_its_reason(
    rules: Rules, hand: int, led_card: int, win: int, trump: Suit, first_trick: bool
) -> None:
    led = SUIT_OF[led_card] if led_card >= 0 else -1
    table = legal_table(rules, int(trump))
    win = win if led >= 0 else -1
    assert legal_cards(table, hand, led, win, first_trick) == legal_from(table, hand, led, win, first_trick)[0]


def test_takes_is_the_trick_winner_rule() -> None:
    for trump in range(4):
        for win in range(52):
            for card in range(52):
                same_suit_higher = SUIT_OF[card] == SUIT_OF[win] and card > win
                trumps_it = SUIT_OF[card] == trump != SUIT_OF[win]
                assert TAKES[trump][win][card] == (same_suit_higher or trumps_it), (trump, win, card)


def test_the_legal_table_is_made_once_per_rules_and_trump() -> None:
    rules = Rules.profile("strict")
    assert legal_table(rules, 0) is legal_table(rules, 0)
    assert legal_table(rules, 0) is not legal_table(rules, 1)
    other = Rules.profile("strict", must_beat=False)
    assert legal_table(other, 0) != legal_table(rules, 0)
    table = legal_table(rules, 2)
    assert [len(row) for row in table.lines] == [52, 52, 52, 52, 2]
    for masks_row, reasons_row in zip(table.lines, table.reasons, strict=True):
        for masks, reasons in zip(masks_row, reasons_row, strict=True):
            assert len(masks) == 2 * (LINES - 1) and len(reasons) == LINES
            assert set(masks[1::2]) <= {0, 1}, "the second of each pair says whether the whole hand is legal"
    for some in RULE_SETS:  # what the fast path counts on when it reads a lead's lines
        for trump in range(4):
            leads = legal_table(some, trump).lines[4]
            assert all(lines[2:] == (0,) * 6 for lines in leads), "a lead has one line before 'any card'"


def test_an_empty_hand_has_no_legal_card() -> None:
    rules = Rules.profile("nepali")
    assert legal_mask(rules, 0, -1, -1, 0, True) == (0, Reason.LEAD)
    assert legal_mask(rules, 0, 1, 20, 0, False) == (0, Reason.NO_TRUMP)


def test_the_lower_trump_switch_decides_only_a_void_seat_holding_lower_trumps() -> None:
    any_card, trump_only = Rules.profile("nepali"), Rules.profile("nepali", lower_trump=LowerTrump.TRUMP)
    hand = (1 << 0) | (1 << 20)  # 2S and 9H
    win = 12  # AS has trumped a club lead
    assert legal_mask(any_card, hand, 3, win, 0, False) == (hand, Reason.CANNOT_OVERTRUMP)
    assert legal_mask(trump_only, hand, 3, win, 0, False) == (1, Reason.UNDERTRUMP)
    assert ABOVE[win] == 0 and SUIT_MASK[0] & hand == 1


def test_seat_order() -> None:
    assert [NEXT_SEAT[s] for s in range(4)] == [1, 2, 3, 0]
    assert call_order(3) == (0, 1, 2, 3)
    assert call_order(1) == (2, 3, 0, 1)
    assert [dealer_of(3, r) for r in range(1, 6)] == [3, 0, 1, 2, 3]
    assert four([5, 6, 7, 8, 9]) == (5, 6, 7, 8)


def _names_read(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _defined(path: Path) -> set[str]:
    """The functions a module defines at its top level (a method may share a rule's name)."""
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_the_rules_core_writes_each_rule_once() -> None:
    """Only rules.py reads the card masks a legal set or a trick winner is made of; only turns.py
    writes four values by seat down."""
    for path in sorted(ARENA.rglob("*.py")):
        name = path.relative_to(ARENA).as_posix()
        if name not in ("core/cards.py", "core/rules.py", "core/faults.py", "core/dealing.py"):
            read = _names_read(path) & {"ABOVE", "SUIT_MASK"}
            assert not read, f"{name} reads {sorted(read)}: the legal-card rule lives in arena/core/rules.py"
        if name != "core/turns.py":
            assert not _defined(path) & {"four", "_four"}, f"{name} defines four(): import arena.core.turns.four"
        if name != "core/rules.py":
            assert not _defined(path) & {"_beats", "_takes", "trick_winner", "legal_mask", "legal_with_reason"}, name


def test_the_call_range_is_the_one_of_the_rules() -> None:
    rules = Rules.profile("pagat")
    rnd = Round(rules, list(seeded_deal(1, 1, 1).masks), 3, 0)
    for value in (0, 1, 14):
        assert value not in rules.call_range
        with pytest.raises(IllegalCall, match="from 2 to 13"):
            rnd.call(value)
        assert rnd.calls == [None, None, None, None]
    rnd.call(rules.call_range[0])
    assert rnd.calls[0] == 2
