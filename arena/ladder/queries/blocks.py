"""A block of the ladder and its games, round by round and trick by trick, and the blocks in play now.

Of a block queued or in play, its seats are shown and never a card, since its games are still being played
(:data:`~arena.ladder.queries.base.SHOWN_STATES`).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.core.scoring import format_score
from arena.core.turns import call_order, seat_after
from arena.errors import ArenaError
from arena.ladder.db import (
    Block,
    BlockResult,
    BlockState,
    aware,
)
from arena.ladder.queries.base import (
    PLAYING_SHOWN,
    SHOWN_STATES,
    FaultLine,
    Missing,
    Seat,
    block_games,
    fault_lines,
    maybe_aware,
    public_text,
    seat_by_label,
    seat_of,
    seats_of,
)
from arena.records.format import GameRecords, RoundRecord
from arena.records.store import ResultsStore

__all__ = [
    "BlockGame", "BlockResultLine", "BlockView", "GameView", "HandView", "Playing", "PlayingBlock", "RoundView",
    "TrickView", "block", "game", "playing",
]


@dataclasses.dataclass(frozen=True)
class BlockResultLine:
    """What one version of a done block scored."""

    version: Seat
    games: int
    points: float
    """Its game totals over the block, in points."""
    score: float
    """Its block score: points per game above its table's mean."""
    faults: int


@dataclasses.dataclass(frozen=True)
class BlockGame:
    """One game of a block, as its list shows it."""

    game: str
    rotation: int
    seats: tuple[Seat, ...]
    totals: tuple[str, ...]
    places: tuple[int, ...]
    faults: int


@dataclasses.dataclass(frozen=True)
class BlockView:
    """A block: its versions by seat, its state, and (once it is done or void) its results and games."""

    id: int
    state: str
    kind: str
    rated: bool
    seats: tuple[Seat, ...]
    created: datetime
    started: datetime | None
    finished: datetime | None
    note: str
    test_id: int | None
    shown: bool
    """Its games may be shown (:data:`~arena.ladder.queries.base.SHOWN_STATES`)."""
    results: tuple[BlockResultLine, ...]
    games: tuple[BlockGame, ...]
    unreadable: bool
    """Its records could not be read."""
    rotation: str = "cyclic"
    """``cyclic`` (the four versions at one table, in four rotations) or ``once`` (each version's game against the
    house trio)."""


def block(session: Session, folder: Path, block_id: int) -> BlockView | Missing:
    """Block ``block_id``; its games only once it is done or void."""
    found = session.get(Block, block_id)
    if found is None:
        return Missing(f"there is no block {block_id}")
    seats = seats_of(session, found.seats)
    results = tuple(
        BlockResultLine(seat_of(seats, r.version_id), r.games, r.points / 10, r.score / 10, r.faults)
        for r in session.scalars(select(BlockResult).where(BlockResult.block_id == block_id)
                                 .order_by(BlockResult.score.desc())))
    shown = found.state in SHOWN_STATES
    games: list[BlockGame] = []
    unreadable = False
    if shown:
        try:
            records = block_games(folder, found)
        except (ArenaError, OSError):
            records, unreadable = [], True
        for record in records:
            final = record.final
            games.append(BlockGame(record.game, final.rotation, tuple(seat_by_label(seats, s) for s in final.seats),
                                   tuple(format_score(final.rules, t) for t in final.totals), final.places,
                                   sum(len(r.faults) for r in record.rounds)))
    return BlockView(found.id, str(found.state), str(found.kind), found.rated,
                     tuple(seat_of(seats, v) for v in found.seats), aware(found.created), maybe_aware(found.started),
                     maybe_aware(found.finished), public_text(found.note, folder), found.test_id, shown, results,
                     tuple(games), unreadable, _rotation(folder, found))


def _rotation(folder: Path, played: Block) -> str:
    """The rotation a block is played in, from its results folder (``cyclic`` before it has one)."""
    try:
        config = (ResultsStore(folder / played.folder).manifest() or {}).get("config", {})
    except (ArenaError, OSError):
        return "cyclic"
    return str(config.get("rotation", "cyclic")) if isinstance(config, dict) else "cyclic"


@dataclasses.dataclass(frozen=True)
class HandView:
    """A seat's hand as dealt in one round, its call and what came of it."""

    seat: int
    version: Seat
    dealer: bool
    cards: tuple[str, ...]
    """As dealt, in the hand's order (``QS``)."""
    call: int
    call_fault: bool
    took: int
    score: str
    total: str


@dataclasses.dataclass(frozen=True)
class TrickView:
    """One trick: the card of each seat (``None``: none), who led, who won, the faults at each seat."""

    number: int
    """From 1."""
    leader: int
    winner: int
    cards: tuple[str | None, ...]
    """By seat."""
    faults: tuple[str, ...]
    """By seat: what went wrong there, in words (empty: nothing)."""


@dataclasses.dataclass(frozen=True)
class RoundView:
    """One round of a game: the deal, the calls in calling order, the tricks and the faults."""

    number: int
    deal: str
    dealer: int
    trump: str
    """The trump suit's letter (``S``)."""
    redeals: tuple[str, ...]
    """Why each deal thrown in before this one was thrown in."""
    hands: tuple[HandView, ...]
    call_order: tuple[int, ...]
    tricks: tuple[TrickView, ...]
    faults: tuple[FaultLine, ...]


@dataclasses.dataclass(frozen=True)
class GameView:
    """A game of a done or void block, round by round."""

    block_id: int
    block_kind: str
    block_state: str
    game: str
    deal_set: int
    rotation: int
    rules: str
    seats: tuple[Seat, ...]
    totals: tuple[str, ...]
    places: tuple[int, ...]
    rounds: tuple[RoundView, ...]


def game(session: Session, folder: Path, block_id: int, game_id: str) -> GameView | Missing:
    """The game ``game_id`` of block ``block_id``, only once the block is done or void: a block queued or in play
    shows no card."""
    found = session.get(Block, block_id)
    if found is None:
        return Missing(f"there is no block {block_id}")
    if found.state not in SHOWN_STATES:
        return Missing(f"block {block_id} is {found.state}: its games are shown once it is done")
    try:
        records = [g for g in block_games(folder, found) if g.game == game_id]
    except (ArenaError, OSError) as err:
        return Missing(f"the records of block {block_id} cannot be read: {public_text(str(err), folder)}")
    if not records:
        return Missing(f"block {block_id} has no complete game {game_id!r}")
    record = records[0]
    seats = seats_of(session, found.seats)
    final = record.final
    return GameView(block_id, str(found.kind), str(found.state), record.game, record.first.deal_set,
                    record.first.rotation, final.rules.profile_name,
                    tuple(seat_by_label(seats, s) for s in record.seats),
                    tuple(format_score(final.rules, t) for t in final.totals), final.places,
                    tuple(_round(block_id, record, r, seats, folder) for r in record.rounds))


def _round(block_id: int, record: GameRecords, played: RoundRecord, seats: dict[int, Seat],
           folder: Path) -> RoundView:
    rules = played.rules
    call_faults = {f.seat for f in played.faults if f.trick is None}
    at: dict[tuple[int, int], list[str]] = {}
    for fault in played.faults:
        if fault.trick is not None:
            at.setdefault((fault.trick, fault.seat), []).append(
                f"{fault.kind.value}: {public_text(fault.detail, folder)}")
    hands = tuple(HandView(seat, seat_by_label(seats, played.seats[seat]), seat == played.dealer,
                           tuple(str(card) for card in played.hands[seat].cards()), played.calls[seat],
                           seat in call_faults, played.tricks_won[seat], format_score(rules, played.scores[seat]),
                           format_score(rules, played.totals[seat])) for seat in range(4))
    tricks = []
    for index, trick in enumerate(played.tricks):
        by_seat: dict[int, str] = {seat_after(trick.leader, k): str(card) for k, card in enumerate(trick.cards)}
        tricks.append(TrickView(index + 1, trick.leader, trick.winner, tuple(by_seat.get(s) for s in range(4)),
                                tuple("; ".join(at.get((index, s), [])) for s in range(4))))
    round_faults = [line for line in fault_lines(block_id, GameRecords((played,)), folder)
                    if line.round == played.round]
    return RoundView(played.round, played.deal, played.dealer, played.trump.letter,
                     tuple(r.reason for r in played.redeals), hands, call_order(played.dealer), tuple(tricks),
                     tuple(round_faults))


@dataclasses.dataclass(frozen=True)
class PlayingBlock:
    """A block in play: who sits where, why it is played, since when. Never a card."""

    id: int
    kind: str
    seats: tuple[Seat, ...]
    started: datetime | None
    test_id: int | None


@dataclasses.dataclass(frozen=True)
class Playing:
    """The blocks in play, oldest first, and how many wait."""

    blocks: tuple[PlayingBlock, ...]
    queued: int


def playing(session: Session) -> Playing:
    """The blocks in play now (at most :data:`~arena.ladder.queries.base.PLAYING_SHOWN`)."""
    blocks = session.scalars(select(Block).where(Block.state == BlockState.PLAYING)
                             .order_by(Block.id).limit(PLAYING_SHOWN)).all()
    seats = seats_of(session, {v for b in blocks for v in b.seats})
    queued = session.scalar(select(func.count(Block.id)).where(Block.state == BlockState.QUEUED)) or 0
    return Playing(tuple(PlayingBlock(b.id, str(b.kind), tuple(seat_of(seats, v) for v in b.seats),
                                      maybe_aware(b.started), b.test_id) for b in blocks), queued)
