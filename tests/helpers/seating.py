"""Four connected bots seated at one table of an arena server, and one game played there."""

from __future__ import annotations

from collections.abc import Sequence

from arena.core.dealing import DealSource
from arena.players.table import play_game
from arena.records.format import GameRecord
from arena.transports.grpc.remote import RemotePlayer
from arena.transports.grpc.server import ArenaServer


async def seat_and_play(
    server: ArenaServer, bots: Sequence[str], deals: DealSource, *, table_id: str = "t1", game_id: str = "g1",
    game_number: int = 1, first_dealer: int = 3, timeout: float | None = None,
) -> GameRecord:
    """Seats four bots (by seat), each waited for up to ``timeout`` s to connect, plays one game under the
    server's rules and table settings, and gives the seats back whatever happens."""
    players: list[RemotePlayer] = []
    try:
        for bot in bots:
            players.append(await server.claim(bot, timeout))
        return await play_game(
            server.settings.rules, players, deals, table_id=table_id, game_id=game_id, game_number=game_number,
            first_dealer=first_dealer, settings=server.settings.table,
        )
    finally:
        for player in players:
            await player.close()
