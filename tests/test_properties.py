"""Invariants over many thousands of seeded random deals, determinism, and property tests of the
legal-card rule against a plain reimplementation of the RULES.md priority list."""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.core.cards import Card, Suit
from arena.core.dealing import Deal, seeded_deal, seeded_deals
from arena.core.game import Game, Phase, Round
from arena.core.rules import PROFILES, LowerTrump, Rules, legal_with_reason, trick_winner
from arena.core.scoring import round_score

FULL = (1 << 52) - 1
DEALS_PER_PROFILE = 10_000


@functools.cache
def deals() -> tuple[Deal, ...]:
    return tuple(seeded_deal(1234, 1, r) for r in range(1, DEALS_PER_PROFILE + 1))


def pick(rng: random.Random, mask: int) -> int:
    k = rng.randrange(mask.bit_count())
    for _ in range(k):
        mask &= mask - 1
    return (mask & -mask).bit_length() - 1


# --- random playouts -----------------------------------------------------------------------------


@pytest.mark.parametrize("profile", list(PROFILES))
def test_random_playout_invariants(profile: str) -> None:
    rules = Rules.profile(profile)
    trump = int(rules.trump)
    rng = random.Random(profile)
    lo, hi = rules.min_call, rules.max_call
    checked = 0
    for i, deal in enumerate(deals()):
        dealer = i & 3
        rnd = Round(rules, list(deal.masks), dealer, trump, 1 + i % 5)
        offered = 0

        def choose_card(seat: int, legal: int, rnd: Round = rnd, i: int = i) -> int:
            nonlocal offered
            offered += 1
            hand = rnd.hands[seat]
            assert legal, f"deal {i}: empty legal set"
            assert legal & ~hand == 0, f"deal {i}: a legal card outside the hand"
            return pick(rng, legal)

        rnd.playout(lambda seat, r: rng.randint(lo, hi), choose_card)

        assert offered == 52
        assert rnd.phase is Phase.OVER
        played = rnd.played
        assert len(played) == 52 and len(set(played)) == 52
        assert rnd.hands == [0, 0, 0, 0]
        assert len(rnd.winners) == 13 and len(rnd.leaders) == 13
        assert sum(rnd.tricks_won) == 13
        assert rnd.leaders[0] == (dealer + 1) & 3
        assert rnd.leaders[1:] == rnd.winners[:-1]
        for t in range(13):
            cards = played[4 * t:4 * t + 4]
            leader = rnd.leaders[t]
            assert rnd.winners[t] == (leader + trick_winner(cards, trump)) & 3, f"deal {i} trick {t}"
            for k in range(4):
                assert rnd.initial[(leader + k) & 3] >> cards[k] & 1, f"deal {i}: card from the wrong hand"
        for seat in range(4):
            assert rnd.tricks_won[seat] == rnd.winners.count(seat)
            assert rnd.scores is not None
            assert rnd.scores[seat] == round_score(rules, rnd.calls[seat], rnd.tricks_won[seat])  # type: ignore[arg-type]
        checked += 1
    assert checked == DEALS_PER_PROFILE


@pytest.mark.parametrize("profile", list(PROFILES))
def test_the_same_seed_gives_the_same_game(profile: str) -> None:
    rules = Rules.profile(profile)

    def play(seed: int) -> Game:
        game = Game(rules, seeded_deals(seed, 2), game_number=2, first_dealer=seed % 4)
        rng = random.Random(f"{profile}/{seed}")
        while not game.over:
            if game.phase is Phase.CALLING:
                game.call(rng.choice(game.legal_calls()))
            else:
                game.play_index(pick(rng, game.legal_mask()))
        return game

    for seed in (1, 2, 3):
        first, second = play(seed), play(seed)
        assert first.results == second.results
        assert repr(first.results) == repr(second.results)  # byte for byte
        assert first.totals == second.totals
        assert first.redeals == second.redeals
        assert first.places() == second.places()
    assert play(1).results != play(2).results


# --- the legal-card rule against a plain reading of RULES.md ---------------------------------------


def plain_legal(rules: Rules, hand: set[Card], trick: list[Card], trump: Suit, first_trick: bool) -> set[Card]:
    """The priority list of RULES.md, written plainly with sets of cards."""
    if not trick:
        others = {c for c in hand if c.suit != trump}
        if first_trick and rules.first_lead_no_trump and others:
            return others
        return set(hand)
    led = trick[0].suit
    trumps_in_trick = [c for c in trick if c.suit == trump]
    if trumps_in_trick:
        win = max(trumps_in_trick, key=lambda c: c.rank)
    else:
        win = max((c for c in trick if c.suit == led), key=lambda c: c.rank)
    follow = {c for c in hand if c.suit == led}
    if follow:
        if rules.must_beat and win.suit == led:
            beaters = {c for c in follow if c.rank > win.rank}
            if beaters:
                return beaters
        return follow
    my_trumps = {c for c in hand if c.suit == trump}
    if not my_trumps or not rules.must_trump:
        return set(hand)
    if win.suit != trump:
        return my_trumps
    higher = {c for c in my_trumps if c.rank > win.rank}
    if higher:
        return higher
    if rules.lower_trump is LowerTrump.TRUMP:
        return my_trumps
    return set(hand)


def plain_winner(trick: list[Card], trump: Suit) -> int:
    trumps = [c for c in trick if c.suit == trump]
    led = [c for c in trick if c.suit == trick[0].suit]
    best = max(trumps or led, key=lambda c: c.rank)
    return trick.index(best)


RULE_SETS = {
    "nepali": Rules.profile("nepali"),
    "pagat": Rules.profile("pagat"),
    "strict": Rules.profile("strict"),
    "dy": Rules.profile("dy"),
    "nepali-lower-trump": Rules.profile("nepali", lower_trump="trump"),
    "nepali-no-must-trump": Rules.profile("nepali", must_trump=False),
    "pagat-first-lead-no-trump": Rules.profile("pagat", first_lead_no_trump=True, lower_trump="trump"),
}


@st.composite
def positions(draw: Any) -> tuple[Rules, set[Card], list[Card], Suit, bool]:
    deck = draw(st.permutations(range(52)))
    size = draw(st.integers(min_value=1, max_value=13))
    played = draw(st.integers(min_value=0, max_value=3))
    hand = {Card(i) for i in deck[:size]}
    trick = [Card(i) for i in deck[size:size + played]]
    trump = draw(st.sampled_from(list(Suit)))
    first_trick = draw(st.booleans())
    rules = draw(st.sampled_from(list(RULE_SETS.values())))
    return rules, hand, trick, trump, first_trick


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, database=None, derandomize=True)
@given(positions())
def test_legal_cards_match_the_plain_rule(position: tuple[Rules, set[Card], list[Card], Suit, bool]) -> None:
    rules, hand, trick, trump, first_trick = position
    mask = sum(1 << c.index for c in hand)
    legal, _reason = legal_with_reason(rules, mask, [c.index for c in trick], int(trump), first_trick)
    assert legal, "the legal set is never empty"
    assert legal & ~mask == 0, "the legal set is part of the hand"
    assert {Card(i) for i in range(52) if legal >> i & 1} == plain_legal(rules, hand, trick, trump, first_trick)


@settings(max_examples=500, deadline=None, database=None, derandomize=True)
@given(st.permutations(range(52)), st.integers(min_value=1, max_value=4), st.sampled_from(list(Suit)))
def test_trick_winner_matches_the_plain_rule(deck: list[int], size: int, trump: Suit) -> None:
    trick = [Card(i) for i in deck[:size]]
    assert trick_winner([c.index for c in trick], int(trump)) == plain_winner(trick, trump)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.sampled_from(list(RULE_SETS.values())), st.integers(min_value=0, max_value=2**32), st.integers(0, 3))
def test_legal_sets_met_in_real_play_match_the_plain_rule(rules: Rules, seed: int, dealer: int) -> None:
    """Positions reached in real play: every seat's legal set matches the plain rule at every decision."""
    trump = int(rules.trump)
    rnd = Round(rules, list(seeded_deal(seed, 1, 1).masks), dealer, trump)
    rng = random.Random(seed)
    while rnd.phase is Phase.CALLING:
        rnd.call(rules.min_call)
    while rnd.phase is Phase.PLAYING:
        seat = rnd.current_seat
        hand = {Card(i) for i in range(52) if rnd.hands[seat] >> i & 1}
        trick = [Card(i) for i in rnd.trick]
        expected = plain_legal(rules, hand, trick, Suit(trump), not rnd.winners)
        legal = rnd.legal_mask()
        assert {Card(i) for i in range(52) if legal >> i & 1} == expected
        rnd.play_index(pick(rng, legal))
