"""A ladder's block as a tournament: four versions, one fresh deal set, every rotation, in a results folder of
its own; and what its records say each version scored.

A block is played by the tournament code (:class:`~arena.event.run.tournament.Tournament`) exactly as an event
is: the same launcher, sandbox, deadlines and fault rules. Its folder ``blocks/NNNNNN`` is an ordinary results
folder (``callbreak-arena verify`` reads it); its deals are deal set 1 of the block's own seed, drawn from the
ladder's secret seed and the block's number, so nobody can know them before the block is made and anyone can
recompute them from the records afterwards.

A version's *block score* is its duplicate score in the block: the mean, over the block's games, of its game
total minus the mean of the four totals at its table, in tenths. Each version holds every hand once, so card
luck cancels. Its rating moves by OpenSkill's Plackett-Luce model on each game's places, in game order.

Under ``[blocks] rotation = "once"`` each version plays the deal set once, in the same seat, against the house trio
(four games, one a version, none with two versions at one table): its block score is its game total minus the mean
of the four versions' totals, which held the same cards in the same seat against the same opponents, and the
ratings move once, on the places of the four versions by those totals (:func:`outcome`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce

from arena.core.game import places
from arena.core.rules import Rules
from arena.event.check import BotUnderTest
from arena.event.run.preparation import schedule_of
from arena.event.setup.config import TournamentConfig, parse_config
from arena.event.setup.formats import HOUSE_TRIO
from arena.event.setup.kinds import Rotation
from arena.event.setup.sandboxing import SandboxSettings, sandbox_table
from arena.event.setup.submissions import read_submission
from arena.event.setup.tables import toml_value
from arena.ladder.db import Version
from arena.ladder.settings import LadderSettings
from arena.records.format import GameRecords
from arena.records.store import ResultsStore

__all__ = ["BLOCK_SEED_BITS", "BlockOutcome", "RatingModel", "block_config", "block_name", "block_seat_key",
           "block_seed", "bot_table", "bot_under_test", "event_text", "first_seats", "outcome", "rate_games"]

BLOCK_SEED_BITS = 62
"""A block's seed is this many bits of SHA-256 of the ladder's seed and the block's number."""


def block_seed(ladder_seed: int, block_id: int) -> int:
    """The deal seed of block ``block_id``: unknowable without the ladder's secret seed."""
    digest = hashlib.sha256(f"callbreak-arena/ladder/v1/{ladder_seed}/{block_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - BLOCK_SEED_BITS)


def block_seat_key(ladder_seed: int, block_id: int) -> bytes:
    """The key of block ``block_id``'s seat seeds (block 0: the final's): HMAC-SHA256 keyed by the ladder's secret
    seed, so the ladder can always make it again and nobody else can."""
    return hmac.digest(str(ladder_seed).encode(), f"callbreak-arena/ladder/seat-key/v1/{block_id}".encode(), "sha256")


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


def bot_under_test(version: Version, folder: Path, sandbox: SandboxSettings) -> BotUnderTest:
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
    port: int = 0, host: str = "127.0.0.1", concurrency: int = 1, seat_key: bytes | None = None,
) -> str:
    """The configuration of a duplicate round robin of ``bots`` under the ladder's rules, deadline and sandbox (and, on
    the ladder's gRPC port, ``port``, its TLS):
    a block's (four bots, one deal set) or the final's, with its key of the seat seeds (:func:`block_seat_key`).
    A version that crashes or hangs is played by the fallback, so it harms only its own games; a remote one
    missing for ``[remote] patience_s`` likewise."""
    tables = "".join("\n[[bots]]\n" + "".join(f"{key} = {toml_value(value)}\n" for key, value in bot.items())
                     for bot in bots)
    key = f"seat_key = \"{seat_key.hex()}\"\n" if seat_key is not None else ""
    key += f"rotation = {toml_value(str(settings.rotation))}\n" if settings.rotation == Rotation.ONCE else ""
    remote = settings.remote  # a remote entrant's bot reaches the port over TLS where the ladder gives it
    tls = "".join(f"{name} = {toml_value(str(path))}\n" for name, path in (
        ("tls_cert", remote.tls_cert), ("tls_key", remote.tls_key), ("tls_client_ca", remote.tls_client_ca))
        if path is not None and port)
    return (
        f"[tournament]\nname = {toml_value(name)}\nseed = {seed}\ndeal_sets = {deal_sets}\n{key}"
        f"format = \"round-robin\"\nconcurrency = {concurrency}\nforfeit = \"fallback\"\n\n"
        f"[rules]\n{_rules_lines(settings.rules)}\n\n[time]\ndeadline_ms = {settings.deadline_ms}\n"
        f"absent_after_s = {settings.remote.patience_s}\n\n[server]\nhost = {toml_value(host)}\nport = {port}\n{tls}\n"
        f"[sandbox]\n{sandbox_table(settings.sandbox)}{tables}"
    )


def block_config(
    block_id: int, seed: int, bots: Sequence[Mapping[str, Any]], settings: LadderSettings, *, port: int = 0,
    host: str = "127.0.0.1", seat_key: bytes | None = None,
) -> TournamentConfig:
    """The configuration of a block: the four ``bots`` on one deal set, every rotation, one table at a time, its
    first game seating them in the order given (the block's seats as stored and shown), with ``seat_key`` its key
    of the seat seeds."""

    def listed(order: Sequence[Mapping[str, Any]]) -> TournamentConfig:
        return parse_config(event_text(block_name(block_id), seed, 1, order, settings, port=port, host=host,
                                       seat_key=seat_key))

    config = listed(bots)
    if config.rotation == Rotation.ONCE:  # a game for each version, in the order listed (the seats as stored)
        return config
    seats = [bot["name"] for bot in bots]
    drawn = first_seats(config)
    if drawn != seats:
        # The plan draws the seat order from the seed and the four names, whatever order they are listed in: the
        # same permutation of any listing. Listed so that it takes them back to the order given, they sit as given.
        by_seat = {seats.index(name): bots[seat] for seat, name in enumerate(drawn)}
        config = listed([by_seat[index] for index in range(4)])
    assert first_seats(config) == seats
    return config


def first_seats(config: TournamentConfig) -> list[str]:
    """The seats of the first game the plan of a block's configuration plays (seat 0 first)."""
    schedule = schedule_of(config, [bot.name for bot in config.bots], range(1, config.deal_sets + 1))
    return list(schedule.round_assignments(1)[0].seats)


@dataclasses.dataclass(frozen=True)
class BlockOutcome:
    """What a played block's records say: its games in order, and each version's figures."""

    games: tuple[GameRecords, ...]
    points: dict[str, int]
    """Each version's game totals added up, in tenths."""
    score: dict[str, float]
    """Each version's block score: tenths per game above its table's mean (under ``once``: above the mean of the
    four versions' totals on the same cards)."""
    faults: dict[str, int]
    rankings: tuple[tuple[tuple[str, ...], tuple[int, ...]], ...] = ()
    """What the ratings move on, in order: four versions (by seat) and their places, each game's (under ``once``:
    one, the four versions placed by their totals)."""
    once: bool = False
    """Played under ``[blocks] rotation = "once"``: a game per version, against the house trio."""
    played: tuple[GameRecords, ...] = ()
    """The same games in the order they were played (the records' order; it is drawn from the seed, so it is not
    the plan's): what a remote version's attendance is read from."""

    def games_of(self, version: str) -> int:
        """The games ``version`` sat in: all four, or under ``once`` its one."""
        return sum(version in game.seats for game in self.games)


def outcome(folder: Path) -> BlockOutcome:
    """Reads a block's results folder (its games in plan order: by rotation, then, under ``once``, by version)."""
    store = ResultsStore(folder)
    played = tuple(store.games())
    games = tuple(sorted(played, key=lambda game: (game.first.rotation, game.first.group)))
    config = (store.manifest() or {}).get("config", {})
    if isinstance(config, dict) and config.get("rotation") == Rotation.ONCE:
        return _once_outcome(games, played)
    points: dict[str, int] = {}
    score: dict[str, float] = {}
    faults: dict[str, int] = {}
    for game in games:
        final = game.final
        mean = sum(final.totals) / 4
        for seat, bot in enumerate(final.seats):
            points[bot] = points.get(bot, 0) + final.totals[seat]
            score[bot] = score.get(bot, 0.0) + (final.totals[seat] - mean) / len(games)
            faults.setdefault(bot, 0)
        for record in game.rounds:
            for fault in record.faults:
                faults[record.seats[fault.seat]] += 1
    return BlockOutcome(games, points, score, faults, tuple((g.final.seats, g.final.places) for g in games),
                        played=played)


def _once_outcome(games: tuple[GameRecords, ...], played: tuple[GameRecords, ...]) -> BlockOutcome:
    """A block played under ``rotation = "once"``: each game one version against the house trio, the versions on
    the same cards in the same seat, so each is scored against the mean of the versions' totals and they are placed
    by those totals."""
    points: dict[str, int] = {}
    faults: dict[str, int] = {}
    for game in games:
        final = game.final
        for seat, bot in enumerate(final.seats):
            if bot in HOUSE_TRIO:
                continue
            points[bot] = points.get(bot, 0) + final.totals[seat]
            faults[bot] = faults.get(bot, 0) + sum(1 for record in game.rounds for fault in record.faults
                                                   if fault.seat == seat)
    versions = tuple(points)
    mean = sum(points.values()) / len(points) if points else 0.0
    score = {bot: float(total - mean) for bot, total in points.items()}
    ranking = (versions, places([points[bot] for bot in versions])) if len(versions) == 4 else None
    return BlockOutcome(games, points, score, faults, (ranking,) if ranking else (), once=True, played=played)


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
               rankings: Sequence[tuple[Sequence[str], Sequence[int]]]) -> dict[str, tuple[float, float]]:
    """``ratings`` (by version label) after ``rankings`` (a block's :attr:`BlockOutcome.rankings`: four versions
    and their places, each), in order; a version not in it starts at the model's initial rating."""
    current = dict(ratings)
    for seats, placed in rankings:
        before = [current.get(bot) or model.initial() for bot in seats]
        for bot, after in zip(seats, model.rate(before, placed), strict=True):
            current[bot] = after
    return current
