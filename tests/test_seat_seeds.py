"""Seat seeds (common random numbers) that give no hand away: every seat's view carries a seed keyed by the event's
secret key and made of what the seat is told, the same in every rotation of a deal set whoever sits there,
in-process, over gRPC and in the workers; the key is kept in the results folder (mode 0600) and read back on
resume; and a seat that enumerates the deals its view allows, as an attacker did with the old seed, cannot tell
the true deal from the others."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import stat
from collections import defaultdict
from pathlib import Path

import pytest

from arena.core.cards import SUIT_MASK, SUIT_OF, Hand
from arena.core.dealing import SEAT_KEY_BYTES, Deal, DealSource, seat_seed, seeded_deal, seeded_deals
from arena.core.game import Game, Phase
from arena.core.rules import Rules
from arena.core.views import SeatView
from arena.errors import ConfigError, RecordsError
from arena.event.setup.config import parse_config
from arena.ladder.blocks import block_seat_key
from arena.rating.zoo import block_seat_key as zoo_seat_key
from arena.records.store import ResultsStore
from sample_bots.montecarlo_bot import Knowledge, MonteCarloBot
from tests.helpers.runs import UNSANDBOXED, records, run, write

KEY = bytes(range(SEAT_KEY_BYTES))
"""The key of the pinned example in docs/dealing.md: the bytes 0, 1, ..., 31."""

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


def _seen(logs: list[Path]) -> list[dict[str, int]]:
    return [json.loads(line) for log in logs if log.exists() for line in log.read_text().splitlines()]


def _spies(spy: Path, logs: dict[str, Path], command: tuple[str, ...] = ()) -> str:
    """``[[bots]]`` tables of spies: in-process, or over gRPC for the names in ``command``."""
    return "".join(
        f'\n[[bots]]\nname = "{name}"\ncommand = "{{python}} {spy} --arena {{address}} --option log={log}"\n'
        if name in command else
        f'\n[[bots]]\nname = "{name}"\npython = "{spy}:Spy"\noptions = {{ log = "{log}" }}\n'
        for name, log in logs.items()
    )


def _config(tmp_path: Path, *, deal_sets: int = 1, command: tuple[str, ...] = (), tournament: str = "") -> Path:
    spy = write(tmp_path / "spy.py", SPY)
    logs = {name: tmp_path / f"{name}.jsonl" for name in ("a", "b", "c", "d")}
    text = (f'[tournament]\nname = "crn"\nseed = 11\ndeal_sets = {deal_sets}\nconcurrency = 2\n{tournament}'
            '[rules]\nprofile = "nepali"\nrounds = 2\n[time]\ndeadline_ms = 10000\n' + UNSANDBOXED
            + _spies(spy, logs, command))
    return write(tmp_path / "t.toml", text)


def _the_seeds_follow_from_the_folders_key(results: Path, seen: list[dict[str, int]]) -> None:
    """Every seed a bot saw is the documented digest, under the key the results folder keeps, of its deal set,
    round, seat and the cards the records say it was dealt."""
    key = bytes.fromhex((results / "seat_key").read_text())
    # Every rotation of a deal set deals each seat the same cards.
    dealt = {(r["deal_set"], r["round"]): [Hand.parse(text).mask for text in r["hands"]] for r in records(results)}
    assert seen
    for view in seen:
        hand = dealt[view["deal_set"], view["round"]][view["seat"]]
        assert view["hand"] == hand
        assert view["seat_seed"] == seat_seed(key, view["deal_set"], view["round"], view["seat"], hand)


# -- the algorithm ---------------------------------------------------------------------------------


def test_the_seed_is_the_documented_keyed_digest() -> None:
    hand = seeded_deal(7, 1, 1).masks[2]
    message = f"callbreak-arena/seat-seed/v2/3/2/1/{hand}".encode()
    assert seat_seed(KEY, 3, 2, 1, hand) == int.from_bytes(hmac.digest(KEY, message, "sha256")[:8], "big")
    # Pinned: another language following docs/dealing.md gets this very number.
    hand = seeded_deal(2026, 1, 1).masks[0]
    assert hand == 291508582646608 and str(Hand(hand)) == "JS TS 8S 6S KH QH 7H 4H KD 5D JC 6C 3C"
    assert seat_seed(KEY, 1, 1, 0, hand) == 0x0DDEAD30A578D8F2
    assert seat_seed(bytes(32), 1, 1, 0, hand) != seat_seed(KEY, 1, 1, 0, hand)  # the key counts


def test_without_a_key_the_views_carry_no_seed() -> None:
    game = Game(Rules.profile("nepali"), seeded_deals(5, 1))
    assert [game.view(seat).seat_seed for seat in range(4)] == [0, 0, 0, 0]
    with pytest.raises(ValueError, match="must not be empty"):
        Game(Rules.profile("nepali"), seeded_deals(5, 1), seat_key=b"")


def test_every_seat_and_round_has_its_own_seed_in_the_view() -> None:
    game = Game(Rules.profile("nepali"), seeded_deals(5, 3), game_number=3, seat_key=KEY)
    seen: dict[tuple[int, int], set[int]] = {}
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


# -- the attack ------------------------------------------------------------------------------------


def _v1_seed(hands: tuple[int, int, int, int], seat: int) -> int:
    """The seed as docs/dealing.md used to give it: SHA-256 of the four dealt hands and the seat."""
    key = "callbreak-arena/seat-seed/v1/{}/{}/{}/{}/{}".format(*hands, seat).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") or 1


def _deals_the_view_allows(view: SeatView) -> list[tuple[int, int, int, int]]:
    """Every deal (the four dealt hands by seat) that fits what ``view``'s seat knows: its own cards, who played
    which card, and the suits each seat has shown it lacks; the unseen cards shared out every way that fits."""
    seat = view.seat
    played = [0, 0, 0, 0]
    void = [0, 0, 0, 0]
    for leader, cards in [(t.leader, t.cards) for t in view.tricks] + [(view.leader, view.trick)]:
        for k, card in enumerate(cards):
            who = (leader + k) % 4
            played[who] |= 1 << card.index
            if SUIT_OF[card.index] != SUIT_OF[cards[0].index]:
                void[who] |= SUIT_MASK[SUIT_OF[cards[0].index]]
    own = view.hand_mask | played[seat]
    unseen = [i for i in range(52) if not (own | sum(played)) >> i & 1]
    others = [s for s in range(4) if s != seat]
    need = [13 - played[s].bit_count() for s in others]
    allowed = [sum(1 << i for i in unseen if not void[s] >> i & 1) for s in others]
    found = []
    for first in itertools.combinations([i for i in unseen if allowed[0] >> i & 1], need[0]):
        taken = sum(1 << i for i in first)
        rest = [i for i in unseen if not taken >> i & 1]
        for second in itertools.combinations([i for i in rest if allowed[1] >> i & 1], need[1]):
            given = sum(1 << i for i in second)
            third = sum(1 << i for i in rest if not given >> i & 1)
            if third & ~allowed[2]:
                continue
            hands = [0, 0, 0, 0]
            hands[seat] = own
            for other, held in zip(others, (taken, given, third), strict=True):
                hands[other] = held | played[other]
            found.append((hands[0], hands[1], hands[2], hands[3]))
    return found


def test_a_late_seat_cannot_single_out_the_deal_from_its_seed() -> None:
    """The attack as it was made: late in a round, a seat lists the deals its view allows and hashes each with
    the documented algorithm. The old seed matched the true deal alone; the keyed seed matches none, and the
    arena hands the same seed whichever of those deals it had dealt, so even the key would not tell them apart."""
    rules = Rules.profile("nepali")
    game = Game(rules, seeded_deals(2024, 4), game_number=4, seat_key=KEY)
    while game.phase is Phase.CALLING or len(game.round.winners) < 9:  # to the start of the tenth trick
        view = game.view(game.current_seat)
        if game.phase is Phase.CALLING:
            game.call(min(view.legal_calls))
        else:
            game.play_index((view.legal_mask & -view.legal_mask).bit_length() - 1)
    seat = (game.current_seat + 1) % 4
    view = game.view(seat)
    dealt = game.round.initial
    candidates = _deals_the_view_allows(view)
    # Twelve unseen cards, four to each other seat (none of them has shown a void here): 12! / (4! 4! 4!) deals.
    assert dealt in candidates and len(candidates) == 34_650

    # The old seed singled the true deal out: what the attacker read off the view before.
    assert [c for c in candidates if _v1_seed(c, seat) == _v1_seed(dealt, seat)] == [dealt]
    # The seed the view carries now matches none of them under the old algorithm...
    assert [c for c in candidates if _v1_seed(c, seat) == view.seat_seed] == []
    # ... nor under a key the attacker guesses (every candidate gives it the same number: its own cards'),
    guessed = {seat_seed(bytes(32), 4, 1, seat, c[seat]) for c in candidates}
    assert len(guessed) == 1 and view.seat_seed not in guessed
    # ... and the arena, dealing any of them, would have handed this seat this very seed.
    for candidate in candidates[:: max(1, len(candidates) // 50)]:
        other = Game(rules, _dealt(candidate, game.round.dealer), game_number=4, first_dealer=game.first_dealer,
                     seat_key=KEY)
        assert other.round.initial == candidate and other.view(seat).seat_seed == view.seat_seed


def _dealt(hands: tuple[int, int, int, int], dealer: int) -> DealSource:
    """A deal source that deals ``hands`` (by seat) in round 1 with ``dealer`` dealing."""
    deck = [0] * 52
    for position in range(4):
        seat = (dealer + 1 + position) % 4
        cards = [i for i in range(52) if hands[seat] >> i & 1]
        for k, card in enumerate(cards):
            deck[4 * k + position] = card
    deal = Deal(tuple(deck))
    return lambda round_number, attempt: deal


# -- the event's key -------------------------------------------------------------------------------


def test_every_rotation_hands_the_seat_the_same_seed_in_process_and_over_grpc(tmp_path: Path) -> None:
    results = tmp_path / "results"
    summary = run(_config(tmp_path, deal_sets=2, command=("c", "d")), results)
    assert (summary.played, summary.faults) == (8, 0)
    seen = _seen([tmp_path / f"{name}.jsonl" for name in "abcd"])
    by_position: dict[tuple[int, int, int], list[tuple[str, int, int]]] = defaultdict(list)
    for name in "abcd":
        for view in _seen([tmp_path / f"{name}.jsonl"]):
            by_position[view["deal_set"], view["round"], view["seat"]].append((name, view["seat_seed"], view["hand"]))
    assert len(by_position) == 2 * 2 * 4
    for position, views in by_position.items():
        # Four rotations: each of the four bots sat here once, two in-process and two over gRPC...
        assert sorted(name for name, _, _ in views) == ["a", "b", "c", "d"], position
        # ... with the same cards and the same seed.
        assert len({(seed, hand) for _, seed, hand in views}) == 1, position
    seeds = {views[0][1] for views in by_position.values()}
    assert len(seeds) == 16 and 0 not in seeds
    _the_seeds_follow_from_the_folders_key(results, seen)


def test_the_key_is_the_folders_alone_and_a_resumed_event_hands_out_the_same_seeds(tmp_path: Path) -> None:
    results = tmp_path / "results"
    config = _config(tmp_path)
    assert run(config, results).played == 4
    key_file = results / "seat_key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text()
    assert len(bytes.fromhex(key)) == SEAT_KEY_BYTES and key.endswith("\n")
    # Never in a record line, the manifest or any other file of the folder.
    for path in results.rglob("*"):
        if path.is_file() and path != key_file:
            assert key.strip() not in path.read_text(errors="replace"), path
    first = _seen([tmp_path / f"{name}.jsonl" for name in "abcd"])

    # A game lost (the arena stopped before its end) is played again on resume: with the same seeds.
    lines = (results / "records.jsonl").read_text().splitlines(keepends=True)
    lost = json.loads(lines[-1])["game"]
    (results / "records.jsonl").write_text("".join(line for line in lines if json.loads(line)["game"] != lost))
    assert run(config, results).played == 1
    assert key_file.read_text() == key
    again = _seen([tmp_path / f"{name}.jsonl" for name in "abcd"])[len(first):]
    assert len(again) == 4 * 2  # four seats, two rounds
    assert {json.dumps(view) for view in again} <= {json.dumps(view) for view in first}
    _the_seeds_follow_from_the_folders_key(results, again)

    # A fresh start is a new event: a new key.
    assert run(config, results, fresh=True).played == 4
    assert key_file.read_text() != key


@pytest.mark.parametrize("backend", [
    "workers = 2\n",
    pytest.param('backend = "ray"\n', marks=pytest.mark.slow, id="ray"),
])
def test_the_workers_and_ray_tasks_hand_out_the_events_seeds(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest,
) -> None:
    if "ray" in backend:
        request.getfixturevalue("ray_session")
    results = tmp_path / "results"
    summary = run(_config(tmp_path, deal_sets=2, tournament=backend), results)
    assert (summary.played, summary.faults) == (8, 0)
    _the_seeds_follow_from_the_folders_key(results, _seen([tmp_path / f"{name}.jsonl" for name in "abcd"]))


def test_a_fixed_key_gives_the_same_seeds_and_is_checked_against_the_folders(tmp_path: Path) -> None:
    given = "ab" * SEAT_KEY_BYTES
    config = _config(tmp_path, tournament=f'seat_key = "{given}"\n')
    assert parse_config(config.read_text()).seat_key == bytes.fromhex(given)
    assert given not in repr(parse_config(config.read_text()))
    results = tmp_path / "results"
    run(config, results)
    assert (results / "seat_key").read_text() == given + "\n"
    assert stat.S_IMODE((results / "seat_key").stat().st_mode) == 0o600
    assert given not in (results / "manifest.json").read_text()
    seen = _seen([tmp_path / f"{name}.jsonl" for name in "abcd"])
    _the_seeds_follow_from_the_folders_key(results, seen)
    other = tmp_path / "other"
    run(config, other)
    assert sorted(map(json.dumps, _seen([tmp_path / f"{name}.jsonl" for name in "abcd"])[len(seen):])) == \
        sorted(map(json.dumps, seen))  # the same key, the same seeds: a research run is reproducible

    # Not part of the identity: a folder resumes with the key given or left out, but not with another.
    assert parse_config(config.read_text()).digest() == parse_config(config.read_text().replace(
        f'seat_key = "{given}"\n', "")).digest()
    write(config, config.read_text().replace(given, "cd" * SEAT_KEY_BYTES))
    with pytest.raises(RecordsError, match=r"tournament\.seat_key is not the key .* holds"):
        run(config, results)
    assert (results / "seat_key").read_text() == given + "\n"
    for bad in ("ab" * 31, "zz" * 32, "ab" * 33, " " + "ab" * 31 + " "):
        with pytest.raises(ConfigError, match=r"tournament\.seat_key must be 64 hexadecimal digits"):
            parse_config(config.read_text().replace("cd" * SEAT_KEY_BYTES, bad))


def test_a_folder_whose_key_file_is_damaged_is_refused_in_words(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results")
    key = store.seat_key()
    assert store.seat_key() == key and store.seat_key(key) == key
    store.seat_key_path.chmod(0o644)
    assert store.seat_key() == key and stat.S_IMODE(store.seat_key_path.stat().st_mode) == 0o600
    store.seat_key_path.write_text("not a key\n")
    with pytest.raises(RecordsError, match="does not hold a seat key"):
        store.seat_key()
    store.clear()
    assert not store.seat_key_path.exists() and store.seat_key() != key


def test_the_monte_carlo_bot_draws_from_the_seat_seed() -> None:
    """The same seed and cards give the same draws; another seat seed on the same cards, other draws."""
    game = Game(Rules.profile("nepali"), seeded_deals(9, 1), seat_key=KEY)
    view = game.view(game.current_seat)

    def first_draw(seat_seed: int, seed: int = 0) -> float:
        seen = SeatView(view.public, view.seat, view.hand_mask, view.to_act, view.legal_mask, 0, seat_seed)
        return MonteCarloBot(seed, samples=12)._random(seen, Knowledge(seen)).random()

    assert view.seat_seed and first_draw(view.seat_seed) == first_draw(view.seat_seed)
    assert first_draw(view.seat_seed + 1) != first_draw(view.seat_seed)
    assert first_draw(view.seat_seed, seed=1) != first_draw(view.seat_seed)  # the bot's own seed still counts
    assert first_draw(0) != first_draw(view.seat_seed)  # no seat seed: keyed by the deal set, round and seat


def test_a_ladder_blocks_key_is_the_documented_hmac_of_the_ladders_seed() -> None:
    """docs/ladder.md: HMAC-SHA256 keyed by the ladder's seed (its decimal digits) of the block's key text; the
    final's is block 0's. docs/research.md: a zoo block's is SHA-256 of the pool seed and its index."""
    seed = 2**61 + 12345
    for block in (0, 1, 77):
        expected = hmac.digest(str(seed).encode(), f"callbreak-arena/ladder/seat-key/v1/{block}".encode(), "sha256")
        assert block_seat_key(seed, block) == expected and len(expected) == SEAT_KEY_BYTES
    assert block_seat_key(seed, 1) != block_seat_key(seed + 1, 1)
    assert zoo_seat_key(20261202, 3) == hashlib.sha256(b"callbreak-arena/zoo/seat-key/v1/20261202/3").digest()
