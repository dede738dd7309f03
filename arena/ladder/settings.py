"""A ladder's settings: the file ``ladder.toml`` in its folder, checked whole when read.

Every table and key is described in ``docs/ladder.md``. A wrong key or value is refused with a
:class:`~arena.errors.ConfigError` that names the key, what was found and what is allowed; an unknown
key is answered with the closest known one.
"""

from __future__ import annotations

import dataclasses
import difflib
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.core.rules import SWITCHES, Rules
from arena.errors import ConfigError, RulesError
from arena.event.setup.entries import is_name
from arena.event.setup.kinds import Rotation
from arena.event.setup.sandboxing import DEFAULT_SANDBOX, LIMITS, SandboxSettings
from arena.event.setup.tables import Reader, read_text
from arena.ladder import DATABASE_FILE, SETTINGS_FILE

__all__ = ["DATABASE_FILE", "LADDER_SANDBOX", "SETTINGS_FILE", "Capacity", "LadderSettings", "Matchmaking",
           "RatingSettings", "Remote", "SubmissionLimits", "TestSettings", "load_settings", "parse_settings",
           "sqlite_url"]

BLOCK_ROTATIONS = (Rotation.CYCLIC, Rotation.ONCE)
"""The rotations a ladder's blocks may play (``full``'s 24 games a block would buy nothing ``cyclic`` does not)."""

_KEYS: dict[str, set[str]] = {
    "ladder": {"name", "seed"},
    "rules": {*SWITCHES, "profile"},
    "time": {"deadline_ms"},
    "blocks": {"rotation"},
    "capacity": {"tables", "workers"},
    "rating": {"beta", "tau"},
    "matchmaking": {"placement_blocks", "spread", "no_rematch_blocks"},
    "submissions": {"active_versions", "max_bytes", "max_files", "per_hour", "check_games"},
    "tests": {"share", "delta1", "alpha", "beta", "burn_in", "cap", "per_entrant", "scrimmage_blocks"},
    "remote": {"host", "port", "patience_s", "set_aside_after", "tls_cert", "tls_key", "tls_client_ca"},
    "sandbox": {"mode", "processes", "tmp_mb", "limits"},
    "database": {"url"},
}
"""Each table of ladder.toml and its keys."""


@dataclasses.dataclass(frozen=True)
class Capacity:
    """How much of the machine the ladder uses at once."""

    tables: int = 2
    """Blocks played at the same time, each one game at a time (so as many games at once); the final plays as many
    games at once."""
    workers: int = 1
    """Processes that play the final's games (1: the ladder's own); blocks are played by the ladder's own process."""


@dataclasses.dataclass(frozen=True)
class RatingSettings:
    """The OpenSkill (Plackett-Luce) model's settings; a rating is shown as its ordinal, mu - 3 sigma."""

    beta: float = 25 / 6
    """The spread of one game's performance around a bot's skill (OpenSkill's default, 25/6)."""
    tau: float = 0.0
    """Skill drift added to sigma before each update: 0, because a version of a bot does not change."""


@dataclasses.dataclass(frozen=True)
class Matchmaking:
    """Which versions are seated together."""

    placement_blocks: int = 4
    """Duplicate blocks a new version plays before it is matched by rating."""
    spread: float = 2.0
    """How far apart, in sigmas, the ratings of versions seated together may be."""
    no_rematch_blocks: int = 2
    """Blocks a version plays before it meets the same three versions again."""


@dataclasses.dataclass(frozen=True)
class SubmissionLimits:
    """What one entrant may submit."""

    active_versions: int = 1
    """Versions of one entrant that play at once (a newer one retires the oldest)."""
    max_bytes: int = 10_000_000
    """The largest submission, all its files together."""
    max_files: int = 200
    """The most files one submission may hold."""
    per_hour: int = 4
    """Uploads one entrant may make in an hour: the versions made and the uploads refused once read."""
    check_games: int = 8
    """Games a new version plays against the house bots in its check, before it may play."""


@dataclasses.dataclass(frozen=True)
class TestSettings:
    """Version tests (a sequential test of B against A) and scrimmages."""

    __test__ = False

    share: float = 0.5
    """The part of the tables that tests and scrimmages may take while rated blocks wait."""
    delta1: float = 1.0
    """H1's difference, B - A, in points per game (H0's is 0)."""
    alpha: float = 0.05
    beta: float = 0.05
    burn_in: int = 10
    """Blocks before a test may decide."""
    cap: int = 400
    """The most blocks a test plays before it stops without a decision."""
    per_entrant: int = 2
    """Tests and scrimmages one entrant may have running at once (the organiser's are not counted)."""
    scrimmage_blocks: int = 20
    """The most blocks one scrimmage may ask for."""


@dataclasses.dataclass(frozen=True)
class Remote:
    """Where remote entrants' bots connect over gRPC (``protocol/callbreak.proto``)."""

    host: str = "127.0.0.1"
    port: int = 0
    """0: a free port, chosen when the ladder starts and printed."""
    patience_s: float = 20.0
    """Seconds a game of a block waits for a remote version before the fallback plays its seat."""
    set_aside_after: int = 3
    """Blocks in a row a remote version may miss (not there for some of its games) before it is set aside until its
    bot connects again."""
    tls_cert: Path | None = None
    """PEM certificate chain of the gRPC port: with ``tls_key``, bots connect over TLS only (their bot tokens never
    cross the network in clear)."""
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    """PEM certificate of the CA that signs the bots' client certificates: with it, a bot must also show one."""


LADDER_SANDBOX = SandboxSettings(mode="bwrap", limits="require")
"""A ladder's ``[sandbox]`` by default: strangers' uploads run only in the sandbox, and only where their processes
and their ``/tmp`` can be limited."""


@dataclasses.dataclass(frozen=True)
class LadderSettings:
    """A whole ladder's settings, read from ``ladder.toml``."""

    name: str
    database_url: str
    """Where the database is: a SQLAlchemy URL (by default the SQLite file ladder.db in the ladder's folder)."""
    seed: int = 1
    """The secret from which every block's deals are drawn: whoever knows it knows every deal to come."""
    rules: Rules = dataclasses.field(default_factory=Rules.profile)
    deadline_ms: int = 2000
    """Milliseconds a bot has for each decision."""
    rotation: Rotation = Rotation.CYCLIC
    """``[blocks] rotation``: ``cyclic`` (each version of a block holds every hand of its deal set, in four games) or
    ``once`` (each plays the deal set once, in the same seat, against the house trio), for blocks and the final."""
    capacity: Capacity = Capacity()
    rating: RatingSettings = RatingSettings()
    matchmaking: Matchmaking = Matchmaking()
    submissions: SubmissionLimits = SubmissionLimits()
    tests: TestSettings = TestSettings()
    remote: Remote = Remote()
    sandbox: SandboxSettings = LADDER_SANDBOX
    """How submitted versions run: ``mode`` ``bwrap`` (the sandbox, refused where it cannot run), ``auto`` or ``off``
    (unsandboxed: only for bots you trust, as a tournament's ``[sandbox] mode``); each with its ``processes`` and
    ``tmp_mb``, which ``limits = "require"`` refuses to run a version without."""


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of the SQLite file ``path`` (made absolute, so it holds from any folder)."""
    return f"sqlite:///{path.resolve()}"


def parse_settings(text: str, folder: Path) -> LadderSettings:
    """Reads and checks the settings of the ladder in ``folder``; :class:`ConfigError` on the first problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{SETTINGS_FILE} is not valid TOML: {err}") from None
    _known(data, "", set(_KEYS), "tables")
    ladder = _table(data, "ladder")
    name = ladder.string("name", folder.resolve().name or "ladder")
    if not is_name(name):
        raise ConfigError(f"ladder.name {name!r} must be 1-40 letters, digits, spaces or ._+#- characters")
    time = _table(data, "time")
    blocks = _table(data, "blocks")
    capacity = _table(data, "capacity")
    rating = _table(data, "rating")
    match = _table(data, "matchmaking")
    limits = _table(data, "submissions")
    database = _table(data, "database")
    tests = _table(data, "tests")
    remote = _table(data, "remote")
    sandbox = _table(data, "sandbox")
    url = database.string("url", sqlite_url(folder / DATABASE_FILE))
    if not url.strip():
        raise ConfigError("database.url must be a database URL such as postgresql+psycopg://user@host/ladder, "
                          "or left out for the SQLite file ladder.db")
    return LadderSettings(
        name=name,
        database_url=url,
        seed=ladder.integer("seed", 1, 0, (1 << 62) - 1),
        rules=_rules(data.get("rules", {})),
        deadline_ms=time.integer("deadline_ms", 2000, 1, 600_000),
        rotation=Rotation(blocks.string("rotation", Rotation.CYCLIC, BLOCK_ROTATIONS)),
        capacity=Capacity(tables=capacity.integer("tables", Capacity.tables, 1, 10_000),
                          workers=capacity.integer("workers", Capacity.workers, 1, 1024)),
        rating=RatingSettings(beta=rating.number("beta", RatingSettings.beta, 0.001, 1000.0),
                              tau=rating.number("tau", RatingSettings.tau, 0.0, 100.0)),
        matchmaking=Matchmaking(
            placement_blocks=match.integer("placement_blocks", Matchmaking.placement_blocks, 0, 10_000),
            spread=match.number("spread", Matchmaking.spread, 0.0, 100.0),
            no_rematch_blocks=match.integer("no_rematch_blocks", Matchmaking.no_rematch_blocks, 0, 10_000),
        ),
        submissions=SubmissionLimits(
            active_versions=limits.integer("active_versions", SubmissionLimits.active_versions, 1, 100),
            max_bytes=limits.integer("max_bytes", SubmissionLimits.max_bytes, 1, 1 << 34),
            max_files=limits.integer("max_files", SubmissionLimits.max_files, 1, 1_000_000),
            per_hour=limits.integer("per_hour", SubmissionLimits.per_hour, 1, 10_000),
            check_games=limits.integer("check_games", SubmissionLimits.check_games, 4, 400),
        ),
        tests=TestSettings(
            share=tests.number("share", TestSettings.share, 0.0, 1.0),
            delta1=tests.number("delta1", TestSettings.delta1, 0.01, 1000.0),
            alpha=tests.number("alpha", TestSettings.alpha, 0.0001, 0.5),
            beta=tests.number("beta", TestSettings.beta, 0.0001, 0.5),
            burn_in=tests.integer("burn_in", TestSettings.burn_in, 2, 10_000),
            cap=tests.integer("cap", TestSettings.cap, 2, 1_000_000),
            per_entrant=tests.integer("per_entrant", TestSettings.per_entrant, 0, 1000),
            scrimmage_blocks=tests.integer("scrimmage_blocks", TestSettings.scrimmage_blocks, 1, 100_000),
        ),
        remote=Remote(host=remote.string("host", Remote.host), port=remote.integer("port", Remote.port, 0, 65535),
                      patience_s=remote.number("patience_s", Remote.patience_s, 1.0, 3600.0),
                      set_aside_after=remote.integer("set_aside_after", Remote.set_aside_after, 1, 10_000),
                      **_tls(remote, folder)),
        sandbox=SandboxSettings(
            mode=sandbox.string("mode", "bwrap", ("bwrap", "auto", "off")),
            processes=sandbox.integer("processes", DEFAULT_SANDBOX.processes, 0, 1 << 22),
            tmp_mb=sandbox.integer("tmp_mb", DEFAULT_SANDBOX.tmp_mb, 0, 1 << 24),
            limits=sandbox.string("limits", LADDER_SANDBOX.limits, LIMITS)),
    )


def _tls(remote: Reader, folder: Path) -> dict[str, Path | None]:
    """``[remote]``'s TLS files, each relative to the ladder's folder, checked to be there and to go together."""
    found: dict[str, Path | None] = {}
    for key in ("tls_cert", "tls_key", "tls_client_ca"):
        given = remote.string(key, "")
        path = folder / given if given else None
        if path is not None and not path.is_file():
            raise ConfigError(f"remote.{key} names {given!r}, which is not a file (a path is read from the ladder's "
                              "folder)")
        found[key] = path
    if (found["tls_cert"] is None) != (found["tls_key"] is None):
        raise ConfigError("remote.tls_cert and remote.tls_key go together: the gRPC port's certificate and its key")
    if found["tls_client_ca"] is not None and found["tls_cert"] is None:
        raise ConfigError("remote.tls_client_ca needs remote.tls_cert and remote.tls_key: client certificates are "
                          "asked for over TLS only")
    return found


def load_settings(folder: Path) -> LadderSettings:
    """Reads ``folder/ladder.toml``."""
    return parse_settings(read_text(folder / SETTINGS_FILE, "the ladder's settings"), folder)


def _known(data: Mapping[str, Any], where: str, allowed: set[str], what: str) -> None:
    """Refuses a key of ``data`` not in ``allowed``, with the closest known one, or the table it belongs in."""
    unknown = sorted(set(data) - allowed)
    if not unknown:
        return
    key = unknown[0]
    home = [table for table, keys in _KEYS.items() if key in keys and f"{table}." != where]
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = (f"{key} belongs in the [{home[0]}] table, not here; " if home
            else f"did you mean {close[0]!r}? " if close else "")
    raise ConfigError(f"unknown key {where + key!r} in {SETTINGS_FILE}; {hint}the {what} allowed there are: "
                      f"{', '.join(sorted(allowed))}")


def _table(data: Mapping[str, Any], name: str) -> Reader:
    """Typed access to the table ``name``, its keys checked against the ladder's own (not a tournament's)."""
    table = data.get(name, {})
    if not isinstance(table, Mapping):  # e.g. `time = 5` where a [time] table belongs
        raise ConfigError(f"{name} must be a table ([{name}]) in {SETTINGS_FILE}, not {table!r}")
    _known(table, f"{name}.", _KEYS[name], "keys")
    return Reader(table, f"{name}.", _KEYS[name])


def _rules(data: Any) -> Rules:
    if not isinstance(data, Mapping):
        raise ConfigError(f"rules must be a table ([rules]) in {SETTINGS_FILE}, not {data!r}")
    _known(data, "rules.", _KEYS["rules"], "keys")
    switches = dict(data)
    profile = switches.pop("profile", "nepali")
    try:
        return Rules.profile(str(profile)).with_switches(switches)
    except RulesError as err:
        raise ConfigError(f"[rules]: {err}") from None
