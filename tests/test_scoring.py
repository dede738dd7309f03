"""Round scores in integer tenths and their display: every worked example of RULES.md."""

from __future__ import annotations

import pytest

from arena.core.rules import Rules
from arena.core.scoring import format_score, round_score

NEPALI = Rules.profile("nepali")
STRICT = Rules.profile("strict")
PAGAT = Rules.profile("pagat")
DY = Rules.profile("dy")


# --- seed 001: one round -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("player", "call", "tricks", "tenths", "shown"),
    [
        ("you", 4, 5, 41, "4.1"),
        ("bimal", 3, 3, 30, "3"),
        ("ashma", 2, 2, 20, "2"),
        ("tulsi", 4, 3, -40, "-4"),
    ],
)
def test_seed_001_one_round(player: str, call: int, tricks: int, tenths: int, shown: str) -> None:
    score = round_score(NEPALI, call, tricks)
    assert score == tenths
    assert type(score) is int
    assert format_score(NEPALI, score) == shown


# --- seed 001: five rounds -----------------------------------------------------------------------
# The seed gives the per-round scores; these calls and tricks produce them (Tulsi calls 4, 3, 3, 5, 4
# as the seed says; Ashma never calls more than 4; each round's tricks add up to 13).
FIVE_ROUNDS = [
    # (calls you, bimal, ashma, tulsi), (tricks ...), (scores in tenths ...)
    ((4, 3, 2, 4), (5, 3, 2, 3), (41, 30, 20, -40)),
    ((3, 4, 3, 3), (3, 4, 4, 2), (30, 40, 31, -30)),
    ((5, 2, 3, 3), (4, 2, 3, 4), (-50, 20, 30, 31)),
    ((4, 3, 2, 5), (4, 4, 2, 3), (40, 31, 20, -50)),
    ((3, 3, 4, 4), (5, 2, 4, 2), (32, -30, 40, -40)),
]


@pytest.mark.parametrize(("calls", "tricks", "scores"), FIVE_ROUNDS, ids=[f"round-{r}" for r in range(1, 6)])
def test_seed_001_five_round_table_rows(
    calls: tuple[int, ...], tricks: tuple[int, ...], scores: tuple[int, ...]
) -> None:
    assert sum(tricks) == 13
    assert tuple(round_score(NEPALI, c, t) for c, t in zip(calls, tricks, strict=True)) == scores


def test_seed_001_five_round_totals() -> None:
    totals = [0, 0, 0, 0]
    for calls, tricks, _ in FIVE_ROUNDS:
        for seat in range(4):
            totals[seat] += round_score(NEPALI, calls[seat], tricks[seat])
    assert totals == [93, 91, 141, -129]
    assert [format_score(NEPALI, t) for t in totals] == ["9.3", "9.1", "14.1", "-12.9"]
    assert [calls[3] for calls, _, _ in FIVE_ROUNDS] == [4, 3, 3, 5, 4]
    assert max(calls[2] for calls, _, _ in FIVE_ROUNDS) == 4
    # "all the 0.1s added together came to 0.6 points between four players"
    overtricks = sum(
        max(0, t - c) for calls, tricks, _ in FIVE_ROUNDS for c, t in zip(calls, tricks, strict=True) if t >= c
    )
    assert overtricks == 6


# --- seed 003 (strict) ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "tricks", "tenths", "shown"),
    [(3, 5, 32, "3.2"), (4, 3, -40, "-4"), (2, 2, 20, "2"), (3, 3, 30, "3")],
)
def test_seed_003_strict(call: int, tricks: int, tenths: int, shown: str) -> None:
    assert round_score(STRICT, call, tricks) == tenths
    assert format_score(STRICT, tenths) == shown


# --- seed 000 (pagat) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "tricks", "tenths"),
    [
        *[pytest.param(4, t, 40 if t in (4, 5) else -40, id=f"call-4-took-{t}") for t in range(14)],
        *[pytest.param(9, t, 130 if t in (9, 10) else -90, id=f"call-9-took-{t}") for t in range(14)],
        pytest.param(2, 3, 20, id="call-2-took-3"),
        pytest.param(7, 8, 70, id="call-7-took-8-no-bonus"),
        pytest.param(8, 8, 130, id="call-8-bonus"),
        pytest.param(8, 9, 130, id="call-8-took-9-bonus"),
        pytest.param(8, 10, -80, id="call-8-took-10"),
        pytest.param(12, 13, 130, id="call-12-took-13-bonus"),
        pytest.param(13, 13, 130, id="call-13-bonus"),
        pytest.param(13, 12, -130, id="call-13-took-12"),
    ],
)
def test_seed_000_pagat(call: int, tricks: int, tenths: int) -> None:
    assert round_score(PAGAT, call, tricks) == tenths


@pytest.mark.parametrize(
    ("call", "tricks", "tenths"),
    [(9, 9, 160), (9, 10, 160), (9, 11, -90), (8, 8, 160), (7, 7, 70), (12, 11, -120)],
)
def test_pagat_bonus_16(call: int, tricks: int, tenths: int) -> None:
    assert round_score(Rules.profile("pagat", pagat_bonus=16), call, tricks) == tenths


def test_pagat_display() -> None:
    assert format_score(PAGAT, 130) == "13"
    assert format_score(PAGAT, -90) == "-9"


# --- seed 004 (dy) -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "tricks", "points"),
    [
        pytest.param(3, 3, 30, id="exact"),
        pytest.param(3, 4, 31, id="one-over"),
        pytest.param(3, 5, 32, id="five-tricks"),
        *[pytest.param(3, t, -30, id=f"double-or-more-{t}") for t in range(6, 14)],
        *[pytest.param(3, t, -30, id=f"short-{t}") for t in range(3)],
        pytest.param(2, 3, 21, id="call-2-took-3"),
        pytest.param(2, 4, -20, id="call-2-took-double"),
        pytest.param(7, 13, 76, id="call-7-took-13"),
        pytest.param(13, 13, 130, id="call-13-exact"),
    ],
)
def test_seed_004_dy(call: int, tricks: int, points: int) -> None:
    score = round_score(DY, call, tricks)
    assert score == points
    assert format_score(DY, score) == str(points)


def test_dy_displays_the_integer() -> None:
    assert format_score(DY, 32) == "32"
    assert format_score(DY, -30) == "-30"
    assert format_score(DY, 0) == "0"


# --- house rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "tricks", "whole", "shortfall"),
    [(4, 2, -40, -20), (4, 3, -40, -10), (4, 0, -40, -40), (4, 4, 40, 40), (4, 6, 42, 42), (13, 12, -130, -10)],
)
def test_penalty_shortfall(call: int, tricks: int, whole: int, shortfall: int) -> None:
    assert round_score(NEPALI, call, tricks) == whole
    assert round_score(Rules.profile("nepali", penalty="shortfall"), call, tricks) == shortfall


@pytest.mark.parametrize(
    ("call", "tricks", "tenths"),
    [(4, 4, 40), (4, 6, 40), (3, 13, 30), (4, 3, -40), (8, 8, 80)],
)
def test_overtrick_zero(call: int, tricks: int, tenths: int) -> None:
    assert round_score(Rules.profile("nepali", overtrick=0, max_call=8), call, tricks) == tenths


@pytest.mark.parametrize(
    ("call", "tricks", "tenths", "shown"),
    [
        pytest.param(12, 13, 121, "12.1", id="12-taking-13"),
        pytest.param(13, 13, 130, "13", id="13-taking-13-is-the-highest"),
        pytest.param(4, 6, 42, "4.2", id="seed-001-called-4-took-6"),
        pytest.param(3, 4, 31, "3.1", id="seed-001-called-3-took-4"),
        pytest.param(1, 13, 22, "2.2", id="call-1-took-13"),
        pytest.param(1, 0, -10, "-1", id="call-1-took-0"),
    ],
)
def test_standard_examples(call: int, tricks: int, tenths: int, shown: str) -> None:
    assert round_score(NEPALI, call, tricks) == tenths
    assert format_score(NEPALI, tenths) == shown


def test_the_best_round_is_13_points() -> None:
    assert max(round_score(NEPALI, c, t) for c in range(1, 14) for t in range(14)) == 130


@pytest.mark.parametrize(
    ("tenths", "shown"),
    [(41, "4.1"), (-40, "-4"), (30, "3"), (0, "0"), (-129, "-12.9"), (5, "0.5"), (-5, "-0.5"), (1000, "100"),
     (-1001, "-100.1")],
)
def test_format_score(tenths: int, shown: str) -> None:
    assert format_score(NEPALI, tenths) == shown


@pytest.mark.parametrize("name", ["nepali", "master", "bhoos", "pagat", "strict", "dy"])
def test_scores_are_ints_never_floats(name: str) -> None:
    rules = Rules.profile(name)
    for call in rules.call_range:
        for tricks in range(14):
            assert type(round_score(rules, call, tricks)) is int
