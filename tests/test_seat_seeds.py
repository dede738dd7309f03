"""Seat seeds (common random numbers): every seat's view carries a seed that depends only on the round's
cards and the seat, the same in every rotation of a deal set whoever sits there, in-process and over gRPC;
and the Monte Carlo bot draws from it."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

from arena.core.cards import Hand
from arena.core.dealing import seat_seed, seeded_deal, seeded_deals
from arena.core.game import Game
from arena.core.rules import Rules
from arena.core.views import SeatView
from sample_bots.montecarlo_bot import Knowledge, MonteCarloBot
from tests.helpers.runs import UNSANDBOXED, records, run, write

SPY = '''
import json, sys
from arena.botkit import Bot, run


class Spy(Bot):
    """Calls the least and plays the first legal card; writes what each call's view said."""

    name = "spy"

    def __init__(self, seed=0, log=""):
        self.log = log

    def call(self, view):
        with open(self.log, "a") as out:
            out.write(json.dumps({"deal_set": view.game_number, "round": view.round_number, "seat": view.seat,
                                  "seat_seed": view.seat_seed, "hand": view.hand.mask}) + "\\n")
        return min(view.legal_calls)

    def play(self, view):
        return min(view.legal.cards(), key=lambda card: card.index)


if __name__ == "__main__":
    raise SystemExit(run(Spy))
'''


def test_the_seed_is_the_documented_digest() -> None:
    hands = seeded_deal(7, 1, 1).masks
    key = "callbreak-arena/seat-seed/v1/{}/{}/{}/{}/2".format(*hands).encode()
    assert seat_seed(hands, 2) == int.from_bytes(hashlib.sha256(key).digest()[:8], "big")
    # Pinned: another language following docs/dealing.md gets this very number.
    assert seat_seed(seeded_deal(2026, 1, 1).masks, 0) == 0x7238EAA5884806CE


def test_every_seat_and_round_has_its_own_seed_in_the_view() -> None:
    game = Game(Rules.profile("nepali"), seeded_deals(5, 3), game_number=3)
    seen = {}
    while not game.over:
        seat = game.current_seat
        view = game.view(seat)
        seen.setdefault((view.round_number, seat), set()).add(view.seat_seed)
        if view.legal_mask:
            game.play_index((view.legal_mask & -view.legal_mask).bit_length() - 1)
        else:
            game.call(min(view.legal_calls))
    assert len(seen) == 20 and all(len(seeds) == 1 for seeds in seen.values())  # one per round and seat
    assert len({next(iter(seeds)) for seeds in seen.values()}) == 20  # and no two alike
    assert all(next(iter(seeds)) > 0 for seeds in seen.values())


def test_every_rotation_hands_the_seat_the_same_seed_in_process_and_over_grpc(tmp_path: Path) -> None:
    spy = write(tmp_path / "spy.py", SPY)
    logs = {name: tmp_path / f"{name}.jsonl" for name in ("a", "b", "c", "d")}
    bots = "".join(
        f'\n[[bots]]\nname = "{name}"\npython = "{spy}:Spy"\noptions = {{ log = "{logs[name]}" }}\n'
        for name in ("a", "b")
    ) + "".join(
        f'\n[[bots]]\nname = "{name}"\ncommand = "{{python}} {spy} --arena {{address}} --option log={logs[name]}"\n'
        for name in ("c", "d")
    )
    text = ('[tournament]\nname = "crn"\nseed = 11\ndeal_sets = 2\nconcurrency = 2\n'
            '[rules]\nprofile = "nepali"\nrounds = 2\n[time]\ndeadline_ms = 10000\n' + UNSANDBOXED + bots)
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.faults) == (8, 0)

    by_position: dict[tuple[int, int, int], list[tuple[str, int, int]]] = defaultdict(list)
    for name, log in logs.items():
        for line in log.read_text().splitlines():
            seen = json.loads(line)
            by_position[seen["deal_set"], seen["round"], seen["seat"]].append((name, seen["seat_seed"], seen["hand"]))
    assert len(by_position) == 2 * 2 * 4
    for position, seen in by_position.items():
        # Four rotations: each of the four bots sat here once, two in-process and two over gRPC...
        assert sorted(name for name, _, _ in seen) == ["a", "b", "c", "d"], position
        # ... with the same cards and the same seed.
        assert len({(seed, hand) for _, seed, hand in seen}) == 1, position
    seeds = {seen[0][1] for seen in by_position.values()}
    assert len(seeds) == 16 and 0 not in seeds
    for record in records(results):
        dealt = tuple(Hand.parse(text).mask for text in record["hands"])
        for seat in range(4):
            assert by_position[record["deal_set"], record["round"], seat][0][1] == seat_seed(dealt, seat)


def test_the_monte_carlo_bot_draws_from_the_seat_seed() -> None:
    """The same seed and cards give the same draws; another seat seed on the same cards, other draws."""
    game = Game(Rules.profile("nepali"), seeded_deals(9, 1))
    view = game.view(game.current_seat)

    def first_draw(seat_seed: int, seed: int = 0) -> float:
        seen = SeatView(view.public, view.seat, view.hand_mask, view.to_act, view.legal_mask, 0, seat_seed)
        return MonteCarloBot(seed, samples=12)._random(seen, Knowledge(seen)).random()

    assert view.seat_seed and first_draw(view.seat_seed) == first_draw(view.seat_seed)
    assert first_draw(view.seat_seed + 1) != first_draw(view.seat_seed)
    assert first_draw(view.seat_seed, seed=1) != first_draw(view.seat_seed)  # the bot's own seed still counts
    assert first_draw(0) != first_draw(view.seat_seed)  # no seat seed: keyed by the deal set, round and seat
