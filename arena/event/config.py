"""Tournament configuration: a TOML file, checked whole before anything runs.

Every table and key is listed in ``docs/configuration.md``. A wrong or missing key is refused
with a :class:`~arena.errors.ConfigError` that names the key, what was found and what is allowed.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import re
import tomllib
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.core.dealing import DealFile
from arena.core.rules import SWITCHES, Rules
from arena.errors import ConfigError, DealFileError, RulesError
from arena.event.entries import COMMAND_PLACEHOLDERS, OWN_PLACEHOLDERS, check_command, is_name
from arena.event.roster import read_roster
from arena.event.sandbox import DEFAULT_SANDBOX, MODES, SandboxSettings
from arena.players.table import TableSettings
from arena.transports.grpc.tokens import is_sha256, token_sha256

__all__ = ["BOT_KINDS", "COMMAND_PLACEHOLDERS", "LAUNCHED", "OWN_PLACEHOLDERS", "BotConfig", "TournamentConfig",
           "check_command", "is_name", "load_config", "parse_config", "read_deal_file"]

FORMATS = ("round-robin", "gauntlet", "head-to-head", "swiss", "sprt")
ROTATIONS = ("cyclic", "full")
FORFEITS = ("wait", "fallback", "withdraw")
BACKENDS = ("local", "ray")
"""Where games of in-process bots are played: this machine (``workers`` processes), or a Ray cluster."""
"""What happens to the games of a bot absent past ``absent_after_s`` once nothing else can be played."""
BOT_KINDS = ("command", "python", "remote", "stdio", "bhoos", "bhoos_url")
"""The keys that say what kind of bot a ``[[bots]]`` table is; each table has exactly one of them."""
LAUNCHED = ("command", "stdio", "bhoos")
"""The kinds whose processes the arena starts itself (sandboxed and limited alike)."""
BHOOS_PORT = 7000
"""The port every bot of the Bhoos contest listens on."""
START_TIMEOUT_S = 30.0
"""``start_timeout_s``' default for ``bhoos`` and ``bhoos_url`` bots: the time to answer ``GET /hi``."""
STDIO_START_TIMEOUT_S = 5.0
"""``start_timeout_s``' default for ``stdio`` bots: the extra time of a process's first request (short, as a
bot that hangs costs it in every game)."""
PAGE_PORT = 8080
"""``[page] port``'s default: where the live page is served when the configuration has a ``[page]`` table."""
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
"""The name of a variable of a bot's ``env``: what a POSIX shell accepts, and not too long."""
ENV_LIMIT = 100
"""The most variables one bot's ``env`` may set."""
ENV_VALUE_LIMIT = 32 * 1024
"""The longest value, in characters, of a variable of a bot's ``env``."""


@dataclasses.dataclass(frozen=True)
class BotConfig:
    """One bot: launched by the arena (``command`` over gRPC, ``stdio`` over JSON lines, ``bhoos`` over
    HTTP), in-process (``python``), ``remote`` (it connects by itself), or an HTTP bot already running
    elsewhere (``bhoos_url``)."""

    name: str
    """Display name, unique in the tournament."""
    command: tuple[str, ...] = ()
    """Program and arguments; ``{address}``, ``{name}``, ``{seed}`` and ``{python}`` are filled in (the token
    goes in the environment, never on a command line)."""
    python: str = ""
    """``module:Class`` or ``path/to/file.py:Class`` of an in-process bot."""
    remote: bool = False
    """The bot connects by itself with its token."""
    token: str = ""
    """A remote bot's token as given (``token = ...``); a launched bot's is made for each run."""
    token_sha256: str = ""
    """A remote bot's token as its SHA-256 digest (``token_sha256 = ...``), in lower-case hexadecimal."""
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Keyword arguments for an in-process bot's class."""
    seed: int = 0
    """The bot's own seed (``{seed}`` in a command; ``seed=`` for an in-process class)."""
    house: bool = False
    """An unranked filler bot added to make the number of bots a multiple of four."""
    folder: Path | None = None
    """A launched bot's own folder, the one its sandbox shows it (default: the folder of the first file its
    command names); a ``stdio`` or ``bhoos`` bot also starts in it."""
    stdio: tuple[str, ...] = ()
    """Program and arguments of a bot that speaks JSON lines on its standard streams, started for each
    seat of each game; ``{name}``, ``{seed}`` and ``{python}`` are filled in."""
    bhoos: tuple[str, ...] = ()
    """Program and arguments of a Bhoos-contest HTTP bot, started for each seat of each game in a network
    namespace of its own; placeholders as for ``stdio``."""
    bhoos_url: str = ""
    """The base URL of a Bhoos-contest HTTP bot already running elsewhere (it plays one seat at a time)."""
    port: int = BHOOS_PORT
    """The port a ``bhoos`` bot listens on inside its sandbox."""
    start_timeout: float = START_TIMEOUT_S
    """Seconds a ``bhoos`` instance (or a ``bhoos_url`` bot) has to answer ``GET /hi`` before a game, or
    that a ``stdio`` process has to start, on top of the deadline of its first request."""
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Environment variables of a launched bot, set on top of the environment the arena makes for it
    (:func:`arena.event.sandbox.bot_environment`); their values may be secrets, and are never shown."""

    @property
    def kind(self) -> str:
        """One of :data:`BOT_KINDS`."""
        for kind, given in (("command", self.command), ("python", self.python), ("stdio", self.stdio),
                            ("bhoos", self.bhoos), ("bhoos_url", self.bhoos_url)):
            if given:
                return kind
        return "remote"

    @property
    def argv(self) -> tuple[str, ...]:
        """The command line of a launched bot (before its placeholders are filled in); empty for the others."""
        return self.command or self.stdio or self.bhoos

    def to_dict(self) -> dict[str, Any]:
        """The canonical form (tokens left out: the manifest must not leak secrets)."""
        out: dict[str, Any] = {
            "name": self.name, "kind": self.kind, "command": list(self.command), "python": self.python,
            "options": dict(self.options), "seed": self.seed, "house": self.house,
        }
        if self.stdio or self.bhoos:  # only the newer kinds carry these keys: older manifests compare equal
            out[self.kind] = list(self.argv)
        if self.bhoos_url:
            out["bhoos_url"] = self.bhoos_url
        if self.env:  # a change of a value is a change of the bot; the manifest holds its digest, never the value
            out["env"] = {key: "sha256:" + hashlib.sha256(value.encode()).hexdigest()
                          for key, value in sorted(self.env.items())}
        return out


@dataclasses.dataclass(frozen=True)
class TournamentConfig:
    """A whole tournament: who plays, under which rules, on which deals, in which format."""

    name: str
    seed: int
    deal_sets: int
    deal_file: Path | None
    format: str
    rotation: str
    concurrency: int
    fresh_process: bool
    rules: Rules
    table: TableSettings
    bots: tuple[BotConfig, ...]
    format_options: Mapping[str, Any]
    host: str = "127.0.0.1"
    port: int = 0
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    """The CA that signs bots' client certificates: bots must present one (mutual TLS)."""
    tls_client_names: bool = False
    """With mutual TLS, a bot's certificate must name the bot (common name or a DNS name)."""
    sessions_per_bot: int = 1
    """Live sessions (streams) one bot may hold at once."""
    forfeit: str = "wait"
    """``wait``, ``fallback`` or ``withdraw``: see :data:`FORFEITS`."""
    absent_after: float = 30.0
    """Seconds a bot may be missing before its games are postponed (a launched bot that fails to start: at once)."""
    reconnect_grace: float = 5.0
    """Seconds a seat whose bot dropped waits for it to come back before the fallback takes over."""
    disqualify_after: int = 0
    """Faulty decisions after which a bot is disqualified (0: never)."""
    unresponsive_after: int = 3
    """Requests in a row a connected bot may leave unanswered, saying nothing, before it is dropped (0: never)."""
    restarts: int = 3
    """Times a launched bot whose process ended is started again before it counts as broken."""
    sandbox: SandboxSettings = DEFAULT_SANDBOX
    """How launched bots are confined: see :mod:`arena.event.sandbox`."""
    results: Path | None = None
    source: Path | None = None
    """The file the configuration came from (not part of its identity)."""
    roster: Path | None = None
    """The class roster whose students are bots of the tournament (``tournament.roster``), if any."""
    page_host: str = "127.0.0.1"
    page_port: int | None = None
    """Where the live page is served (``[page]``; ``None``: only when asked on the command line)."""
    workers: int = 1
    """Processes that play the games of in-process bots (``arena.event.backends``); 1: the arena's own."""
    backend: str = "local"
    """``local`` (this machine) or ``ray`` (Ray tasks): see :data:`BACKENDS`."""
    ray_address: str = ""
    """The Ray cluster under ``backend = "ray"``: ``auto``, ``ray://host:port``, or empty to start one here."""

    def bot(self, name: str) -> BotConfig:
        """The bot of that name."""
        for bot in self.bots:
            if bot.name == name:
                return bot
        raise KeyError(name)

    def identity(self) -> dict[str, Any]:
        """What a results folder's records depend on besides the bots and the number of deal sets:
        a run on an existing folder must keep all of it (the rest may change between runs)."""
        return {
            "name": self.name, "seed": self.seed, "deal_file": str(self.deal_file) if self.deal_file else None,
            "format": self.format, "rotation": self.rotation, "fresh_process": self.fresh_process,
            "rules": self.rules.to_dict(),
            "time": {"deadline_ms": self.table.deadline_ms, "time_bank_ms": self.table.time_bank_ms},
            "faults": {"max_retries": self.table.max_retries, "disqualify_after": self.disqualify_after},
            "format_options": dict(self.format_options),
        }

    def to_dict(self) -> dict[str, Any]:
        """The canonical form the manifest stores: the identity, the deal sets and the bots."""
        return {
            **self.identity(), "deal_sets": self.deal_sets, "bots": [b.to_dict() for b in self.bots],
            "operations": {"forfeit": self.forfeit, "absent_after_s": self.absent_after,
                           "reconnect_grace_s": self.reconnect_grace, "unresponsive_after": self.unresponsive_after,
                           "restarts": self.restarts, "sandbox": self.sandbox.to_dict()},
        }

    def digest(self) -> str:
        """SHA-256 of the identity: what a resumed run must match."""
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()


_TOP = {"tournament", "rules", "time", "faults", "server", "sandbox", "bots", "gauntlet", "head-to-head", "swiss",
        "sprt", "page"}
_TOURNAMENT = {"name", "seed", "deal_sets", "deal_file", "format", "rotation", "concurrency", "fresh_process",
               "results", "forfeit", "roster", "workers", "backend", "ray_address"}
_TIME = {"deadline_ms", "time_bank_ms", "absent_after_s", "reconnect_grace_s"}
_FAULTS = {"max_retries", "disqualify_after", "unresponsive_after", "restarts"}
_RENAMED = {"time.connect_timeout_s": "time.absent_after_s"}
"""Keys of earlier versions: refused with the name that replaced them."""
_SERVER = {"host", "port", "tls_cert", "tls_key", "tls_client_ca", "tls_client_names", "sessions_per_bot"}
_SANDBOX = {"mode", "cpus", "memory_mb", "read_only"}
_PAGE = {"host", "port"}
_BOT = {"name", *BOT_KINDS, "token", "token_sha256", "options", "seed", "folder", "port", "start_timeout_s",
        "env"}
_TABLES = {"tournament": _TOURNAMENT, "time": _TIME, "faults": _FAULTS, "server": _SERVER, "sandbox": _SANDBOX,
           "rules": set(SWITCHES) | {"profile"}, "bots": _BOT}
"""Where each key belongs, to point a key written in the wrong table to its own."""
_FORMAT_KEYS = {"gauntlet": {"champion"}, "head-to-head": {"a", "b", "opponents"},
                "sprt": {"a", "b", "opponents", "delta0", "delta1", "alpha", "beta", "burn_in", "method"},
                "swiss": {"opening_rounds"}}


class _Reader:
    """Typed access to one TOML table, with errors that name the key."""

    def __init__(self, data: Mapping[str, Any], where: str, allowed: set[str]) -> None:
        if not isinstance(data, Mapping):  # e.g. `time = 5` where a [time] table belongs
            raise ConfigError(f"{where.rstrip('.')} must be a table ([{where.rstrip('.')}]), not {data!r}")
        unknown = sorted(set(data) - allowed)
        for key in unknown:
            if f"{where}{key}" in _RENAMED:
                raise ConfigError(f"{where}{key} is now {_RENAMED[where + key]}: rename the key")
        if unknown:
            key = unknown[0]
            home = [table for table, keys in _TABLES.items() if key in keys and f"{table}." != where]
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = (f"{key} belongs in the [{home[0]}] table, not here; " if home
                    else f"did you mean {close[0]!r}? " if close else "")
            raise ConfigError(
                f"unknown key {where}{key!r}; {hint}the keys allowed there are: {', '.join(sorted(allowed))}"
            )
        self.data = data
        self.where = where

    def _get(self, key: str, default: Any, kinds: tuple[type, ...], what: str) -> Any:
        if key not in self.data:
            if default is _REQUIRED:
                raise ConfigError(f"missing key {self.where}{key!r}: {what} is required")
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in kinds:
            raise ConfigError(f"{self.where}{key} must be {what}, not {value!r}")
        if not isinstance(value, kinds):
            raise ConfigError(f"{self.where}{key} must be {what}, not {value!r}")
        return value

    def integer(self, key: str, default: Any, low: int, high: int) -> int:
        value = self._get(key, default, (int,), f"a whole number from {low} to {high}")
        if not low <= value <= high:
            raise ConfigError(f"{self.where}{key} must be a whole number from {low} to {high}, not {value}")
        return int(value)

    def string(self, key: str, default: Any, choices: Sequence[str] = ()) -> str:
        what = "one of: " + ", ".join(choices) if choices else "a string"
        value = self._get(key, default, (str,), what)
        if choices and value not in choices:
            raise ConfigError(f"{self.where}{key} must be one of: {', '.join(choices)}; not {value!r}")
        return str(value)

    def boolean(self, key: str, default: bool) -> bool:
        return bool(self._get(key, default, (bool,), "true or false"))


_REQUIRED = object()


def parse_config(text: str, source: Path | None = None) -> TournamentConfig:
    """Reads and checks a configuration; raises :class:`ConfigError` on the first problem found."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"the configuration is not valid TOML: {err}") from None
    top = _Reader(data, "", _TOP)
    # Absolute, so the manifest locates a deal file whatever folder verify or resume runs from.
    base = source.resolve().parent if source else Path.cwd()
    t = _Reader(data.get("tournament", {}), "tournament.", _TOURNAMENT)
    name = t.string("name", source.stem if source else "tournament")
    if not is_name(name):
        raise ConfigError(f"tournament.name {name!r} must be 1-40 letters, digits, spaces or ._+#- characters")
    deal_file_text = t.string("deal_file", "")
    deal_file = (base / deal_file_text) if deal_file_text else None
    if deal_file is not None and "deal_sets" in t.data:
        raise ConfigError("give tournament.deal_sets or tournament.deal_file, not both: a deal file fixes the deals")
    fmt = t.string("format", "round-robin", FORMATS)
    rules = _rules(data.get("rules", {}))
    time = _Reader(data.get("time", {}), "time.", _TIME)
    faults = _Reader(data.get("faults", {}), "faults.", _FAULTS)
    server = _Reader(data.get("server", {}), "server.", _SERVER)
    table = TableSettings(
        deadline_ms=time.integer("deadline_ms", 2000, 0, 600_000),
        time_bank_ms=time.integer("time_bank_ms", 0, 0, 3_600_000),
        max_retries=faults.integer("max_retries", 3, 0, 100),
    )
    roster_text = t.string("roster", "")
    roster = base / roster_text if roster_text else None
    listed = top._get("bots", [] if roster else _REQUIRED, (list,), "a list of [[bots]] tables")
    bots = _bots([*listed, *(_roster_bots(roster, listed) if roster else [])], base)
    page = _Reader(data.get("page", {}), "page.", _PAGE)
    format_options = _format_options(data, fmt, bots)
    tls_cert = server.string("tls_cert", "")
    tls_key = server.string("tls_key", "")
    if bool(tls_cert) != bool(tls_key):
        raise ConfigError("server.tls_cert and server.tls_key go together: give both for TLS, or neither")
    tls_client_ca = server.string("tls_client_ca", "")
    if tls_client_ca and not tls_cert:
        raise ConfigError("server.tls_client_ca needs server.tls_cert and server.tls_key: mutual TLS is TLS in "
                          "which the bots show certificates too")
    tls_client_names = server.boolean("tls_client_names", False)
    if tls_client_names and not tls_client_ca:
        raise ConfigError("server.tls_client_names needs server.tls_client_ca: only with mutual TLS do bots show "
                          "certificates that could name them")
    results = t.string("results", "")
    return TournamentConfig(
        name=name,
        seed=t.integer("seed", 1, 0, 2**63 - 1),
        # With a deal file, the file decides how many deal sets there are (0 here: not set).
        deal_sets=0 if deal_file is not None else t.integer(
            "deal_sets", SPRT_DEAL_SETS if fmt == "sprt" else 8, 1, 10_000_000),
        deal_file=deal_file,
        format=fmt,
        rotation=t.string("rotation", "cyclic", ROTATIONS),
        concurrency=t.integer("concurrency", 4, 1, 1024),
        fresh_process=t.boolean("fresh_process", False),
        rules=rules,
        table=table,
        bots=bots,
        format_options=format_options,
        host=server.string("host", "127.0.0.1"),
        port=server.integer("port", 0, 0, 65535),
        tls_cert=base / tls_cert if tls_cert else None,
        tls_key=base / tls_key if tls_key else None,
        tls_client_ca=base / tls_client_ca if tls_client_ca else None,
        tls_client_names=tls_client_names,
        sessions_per_bot=server.integer("sessions_per_bot", 1, 1, 64),
        forfeit=t.string("forfeit", "wait", FORFEITS),
        absent_after=_number(time, "absent_after_s", 30, 0, 86_400),
        reconnect_grace=_number(time, "reconnect_grace_s", 5, 0, 3_600),
        disqualify_after=faults.integer("disqualify_after", 0, 0, 1_000_000),
        unresponsive_after=faults.integer("unresponsive_after", 3, 0, 1_000),
        restarts=faults.integer("restarts", 3, 0, 1_000),
        sandbox=_sandbox(data.get("sandbox", {}), base),
        results=base / results if results else None,
        source=source,
        roster=roster,
        page_host=page.string("host", "127.0.0.1"),
        page_port=page.integer("port", PAGE_PORT, 0, 65535) if "page" in data else None,
        workers=t.integer("workers", 1, 1, 1024),
        backend=t.string("backend", "local", BACKENDS),
        ray_address=t.string("ray_address", ""),
    )


def _rules(data: Mapping[str, Any]) -> Rules:
    if not isinstance(data, Mapping):
        raise ConfigError(f"rules must be a table ([rules]), not {data!r}")
    data = dict(data)
    profile = data.pop("profile", "nepali")
    try:
        return Rules.profile(str(profile)).with_switches(data)
    except RulesError as err:
        raise ConfigError(f"[rules]: {err}") from None


def _sandbox(data: Mapping[str, Any], base: Path) -> SandboxSettings:
    s = _Reader(data, "sandbox.", _SANDBOX)
    read_only = s._get("read_only", [], (list,), "a list of folders")
    if not all(isinstance(path, str) for path in read_only):
        raise ConfigError("sandbox.read_only must list folders as strings")
    return SandboxSettings(
        mode=s.string("mode", "auto", MODES), cpus=s.integer("cpus", 1, 0, 4096),
        memory_mb=s.integer("memory_mb", 2048, 0, 1 << 24), read_only=tuple(base / p for p in read_only),
    )


def _bots(items: list[Any], base: Path) -> tuple[BotConfig, ...]:
    bots: list[BotConfig] = []
    seen: dict[str, str] = {}
    for number, item in enumerate(items, start=1):
        where = f"bots[{number}]."
        if not isinstance(item, dict):
            raise ConfigError(f"bots[{number}] must be a table with at least a name")
        b = _Reader(item, where, _BOT)
        name = b.string("name", _REQUIRED)
        if not is_name(name):
            raise ConfigError(f"{where}name {name!r} must be 1-40 letters, digits, spaces or ._+#- characters, "
                              "beginning with a letter or a digit and not ending with a space")
        # Case aside: a bot's log file is named after it, and some file systems take Alice.log for alice.log.
        if name.casefold() in seen:
            first = seen[name.casefold()]
            also = "" if first == name else f" (as {first!r}: names differing only in case are one name)"
            raise ConfigError(f"{where}name {name!r} is used twice{also}: every bot needs its own name")
        seen[name.casefold()] = name
        command = _command_line(b, "command")
        stdio = _command_line(b, "stdio")
        bhoos = _command_line(b, "bhoos")
        python = b.string("python", "")
        remote = b.boolean("remote", False)
        bhoos_url = b.string("bhoos_url", "")
        given = {"command": bool(command), "python": bool(python), "remote": remote, "stdio": bool(stdio),
                 "bhoos": bool(bhoos), "bhoos_url": bool(bhoos_url)}
        kinds = [k for k in BOT_KINDS if given[k]]
        if len(kinds) != 1:
            raise ConfigError(
                f"bot {name!r} needs exactly one of command = \"...\" (the arena launches it), "
                f"python = \"module:Class\" (in-process), remote = true (it connects by itself), "
                f"stdio = \"...\" (JSON lines on stdin/stdout), bhoos = \"...\" (a Bhoos-contest HTTP bot the "
                f"arena starts) or bhoos_url = \"http://host:port\" (one already running); "
                f"found {', '.join(kinds) or 'none'}"
            )
        kind = kinds[0]
        if python and ":" not in python:
            raise ConfigError(f"{where}python must look like module:Class or path/to/bot.py:Class, not {python!r}")
        if kind in LAUNCHED:  # checked here, before anything listens, as the launcher will fill it in
            check_command(command or stdio or bhoos, kind, f"bot {name!r}")
        if bhoos_url:
            _check_url(bhoos_url, where)
        token, digest = _token(b, name, remote)
        options = b._get("options", {}, (dict,), "a table of keyword arguments")
        folder = b.string("folder", "")
        if folder and kind not in LAUNCHED:
            raise ConfigError(f"bot {name!r}: folder is for bots the arena launches (command, stdio or bhoos = "
                              "...); remove it")
        if "port" in b.data and kind != "bhoos":
            raise ConfigError(f"bot {name!r}: port is for bhoos bots (the port they listen on inside their "
                              "sandbox); remove it")
        if "start_timeout_s" in b.data and kind not in ("stdio", "bhoos", "bhoos_url"):
            raise ConfigError(f"bot {name!r}: start_timeout_s is for stdio, bhoos and bhoos_url bots; remove it")
        env = _environment(b, name, kind)
        bots.append(BotConfig(
            name=name, command=command, python=python, remote=remote, token=token, token_sha256=digest,
            options=options, seed=b.integer("seed", 0, 0, 2**63 - 1), folder=base / folder if folder else None,
            stdio=stdio, bhoos=bhoos, bhoos_url=bhoos_url.rstrip("/"), port=b.integer("port", BHOOS_PORT, 1, 65535),
            start_timeout=_number(b, "start_timeout_s", STDIO_START_TIMEOUT_S if stdio else START_TIMEOUT_S, 0, 3_600),
            env=env,
        ))
    if len(bots) < 2:
        raise ConfigError(f"a tournament needs at least 2 bots, found {len(bots)}")
    holders: dict[str, str] = {}
    for bot in bots:
        if bot.remote:
            digest = bot.token_sha256 or token_sha256(bot.token)
            if digest in holders:
                raise ConfigError(f"bots {holders[digest]!r} and {bot.name!r} have the same token: every bot "
                                  "needs its own (`callbreak-arena token` makes one)")
            holders[digest] = bot.name
    return tuple(bots)


def _roster_bots(path: Path, listed: Sequence[Any]) -> list[dict[str, Any]]:
    """A ``[[bots]]`` table for every student of the roster who plays (``arena.event.roster``)."""
    tables = read_roster(path).bot_tables()
    listed_names = {item["name"].casefold() for item in listed if isinstance(item, dict)
                    and isinstance(item.get("name"), str)}
    for table in tables:
        if table["name"].casefold() in listed_names:
            raise ConfigError(f"bot {table['name']!r} is both a [[bots]] table and a student of the roster {path}: "
                              "rename one of them")
    return tables


def _command_line(b: _Reader, key: str) -> tuple[str, ...]:
    """The command line under ``key`` (a string split at spaces, or a list of strings); empty if not given."""
    value = b._get(key, "", (str, list), "a command line (a string or a list of strings)")
    if isinstance(value, str):
        return tuple(value.split())
    if not all(isinstance(part, str) for part in value):
        raise ConfigError(f"{b.where}{key} must list strings only")
    return tuple(value)


def _environment(b: _Reader, name: str, kind: str) -> dict[str, str]:
    """A launched bot's ``env``: names a shell accepts, not ``CALLBREAK_*`` (the arena's own), string values
    an environment can hold. No message quotes a value: it may be a secret."""
    env = b._get("env", {}, (dict,), 'a table of environment variables, like env = { LEVEL = "3" }')
    if not env:
        return {}
    if kind not in LAUNCHED:
        raise ConfigError(f"bot {name!r}: env is for bots the arena launches (command, stdio or bhoos = ...); a "
                          f"{kind} bot's environment is not the arena's to set; remove it")
    if len(env) > ENV_LIMIT:
        raise ConfigError(f"{b.where}env sets {len(env)} variables; a bot may have {ENV_LIMIT} at most")
    for key, value in env.items():
        if not _ENV_NAME.fullmatch(key):
            raise ConfigError(f"{b.where}env: {_shown_name(key)} cannot name an environment variable: use letters, "
                              "digits and _, not beginning with a digit (128 at most)")
        if key.upper().startswith("CALLBREAK_"):
            raise ConfigError(f"{b.where}env.{key}: the arena sets the CALLBREAK_ variables itself "
                              "(CALLBREAK_LAUNCHED, and a command bot's CALLBREAK_TOKEN); choose another name")
        if not isinstance(value, str):
            raise ConfigError(f"{b.where}env.{key} must be a string (in quotes), not a "
                              f"{'table' if isinstance(value, dict) else type(value).__name__}")
        if "\0" in value:
            raise ConfigError(f"{b.where}env.{key} holds a NUL character, which no environment variable can hold")
        if len(value) > ENV_VALUE_LIMIT:
            raise ConfigError(f"{b.where}env.{key} is {len(value):,} characters long; {ENV_VALUE_LIMIT:,} at most")
    return dict(env)


def _shown_name(key: str) -> str:
    """A name from the configuration as a message quotes it: cut short, its characters escaped."""
    return repr(key[:60] + ("..." if len(key) > 60 else ""))


def _check_url(url: str, where: str) -> None:
    """Refuses a ``bhoos_url`` the arena could not send requests to."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigError(f"{where}bhoos_url must look like http://host:port (the address the bot listens on), "
                          f"not {url!r}")
    try:
        parts.port  # noqa: B018 -- a port that is not a number raises here
    except ValueError:
        raise ConfigError(f"{where}bhoos_url has a port that is not a number from 1 to 65535: {url!r}") from None


def _token(b: _Reader, name: str, remote: bool) -> tuple[str, str]:
    """A bot's ``token`` and ``token_sha256``: one of them for a remote bot, neither for any other."""
    token = b.string("token", "")
    given_digest = b.string("token_sha256", "")
    digest = given_digest.lower()
    given = "token" if token else "token_sha256" if digest else ""
    if not remote:
        if given:
            raise ConfigError(f"bot {name!r} is not remote and needs no {given}: the arena makes a fresh token "
                              "for every bot it launches, and in-process bots need none; remove the key")
        return "", ""
    if token and digest:
        raise ConfigError(f"bot {name!r}: give token or token_sha256, not both")
    if not given:
        raise ConfigError(f"bot {name!r} is remote: give it token_sha256 = \"...\" (`callbreak-arena token` "
                          "makes a token and its line) or token = \"...\" to connect with")
    if digest and not is_sha256(digest):
        raise ConfigError(f"{b.where}token_sha256 must be a SHA-256 digest, 64 hexadecimal digits "
                          f"(`callbreak-arena token` prints one), not {given_digest!r}")
    return token, digest


SPRT_DEAL_SETS = 10_000
"""``tournament.deal_sets``' default under ``sprt``: the test's cap, far above the few hundred blocks
a test usually needs, so that the default decides."""


def _format_options(data: Mapping[str, Any], fmt: str, bots: Sequence[BotConfig]) -> dict[str, Any]:
    for other in _FORMAT_KEYS:
        if other != fmt and other in data:
            raise ConfigError(f"[{other}] is given but tournament.format is {fmt!r}")
    names = {b.name for b in bots}
    if fmt not in _FORMAT_KEYS:
        if len(bots) < 4 and fmt == "round-robin":
            raise ConfigError(f"round-robin needs at least 4 bots (a table seats four), found {len(bots)}")
        return {}
    r = _Reader(data.get(fmt, {}), f"{fmt}.", _FORMAT_KEYS[fmt])

    def known(key: str, value: str) -> str:
        if value not in names:
            raise ConfigError(
                f"{fmt}.{key} names {value!r}, which is not a bot; the bots are: {', '.join(sorted(names))}"
            )
        return value

    if fmt == "gauntlet":
        champion = known("champion", r.string("champion", _REQUIRED))
        if len(bots) < 4:
            raise ConfigError(f"a gauntlet needs the champion and at least 3 other bots, found {len(bots) - 1}")
        return {"champion": champion}
    if fmt in ("head-to-head", "sprt"):
        a = known("a", r.string("a", _REQUIRED))
        b = known("b", r.string("b", _REQUIRED))
        if a == b:
            raise ConfigError(f"{fmt}.a and {fmt}.b must be two different bots")
        opponents = r._get("opponents", [], (list,), "a list of bot names")
        for opponent in opponents:
            known("opponents", str(opponent))
        if opponents and len(opponents) < 2:
            raise ConfigError(f"{fmt}.opponents needs at least two bots (or none, to play two copies of each)")
        if a in opponents or b in opponents:
            raise ConfigError(f"{fmt}.opponents must not include a or b")
        single = [n for n in (a, b) if not opponents and next(x for x in bots if x.name == n).kind in (
            "remote", "bhoos_url")]
        if single:  # a copy would need a second connection under the same token, or a second seat at one URL
            kind = next(x for x in bots if x.name == single[0]).kind
            raise ConfigError(f"{fmt} without opponents plays two copies of a and b, and {single[0]!r} is "
                              f"{'remote' if kind == 'remote' else 'a bhoos_url bot'}: such a bot cannot be "
                              f"copied; give {fmt}.opponents")
        twice = sorted({str(o) for o in opponents if opponents.count(o) > 1})
        if twice:  # a block draws two opponents: the same bot must not take both seats
            raise ConfigError(f"{fmt}.opponents names {twice[0]!r} twice")
        options: dict[str, Any] = {"a": a, "b": b, "opponents": [str(o) for o in opponents]}
        if fmt == "sprt":
            tournament = data.get("tournament", {})
            options.update(_sprt_options(r, tournament if isinstance(tournament, Mapping) else {}))
        return options
    opening = r.integer("opening_rounds", 2, 1, 10_000)
    if len(bots) < 4:
        raise ConfigError(f"swiss needs at least 4 bots, found {len(bots)}")
    return {"opening_rounds": opening}


def _number(r: _Reader, key: str, default: Any, low: float, high: float) -> float:
    value = r._get(key, default, (int, float), f"a number from {low} to {high}")
    if not low <= value <= high:
        raise ConfigError(f"{r.where}{key} must be a number from {low} to {high}, not {value}")
    return float(value)


def _sprt_options(r: _Reader, tournament: Mapping[str, Any]) -> dict[str, Any]:
    # Deltas are given in points per game (as people read scores); the live judge turns them into tenths.
    delta0 = _number(r, "delta0", 0.0, -1000.0, 1000.0)
    delta1 = _number(r, "delta1", _REQUIRED, -1000.0, 1000.0)
    if delta1 == delta0:
        raise ConfigError("sprt.delta1 must differ from sprt.delta0: the test decides between the two")
    burn_in = r.integer("burn_in", 30, 10, 100_000)
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
    return {
        "delta0": delta0, "delta1": delta1,
        "alpha": _number(r, "alpha", 0.05, 0.0001, 0.5), "beta": _number(r, "beta", 0.05, 0.0001, 0.5),
        "burn_in": burn_in,
        "method": r.string("method", "el", ("el", "alt", "alt2")),
    }


def read_deal_file(path: Path) -> DealFile:
    """Reads a deal file from disk (the format is in docs/dealing.md)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise DealFileError(f"cannot read deal file {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise DealFileError(f"deal file {path} is not UTF-8 text (byte {err.start + 1} is "
                            f"{err.object[err.start]:#04x}): save it as UTF-8") from None
    return DealFile.parse(text, str(path))


def load_config(path: Path) -> TournamentConfig:
    """Reads a configuration file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot read the configuration {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"the configuration {path} is not UTF-8 text (byte {err.start + 1} is "
                          f"{err.object[err.start]:#04x}): save it as UTF-8") from None
    return parse_config(text, path)
