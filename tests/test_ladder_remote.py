"""A remote entrant cannot choose which of its blocks count: the ways a hostile one can be away, each played on a real
ladder whose blocks are real tournaments on the ladder's gRPC port (port 0), against a real bot process connecting
with its entrant's token (:mod:`tests.helpers.remote_bots`).

The rule (docs/ladder.md, "Remote versions"): a block counts once the remote version took its seat at the block's first
game, the fallback playing the games it is away for after that; it is void only when it was not there when the first
game began (the fallback then keeps its seat for the whole block); misses in a row set the version aside until its
bot's next hello in the ladder's waiting room.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from arena.event.plan.status import STATUS
from arena.ladder.blocks import outcome
from arena.ladder.consistency import check_ladder
from arena.ladder.control import Ladder
from arena.ladder.db import Block, BlockResult, BlockState, RatingPoint, Version, VersionState, utc_now
from arena.ladder.queries import entrants
from arena.ladder.service import FINAL, LadderService
from arena.records.store import ResultsStore
from tests.helpers.ladder import done_blocks, make_ladder, serve_until, serving
from tests.helpers.runs import ROOT

RANDOM = "sample_bots.random_bot:RandomBot"
HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"
SLUGGISH = "tests.helpers.arena_bots:Sluggish"
HOUSE = (("house-a", RANDOM), ("house-b", HEURISTIC), ("house-c", RANDOM), ("house-d", HEURISTIC))
REMY = "remy#1"
NEVER = ("remy#1 was not there when the block's first game began: the fallback played all 4 of its games, so the block "
         "is void")


def _ladder(folder: Path, house: tuple[tuple[str, str], ...] = HOUSE, **changes: str) -> tuple[Ladder, str]:
    """Four house versions, playing at once (their check is not what these tests are about), and the remote
    entrant remy; remy's token."""
    ladder = make_ladder(folder, tables="2", placement_blocks="1", **{"patience_s": "2.0", **changes})
    for name, bot in house:
        ladder.add_entrant(name, python=bot)
    with ladder.session() as session:
        session.execute(update(Version).values(state=VersionState.ACTIVE, activated=utc_now()))
    ladder.add_entrant("remy", remote=True)
    return ladder, ladder.bot_token("remy")


def _bot(address: str, token: str, **env: str) -> subprocess.Popen[bytes]:
    """remy's bot, connecting to ``address`` (``env``: how it misbehaves)."""
    return subprocess.Popen([sys.executable, "-m", "tests.helpers.remote_bots", "--arena", address,
                             "--max-backoff", "0.5"], env={**os.environ, "CALLBREAK_TOKEN": token, **env}, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _end(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        process.wait(10)


def _remy(session: Session) -> Version:
    return session.scalars(select(Version).where(Version.label == REMY)).one()


def _remy_blocks(session: Session, *states: BlockState) -> list[Block]:
    remy = _remy(session).id
    return [b for b in session.scalars(select(Block).where(Block.state.in_(states)).order_by(Block.id))
            if remy in b.seats]


def _ended(session: Session) -> bool:
    """remy's first block is over: done or void."""
    return bool(_remy_blocks(session, BlockState.DONE, BlockState.VOID))


def _first(ladder: Ladder) -> Block:
    with ladder.session() as session:
        return _remy_blocks(session, BlockState.DONE, BlockState.VOID)[0]


def _play_one(ladder: Ladder, token: str, **env: str) -> Block:
    """Serves the ladder, remy's bot connecting as ``env`` says, until remy's first block is over; that block."""
    service = LadderService(ladder)
    bot = _bot(service.remote_address, token, **env)
    try:
        serve_until(ladder, _ended, service=service)
    finally:
        _end(bot)
    return _first(ladder)


def _remy_faults(ladder: Ladder, block: Block) -> dict[int, set[str]]:
    """remy's faults in each game of ``block`` (numbered from 1, as played), by kind."""
    faults: dict[int, set[str]] = {}
    for number, game in enumerate(outcome(ladder.folder / block.folder).played, start=1):
        seat = game.seats.index(REMY)
        faults[number] = {f.kind.value for r in game.rounds for f in r.faults if f.seat == seat}
    return faults


def _counted(ladder: Ladder, block: Block, note: str) -> None:
    """``block`` is done with ``note``, and counted as any: four results, remy's rating moved by it, and
    ``ladder check`` agrees."""
    assert (block.state, block.note) == (BlockState.DONE, note)
    with ladder.session() as session:
        assert session.get(Block, block.id).rated
        results = session.scalars(select(BlockResult).where(BlockResult.block_id == block.id)).all()
        assert len(results) == 4 and {r.games for r in results} == {4}
        assert session.scalars(select(RatingPoint).where(RatingPoint.block_id == block.id,
                                                         RatingPoint.version_id == _remy(session).id)).one()
    found = check_ladder(ladder)
    assert found.ok, found.problems


# --- leaving a block it is losing loses it ------------------------------------------------------------


def test_a_remote_entrant_that_plays_two_games_and_leaves_forfeits_the_others_and_the_block_counts(
        tmp_path: Path) -> None:
    ladder, token = _ladder(tmp_path / "ladder")
    block = _play_one(ladder, token, CALLBREAK_LEAVE="after:2")
    note = "remy#1 left after game 2; the fallback played its games 3-4, which count"
    _counted(ladder, block, note)
    # Its process ended as game 3 asked its first call: the fallback played game 3 from there, and game 4 from its
    # start (an absent fault), and they count as its games.
    assert _remy_faults(ladder, block) == {1: set(), 2: set(), 3: {"disconnect"}, 4: {"absent"}}
    with ladder.session() as session:
        remy = _remy(session)
        result = session.scalars(select(BlockResult).where(BlockResult.block_id == block.id,
                                                           BlockResult.version_id == remy.id)).one()
        assert (result.faults, remy.missed, remy.set_aside) == (2, 1, None)
    with serving(ladder) as url:  # the note, on the block's page, in its JSON, and on the entrant's page and JSON
        shown = httpx.get(f"{url}/api/blocks/{block.id}", timeout=10).json()
        assert (shown["state"], shown["note"]) == ("done", note)
        assert REMY in {line["version"]["version"] for line in shown["results"]}
        assert note in httpx.get(f"{url}/blocks/{block.id}", timeout=10).text
        noted = httpx.get(f"{url}/api/entrants/remy", timeout=10).json()["notes"]
        assert [(n["block_id"], n["state"], n["note"]) for n in noted] == [(block.id, "done", note)]
        assert note in httpx.get(f"{url}/entrants/remy", timeout=10).text
    ladder.close()


# --- never coming voids the block, and misses in a row set the version aside --------------------------


def test_a_remote_entrant_that_never_comes_voids_its_blocks_and_is_set_aside_until_its_bot_connects(
        tmp_path: Path) -> None:
    ladder, token = _ladder(tmp_path / "ladder", patience_s="1.0", set_aside_after="2")
    service = LadderService(ladder)
    serve_until(ladder, lambda session: _remy(session).set_aside is not None, service=service)
    aside = "remy#1 has missed 2 blocks in a row: it is set aside until its bot connects to the ladder again"
    with ladder.session() as session:
        void = _remy_blocks(session, BlockState.VOID, BlockState.DONE)
        assert [(b.state, b.note) for b in void] == [(BlockState.VOID, NEVER), (BlockState.VOID, f"{NEVER}. {aside}")]
        assert not session.scalars(select(BlockResult).where(BlockResult.block_id.in_([b.id for b in void]))).all()
        assert not session.scalars(select(RatingPoint).where(RatingPoint.version_id == _remy(session).id)).all()
        view = entrants.entrant(session, ladder.folder, "remy")
        assert isinstance(view, entrants.EntrantView) and view.versions[0].set_aside is not None
        assert [n.note for n in view.notes] == [f"{NEVER}. {aside}", NEVER]
        last, done = max(b.id for b in session.scalars(select(Block))), done_blocks(session)
    # Set aside: the others play on without it.
    serve_until(ladder, lambda session: done_blocks(session) >= done + 2, service=service)
    with ladder.session() as session:
        assert not [b for b in _remy_blocks(session, *BlockState) if b.id > last]
    # Its bot connects to the waiting room: it is back, and its next block counts.
    bot = _bot(service.remote_address, token)
    try:
        serve_until(ladder, lambda session: bool(_remy_blocks(session, BlockState.DONE)), service=service)
    finally:
        _end(bot)
    with ladder.session() as session:
        remy = _remy(session)
        assert (remy.set_aside, remy.missed) == (None, 0)
        played = _remy_blocks(session, BlockState.DONE)
    assert [b.note for b in played] == [""] * len(played)
    _counted(ladder, played[0], "")
    ladder.close()


# --- the other ways to be away: each counts, or voids, by the rule ---------------------------------------


@pytest.mark.slow
def test_a_remote_entrant_whose_connection_ends_mid_game_forfeits_the_rest_and_the_block_counts(
        tmp_path: Path) -> None:
    ladder, token = _ladder(tmp_path / "ladder")
    block = _play_one(ladder, token, CALLBREAK_LEAVE="during:2")
    _counted(ladder, block, "remy#1's connection ended during game 2; the fallback played the rest of it and its "
                            "games 3-4, which count")
    assert _remy_faults(ladder, block) == {1: set(), 2: {"disconnect"}, 3: {"absent"}, 4: {"absent"}}
    ladder.close()


@pytest.mark.slow
def test_a_remote_entrant_that_connects_and_answers_nothing_came_and_its_block_counts(tmp_path: Path) -> None:
    ladder, token = _ladder(tmp_path / "ladder", deadline_ms="100")
    block = _play_one(ladder, token, CALLBREAK_MUTE="1")
    _counted(ladder, block, "remy#1's connection ended during game 1; the fallback played the rest of it and its "
                            "games 2-4, which count")
    faults = _remy_faults(ladder, block)
    assert "late" in faults[1] and faults[2] == faults[3] == faults[4] == {"absent"}
    for game in outcome(ladder.folder / block.folder).games:  # it made no decision: the fallback made all 14 a round
        seat = game.seats.index(REMY)
        assert {record.fallbacks[seat] for record in game.rounds} == {14}
    ladder.close()


@pytest.mark.slow
def test_a_remote_entrant_that_comes_after_the_first_game_began_plays_none_of_the_block_and_it_is_void(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slow, gate = tmp_path / "slow", tmp_path / "gate"
    monkeypatch.setenv("CALLBREAK_SLOW", str(slow))  # the house versions take 20 ms a decision while it exists
    house = tuple((name, SLUGGISH) for name, _ in HOUSE)
    ladder, token = _ladder(tmp_path / "ladder", house)
    seen: list[float] = []

    def pace(ladder: Ladder) -> None:
        """Slows the house bots as remy's block begins, opens the gate 3.5 s later (game 1 is then under way, the
        fallback in remy's seat: it began after patience_s, 2 s, and lasts about 4 s), and lets the house bots go at
        full speed 1.5 s after that, remy's bot being connected."""
        with ladder.session() as session:
            playing = bool(_remy_blocks(session, BlockState.PLAYING))
        if playing and not seen:
            slow.touch()
            seen.append(time.monotonic())
        if seen and not gate.exists() and time.monotonic() - seen[0] > 3.5:
            gate.touch()
        if seen and slow.exists() and time.monotonic() - seen[0] > 5.0:
            slow.unlink()

    service = LadderService(ladder)
    bot = _bot(service.remote_address, token, CALLBREAK_GATE=str(gate))
    try:
        serve_until(ladder, _ended, timeout=90, between=pace, service=service)
    finally:
        _end(bot)
    block = _first(ladder)
    assert (block.state, block.note) == (BlockState.VOID, NEVER)
    assert _remy_faults(ladder, block) == {1: {"absent"}, 2: {"absent"}, 3: {"absent"}, 4: {"absent"}}
    status = json.loads((ladder.folder / block.folder / STATUS).read_text(encoding="utf-8"))
    assert REMY in {session["bot"] for session in status["sessions"]}  # its bot was connected as the block ended
    with ladder.session() as session:
        assert not session.scalars(select(BlockResult).where(BlockResult.block_id == block.id)).all()
    ladder.close()


def test_a_second_session_of_a_remote_entrant_takes_over_and_nothing_is_missed(tmp_path: Path) -> None:
    ladder, token = _ladder(tmp_path / "ladder")
    service = LadderService(ladder)
    bots = [_bot(service.remote_address, token, CALLBREAK_LEAVE="after:2"), _bot(service.remote_address, token)]
    try:
        serve_until(ladder, _ended, timeout=60, service=service)
    finally:
        for bot in bots:
            _end(bot)
    block = _first(ladder)
    _counted(ladder, block, "")
    assert _remy_faults(ladder, block) == {1: set(), 2: set(), 3: set(), 4: set()}
    ladder.close()


def test_two_remote_entrants_stay_connected_while_the_other_plays(tmp_path: Path) -> None:
    ladder, token = _ladder(tmp_path / "ladder")
    ladder.add_entrant("rita", remote=True)
    rita = ladder.bot_token("rita")
    service = LadderService(ladder)
    bots = [_bot(service.remote_address, token), _bot(service.remote_address, rita)]

    def both_played(session: Session) -> bool:
        done = session.scalars(select(Block).where(Block.state == BlockState.DONE)).all()
        remote = session.scalars(select(Version.id).where(Version.kind == "remote")).all()
        return all(sum(version in b.seats for b in done) >= 2 for version in remote)

    try:
        # Each bot waits in the other's block (a guest of its server) and in the waiting room between blocks: never
        # refused, so neither kit stops, and no block of theirs is missed.
        serve_until(ladder, both_played, timeout=90, service=service)
        assert [bot.poll() for bot in bots] == [None, None]
    finally:
        for bot in bots:
            _end(bot)
    with ladder.session() as session:
        assert not session.scalars(select(Block).where(Block.state == BlockState.VOID)).all()
        assert all(not b.note for b in session.scalars(select(Block)))
    found = check_ladder(ladder)
    assert found.ok, found.problems
    ladder.close()


def test_a_remote_entrant_plays_the_final_on_the_port_the_waiting_room_gives_up(tmp_path: Path) -> None:
    ladder, token = _ladder(tmp_path / "ladder")
    service = LadderService(ladder)
    bot = _bot(service.remote_address, token)
    began: list[bool] = []

    def final_once_in_the_room(ladder: Ladder) -> None:
        """Pauses the ladder, so that the blocks in play end and remy's bot waits in the room; then starts the final
        (the room is open between remy's blocks only, and a ladder of one remote entrant plays them back to back)."""
        room = service.waiting_room
        ladder.pause(True)
        if not began and room is not None and room.occupied(REMY):
            ladder.start_final(1)
            began.append(True)

    try:  # the room ends the bot's stream as the final begins: it reconnects to the final's server
        serve_until(ladder, lambda session: Ladder.state(session).final_state == "done",
                    between=final_once_in_the_room, service=service)
    finally:
        _end(bot)
    games = [game for game in ResultsStore(ladder.folder / FINAL).games() if REMY in game.seats]
    assert len(games) == 4 * 4  # a round robin of five: remy is in four of its groups, four games each
    assert not [f for game in games for r in game.rounds for f in r.faults if game.seats[f.seat] == REMY]
    ladder.close()
