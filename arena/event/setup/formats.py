"""The options of each tournament format, as frozen values with their defaults, read from the format's table.

``[gauntlet]``, ``[head-to-head]``, ``[sprt]`` and ``[swiss]`` each become one value (a round-robin has no
options); :meth:`to_dict` gives the form the manifest stores, and :func:`stored_options` reads it back with the
same SprtOptions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast, get_args

from arena.errors import ConfigError
from arena.event.setup.botconfig import BotConfig
from arena.event.setup.kinds import BotKind, Format, Rotation
from arena.event.setup.tables import FORMAT_KEYS, REQUIRED, Reader

__all__ = ["HOUSE_TRIO", "ONCE_REFUSED", "PLAN_KEYS", "SPRT_DEAL_SETS", "FormatOptions", "GauntletOptions",
           "HeadToHeadOptions", "RoundRobinOptions", "SprtMethod", "SprtOptions", "SwissOptions", "read_format_options",
           "schedule_options", "stored_options"]

SPRT_DEAL_SETS = 10_000
"""``tournament.deal_sets``' default under ``sprt``: the test's cap, far above the few hundred blocks
a test usually needs, so that the default decides."""
SprtMethod = Literal["el", "alt", "alt2"]
"""How the sequential test computes its log-likelihood ratio (:mod:`arena.rating.sequential`)."""
PLAN_KEYS = ("a", "b", "champion", "opening_rounds", "opponents")
"""The options a schedule reads, which a plan's design keeps (the others, such as the sequential test's, do
not change the plan)."""


@dataclasses.dataclass(frozen=True)
class _Options:
    def to_dict(self) -> dict[str, Any]:
        """The form the manifest stores (``format_options``)."""
        return {field.name: list(value) if isinstance(value := getattr(self, field.name), tuple) else value
                for field in dataclasses.fields(self)}

    def plan_options(self) -> dict[str, Any]:
        """The options a schedule reads (:data:`PLAN_KEYS`): what the plan's design keeps."""
        return {key: value for key, value in self.to_dict().items() if key in PLAN_KEYS}


@dataclasses.dataclass(frozen=True)
class RoundRobinOptions(_Options):
    """A round-robin has no options."""


@dataclasses.dataclass(frozen=True)
class GauntletOptions(_Options):
    champion: str
    """The bot that plays every block."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class HeadToHeadOptions(_Options):
    a: str
    b: str
    opponents: tuple[str, ...] = ()
    """The pool the two other seats are drawn from; none: two copies of A and B fill the table."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class SprtOptions(HeadToHeadOptions):
    """A head-to-head that a sequential test may end early. Deltas are in points per game (as people read
    scores); the test turns them into tenths."""

    delta0: float = 0.0
    delta1: float
    alpha: float = 0.05
    beta: float = 0.05
    burn_in: int = 30
    """Blocks before the test may give a verdict."""
    method: SprtMethod = "el"


@dataclasses.dataclass(frozen=True)
class SwissOptions(_Options):
    opening_rounds: int = 2
    """Rounds drawn as in a round-robin before the pairing by score begins."""


FormatOptions = RoundRobinOptions | GauntletOptions | HeadToHeadOptions | SprtOptions | SwissOptions
"""The options of a tournament's format."""


def stored_options(fmt: str, data: Mapping[str, Any]) -> FormatOptions:
    """The options as a manifest stores them (:meth:`to_dict`), keys left out taking their defaults."""
    if fmt != Format.SPRT:
        return schedule_options(fmt, data)
    pair = schedule_options(Format.HEAD_TO_HEAD, data)
    assert isinstance(pair, HeadToHeadOptions)
    return SprtOptions(
        a=pair.a, b=pair.b, opponents=pair.opponents, delta0=float(data.get("delta0", SprtOptions.delta0)),
        delta1=float(data["delta1"]), alpha=float(data.get("alpha", SprtOptions.alpha)),
        beta=float(data.get("beta", SprtOptions.beta)), burn_in=int(data.get("burn_in", SprtOptions.burn_in)),
        method=cast(SprtMethod, data.get("method", SprtOptions.method)),
    )


def schedule_options(fmt: str, data: Mapping[str, Any]) -> FormatOptions:
    """The options a schedule reads, from what a plan's design keeps (:meth:`plan_options`): a sequential
    test's schedule is its head-to-head's."""
    match fmt:
        case Format.GAUNTLET:
            return GauntletOptions(str(data["champion"]))
        case Format.HEAD_TO_HEAD | Format.SPRT:
            return HeadToHeadOptions(a=str(data["a"]), b=str(data["b"]),
                                     opponents=tuple(str(o) for o in data.get("opponents", ())))
        case Format.SWISS:
            return SwissOptions(int(data.get("opening_rounds", SwissOptions.opening_rounds)))
    return RoundRobinOptions()


def read_format_options(data: Mapping[str, Any], fmt: Format, bots: Sequence[BotConfig],
                        rotation: Rotation = Rotation.CYCLIC) -> FormatOptions:
    """The options of ``fmt`` from its table in the configuration ``data``, checked against the bots and the
    rotation."""
    for other in FORMAT_KEYS:
        if other != fmt and other in data:
            raise ConfigError(f"[{other}] is given but tournament.format is {fmt!r}")
    names = {b.name for b in bots}
    once = rotation == Rotation.ONCE
    if once:
        _check_once(fmt, bots)
    if fmt not in FORMAT_KEYS:  # under once, 2 bots are enough: each is compared with the other on the same cards
        if len(bots) < 4 and fmt == Format.ROUND_ROBIN and not once:
            raise ConfigError(f"round-robin needs at least 4 bots (a table seats four), found {len(bots)}")
        return RoundRobinOptions()
    r = Reader(data.get(fmt, {}), f"{fmt}.", FORMAT_KEYS[fmt])

    def known(key: str, value: str) -> str:
        if value not in names:
            raise ConfigError(
                f"{fmt}.{key} names {value!r}, which is not a bot; the bots are: {', '.join(sorted(names))}"
            )
        return value

    match fmt:
        case Format.GAUNTLET:
            champion = known("champion", r.string("champion", REQUIRED))
            if len(bots) < 4:
                raise ConfigError(f"a gauntlet needs the champion and at least 3 other bots, found {len(bots) - 1}")
            return GauntletOptions(champion)
        case Format.HEAD_TO_HEAD | Format.SPRT:
            pair = _pair(r, fmt, bots, known, once)
            if fmt == Format.HEAD_TO_HEAD:
                return HeadToHeadOptions(**pair)
            tournament = data.get("tournament", {})
            return _sprt_options(r, tournament if isinstance(tournament, Mapping) else {}, pair)
    opening = r.integer("opening_rounds", SwissOptions.opening_rounds, 1, 10_000)
    if len(bots) < 4:
        raise ConfigError(f"swiss needs at least 4 bots, found {len(bots)}")
    return SwissOptions(opening)


HOUSE_TRIO = ("house-1", "house-2", "house-3")
"""The house bots every bot plays against under ``rotation = "once"``: three house bots of seed 0, whose choices are a
pure function of the deal set, the round, the seat and the hand (:mod:`arena.players.house`), so the trio is the same
opponents at every bot's table of a round (:func:`arena.event.plan.schedule.once_order`). No bot of a configuration may
take one of these names under ``once``."""
ONCE_REFUSED = {
    Format.GAUNTLET: "a gauntlet seats its champion with every trio of the field, and under \"once\" every bot plays "
                     "the same house trio and meets no other bot",
    Format.SWISS: "swiss seats bots of neighbouring standings at one table, and under \"once\" no two bots share a "
                  "table (each plays the house trio), so there is nobody to pair",
}
"""Why each format that does not take ``rotation = "once"`` cannot."""


def _check_once(fmt: Format, bots: Sequence[BotConfig]) -> None:
    """Refuses what ``rotation = "once"`` cannot play: a format without it, a bot named as one of the house trio."""
    if fmt in ONCE_REFUSED:
        raise ConfigError(f"tournament.format = \"{fmt}\" does not take tournament.rotation = \"once\": "
                          f"{ONCE_REFUSED[fmt]}; use format = \"round-robin\" (every bot against the house trio), "
                          "or another rotation")
    for bot in bots:
        if bot.name.casefold() in HOUSE_TRIO:
            raise ConfigError(f"the bot {bot.name!r} has the name of one of the house trio every bot plays against "
                              f"under rotation = \"once\" ({', '.join(HOUSE_TRIO)}): give it another name")


def _pair(r: Reader, fmt: Format, bots: Sequence[BotConfig], known: Any, once: bool = False) -> dict[str, Any]:
    """A and B, and the opponents they meet, of a format that compares two bots (under ``once``: the house trio)."""
    a = known("a", r.string("a", REQUIRED))
    b = known("b", r.string("b", REQUIRED))
    if a == b:
        raise ConfigError(f"{fmt}.a and {fmt}.b must be two different bots")
    opponents = r.get("opponents", [], (list,), "a list of bot names")
    for opponent in opponents:
        known("opponents", str(opponent))
    if once and opponents:
        raise ConfigError(f"{fmt}.opponents must be left out under rotation = \"once\": a and b each play every deal "
                          "set once against the house trio, which is their opponents")
    if opponents and len(opponents) < 2:
        raise ConfigError(f"{fmt}.opponents needs at least two bots (or none, to play two copies of each)")
    if a in opponents or b in opponents:
        raise ConfigError(f"{fmt}.opponents must not include a or b")
    kinds = {bot.name: bot.kind for bot in bots}
    single = [n for n in (a, b) if not opponents and not once and kinds[n] in (BotKind.REMOTE, BotKind.BHOOS_URL)]
    if single:  # a copy would need a second connection under the same token, or a second seat at one URL
        kind = kinds[single[0]]
        raise ConfigError(f"{fmt} without opponents plays two copies of a and b, and {single[0]!r} is "
                          f"{'remote' if kind == BotKind.REMOTE else 'a bhoos_url bot'}: such a bot cannot be "
                          f"copied; give {fmt}.opponents")
    twice = sorted({str(o) for o in opponents if opponents.count(o) > 1})
    if twice:  # a block draws two opponents: the same bot must not take both seats
        raise ConfigError(f"{fmt}.opponents names {twice[0]!r} twice")
    return {"a": a, "b": b, "opponents": tuple(str(o) for o in opponents)}


def _sprt_options(r: Reader, tournament: Mapping[str, Any], pair: Mapping[str, Any]) -> SprtOptions:
    delta0 = r.number("delta0", SprtOptions.delta0, -1000.0, 1000.0)
    delta1 = r.number("delta1", REQUIRED, -1000.0, 1000.0)
    if delta1 == delta0:
        raise ConfigError("sprt.delta1 must differ from sprt.delta0: the test decides between the two")
    burn_in = r.integer("burn_in", SprtOptions.burn_in, 10, 100_000)
    # The test reads one block per deal set, gives no verdict before the burn-in and none after the
    # last block: with fewer deal sets than the burn-in it could only end in "no decision". (With a
    # deal file its games set the count; the live judge checks that when it reads the file.)
    deal_sets = tournament.get("deal_sets", SPRT_DEAL_SETS)
    if (not tournament.get("deal_file") and isinstance(deal_sets, int) and not isinstance(deal_sets, bool)
            and 0 < deal_sets < burn_in):
        burn_in_is = f"{burn_in}{'' if 'burn_in' in r.data else ' (the default)'}"
        deal_sets_are = f"{deal_sets}{'' if 'deal_sets' in tournament else ' (the default)'}"
        fix = f"set tournament.deal_sets to {burn_in} or more" + (
            f", or sprt.burn_in to {deal_sets} or less" if deal_sets >= 10 else " (sprt.burn_in cannot go below 10)")
        raise ConfigError(
            f"sprt.burn_in is {burn_in_is} but tournament.deal_sets is {deal_sets_are}: the test reads one block "
            f"per deal set and gives no verdict before the burn-in, so it could never decide; {fix}; "
            "a test usually needs a few hundred blocks"
        )
    return SprtOptions(
        **pair, delta0=delta0, delta1=delta1,
        alpha=r.number("alpha", SprtOptions.alpha, 0.0001, 0.5), beta=r.number("beta", SprtOptions.beta, 0.0001, 0.5),
        burn_in=burn_in, method=cast(SprtMethod, r.string("method", SprtOptions.method, get_args(SprtMethod))),
    )
