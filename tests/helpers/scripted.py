"""A scripted seat: a :class:`~arena.players.base.Player` whose answers the test writes, for table-level tests.

It plays no bot and starts no thread or process: each request is answered from its script, and every request
and notification it gets is kept in order in :attr:`Scripted.log`. A script is a list of steps, used one per
request (then :data:`LEGAL` for every request after it), or a function of the request that returns a step::

    Scripted([14, "AS", PlayerFault(FaultKind.CRASH, "boom"), Answer(3, ms=1500)])
    Scripted(lambda decision: 20 if decision.kind is DecisionKind.CALL else LEGAL)

A step is one of:

- an ``int`` or a ``str``, or any other value: the raw answer, as a bot would send it (a call, a card's text,
  or something the table must refuse: ``None``, ``True``, ``"3"``);
- :class:`Answer`: a raw answer and the time the seat says it took (a late answer, without waiting);
- :class:`Wait`: a raw answer given after really waiting, its time measured;
- an exception: raised from ``decide`` (a :class:`~arena.core.faults.PlayerFault` is what a transport raises
  for a late, crashed or disconnected bot);
- :data:`LEGAL`: the first legal call, or the first legal card in display order.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Iterable
from typing import Literal, TypeAlias

from arena.core.faults import FaultKind
from arena.players.base import Decision, DecisionKind, TableEvent

__all__ = ["LEGAL", "Answer", "Entry", "Scripted", "Step", "Wait"]


@dataclasses.dataclass(frozen=True)
class Answer:
    """A raw answer and the time in ms the seat reports it took (the table reads only the report)."""

    value: object
    ms: float = 0.0


@dataclasses.dataclass(frozen=True)
class Wait:
    """A raw answer given after ``seconds`` of real waiting; the time reported is the time measured."""

    seconds: float
    value: object


class _Legal:
    """The step that answers the first legal call or card."""

    def __repr__(self) -> str:
        return "LEGAL"


LEGAL = _Legal()
"""The step that answers the first legal call, or the first legal card in display order."""

Step: TypeAlias = object
"""One answer of a script: a raw value, :class:`Answer`, :class:`Wait`, an exception or :data:`LEGAL`."""

Entry: TypeAlias = (
    tuple[Literal["decide"], Decision]
    | tuple[Literal["notify"], TableEvent]
    | tuple[Literal["refused"], Decision, str]
    | tuple[Literal["fallback"], Decision, str]
    | tuple[Literal["close"]]
)
"""One line of a seat's log: what the table called and with what."""


def legal(decision: Decision) -> object:
    """The first legal call, or the first legal card in display order, as a bot would send it."""
    view = decision.view
    if decision.kind is DecisionKind.CALL:
        return view.legal_calls[0]
    return str(view.legal.cards()[0])


class Scripted:
    """A seat that answers from a script and records everything the table tells it.

    ``wants_events`` is true, so the table notifies it of every event; ``strays`` are faults it reports
    outside any decision (``drain_faults``), once, at the first chance the table gives.
    """

    version = "scripted"

    def __init__(
        self, script: Iterable[Step] | Callable[[Decision], Step] = (), name: str = "scripted", *,
        strays: Iterable[tuple[FaultKind, str]] = (), wants_events: bool = True,
    ) -> None:
        self.name = name
        self.wants_events = wants_events
        self.script: Callable[[Decision], Step] | None = script if callable(script) else None
        self.steps: list[Step] = [] if callable(script) else list(script)
        self.strays = list(strays)
        self.log: list[Entry] = []

    @property
    def requests(self) -> list[Decision]:
        """Every request, in order."""
        return [entry[1] for entry in self.log if entry[0] == "decide"]

    @property
    def events(self) -> list[TableEvent]:
        """Every notification, in order."""
        return [entry[1] for entry in self.log if entry[0] == "notify"]

    def next_step(self, decision: Decision) -> Step:
        if self.script is not None:
            return self.script(decision)
        return self.steps.pop(0) if self.steps else LEGAL

    async def decide(self, decision: Decision) -> tuple[object, float]:
        self.log.append(("decide", decision))
        step = self.next_step(decision)
        if isinstance(step, BaseException):
            raise step
        if step is LEGAL:
            return legal(decision), 0.0
        if isinstance(step, Answer):
            return (legal(decision) if step.value is LEGAL else step.value), step.ms
        if isinstance(step, Wait):
            start = time.perf_counter()
            await asyncio.sleep(step.seconds)
            value = legal(decision) if step.value is LEGAL else step.value
            return value, (time.perf_counter() - start) * 1000
        return step, 0.0

    async def notify(self, event: TableEvent) -> None:
        self.log.append(("notify", event))

    async def refused(self, decision: Decision, reason: str) -> None:
        self.log.append(("refused", decision, reason))

    async def fallback(self, decision: Decision, detail: str) -> None:
        self.log.append(("fallback", decision, detail))

    def drain_faults(self) -> list[tuple[FaultKind, str]]:
        strays, self.strays = self.strays, []
        return strays

    async def close(self) -> None:
        self.log.append(("close",))
