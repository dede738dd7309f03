"""The live status of a tournament: written by the running arena to ``status.json`` in its results
folder about once a second, and read back by ``callbreak-arena status``.

It says what an organiser needs at a glance: where the arena listens, which bots are connected
(and with which sessions), which tables are playing which game, how many games are done and
planned, which bots the event is waiting for and since when, and each bot's faults and standing.
The file is replaced atomically, so a reader never sees half of it. The running arena builds each
snapshot with :func:`snapshot` from what it holds; the run's state and each bot's are closed sets
(:class:`RunState`, :class:`BotCondition`) whose values are the words written in the file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from arena.errors import RecordsError
from arena.records.store import write_atomic

__all__ = ["STATUS", "TAKEN_OUT", "BotCondition", "BotState", "Progress", "RunState", "SessionState", "Status",
           "TableState", "read_status", "snapshot", "write_status"]

STATUS = "status.json"
STALE_S = 10.0
"""A running status not refreshed for this long belongs to an arena that has ended."""


class RunState(enum.StrEnum):
    """Where a run stands."""

    STARTING = "starting"
    RUNNING = "running"
    WAITING = "waiting"
    """Only games of absent bots are left."""
    FINISHED = "finished"
    STOPPED = "stopped"
    """Ended with games outstanding (their bots were absent)."""
    INTERRUPTED = "interrupted"


LIVE = frozenset({RunState.STARTING, RunState.RUNNING, RunState.WAITING})
"""The states of a run still going."""


class BotCondition(enum.StrEnum):
    """Where a bot stands in the event: in the live status, and (withdrawn, disqualified, absent) in the
    manifest's statuses."""

    PLAYING = "playing"
    """Present, or in-process."""
    FINISHED = "finished"
    """The event has ended."""
    ABSENT = "absent"
    BROKEN = "broken"
    """Launched, and cannot start."""
    WITHDRAWN = "withdrawn"
    DISQUALIFIED = "disqualified"


TAKEN_OUT = frozenset({BotCondition.WITHDRAWN, BotCondition.DISQUALIFIED})
"""The conditions of a bot taken out of the tournament: it plays no block not yet begun."""


@dataclasses.dataclass
class SessionState:
    """One connected stream."""

    session: str
    bot: str
    version: str
    tables: int
    max_tables: int
    events: bool
    connected_s: float
    """Seconds since it connected."""
    faults: dict[str, int] = dataclasses.field(default_factory=dict)
    """The session's own faults so far, by kind: stray messages (``unknown_request``, ``out_of_turn``,
    ``malformed``), ``flood``, ``stalled``."""


@dataclasses.dataclass
class TableState:
    """One table in play."""

    table: str
    game: str
    seats: list[str]
    fallback: list[str]
    """The bots whose seats the fallback player takes in this game."""
    rounds_done: int
    started_s: float
    """Seconds since the game began."""


@dataclasses.dataclass
class BotState:
    """One bot's standing in the event right now."""

    bot: str
    kind: str
    """``python`` (in-process), ``command`` (launched, gRPC), ``stdio`` (a process per seat per game, JSON
    lines), ``bhoos`` (a process per seat per game, HTTP), ``bhoos_url`` (HTTP, running elsewhere) or
    ``remote``."""
    state: BotCondition
    reason: str
    absent_s: float | None
    """Seconds since it was last seen, while absent."""
    games_done: int
    games_left: int
    faults: int
    faulty_decisions: int


@dataclasses.dataclass
class Status:
    """The whole status of a tournament."""

    tournament: str
    state: RunState
    message: str
    pid: int
    updated: float
    """``time.time()`` of this snapshot."""
    address: str
    tls: bool
    games_done: int
    games_planned: int
    awaited: list[str]
    """The bots the event waits for."""
    bots: list[BotState]
    sessions: list[SessionState]
    tables: list[TableState]
    test: str = ""
    """The sequential test in one line, under ``sprt`` (``LLR 1.20 (-2.94, 2.94) [0.00, 5.00] 40 blocks, ...``)."""

    @property
    def live(self) -> bool:
        """True when an arena is running and refreshing this status."""
        if self.state not in LIVE:
            return False
        if time.time() - self.updated > STALE_S:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Status:
        fields = dict(data)
        fields["state"] = RunState(data["state"])
        fields["bots"] = [BotState(**{**b, "state": BotCondition(b["state"])}) for b in data["bots"]]
        fields["sessions"] = [SessionState(**s) for s in data["sessions"]]
        fields["tables"] = [TableState(**t) for t in data["tables"]]
        return cls(**fields)


def write_status(folder: Path, status: Status) -> None:
    """Replaces ``status.json`` in ``folder``."""
    write_atomic(folder / STATUS, json.dumps(status.to_dict(), indent=1) + "\n", durable=False)


def read_status(folder: Path) -> Status | None:
    """The status in ``folder``, or ``None`` when no run has written one."""
    path = folder / STATUS
    if not path.exists():
        return None
    try:
        return Status.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise RecordsError(f"{path} cannot be read: {err}") from None


class Presence(Protocol):
    """Who is there to play, and since when not (the seating answers)."""

    def present(self, bot: str) -> bool: ...

    def absent_for(self, bot: str) -> float: ...

    def why_absent(self, bot: str) -> str: ...


class Told(Protocol):
    """A bot's recorded status (withdrawn, disqualified, absent) and why."""

    @property
    def status(self) -> str: ...

    @property
    def reason(self) -> str: ...


class LiveSession(Protocol):
    """A connected stream, as the server's lobby holds it."""

    @property
    def session_id(self) -> str: ...

    @property
    def bot(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def tables(self) -> int: ...

    @property
    def max_tables(self) -> int: ...

    @property
    def wants_events(self) -> bool: ...

    @property
    def connected_at(self) -> float: ...

    @property
    def fault_counts(self) -> Mapping[str, int]: ...


def snapshot(
    tournament: str, state: RunState, *, address: str, tls: bool, done: int, planned: int, kinds: Mapping[str, str],
    statuses: Mapping[str, Told], presence: Presence, broken: Mapping[str, str], left: Iterable[Sequence[str]],
    games: Mapping[str, int], faults: Mapping[str, int], decisions: Mapping[str, int],
    sessions: Iterable[LiveSession], tables: list[TableState], awaited: Iterable[str], test: str,
) -> Status:
    """The status of a running tournament: ``kinds`` names its bots (in the configuration's order) and their
    kinds, ``left`` gives the seats of each game not started, ``games``, ``faults`` and ``decisions`` count
    each bot's games recorded, faults and faulty decisions."""
    remaining: dict[str, int] = {}
    for seats in left:
        for seated in seats:
            remaining[seated] = remaining.get(seated, 0) + 1
    bots = []
    for name, kind in kinds.items():
        told = statuses.get(name)
        if told is not None and told.status in TAKEN_OUT:
            condition, reason = BotCondition(told.status), told.reason
        elif state == RunState.FINISHED:  # the event is over: nobody is still playing
            condition, reason = BotCondition.FINISHED, ""
        elif name in broken:
            condition, reason = BotCondition.BROKEN, broken[name]
        elif not presence.present(name):
            condition, reason = BotCondition.ABSENT, presence.why_absent(name)
        else:
            condition, reason = BotCondition.PLAYING, ""
        bots.append(BotState(
            bot=name, kind=kind, state=condition, reason=reason,
            absent_s=None if condition != BotCondition.ABSENT else round(presence.absent_for(name), 1),
            games_done=games.get(name, 0), games_left=remaining.get(name, 0), faults=faults.get(name, 0),
            faulty_decisions=decisions.get(name, 0),
        ))
    live = [SessionState(s.session_id, s.bot, s.version, s.tables, s.max_tables, s.wants_events,
                         round(time.time() - s.connected_at, 1), dict(s.fault_counts)) for s in sessions]
    waited = sorted(awaited)
    message = f"only games of absent bots are left: waiting for {', '.join(waited)}" if (
        state == RunState.WAITING) else ""
    return Status(
        tournament=tournament, state=state, message=message, pid=os.getpid(), updated=time.time(), address=address,
        tls=tls, games_done=done, games_planned=planned, awaited=waited, bots=bots, sessions=live, tables=tables,
        test=test,
    )


class Progress:
    """A progress bar of games done with its ETA, the faults so far and the bots awaited, and why
    (quiet when not wanted)."""

    def __init__(self, total: int | None, done: int, enabled: bool, file: Any = None) -> None:
        """``total`` None: no planned total (a sequential test ends when it decides), games are counted."""
        self.bar: Any = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, unit="game", dynamic_ncols=True, leave=False, file=file)

    @property
    def shown(self) -> bool:
        return self.bar is not None

    def update(self, faults: int, awaited: Mapping[str, str], step: int = 1, note: str = "") -> None:
        """One more game done (``step``), or only a fresh postfix (``step=0``); ``note`` is shown first
        (the sequential test's line)."""
        if self.bar is not None:
            if step:
                self.bar.update(step)
            waiting = f", waiting for {', '.join(f'{b} ({why})' for b, why in awaited.items())}" if awaited else ""
            self.bar.set_postfix_str(f"{note + ', ' if note else ''}faults {faults}{waiting}", refresh=step == 0)

    def writing(self) -> contextlib.AbstractContextManager[object]:
        """A context in which a line may be written to the bar's terminal: the bar is cleared first and drawn
        again after, so neither overwrites the other."""
        if self.bar is None:
            return contextlib.nullcontext()
        return cast("contextlib.AbstractContextManager[object]", self.bar.external_write_mode(file=self.bar.fp))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
