"""Schedules: who sits where on which deals, with stable ids, for every format."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from math import comb

import pytest

from arena.event.plan.schedule import Assignment, Schedule, affine_plane_16, seatings
from arena.event.setup.formats import SwissOptions, schedule_options


def names(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(1, n + 1)]


def schedule(n: int | Sequence[str], fmt: str = "round-robin", *, rounds: int = 2, rotation: str = "cyclic",
             seed: int = 1, **options: object) -> Schedule:
    bots = names(n) if isinstance(n, int) else list(n)
    return Schedule(bots=bots, format=fmt, rotation=rotation, deal_sets=list(range(1, rounds + 1)), seed=seed,
                    options=schedule_options(fmt, options))


def blocks(assignments: Iterable[Assignment]) -> dict[str, list[Assignment]]:
    out: dict[str, list[Assignment]] = {}
    for a in assignments:
        out.setdefault(a.block, []).append(a)
    return out


def pair_meetings(groups: Iterable[Sequence[str]]) -> Counter[frozenset[str]]:
    counts: Counter[frozenset[str]] = Counter()
    for group in groups:
        for a, b in itertools.combinations(group, 2):
            counts[frozenset((a, b))] += 1
    return counts


def check_block(games: Sequence[Assignment], rotation: str) -> None:
    """One block: one deal set, one group, every seating of it, each bot in each seat equally."""
    assert len({(g.round, g.group, g.deal_set) for g in games}) == 1
    assert [g.rotation for g in games] == list(range(4 if rotation == "cyclic" else 24))
    assert len({g.seats for g in games}) == len(games)
    group = set(games[0].seats)
    assert len(group) == 4
    for seat in range(4):
        held = Counter(g.seats[seat] for g in games)
        assert set(held) == group
        assert set(held.values()) == {len(games) // 4}
    assert len({g.first_dealer for g in games}) == 1


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8])
def test_round_robin_up_to_8_bots_plays_every_group_of_four(n: int) -> None:
    s = schedule(n, rounds=3)
    games = list(s)
    assert len(games) == comb(n, 4) * 4 * 3
    assert s.house == []
    for round_number in (1, 2, 3):
        in_round = [g for g in games if g.round == round_number]
        assert {g.deal_set for g in in_round} == {round_number}  # every group plays the same deal set
        groups = {frozenset(g.seats) for g in in_round}
        assert groups == {frozenset(c) for c in itertools.combinations(names(n), 4)}
    for block in blocks(games).values():
        check_block(block, "cyclic")


def test_cyclic_rotation_moves_each_bot_one_seat_on() -> None:
    rotations = seatings(["a", "b", "c", "d"], "cyclic")
    assert rotations == [("a", "b", "c", "d"), ("d", "a", "b", "c"), ("c", "d", "a", "b"), ("b", "c", "d", "a")]


def test_full_rotation_gives_24_distinct_seatings() -> None:
    s = schedule(5, rotation="full", rounds=1)
    assert s.rotations == 24
    games = list(s)
    assert len(games) == 5 * 24
    for block in blocks(games).values():
        check_block(block, "full")
        assert {g.seats for g in block} == set(itertools.permutations(block[0].seats))


def test_ids_are_unique_and_stable_across_schedules() -> None:
    for fmt, n, options in [
        ("round-robin", 6, {}), ("round-robin", 12, {}), ("round-robin", 16, {}),
        ("gauntlet", 6, {"champion": "bot01"}),
        ("head-to-head", 5, {"a": "bot01", "b": "bot02", "opponents": ["bot03", "bot04", "bot05"]}),
    ]:
        one = list(schedule(n, fmt, rounds=4, seed=9, **options))
        two = list(schedule(n, fmt, rounds=4, seed=9, **options))
        assert one == two
        ids = [a.id for a in one]
        assert len(set(ids)) == len(ids)
        assert all(a.id == f"r{a.round}-g{a.group}-d{a.deal_set}-p{a.rotation}" for a in one)
        assert all(a.id.startswith(a.block + "-p") for a in one)
        # Another seed changes the draw, not the ids' shape.
        assert len(list(schedule(n, fmt, rounds=4, seed=10, **options))) == len(one)


def test_ids_do_not_depend_on_which_rounds_were_asked_before() -> None:
    # Resume asks the rounds in order again; a schedule built afresh must give the same games.
    s = schedule(12, rounds=6)
    first = [s.round_assignments(r) for r in range(1, 7)]
    again = schedule(12, rounds=6)
    assert [again.round_assignments(r) for r in range(1, 7)] == first
    assert s.round_assignments(3) == first[2]  # asking a round twice gives the same games


def test_seat_order_varies_between_blocks() -> None:
    # Which bot sits on whose left is shuffled per block: not always the sorted order.
    orders = {g.seats for g in schedule(8, rounds=2) if g.rotation == 0}
    assert any(list(seats) != sorted(seats) for seats in orders)


def test_affine_plane_16_is_a_resolvable_design() -> None:
    classes = affine_plane_16()
    assert len(classes) == 5
    for parallel in classes:
        assert sorted(p for line in parallel for p in line) == list(range(16))
    assert set(pair_meetings(line for parallel in classes for line in parallel).values()) == {1}
    assert len(pair_meetings(line for parallel in classes for line in parallel)) == comb(16, 2)


def test_16_bots_meet_every_other_bot_exactly_once_every_5_rounds() -> None:
    s = schedule(16, rounds=10)
    assert s.house == []
    for start in (1, 6):
        groups = [g for r in range(start, start + 5) for g in s.groups(r)]
        meetings = pair_meetings(groups)
        assert len(meetings) == comb(16, 2)
        assert set(meetings.values()) == {1}
    for r in range(1, 11):
        round_groups = s.groups(r)
        assert len(round_groups) == 4
        assert sorted(b for g in round_groups for b in g) == sorted(names(16))
    assert s.total() == len(list(s)) == 4 * 4 * 10


@pytest.mark.parametrize(("n", "house"), [(9, 3), (10, 2), (11, 1), (12, 0), (13, 3), (20, 0), (28, 0)])
def test_large_round_robin_is_padded_with_house_bots(n: int, house: int) -> None:
    s = schedule(n, rounds=3)
    assert len(s.house) == house
    assert len(s.bots) % 4 == 0 and len(s.bots) == n + house
    assert set(s.house).isdisjoint(names(n))
    for r in (1, 2, 3):
        groups = s.groups(r)
        assert sorted(b for g in groups for b in g) == sorted(s.bots)  # a partition, everyone plays
    games = list(s)
    assert len(games) == len(s.bots) // 4 * 4 * 3 == s.total()
    for block in blocks(games).values():
        check_block(block, "cyclic")


def test_house_bots_never_take_the_name_of_a_real_bot() -> None:
    s = schedule(["house-1", *names(8)], rounds=2)
    assert len(s.house) == 3 and "house-1" not in s.house
    assert len(set(s.bots)) == len(s.bots) == 12
    for r in (1, 2):
        assert all(len(set(g)) == 4 for g in s.groups(r))


@pytest.mark.parametrize(("n", "rounds", "spread"), [(12, 33, 4), (20, 57, 4), (28, 81, 4)])
def test_greedy_balancing_keeps_pair_meetings_even(n: int, rounds: int, spread: int) -> None:
    # Enough rounds for every pair to meet 9 times on average. The greedy partition does not reach
    # the ideal spread of 1 (an exact resolvable design): measured over seeds 1-20 it keeps
    # max - min at 2 to 4 meetings, whatever the number of rounds; the bound asserted is that.
    s = schedule(n, rounds=rounds)
    meetings = pair_meetings(g for r in range(1, rounds + 1) for g in s.groups(r))
    counts = [meetings[frozenset(p)] for p in itertools.combinations(names(n), 2)]
    assert min(counts) >= 5  # every pair has met, and often (measured: 7 or more)
    assert max(counts) - min(counts) <= spread
    assert abs(sum(counts) / len(counts) - 9) < 1e-9


def test_gauntlet_puts_the_champion_at_every_table() -> None:
    s = schedule(6, "gauntlet", rounds=2, champion="bot03")
    games = list(s)
    assert all("bot03" in g.seats for g in games)
    groups = {frozenset(g.seats) for g in games}
    field = [b for b in names(6) if b != "bot03"]
    assert groups == {frozenset(("bot03", *trio)) for trio in itertools.combinations(field, 3)}
    assert len(games) == comb(5, 3) * 4 * 2 == s.total()
    for block in blocks(games).values():
        check_block(block, "cyclic")


def test_head_to_head_with_a_pool_draws_two_opponents_per_block() -> None:
    pool = ["bot03", "bot04", "bot05", "bot06"]
    s = schedule(6, "head-to-head", rounds=12, a="bot01", b="bot02", opponents=pool)
    games = list(s)
    assert len(games) == 12 * 4 == s.total()
    assert s.copies == {}
    drawn: Counter[str] = Counter()
    for block in blocks(games).values():
        check_block(block, "cyclic")
        for g in block:
            ia, ib = g.seats.index("bot01"), g.seats.index("bot02")
            assert (ia - ib) % 4 == 2  # A and B opposite each other
        opponents = set(block[0].seats) - {"bot01", "bot02"}
        assert len(opponents) == 2 and opponents <= set(pool)
        drawn.update(opponents)
    assert set(drawn) == set(pool)  # the draw uses the whole pool over 12 blocks


def test_head_to_head_without_a_pool_plays_two_copies_of_each() -> None:
    s = schedule(["v1", "v2"], "head-to-head", rounds=3, a="v2", b="v1", opponents=[])
    assert s.copies == {"v2#2": "v2", "v1#2": "v1"}
    games = list(s)
    assert len(games) == 12 == s.total()
    for block in blocks(games).values():
        check_block(block, "cyclic")
        assert set(block[0].seats) == {"v2", "v1", "v2#2", "v1#2"}
        for g in block:
            assert (g.seats.index("v2") - g.seats.index("v1")) % 4 == 2


def test_swiss_opens_balanced_then_follows_the_standings() -> None:
    bots = names(8)
    standings: dict[str, float] = {}
    s = Schedule(bots=bots, format="swiss", rotation="cyclic", deal_sets=[1, 2, 3, 4], seed=3,
                 options=SwissOptions(opening_rounds=2), standings=lambda: standings)
    assert s.adaptive
    for r in (1, 2):
        groups = s.groups(r)
        assert sorted(b for g in groups for b in g) == sorted(bots)
    # After the opening rounds, the tables are consecutive slices of the standings.
    standings.update({b: float(i) for i, b in enumerate(bots)})  # bot08 leads, bot01 is last
    assert [set(g) for g in s.groups(3)] == [set(bots[4:]), set(bots[:4])]
    standings.update({"bot01": 100.0, "bot05": 99.0, "bot02": 98.0, "bot06": 97.0})
    assert set(s.groups(4)[0]) == {"bot01", "bot05", "bot02", "bot06"}
    assert [set(g) for g in s.groups(3)] == [set(bots[4:]), set(bots[:4])]  # a planned round stays planned
    assert s.total() == 2 * 4 * 4


def test_swiss_pads_to_a_multiple_of_four() -> None:
    s = schedule(6, "swiss", rounds=3, opening_rounds=1)
    assert len(s.house) == 2
    assert all(len(g) == 4 for r in (1, 2, 3) for g in s.groups(r))
    assert s.total() == 2 * 4 * 3


FORMATS: list[tuple[str, int | list[str], Mapping[str, object]]] = [
    ("round-robin", 4, {}), ("round-robin", 7, {}), ("round-robin", 10, {}), ("round-robin", 16, {}),
    ("round-robin", 21, {}), ("gauntlet", 4, {"champion": "bot01"}), ("gauntlet", 7, {"champion": "bot07"}),
    ("head-to-head", 4, {"a": "bot01", "b": "bot02", "opponents": ["bot03", "bot04"]}),
    ("head-to-head", ["x", "y"], {"a": "x", "b": "y", "opponents": []}),
    ("sprt", 5, {"a": "bot01", "b": "bot02", "opponents": ["bot03", "bot04", "bot05"]}),
]


@pytest.mark.parametrize("rotation", ["cyclic", "full"])
@pytest.mark.parametrize(("fmt", "n", "options"), FORMATS)
def test_total_counts_the_games_iterated(
    fmt: str, n: int | list[str], options: Mapping[str, object], rotation: str
) -> None:
    s = schedule(n, fmt, rounds=3, rotation=rotation, **options)
    assert not s.adaptive
    assert s.total() == len(list(s))


def test_copies_never_take_the_name_of_a_real_bot() -> None:
    s = schedule(["a", "b", "a#2"], "head-to-head", rounds=1, a="a", b="b", opponents=[])
    assert s.copies == {"a#3": "a", "b#2": "b"}
    assert set(next(iter(s)).seats) == {"a", "b", "a#3", "b#2"}
