"""The ladder's gRPC port between blocks: a waiting room where remote entrants' bots connect and wait.

While no block with a remote version is in play, the ladder's own arena server listens on its gRPC port
(``[remote] host`` and ``port``). It admits the bot of every active remote version by its entrant's token and seats
it at no table: a bot there waits, connected, and is asked nothing. A bot's hello there is what brings its version
back when it was set aside for missing blocks (the service's ``came`` callback). When a block with a remote version
begins, the room closes: each stream ends with UNAVAILABLE and a word to reconnect, which the bot kit does by itself,
and the block's own tournament takes the port (holding the other remote entrants' bots as guests until it ends).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path

from arena.core.rules import Rules
from arena.errors import ConfigError
from arena.players.table import TableSettings
from arena.transports.grpc.server import ArenaServer, ServerSettings, check_address

__all__ = ["CLOSING", "WaitingRoom"]

CLOSING = "a block with a remote version begins on this port: reconnect (the bot kit does by itself)"
"""What a bot in the room is told as it closes."""


class WaitingRoom:
    """The ladder's arena server of no tables on ``address``; ``came(label)`` is called when the bot of the version
    ``label`` is connected to it (at each change of who is, so it may be called again for the same bot)."""

    def __init__(self, rules: Rules, deadline_ms: int, address: str, came: Callable[[str], None], *,
                 tls_cert: Path | None = None, tls_key: Path | None = None, tls_client_ca: Path | None = None) -> None:
        self.rules, self.deadline_ms, self.address = rules, deadline_ms, address
        self.tls = (tls_cert, tls_key, tls_client_ca)
        """The port's certificate, key and client CA (``[remote]``), as the blocks' servers on the port have them."""
        self._came = came
        self._server: ArenaServer | None = None
        self.tokens: dict[str, str] = {}
        """The tokens it admits now: SHA-256 digest -> version label."""
        self._lock = asyncio.Lock()

    @property
    def listening(self) -> bool:
        return self._server is not None

    def occupied(self, label: str) -> bool:
        """The bot of the version ``label`` is connected to the room now."""
        return self._server is not None and self._server.lobby.present(label)

    async def open(self, tokens: Mapping[str, str]) -> None:
        """Listens, admitting ``tokens`` (digest -> version label); a room open for other tokens is closed first.
        :class:`ConfigError` when the port cannot be had."""
        async with self._lock:
            if self._server is not None and self.tokens == dict(tokens):
                return
            await self._stop()
            host, _, port = self.address.rpartition(":")
            check_address(host, int(port))
            cert, key, client_ca = self.tls
            server = ArenaServer(ServerSettings(rules=self.rules, tokens=dict(tokens),
                                                table=TableSettings(deadline_ms=self.deadline_ms), max_tables=1,
                                                tls_cert=cert, tls_key=key, tls_client_ca=client_ca))
            try:
                await server.start(self.address)
            except RuntimeError as err:  # grpc: the address cannot be bound
                await server.stop(0)
                raise ConfigError(f"cannot listen on {self.address}: {err}") from None
            except BaseException:  # cancelled as it started: nothing keeps listening
                await server.stop(0)
                raise
            server.lobby.watch(lambda: self._look(server))
            self._server, self.tokens = server, dict(tokens)

    async def close(self) -> None:
        """Stops listening; each bot connected is told to reconnect."""
        async with self._lock:
            await self._stop()

    async def _stop(self) -> None:
        server, self._server, self.tokens = self._server, None, {}
        if server is not None:
            await server.stop(0.5, over=False, why=CLOSING)

    def _look(self, server: ArenaServer) -> None:
        for label in sorted(set(self.tokens.values())):
            if server.lobby.present(label):
                self._came(label)
