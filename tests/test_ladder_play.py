"""The ladder plays: matchmaking's rule, the service's blocks, ratings and tests, the intake of uploads and the
check of each version, and ``ladder check`` against planted disagreements.

Real SQLite files, real results folders that ``verify``'s audit reads, real tournaments; submitted bots run
as real processes in the sandbox where bubblewrap is installed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from arena.event.audit import audit
from arena.ladder.blocks import block_seat_key, outcome
from arena.ladder.consistency import check_ladder
from arena.ladder.control import Ladder
from arena.ladder.db import (
    Block,
    BlockKind,
    BlockResult,
    BlockState,
    Check,
    Decision,
    Rating,
    RatingPoint,
    Test,
    TestPoint,
    TestState,
    Version,
    VersionState,
)
from arena.ladder.intake import VERSIONS, SubmissionError
from arena.ladder.matchmaking import Candidate, choose
from arena.ladder.queries import blocks as block_queries
from arena.ladder.settings import Matchmaking
from tests.helpers.ladder import (
    BROKEN_BOT,
    GOOD_BOT,
    copy_with_first_rated_block,
    done_blocks,
    make_ladder,
    serve_until,
)

RANDOM = "sample_bots.random_bot:RandomBot"
HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"


# --- the rule ------------------------------------------------------------------------------------


def _field(*ratings: tuple[float, int], entrants: list[int] | None = None) -> list[Candidate]:
    return [Candidate(id=n + 1, entrant=(entrants[n] if entrants else n + 1), mu=mu, sigma=1.0, blocks=blocks,
                      last=n) for n, (mu, blocks) in enumerate(ratings)]


def test_no_block_without_four_entrants() -> None:
    field = _field((25, 0), (25, 0), (25, 0), (25, 0), entrants=[1, 1, 2, 3])
    assert choose(field, lambda anchor: set(), Matchmaking(), random.Random(1)) is None


def test_a_new_version_is_the_anchor_of_a_placement_block() -> None:
    field = _field((30, 9), (20, 9), (25, 1), (10, 9), (40, 9))
    proposal = choose(field, lambda anchor: set(), Matchmaking(placement_blocks=4), random.Random(1))
    assert proposal is not None and proposal.kind == BlockKind.PLACEMENT and 3 in proposal.seats


def test_a_rated_block_draws_from_the_anchors_window_and_one_version_per_entrant() -> None:
    # The anchor (least recently played: id 1, mu 0) is far from 8-10; its window is the five closest entrants.
    ratings = [(0, 9), (1, 9), (2, 9), (3, 9), (4, 9), (5, 9), (6, 9), (50, 9), (60, 9), (70, 9)]
    field = _field(*ratings, entrants=[1, 2, 2, 3, 4, 5, 6, 7, 8, 9])
    for seed in range(50):
        proposal = choose(field, lambda anchor: set(), Matchmaking(placement_blocks=4, spread=2.0),
                          random.Random(seed))
        assert proposal is not None and proposal.kind == BlockKind.RATED and 1 in proposal.seats
        assert not {8, 9, 10} & set(proposal.seats)
        assert not {2, 3} <= set(proposal.seats)  # two versions of entrant 2 never share a table


def test_the_same_four_do_not_meet_again_when_another_draw_avoids_it() -> None:
    field = _field((25, 9), (25, 9), (25, 9), (25, 9), (25, 9))
    recent = {frozenset({1, 2, 3, 4})}
    for seed in range(30):
        proposal = choose(field, lambda anchor: recent, Matchmaking(placement_blocks=1), random.Random(seed))
        assert proposal is not None and frozenset(proposal.seats) != frozenset({1, 2, 3, 4})


# --- a field that plays ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ladder of five in-process versions (two heuristic, three random) after 16 blocks and a decided test,
    one table at a time so the order of blocks is the rule's alone."""
    folder = tmp_path_factory.mktemp("played") / "ladder"
    ladder = make_ladder(folder, tables="1", placement_blocks="2", burn_in="4", share="0.5")
    for name, bot in (("rand-a", RANDOM), ("heur-a", HEURISTIC), ("rand-b", RANDOM), ("heur-b", HEURISTIC),
                      ("rand-c", RANDOM)):
        ladder.add_entrant(name, python=bot)
    asked: list[int] = []

    def ask_once(ladder: Ladder) -> None:
        with ladder.session() as session:
            active = session.scalar(select(func.count()).select_from(Version).where(
                Version.state == VersionState.ACTIVE))
        if active == 5 and not asked:
            asked.append(ladder.ask_test("rand-a", "rand-a#1", "heur-a#1").id)

    def finished(session: Session) -> bool:
        return done_blocks(session) >= 16 and bool(asked) and session.get(Test, asked[0]).state != TestState.RUNNING

    serve_until(ladder, finished, between=ask_once)
    ladder.close()
    return folder


def _blocks(ladder: Ladder) -> list[Block]:
    with ladder.session() as session:
        return list(session.scalars(select(Block).order_by(Block.id)))


def test_every_version_is_checked_then_placed_then_rated(played: Path) -> None:
    ladder = Ladder.open(played)
    with ladder.session() as session:
        checks = session.scalars(select(Check)).all()
        assert {c.version_id for c in checks} == {1, 2, 3, 4, 5} and all(c.passed for c in checks)
    blocks = [b for b in _blocks(ladder) if b.state == BlockState.DONE and b.test_id is None]
    kinds = [b.kind for b in blocks]
    first_rated = kinds.index(BlockKind.RATED)
    assert set(kinds[:first_rated]) == {BlockKind.PLACEMENT} and BlockKind.PLACEMENT not in kinds[first_rated:]
    played_before = {v: sum(v in b.seats for b in blocks[:first_rated]) for v in range(1, 6)}
    assert min(played_before.values()) >= 2  # placement_blocks = 2
    ladder.close()


def test_each_block_is_a_results_folder_that_verifies(played: Path) -> None:
    ladder = Ladder.open(played)
    for block in _blocks(ladder):
        if block.state == BlockState.DONE:
            assert audit(played / block.folder) is None
            assert (played / block.folder / "records.jsonl").read_text().count('"final":true') == 4
            # Its seat seeds' key, drawn from the ladder's secret seed and its number: the ladder can make it again.
            key = block_seat_key(ladder.settings.seed, block.id).hex() + "\n"
            assert (played / block.folder / "seat_key").read_text() == key
    ladder.close()


def test_each_block_is_stored_and_shown_in_the_seats_its_first_game_was_played_in(played: Path) -> None:
    ladder = Ladder.open(played)
    with ladder.session() as session:
        labels = {v.id: v.label for v in session.scalars(select(Version))}
        for block in session.scalars(select(Block).where(Block.state == BlockState.DONE)):
            stored = [labels[v] for v in block.seats]
            first = outcome(played / block.folder).games[0]
            assert first.first.rotation == 0 and list(first.seats) == stored, block.id
            view = block_queries.block(session, played, block.id)
            assert isinstance(view, block_queries.BlockView)
            assert [s.version for s in view.seats] == stored == [s.version for s in view.games[0].seats]
    ladder.close()


def test_ratings_put_the_heuristic_versions_above_the_random_ones(played: Path) -> None:
    ladder = Ladder.open(played)
    with ladder.session() as session:
        ratings = {session.get(Version, r.version_id).label: r for r in session.scalars(select(Rating))}
        rated = [b for b in session.scalars(select(Block)) if b.rated]
        assert session.scalar(select(func.count()).select_from(RatingPoint)) == 4 * len(rated)
    assert min(ratings[v].mu for v in ("heur-a#1", "heur-b#1")) > max(
        ratings[v].mu for v in ("rand-a#1", "rand-b#1", "rand-c#1"))
    assert all(r.blocks >= 2 and r.games == 4 * r.blocks for r in ratings.values())
    ladder.close()


def test_the_version_test_decides_and_seats_both_versions_in_each_of_its_blocks(played: Path) -> None:
    ladder = Ladder.open(played)
    with ladder.session() as session:
        test = session.scalars(select(Test)).one()
        assert test.state == TestState.DECIDED and test.decision == Decision.H1 and test.llr >= 2.9
        blocks = session.scalars(select(Block).where(Block.test_id == test.id)).all()
        assert blocks and all({test.a, test.b} <= set(b.seats) and not b.rated for b in blocks)
        points = session.scalars(select(TestPoint).where(TestPoint.test_id == test.id).order_by(TestPoint.n)).all()
        assert [p.n for p in points] == list(range(1, test.blocks_done + 1))
        assert points[-1].llr == test.llr
    ladder.close()


def test_ladder_check_agrees_on_a_played_ladder(played: Path) -> None:
    ladder = Ladder.open(played)
    found = check_ladder(ladder)
    ladder.close()
    assert found.ok, found.problems
    assert found.blocks >= 16 and found.games == 4 * found.blocks and found.versions_rated == 5 and found.tests == 1


@pytest.mark.parametrize(("planted", "words"), [
    ("rating", "rating is stored as mu"), ("result", "is stored with"), ("history", "rating after it is stored"),
    ("twice", "a block was counted twice"), ("records", "do not verify"), ("stray", "knows no block of"),
    ("llr", "its LLR is stored as"), ("order", "but its first game was played in the seats"),
])
def test_ladder_check_finds_each_planted_disagreement(played: Path, tmp_path: Path, planted: str, words: str) -> None:
    folder = tmp_path / "copy"
    ladder, block = copy_with_first_rated_block(played, folder)
    with ladder.session() as session:
        if planted == "rating":
            session.execute(update(Rating).where(Rating.version_id == 1).values(mu=Rating.mu + 1e-6))
        elif planted == "result":
            session.execute(update(BlockResult).where(BlockResult.block_id == block.id).values(
                points=BlockResult.points + 10))
        elif planted == "history":
            session.execute(update(RatingPoint).where(RatingPoint.block_id == block.id).values(sigma=1.0))
        elif planted == "twice":  # a block's rating moves written a second time
            for point in session.scalars(select(RatingPoint).where(RatingPoint.block_id == block.id)).all():
                session.add(RatingPoint(version_id=point.version_id, block_id=block.id, mu=point.mu,
                                        sigma=point.sigma, at=point.at))
        elif planted == "llr":
            session.execute(update(Test).values(llr=Test.llr + 0.5))
        elif planted == "order":  # the same four versions, two of them in each other's seats
            session.execute(update(Block).where(Block.id == block.id).values(seat0=block.seat1, seat1=block.seat0))
    if planted == "records":
        records = folder / block.folder / "records.jsonl"
        records.write_text(records.read_text().replace('"calls":[', '"calls":[1,', 1))
    if planted == "stray":
        shutil.copytree(folder / block.folder, folder / "blocks" / "999999")
    found = check_ladder(ladder)
    ladder.close()
    assert any(words in problem for problem in found.problems), found.problems


# --- faults harm only their own games ---------------------------------------------------------------


def test_a_crashing_version_harms_only_its_own_games(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", tables="2")
    for name, bot in (("steady-a", RANDOM), ("steady-b", RANDOM), ("steady-c", HEURISTIC),
                      ("crashy", "tests.helpers.ladder:Crasher")):
        ladder.add_entrant(name, python=bot)
    with ladder.session() as session:  # the organiser's class starts active (a check would see the crash)
        session.execute(update(Version).values(state=VersionState.ACTIVE))
    serve_until(ladder, lambda session: done_blocks(session) >= 2)
    with ladder.session() as session:
        results = {(r.block_id, session.get(Version, r.version_id).label): r
                   for r in session.scalars(select(BlockResult))}
    assert {label for _, label in results} == {"steady-a#1", "steady-b#1", "steady-c#1", "crashy#1"}
    for (_, label), result in results.items():
        assert (result.faults > 0) == (label == "crashy#1"), (label, result.faults)
    assert check_ladder(ladder).ok
    ladder.close()


# --- uploads and checks -------------------------------------------------------------------------------


def _tar(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return buffer.getvalue()


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


STDIO_JSON = b'{"kind": "stdio", "command": "python3 bot.py"}'


@pytest.mark.parametrize(("filename", "data", "words"), [
    ("bot.exe", b"MZ", "neither a .py file nor an archive"),
    ("bot.tar.gz", _tar({"bot.py": b"x"}, {"secret": "/etc/passwd"}), "is a link"),
    ("bot.tar.gz", _tar({"../escape.py": b"x"}), "outside the bot's folder"),
    ("bot.zip", _zip({"/abs.py": b"x"}), "outside the bot's folder"),
    ("bot.tar.gz", _tar({f"f{n}.txt": b"" for n in range(30)} | {"bot.py": b""}), "at most 20 files"),
    ("bot.zip", _zip({"bot.py": b"", "big.bin": b"\0" * 300_000}), "unpacks to more than 200,000 bytes"),
    ("bot.tar.gz", b"not an archive", "cannot be read as a tar archive"),
    ("bot.tar.gz", _tar({"readme.txt": b"hi"}), "neither bot.py nor bot.json"),
    ("bot.tar.gz", _tar({"bot.json": b'{"kind": "stdio", "command": "/bin/sh -c {token}"}'}), "bot.json"),
])
def test_a_refused_upload_says_why_and_leaves_nothing(tmp_path: Path, filename: str, data: bytes,
                                                      words: str) -> None:
    ladder = make_ladder(tmp_path / "ladder", max_bytes="200000", max_files="20")
    ladder.add_entrant("alice")
    with pytest.raises(SubmissionError, match=words.replace("(", r"\(").replace(".", r"\.")):
        ladder.submit("alice", filename, data)
    with ladder.session() as session:
        assert session.scalar(select(func.count()).select_from(Version)) == 0
    versions = tmp_path / "ladder" / VERSIONS
    assert not versions.exists() or not list(versions.iterdir())
    ladder.close()


def test_uploads_are_stored_by_content_and_limited_per_hour(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", per_hour="4")
    ladder.add_entrant("alice")
    first = ladder.submit("alice", "lowest.py", GOOD_BOT.encode())
    with pytest.raises(SubmissionError, match="the same bot as your version alice#1"):
        ladder.submit("alice", "again.py", GOOD_BOT.encode())
    second = ladder.submit("alice", "bot.tar.gz", _tar({"mybot/bot.py": GOOD_BOT.encode(),
                                                        "mybot/notes.txt": b"v2"}))
    assert (first.label, second.label) == ("alice#1", "alice#2") and first.state == VersionState.SUBMITTED
    stored = tmp_path / "ladder" / second.path
    assert sorted(p.name for p in stored.iterdir()) == ["bot.py", "notes.txt"]  # the one folder lifted
    assert stored.name == second.content_sha256
    third = ladder.submit("alice", "bot.zip", _zip({"bot.json": STDIO_JSON, "bot.py": b"print()"}))
    assert third.kind == "stdio"
    # The refused upload counts as a version does.
    with pytest.raises(SubmissionError, match=r"submitted 4 versions in the last hour \(1 of them refused\), the most "
                       "allowed; the next may come in about 60 minutes"):
        ladder.submit("alice", "lowest.py", (GOOD_BOT + "# v4\n").encode())
    ladder.close()


def test_a_frozen_ladder_takes_no_version(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder")
    ladder.add_entrant("alice")
    ladder.freeze()
    with pytest.raises(SubmissionError, match="frozen"):
        ladder.submit("alice", "lowest.py", GOOD_BOT.encode())
    ladder.close()


def test_submissions_are_checked_in_the_sandbox_and_a_failure_says_where(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", check_games="4")
    for name in ("alice", "bob"):
        ladder.add_entrant(name)
    good = ladder.submit("alice", "lowest.py", GOOD_BOT.encode()).id
    broken = ladder.submit("bob", "first.py", BROKEN_BOT.encode()).id

    def checked(session: Session) -> bool:
        return all(session.get(Version, v).state in (VersionState.ACTIVE, VersionState.FAILED)
                   for v in (good, broken))

    serve_until(ladder, checked, timeout=120)
    with ladder.session() as session:
        assert session.get(Version, good).state == VersionState.ACTIVE
        assert session.get(Version, broken).state == VersionState.FAILED
        failed = session.scalars(select(Check).where(Check.version_id == broken, Check.passed.is_(False))).all()
    cards = next(c for c in failed if c.check_name == "only legal cards")
    assert cards.profile == "nepali" and cards.game and cards.round and cards.trick
    assert cards.hand and len(cards.hand.split()) == 14 - cards.trick
    assert "playing my first card" in cards.stderr_tail
    assert "illegal" in cards.detail or "must" in cards.detail
    ladder.close()


def test_a_new_version_retires_the_old_one(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", check_games="4")
    ladder.add_entrant("alice")
    first = ladder.submit("alice", "lowest.py", GOOD_BOT.encode()).id
    serve_until(ladder, lambda session: session.get(Version, first).state == VersionState.ACTIVE, timeout=90)
    second = ladder.submit("alice", "lowest.py", (GOOD_BOT + "\n# v2\n").encode()).id
    serve_until(ladder, lambda session: session.get(Version, second).state == VersionState.ACTIVE, timeout=90)
    with ladder.session() as session:
        assert session.get(Version, first).state == VersionState.RETIRED
    ladder.close()


# --- the final ---------------------------------------------------------------------------------------


def _final_ladder(folder: Path, workers: int) -> Ladder:
    """Four in-process versions, checked, and the final started on 100 deal sets,
    under one name and secret seed."""
    ladder = make_ladder(folder, name='"cup"', seed="20261203", workers=str(workers))
    for name, bot in (("rand-a", RANDOM), ("heur-a", HEURISTIC), ("rand-b", RANDOM), ("heur-b", HEURISTIC)):
        ladder.add_entrant(name, python=bot)
    serve_until(ladder, lambda session: session.scalar(select(func.count()).select_from(Version).where(
        Version.state == VersionState.ACTIVE)) == 4)  # each version checked
    ladder.start_final(100)
    return ladder


def _final_records(folder: Path) -> list[str]:
    """The final's record lines less their timings, sorted: two tables at once write them as they finish."""
    records = [json.loads(line) for line in (folder / "final" / "records.jsonl").read_text().splitlines()]
    for record in records:
        record.pop("timings")
    return sorted(json.dumps(record, sort_keys=True) for record in records)


def _final_over(session: Session) -> bool:
    return Ladder.state(session).final_state == "done"


def _children(pid: int) -> list[int]:
    """The processes ``pid``'s threads started and that still run (a thread that ends meanwhile is skipped)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def _pool_workers() -> int:
    """How many worker processes this process's multiprocessing forkserver has started and still runs."""
    count = 0
    for child in _children(os.getpid()):
        with contextlib.suppress(OSError):
            if b"multiprocessing.forkserver" in Path(f"/proc/{child}/cmdline").read_bytes():
                count += len(_children(child))
    return count


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts worker processes in /proc")
def test_the_final_plays_on_the_workers_asked_for_resumes_after_a_stop_and_gives_one_process_records(
        tmp_path: Path) -> None:
    seen_one: list[int] = []
    one = _final_ladder(tmp_path / "one", workers=1)
    serve_until(one, _final_over, timeout=240, between=lambda ladder: seen_one.append(_pool_workers()))
    one.close()
    seen_two: list[int] = []
    two = _final_ladder(tmp_path / "two", workers=2)
    records = two.folder / "final" / "records.jsonl"
    serve_until(two, lambda s: records.exists() and records.read_text().count("\n") >= 40, timeout=240,
                between=lambda ladder: seen_two.append(_pool_workers()))
    with two.session() as session:
        assert not _final_over(session)  # stopped mid-final: a new service plays the rest
    serve_until(two, _final_over, timeout=240, between=lambda ladder: seen_two.append(_pool_workers()))
    two.close()
    assert max(seen_one) == 0 and max(seen_two) >= 2  # [capacity] workers: the final's games on two processes
    for folder in (one.folder, two.folder):
        assert audit(folder / "final") is None
        assert (folder / "final" / "report.html").is_file()
        assert (folder / "final" / "seat_key").read_text() == block_seat_key(one.settings.seed, 0).hex() + "\n"
    played = _final_records(one.folder)
    assert len(played) == 100 * 4 * 5 and _final_records(two.folder) == played  # every round of 400 games
