"""Bots over standard input and output: one JSON object per line, in any language.

A :class:`StdioPlayer` is one seat of one game, played by a process of its own that the event layer
starts for that seat and that game (so nothing it remembers outlives the game). The arena writes a
request line for each decision and reads one answer line:

- a request is a JSON object with ``"type"`` (``"call"`` or ``"play"``), ``"id"`` (a number, new for each
  request) and the seat's whole view, with the field names of ``protocol/callbreak.proto`` (see
  :func:`request_message` and ``docs/bots.md``);
- the answer is ``{"call": 3}`` or ``{"card": "TH"}``, optionally with the request's ``"id"``;
- when the game is over the arena writes ``{"type": "game_over", ...}`` and closes the bot's standard input.

Faults are those of any seat: no answer within the deadline (and time bank) is ``late``, and the answer,
when it comes, is read and dropped (matched by its ``id`` if it has one, else by counting lines, one per
request); a line that is not JSON, not an object, longer than :data:`LINE_LIMIT`, or without the key or with
a value of the wrong type is ``malformed``, and so is one that :func:`arena.transports.answers.read_json`
refuses (nested too deep, a number too long, not UTF-8, a NUL byte, a key twice): nothing a bot writes
raises out of this module. A line already waiting when a request is due, past the answers owed to late
requests, is one no request asked for: it is read and dropped as a ``malformed`` fault before the request is
written, so that the bot's answers are never taken one request behind (the classic cause: debug output
printed on standard output). The details of these faults name the classic mistakes of a first stdio bot:
:data:`STDOUT_HINT`, and a late fault asks whether the bot flushed its output, in the words of the language its
command suggests (:func:`arena.transports.languages.flush_hint`), while it has written nothing at all, or has
written nothing for two requests or more after earlier answers (a bot that flushes its calls but not its
cards). Blank lines are skipped,
but more than :data:`BLANK_LIMIT` in a row are a ``malformed`` fault after which the fallback plays the seat
to the end of the game. An answer that is not legal is refused and asked again by the table, as for any bot.
A process that ends or closes its standard output is a ``crash`` (the fallback plays its seat to the end of
the game); one that stops reading its requests, or leaves ``unresponsive_after`` requests in a row
unanswered without writing a line (or writing only blank lines), is ``stalled`` (the same).
The arena never blocks on such a process: every read and write has a deadline, and lines are read in
bounded chunks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from typing import Any

from arena.core.cards import card_text
from arena.core.faults import FaultKind, PlayerFault, shown
from arena.core.views import View
from arena.players.base import Decision, DecisionKind, GameEnd, QuietPlayer, TableEvent
from arena.players.pauses import wait_for
from arena.transports.answers import Unreadable, read_json
from arena.transports.languages import NEUTRAL_HINT

__all__ = ["BLANK_LIMIT", "LINE_LIMIT", "STDOUT_HINT", "StdioPlayer", "game_over_message", "request_message"]

LINE_LIMIT = 64 * 1024
"""The longest line, in bytes, the arena reads from a bot (its newline excluded)."""
BLANK_LIMIT = 1000
"""The most blank lines in a row the arena skips; past them, the bot's output is taken for a flood."""
_CHUNK = 64 * 1024
"""Bytes read from the pipe at a time."""
GAME_OVER_WRITE_S = 1.0
"""How long the arena tries to write the ``game_over`` line to a bot that does not read it."""
_GONE_WAIT_S = 1.0
"""How long the arena waits for a process that closed its output to end, to report its exit status."""
STDOUT_HINT = ("a stdio bot's standard output is for its answers only, one line per request: write debug output "
               "to standard error (Python: print(..., file=sys.stderr))")
"""Said of a line that is no answer: most often a debug print that went to standard output."""


def _cards(mask: int) -> list[str]:
    return [card_text(i) for i in range(52) if mask >> i & 1]


def view_message(view: View) -> dict[str, Any]:
    """What a seat may know, as JSON-ready data with the field names of the ``SeatView`` message."""
    calls = view.calls
    return {
        "game_number": view.game_number,
        "round_number": view.round_number,
        "rounds_in_game": view.rules.rounds,
        "seat": view.seat,
        "dealer": view.dealer,
        "trump": view.trump.letter,
        "hand": _cards(view.hand_mask),
        # In calling order, as the protocol gives them; only the calls made so far.
        "calls": [{"seat": s, "value": calls[s]} for s in view.call_order if calls[s] is not None],
        "current_trick": {"leader": view.leader, "cards": [str(c) for c in view.trick]},
        "finished_tricks": [{"leader": t.leader, "cards": [str(c) for c in t.cards], "winner": t.winner}
                            for t in view.tricks],
        "tricks_won": list(view.tricks_won),
        "total_tenths": list(view.totals),
        "past_rounds": [{"round_number": r.round_number, "calls": list(r.calls), "tricks": list(r.tricks_won),
                         "score_tenths": list(r.scores)} for r in view.past_rounds],
        "rules": view.rules.to_dict(),
        "seat_seed": view.seat_seed,
    }


def request_message(decision: Decision, request_id: int) -> dict[str, Any]:
    """The request line of one decision: the same content as the protocol's ``CallRequest`` or
    ``PlayRequest`` with its view, in one flat object."""
    view = decision.view
    message: dict[str, Any] = {"type": decision.kind.value, "id": request_id, "table_id": decision.table_id,
                               "game_id": decision.game_id, "player_names": list(decision.names)}
    message.update(view_message(view))
    if decision.kind is DecisionKind.CALL:
        message["legal_calls"] = list(view.legal_calls)
    else:
        message["legal_cards"] = _cards(view.legal_mask)
    message.update(deadline_ms=decision.deadline_ms, time_bank_ms=decision.time_bank_ms,
                   retry_reason=decision.retry_reason)
    return message


def game_over_message(event: TableEvent, body: GameEnd) -> dict[str, Any]:
    """The last line a bot is sent: the final totals (tenths) and places, by seat."""
    return {"type": "game_over", "table_id": event.table_id, "game_id": event.game_id, "seat": event.seat,
            "total_tenths": list(body.totals), "places": list(body.places)}


class _LineTooLong(Exception):
    """A line longer than :data:`LINE_LIMIT`; the rest of it is skipped."""


class _BlankFlood(Exception):
    """More than :data:`BLANK_LIMIT` blank lines in a row."""


# A run of blank lines (what ``bytes.strip`` removes, then a newline), each no longer than a line may be:
# skipped in one match, at the speed of the regular expression engine, not one line at a time.
_BLANK_RUN = re.compile(rb"(?:[ \t\r\x0b\x0c]{0,%d}\n)+" % LINE_LIMIT)


class _Lines:
    """Lines from a stream, read in bounded chunks: no line longer than :data:`LINE_LIMIT` is kept, blank
    lines are skipped (no more than :data:`BLANK_LIMIT` in a row), and a read that is cancelled (a
    deadline) loses nothing."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._buffer = bytearray()
        self._start = 0
        """Where the part of the buffer not yet read begins: lines are taken by moving it, not by deleting
        from the front of the buffer, which would copy the rest of it for every line."""
        self._skipping = False
        """The end of a line that was too long is still to come: drop it."""
        self.ended = False
        self.blank = 0
        """Blank lines read since the last line that was not blank."""

    @property
    def pending(self) -> bool:
        """Bytes of a line whose newline has not come yet are held (the bot wrote something)."""
        return not self._skipping and len(self._buffer) > self._start

    async def waiting(self) -> bytes | None:
        """The next line if the bot has written it already (read without waiting for more), else ``None``;
        raises as :meth:`next` does."""
        task = asyncio.ensure_future(self.next())
        await asyncio.sleep(0)  # one step: it ends there unless it has to wait for the pipe
        if not task.done():
            task.cancel()  # a cancelled read loses nothing
            await asyncio.wait({task})
            if task.cancelled():
                return None
        return task.result()

    async def next(self) -> bytes | None:
        """The next line that is not blank, without its newline, or ``None`` at end of stream; raises
        :class:`_LineTooLong`, and :class:`_BlankFlood` once more than :data:`BLANK_LIMIT` blank lines
        came in a row."""
        buffer = self._buffer
        while True:
            if self._skipping:
                end = buffer.find(b"\n", self._start)
                if end >= 0:
                    self._start = end + 1
                    self._skipping = False
                    continue
                self._start = len(buffer)
            else:
                blank = _BLANK_RUN.match(buffer, self._start)
                if blank is not None:
                    self.blank += buffer.count(b"\n", blank.start(), blank.end())
                    self._start = blank.end()
                    if self.blank > BLANK_LIMIT:
                        raise _BlankFlood()
                end = buffer.find(b"\n", self._start, self._start + LINE_LIMIT + 1)
                if end >= 0:
                    line = bytes(buffer[self._start: end])
                    self._start = end + 1
                    self.blank = 0
                    return line
                if len(buffer) - self._start > LINE_LIMIT:
                    self._skipping = True  # what is left of the line is dropped as it comes
                    self.blank = 0
                    raise _LineTooLong()
            if self.ended:
                return None
            try:
                chunk = await self._reader.read(_CHUNK)
            except OSError:  # the pipe broke: as good as its end
                chunk = b""
            del buffer[: self._start]  # once per chunk: what was read goes
            self._start = 0
            if not chunk:
                self.ended = True
                if buffer and not self._skipping:  # a last line without its newline still counts
                    buffer.extend(b"\n")
                    continue
                return None
            buffer.extend(chunk)


class StdioPlayer(QuietPlayer):
    """One seat of one game, played by a process over its standard streams (see the module docstring)."""

    wants_events = True
    """Only the game's end is passed on (the ``game_over`` line): every request holds the whole view."""

    def __init__(
        self, name: str, process: asyncio.subprocess.Process, *, start_allowance_s: float = 0.0,
        unresponsive_after: int = 0, flush_hint: str = NEUTRAL_HINT,
    ) -> None:
        if process.stdin is None or process.stdout is None:
            raise ValueError("a stdio bot's process needs pipes for its standard input and output")
        self.name = name
        self.process = process
        self._writer = process.stdin
        self._lines = _Lines(process.stdout)
        self._start_allowance_s = start_allowance_s
        """Extra time the first request allows, for the process to start."""
        self._unresponsive_after = unresponsive_after
        self._flush_hint = flush_hint
        """What a late fault asks when the bot's answers may sit in its output buffer, in its language's words."""
        self._next_id = 0
        self._owed = 0
        """Requests whose deadline passed and whose answers have not been read yet (dropped when they come)."""
        self._silent = 0
        """Requests in a row left unanswered without a single line from the bot."""
        self._slow = False
        """The last line the bot wrote was the late answer to an earlier request: it is slow, not silent."""
        self.answers = 0
        """Lines read from the bot: 0 after a game means it never said anything (a command that cannot start)."""
        self._gone = ""

    def _fault(self, kind: FaultKind, detail: str) -> PlayerFault:
        """A fault after which the seat cannot play again in this game (the fallback takes it)."""
        self._gone = detail
        return PlayerFault(kind, detail, gone=True)

    async def _ended(self, what: str) -> PlayerFault:
        """The crash fault of a process that closed its output or its input: its exit status if it ends soon."""
        try:
            status: int | None = await asyncio.wait_for(self.process.wait(), _GONE_WAIT_S)
        except TimeoutError:
            status = None
        if status is None:
            return self._fault(FaultKind.CRASH, f"the bot {what}, but its process is still running")
        return self._fault(FaultKind.CRASH, f"the bot's process ended with exit status {status} (its log may "
                           "say why)")

    async def decide(self, decision: Decision) -> tuple[object, float]:
        if self._gone:
            raise PlayerFault(FaultKind.CRASH, self._gone, gone=True)
        await self._unasked(self._next_id + 1)
        self._next_id += 1
        request_id = self._next_id
        line = json.dumps(request_message(decision, request_id), separators=(",", ":")).encode() + b"\n"
        limit_ms = decision.deadline_ms + decision.time_bank_ms if decision.deadline_ms else 0
        limit_s = limit_ms / 1000.0 if limit_ms else None
        if limit_s is not None and request_id == 1:
            limit_s += self._start_allowance_s  # the process started just before: its start-up is not thinking
        sent = time.perf_counter()
        writing = True

        async def exchange() -> object:
            nonlocal writing, sent
            try:
                self._writer.write(line)
                await self._writer.drain()
            except (ConnectionError, RuntimeError):  # a closed pipe: the process has gone
                return _CLOSED_INPUT
            writing = False
            sent = time.perf_counter()
            return await self._answer(decision.kind, request_id)

        try:
            answer = await wait_for(exchange(), limit_s)
        except TimeoutError:
            if writing:
                raise self._fault(FaultKind.STALLED, "the bot does not read its standard input: its requests "
                                  "piled up unread") from None
            self._owed += 1
            self._silent += 1
            if self._unresponsive_after and self._silent >= self._unresponsive_after:
                blank = self._lines.blank
                wrote = f"writing only {blank:,} blank line{'s' if blank != 1 else ''}" if blank else "without " \
                    "writing a line"
                raise self._fault(FaultKind.STALLED, f"the bot left {self._silent} requests in a row unanswered "
                                  f"{wrote}{self._mute()}") from None
            raise PlayerFault(FaultKind.LATE, f"no answer within {limit_ms} ms: the deadline passed"
                              f"{self._mute()}") from None
        if answer is _CLOSED_INPUT:
            raise await self._ended("closed its standard input")
        if answer is _CLOSED_OUTPUT:
            raise await self._ended("closed its standard output")
        return answer, (time.perf_counter() - sent) * 1000.0

    def _mute(self) -> str:
        """What a late bot is told when its answers may sit in its output buffer: it has written nothing at all
        yet, or nothing for the last two requests or more after earlier answers; or, when the last line it wrote
        was a late answer, that it is slow rather than silent."""
        if self._lines.blank or (self.answers and self._silent < 2):
            return ""
        if self._lines.pending:
            return "; the bot wrote part of a line: end each answer with a newline, and flush it"
        if not self.answers:
            return f"; the bot has written nothing at all yet: {self._flush_hint}"
        if self._slow:
            return ("; the bot is slow, not silent: its answers to earlier requests came, but after their deadline, "
                    "and it answers each request only after those, so each late answer makes the next one later: "
                    "answer each request within the deadline")
        return (f"; the bot answered earlier requests, but has written nothing for the last {self._silent}: if it is "
                f"not still thinking, {self._flush_hint}")

    def _flooded(self) -> PlayerFault:
        """The fault of a bot that wrote more blank lines in a row than the arena skips (it ends its play)."""
        self.answers += 1
        return self._fault(FaultKind.MALFORMED, f"the bot wrote {self._lines.blank:,} blank lines in a row, and the "
                           f"arena skips no more than {BLANK_LIMIT:,}: write one JSON object per line, and no blank "
                           "lines")

    async def _unasked(self, request_id: int) -> None:
        """Reads the lines the bot has written already, before request ``request_id`` is: late answers to
        earlier requests are dropped; any other is a ``malformed`` fault, as no request asked for it (an
        answer taken for the next request's would leave every later answer one request behind)."""
        while True:
            too_long = False
            try:
                raw = await self._lines.waiting()
            except _LineTooLong:
                raw, too_long = b"", True
            except _BlankFlood:
                raise self._flooded() from None
            if raw is None:
                return
            self.answers += 1
            self._silent = 0
            self._slow = bool(self._owed)
            if self._owed:
                self._owed -= 1  # the late answer to an earlier request
                continue
            text = f"a line longer than {LINE_LIMIT} bytes" if too_long else shown(
                raw.decode("utf-8", errors="replace").strip())
            raise PlayerFault(FaultKind.MALFORMED, f"the bot wrote {text} before it was sent request "
                              f"{request_id}, with no request left to answer: every answer after such a line would "
                              f"be taken for the answer to the request after its own; {STDOUT_HINT}")

    async def _answer(self, kind: DecisionKind, request_id: int) -> object:
        """Reads lines until the answer to request ``request_id``; returns its raw value for the table."""
        while True:
            try:
                raw = await self._lines.next()
            except _LineTooLong:
                self.answers += 1
                self._silent = 0
                self._slow = bool(self._owed)
                if self._owed:  # what a late request got: it was a fault already
                    self._owed -= 1
                    continue
                raise PlayerFault(FaultKind.MALFORMED, f"the bot wrote a line longer than {LINE_LIMIT} bytes; "
                                  "write one JSON object per line") from None
            except _BlankFlood:
                raise self._flooded() from None
            if raw is None:
                return _CLOSED_OUTPUT
            self.answers += 1
            self._silent = 0
            self._slow = False
            message = read_json(raw)  # bounded and never raises, whatever the bot wrote
            answered = message.get("id") if isinstance(message, dict) else None
            if isinstance(answered, int) and not isinstance(answered, bool) and answered != request_id:
                if answered < request_id and self._owed:
                    self._owed -= 1  # the late answer to an earlier request: dropped
                    self._slow = True
                    continue
                raise PlayerFault(FaultKind.MALFORMED, f"the answer's id is {shown(answered)}, but the request's "
                                  f"is {request_id}: echo the id of the request you answer, or leave it out")
            if answered is None and self._owed:
                self._owed -= 1  # one line per request, in order: this one answers an earlier, late request
                self._slow = True
                continue
            if answered == request_id:
                self._owed = 0  # the bot skipped the earlier answers
            return _value(kind, raw, message)

    async def notify(self, event: TableEvent) -> None:
        if not isinstance(event.body, GameEnd) or self._gone:
            return
        line = json.dumps(game_over_message(event, event.body), separators=(",", ":")).encode() + b"\n"
        # The game is over: a bot that does not read its last line loses nothing.
        with contextlib.suppress(TimeoutError, ConnectionError, RuntimeError):
            self._writer.write(line)
            await asyncio.wait_for(self._writer.drain(), GAME_OVER_WRITE_S)

    async def close(self) -> None:
        """The game is over: the bot's standard input is closed (it reads end of file)."""
        if not self._writer.is_closing():
            self._writer.close()
        # Waited for in a task of its own, which a cancel (Ctrl-C) leaves alone: cancelled, the wait would cancel the
        # pipe's own future, which the pipe then sets as it closes, and asyncio reports that as an error.
        closed = asyncio.ensure_future(self._writer.wait_closed())
        closed.add_done_callback(_seen)
        await asyncio.wait({closed}, timeout=GAME_OVER_WRITE_S)


def _seen(task: asyncio.Future[None]) -> None:
    """Takes the outcome of a task nobody awaits (a pipe that broke), so that asyncio does not report it."""
    if not task.cancelled():
        task.exception()


_CLOSED_INPUT = object()
"""What a decision got when the request could not be written: the bot's standard input is closed."""
_CLOSED_OUTPUT = object()
"""What a decision got when the bot's standard output reached its end."""
_KEYS = {DecisionKind.CALL: "call", DecisionKind.PLAY: "card"}
_EXAMPLES = {DecisionKind.CALL: '{"call": 3}', DecisionKind.PLAY: '{"card": "TH"}'}


def _value(kind: DecisionKind, raw: bytes, message: object) -> object:
    """The call (an ``int``) or card text of an answer line, or a ``malformed`` fault that says what is wrong."""
    key, example = _KEYS[kind], _EXAMPLES[kind]
    text = raw.decode("utf-8", errors="replace").strip()  # as the detail quotes it
    if isinstance(message, Unreadable):
        raise PlayerFault(FaultKind.MALFORMED, f"the answer {shown(text)} {message.reason}: write one JSON "
                          f"object per line, like {example}; {STDOUT_HINT}")
    if not isinstance(message, dict):
        raise PlayerFault(FaultKind.MALFORMED, f"the answer {shown(text)} is not a JSON object: write {example}; "
                          f"{STDOUT_HINT}")
    if key not in message:
        other = _KEYS[DecisionKind.PLAY if kind is DecisionKind.CALL else DecisionKind.CALL]
        hint = f" (a {other!r} answers a {'play' if other == 'card' else 'call'} request)" if other in message else ""
        stray = "" if other in message else f"; {STDOUT_HINT}"  # no answer at all: a line of some other output?
        raise PlayerFault(FaultKind.MALFORMED, f"the answer {shown(text)} has no {key!r}{hint}: this request "
                          f"is a {kind.value} request; write {example}{stray}")
    value = message[key]
    if kind is DecisionKind.CALL:
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON has numbers, not integers: 3.0 is 3
        if isinstance(value, bool) or not isinstance(value, int):
            raise PlayerFault(FaultKind.MALFORMED, f"the call {shown(value)} is not a whole number: write {example}")
        return value
    if not isinstance(value, str):
        raise PlayerFault(FaultKind.MALFORMED, f"the card {shown(value)} is not a string: write {example}")
    return value

