"""Random-play deals per second through the rules core, in-process on one core.

Each deal: a seeded deal (SHA-256 stream and Fisher-Yates), four random legal calls, then 52
random legal cards, asking the core for the legal set at every decision. Prints the median of
several timed repetitions, with and without the dealing, beside a minimal fully inlined bitmask
loop measured in the same process (the reference), and the ratio of the two with its target. The
modes take turns in slices of 100 deals, and the rates are per second of CPU time, so that a
machine shared with other work slows them all alike.

With ``--baseline DIR``, the rules core of DIR (another copy of the project, e.g. ``git worktree add
/tmp/before <commit>``) is timed the same way, each repetition of each tree in a process of its own,
the trees taking turns; each process has its own reference, so each tree has its own ratio, and
each mode's rate is divided by the baseline's, repetition by repetition (a change to the rules
core should leave these within noise of 1.0).

    python benchmarks/engine.py [--seconds 3] [--repeats 5] [--profile nepali] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from arena.core.cards import ABOVE, SUIT_MASK, SUIT_OF
from arena.core.dealing import seeded_deal
from arena.core.game import Round
from arena.core.rules import Rules

TARGET = 30_000
RATIO_TARGET = 0.8
ROOT = Path(__file__).resolve().parent.parent


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
    "duplicate": "each seeded deal played 4 times from the same dealer, as in the 4 rotations of a duplicate "
                 "deal set (only the bots change seats, which the rules core cannot tell)",
    "play-only": "one deal replayed (the engine alone)",
    "reference": "a minimal inlined bitmask loop with random.shuffle, no state machine",
}


class Mode:
    """One way of playing deals, resumable: it plays a slice of deals at a time."""

    def __init__(self, rules: Rules, mode: str) -> None:
        self.rules = rules
        self.mode = mode
        self.bot = RandomBot(rules, 7)
        self.reference = random.Random(7)
        self.fixed = seeded_deal(1, 1, 1).masks
        self.reuse = {"fresh": 1, "duplicate": 4}.get(mode, 0)
        self.masks = self.fixed
        self.deals = 0
        self.cpu = 0.0
        """Seconds of CPU time spent playing."""

    def play(self, deals: int) -> None:
        start = time.process_time()
        for _ in range(deals):
            n = self.deals
            self.deals = n + 1
            if self.mode == "reference":
                reference_deal(self.reference)
                continue
            if self.reuse and n % self.reuse == 0:
                k = n // self.reuse
                self.masks = seeded_deal(1, k // 1000 + 1, k % 1000 + 1).masks
            play_deal(self.rules, self.masks, self.bot)
        self.cpu += time.process_time() - start


def run(rules: Rules, seconds: float, modes: list[str]) -> dict[str, float]:
    """Deals per second of CPU time of each mode, the modes taking turns in slices of 100 deals until
    each has run ``seconds``. CPU time, not the clock, and short turns: on a shared machine the clock
    also counts other processes' turns on the core, and whatever slows the core slows every mode alike."""
    players = [Mode(rules, mode) for mode in modes]
    while min(player.cpu for player in players) < seconds:
        for player in players:
            player.play(100)
    return {player.mode: player.deals / player.cpu for player in players}


def measured(profile: str, seconds: float, tree: Path) -> dict[str, float]:
    """:func:`run` of every mode in a process of its own, with the code of ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, __file__, "--profile", profile, "--child", str(seconds)], env=env,
                         cwd=tree, capture_output=True, text=True, check=True).stdout
    return {mode: float(rate) for mode, rate in json.loads(out.splitlines()[-1]).items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds of each mode in one repetition")
    parser.add_argument("--repeats", type=int, default=5, help="timed repetitions (the median is reported)")
    parser.add_argument("--profile", default="nepali", help="rules profile to play")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="another copy of the project to time the same way, interleaved")
    parser.add_argument("--child", type=float, metavar="SECONDS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    rules = Rules.profile(args.profile)
    if args.child:
        print(json.dumps(run(rules, args.child, list(MODES))))
        return 0
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}, profile {args.profile}")
    trees = {"": ROOT} if args.baseline is None else {"": ROOT, " (before)": args.baseline.resolve()}
    results: dict[str, list[dict[str, float]]] = {label: [] for label in trees}
    for _ in range(args.repeats):  # the trees take turns too
        for label, tree in trees.items():
            rates = run(rules, args.seconds, list(MODES)) if args.baseline is None else measured(
                args.profile, args.seconds, tree)
            results[label].append(rates)
    for mode in MODES:
        for label, runs in results.items():
            rates = [r[mode] for r in runs]
            print(
                f"{mode + label:19s} min {min(rates):>8,.0f}  median {statistics.median(rates):>8,.0f}  "
                f"max {max(rates):>8,.0f} deals per CPU second" + ("" if label else f"  ({MODES[mode]})")
            )
    if args.baseline is not None:
        for mode in MODES:
            pairs = zip(results[""], results[" (before)"], strict=True)
            ratio = statistics.median(now[mode] / before[mode] for now, before in pairs)
            print(f"{mode} / {mode} (before), repetition by repetition: {ratio:.3f} (median)")
    for label, runs in results.items():
        ratio = statistics.median(r["duplicate"] / r["reference"] for r in runs)
        print(f"duplicate{label} / reference, the same process's: {ratio:.2f} (median of the repetitions; "
              f"target >= {RATIO_TARGET})")
    print(
        f"target: >= {TARGET:,} deals/s (duplicate mode; set where the reference loop ran at about "
        "38,000 deals/s, so compare the ratio on a slower machine)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
