"""The reference zoo and its fixed scale: a bot rated against bots of graded strength on a fixed pool of deals.

The zoo (``zoo.toml`` beside this module) is a list of versioned members, each deterministic for its seed. A
candidate is rated in *blocks*: block ``i`` is one deal set, the ``i``-th of the pool (:func:`block_seed` of the
pool seed), played in its four rotations by the candidate and three members, the ``i``-th of the member trios
in a fixed cycle (:func:`opponents`). The candidate's block score is its points per game above its table's
mean (a block's four games hold the same hands, so card luck cancels); its *zoo score* is the mean block score,
with the 95 % t interval over blocks (each block one cluster, as the ladder's duplicate score). Every candidate
meets the same deals and the same opponents in the same order, and the rating stops only at the end of a
cycle of trios, so two zoo scores are on one scale: a member rated as a candidate lands at its published score.

A rating stops when the interval's half width is at most the precision asked for, when the blocks run out
(``max_blocks``), or when the time budget is spent; whichever comes first, at a cycle's end. The pool seed is
public, so anyone can replay a published rating; a contest gives a secret one instead.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.resources
import itertools
import math
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.errors import ConfigError
from arena.event.run.preparation import as_begun
from arena.event.run.tournament import Tournament
from arena.event.setup.bots import load_bot_class, registered_bot
from arena.event.setup.config import parse_config
from arena.event.setup.tables import toml_value
from arena.rating.stats import mean_ci
from arena.records.store import ResultsStore

__all__ = ["CANDIDATE", "Member", "Rating", "Zoo", "block_seat_key", "block_seed", "check_members", "load_zoo",
           "opponents", "rate"]

CANDIDATE = "candidate"
"""The candidate's name in the blocks' records."""


@dataclasses.dataclass(frozen=True)
class Member:
    """A member of the zoo: the bot it is, its version and its published score."""

    name: str
    version: int
    spec: str
    """``module:Class`` of the bot."""
    options: Mapping[str, Any]
    score: float
    low: float
    high: float
    extra: str = ""
    """The optional extra of the package the member needs (``openspiel``), or empty."""

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def bot_table(self, name: str) -> dict[str, Any]:
        return {"name": name, "python": self.spec, **({"options": dict(self.options)} if self.options else {})}


@dataclasses.dataclass(frozen=True)
class Zoo:
    """The members, the public pool seed, the rules profile, and the blocks their published scores took."""

    members: tuple[Member, ...]
    pool_seed: int
    profile: str
    blocks: int

    def member(self, name: str) -> Member | None:
        return next((m for m in self.members if m.name == name), None)

    @property
    def cycle(self) -> int:
        """Blocks in one cycle of the opponent trios."""
        return math.comb(len(self.members), 3)


def load_zoo(path: Path | None = None) -> Zoo:
    """The zoo of ``path`` (by default the package's ``zoo.toml``)."""
    text = (path.read_text(encoding="utf-8") if path is not None else
            importlib.resources.files("arena.rating").joinpath("zoo.toml").read_text(encoding="utf-8"))
    data = tomllib.loads(text)
    members = []
    for entry in data["members"]:
        spec = entry["python"] if "python" in entry else registered_bot(entry["registered"])
        members.append(Member(entry["name"], int(entry["version"]), spec, dict(entry.get("options", {})),
                              float(entry["score"]), float(entry["low"]), float(entry["high"]),
                              str(entry.get("extra", ""))))
    if len(members) < 3:
        raise ConfigError("a zoo needs at least three members: a block seats three of them")
    return Zoo(tuple(members), int(data["pool_seed"]), str(data["profile"]), int(data["blocks"]))


def block_seed(pool_seed: int, index: int) -> int:
    """The deal seed of block ``index`` of the pool: a 62-bit digest of the pool seed and the index."""
    digest = hashlib.sha256(f"callbreak-arena/zoo/v1/{pool_seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 2


def block_seat_key(pool_seed: int, index: int) -> bytes:
    """The key of block ``index``'s seat seeds: SHA-256 of the pool seed and the index, as public as the pool (a
    rating is reproducible, seat seeds included; it is for research, not for contests)."""
    return hashlib.sha256(f"callbreak-arena/zoo/seat-key/v1/{pool_seed}/{index}".encode()).digest()


def check_members(zoo: Zoo) -> None:
    """Raises :class:`ConfigError`, naming the extra to install, when a member's bot cannot be loaded."""
    for member in zoo.members:
        try:
            load_bot_class(member.spec)
        except ConfigError as err:
            if not member.extra:
                raise
            raise ConfigError(f"the zoo's member {member.label} needs the {member.extra} extra, which is not "
                              f"installed: pip install -e '.[{member.extra}]' (or pip install "
                              f"'callbreak-arena[{member.extra}]'), then rate again") from err


def opponents(zoo: Zoo, index: int) -> tuple[Member, Member, Member]:
    """The three members of block ``index``: the trios of members in a fixed order (of their names, so a member's
    place in the list does not move the trios), cycled."""
    trios = list(itertools.combinations(sorted(zoo.members, key=lambda member: member.name), 3))
    first, second, third = trios[index % len(trios)]
    return first, second, third


@dataclasses.dataclass(frozen=True)
class Rating:
    """A candidate's zoo score: the mean of its block scores (points per game), its interval, and why it stopped."""

    scores: tuple[float, ...]
    """Each block's score, in block order."""
    mean: float
    low: float
    high: float
    stopped: str
    """``precision``, ``blocks`` or ``time``."""
    seconds: float

    @property
    def blocks(self) -> int:
        return len(self.scores)

    def place(self, zoo: Zoo) -> str:
        """Where the score falls among the members' published scores, in words."""
        ranked = sorted(zoo.members, key=lambda m: m.score)
        level = [m for m in ranked if round(m.score, 2) == round(self.mean, 2)]
        if level:
            return f"level with {level[0].label} ({level[0].score:+.2f})"
        below = [m for m in ranked if m.score < self.mean]
        above = [m for m in ranked if m.score >= self.mean]
        if not below:
            return f"below {above[0].label} ({above[0].score:+.2f}), the zoo's lowest rung"
        if not above:
            return f"above {below[-1].label} ({below[-1].score:+.2f}), the zoo's highest rung"
        return (f"between {below[-1].label} ({below[-1].score:+.2f}) and {above[0].label} "
                f"({above[0].score:+.2f})")

    def as_dict(self, zoo: Zoo) -> dict[str, Any]:
        return {"score": self.mean, "low": self.low, "high": self.high, "blocks": self.blocks,
                "games": 4 * self.blocks, "stopped": self.stopped, "place": self.place(zoo),
                "block_scores": list(self.scores)}


def _event_text(index: int, pool: int, profile: str, bots: Sequence[Mapping[str, Any]], sandbox: str) -> str:
    tables = "".join("\n[[bots]]\n" + "".join(f"{key} = {toml_value(value)}\n" for key, value in bot.items())
                     for bot in bots)
    return (f"[tournament]\nname = \"zoo-{index}\"\nseed = {block_seed(pool, index)}\n"
            f"seat_key = \"{block_seat_key(pool, index).hex()}\"\ndeal_sets = 1\nformat = \"round-robin\"\n"
            f"concurrency = 1\nforfeit = \"fallback\"\n\n[rules]\nprofile = {toml_value(profile)}\n\n"
            f"[sandbox]\nmode = {toml_value(sandbox)}\n{tables}")



def _block_score(folder: Path) -> float:
    """The candidate's points per game above its table's mean, over the block's games."""
    games = list(ResultsStore(folder).games())
    total = 0
    for game in games:
        final = game.final
        seat = final.seats.index(CANDIDATE)
        total += 4 * final.totals[seat] - sum(final.totals)  # four times (its total - the table's mean), tenths
    return total / (40 * len(games))


async def rate(
    candidate: Mapping[str, Any], zoo: Zoo, folder: Path, *, precision: float = 0.5, max_blocks: int = 400,
    seconds: float = 600.0, seed: int | None = None, sandbox: str = "auto",
    log: Callable[[str], None] = lambda text: None,
) -> Rating:
    """Rates ``candidate`` (a ``[[bots]]`` table without its name) on ``zoo``, its blocks' records in ``folder``
    (``folder/0000``, ...; a block recorded there already is read, not played again).

    Stops at the end of a cycle of trios when the 95 % interval's half width is at most ``precision`` points
    per game, when ``max_blocks`` are played (rounded down to whole cycles, at least one), or when ``seconds``
    have passed."""
    if precision <= 0 or max_blocks < 1 or seconds <= 0:
        raise ConfigError("the precision, the blocks and the seconds of a rating must be above 0")
    check_members(zoo)
    pool = zoo.pool_seed if seed is None else seed
    limit = max(zoo.cycle, max_blocks - max_blocks % zoo.cycle)  # whole cycles of trios only
    began = time.monotonic()
    scores: list[float] = []
    stopped = "blocks"
    for index in range(limit):
        bots = [{"name": CANDIDATE, **candidate}, *(m.bot_table(m.name) for m in opponents(zoo, index))]
        block = folder / f"{index:04d}"
        config = as_begun(parse_config(_event_text(index, pool, zoo.profile, bots, sandbox)), block)
        await Tournament(config, block, log=lambda text: None).run()
        scores.append(_block_score(block))
        if (index + 1) % zoo.cycle:
            continue
        interval = mean_ci(scores)
        log(f"{len(scores)} blocks: {interval.mean:+.2f} [{interval.low:+.2f}, {interval.high:+.2f}]")
        if len(scores) > 1 and (interval.high - interval.low) / 2 <= precision:
            stopped = "precision"
            break
        if time.monotonic() - began >= seconds:
            stopped = "time"
            break
    interval = mean_ci(scores)
    low, high = (interval.low, interval.high) if len(scores) > 1 else (-math.inf, math.inf)
    return Rating(tuple(scores), interval.mean, low, high, stopped, time.monotonic() - began)
