"""A ladder's block as a tournament: four versions, one fresh deal set, every rotation, in a results folder of
its own; and what its records say each version scored.

A block is played by the tournament code (:class:`~arena.event.tournament.Tournament`) exactly as an event
is: the same launcher, sandbox, deadlines and fault rules. Its folder ``blocks/NNNNNN`` is an ordinary results
folder (``callbreak-arena verify`` reads it); its deals are deal set 1 of the block's own seed, drawn from the
ladder's secret seed and the block's number, so nobody can know them before the block is made and anyone can
recompute them from the records afterwards.

A version's *block score* is its duplicate score in the block: the mean, over the block's games, of its game
total minus the mean of the four totals at its table, in tenths. Each version holds every hand once, so card
luck cancels. Its rating moves by OpenSkill's Plackett-Luce model on each game's places, in game order.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce

from arena.core.faults import FaultKind
from arena.core.rules import Rules
from arena.event.check import BotUnderTest
from arena.event.config import TournamentConfig, parse_config
from arena.event.store import ResultsStore
from arena.event.submissions import read_submission
from arena.event.tables import toml_value
from arena.ladder.db import Version
from arena.ladder.settings import LadderSettings
from arena.players.records import GameRecords

__all__ = ["BLOCK_SEED_BITS", "BlockOutcome", "RatingModel", "block_config", "block_name", "block_seed",
           "bot_table", "bot_under_test", "event_text", "outcome", "rate_games"]

BLOCK_SEED_BITS = 62
"""A block's seed is this many bits of SHA-256 of the ladder's seed and the block's number."""


def block_seed(ladder_seed: int, block_id: int) -> int:
    """The deal seed of block ``block_id``: unknowable without the ladder's secret seed."""
    digest = hashlib.sha256(f"callbreak-arena/ladder/v1/{ladder_seed}/{block_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - BLOCK_SEED_BITS)


def block_name(block_id: int) -> str:
    """The tournament name of a block in its records."""
    return f"block-{block_id}"


def bot_table(version: Version, folder: Path, token_sha256: str | None = None) -> dict[str, Any]:
    """The ``[[bots]]`` table of ``version`` (``folder``: the ladder's; ``token_sha256``: a remote entrant's)."""
    if version.kind == "inprocess":
        return {"name": version.label, "python": version.path}
    if version.kind == "remote":
        return {"name": version.label, "remote": True, "token_sha256": token_sha256 or ""}
    submission = read_submission(folder / version.path, f"version {version.label}")
    return submission.bot_table(version.label)


def bot_under_test(version: Version, folder: Path, sandbox: str) -> BotUnderTest:
    """``version`` as check-bot takes a bot: the kind, the command and its folder."""
    if version.kind == "inprocess":
        return BotUnderTest("python", version.path)
    submission = read_submission(folder / version.path, f"version {version.label}")
    kind = "stdio" if submission.kind == "stdio" else "command"
    return BotUnderTest(kind, folder=submission.folder, sandbox=sandbox, argv=submission.argv)



def _rules_lines(rules: Rules) -> str:
    data = rules.to_dict()
    return "\n".join(f"{key} = {toml_value(value)}" for key, value in data.items())


def event_text(
    name: str, seed: int, deal_sets: int, bots: Sequence[Mapping[str, Any]], settings: LadderSettings, *,
    port: int = 0, host: str = "127.0.0.1", concurrency: int = 1,
) -> str:
    """The configuration of a duplicate round robin of ``bots`` under the ladder's rules, deadline and sandbox:
    a block's (four bots, one deal set) or the final's. A version that crashes or hangs is played by the
    fallback, so it harms only its own games; a remote one missing for ``[remote] patience_s`` likewise."""
    tables = "".join("\n[[bots]]\n" + "".join(f"{key} = {toml_value(value)}\n" for key, value in bot.items())
                     for bot in bots)
    return (
        f"[tournament]\nname = {toml_value(name)}\nseed = {seed}\ndeal_sets = {deal_sets}\n"
        f"format = \"round-robin\"\nconcurrency = {concurrency}\nforfeit = \"fallback\"\n\n"
        f"[rules]\n{_rules_lines(settings.rules)}\n\n[time]\ndeadline_ms = {settings.deadline_ms}\n"
        f"absent_after_s = {settings.remote.patience_s}\n\n[server]\nhost = {toml_value(host)}\nport = {port}\n\n"
        f"[sandbox]\nmode = {toml_value(settings.sandbox)}\n{tables}"
    )


def block_config(
    block_id: int, seed: int, bots: Sequence[Mapping[str, Any]], settings: LadderSettings, *, port: int = 0,
    host: str = "127.0.0.1",
) -> TournamentConfig:
    """The configuration of a block: the four ``bots`` (in seat order of the first rotation) on one deal set,
    every rotation, one table at a time."""
    config = parse_config(event_text(block_name(block_id), seed, 1, bots, settings, port=port, host=host))
    assert [b.name for b in config.bots] == [bot["name"] for bot in bots]
    return config


@dataclasses.dataclass(frozen=True)
class BlockOutcome:
    """What a played block's records say: its games in order, and each version's figures."""

    games: tuple[GameRecords, ...]
    points: dict[str, int]
    """Each version's game totals added up, in tenths."""
    score: dict[str, float]
    """Each version's block score: tenths per game above its table's mean."""
    faults: dict[str, int]
    absent: frozenset[str]
    """Versions the fallback played for because they were not there (``absent`` faults)."""


def outcome(folder: Path) -> BlockOutcome:
    """Reads a block's results folder (its games in plan order: by rotation)."""
    games = tuple(sorted(ResultsStore(folder).games(), key=lambda game: game.first.rotation))
    points: dict[str, int] = {}
    score: dict[str, float] = {}
    faults: dict[str, int] = {}
    absent: set[str] = set()
    for game in games:
        final = game.final
        mean = sum(final.totals) / 4
        for seat, bot in enumerate(final.seats):
            points[bot] = points.get(bot, 0) + final.totals[seat]
            score[bot] = score.get(bot, 0.0) + (final.totals[seat] - mean) / len(games)
            faults.setdefault(bot, 0)
        for record in game.rounds:
            for fault in record.faults:
                bot = record.seats[fault.seat]
                faults[bot] += 1
                if fault.kind == FaultKind.ABSENT:
                    absent.add(bot)
    return BlockOutcome(games, points, score, faults, frozenset(absent))


class RatingModel:
    """OpenSkill's Plackett-Luce model with the ladder's settings: ratings as (mu, sigma) pairs."""

    def __init__(self, beta: float, tau: float) -> None:
        self._model = PlackettLuce(beta=beta, tau=tau)

    def initial(self) -> tuple[float, float]:
        rating = self._model.rating()
        return float(rating.mu), float(rating.sigma)

    def rate(self, game_seats: Sequence[tuple[float, float]], places: Sequence[int]) -> list[tuple[float, float]]:
        """The four seats' ratings after one game, from their ratings before and their places (1-4, ties
        sharing a place)."""
        teams = [[self._model.rating(mu=mu, sigma=sigma)] for mu, sigma in game_seats]
        rated = self._model.rate(teams, ranks=[float(place) for place in places])
        return [(float(team[0].mu), float(team[0].sigma)) for team in rated]


def rate_games(model: RatingModel, ratings: dict[str, tuple[float, float]],
               games: Sequence[GameRecords]) -> dict[str, tuple[float, float]]:
    """``ratings`` (by version label) after ``games``, in order; a version not in it starts at the model's
    initial rating."""
    current = dict(ratings)
    for game in games:
        final = game.final
        before = [current.get(bot) or model.initial() for bot in final.seats]
        for bot, after in zip(final.seats, model.rate(before, final.places), strict=True):
            current[bot] = after
    return current
