"""The one host of a game at a table: the seats made side by side, given back when a launch fails, the game
played with each round handed on, and the players closed and the processes stopped however it ends."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.event.launch.launcher import LaunchFailed
from arena.event.plan.schedule import Assignment
from arena.event.play.host import Host
from arena.event.play.seats import Seat, SeatKind
from arena.players.base import Player
from arena.players.house import HouseBot
from arena.players.local import LocalPlayer
from arena.players.table import TableSettings
from arena.records.format import GameRecord

GAME = Assignment(1, 1, 1, 0, ("a", "b", "c", "d"), 3)


class Closing(LocalPlayer):
    """The house bot in a seat, telling its chairs when it is closed."""

    def __init__(self, name: str, closed: list[str]) -> None:
        super().__init__(HouseBot(), name)
        self._closed = closed

    async def close(self) -> None:
        await super().close()
        self._closed.append(self.name)


class Chairs:
    """Seats the house bot, each seat a "process" of its own; ``fail`` says which bots' seats raise what."""

    def __init__(self, fail: dict[str, BaseException] | None = None) -> None:
        self.fail = fail or {}
        self.closed: list[str] = []
        self.given_back: list[str] = []
        self.stopped: list[str] = []

    async def player(self, seat: Seat, game: Assignment, fresh: list[Any]) -> Player:
        fresh.append(f"process of {seat.bot}")
        await asyncio.sleep(0)  # the four are made side by side
        if seat.bot in self.fail:
            raise self.fail[seat.bot]
        return Closing(seat.bot, self.closed)

    def give_back(self, seat: Seat) -> None:
        self.given_back.append(seat.bot)

    async def stop(self, fresh: Sequence[Any]) -> None:
        self.stopped.extend(fresh)


def seats() -> list[Seat]:
    return [Seat(bot, SeatKind.FRESH) for bot in GAME.seats]


def test_a_failed_launch_gives_back_its_seat_and_the_game_is_not_played() -> None:
    chairs = Chairs({"b": LaunchFailed("b did not connect")})

    async def host() -> bool:
        async with Host(chairs, GAME) as host:
            return await host.seat(seats())

    assert not asyncio.run(host())
    assert chairs.given_back == ["b"]
    assert chairs.closed == ["a", "c", "d"]
    assert chairs.stopped == [f"process of {bot}" for bot in GAME.seats]


def test_an_error_of_the_arena_making_a_seat_is_raised_and_everything_given_back() -> None:
    chairs = Chairs({"b": LaunchFailed("b did not connect"), "d": ValueError("the arena's own")})

    async def host() -> None:
        async with Host(chairs, GAME) as host:
            await host.seat(seats())

    with pytest.raises(ValueError, match="the arena's own"):
        asyncio.run(host())
    assert chairs.given_back == ["b", "d"]
    assert chairs.closed == ["a", "c"]
    assert len(chairs.stopped) == 4


def test_a_game_hands_on_each_round_as_it_is_played_then_closes_and_stops() -> None:
    chairs = Chairs()
    handed: list[tuple[str, int, int]] = []

    def rounds(game: Assignment, record: GameRecord, first: int) -> None:
        handed.append((game.id, first, len(record.rounds)))

    async def host() -> GameRecord:
        async with Host(chairs, GAME) as host:
            assert await host.seat(seats())
            record = await host.play(Rules(), seeded_deals(7, GAME.deal_set), table_id="t1",
                                     settings=TableSettings(), seat_key=None, rounds=rounds)
            assert chairs.closed == []
            return record

    record = asyncio.run(host())
    assert record.game == GAME.id and record.seats == GAME.seats and record.rounds
    assert handed == [(GAME.id, n, n + 1) for n in range(len(record.rounds))]
    assert chairs.closed == list(GAME.seats)
    assert len(chairs.stopped) == 4
