"""In-process bots at a table: each in a worker thread of its own, off the arena's event loop.

Real games on real event loops, no mocks: a slow bot is late and holds up no other table, the
deadline and the time bank apply, ``sys.exit`` and ``KeyboardInterrupt`` inside a bot are crash
faults, a bot stuck for ever neither stops its game nor keeps the process alive, and the records
are those of the fast path.
"""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from arena.core.cards import Card
from arena.core.dealing import seeded_deals
from arena.core.faults import FaultKind
from arena.core.rules import Rules
from arena.core.views import View
from arena.players.fast import play_fast
from arena.players.local import InProcessBot, LocalPlayer
from arena.players.table import TableSettings, play_game
from arena.records.format import GameRecord
from sample_bots.random_bot import RandomBot
from tests.conftest import ROOT, check_record, run, without_timings
from tests.helpers.arena_bots import (
    EventCrasher,
    Exiter,
    FastExiter,
    Frozen,
    Interrupter,
    NoFastRandom,
    Sleeper,
)

NEPALI = Rules.profile("nepali")
BOTS_FILE = ROOT / "tests" / "helpers" / "arena_bots.py"
ONE_ROUND = Rules.profile("nepali", rounds=1)


def seats(bot: InProcessBot, seat: int = 0, prefix: str = "p") -> list[LocalPlayer]:
    """``bot`` at ``seat`` and well-behaved random bots elsewhere."""
    return [LocalPlayer(bot if s == seat else NoFastRandom(s), f"{prefix}{s}") for s in range(4)]


async def game(
    players: Sequence[LocalPlayer], settings: TableSettings, rules: Rules = NEPALI, seed: int = 1,
    table_id: str = "t1",
) -> GameRecord:
    try:
        record = await play_game(rules, players, seeded_deals(seed, 1), table_id=table_id, settings=settings)
    finally:
        for player in players:
            await player.close()
    check_record(record, rules)
    return record


def bot_threads(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(f"bot {prefix}")]


def wait_gone(prefix: str, timeout: float = 2.0) -> None:
    """Waits until no worker thread of the players named ``prefix...`` is left."""
    deadline = time.monotonic() + timeout
    while bot_threads(prefix):
        assert time.monotonic() < deadline, f"threads still running: {bot_threads(prefix)}"
        time.sleep(0.005)


# --- the deadline, off the loop ---------------------------------------------------------------


def test_a_slow_bot_is_late_and_holds_up_no_other_table() -> None:
    """Sleeper blocks 600 ms on its 3rd decision under a 100 ms deadline; a table of good bots
    (300 ms: slack for a loaded test machine) plays on the same loop at the same time, and the loop
    itself never stalls for anything like the 600 ms."""

    async def scenario() -> tuple[GameRecord, GameRecord, float]:
        gaps = [0.0]
        done = asyncio.Event()

        async def heartbeat() -> None:
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.005)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        beat = asyncio.ensure_future(heartbeat())
        slow, good = await asyncio.gather(
            game(seats(Sleeper(0, delay=0.6), prefix="slow"), TableSettings(deadline_ms=100), table_id="slow"),
            game([LocalPlayer(NoFastRandom(s), f"good{s}") for s in range(4)], TableSettings(deadline_ms=300),
                 table_id="good"),
        )
        done.set()
        await beat
        return slow, good, max(gaps)

    slow, good, longest_gap = run(scenario(), timeout=20)
    assert good.faults == []
    assert longest_gap < 0.3, f"the event loop stalled for {longest_gap * 1000:.0f} ms"
    late = [f for f in slow.faults if f.seat == 0]
    assert late and {f.kind for f in late} == {FaultKind.LATE}
    assert all(f.fallback for f in late)
    first = late[0]
    assert (first.round_number, first.trick) == (1, 1)  # its call, its first card, then the 3rd decision
    assert first.detail.startswith("no answer within ") and first.detail.endswith(" ms: the deadline passed")
    assert int(first.detail.split()[3]) >= 100
    # The next decision waits behind the sleeping call, and is late too.
    assert len(late) >= 2
    assert "still busy with an earlier call" in late[1].detail


def test_the_deadline_is_enforced_for_in_process_bots() -> None:
    record = run(game(seats(Sleeper(0, delay=0.5), seat=2), TableSettings(deadline_ms=100), ONE_ROUND), 10)
    late = [f for f in record.faults if f.seat == 2]
    assert late and late[0].kind is FaultKind.LATE
    waited = int(late[0].detail.split()[3])
    assert 100 <= waited < 500, late[0].detail  # the wait ended well before the bot did


def test_the_time_bank_extends_the_wait_and_think_time_is_measured_in_the_thread() -> None:
    settings = TableSettings(deadline_ms=100, time_bank_ms=2000)
    record = run(game(seats(Sleeper(0, delay=0.25)), settings, ONE_ROUND), 10)
    assert record.faults == []
    assert record.think_ms[0] >= 250
    assert max(record.think_ms[1:]) < 250


class DeadlineReader(NoFastRandom):
    """Plays at random, and keeps the deadline each view tells it."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.deadlines: list[int] = []

    def call(self, view: View) -> int:
        self.deadlines.append(view.deadline_ms)
        return super().call(view)

    def play(self, view: View) -> Card:
        self.deadlines.append(view.deadline_ms)
        return super().play(view)


def test_the_view_tells_an_in_process_bot_its_deadline() -> None:
    reader = DeadlineReader(0)
    record = run(game(seats(reader), TableSettings(deadline_ms=700, time_bank_ms=300), ONE_ROUND), 10)
    assert record.faults == []
    assert reader.deadlines == [700] * 14  # the decision's own time; the bank is told apart over the network


def test_no_deadline_means_no_limit() -> None:
    record = run(game(seats(Sleeper(0, delay=0.15)), TableSettings(deadline_ms=0), ONE_ROUND), 10)
    assert record.faults == []


# --- crashes ------------------------------------------------------------------------------------


def shown_path(path: Path) -> str:
    """How a crash's detail names a file: relative to the working folder when inside it (the tests run
    from the repository's root), else by its name alone."""
    return path.relative_to(Path.cwd()).as_posix() if path.is_relative_to(Path.cwd()) else path.name


def test_sys_exit_in_a_bot_is_a_crash_fault_not_the_arenas_exit() -> None:
    record = run(game(seats(Exiter(1), seat=1), TableSettings(deadline_ms=0)), 20)
    assert len(record.faults) == 13 * NEPALI.rounds  # every card of seat 1; its calls are fine
    # The detail names the line of the bot that exited (sys.exit raised it, a function without a file).
    line = 1 + next(n for n, text in enumerate(BOTS_FILE.read_text(encoding="utf-8").splitlines())
                    if text.strip() == "sys.exit(3)")
    assert {(f.seat, f.kind, f.detail) for f in record.faults} == {
        (1, FaultKind.CRASH, f"the bot raised SystemExit: 3, at {shown_path(BOTS_FILE)}:{line}")}
    assert all(f.fallback for f in record.faults)
    assert threading.main_thread().is_alive()  # and this process goes on


def test_keyboard_interrupt_raised_by_a_bot_is_a_crash_fault() -> None:
    record = run(game(seats(Interrupter(3), seat=3), TableSettings(deadline_ms=0), ONE_ROUND), 10)
    assert len(record.faults) == 13
    assert {(f.seat, f.kind) for f in record.faults} == {(3, FaultKind.CRASH)}
    assert record.faults[0].detail.startswith("the bot raised KeyboardInterrupt: the bot interrupted itself, at "
                                              f"{shown_path(BOTS_FILE)}:")


def test_an_error_in_on_event_is_not_a_fault() -> None:
    bot = EventCrasher(2)
    player = LocalPlayer(bot, "listener")
    assert player.wants_events
    players = [player if s == 2 else LocalPlayer(NoFastRandom(s), f"q{s}") for s in range(4)]
    record = run(game(players, TableSettings(deadline_ms=0), ONE_ROUND), 10)
    assert record.faults == []
    assert bot.events > 50  # it was told of every call, card and trick, and failed every time


def test_the_kits_default_on_event_asks_for_no_events() -> None:
    """A kit Bot that does not override on_event is not sent events (its handler does nothing)."""
    assert not LocalPlayer(NoFastRandom(0)).wants_events
    assert LocalPlayer(EventCrasher(0)).wants_events


# --- a bot stuck for ever ----------------------------------------------------------------------


def test_a_bot_stuck_for_ever_is_late_and_the_game_completes() -> None:
    bot = Frozen(0, at=2)
    players = seats(bot, prefix="frozen")
    try:
        record = run(game(players, TableSettings(deadline_ms=50), ONE_ROUND), 10)
    finally:
        bot.release()
    late = [f for f in record.faults if f.seat == 0]
    assert len(late) == 13  # its call went through; every card after it is late
    assert {f.kind for f in late} == {FaultKind.LATE}
    assert all("still busy" in f.detail for f in late[1:])
    # Released after its loop is gone, the stuck call returns into nothing, and the thread ends.
    wait_gone("frozen")


_STUCK_GAME = """
import asyncio, time
from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.players.local import LocalPlayer
from arena.players.table import TableSettings, play_game
from tests.helpers.arena_bots import Frozen, NoFastRandom

def main():
    players = [LocalPlayer(Frozen(0, at=1), "stuck")] + [LocalPlayer(NoFastRandom(s), f"p{s}") for s in (1, 2, 3)]
    record = asyncio.run(play_game(Rules.profile("nepali", rounds=1), players, seeded_deals(1, 1),
                                   settings=TableSettings(deadline_ms=50)))
    late = [f for f in record.faults if f.seat == 0]
    print(len(late), *sorted({f.kind.value for f in late}), flush=True)
    return 0

main()
"""


def test_a_stuck_bot_does_not_keep_the_process_alive() -> None:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _STUCK_GAME], cwd=ROOT, capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["14", "late"], done.stdout + done.stderr  # its call and 13 cards
    assert time.monotonic() - started < 10


# --- the thread's lifetime ---------------------------------------------------------------------


def test_close_ends_the_thread_and_a_closed_player_can_still_play() -> None:
    players = [LocalPlayer(NoFastRandom(s), f"closing{s}") for s in range(4)]
    settings = TableSettings(deadline_ms=0)

    async def scenario() -> None:
        await play_game(ONE_ROUND, players, seeded_deals(3, 1), settings=settings)
        assert len(bot_threads("closing")) == 4  # one thread per seat, kept for the whole game
        for player in players:
            await player.close()
            await player.close()  # again: nothing happens
        await asyncio.to_thread(wait_gone, "closing")
        record = await play_game(ONE_ROUND, players, seeded_deals(3, 1), settings=settings)
        assert record.faults == []
        for player in players:
            await player.close()

    run(scenario(), 10)
    wait_gone("closing")


def test_a_player_dropped_without_close_leaves_no_thread() -> None:
    async def scenario() -> None:
        players = [LocalPlayer(NoFastRandom(s), f"dropped{s}") for s in range(4)]
        await play_game(ONE_ROUND, players, seeded_deals(4, 1), settings=TableSettings(deadline_ms=1000))
        assert len(bot_threads("dropped")) == 4

    run(scenario(), 10)
    gc.collect()
    wait_gone("dropped")


# --- the fast path and the records --------------------------------------------------------------


def test_a_bot_exiting_in_the_fast_path_sends_the_game_to_a_normal_table() -> None:
    bots = [FastExiter(0), RandomBot(1), RandomBot(2), RandomBot(3)]
    record = play_fast(NEPALI, bots, ["a", "b", "c", "d"], seeded_deals(1, 1), table_id="t1", game_id="g1",
                       game_number=1, first_dealer=3)
    assert record is None


def test_threaded_in_process_records_are_those_of_the_fast_path() -> None:
    names = ["r0", "r1", "r2", "r3"]
    for number in (1, 2):
        players = [LocalPlayer(NoFastRandom(seed), name) for seed, name in enumerate(names)]

        async def normal(players: list[LocalPlayer] = players, number: int = number) -> GameRecord:
            try:
                return await play_game(NEPALI, players, seeded_deals(8, number), game_id=f"g{number}",
                                       game_number=number, settings=TableSettings(deadline_ms=5000))
            finally:
                for player in players:
                    await player.close()

        table = run(normal(), 20)
        fast = play_fast(NEPALI, [RandomBot(seed) for seed in range(4)], names, seeded_deals(8, number),
                         table_id="t1", game_id=f"g{number}", game_number=number, first_dealer=3)
        assert fast is not None
        assert table.faults == []
        assert without_timings(table) == without_timings(fast)
