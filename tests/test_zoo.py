"""The reference zoo and ``callbreak-arena rate``: the fixed pool and cycle of opponents, the score read from
the records, the stopping rules, the published scores reproduced by rating the members themselves, and the
command line's answers to a wrong BOT."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.event.audit import audit
from arena.rating.zoo import CANDIDATE, Zoo, block_seat_key, block_seed, load_zoo, opponents, rate
from arena.records.store import ResultsStore
from tests.helpers.ladder import GOOD_BOT
from tests.helpers.runs import cli, needs_zoo

ZOO = load_zoo()


def _light(zoo: Zoo) -> Zoo:
    """A zoo of the fast members and a copy of each under another name: the same machinery, quicker blocks."""
    fast = [m for m in zoo.members if m.name in ("random", "heuristic")]
    members = (*fast, *(dataclasses.replace(m, name=f"{m.name}-2") for m in fast))
    return Zoo(members, zoo.pool_seed, zoo.profile, zoo.blocks)


def _lines(block: Path) -> list[dict[str, object]]:
    """A block's record lines, less what depends on the clock."""
    lines = [json.loads(line) for line in (block / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line.pop("timings", None)
    return lines


def test_the_zoo_is_versioned_and_ordered_by_its_published_scores() -> None:
    assert len({m.name for m in ZOO.members}) == len(ZOO.members) >= 4
    assert all(m.version >= 1 and m.low <= m.score <= m.high for m in ZOO.members)
    scores = [m.score for m in ZOO.members]
    assert scores == sorted(scores), "the members are listed from the lowest rung up"
    assert ZOO.blocks % ZOO.cycle == 0


def test_every_trio_comes_once_a_cycle_and_every_block_has_its_own_deals() -> None:
    cycle = [frozenset(m.name for m in opponents(ZOO, i)) for i in range(ZOO.cycle)]
    assert sorted(map(sorted, cycle)) == sorted(sorted(t) for t in itertools.combinations(
        [m.name for m in ZOO.members], 3))
    assert [opponents(ZOO, i) for i in range(ZOO.cycle)] == [opponents(ZOO, i + ZOO.cycle) for i in range(ZOO.cycle)]
    seeds = [block_seed(ZOO.pool_seed, i) for i in range(1000)]
    assert len(set(seeds)) == 1000 and all(0 <= s < 2**62 for s in seeds)
    assert block_seed(ZOO.pool_seed, 0) == block_seed(ZOO.pool_seed, 0) != block_seed(ZOO.pool_seed + 1, 0)


@pytest.mark.slow
def test_the_score_is_the_candidates_points_above_its_table_and_the_records_verify(tmp_path: Path) -> None:
    zoo = _light(ZOO)
    heuristic = zoo.member("heuristic")
    assert heuristic is not None
    table = {"python": heuristic.spec}
    rating = asyncio.run(rate(table, zoo, tmp_path / "a", max_blocks=zoo.cycle, seconds=600))
    assert rating.blocks == zoo.cycle and rating.stopped == "blocks"
    for index, score in enumerate(rating.scores):
        block = tmp_path / "a" / f"{index:04d}"
        assert audit(block) is None
        games = list(ResultsStore(block).games())
        assert len(games) == 4
        mine = [g.final.totals[g.final.seats.index(CANDIDATE)] - sum(g.final.totals) / 4 for g in games]
        assert score == pytest.approx(sum(mine) / 4 / 10)
        assert {s for g in games for s in g.final.seats} == {CANDIDATE, *(m.name for m in opponents(zoo, index))}
    assert rating.mean == pytest.approx(sum(rating.scores) / len(rating.scores))
    assert rating.low < rating.mean < rating.high
    # The same pool gives the same games, whatever the folder: byte for byte but for the clock.
    again = asyncio.run(rate(table, zoo, tmp_path / "b", max_blocks=zoo.cycle, seconds=600))
    assert again.scores == rating.scores
    assert _lines(tmp_path / "a" / "0000") == _lines(tmp_path / "b" / "0000")
    # A secret pool deals other hands.
    secret = asyncio.run(rate(table, zoo, tmp_path / "c", max_blocks=zoo.cycle, seconds=600, seed=12345))
    assert secret.scores != rating.scores
    assert (tmp_path / "c" / "0000" / "seat_key").read_text() == block_seat_key(12345, 0).hex() + "\n"


@pytest.mark.slow
def test_it_stops_at_a_cycles_end_when_precise_enough_or_out_of_time(tmp_path: Path) -> None:
    zoo = _light(ZOO)
    table = {"python": "arena.players.house:HouseBot"}
    loose = asyncio.run(rate(table, zoo, tmp_path / "loose", precision=1000.0, max_blocks=40))
    assert (loose.stopped, loose.blocks) == ("precision", zoo.cycle)
    for index in range(zoo.cycle):  # each block's seat seeds are keyed as publicly as its deals
        key = (tmp_path / "loose" / f"{index:04d}" / "seat_key").read_text()
        assert key == block_seat_key(zoo.pool_seed, index).hex() + "\n"
    hurried = asyncio.run(rate(table, zoo, tmp_path / "hurried", precision=1e-9, max_blocks=40, seconds=1e-6))
    assert (hurried.stopped, hurried.blocks) == ("time", zoo.cycle)
    rounded = asyncio.run(rate(table, zoo, tmp_path / "hurried", precision=1e-9, max_blocks=zoo.cycle + 1))
    assert (rounded.stopped, rounded.blocks) == ("blocks", zoo.cycle)  # whole cycles only; blocks reused
    with pytest.raises(Exception, match="above 0"):
        asyncio.run(rate(table, zoo, tmp_path / "none", precision=0))


@needs_zoo
@pytest.mark.slow
@pytest.mark.soak  # a whole cycle of the zoo for each member: the score's arithmetic is held by a short test above
@pytest.mark.parametrize("member", ["random", "heuristic"])
def test_rating_a_member_lands_it_on_its_published_score(tmp_path: Path, member: str) -> None:
    published = ZOO.member(member)
    assert published is not None
    done = cli("rate", member, "--max-blocks", str(ZOO.cycle), "--json", "--results", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    rating = json.loads(done.stdout)
    assert rating["blocks"] == ZOO.cycle and rating["games"] == 4 * ZOO.cycle
    assert rating["low"] <= published.score <= rating["high"], (rating, published)
    assert rating["pool"] == ZOO.pool_seed


@needs_zoo
@pytest.mark.slow
@pytest.mark.soak  # a whole cycle, the search member too; a launched candidate's rating: tests/test_fresh_process.py
def test_a_bots_folder_is_rated_as_a_launched_bot_and_the_text_names_its_place(tmp_path: Path) -> None:
    folder = tmp_path / "lowest"
    folder.mkdir()
    (folder / "bot.py").write_text(GOOD_BOT, encoding="utf-8")
    done = cli("rate", folder, "--max-blocks", str(ZOO.cycle), "--results", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"rating {folder} on the zoo ({', '.join(m.label for m in ZOO.members)})")
    assert f"over {ZOO.cycle} blocks ({4 * ZOO.cycle} games" in lines[-2]
    assert lines[-1].startswith("on the zoo's scale: ")
    assert any(m.label in lines[-1] for m in ZOO.members)


def test_a_member_whose_extra_is_missing_is_named_with_the_install_command(tmp_path: Path) -> None:
    ismcts = ZOO.member("ismcts")
    assert ismcts is not None and ismcts.extra == "openspiel"
    missing = dataclasses.replace(ismcts, spec="arena_no_such_module.search:ISMCTS")
    zoo = dataclasses.replace(ZOO, members=tuple(missing if m.name == "ismcts" else m for m in ZOO.members))
    with pytest.raises(ConfigError, match=r"ismcts@1 needs the openspiel extra, which is not installed: "
                                          r"pip install -e '\.\[openspiel\]'"):
        asyncio.run(rate({"python": "arena.players.house:HouseBot"}, zoo, tmp_path / "r"))
    assert not (tmp_path / "r").exists()  # said before a block is played


def test_the_trios_follow_the_members_names_not_their_places_in_the_list() -> None:
    shuffled = dataclasses.replace(ZOO, members=tuple(reversed(ZOO.members)))
    assert [opponents(shuffled, i) for i in range(ZOO.cycle)] == [opponents(ZOO, i) for i in range(ZOO.cycle)]


def test_a_wrong_bot_is_one_line_saying_what_rate_takes(tmp_path: Path) -> None:
    nothing = cli("rate", "nonsense")
    members = ", ".join(m.name for m in ZOO.members)
    assert nothing.returncode == 2 and f"BOT must be a zoo member ({members})" in nothing.stderr
    missing = cli("rate", f"{tmp_path / 'nope.py'}:Bot")
    assert missing.returncode == 2 and "cannot load the in-process bot" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
