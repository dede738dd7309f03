"""The Monte Carlo sample bot: always legal under every profile, deterministic for a seed and a
sample count, within its time budget, sound in what it infers about the unseen cards, and the same
bot over real gRPC as in-process."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from arena.core.cards import FULL_DECK, SUIT_MASK, Hand, Suit
from arena.core.dealing import seeded_deals
from arena.core.game import Game, Phase
from arena.core.rules import PROFILES, Rules
from arena.core.views import SeatView
from arena.players.local import play_out
from arena.records.format import GameRecord
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.montecarlo_bot import DEADLINE_SHARE, MIN_SAMPLES, Knowledge, MonteCarloBot
from sample_bots.random_bot import RandomBot
from tests.conftest import ROOT, Bots, arena, check_record, run, token
from tests.helpers.games import SWITCH_CASES, game_with, rest_of_deck, run_game
from tests.helpers.seating import seat_and_play

MONTECARLO_BOT = ROOT / "sample_bots" / "montecarlo_bot.py"
SAMPLES = 4
"""Deals per decision in these tests: enough to exercise every path, cheap enough to be quick."""


def mixed_table(number: int, samples: int = SAMPLES) -> list[Any]:
    """Monte Carlo bots in seats 0 and 2, heuristic bots in seats 1 and 3."""
    return [
        MonteCarloBot(seed=4 * number + seat, samples=samples) if seat % 2 == 0 else HeuristicBot(4 * number + seat)
        for seat in range(4)
    ]


def records(game: Game) -> list[tuple[object, ...]]:
    """Every call and trick of a finished game."""
    return [(r.calls, tuple(str(t) for t in r.tricks)) for r in game.results]


# --- legal under every profile and switch -------------------------------------------------------


@pytest.mark.parametrize("profile", list(PROFILES))
def test_always_legal_under_every_profile(profile: str) -> None:
    """Through views holding only what a remote view offers; an illegal call or card would raise."""
    rules = Rules.profile(profile)
    for number in (1, 2):
        game = run_game(rules, seeded_deals(23, number), mixed_table(number), public=True)
        assert game.over
        for result in game.results:
            assert all(rules.min_call <= call <= rules.max_call for call in result.calls)
            assert sum(result.tricks_won) == 13


@pytest.mark.parametrize(
    ("profile", "switches"),
    SWITCH_CASES,
    ids=[f"{p}:" + ",".join(f"{k}={v}" for k, v in s.items()) for p, s in SWITCH_CASES],
)
def test_always_legal_under_switches(profile: str, switches: dict[str, object]) -> None:
    rules = Rules.profile(profile, **switches)
    game = run_game(rules, seeded_deals(29, 1), mixed_table(1, samples=2))
    assert game.over
    for result in game.results:
        assert all(rules.min_call <= call <= rules.max_call for call in result.calls)


# --- determinism and the budget -----------------------------------------------------------------


@pytest.mark.parametrize("profile", ["nepali", "pagat"])
def test_same_seed_and_sample_count_same_decisions(profile: str) -> None:
    rules = Rules.profile(profile)
    first = run_game(rules, seeded_deals(31, 1), mixed_table(1))
    again = run_game(rules, seeded_deals(31, 1), mixed_table(1))
    public = run_game(rules, seeded_deals(31, 1), mixed_table(1), public=True)
    assert records(first) == records(again) == records(public)


def opening_lead() -> SeatView:
    """The first lead of a nepali round, after four calls."""
    game = Game(Rules.profile("nepali"), seeded_deals(37, 1), first_dealer=3)
    for _ in range(4):
        game.call(2)
    return game.view(game.current_seat)


def test_a_sample_count_is_the_number_of_deals() -> None:
    view = opening_lead()
    bot = MonteCarloBot(seed=1, samples=7)
    card = bot.play(view)
    assert card in view.legal
    assert bot.deals == 7
    assert bot.play(view) is card  # the same position again: the same deals, the same card


class FakeClock:
    """A clock that moves on by ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 100.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_time_budget_stops_the_sampling() -> None:
    """On a clock that moves 1 ms each time it is read, once per deal, a 10 ms budget allows about
    ten deals, for a card and for a call alike."""
    bot = MonteCarloBot(seed=1, budget=0.010)
    bot.clock = FakeClock(0.001)
    view = opening_lead()
    assert bot.play(view) in view.legal
    assert MIN_SAMPLES + 8 <= bot.deals <= MIN_SAMPLES + 11
    bot.clock = FakeClock(0.001)
    assert bot.call(game_before_calls()) in Rules.profile("nepali").call_range
    assert MIN_SAMPLES + 8 <= bot.deals <= MIN_SAMPLES + 11


class ViewWithDeadline:
    """A view that also tells the deadline of the decision, in milliseconds."""

    def __init__(self, view: SeatView, deadline_ms: int) -> None:
        self._view = view
        self.deadline_ms = deadline_ms

    def __getattr__(self, name: str) -> object:
        return getattr(self._view, name)


def test_the_budget_never_exceeds_a_share_of_the_deadline() -> None:
    deadline_ms = 20
    bot = MonteCarloBot(seed=1, budget=10.0)
    bot.clock = FakeClock(0.001)
    view: Any = ViewWithDeadline(opening_lead(), deadline_ms)
    assert bot.play(view) in view.legal
    allowed = DEADLINE_SHARE * deadline_ms  # ms, so deals: the clock moves 1 ms per deal
    assert MIN_SAMPLES <= bot.deals <= MIN_SAMPLES + allowed


def test_a_real_clock_budget_gives_a_legal_card() -> None:
    bot = MonteCarloBot(seed=1, budget=0.005)
    view = opening_lead()
    assert bot.play(view) in view.legal
    assert bot.deals >= MIN_SAMPLES


def test_options_are_checked() -> None:
    with pytest.raises(TypeError, match="sample"):
        MonteCarloBot(sample=3)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="samples"):
        MonteCarloBot(samples=0)
    with pytest.raises(ValueError, match="budget"):
        MonteCarloBot(budget=0.0)


# --- what it infers, and the deals it samples ---------------------------------------------------

# Seat 1 holds no heart, seat 2 no club and no spade (trumps).
INFERENCE = [
    "TD 2H 3H 4H 5H 6H 7H 2C 3C 4C 5C 6C 7C",
    "2S 3S 4S 8C 9C TC JC QC KC AC 2D 3D 4D",
    "AH KH QH JH TH 5D 6D 7D 8D 9D JD QD KD",
    "8H 9H AS KS QS JS TS 9S 8S 7S 6S 5S AD",
]


def inference_view(rules: Rules, moves: str, seat: int = 0) -> SeatView:
    """The deal above, the lowest calls, then ``moves``; the view of ``seat``."""
    game = game_with(INFERENCE, rules)
    for _ in range(4):
        game.call(rules.min_call)
    for card in moves.split():
        game.play(card)
    return game.view(seat)


def sampled_hands(view: SeatView, seat: int, count: int = 300) -> list[int]:
    """``seat``'s hand in ``count`` deals sampled for the seat of ``view``."""
    knowledge = Knowledge(view)
    rng = random.Random(5)
    return [knowledge.sample(rng)[seat] for _ in range(count)]


def test_a_seat_that_failed_to_follow_hearts_is_never_dealt_hearts() -> None:
    # Seat 0 leads 2H; seat 1, out of hearts, must trump (2S); seats 2 and 3 follow to a trumped trick.
    view = inference_view(Rules.profile("nepali"), "2H 2S AH 8H")
    hearts = SUIT_MASK[Suit.HEARTS]
    dealt = sampled_hands(view, 1)
    assert all(not hand & hearts for hand in dealt)
    assert all(hand.bit_count() == 12 for hand in dealt)
    # The five unseen hearts go to the two seats that may hold them.
    assert all((hand & hearts).bit_count() == 5 - (other & hearts).bit_count()
               for hand, other in zip(sampled_hands(view, 2), sampled_hands(view, 3), strict=True))
    assert any(hand & hearts for hand in sampled_hands(view, 2))


def test_a_seat_that_did_not_trump_holds_no_trump_under_must_trump() -> None:
    # Seat 1 leads 8C; seat 2, out of clubs, throws 5D: under must_trump it holds no spade either.
    moves = "2H 2S AH 8H 8C 5D"
    dealt = sampled_hands(inference_view(Rules.profile("nepali"), moves), 2)
    assert all(not hand & (SUIT_MASK[Suit.SPADES] | SUIT_MASK[Suit.CLUBS]) for hand in dealt)
    # Without must_trump the same throw says nothing about its trumps.
    free = sampled_hands(inference_view(Rules.profile("nepali", must_trump=False), moves), 2)
    assert all(not hand & SUIT_MASK[Suit.CLUBS] for hand in free)
    assert any(hand & SUIT_MASK[Suit.SPADES] for hand in free)


def test_a_seat_that_followed_low_under_must_beat_holds_nothing_higher() -> None:
    # Seat 0 leads TD; seat 1 follows with 3D, which does not beat it: under must_beat it holds no
    # diamond above TD. (Seats 2 and 3 beat in turn with JD and AD.)
    higher = Hand.parse("QD KD").mask  # the unseen diamonds above TD
    dealt = sampled_hands(inference_view(Rules.profile("nepali"), "TD 3D JD AD"), 1)
    assert all(not hand & higher for hand in dealt)
    # Without must_beat, following low says nothing.
    free = sampled_hands(inference_view(Rules.profile("nepali", must_beat=False), "TD 3D JD AD"), 1)
    assert any(hand & higher for hand in free)


def test_inferences_hold_against_the_real_deal() -> None:
    """In real games under every profile, no seat ever holds a card the bot thinks it cannot, and
    every sampled deal keeps the hand sizes, the cards and the exclusions."""
    rng = random.Random(3)
    for number, profile in enumerate(PROFILES, 1):
        rules = Rules.profile(profile)
        game = Game(rules, seeded_deals(41, number))
        bots = [RandomBot(seat) if (seat + number) % 2 else HeuristicBot(seat) for seat in range(4)]
        while not game.over:
            seat = game.current_seat
            view = game.view(seat)
            if game.phase is Phase.CALLING:
                game.call(bots[seat].call(view))
                continue
            knowledge = Knowledge(view)
            held = game.round.hands
            for other in range(4):
                assert not knowledge.cannot[other] & held[other], (profile, other)
            dealt = knowledge.sample(rng)
            assert dealt[seat] == held[seat]
            assert dealt[0] | dealt[1] | dealt[2] | dealt[3] == held[0] | held[1] | held[2] | held[3]
            for other in range(4):
                assert dealt[other].bit_count() == held[other].bit_count()
                assert not dealt[other] & knowledge.cannot[other]
            game.play(bots[seat].play(view))


def test_calls_weigh_deals_that_give_the_high_cards_to_the_high_caller() -> None:
    game = game_with(INFERENCE)
    for call in (1, 7):  # seat 0 calls 1, seat 1 calls 7; seat 2 is to call
        game.call(call)
    view = game.view(2)
    knowledge = Knowledge(view)
    strong = Hand.parse("AS KS QS JS 9S AC KC 2D 3D 4D 2C 3C 4C").mask  # counted at about 7 tricks
    weak = Hand.parse("2H 3H 4H 5H 6H 7H 5C 6C 7C 8C 2S 3S 4S").mask
    filler = FULL_DECK & ~(strong | weak | view.hand.mask)
    assert filler.bit_count() == 13
    as_called = knowledge.weight([weak, strong, view.hand.mask, filler])
    swapped = knowledge.weight([strong, weak, view.hand.mask, filler])
    assert as_called > 0.9
    assert swapped < 0.001 * as_called


# --- calling --------------------------------------------------------------------------------------

WEAK = "2S 3H 4H 5H 7H 2D 3D 4D 5D 2C 3C 4C 5C"
STRONG = "AS KS QS JS TS 9S 8S 7S AH KH AD KD AC"


def game_before_calls(hand: str = WEAK, rules: Rules | None = None) -> SeatView:
    """The view of seat 0, first to call, holding ``hand``."""
    return game_with([hand, *rest_of_deck(hand)], rules).view(0)


@pytest.mark.parametrize("profile", list(PROFILES))
def test_a_weak_hand_calls_the_minimum_and_a_strong_one_a_lot(profile: str) -> None:
    rules = Rules.profile(profile)
    bot = MonteCarloBot(seed=2, samples=16)
    assert bot.call(game_before_calls(WEAK, rules)) == rules.min_call
    strong = bot.call(game_before_calls(STRONG, rules))
    assert strong >= min(10, rules.max_call)


# --- over real gRPC ------------------------------------------------------------------------------


def test_over_grpc_it_plays_as_in_process(bots: Bots) -> None:
    """Launched through its ``__main__`` as a network bot, with a sample count, it makes the very
    decisions it makes in-process with the same seed (the heuristic bots at the table are seeded too)."""
    names = ["mc", "h1", "h2", "h3"]
    rules = Rules.profile("nepali")

    async def scenario() -> GameRecord:
        async with arena(names, rules) as (server, port):
            bots.start("mc", [str(MONTECARLO_BOT), "--arena", f"127.0.0.1:{port}", "--token", token("mc"),
                              "--seed", "5", "--option", f"samples={SAMPLES}"])
            for seed, name in enumerate(names[1:], 1):
                bots.heuristic(port, name, seed=seed)
            return await seat_and_play(server, names, seeded_deals(43, 1), game_number=1, first_dealer=3, timeout=30)

    record = run(scenario())
    assert record.faults == []
    check_record(record, rules)
    assert sum(sum(f) for f in record.fallbacks) == 0
    for proc in bots.processes:
        assert proc.wait(10) == 0, proc.stderr()
    game = Game(rules, seeded_deals(43, 1), game_number=1, first_dealer=3)
    local: Sequence[Any] = [MonteCarloBot(seed=5, samples=SAMPLES), HeuristicBot(1), HeuristicBot(2), HeuristicBot(3)]
    play_out(game, local)
    assert [(r.calls, r.tricks) for r in record.rounds] == [(r.calls, r.tricks) for r in game.results]
    assert list(record.totals) == game.totals
