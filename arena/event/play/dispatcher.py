"""Which games start next: a pool of blocks, and bots that come and go.

The :class:`Dispatcher` holds the blocks released so far (a block: one deal set in all its
rotations, with four fixed bots), in plan order, and knows for each which games are left, which
are running and which are done. Any game whose four seats can be had now may start: nothing waits
for an absent bot while other games can be played. A game's seats are taken through a ``take``
function given by the caller, which either hands out a seat (and with it, say, a table slot of the
bot's session) or says the bot cannot sit now; a game that cannot have all four seats gives back
the ones it took.

Games are offered in the order of play drawn from the seed (:func:`~arena.event.plan.schedule.play_order`:
the rounds in turn, the blocks of a round and the rotations of a block in a drawn order), and a bot
never plays two games of one deal set at once: a game waits while one of its bots plays another game
of the same deal set, and starts only once that game is recorded (house bots, the arena's own, keep
nothing and are not held). A game that cannot start now (a bot absent, or busy elsewhere) lets the
next one go first. So a bot's games on a deal set are recorded in the order it played them, the
first of them is one in which it had not been dealt the deal set before, and, unless a bot could not
sit, it is a random one of its games on it: what the memory test of the standings relies on.

Games that are played one after another in the order they are started (a *lane*: the in-process fast
path, a worker's chunk) may follow each other on a deal set within one :meth:`Dispatcher.pick`, and
are started strictly in the order of play, so the records of a run with workers are those of a run in
one process, byte for byte.

A bot whose seats in a block were played by the fallback player keeps that fallback for the rest
of the block: a block is never split between a bot and another bot, and its games go on without
the bot once they began without it. This module does no I/O and reads no clock.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable, Container, Iterator
from typing import Generic, TypeVar

from arena.event.plan.schedule import Assignment, Block, PlayOrder, play_order

__all__ = ["BlockState", "Dispatcher"]

SeatT = TypeVar("SeatT")


@dataclasses.dataclass
class BlockState:
    """Where one block stands."""

    block: Block
    left: list[Assignment]
    """Games not started yet, in the order of play."""
    order: PlayOrder
    running: int = 0
    done: int = 0
    fallback: set[str] = dataclasses.field(default_factory=set)
    """Bots whose seats the fallback player takes for the rest of this block."""

    @property
    def started(self) -> bool:
        return self.running > 0 or self.done > 0

    @property
    def finished(self) -> bool:
        return not self.left and self.running == 0


class Dispatcher(Generic[SeatT]):
    """The released blocks, and the choice of the games to start."""

    def __init__(self, rotation: str, seed: int = 0, holds: Callable[[str], bool] = lambda bot: True) -> None:
        self.rotation = rotation
        self.seed = seed
        """The seed the order of play is drawn from."""
        self._holds = holds
        """Whether a bot's games on a deal set are played one after another (not for house bots)."""
        self._playing: dict[tuple[str, int], int] = {}
        """(bot, deal set) -> its games running: the bot plays no other game of that deal set until they are recorded
        (more than one only in a lane, played one after another)."""
        self._turns: list[tuple[tuple[int, int, int], str]] = []
        """The ids of the blocks with games left or running, in the order of play, each with its place in it."""
        self.blocks: dict[str, BlockState] = {}
        """The blocks with games left or running, in plan order (finished blocks leave it)."""
        self.games_done = 0
        """Games recorded in blocks that left :attr:`blocks`."""
        self.waiting = 0
        """Games not started yet, in every block."""
        self.refused = False
        """The last :meth:`pick` passed over a game because one of its bots could not sit."""
        self.refused_bots: set[str] = set()
        """The bots that could not sit in the last :meth:`pick` (outside a block's fallback)."""

    def add(self, block: Block, done: Container[str] = ()) -> BlockState:
        """Releases a block; ``done`` holds the ids of its games already recorded."""
        games = block.games(self.rotation)
        order = play_order(self.seed, block.round, block.deal_set, block.order, len(games))
        left = sorted((g for g in games if g.id not in done), key=lambda g: order.turn(g.rotation))
        state = BlockState(block, left, order, done=sum(g.id in done for g in games))
        if state.finished:
            self.games_done += state.done
        else:
            self.blocks[block.id] = state
            self.waiting += len(state.left)
            bisect.insort(self._turns, ((block.round, order.draw, block.group), block.id))
        return state

    def _held(self, game: Assignment) -> list[tuple[str, int]]:
        """(bot, deal set) of the bots of ``game`` held to one game of a deal set at a time."""
        return [(bot, game.deal_set) for bot in game.seats if self._holds(bot)]

    def _gone(self, block: str) -> None:
        del self.blocks[block]
        self._turns = [turn for turn in self._turns if turn[1] != block]

    def in_play_order(self) -> Iterator[BlockState]:
        """The blocks with games left or running, in the order of play."""
        for _, block in self._turns:
            yield self.blocks[block]

    def left(self) -> Iterator[Assignment]:
        """Every game not started yet, in plan order."""
        for state in self.blocks.values():
            yield from state.left

    @property
    def running(self) -> int:
        return sum(s.running for s in self.blocks.values())

    @property
    def idle(self) -> bool:
        """True when nothing is running and nothing is left."""
        return not self.blocks

    def pick(
        self, slots: int, take: Callable[[str, BlockState], SeatT | None], give_back: Callable[[SeatT], None],
        only_started: bool = False, *, pooled: Callable[[BlockState], bool] | None = None,
        pool_slots: int = 0, lane: Callable[[BlockState], bool] | None = None,
    ) -> list[tuple[Assignment, list[SeatT]]]:
        """Starts up to ``slots`` games whose four seats can all be taken now, in the order of play.

        The games of a block for which ``lane(block)`` is true are played one after another in the order
        returned: they may follow each other on a deal set here, and are taken strictly in the order of
        play (the first of them that must wait stops them all until the next pick).

        ``take(bot, block)`` returns a seat, or ``None`` when the bot cannot sit now; ``give_back``
        returns a seat taken for a game that could not start. With ``only_started``, only games
        of blocks already under way start (a sequential test has decided: blocks are finished, no
        new one begins). The games of a block for which ``pooled(block)`` is true (played elsewhere,
        in a pool of workers) count against ``pool_slots`` instead of ``slots``.
        """
        started: list[tuple[Assignment, list[SeatT]]] = []
        laned: dict[tuple[str, int], int] = {}
        """The (bot, deal set) of the lane games started in this pick (played one after another)."""
        lane_stopped = False
        unavailable: set[tuple[str, bool]] = set()
        """(bot, block has it in fallback) pairs that could not sit in this pass: not asked again."""
        free = [slots, pool_slots]
        self.refused = False
        for state in list(self.in_play_order()):
            if free[0] <= 0 and free[1] <= 0:
                break
            if only_started and not state.started:
                continue
            kind = 1 if pooled is not None and pooled(state) else 0
            in_lane = lane is not None and lane(state)
            index = 0
            while index < len(state.left) and free[kind] > 0 and not (in_lane and lane_stopped):
                game = state.left[index]
                held = self._held(game)
                if any(turn in self._playing or (not in_lane and turn in laned) for turn in held):
                    # A bot of it plays this deal set in a game not yet recorded.
                    lane_stopped |= in_lane
                    index += 1
                    continue
                seats: list[SeatT] = []
                for bot in game.seats:
                    key = (bot, bot in state.fallback)
                    seat = None if key in unavailable else take(bot, state)
                    if seat is None:
                        unavailable.add(key)
                        break
                    seats.append(seat)
                if len(seats) < 4:
                    self.refused = True
                    lane_stopped |= in_lane
                    for seat in seats:
                        give_back(seat)
                    index += 1
                    continue
                state.left.pop(index)
                for turn in held:
                    if in_lane:
                        laned[turn] = laned.get(turn, 0) + 1
                    else:
                        self._playing[turn] = 1
                state.running += 1
                self.waiting -= 1
                free[kind] -= 1
                started.append((game, seats))
        self.refused_bots = {bot for bot, in_fallback in unavailable if not in_fallback}
        for turn, count in laned.items():
            self._playing[turn] = self._playing.get(turn, 0) + count
        return started

    def _stopped(self, game: Assignment) -> None:
        """A started game is over (recorded, or put back): its bots may play the next game of its deal set."""
        for key in self._held(game):
            left = self._playing.get(key, 0) - 1
            if left > 0:
                self._playing[key] = left
            else:
                self._playing.pop(key, None)

    def finished(self, game: Assignment) -> BlockState:
        """A started game is recorded."""
        state = self.blocks[game.block]
        state.running -= 1
        state.done += 1
        self._stopped(game)
        if state.finished:
            self._gone(game.block)
            self.games_done += state.done
        return state

    def put_back(self, game: Assignment) -> None:
        """A started game could not be played after all (a launch failed): it is left again."""
        state = self.blocks[game.block]
        state.running -= 1
        self._stopped(game)
        state.left.insert(0, game)
        state.left.sort(key=lambda g: state.order.turn(g.rotation))
        self.waiting += 1

    def waiting_on(self, can_sit: Callable[[str, BlockState], bool]) -> dict[str, int]:
        """Bot -> games left that cannot start because of it (``can_sit`` false)."""
        counts: dict[str, int] = {}
        for state in self.blocks.values():
            for game in state.left:
                for bot in set(game.seats):
                    if not can_sit(bot, state):
                        counts[bot] = counts.get(bot, 0) + 1
        return counts

    def only_blocked_by(self, bots: set[str]) -> bool:
        """True when every game left involves one of ``bots`` (outside blocks where it is already
        replaced by the fallback player)."""
        return all(
            any(bot in bots and bot not in state.fallback for bot in game.seats)
            for state in self.blocks.values() for game in state.left
        )

    def drop(self, bot: str) -> list[Block]:
        """Takes ``bot`` out: its blocks not started are dropped whole (returned); in blocks under
        way, the fallback player takes its seats to the end."""
        dropped = []
        for block_id, state in list(self.blocks.items()):
            if bot not in state.block.order:
                continue
            if state.started:
                state.fallback.add(bot)
            else:
                dropped.append(state.block)
                self.waiting -= len(state.left)
                self._gone(block_id)
        return dropped

    def counts(self) -> tuple[int, int]:
        """Games done, and games done + running + left (of the blocks released)."""
        done = self.games_done + sum(s.done for s in self.blocks.values())
        total = done + sum(s.running + len(s.left) for s in self.blocks.values())
        return done, total
