"""The parts of a run, each alone, and what each returns: the release of the plan, the attendance, the absence
policy, the monitor, the run's summary, the table slots and the pool's collector.

Each part is built from a real configuration and a real results folder (planned by
:func:`arena.event.run.preparation.prepare`, as a run plans it) and asked what it did: the values it returns,
the outcomes it puts, the manifest and records it writes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from arena.core.dealing import DealSource, seeded_deals
from arena.errors import RecordsError
from arena.event.plan.manifest import BotStatus
from arena.event.plan.status import BotCondition, RunState, snapshot
from arena.event.play.collector import Collector
from arena.event.play.dispatcher import Dispatcher
from arena.event.play.outcomes import Failed, Finished, Freed, Outcomes
from arena.event.play.recorder import Recorder
from arena.event.play.seats import Seat, Seating
from arena.event.play.slots import Slots
from arena.event.run.attendance import Attendance, TakenOut
from arena.event.run.monitor import Monitor
from arena.event.run.policy import Absence, absence
from arena.event.run.preparation import add_house, identity, open_folder, prepare
from arena.event.run.release import Filled, Release
from arena.event.run.summary import RunSummary
from arena.event.setup.botconfig import BotConfig
from arena.event.setup.config import TournamentConfig, parse_config
from arena.records.format import iter_records
from arena.records.store import ResultsStore
from arena.transports.grpc.tokens import token_sha256
from tests.conftest import Bots, arena, token, wait_connected
from tests.helpers.runs import NO_FAST, tournament_text

REMOTE = '\n[[bots]]\nname = "d"\nremote = true\ntoken_sha256 = "{}"\n'.format("ab" * 32)
"""A remote bot that never connects (there is no server): absent from the start."""
REMOTE_D = '\n[[bots]]\nname = "d"\nremote = true\ntoken_sha256 = "{}"\n'.format(token_sha256(token("d")))
"""The remote bot ``d`` with the token the test bots connect with."""


@dataclasses.dataclass
class Planned:
    """A run planned in a real results folder, with the parts that steer it, none of them playing."""

    config: TournamentConfig
    store: ResultsStore
    bots: dict[str, BotConfig]
    statuses: dict[str, BotStatus]
    seating: Seating
    dispatcher: Dispatcher[Seat]
    summary: RunSummary
    release: Release[Seat]
    attendance: Attendance
    logged: list[str]

    def manifest(self) -> dict[str, Any]:
        """The manifest as written in the folder now."""
        data: dict[str, Any] = json.loads(self.store.manifest_path.read_text(encoding="utf-8"))
        return data

    def deals(self, deal_set: int) -> DealSource:
        return seeded_deals(self.config.seed, deal_set)


def planned(tmp_path: Path, text: str, *, serve: bool = False) -> Planned:
    """Plans ``text``'s tournament in ``tmp_path / "results"`` as a run does, and builds its parts."""
    config = parse_config(text, tmp_path / "t.toml")
    store = ResultsStore(tmp_path / "results")
    games, previous = open_folder(store, False)
    ready = prepare(config, games, previous, identity(config), folder=store.folder, where=str(store.manifest_path),
                    deal_sets=range(1, config.deal_sets + 1), standings=dict)
    bots = {bot.name: bot for bot in config.bots} | ready.bots
    statuses = dict(ready.statuses)
    seating = Seating(config, bots, statuses)
    dispatcher: Dispatcher[Seat] = Dispatcher(config.rotation, config.seed)
    summary = RunSummary(store.folder)
    logged: list[str] = []
    attendance = Attendance(statuses, seating, dispatcher, summary, store, log=logged.append, bots=bots,
                            patience=config.absent_after, forfeit=config.forfeit, serve=serve)
    release: Release[Seat] = Release(ready.schedule, ready.planner, ready.manifest, ready.rounds, dispatcher,
                                     ready.recorded, store.folder, store.manifest_path.name, save=attendance.save)
    attendance.attach(ready.manifest, release, ready.recorded.blocks)
    store.write_manifest(ready.manifest.to_dict())
    return Planned(config, store, bots, statuses, seating, dispatcher, summary, release, attendance, logged)


def no_task(work: Coroutine[Any, Any, None]) -> None:
    """The spawn of slots whose games are all of the fast path: none is played in a task."""
    work.close()
    pytest.fail("a game of the fast path was played in a task")


def released(run: Planned) -> Filled:
    """Every round of the plan released."""
    return run.release.fill(10**6, False, lambda: False, run.attendance.excluded)


# -- the release of the plan -----------------------------------------------------------------------


def test_a_fixed_plan_is_released_a_window_ahead_and_asks_nothing_of_the_runner(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(deal_sets=6))
    assert run.release.fill(1, False, lambda: False, run.attendance.excluded) == Filled()
    assert run.release.number == 1
    assert run.dispatcher.counts() == (0, 4)
    assert released(run) == Filled()
    assert run.release.number == run.release.schedule.rounds == 6
    assert run.release.planned(run.dispatcher.counts()[1]) == 24
    assert released(run) == Filled()  # nothing is left to release


def test_a_sequential_test_that_has_decided_releases_no_new_round(tmp_path: Path) -> None:
    text = tournament_text(("a", "b"), deal_sets=0, tournament='format = "sprt"\n',
                           extra='[sprt]\na = "a"\nb = "b"\ndelta1 = 1.0\n')
    run = planned(tmp_path, text)
    assert run.release.fill(1, False, lambda: True, run.attendance.excluded) == Filled(decided=True)
    assert run.release.number == 0 and run.dispatcher.idle
    assert run.release.fill(1, False, lambda: False, run.attendance.excluded) == Filled()
    assert run.release.number == 1 and not run.dispatcher.idle


def test_a_swiss_round_returns_the_house_bots_it_seats(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(("a", "b", "c", "d", "e"), deal_sets=3, tournament='format = "swiss"\n'))
    filled = run.release.fill(1, False, lambda: False, run.attendance.excluded)
    assert filled == Filled(house=("house-1", "house-2", "house-3"))
    assert run.manifest()["house_bots"] == list(filled.house)  # the round is in the manifest before it is played


# -- the attendance ---------------------------------------------------------------------------------


def test_a_bot_disqualified_is_returned_for_the_runner_and_written_at_once(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(("a", "b", "c", "d", "e"), deal_sets=2))
    released(run)
    games = run.dispatcher.counts()[1]
    out = run.attendance.take_out("e", BotCondition.DISQUALIFIED, "12 faulty decisions (the limit is 10)")
    assert out == TakenOut("e", BotCondition.DISQUALIFIED, "12 faulty decisions (the limit is 10)")
    assert run.summary.disqualified == {"e": "12 faulty decisions (the limit is 10)"}
    assert run.manifest()["statuses"]["e"]["status"] == "disqualified"
    assert run.logged == ["e is disqualified: 12 faulty decisions (the limit is 10)"]
    assert all("e" not in game.seats for game in run.dispatcher.left())  # no block of it had begun
    assert run.dispatcher.counts()[1] < games
    assert run.attendance.excluded() == {"e"}
    assert run.attendance.take_out("e", BotCondition.WITHDRAWN, "again") is None  # out already: nothing new
    assert run.logged == ["e is disqualified: 12 faulty decisions (the limit is 10)"]


def test_a_swiss_field_made_smaller_returns_the_house_bot_it_needs(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(deal_sets=3, tournament='format = "swiss"\n'))
    assert run.release.fill(1, False, lambda: False, run.attendance.excluded) == Filled()
    out = run.attendance.take_out("r4", BotCondition.WITHDRAWN, "gone")
    assert out == TakenOut("r4", BotCondition.WITHDRAWN, "gone", ("house-1",))
    assert run.manifest()["house_bots"] == ["house-1"] and "house-1" not in run.bots  # the runner adds it
    add_house(run.bots, out.house)
    assert run.bots["house-1"].house


def test_the_absence_policy_is_applied_as_it_says(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(("a", "b", "c"), deal_sets=2, extra=REMOTE))
    released(run)
    assert run.attendance.apply(Absence(frozenset({"d"}), 0.0, forfeit=("d",))) == []
    assert run.seating.forfeiting == {"d"}
    assert run.manifest()["statuses"]["d"]["status"] == "absent"
    assert run.logged[-1].startswith("d is absent (never connected in ")

    run.attendance.returned("d")
    assert run.seating.forfeiting == set() and "d" not in run.manifest()["statuses"]
    assert run.logged[-1] == "d is back"
    assert run.attendance.back() == []  # no server: no one connects

    stopped = run.attendance.apply(Absence(frozenset({"d"}), None, waiting=True, stop=("d",)))
    assert stopped == [] and run.summary.outstanding == 8 and list(run.summary.awaited) == ["d"]

    taken = run.attendance.apply(Absence(frozenset({"d"}), 0.0, withdraw=("d",)))
    assert [(out.bot, out.status, out.house) for out in taken] == [("d", BotCondition.WITHDRAWN, ())]
    assert taken[0].reason.startswith("absent: never connected in ")
    assert run.summary.withdrawn == {"d": taken[0].reason}


def test_an_absent_bot_connected_again_is_named_back(tmp_path: Path, bots: Bots) -> None:
    run = planned(tmp_path, tournament_text(("a", "b", "c"), deal_sets=2, extra=REMOTE_D))
    released(run)
    run.attendance.apply(Absence(frozenset({"d"}), 0.0, forfeit=("d",)))

    async def connect() -> list[list[str]]:
        async with arena(["d"]) as (server, port):
            run.seating.server = server
            seen = [run.attendance.back()]
            bots.random(port, "d")
            await wait_connected(server, ["d"])
            seen.append(run.attendance.back())
            run.attendance.returned("d")
            seen.append(run.attendance.back())
            return seen

    assert asyncio.run(asyncio.wait_for(connect(), 30)) == [[], ["d"], []]
    assert run.logged[-1] == "d is back" and run.statuses == {}


# -- the absence policy -----------------------------------------------------------------------------


@pytest.mark.parametrize(("forfeit", "serve", "said"), [
    ("fallback", False, Absence(frozenset({"d"}), 0.0, forfeit=("d",))),
    ("withdraw", False, Absence(frozenset({"d"}), 0.0, withdraw=("d",))),
    ("wait", False, Absence(frozenset({"d"}), None, waiting=True, stop=("d",))),
    ("wait", True, Absence(frozenset({"d"}), None, waiting=True)),
])
def test_an_overdue_absent_bot_is_dealt_with_as_forfeit_says(tmp_path: Path, forfeit: str, serve: bool,
                                                            said: Absence) -> None:
    text = tournament_text(("a", "b", "c"), deal_sets=2, extra=REMOTE, tournament=f'forfeit = "{forfeit}"\n')
    run = planned(tmp_path, text.replace("absent_after_s = 30", "absent_after_s = 0"), serve=serve)
    released(run)
    assert run.attendance.look(room=True) == said
    assert run.attendance.awaited == {"d"}
    assert list(run.attendance.awaited_words()) == ["d"]


def test_an_absent_bot_within_its_patience_is_waited_for(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(("a", "b", "c"), deal_sets=2, extra=REMOTE))
    released(run)
    told = absence(run.dispatcher, run.seating, run.bots, patience=3600.0, forfeit="fallback", room=True, serve=False)
    assert told.awaited == {"d"} and told.next_look is not None and 3500 < told.next_look <= 3600
    assert not (told.forfeit or told.withdraw or told.stop or told.waiting)
    no_room = absence(run.dispatcher, run.seating, run.bots, patience=0.0, forfeit="fallback", room=False,
                      serve=False)
    assert no_room == Absence(frozenset({"d"}))  # no table free: nothing to decide yet


def test_no_absent_bot_asks_for_nothing(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(deal_sets=2))
    released(run)
    assert run.attendance.look(room=True) == Absence()
    assert run.attendance.apply(Absence()) == [] and run.logged == []


# -- the monitor and the summary -------------------------------------------------------------------


class Sprt:
    """A sequential test's line, as a judge gives it."""

    def __init__(self) -> None:
        self.refreshed = 0

    def refresh(self, force: bool = False) -> None:
        self.refreshed += 1

    def progress_line(self) -> str | None:
        return "LLR 0.50 (-2.94, 2.94)"


def test_the_monitor_writes_the_status_it_is_given_and_logs_without_a_bar(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(deal_sets=2))
    released(run)
    lines: list[str] = []
    asked: list[int] = []

    def status() -> Any:
        asked.append(1)
        return snapshot(
            "t", RunState.RUNNING, address="", tls=False, done=1, planned=8, kinds={b: "python" for b in run.bots},
            statuses=run.statuses, presence=run.seating, broken={}, left=(g.seats for g in run.dispatcher.left()),
            games={"r1": 1}, faults={}, decisions={}, sessions=(), tables=[], awaited=(), test="")

    monitor = Monitor(run.store.folder, lines.append, Sprt(), status=status, faults=lambda: 0, awaited=dict)
    monitor.log("plan changed: nothing")
    assert lines == ["plan changed: nothing"]
    assert monitor.test_line() == "LLR 0.50 (-2.94, 2.94)"
    monitor.game_done()  # the first game writes the status at once
    written = json.loads((run.store.folder / "status.json").read_text(encoding="utf-8"))
    assert written["state"] == "running" and written["games_done"] == 1 and asked == [1]
    monitor.write_status(force=True)
    assert asked == [1, 1]


def test_the_summary_counts_what_the_folder_holds(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(deal_sets=2))
    released(run)
    slots = Slots(1, run.config.rules, run.config.table, run.seating, run.deals,
                  recorder=Recorder(run.store, run.config), outcomes=Outcomes(), spawn=no_task)
    while not run.dispatcher.idle:  # as the runner plays the fast path: each game counted as it is returned
        for game, seats in run.dispatcher.pick(8, run.seating.take, run.seating.give_back):
            played = slots.start(game, seats)
            assert played is not None
            run.dispatcher.finished(played.game)
    run.store.close()
    games, _ = open_folder(ResultsStore(run.store.folder), False)
    summary = RunSummary(run.store.folder)
    summary.begin(games, {"r1": BotStatus(BotCondition.DISQUALIFIED, "faults"),
                          "r2": BotStatus(BotCondition.WITHDRAWN, "gone"),
                          "r3": BotStatus(BotCondition.ABSENT, "away")})
    assert summary.skipped == 8 == len(games)
    assert summary.faults == sum(len(r.faults) for game in games for r in game.rounds)
    assert (summary.disqualified, summary.withdrawn) == ({"r1": "faults"}, {"r2": "gone"})


# -- the table slots and the pool's collector: what came of each game -----------------------------------


def test_a_game_of_the_fast_path_is_returned_played_and_written(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(deal_sets=1))
    released(run)
    outcomes = Outcomes()
    slots = Slots(2, run.config.rules, run.config.table, run.seating, run.deals,
                  recorder=Recorder(run.store, run.config), outcomes=outcomes, spawn=no_task)
    [(game, seats)] = run.dispatcher.pick(1, run.seating.take, run.seating.give_back)
    played = slots.start(game, seats)
    assert isinstance(played, Finished) and played.game == game and len(played.record.rounds) == 5
    run.store.close()
    assert {record.game for record in iter_records(run.store.records_path)} == {game.id}
    assert len(outcomes) == 0 and slots.free == [2, 1]


def at_tables(run: Planned, games: int) -> tuple[list[Finished | None], list[Any], Slots]:
    """Starts ``games`` games at the tables and plays them; what ``start`` returned and the outcomes put."""
    outcomes = Outcomes()
    spawned: list[Coroutine[Any, Any, None]] = []
    slots = Slots(2, run.config.rules, run.config.table, run.seating, run.deals,
                  recorder=Recorder(run.store, run.config), outcomes=outcomes, spawn=spawned.append)
    picked = run.dispatcher.pick(games, run.seating.take, run.seating.give_back)
    started = [slots.start(game, seats) for game, seats in picked]
    assert slots.free == [2, 1][: 2 - games]

    async def play() -> None:
        await asyncio.gather(*spawned)

    asyncio.run(asyncio.wait_for(play(), 30))
    assert outcomes.wake.is_set() and slots.free and sorted(slots.free) == [1, 2]
    return started, outcomes.take(), slots


def test_games_at_the_tables_put_what_came_of_them_in_the_order_they_ended(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(deal_sets=2, spec=NO_FAST))
    released(run)
    started, said, _ = at_tables(run, 2)
    assert started == [None, None]  # nothing played yet: what comes of them is put as it happens
    assert [type(outcome) for outcome in said].count(Finished) == 2 and [type(o) for o in said].count(Freed) == 2
    finished = [outcome for outcome in said if isinstance(outcome, Finished)]
    assert said.index(finished[0]) < len(said) - 1 and isinstance(said[-1], Freed)
    run.store.close()
    ids = [record.game for record in iter_records(run.store.records_path)]
    assert sorted(set(ids)) == sorted(outcome.game.id for outcome in finished)
    assert run.dispatcher.counts() == (0, 8)  # the runner, not the slots, counts a game played


def test_the_arenas_own_failure_at_a_table_is_put_as_a_failure(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(deal_sets=1, spec=NO_FAST))
    released(run)
    run.store.records_path.mkdir()  # the records cannot be written
    started, said, _ = at_tables(run, 1)
    assert started == [None]
    assert [type(outcome) for outcome in said] == [Failed, Freed]
    failed = said[0]
    assert isinstance(failed, Failed) and isinstance(failed.error, RecordsError)
    assert "cannot write the records" in str(failed.error)


def test_the_collector_puts_a_chunks_games_in_the_order_handed_out(tmp_path: Path) -> None:
    run = planned(tmp_path, tournament_text(deal_sets=2, tournament="workers = 2\n"))
    released(run)
    outcomes = Outcomes()
    spawned: list[asyncio.Task[None]] = []

    async def play() -> list[str]:
        loop = asyncio.get_running_loop()
        collector = Collector.open(run.config, run.bots, None, recorder=Recorder(run.store, run.config),
                                   outcomes=outcomes, spawn=lambda work: spawned.append(loop.create_task(work)),
                                   folder=run.store.folder)
        assert collector is not None
        try:
            picked = run.dispatcher.pick(0, run.seating.take, run.seating.give_back, pooled=collector.pooled,
                                         pool_slots=collector.free, lane=collector.sequential)
            collector.hand_out([collector.job(game, seats) for game, seats in picked])
            await asyncio.gather(*spawned)
        finally:
            collector.close()
        return [game.id for game, _ in picked]

    handed = asyncio.run(asyncio.wait_for(play(), 60))
    said = outcomes.take()
    assert [o.game.id for o in said if isinstance(o, Finished)] == handed and len(handed) == 8
    assert isinstance(said[-1], Freed) and not any(isinstance(o, Failed) for o in said)
    run.store.close()
    assert list(dict.fromkeys(record.game for record in iter_records(run.store.records_path))) == handed
