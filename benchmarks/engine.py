"""Random-play deals per second through the rules core, in-process on one core.

Each deal: a seeded deal (SHA-256 stream and Fisher-Yates), four random legal calls, then 52
random legal cards, asking the core for the legal set at every decision. Prints the median of
several timed repetitions, with and without the dealing, and the target.

    python benchmarks/engine.py [--seconds 3] [--repeats 5] [--profile nepali]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time

from arena.core.cards import ABOVE, SUIT_MASK, SUIT_OF
from arena.core.dealing import seeded_deal
from arena.core.game import Round
from arena.core.rules import Rules

TARGET = 30_000


class RandomBot:
    """Uniformly random legal calls and cards, from its own seeded generator."""

    def __init__(self, rules: Rules, seed: int) -> None:
        self.calls = rules.call_range
        self.random = random.Random(seed).random

    def call(self, seat: int, _round: object) -> int:
        return self.calls[int(self.random() * len(self.calls))]

    def card(self, seat: int, legal: int) -> int:
        """A uniformly random set bit of ``legal``: clear a random number of low bits, take the next."""
        k = int(self.random() * legal.bit_count())
        while k:
            legal &= legal - 1
            k -= 1
        return (legal & -legal).bit_length() - 1


def play_deal(rules: Rules, masks: tuple[int, int, int, int], bot: RandomBot) -> Round:
    """Plays one deal with random calls and random legal cards through :meth:`Round.playout`."""
    rnd = Round(rules, masks, 3, 0)
    rnd.playout(bot.call, bot.card)
    return rnd


def reference_deal(rng: random.Random) -> list[int]:
    """The reference: a minimal fully inlined bitmask playout (nepali legality, spades trump,
    random.shuffle dealing, no state machine, no checks), as in the published floor figures."""
    r = rng.random
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [0, 0, 0, 0]
    for k, c in enumerate(deck):
        hands[k & 3] |= 1 << c
    calls = [int(r() * 13) + 1 for _ in range(4)]
    won = [0, 0, 0, 0]
    leader = 0
    for _ in range(13):
        seat = leader
        legal = hands[seat]
        k = int(r() * legal.bit_count())
        while k:
            legal &= legal - 1
            k -= 1
        c = (legal & -legal).bit_length() - 1
        hands[seat] ^= 1 << c
        win = c
        win_suit = led = SUIT_OF[c]
        win_seat = seat
        for _k in range(3):
            seat = (seat + 1) & 3
            hand = hands[seat]
            legal = hand & SUIT_MASK[led]
            if legal:
                if win_suit == led and legal & ABOVE[win]:
                    legal &= ABOVE[win]
            elif not hand & SUIT_MASK[0]:
                legal = hand
            elif win_suit != 0:
                legal = hand & SUIT_MASK[0]
            else:
                legal = hand & ABOVE[win] or hand
            k = int(r() * legal.bit_count())
            while k:
                legal &= legal - 1
                k -= 1
            c = (legal & -legal).bit_length() - 1
            hands[seat] = hand ^ (1 << c)
            suit = SUIT_OF[c]
            if (suit == win_suit and c > win) or (suit == 0 and win_suit != 0):
                win, win_suit, win_seat = c, suit, seat
        won[win_seat] += 1
        leader = win_seat
    return [10 * c if w >= c else -10 * c for c, w in zip(calls, won, strict=True)]


MODES = {
    "fresh": "a new seeded deal for every deal played",
    "duplicate": "each seeded deal played in its 4 rotations, as a duplicate tournament does",
    "play-only": "one deal replayed (the engine alone)",
    "reference": "a minimal inlined bitmask loop with random.shuffle, no state machine",
}


def run(rules: Rules, seconds: float, mode: str) -> float:
    """Deals played per second over ``seconds``."""
    bot = RandomBot(rules, 7)
    fixed = seeded_deal(1, 1, 1).masks
    reuse = {"fresh": 1, "duplicate": 4}.get(mode, 0)
    masks = fixed
    n = 0
    start = time.perf_counter()
    end = start + seconds
    reference = random.Random(7)
    while True:
        for _ in range(200):
            if mode == "reference":
                reference_deal(reference)
                n += 1
                continue
            if reuse and n % reuse == 0:
                k = n // reuse
                masks = seeded_deal(1, k // 1000 + 1, k % 1000 + 1).masks
            play_deal(rules, masks, bot)
            n += 1
        now = time.perf_counter()
        if now >= end:
            return n / (now - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one timed repetition")
    parser.add_argument("--repeats", type=int, default=5, help="timed repetitions (the median is reported)")
    parser.add_argument("--profile", default="nepali", help="rules profile to play")
    args = parser.parse_args(argv)
    rules = Rules.profile(args.profile)
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}, profile {args.profile}")
    results: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(args.repeats):  # interleaved, so the modes share the machine's noise
        for mode in MODES:
            results[mode].append(run(rules, args.seconds, mode))
    for mode, runs in results.items():
        print(
            f"{mode:10s} min {min(runs):>8,.0f}  median {statistics.median(runs):>8,.0f}  "
            f"max {max(runs):>8,.0f} deals/s  ({MODES[mode]})"
        )
    ratio = statistics.median(results["duplicate"]) / statistics.median(results["reference"])
    print(f"duplicate / reference: {ratio:.2f}")
    print(
        f"target: >= {TARGET:,} deals/s (duplicate mode; set where the reference loop ran at about "
        "38,000 deals/s, so compare the ratio on a slower machine)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
