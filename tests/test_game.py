"""The game state machine: calls, refusals that change nothing, redeals, game end, seat views, and the
fast playout path checked decision by decision against the step-by-step path."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import pytest

from arena.core.cards import SUIT_OF, Card, Hand, Suit
from arena.core.dealing import Deal, DealSource, seeded_deal, seeded_deals
from arena.core.game import Game, Phase, Redeal, Round, RoundSummary, Trick, places
from arena.core.rules import PROFILES, Rules, legal_with_reason, trick_winner
from arena.core.scoring import round_score
from arena.core.views import SeatView
from arena.errors import IllegalCall, IllegalPlay
from tests.helpers.hands import (
    ASHMA_1,
    ASHMA_2,
    BIMAL_1,
    BIMAL_2,
    FIRST_3,
    FOURTH_3,
    SECOND_3,
    THIRD_3,
    TULSI_1,
    TULSI_2,
    YOU_1,
    YOU_2,
)

FULL = (1 << 52) - 1

# --- helpers -------------------------------------------------------------------------------------


def masks_of(*hands: str) -> list[int]:
    return [Hand.parse(h).mask for h in hands]


def complete(fixed: dict[int, str], void: dict[int, str] | None = None) -> list[int]:
    """Four 13-card hands holding the fixed cards, the rest given out in card order, respecting voids."""
    void = void or {}
    masks = [Hand.parse(fixed.get(s, "")).mask for s in range(4)]
    used = masks[0] | masks[1] | masks[2] | masks[3]
    rest = [i for i in range(52) if not used >> i & 1]
    for seat in sorted(range(4), key=lambda s: -len(void.get(s, ""))):
        banned = {int(Suit.parse(ch)) for ch in void.get(seat, "")}
        for index in list(rest):
            if masks[seat].bit_count() == 13:
                break
            if SUIT_OF[index] not in banned:
                masks[seat] |= 1 << index
                rest.remove(index)
    assert [m.bit_count() for m in masks] == [13] * 4
    assert masks[0] | masks[1] | masks[2] | masks[3] == FULL
    return masks


def deal_of(masks: Sequence[int]) -> Deal:
    """The deal whose hand k is ``masks[k]``."""
    deck = [0] * 52
    for h in range(4):
        for i, index in enumerate(j for j in range(52) if masks[h] >> j & 1):
            deck[4 * i + h] = index
    return Deal(tuple(deck))


def source_of(deals: dict[tuple[int, int], Deal], seed: int = 9) -> DealSource:
    fallback = seeded_deals(seed, 1)

    def source(round_number: int, attempt: int) -> Deal:
        return deals.get((round_number, attempt)) or fallback(round_number, attempt)

    return source


def pick(rng: random.Random, mask: int) -> int:
    """A uniformly random card index from a non-empty mask."""
    k = rng.randrange(mask.bit_count())
    for _ in range(k):
        mask &= mask - 1
    return (mask & -mask).bit_length() - 1


def lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def highest(mask: int) -> int:
    return mask.bit_length() - 1


def step(game: Game, rng: random.Random) -> None:
    """One random legal action."""
    if game.phase is Phase.CALLING:
        game.call(rng.choice(game.legal_calls()))
    else:
        game.play_index(pick(rng, game.legal_cards().mask))


def play_out(game: Game, rng: random.Random) -> None:
    while not game.over:
        step(game, rng)


def round_state(rnd: Round) -> dict[str, Any]:
    return {
        "hands": list(rnd.hands), "calls": list(rnd.calls), "phase": rnd.phase, "current_seat": rnd.current_seat,
        "leader": rnd.leader, "played": list(rnd.played), "leaders": list(rnd.leaders),
        "winners": list(rnd.winners), "tricks_won": list(rnd.tricks_won), "scores": rnd.scores,
        "trick": list(rnd.trick),
    }


def public_names(view: SeatView) -> list[str]:
    return [n for n in dir(view) if not n.startswith("_") and not callable(getattr(view, n))]


def view_state(view: SeatView) -> dict[str, Any]:
    return {name: getattr(view, name) for name in public_names(view)}


# --- calls ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("first_dealer", [0, 1, 2, 3])
def test_calls_in_order_from_the_seat_after_the_dealer(first_dealer: int) -> None:
    game = Game(Rules.profile("nepali"), seeded_deals(1, 1), first_dealer=first_dealer)
    order = [(first_dealer + 1 + k) % 4 for k in range(4)]
    made: dict[int, int] = {}
    assert game.phase is Phase.CALLING
    for k, seat in enumerate(order):
        assert game.current_seat == seat
        view = game.view(seat)
        assert view.to_act
        assert view.call_order == tuple(order)
        assert view.calls == tuple(made.get(s) for s in range(4))  # earlier calls seen, later ones None
        for other in range(4):
            assert game.view(other).to_act is (other == seat)
        value = k + 2
        game.call(value)
        made[seat] = value
    assert game.phase is Phase.PLAYING
    assert game.current_seat == order[0]  # the first caller leads
    assert all(game.view(s).calls == tuple(made[x] for x in range(4)) for s in range(4))


@pytest.mark.parametrize(
    ("profile", "value"),
    [
        pytest.param("nepali", 0, id="nepali-0"),
        pytest.param("nepali", 14, id="nepali-14"),
        pytest.param("bhoos", 9, id="bhoos-9"),
        pytest.param("pagat", 1, id="pagat-1"),
        pytest.param("strict", 1, id="strict-1"),
        pytest.param("dy", 14, id="dy-14"),
        pytest.param("nepali", -3, id="negative"),
        pytest.param("nepali", "3", id="text"),
        pytest.param("nepali", 2.0, id="float"),
        pytest.param("nepali", True, id="bool"),
        pytest.param("nepali", None, id="none"),
    ],
)
def test_out_of_range_call_is_refused_and_changes_nothing(profile: str, value: Any) -> None:
    rules = Rules.profile(profile)
    game = Game(rules, seeded_deals(1, 1))
    game.call(rules.min_call)
    before = (game.current_seat, game.view(1).calls, game.phase, game.round_number)
    with pytest.raises(IllegalCall) as info:
        game.call(value)
    assert f"from {rules.min_call} to {rules.max_call}" in str(info.value)
    assert (game.current_seat, game.view(1).calls, game.phase, game.round_number) == before


@pytest.mark.parametrize("profile", list(PROFILES))
def test_every_call_in_range_is_accepted(profile: str) -> None:
    rules = Rules.profile(profile)
    assert Game(rules, seeded_deals(1, 1)).legal_calls() == range(rules.min_call, rules.max_call + 1)
    for value in rules.call_range:
        game = Game(rules, seeded_deals(1, 1))
        game.call(value)
        assert game.view(0).calls[0] == value


def test_no_call_once_the_calls_are_over() -> None:
    game = Game(Rules.profile("nepali"), seeded_deals(1, 1))
    for _ in range(4):
        game.call(3)
    with pytest.raises(IllegalCall, match="calls are over"):
        game.call(3)
    assert game.view(0).calls == (3, 3, 3, 3)


def test_play_before_the_calls_finish_is_refused() -> None:
    game = Game(Rules.profile("nepali"), seeded_deals(1, 1))
    game.call(3)
    hand = game.view(1).hand
    with pytest.raises(IllegalPlay, match="calls are not finished"):
        game.play(hand.cards()[0])
    assert game.phase is Phase.CALLING
    assert game.current_seat == 1
    assert game.view(1).hand == hand
    assert game.round.played == []


# --- refused cards -------------------------------------------------------------------------------


def _seed_001_game() -> Game:
    source = source_of({(1, 0): deal_of(masks_of(BIMAL_1, ASHMA_1, TULSI_1, YOU_1))})
    game = Game(Rules.profile("nepali"), source, first_dealer=3)
    for _ in range(4):
        game.call(3)
    return game


def _assert_refused(game: Game, card: str, message: str) -> None:
    seat = game.current_seat
    before = view_state(game.view(seat))
    state = round_state(game.round)
    with pytest.raises(IllegalPlay) as info:
        game.play(card)
    assert str(info.value) == message
    assert game.current_seat == seat
    assert round_state(game.round) == state
    assert view_state(game.view(seat)) == before


def test_seed_001_trick_played_through_the_game() -> None:
    game = _seed_001_game()
    assert game.current_seat == 0
    game.play("7H")
    _assert_refused(game, "4H", "4H is not allowed: 7H was led and you hold TH, which beats the winning 7H: "
                                "you must play TH")
    assert game.round.legal_reason() == "7H was led and you hold TH, which beats the winning 7H: you must play TH"
    assert game.legal_cards() == Hand.parse("TH")
    assert game.view(1).legal == Hand.parse("TH")
    game.play("TH")
    _assert_refused(game, "2H", "2H is not allowed: 7H was led and you hold QH, which beats the winning TH: "
                                "you must play QH")
    game.play("qh")
    _assert_refused(game, "TD", "TD is not allowed: 7H was led and you have no hearts: you must trump with one of "
                                "your spades")
    assert game.legal_cards() == Hand.parse("QS JS 7S 3S")
    game.play("3S")  # the lowest spade wins the trick
    assert game.round.tricks == [Trick(0, tuple(Card.parse(c) for c in ("7H", "TH", "QH", "3S")), 3)]
    assert game.current_seat == 3
    assert game.view(3).tricks_won == (0, 0, 0, 1)


@pytest.mark.parametrize(
    "card", [pytest.param("KS", id="another-seats-card"), pytest.param("7H", id="the-card-just-played")]
)
def test_a_card_not_held_is_refused_naming_the_hand(card: str) -> None:
    game = _seed_001_game()
    game.play("7H")
    _assert_refused(game, card, f"you do not hold {card}: your hand is {Hand.parse(ASHMA_1)}")


@pytest.mark.parametrize("index", [52, 1000])
def test_a_card_index_out_of_range_is_refused(index: int) -> None:
    game = _seed_001_game()
    state = round_state(game.round)
    with pytest.raises(IllegalPlay, match="you do not hold"):
        game.play_index(index)
    assert round_state(game.round) == state


def test_a_negative_card_index_is_refused() -> None:
    game = _seed_001_game()
    with pytest.raises(IllegalPlay):
        game.play_index(-1)


def test_card_text_that_is_not_a_card_is_refused_by_the_parser() -> None:
    game = _seed_001_game()
    with pytest.raises(ValueError, match="rank then suit"):
        game.play("7X")


def test_seed_001_overtrump_trick() -> None:
    rnd = Round(Rules.profile("nepali"), masks_of(YOU_2, ASHMA_2, TULSI_2, BIMAL_2), dealer=3, trump=0)
    for _ in range(4):
        rnd.call(2)
    rnd.play("AH")
    with pytest.raises(IllegalPlay, match="you must trump with one of your spades"):
        rnd.play("AD")
    rnd.play("2S")
    with pytest.raises(IllegalPlay) as info:
        rnd.play("KD")
    assert str(info.value) == ("KD is not allowed: AH was led, you have no hearts and 2S is winning: "
                               "you must overtrump with one of JS and 5S")
    rnd.play("5S")
    assert rnd.legal_mask() == Hand.parse(BIMAL_2).mask  # no hearts and no spades: anything
    rnd.play("7C")
    assert rnd.winners == [2]


@pytest.mark.parametrize(
    ("profile", "fourth", "accepted"),
    [("strict", "KD", False), ("strict", "2S", True), ("nepali", "KD", True), ("nepali", "2S", True)],
)
def test_seed_003_the_2S_that_must_be_played(profile: str, fourth: str, accepted: bool) -> None:
    rnd = Round(Rules.profile(profile), masks_of(FIRST_3, SECOND_3, THIRD_3, FOURTH_3), dealer=3, trump=0)
    for _ in range(4):
        rnd.call(2)
    if profile == "strict":
        with pytest.raises(IllegalPlay, match="first lead of the round"):
            rnd.play("8S")
    for card in ("AH", "6H", "4S"):
        rnd.play(card)
    if accepted:
        rnd.play(fourth)
        assert rnd.winners == [2]  # "4S captura"
    else:
        with pytest.raises(IllegalPlay) as info:
            rnd.play(fourth)
        assert str(info.value) == (f"{fourth} is not allowed: AH was led, you have no hearts and your spades are all "
                                   "lower than the winning 4S: you must still play one of them")
        assert rnd.trick == [Card.parse(c).index for c in ("AH", "6H", "4S")]


def test_round_refuses_bad_hands() -> None:
    masks = masks_of(FIRST_3, SECOND_3, THIRD_3, FOURTH_3)
    with pytest.raises(ValueError):
        Round(Rules(), masks[:3], dealer=3, trump=0)
    with pytest.raises(ValueError):
        Round(Rules(), [masks[0], masks[0], masks[2], masks[3]], dealer=3, trump=0)
    with pytest.raises(ValueError):
        Round(Rules(), [masks[0] | masks[1], 0, masks[2], masks[3]], dealer=3, trump=0)


def test_game_refuses_a_bad_first_dealer() -> None:
    with pytest.raises(ValueError, match="first_dealer"):
        Game(Rules(), seeded_deals(1, 1), first_dealer=4)


# --- rounds, dealers, redeals --------------------------------------------------------------------


@pytest.mark.parametrize("first_dealer", [0, 1, 2, 3])
def test_the_deal_passes_to_the_right(first_dealer: int) -> None:
    game = Game(Rules.profile("nepali"), seeded_deals(4, 2), game_number=2, first_dealer=first_dealer)
    play_out(game, random.Random(first_dealer))
    assert [r.round_number for r in game.results] == [1, 2, 3, 4, 5]
    for result in game.results:
        r = result.round_number
        dealer = (first_dealer + r - 1) % 4
        assert result.dealer == dealer
        deal = seeded_deal(4, 2, r, result.attempt)
        for k in range(4):
            assert result.hands[(dealer + 1 + k) % 4] == deal.hands[k]  # hand 0 to the seat after the dealer
        assert deal.last_card in result.hands[dealer]
        assert result.tricks[0].leader == (dealer + 1) % 4


@pytest.mark.parametrize("profile", list(PROFILES))
def test_a_full_game(profile: str) -> None:
    rules = Rules.profile(profile)
    game = Game(rules, seeded_deals(21, 1))
    play_out(game, random.Random(profile))
    assert game.over and game.phase is Phase.OVER
    assert len(game.results) == rules.rounds == (10 if profile == "dy" else 5)
    totals = [0, 0, 0, 0]
    for result in game.results:
        assert sum(result.tricks_won) == 13
        assert len(result.tricks) == 13
        for seat in range(4):
            assert result.scores[seat] == round_score(rules, result.calls[seat], result.tricks_won[seat])
            totals[seat] += result.scores[seat]
        assert list(result.totals) == totals
        assert result.summary() == RoundSummary(result.round_number, result.dealer, result.calls,
                                                result.tricks_won, result.scores)
    assert game.totals == totals
    assert game.places() == places(totals)
    with pytest.raises(IllegalCall, match="game is over"):
        game.call(3)
    with pytest.raises(IllegalPlay, match="game is over"):
        game.play_index(0)
    assert not any(game.view(s).to_act for s in range(4))


def test_redeal_below() -> None:
    rules = Rules.profile("nepali", redeal_below=10)
    game = Game(rules, seeded_deals(3, 1), first_dealer=2)
    first = [game.view(s).hand for s in range(4)]
    for _ in range(4):
        game.call(1)
    assert game.redeals == [Redeal(1, 0, "the calls total 4, less than 10")]
    assert game.round.attempt == 1
    assert game.round_number == 1
    assert game.phase is Phase.CALLING
    assert game.current_seat == 3
    assert game.view(0).calls == (None, None, None, None)
    again = [game.view(s).hand for s in range(4)]
    assert again != first
    deal = seeded_deal(3, 1, 1, 1)
    assert [again[(2 + 1 + k) % 4] for k in range(4)] == list(deal.hands)
    for value in (4, 3, 2, 1):  # exactly 10 is not less than 10
        game.call(value)
    assert game.phase is Phase.PLAYING
    assert len(game.redeals) == 1
    play_out(game, random.Random(1))
    assert game.results[0].attempt == 1


def test_redeal_below_stops_after_max_redeals() -> None:
    game = Game(Rules.profile("nepali", redeal_below=52), seeded_deals(3, 1), max_redeals=2)
    for _ in range(12):
        game.call(1)
    assert [r.attempt for r in game.redeals] == [0, 1]
    assert game.round.attempt == 2
    assert game.phase is Phase.PLAYING  # played as dealt, whatever the calls


def _no_spade_deal() -> Deal:
    # Hand 0 holds no spade; every hand holds a heart.
    fixed = {0: "AH KH QH JH AD KD QD JD AC KC QC JC TC", 1: "AS TH", 2: "KS 9H", 3: "QS 8H"}
    return deal_of(complete(fixed, void={0: "S"}))


@pytest.mark.parametrize(
    ("rules", "redealt"),
    [
        pytest.param(Rules.profile("nepali", redeal_no_trump=True), True, id="nepali-switch-on"),
        pytest.param(Rules.profile("nepali"), False, id="nepali-switch-off"),
        pytest.param(Rules.profile("dy"), True, id="dy-default"),
        pytest.param(Rules.profile("dy", redeal_no_trump=False), False, id="dy-switch-off"),
        pytest.param(Rules.profile("nepali", redeal_no_trump=True, trump="H"), False, id="trump-hearts"),
    ],
)
def test_redeal_no_trump(rules: Rules, redealt: bool) -> None:
    crafted = _no_spade_deal()
    assert crafted.has_no_trump_hand(0)
    assert not crafted.has_no_trump_hand(1)
    game = Game(rules, source_of({(1, 0): crafted}, seed=5), first_dealer=3)
    if redealt:
        assert game.redeals == [Redeal(1, 0, "a hand holds no spades")]
        assert game.round.attempt == 1
        assert [game.view(s).hand for s in range(4)] == list(seeded_deal(5, 1, 1, 1).hands)
    else:
        assert game.redeals == []
        assert game.round.attempt == 0
        assert [game.view(s).hand for s in range(4)] == list(crafted.hands)


def test_dy_trump_from_the_last_card() -> None:
    rules = Rules.profile("dy", trump_mode="last_card")
    source = seeded_deals(13, 1)
    game = Game(rules, source, first_dealer=1)
    play_out(game, random.Random(13))
    assert len(game.results) == 10
    trumps = set()
    for result in game.results:
        deal = source(result.round_number, result.attempt)
        assert result.trump == Suit(SUIT_OF[deal.deck[51]])
        assert deal.last_card in result.hands[result.dealer]
        assert all(h.of_suit(result.trump) for h in result.hands)  # redeal_no_trump, in the round's trump
        for trick in result.tricks:
            cards = [c.index for c in trick.cards]
            assert trick.winner == (trick.leader + trick_winner(cards, int(result.trump))) % 4
        trumps.add(result.trump)
    assert len(trumps) > 1  # the trump changes from round to round
    for attempt_redeal in game.redeals:
        deal = source(attempt_redeal.round_number, attempt_redeal.attempt)
        assert deal.has_no_trump_hand(SUIT_OF[deal.deck[51]])


# --- exact8_wins and places ------------------------------------------------------------------------

EIGHT_SPADES = "AS KS QS JS TS 9S 8S 7S 3H 2H 3D 2D 2C"


def _exact8_game(rules: Rules) -> Game:
    source = source_of({(1, 0): deal_of(complete({0: EIGHT_SPADES}))})
    game = Game(rules, source, first_dealer=3)
    for value in (8, 1, 1, 1):
        game.call(value)
    # Seat 0 draws trumps with its eight top spades, then loses the lead with its twos and threes and
    # can never win again; everyone else plays its lowest legal card.
    while game.round_number == 1 and not game.over:
        legal = game.legal_cards().mask
        spades = legal & 0x1FFF
        card = highest(spades) if game.current_seat == 0 and spades else lowest(legal)
        game.play_index(card)
    return game


def test_exact8_wins_ends_the_game_at_once() -> None:
    game = _exact8_game(Rules.profile("nepali", exact8_wins=True))
    assert game.over
    assert len(game.results) == 1
    assert game.results[0].tricks_won[0] == 8
    assert game.exact8_winner == 0
    assert game.places()[0] == 1
    assert game.phase is Phase.OVER


def test_without_exact8_wins_the_game_goes_on() -> None:
    game = _exact8_game(Rules.profile("nepali"))
    assert game.results[0].tricks_won[0] == 8
    assert not game.over
    assert game.round_number == 2
    assert game.exact8_winner is None


@pytest.mark.parametrize(
    ("totals", "first", "expected"),
    [
        pytest.param((30, 20, 20, 10), None, (1, 2, 2, 4), id="tie-for-second"),
        pytest.param((5, 5, 5, 5), None, (1, 1, 1, 1), id="four-way-tie"),
        pytest.param((10, 10, 5, 5), None, (1, 1, 3, 3), id="two-ties"),
        pytest.param((10, 20, 20, 5), None, (3, 1, 1, 4), id="tie-for-first"),
        pytest.param((93, 91, 141, -129), None, (2, 3, 1, 4), id="seed-001-game"),
        pytest.param((0, -10, -10, -10), None, (1, 2, 2, 2), id="three-way-tie-for-second"),
        pytest.param((50, 40, 30, 20), 3, (2, 3, 4, 1), id="exact8-winner-first-despite-total"),
        pytest.param((50, 10, 50, 0), 1, (2, 1, 2, 4), id="exact8-winner-and-a-tie"),
    ],
)
def test_places(totals: tuple[int, ...], first: int | None, expected: tuple[int, ...]) -> None:
    assert places(totals, first) == expected


# --- seat views ----------------------------------------------------------------------------------


def _cards_in(value: Any, name: str) -> set[int]:
    """Every card index found in a public value of a view."""
    if isinstance(value, Card):
        return {value.index}
    if isinstance(value, Hand):
        return {c.index for c in value}
    if isinstance(value, int) and not isinstance(value, bool) and name.endswith("mask"):
        return {i for i in range(52) if value >> i & 1}
    if isinstance(value, (tuple, list)):
        out: set[int] = set()
        for item in value:
            out |= _cards_in(item, name)
        return out
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and not isinstance(value, Rules):
        out = set()
        for field in dataclasses.fields(value):
            out |= _cards_in(getattr(value, field.name), field.name)
        return out
    return set()


def test_round_summary_holds_no_hands() -> None:
    assert {f.name for f in dataclasses.fields(RoundSummary)} == {
        "round_number", "dealer", "calls", "tricks_won", "scores"
    }


@pytest.mark.parametrize("profile", ["nepali", "dy"])
def test_a_view_holds_only_its_own_hidden_cards(profile: str) -> None:
    game = Game(Rules.profile(profile), seeded_deals(31, 1))
    rng = random.Random(31)
    checked = 0
    while not game.over:
        rnd = game.round
        played = {i for i in rnd.played}
        for seat in range(4):
            view = game.view(seat)
            own = {c.index for c in Hand(rnd.hands[seat])}
            assert view.hand == Hand(rnd.hands[seat])
            assert view.seat == seat
            seen: set[int] = set()
            for name in public_names(view):
                seen |= _cards_in(getattr(view, name), name)
            hidden = seen - own - played
            assert not hidden, f"seat {seat} sees {[str(Card(i)) for i in hidden]}"
            others_unplayed = FULL & ~rnd.hands[seat] & ~sum(1 << i for i in played)
            assert view.played.mask & others_unplayed == 0
            assert view.legal.mask & ~rnd.hands[seat] == 0
            checked += 1
        step(game, rng)
    assert checked > 4 * 5 * 52


def test_a_view_is_a_snapshot() -> None:
    game = Game(Rules.profile("nepali"), seeded_deals(2, 1))
    rng = random.Random(2)
    views: list[tuple[SeatView, dict[str, Any]]] = []
    for _ in range(4 + 13):  # calls and three tricks and a bit, then keep taking views
        step(game, rng)
    for k in range(60):
        seat = k % 4
        view = game.view(seat)
        views.append((view, view_state(view)))
        step(game, rng)
    while not game.over:
        step(game, rng)
    for view, state in views:
        assert view_state(view) == state
    # The state really moved on.
    assert views[0][1]["played"] != views[-1][1]["played"]


def test_view_contents_mid_trick() -> None:
    game = _seed_001_game()
    game.play("7H")
    game.play("TH")
    view = game.view(2)
    assert view.to_act
    assert view.trick == (Card.parse("7H"), Card.parse("TH"))
    assert view.leader == 0
    assert view.legal == Hand.parse("QH")
    assert view.played == Hand.parse("7H TH")
    assert view.hand == Hand.parse(TULSI_1)
    assert view.calls == (3, 3, 3, 3)
    assert view.tricks == ()
    assert view.totals == (0, 0, 0, 0)
    assert view.past_rounds == ()
    assert (view.dealer, view.trump, view.round_number, view.game_number) == (3, Suit.SPADES, 1, 1)
    assert view.rules == Rules.profile("nepali")
    assert view.phase is Phase.PLAYING
    assert not game.view(3).to_act
    assert game.view(3).legal == Hand()


def test_past_rounds_and_totals_in_the_view() -> None:
    game = Game(Rules.profile("nepali"), seeded_deals(8, 1))
    rng = random.Random(8)
    while game.round_number == 1:
        step(game, rng)
    view = game.view(0)
    assert view.past_rounds == (game.results[0].summary(),)
    assert view.totals == game.results[0].totals
    assert view.tricks_won == (0, 0, 0, 0)


# --- playout and step-by-step reach the same state -----------------------------------------------

PLAYOUT_RULES = {
    **{name: Rules.profile(name) for name in PROFILES},
    "must_beat-off": Rules.profile("nepali", must_beat=False),
    "must_trump-off": Rules.profile("nepali", must_trump=False),
    "lower_trump-trump": Rules.profile("nepali", lower_trump="trump"),
    "first_lead_no_trump": Rules.profile("nepali", first_lead_no_trump=True),
    "trump-hearts": Rules.profile("nepali", trump="H"),
    "pagat-trump-diamonds-lower-trump": Rules.profile("pagat", trump="D", lower_trump="trump"),
    "strict-trump-clubs-must-beat-off": Rules.profile("strict", trump="C", must_beat=False),
}

Log = list[tuple[int, int]]


def _by_playout(rules: Rules, deal: Deal, dealer: int, seed: int) -> tuple[Round, Log, Log]:
    rng = random.Random(seed)
    calls: Log = []
    cards: Log = []

    def choose_call(seat: int, rnd: Round) -> int:
        value = rng.randint(rules.min_call, rules.max_call)
        calls.append((seat, value))
        return value

    def choose_card(seat: int, legal: int) -> int:
        cards.append((seat, legal))
        return pick(rng, legal)

    rnd = Round(rules, list(deal.masks), dealer, int(rules.trump))
    rnd.playout(choose_call, choose_card)
    return rnd, calls, cards


def _by_steps(rules: Rules, deal: Deal, dealer: int, seed: int, stop: int = 52) -> tuple[Round, Log, Log]:
    rng = random.Random(seed)
    calls: Log = []
    cards: Log = []
    rnd = Round(rules, list(deal.masks), dealer, int(rules.trump))
    while rnd.phase is Phase.CALLING:
        value = rng.randint(rules.min_call, rules.max_call)
        calls.append((rnd.current_seat, value))
        rnd.call(value)
    while rnd.phase is Phase.PLAYING and len(rnd.played) < stop:
        legal = rnd.legal_mask()
        cards.append((rnd.current_seat, legal))
        rnd.play_index(pick(rng, legal))
    return rnd, calls, cards


def _final(rnd: Round) -> tuple[Any, ...]:
    return (rnd.phase, rnd.played, rnd.leaders, rnd.winners, rnd.tricks_won, rnd.scores, rnd.calls, rnd.hands,
            rnd.tricks)


@pytest.mark.parametrize("rules", list(PLAYOUT_RULES.values()), ids=list(PLAYOUT_RULES))
def test_playout_and_steps_agree_decision_by_decision(rules: Rules) -> None:
    for i in range(2000):
        deal = seeded_deal(606, 1, i + 1)
        fast, fast_calls, fast_cards = _by_playout(rules, deal, i % 4, i)
        slow, slow_calls, slow_cards = _by_steps(rules, deal, i % 4, i)
        assert fast_calls == slow_calls, i
        assert fast_cards == slow_cards, i  # the same legal mask offered at every decision
        assert _final(fast) == _final(slow), i
        assert fast.phase is Phase.OVER
        assert fast.hands == [0, 0, 0, 0]


@pytest.mark.parametrize("rules", [Rules.profile("nepali"), Rules.profile("strict"), Rules.profile("dy")],
                         ids=["nepali", "strict", "dy"])
def test_playout_finishes_a_round_begun_step_by_step(rules: Rules) -> None:
    for i in range(300):
        deal = seeded_deal(707, 1, i + 1)
        stop = i % 53
        slow, _, _ = _by_steps(rules, deal, i % 4, i)
        rnd, _, cards = _by_steps(rules, deal, i % 4, i, stop=stop)
        # Re-drive the same generator: draw exactly as _by_steps did, then continue in playout.
        rng = random.Random(i)
        for _ in range(4):
            rng.randint(rules.min_call, rules.max_call)
        for _seat, legal in cards:
            pick(rng, legal)
        rnd.playout(lambda seat, r: 0, lambda seat, legal, rng=rng: pick(rng, legal))
        assert _final(rnd) == _final(slow), i


def _illegal_choice(hand: int, legal: int) -> int:
    """A card the seat holds but may not play, or (when all its cards are legal) one it does not hold."""
    bad = hand & ~legal
    return lowest(bad) if bad else lowest(FULL & ~hand)


@pytest.mark.parametrize("profile", ["nepali", "strict", "pagat", "dy"])
def test_playout_refuses_an_illegal_choice_and_stays_consistent(profile: str) -> None:
    rules = Rules.profile(profile)
    refused = 0
    for i in range(300):
        deal = seeded_deal(808, 1, i + 1)
        dealer = i % 4
        wrong_at = i % 52
        rng = random.Random(i)
        decisions: list[int] = []
        rnd = Round(rules, list(deal.masks), dealer, int(rules.trump))

        def choose_card(seat: int, legal: int, rnd: Round = rnd, rng: random.Random = rng,
                        decisions: list[int] = decisions, wrong_at: int = wrong_at) -> int:
            if len(decisions) == wrong_at:
                return _illegal_choice(rnd.hands[seat], legal)
            decisions.append(pick(rng, legal))
            return decisions[-1]

        with pytest.raises(IllegalPlay) as info:
            rnd.playout(lambda seat, r: rules.min_call, choose_card)
        refused += 1
        # The same choices made step by step give the same state.
        ref = Round(rules, list(deal.masks), dealer, int(rules.trump))
        for _ in range(4):
            ref.call(rules.min_call)
        for index in decisions:
            ref.play_index(index)
        assert round_state(rnd) == round_state(ref), i
        assert rnd.legal_mask() == ref.legal_mask(), i
        wrong = _illegal_choice(ref.hands[ref.current_seat], ref.legal_mask())
        if ref.hands[ref.current_seat] >> wrong & 1:
            assert str(info.value) == f"{Card(wrong)} is not allowed: {ref.legal_reason()}"
        else:
            assert str(info.value).startswith(f"you do not hold {Card(wrong)}")
        # And the round goes on from there, step by step or by playout, to the same end.
        rest = random.Random(-i)
        while ref.phase is Phase.PLAYING:
            ref.play_index(pick(rest, ref.legal_mask()))
        rest = random.Random(-i)
        rnd.playout(lambda seat, r: 0, lambda seat, legal, rest=rest: pick(rest, legal))
        assert _final(rnd) == _final(ref), i
    assert refused == 300


def test_playout_refuses_an_illegal_call() -> None:
    rnd = Round(Rules.profile("strict"), list(seeded_deal(1, 1, 1).masks), 3, 0)
    with pytest.raises(IllegalCall, match="from 2 to 13"):
        rnd.playout(lambda seat, r: 1, lambda seat, legal: lowest(legal))
    assert rnd.calls == [None, None, None, None]
    assert rnd.phase is Phase.CALLING


def test_playout_refusal_after_a_cached_legal_mask() -> None:
    rules = Rules.profile("nepali")
    deal = seeded_deal(1, 1, 1)
    rnd = Round(rules, list(deal.masks), 3, 0)
    for _ in range(4):
        rnd.call(3)
    rnd.legal_mask()  # what a view of the leader asks
    count = [0]

    def choose_card(seat: int, legal: int) -> int:
        count[0] += 1
        if count[0] == 10:
            return _illegal_choice(rnd.hands[seat], legal)
        return lowest(legal)

    with pytest.raises(IllegalPlay) as info:
        rnd.playout(lambda seat, r: 3, choose_card)
    expected, _reason = legal_with_reason(rules, rnd.hands[rnd.current_seat], rnd.trick, 0, not rnd.winners)
    assert rnd.legal_mask() == expected
    assert "you lead this trick" not in str(info.value)


def test_after_a_playout_refusal_a_card_not_held_is_still_refused() -> None:
    rules = Rules.profile("nepali")
    rnd = Round(rules, list(seeded_deal(1, 1, 1).masks), 3, 0)
    for _ in range(4):
        rnd.call(3)
    stale = rnd.legal_mask()
    count = [0]

    def choose_card(seat: int, legal: int) -> int:
        count[0] += 1
        return _illegal_choice(rnd.hands[seat], legal) if count[0] == 10 else lowest(legal)

    with pytest.raises(IllegalPlay):
        rnd.playout(lambda seat, r: 3, choose_card)
    seat = rnd.current_seat
    foreign = stale & ~rnd.hands[seat] & ~sum(1 << i for i in rnd.played)
    assert foreign, "the test needs a card of the stale set that the seat does not hold"
    card = lowest(foreign)
    with pytest.raises(IllegalPlay, match="you do not hold"):
        rnd.play_index(card)
