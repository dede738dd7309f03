"""Bots of the Bhoos Callbreak contest (Nepal, 2022) as seats: their HTTP protocol, spoken by the arena.

Such a bot is an HTTP server with three endpoints; a :class:`BhoosPlayer` is one seat of one game, and
asks it:

- ``GET /hi`` until it answers, before the game (:func:`wait_until_ready`);
- ``POST /bid`` for a call, with the body of :func:`bid_body`; the answer is ``{"value": 3}``;
- ``POST /play`` for a card, with the body of :func:`play_body`; the answer is ``{"value": "QS"}``.

Cards are rank then suit, ranks ``23456789TJQK1`` (the ace is ``1``), suits ``SHCD``. The players are
``P0`` to ``P3``, by seat, so an index into ``playerIds`` is a seat (player i+1 plays after player i, as
in the arena). The body carries both the contest's shape and the older sandbox shape (``matchId``, and
``players`` listing the ids on ``/play``), and answers are read in either shape: ``{"value": x}`` or a bare
JSON ``x``, a card with a ``/n`` suffix (``"8D/1"``), a call as a string of digits.

A bot may be stateful: it may learn its hand from ``/bid`` and follow the game through the ``/play``
calls, so one instance serves one seat of one game, asked in order. A bad answer is a fault of the
seat: no complete HTTP response (the connection refused, reset or cut short) or a ``5xx`` status is a
``crash``; a response that is not ``200``, longer than the client reads, not JSON (as
:func:`arena.transports.answers.read_json` reads it: nested too deep, a number too long, not UTF-8, a NUL
byte, a key twice are not), without a value, or with a value of the wrong type is ``malformed`` (nothing
a bot sends raises out of this module); no answer by the deadline is ``late`` (``unresponsive_after``
in a row: ``stalled``, and the fallback plays the seat to the end of the game); an illegal call or card
is refused and asked again by the table; and when the instance's process ends, it is a ``crash`` and the
fallback plays the seat to the end of the game.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from arena.core.cards import Card
from arena.core.faults import FaultKind, PlayerFault, shown
from arena.core.views import View
from arena.players.base import Decision, DecisionKind, QuietPlayer
from arena.players.pauses import wait_for
from arena.transports.answers import NUMBER_LIMIT, Unreadable, read_json
from arena.transports.bhoos.bridge import BRIDGE_HEADER
from arena.transports.bhoos.httpclient import Endpoint, HttpError, Response, TooLong, request

__all__ = ["BhoosPlayer", "bhoos_card", "bid_body", "from_bhoos_card", "play_body", "read_answer", "wait_until_ready"]

PLAYER_IDS = ("P0", "P1", "P2", "P3")
"""The players' ids by seat."""
NO_LIMIT_BUDGET_MS = 60_000
"""The ``timeBudget`` sent when the arena sets no deadline (the protocol has no way to say "none")."""
READY_POLL_S = 0.1
"""The pause between two ``GET /hi`` while a bot starts."""
HI_TIMEOUT_S = 2.0
"""How long one ``GET /hi`` may take."""
_GONE_WAIT_S = 0.3
"""How long a failed request waits to see whether the instance's process has ended (a crash)."""


def bhoos_card(card: Card) -> str:
    """A card in the contest's notation: ``AS`` is ``1S``."""
    text = str(card)
    return "1" + text[1] if text[0] == "A" else text


def from_bhoos_card(text: str) -> str:
    """A card's text from a bot, in the arena's notation: ``1S`` is ``AS``, and a ``/n`` suffix (``8D/1``)
    is dropped. Text that is no card comes back as it was, for the table to refuse in words."""
    card = text.split("/", 1)[0].strip()
    if len(card) == 2 and card[0] == "1":
        return "A" + card[1]
    return card if len(card) == 2 else text


def _points(tenths: int) -> int | float:
    """Tenths of a point as the contest writes points: ``41`` is ``4.1``, ``-30`` is ``-3``."""
    return tenths // 10 if tenths % 10 == 0 else tenths / 10


def _budget(decision: Decision) -> int:
    if not decision.deadline_ms:
        return NO_LIMIT_BUDGET_MS
    return decision.deadline_ms + decision.time_bank_ms


def bid_body(decision: Decision) -> dict[str, Any]:
    """The body of ``POST /bid``: the seat's hand and the scores, calls and tricks so far."""
    view: View = decision.view
    calls = view.calls
    players = {PLAYER_IDS[s]: {"totalPoints": _points(view.totals[s]), "bid": calls[s] or 0,
                               "won": view.tricks_won[s]} for s in range(4)}
    return {
        "playerId": PLAYER_IDS[view.seat], "playerIds": list(PLAYER_IDS),
        "cards": [bhoos_card(c) for c in view.hand.cards()], "timeBudget": _budget(decision),
        "matchId": decision.game_id, "context": {"round": view.round_number, "players": players},
    }


def play_body(decision: Decision) -> dict[str, Any]:
    """The body of ``POST /play``: that of ``/bid``, the current trick (``played``) and the round's finished
    tricks (``history``: ``[leader, [four cards in play order], winner]``, indices into ``playerIds``)."""
    view = decision.view
    body = bid_body(decision)
    body["played"] = [bhoos_card(c) for c in view.trick]
    body["history"] = [[t.leader, [bhoos_card(c) for c in t.cards], t.winner] for t in view.tricks]
    body["players"] = list(PLAYER_IDS)  # the older sandbox shape's name for playerIds
    return body


async def wait_until_ready(
    endpoint: Endpoint, timeout: float, ended: Callable[[], int | None] = lambda: None,
) -> str | None:
    """Asks ``GET /hi`` until the bot answers (any HTTP response of its own); ``None`` when it did, else
    why not, in words. ``ended`` gives the exit status of the bot's process once it has ended."""
    deadline = time.monotonic() + timeout
    while True:
        status = ended()
        if status is not None:
            return f"its process ended with exit status {status} before it answered GET /hi"
        left = deadline - time.monotonic()
        try:  # asked at least once, however short the time
            response = await asyncio.wait_for(request(endpoint, "GET", "/hi"), min(HI_TIMEOUT_S, max(left, 0.1)))
        except TimeoutError:
            last = "GET /hi got no answer in time"
        except HttpError as err:
            last = str(err)
        else:
            if BRIDGE_HEADER.lower() not in response.headers:
                return None
            last = response.body.decode("utf-8", "replace")
        if time.monotonic() >= deadline:
            return f"it did not answer GET /hi within {timeout:g} s ({last})"
        await asyncio.sleep(min(READY_POLL_S, max(0.0, deadline - time.monotonic())))


class BhoosPlayer(QuietPlayer):
    """One seat of one game, played by a Bhoos-contest HTTP bot (see the module docstring)."""

    def __init__(
        self, name: str, endpoint: Endpoint, *, process: asyncio.subprocess.Process | None = None,
        unresponsive_after: int = 0, on_close: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.endpoint = endpoint
        self.process = process
        """The instance's process, when the arena started it: its end is a crash."""
        self._unresponsive_after = unresponsive_after
        self._on_close = on_close
        self._late = 0
        """Requests in a row that got no answer in time."""
        self._gone = ""

    async def decide(self, decision: Decision) -> tuple[object, float]:
        if self._gone:
            raise PlayerFault(FaultKind.CRASH, self._gone, gone=True)
        calling = decision.kind is DecisionKind.CALL
        path = "/bid" if calling else "/play"
        body = json.dumps(bid_body(decision) if calling else play_body(decision), separators=(",", ":")).encode()
        limit_ms = decision.deadline_ms + decision.time_bank_ms if decision.deadline_ms else 0
        sent = time.perf_counter()
        try:
            response = await wait_for(self._post(path, body), limit_ms / 1000.0 if limit_ms else None)
        except TimeoutError:
            self._late += 1
            if self._unresponsive_after and self._late >= self._unresponsive_after:
                self._gone = f"the bot left {self._late} requests in a row unanswered"
                raise PlayerFault(FaultKind.STALLED, self._gone) from None
            raise PlayerFault(FaultKind.LATE, f"no answer to POST {path} within {limit_ms} ms: the deadline "
                              "passed") from None
        elapsed = (time.perf_counter() - sent) * 1000.0
        self._late = 0
        return read_answer(decision.kind, path, response), elapsed

    async def _post(self, path: str, body: bytes) -> Response:
        """The bot's response, or the fault of a request that got none (a crash when the process ended)."""
        process = self.process
        exchange = asyncio.ensure_future(request(self.endpoint, "POST", path, body))
        if process is None:
            try:
                response = await exchange
            except TooLong as err:
                raise PlayerFault(FaultKind.MALFORMED, f"POST {path} to {self.endpoint.label}: {err}") from None
            except HttpError as err:
                raise PlayerFault(FaultKind.CRASH, f"POST {path} to {self.endpoint.label}: {err}") from None
        else:
            ended = asyncio.ensure_future(process.wait())
            try:
                await asyncio.wait({exchange, ended}, return_when=asyncio.FIRST_COMPLETED)
                if not exchange.done():
                    raise self._ended(process.returncode)
                try:
                    response = exchange.result()
                except TooLong as err:  # the bot answered: too much, but it is there
                    raise PlayerFault(FaultKind.MALFORMED, f"POST {path}: {err}") from None
                except HttpError as err:
                    status = await self._exit_status(process)
                    if status is not None:
                        raise self._ended(status) from None
                    raise PlayerFault(FaultKind.CRASH, f"POST {path}: {err}") from None
                if BRIDGE_HEADER.lower() in response.headers:  # nothing listens: the bot has gone, or is going
                    status = await self._exit_status(process)
                    if status is not None:
                        raise self._ended(status)
                    raise PlayerFault(FaultKind.CRASH, f"POST {path}: nothing listens on port "
                                      f"{self.endpoint.port} in the bot's sandbox any more")
            finally:
                exchange.cancel()
                ended.cancel()
        if response.status >= 500:
            raise PlayerFault(FaultKind.CRASH, f"POST {path} answered HTTP {response.status} {shown(response.reason)}"
                              f" (an error in the bot; its log may say more): {_body_text(response)}")
        if response.status != 200:
            raise PlayerFault(FaultKind.MALFORMED, f"POST {path} answered HTTP {response.status} "
                              f"{shown(response.reason)}, not 200: {_body_text(response)}")
        return response

    @staticmethod
    async def _exit_status(process: asyncio.subprocess.Process) -> int | None:
        try:
            return await asyncio.wait_for(asyncio.shield(process.wait()), _GONE_WAIT_S)
        except TimeoutError:
            return None

    def _ended(self, status: int | None) -> PlayerFault:
        self._gone = f"the bot's process ended with exit status {status} (its log may say why)"
        return PlayerFault(FaultKind.CRASH, self._gone, gone=True)

    async def close(self) -> None:
        """The game is over: the seat is given back (a ``bhoos_url`` bot may play its next game)."""
        if self._on_close is not None:
            self._on_close()
            self._on_close = None


def _body_text(response: Response) -> str:
    text = response.body.decode("utf-8", "replace").strip()
    return shown(text) if text else "an empty body"


def read_answer(kind: DecisionKind, path: str, response: Response) -> object:
    """The call (an ``int``) or card text (in the arena's notation) of a ``200`` response to ``path``, in
    either shape (``{"value": x}`` or a bare ``x``); a ``malformed`` fault when it has neither, or when
    :func:`~arena.transports.answers.read_json` refuses the body. It raises nothing else, whatever the body."""
    calling = kind is DecisionKind.CALL
    example = '{"value": 3}' if calling else '{"value": "QS"}'
    data = read_json(response.body)
    text = response.body.decode("utf-8", "replace").strip()  # as a detail quotes it
    if isinstance(data, Unreadable):
        raise PlayerFault(FaultKind.MALFORMED, f"the answer to POST {path}, {shown(text)}, {data.reason}: answer "
                          f"{example}")
    if isinstance(data, dict):
        if "value" not in data:
            raise PlayerFault(FaultKind.MALFORMED, f"the answer to POST {path}, {shown(text)}, has no \"value\": "
                              f"answer {example}")
        data = data["value"]
    if calling:
        digits = data.strip() if isinstance(data, str) else ""
        # Only ASCII digits, and not too many: int() refuses "²" and more than 4,300 digits with a ValueError.
        if digits.isascii() and digits.isdigit() and len(digits) <= NUMBER_LIMIT:
            data = int(digits)
        if isinstance(data, float) and data.is_integer():
            data = int(data)
        if isinstance(data, bool) or not isinstance(data, int):
            raise PlayerFault(FaultKind.MALFORMED, f"the bid {shown(data)} is not a whole number: answer {example}")
        return data
    if not isinstance(data, str):
        raise PlayerFault(FaultKind.MALFORMED, f"the card {shown(data)} is not a string: answer {example}")
    return from_bhoos_card(data)
