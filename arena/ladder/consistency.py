"""``ladder check``: the database and the records agree.

What it proves, block by block and then as a whole:

- every block the database holds as done has its results folder, whose records pass the same audit as
  ``callbreak-arena verify`` (every deal from its seed, every card legal, every score from its calls and
  tricks) and hold the block's four games, the first of them seated as the database says, seat by seat (under
  ``[blocks] rotation = "once"``: a game for each version against the house trio, in the order stored);
- a done block seats no remote version all of whose games the fallback played (such a block is void);
- every results folder under ``blocks/`` is a block the database knows;
- each done block's stored results (points, block scores, games) are what its records say;
- the ratings, recomputed from the records of the rated blocks in the order they were rated, equal the
  stored ratings and the stored rating history, and each rating's block count and score sums follow;
- each sequential test's LLR, recomputed from its blocks' records, is the stored one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

from sqlalchemy import func, select

from arena.event.audit import audit
from arena.event.setup.formats import HOUSE_TRIO
from arena.ladder.attendance import attendance
from arena.ladder.blocks import BlockOutcome, RatingModel, outcome, rate_games
from arena.ladder.control import REMOTE, Ladder
from arena.ladder.db import (
    Block,
    BlockResult,
    BlockState,
    Rating,
    RatingPoint,
    Test,
    TestKind,
    TestPoint,
    Version,
)
from arena.ladder.service import test_state
from arena.records.store import MANIFEST

__all__ = ["TOLERANCE", "Agreement", "check_ladder"]

TOLERANCE = 1e-9
"""How far a stored float may be from the one recomputed (the same operations in the same order: none)."""


@dataclasses.dataclass
class Agreement:
    """What ``ladder check`` found: counts, and each disagreement in a line."""

    blocks: int = 0
    games: int = 0
    versions_rated: int = 0
    tests: int = 0
    problems: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def check_ladder(ladder: Ladder, progress: Callable[[int, int], None] = lambda done, total: None) -> Agreement:
    """Checks the ladder's database against its records (see the module's docstring)."""
    found = Agreement()
    model = RatingModel(ladder.settings.rating.beta, ladder.settings.rating.tau)
    with ladder.session() as session:
        labels = {v.id: v.label for v in session.scalars(select(Version))}
        remote = {v.id for v in session.scalars(select(Version).where(Version.kind == REMOTE))}
        blocks = {b.id: b for b in session.scalars(select(Block))}
        results: dict[int, dict[int, BlockResult]] = {}
        for stored_row in session.scalars(select(BlockResult)):
            results.setdefault(stored_row.block_id, {})[stored_row.version_id] = stored_row
        order = [block_id for block_id, _ in session.execute(
            select(RatingPoint.block_id, func.min(RatingPoint.id)).group_by(RatingPoint.block_id)
            .order_by(func.min(RatingPoint.id)))]
        history_rows = session.scalars(select(RatingPoint)).all()
        history = {(p.block_id, p.version_id): p for p in history_rows}
        ratings = {r.version_id: r for r in session.scalars(select(Rating))}
        tests = session.scalars(select(Test)).all()
        points: dict[int, list[TestPoint]] = {}
        for step in session.scalars(select(TestPoint).order_by(TestPoint.test_id, TestPoint.n)):
            points.setdefault(step.test_id, []).append(step)
    problems = found.problems
    blocks_folder = ladder.folder / "blocks"
    on_disk = {int(path.name) for path in blocks_folder.iterdir() if path.name.isdigit()} \
        if blocks_folder.is_dir() else set()
    for number in sorted(on_disk - set(blocks)):
        problems.append(f"blocks/{number:06d} is a results folder the database knows no block of")
    outcomes: dict[int, BlockOutcome] = {}
    done = [block for block in blocks.values() if block.state == BlockState.DONE]
    for index, block in enumerate(sorted(done, key=lambda b: b.id), start=1):
        progress(index, len(done))
        folder = ladder.folder / block.folder
        if not (folder / MANIFEST).is_file():
            problems.append(f"block {block.id} is done in the database but {block.folder} holds no results")
            continue
        violation = audit(folder)
        if violation is not None:
            problems.append(f"block {block.id}: its records do not verify: {violation}")
            continue
        result = outcome(folder)
        outcomes[block.id] = result
        found.blocks += 1
        found.games += len(result.games)
        seated = [labels[v] for v in block.seats]
        problem, unreadable = _seats(block.id, result, seated)
        if problem:
            problems.append(problem)
        if unreadable:
            continue
        for version_id in remote.intersection(block.seats):
            if not attendance(result.played, labels[version_id]).came:
                problems.append(f"block {block.id} is counted, but the fallback played all of {labels[version_id]}'s "
                                "games: its records make it void")
        stored = results.get(block.id, {})
        for version_id in block.seats:
            label = labels[version_id]
            row = stored.get(version_id)
            if row is None:
                problems.append(f"block {block.id}: no stored result for {label}")
            elif (row.points, row.games) != (result.points[label], result.games_of(label)) or not _close(
                    row.score, result.score[label]):
                problems.append(f"block {block.id}: {label} is stored with {row.points} points and score "
                                f"{row.score}, its records say {result.points[label]} and {result.score[label]}")
    if len(history) != len(history_rows):
        problems.append(f"the rating history holds {len(history_rows) - len(history)} lines more than one per "
                        "version and block: a block was counted twice")
    rated_done = {b.id for b in done if b.rated}
    if set(order) != rated_done:
        extra, missing = sorted(set(order) - rated_done), sorted(rated_done - set(order))
        problems.append(f"the rating history and the rated blocks differ: history of blocks {extra} not rated "
                        f"and done, rated blocks {missing} without history")
    current: dict[str, tuple[float, float]] = {}
    sums: dict[int, list[float]] = {}  # blocks, games, score sum, squares
    for block_id in order:
        if block_id not in outcomes:
            continue
        result = outcomes[block_id]
        current = rate_games(model, current, result.rankings)
        for version_id in blocks[block_id].seats:
            label = labels[version_id]
            kept = history.get((block_id, version_id))
            mu, sigma = current[label]
            if kept is None or not (_close(kept.mu, mu) and _close(kept.sigma, sigma)):
                problems.append(f"block {block_id}: {label}'s rating after it is stored as "
                                f"{'none' if kept is None else (kept.mu, kept.sigma)}, the records give "
                                f"{(mu, sigma)}")
            total = sums.setdefault(version_id, [0, 0, 0.0, 0.0])
            score = result.score[label]
            total[0] += 1
            total[1] += result.games_of(label)
            total[2] += score
            total[3] += score * score
    for version_id, (count, games, score_sum, squares) in sums.items():
        label = labels[version_id]
        rating = ratings.get(version_id)
        mu, sigma = current[label]
        found.versions_rated += 1
        if rating is None:
            problems.append(f"{label} played rated blocks but has no stored rating")
        elif not (_close(rating.mu, mu) and _close(rating.sigma, sigma)):
            problems.append(f"{label}'s rating is stored as mu {rating.mu}, sigma {rating.sigma}; the records give "
                            f"mu {mu}, sigma {sigma}")
        elif (rating.blocks, rating.games) != (count, games) or not (
                _close(rating.score_sum, score_sum) and _close(rating.score_squares, squares)):
            problems.append(f"{label}'s blocks, games or score sums are not those of its rated blocks")
    for version_id in set(ratings) - set(sums):
        problems.append(f"{labels.get(version_id, version_id)} has a stored rating but no rated block")
    problems.extend(_tests(ladder, tests, points, outcomes, labels))
    found.tests = len(tests)
    return found


def _seats(block_id: int, result: BlockOutcome, seated: list[str]) -> tuple[str, bool]:
    """A disagreement between a block's games and its stored seats, in a sentence ("" when none), and whether it
    leaves the block's results unreadable (its games are not the four of its versions)."""
    games = result.games
    if result.once:  # a game for each version, in the order stored, each against the house trio
        played = [[bot for bot in g.final.seats if bot not in HOUSE_TRIO] for g in games]
        if len(played) != 4 or any(len(bots) != 1 for bots in played) or sorted(b[0] for b in played) != sorted(seated):
            return (f"block {block_id}: its records hold {len(games)} games of "
                    f"{sorted({b for g in games for b in g.final.seats})}, not a game for each of "
                    f"{', '.join(seated)} against the house trio"), True
        order = [bots[0] for bots in played]
        if order != seated:
            return (f"block {block_id} is stored with the versions {', '.join(seated)} (game by game), but its games "
                    f"were played by {', '.join(order)}"), False
        return "", False
    if len(games) != 4 or any(sorted(g.final.seats) != sorted(seated) for g in games):
        return (f"block {block_id}: its records hold {len(games)} games of "
                f"{sorted({b for g in games for b in g.final.seats})}, not the four games of {', '.join(seated)}"), True
    first = list(games[0].final.seats)
    if first != seated:
        return (f"block {block_id} is stored with the seats {', '.join(seated)} (from seat 0), but its first game "
                f"was played in the seats {', '.join(first)}"), False
    return "", False


def _tests(ladder: Ladder, tests: Sequence[Test], points: dict[int, list[TestPoint]],
           outcomes: dict[int, BlockOutcome], labels: dict[int, str]) -> list[str]:
    problems = []
    for test in tests:
        if test.kind != TestKind.SPRT:
            continue
        values = []
        for point in points.get(test.id, []):
            result = outcomes.get(point.block_id)
            if result is None:
                problems.append(f"test {test.id}: its block {point.block_id} is not a done block with records")
                continue
            value = result.score[labels[test.b]] - result.score[labels[test.a]]
            if not _close(value, point.value):
                problems.append(f"test {test.id}: block {point.block_id}'s difference is stored as {point.value}, "
                                f"the records give {value}")
            values.append(value)
            if not _close(test_state(test, values, ladder.settings.tests.burn_in).llr, point.llr):
                problems.append(f"test {test.id}: the LLR after block {point.block_id} is not the records'")
        if values and not _close(test_state(test, values, ladder.settings.tests.burn_in).llr, test.llr):
            problems.append(f"test {test.id}: its LLR is stored as {test.llr}, its blocks give another")
    return problems
