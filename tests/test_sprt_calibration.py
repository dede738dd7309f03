"""The sequential test's error rates on real block differences: a short, seeded version of
``benchmarks/sprt_calibration.py`` (which runs 5,000 tests per cell).

The corpora in ``benchmarks/data`` are block differences of the sample bots played through the
arena: heuristic against random (strongly skewed) and heuristic against a more aggressive variant
of itself (close bots); each is also read mirrored (A and B swapped), which turns its skew around.
Drawing blocks from a corpus shifted to mean Δ0 (or Δ1) makes H0 (or H1) exactly true, so every
acceptance of the other hypothesis is an error."""

from __future__ import annotations

import pytest

from benchmarks.sprt_calibration import ALPHA, DATA, PAIRS, calibrate, moments, read_corpus

TESTS = 100
"""Tests per corpus, skew and hypothesis: 800 tests per method and burn-in."""


@pytest.fixture(scope="module")
def corpora() -> dict[str, list[float]]:
    return {name: read_corpus(DATA / f"{name}.txt") for name in PAIRS}


def test_the_corpora_are_real_and_skewed_both_ways(corpora: dict[str, list[float]]) -> None:
    for values in corpora.values():
        assert len(values) >= 3000
    # Skewed one way and the other (and mirrored, each the opposite way): the shapes a plug-in
    # variance mishandles.
    assert moments(corpora["heuristic-random"])[2] < -0.15
    assert moments(corpora["heuristic-aggressive"])[2] > 0.25


@pytest.mark.slow
def test_the_default_test_keeps_both_error_rates_at_alpha_on_both_skews(corpora: dict[str, list[float]]) -> None:
    # The default method and burn-in; both hypotheses, both corpora, as played and mirrored.
    results = calibrate(corpora, TESTS, seed=3, methods=("el",), burn_ins=(30,))
    cells = [cells[("el", 30)] for cells in results.values()]
    assert len(cells) == 8 and all(cell.capped == 0 for cell in cells)
    wrong = sum(cell.wrong for cell in cells)
    tests = sum(cell.tests for cell in cells)
    # 800 tests: a standard error of about 0.008 at 0.05. Seeded, so this cannot flicker.
    assert abs(wrong / tests - ALPHA) <= 0.02, wrong / tests
    assert all(cell.wrong <= 0.12 * cell.tests for cell in cells), [cell.wrong for cell in cells]
    assert all(60 < cell.mean_blocks < 300 for cell in cells), [cell.mean_blocks for cell in cells]
