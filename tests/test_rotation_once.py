"""``rotation = "once"``: each bot holds a deal set's cards at most once in the whole event, against the house trio, in
the seat every other bot holds them in; ``verify`` reads both from the records; the formats that cannot take it are
refused in a sentence; the ladder plays its blocks so under ``[blocks] rotation = "once"``.

Real tournaments of in-process sample bots, run through the command line or the tournament code, real results
folders read back as ``verify`` and the standings read them, and a real ladder with its database and its service.
"""

from __future__ import annotations

import json
import shutil
import statistics
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from arena.errors import ConfigError
from arena.event.plan.schedule import Schedule
from arena.event.setup.config import parse_config
from arena.event.setup.formats import HOUSE_TRIO
from arena.event.setup.kinds import Rotation
from arena.ladder.blocks import event_text, outcome
from arena.ladder.consistency import check_ladder
from arena.ladder.control import Ladder
from arena.ladder.db import Block, BlockResult, BlockState, Rating, RatingPoint, Version, VersionState, utc_now
from arena.ladder.queries import blocks as block_queries
from arena.ladder.service import LadderService
from tests.helpers.ladder import copy_with_first_rated_block, done_blocks, make_ladder, serve_until, serving
from tests.helpers.runs import cli, games, standings, write

RANDOM = "sample_bots.random_bot:RandomBot"
HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"
BOTS = (("rand-a", RANDOM, 1), ("heur-b", HEURISTIC, 0), ("rand-c", RANDOM, 3), ("heur-d", HEURISTIC, 0))
DEAL_SETS = 5


def _config(fmt: str = "round-robin", tables: str = "", deal_sets: int = DEAL_SETS,
            bots: tuple[tuple[str, str, int], ...] = BOTS, rotation: str = "once") -> str:
    listed = "".join(f'\n[[bots]]\nname = "{name}"\npython = "{spec}"\nseed = {seed}\n' for name, spec, seed in bots)
    return (f'[tournament]\nname = "once"\nseed = 90210\ndeal_sets = {deal_sets}\nformat = "{fmt}"\n'
            f'rotation = "{rotation}"\nconcurrency = 2\n\n{tables}\n{listed}')


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A round robin of four bots under "once", five deal sets, played by the command line."""
    base = tmp_path_factory.mktemp("once")
    done = cli("run", write(base / "once.toml", _config()), "--results", base / "results")
    assert done.returncode == 0, done.stderr
    return base / "results"


def _held(folder: Path) -> dict[str, list[tuple[int, int, tuple[str, ...]]]]:
    """Each bot but the house trio: the deal sets it held, with its seat and the game's seats, from the records."""
    out: dict[str, list[tuple[int, int, tuple[str, ...]]]] = {}
    for rounds in games(folder).values():
        seats = tuple(rounds[0]["seats"])
        for seat, bot in enumerate(seats):
            if bot not in HOUSE_TRIO:
                out.setdefault(bot, []).append((rounds[0]["deal_set"], seat, seats))
    return out


def test_a_once_event_verifies_and_deals_no_bot_a_deal_set_twice(played: Path) -> None:
    checked = cli("verify", played)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    held = _held(played)
    assert sorted(held) == sorted(name for name, _, _ in BOTS)
    for bot, deals in held.items():
        assert sorted(deal for deal, _, _ in deals) == list(range(1, DEAL_SETS + 1)), bot  # each once, every one
        for _, _, seats in deals:  # alone with the house trio, in the other three seats in turn
            assert [b for b in seats if b != bot] == list(HOUSE_TRIO)


def test_every_bot_of_a_deal_set_held_it_in_the_same_seat_against_the_same_trio(played: Path) -> None:
    by_deal: dict[int, set[tuple[object, ...]]] = {}
    for deals in _held(played).values():
        for deal, seat, seats in deals:
            by_deal.setdefault(deal, set()).add((seat, tuple(b if b in HOUSE_TRIO else None for b in seats)))
    assert sorted(by_deal) == list(range(1, DEAL_SETS + 1))
    assert all(len(shapes) == 1 for shapes in by_deal.values())
    # The seat moves from deal set to deal set: four rounds take the four seats.
    assert sorted(next(iter(by_deal[d]))[0] for d in range(1, 5)) == [0, 1, 2, 3]


def test_the_standings_compare_bots_on_the_same_cards_in_the_same_seat(played: Path) -> None:
    """Each bot's duplicate score is its game total minus the mean of the other bots' on the same deal set (the
    same hands in the same seat, against the same trio); the head-to-head difference is the same game against
    game; the house trio is listed apart, unranked."""
    totals: dict[int, dict[str, int]] = {}
    for rounds in games(played).values():
        last = rounds[-1]
        for seat, bot in enumerate(last["seats"]):
            if bot not in HOUSE_TRIO:
                totals.setdefault(last["deal_set"], {})[bot] = last["totals"][seat]
    report = standings(played)
    rows = {row["bot"]: row for row in report["standings"]}
    for bot, _, _ in BOTS:
        expected = statistics.fmean(
            (held[bot] - statistics.fmean(t for other, t in held.items() if other != bot)) / 10
            for held in totals.values())
        assert rows[bot]["dup_per_game"] == pytest.approx(expected, abs=1e-9), bot
        assert rows[bot]["rank"] is not None and rows[bot]["games"] == DEAL_SETS
    for house in HOUSE_TRIO:
        assert rows[house]["house"] and rows[house]["rank"] is None
        assert rows[house]["reason"] == "house trio: every bot's opponents"
    pairs = {(c["a"], c["b"]): c for c in report["head_to_head"]}
    assert not any(a in HOUSE_TRIO or b in HOUSE_TRIO for a, b in pairs)  # no comparison on other cards
    diff = statistics.fmean((t["heur-b"] - t["rand-a"]) / 10 for t in totals.values())
    assert pairs["heur-b", "rand-a"]["diff"]["mean"] == pytest.approx(diff, abs=1e-9)
    assert pairs["heur-b", "rand-a"]["games"] == DEAL_SETS and pairs["heur-b", "rand-a"]["pairs"] == 0
    text = (played / "standings.txt").read_text(encoding="utf-8")
    assert "house-1 (house)" in text.split("Not ranked")[1]
    page = (played / "report.html").read_text(encoding="utf-8")
    assert "rotation once (each bot against the house trio)" in page


def _plant(records: Path, game: str, change: Callable[[dict[str, object]], None]) -> None:
    lines = []
    for line in records.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["game"] == game:
            change(record)
            line = json.dumps(record, separators=(",", ":"))
        lines.append(line)
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_verify_catches_a_bot_that_holds_a_deal_set_twice(played: Path, tmp_path: Path) -> None:
    folder = tmp_path / "results"
    shutil.copytree(played, folder)
    # heur-b's name written over rand-c's in rand-c's game of round 2: heur-b holds deal set 2 twice.
    victim = next(game for game, rounds in games(folder).items()
                  if rounds[0]["schedule_round"] == 2 and "rand-c" in rounds[0]["seats"])

    def rename(record: dict[str, object]) -> None:
        record["seats"] = ["heur-b" if bot == "rand-c" else bot for bot in record["seats"]]  # type: ignore[attr-defined]

    _plant(folder / "records.jsonl", victim, rename)
    checked = cli("verify", folder)
    assert checked.returncode == 1
    assert "heur-b was dealt the cards of deal set 2 twice" in checked.stdout + checked.stderr
    assert "a bot holds each deal set's cards at most once in the whole event" in checked.stdout + checked.stderr


def test_verify_catches_a_bot_that_held_a_deal_set_in_another_seat(played: Path, tmp_path: Path) -> None:
    folder = tmp_path / "results"
    shutil.copytree(played, folder)
    victim = next(game for game, rounds in games(folder).items()
                  if rounds[0]["schedule_round"] == 3 and "rand-a" in rounds[0]["seats"])

    def swap(record: dict[str, object]) -> None:  # rand-a's name and house-1's change places: the hands stay
        record["seats"] = [{"rand-a": "house-1", "house-1": "rand-a"}.get(b, b) for b in record["seats"]]  # type: ignore[attr-defined]

    _plant(folder / "records.jsonl", victim, swap)
    checked = cli("verify", folder)
    assert checked.returncode == 1
    said = checked.stdout + checked.stderr
    # Said of the first game of deal set 3 that departs from the first one read: rand-a's, or another's beside it.
    assert "rand-a held deal set 3 in seat" in said or (
        "held deal set 3 in seat" in said and "but rand-a held it" in said)
    assert "every bot holds a deal set's cards in the same seat against the same house trio" in said


@pytest.mark.parametrize(("fmt", "tables", "words"), [
    ("gauntlet", '[gauntlet]\nchampion = "heur-b"\n', 'tournament.format = "gauntlet" does not take '
     'tournament.rotation = "once": a gauntlet seats its champion with every trio of the field'),
    ("swiss", "", 'tournament.format = "swiss" does not take tournament.rotation = "once": swiss seats bots of '
     "neighbouring standings at one table"),
    ("head-to-head", '[head-to-head]\na = "heur-b"\nb = "rand-a"\nopponents = ["rand-c", "heur-d"]\n',
     'head-to-head.opponents must be left out under rotation = "once"'),
])
def test_a_format_that_cannot_take_once_is_refused_with_its_sentence(fmt: str, tables: str, words: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(_config(fmt, tables))
    assert words in str(refused.value)
    parse_config(_config(fmt, tables, rotation="cyclic"))  # the same tables without "once" are fine


def test_the_command_line_refuses_a_gauntlet_under_once_and_a_bot_named_as_the_trio(tmp_path: Path) -> None:
    done = cli("run", write(tmp_path / "g.toml", _config("gauntlet", '[gauntlet]\nchampion = "heur-b"\n')))
    assert done.returncode == 2 and "does not take tournament.rotation = \"once\"" in done.stderr
    named = (*BOTS[:3], ("House-2", RANDOM, 9))
    with pytest.raises(ConfigError, match="has the name of one of the house trio"):
        parse_config(_config(bots=named))
    # A round robin under once compares as few as 2 bots (each with the other on the same cards), not 1.
    assert parse_config(_config(bots=BOTS[:2])).rotation == Rotation.ONCE
    with pytest.raises(ConfigError, match="needs at least 2 bots"):
        parse_config(_config(bots=BOTS[:1]))


def test_a_class_of_30_plays_about_as_many_games_a_deal_set_under_once_as_under_the_full_rotation() -> None:
    """30 students and a house bot: 8 tables of 4 rotations (one house bot padding the field), or a game each."""
    field = [f"s{n}" for n in range(31)]
    full = Schedule(bots=field, format="round-robin", rotation="cyclic", deal_sets=range(1, 11), seed=3)
    once = Schedule(bots=field, format="round-robin", rotation="once", deal_sets=range(1, 11), seed=3)
    assert (full.total(), once.total()) == (320, 310)
    assert once.house == list(HOUSE_TRIO) and len(once.round_blocks(1)) == 31


def test_a_sequential_test_under_once_reads_one_value_per_deal_set(tmp_path: Path) -> None:
    tables = '[sprt]\na = "heur-b"\nb = "rand-a"\ndelta1 = 1.0\nburn_in = 10\n'
    done = cli("run", write(tmp_path / "s.toml", _config("sprt", tables, deal_sets=30, bots=BOTS[:2])),
               "--results", tmp_path / "results")
    assert done.returncode == 0, done.stderr
    assert cli("verify", tmp_path / "results").returncode == 0
    comparison = standings(tmp_path / "results")["comparison"]
    # Far apart: decided soon after the burn-in, one value for each deal set's two games; the cap is the deal sets,
    # and the run stopped at the deal set that decided.
    test = comparison["sprt"]
    n = test["n"]
    assert (test["verdict"], test["cap"]) == ("H1", 30) and 10 <= n < 30
    assert comparison["diff"]["clusters"] == n and comparison["games"] == n
    held = _held(tmp_path / "results")
    assert sorted(d for d, _, _ in held["heur-b"]) == sorted(d for d, _, _ in held["rand-a"]) == list(range(1, n + 1))


# --- the ladder -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ladder_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ladder of four in-process versions whose blocks are played under "once", after three blocks."""
    folder = tmp_path_factory.mktemp("ladder") / "ladder"
    ladder = make_ladder(folder, tables="1", placement_blocks="1", share="0", rotation='"once"')
    for name, spec in (("rand-a", RANDOM), ("heur-a", HEURISTIC), ("rand-b", RANDOM), ("heur-b", HEURISTIC)):
        ladder.add_entrant(name, python=spec)
    serve_until(ladder, lambda session: done_blocks(session) >= 3)
    ladder.close()
    return folder


def test_a_ladder_plays_each_version_once_on_its_blocks_deal_set_against_the_house_trio(ladder_once: Path) -> None:
    ladder = Ladder.open(ladder_once)
    found = check_ladder(ladder)
    assert found.ok, found.problems
    with ladder.session() as session:
        labels = {v.id: v.label for v in session.scalars(select(Version))}
        blocks = session.scalars(select(Block).where(Block.state == BlockState.DONE)).all()
        assert len(blocks) >= 3
        for block in blocks:  # each verifies: check_ladder audited it
            result = outcome(ladder_once / block.folder)
            seated = [labels[v] for v in block.seats]
            # A game for each version, in the order stored, alone with the house trio, all in one seat.
            assert [[b for b in g.seats if b not in HOUSE_TRIO] for g in result.games] == [[v] for v in seated]
            assert len({[b in HOUSE_TRIO for b in g.seats].index(False) for g in result.games}) == 1
            # The block score: its total minus the mean of the four versions' totals on the same cards.
            mean = sum(result.points.values()) / 4
            stored = {r.version_id: r for r in session.scalars(select(BlockResult).where(
                BlockResult.block_id == block.id))}
            for version in block.seats:
                row = stored[version]
                assert row.games == 1 and row.score == pytest.approx(row.points - mean)
            assert sum(r.score for r in stored.values()) == pytest.approx(0.0, abs=1e-9)
            # The ratings move once a block, on the four versions' places by those totals.
            assert len(session.scalars(select(RatingPoint).where(RatingPoint.block_id == block.id)).all()) == 4
            view = block_queries.block(session, ladder_once, block.id)
            assert isinstance(view, block_queries.BlockView) and view.rotation == "once"
            assert [[s.version for s in g.seats if s.version not in HOUSE_TRIO] for g in view.games] == [
                [v] for v in seated]
        ratings = session.scalars(select(Rating)).all()
        assert len(ratings) == 4 and all(r.games == r.blocks for r in ratings)
    with serving(ladder) as url:
        page = httpx.get(f"{url}/blocks/{blocks[0].id}", timeout=20).text
    assert "played once by each version, in the same seat, against the house trio" in page
    assert "<h2>Versions</h2>" in page and "<h2>Seats</h2>" not in page
    # The final is played the same way: its configuration is a round robin under "once".
    final = parse_config(event_text("final", 5, 2, [{"name": "a#1", "python": RANDOM},
                                                   {"name": "b#1", "python": RANDOM}], ladder.settings))
    assert final.rotation == Rotation.ONCE
    ladder.close()


def test_ladder_check_finds_a_once_block_stored_with_its_versions_out_of_order(ladder_once: Path,
                                                                                tmp_path: Path) -> None:
    ladder, block = copy_with_first_rated_block(ladder_once, tmp_path / "copy")
    with ladder.session() as session:
        session.execute(update(Block).where(Block.id == block.id).values(seat0=block.seat1, seat1=block.seat0))
    found = check_ladder(ladder)
    ladder.close()
    assert any("(game by game), but its games were played by" in problem for problem in found.problems), \
        found.problems


def _remy_blocks(session: Session, *states: BlockState) -> list[Block]:
    remy = session.scalars(select(Version).where(Version.label == "remy#1")).one().id
    return [b for b in session.scalars(select(Block).where(Block.state.in_(states))) if remy in b.seats]


def test_a_remote_version_that_misses_its_one_game_of_a_once_block_voids_it(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", tables="1", placement_blocks="1", share="0", rotation='"once"',
                         patience_s="1.0")
    for name, spec in (("rand-a", RANDOM), ("heur-a", HEURISTIC), ("rand-b", RANDOM)):
        ladder.add_entrant(name, python=spec)
    with ladder.session() as session:
        session.execute(update(Version).values(state=VersionState.ACTIVE, activated=utc_now()))
    ladder.add_entrant("remy", remote=True)
    ladder.bot_token("remy")  # a remote version is seated once its bot has a token to connect with
    serve_until(ladder, lambda session: bool(_remy_blocks(session, BlockState.DONE, BlockState.VOID)),
                service=LadderService(ladder))
    with ladder.session() as session:
        block = _remy_blocks(session, BlockState.DONE, BlockState.VOID)[0]
        assert block.state == BlockState.VOID
        assert block.note.startswith("remy#1 was not there when its game began: the fallback played it, so the "
                                     "block is void")
        assert not session.scalars(select(BlockResult).where(BlockResult.block_id == block.id)).all()
    found = check_ladder(ladder)
    ladder.close()
    assert found.ok, found.problems
