"""A bot of the configuration: the fields every bot has, and one frozen value per kind, read from a ``[[bots]]``
table.

A :class:`BotConfig` holds what any bot has (name, seed, options) and, in :attr:`BotConfig.setup`, what its kind
alone has: :class:`PythonBot`, :class:`CommandBot`, :class:`StdioBot`, :class:`BhoosBot`, :class:`BhoosUrlBot` or
:class:`RemoteBot` (:data:`SETUPS`). How a bot of each kind plays (seated, launched, served, placed, checked) is
its kind's class in :mod:`arena.event.play.kinds`; what differs here is what its table holds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, get_args

from arena.core.words import listed
from arena.errors import ConfigError
from arena.event.setup.entries import check_command, is_name
from arena.event.setup.kinds import BotKind
from arena.event.setup.roster import read_roster
from arena.event.setup.tables import BOT, REQUIRED, Reader
from arena.transports.grpc.tokens import is_sha256, token_sha256

__all__ = ["BHOOS_PORT", "LAUNCHED", "SETUPS", "START_TIMEOUT_S", "STDIO_START_TIMEOUT_S", "BhoosBot", "BhoosUrlBot",
           "BotConfig", "BotSetup", "CommandBot", "LaunchedBot", "PythonBot", "RemoteBot", "StdioBot", "read_bots"]

BHOOS_PORT = 7000
"""The port every bot of the Bhoos contest listens on."""
START_TIMEOUT_S = 30.0
"""``start_timeout_s``' default for ``bhoos`` and ``bhoos_url`` bots: the time to answer ``GET /hi``."""
STDIO_START_TIMEOUT_S = 5.0
"""``start_timeout_s``' default for ``stdio`` bots: the extra time of a process's first request (short, as a
bot that hangs costs it in every game)."""
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
"""The name of a variable of a bot's ``env``: what a POSIX shell accepts, and not too long."""
ENV_LIMIT = 100
"""The most variables one bot's ``env`` may set."""
ENV_VALUE_LIMIT = 32 * 1024
"""The longest value, in characters, of a variable of a bot's ``env``."""


@dataclasses.dataclass(frozen=True)
class PythonBot:
    """An in-process bot."""

    kind: ClassVar[BotKind] = BotKind.PYTHON
    spec: str
    """``module:Class`` or ``path/to/file.py:Class``."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class LaunchedBot:
    """What the bots the arena launches share: a command line, a folder and an environment."""

    kind: ClassVar[BotKind]
    connects: ClassVar[bool] = False
    """Its process connects to the arena over gRPC: its command is given ``{address}``, its environment its
    token, its sandbox the arena's socket, and it starts in the arena's folder (a bot that does not starts in its
    own)."""
    argv: tuple[str, ...]
    """Program and arguments; their placeholders (:mod:`arena.event.setup.entries`) are filled in at launch."""
    folder: Path | None = None
    """The bot's own folder, the one its sandbox shows it (default: the folder of the first file its command
    names); a ``stdio`` or ``bhoos`` bot also starts in it."""
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Environment variables set on top of the environment the arena makes for it
    (:func:`arena.event.launch.sandbox.bot_environment`); their values may be secrets, and are never shown."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class CommandBot(LaunchedBot):
    """A program the arena launches, which connects over gRPC; ``{address}`` is filled in too (the token goes
    in the environment, never on a command line)."""

    kind: ClassVar[BotKind] = BotKind.COMMAND
    connects: ClassVar[bool] = True
    token: str = ""
    """The token made for the run (empty until then)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class StdioBot(LaunchedBot):
    """A program that speaks JSON lines on its standard streams, started for each seat of each game."""

    kind: ClassVar[BotKind] = BotKind.STDIO
    start_timeout: float = STDIO_START_TIMEOUT_S
    """Seconds a process has to start, on top of the deadline of its first request."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class BhoosBot(LaunchedBot):
    """A Bhoos-contest HTTP bot, started for each seat of each game in a network namespace of its own."""

    kind: ClassVar[BotKind] = BotKind.BHOOS
    port: int = BHOOS_PORT
    """The port it listens on inside its sandbox."""
    start_timeout: float = START_TIMEOUT_S
    """Seconds an instance has to answer ``GET /hi`` before a game."""


@dataclasses.dataclass(frozen=True)
class BhoosUrlBot:
    """A Bhoos-contest HTTP bot already running elsewhere (it plays one seat at a time)."""

    kind: ClassVar[BotKind] = BotKind.BHOOS_URL
    url: str
    """Its base URL, without a final ``/``."""
    start_timeout: float = START_TIMEOUT_S
    """Seconds it has to answer ``GET /hi`` before a game."""


@dataclasses.dataclass(frozen=True)
class RemoteBot:
    """A bot that connects by itself with its token."""

    kind: ClassVar[BotKind] = BotKind.REMOTE
    token: str = ""
    """Its token as given (``token = ...``)."""
    token_sha256: str = ""
    """Its token as its SHA-256 digest (``token_sha256 = ...``), in lower-case hexadecimal."""

    @property
    def digest(self) -> str:
        """The digest of its token, however it was given: what the server keeps."""
        return self.token_sha256 or token_sha256(self.token)


BotSetup = PythonBot | CommandBot | StdioBot | BhoosBot | BhoosUrlBot | RemoteBot
"""What one kind of bot alone has."""
SETUPS: tuple[type[BotSetup], ...] = get_args(BotSetup)
"""Each kind's setup, as :data:`BotSetup` names them."""
LAUNCHED = tuple(setup.kind for setup in SETUPS if issubclass(setup, LaunchedBot))
"""The kinds whose processes the arena starts itself (sandboxed and limited alike)."""


@dataclasses.dataclass(frozen=True)
class BotConfig:
    """One bot: launched by the arena (``command`` over gRPC, ``stdio`` over JSON lines, ``bhoos`` over
    HTTP), in-process (``python``), ``remote`` (it connects by itself), or an HTTP bot already running
    elsewhere (``bhoos_url``)."""

    name: str
    """Display name, unique in the tournament."""
    setup: BotSetup
    """What its kind alone has."""
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Keyword arguments for an in-process bot's class."""
    seed: int = 0
    """The bot's own seed (``{seed}`` in a command; ``seed=`` for an in-process class)."""
    house: bool = False
    """An unranked filler bot added to make the number of bots a multiple of four."""

    @property
    def kind(self) -> BotKind:
        return self.setup.kind

    def to_dict(self) -> dict[str, Any]:
        """The canonical form (tokens left out: the manifest must not leak secrets)."""
        setup = self.setup
        out: dict[str, Any] = {
            "name": self.name, "kind": self.kind,
            "command": list(setup.argv) if isinstance(setup, CommandBot) else [],
            "python": setup.spec if isinstance(setup, PythonBot) else "",
            "options": dict(self.options), "seed": self.seed, "house": self.house,
        }
        match setup:
            case StdioBot() | BhoosBot():  # only the newer kinds carry these keys: older manifests compare equal
                out[self.kind] = list(setup.argv)
            case BhoosUrlBot():
                out["bhoos_url"] = setup.url
        if isinstance(setup, LaunchedBot) and setup.env:
            # A change of a value is a change of the bot; the manifest holds its digest, never the value.
            out["env"] = {key: "sha256:" + hashlib.sha256(value.encode()).hexdigest()
                          for key, value in sorted(setup.env.items())}
        return out


def read_bots(items: list[Any], base: Path) -> tuple[BotConfig, ...]:
    """The bots of ``[[bots]]`` tables (``base``: the folder their paths are relative to), checked."""
    bots: list[BotConfig] = []
    seen: dict[str, str] = {}
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise ConfigError(f"bots[{number}] must be a table with at least a name")
        bots.append(_bot(Reader(item, f"bots[{number}].", BOT), base, seen))
    if len(bots) < 2:
        raise ConfigError(f"a tournament needs at least 2 bots, found {len(bots)}")
    holders: dict[str, str] = {}
    for bot in bots:
        if isinstance(bot.setup, RemoteBot):
            digest = bot.setup.digest
            if digest in holders:
                raise ConfigError(f"bots {holders[digest]!r} and {bot.name!r} have the same token: every bot "
                                  "needs its own (`callbreak-arena token` makes one)")
            holders[digest] = bot.name
    return tuple(bots)


def _bot(b: Reader, base: Path, seen: dict[str, str]) -> BotConfig:
    """One ``[[bots]]`` table; ``seen`` holds the names so far, by their case-folded form."""
    where = b.where
    name = b.string("name", REQUIRED)
    if not is_name(name):
        raise ConfigError(f"{where}name {name!r} must be 1-40 letters, digits, spaces or ._+#- characters, "
                          "beginning with a letter or a digit and not ending with a space")
    # Case aside: a bot's log file is named after it, and some file systems take Alice.log for alice.log.
    if name.casefold() in seen:
        first = seen[name.casefold()]
        also = "" if first == name else f" (as {first!r}: names differing only in case are one name)"
        raise ConfigError(f"{where}name {name!r} is used twice{also}: every bot needs its own name")
    seen[name.casefold()] = name
    argv = {kind: _command_line(b, kind) for kind in LAUNCHED}
    python = b.string("python", "")
    remote = b.boolean("remote", False)
    bhoos_url = b.string("bhoos_url", "")
    given = {BotKind.PYTHON: bool(python), BotKind.REMOTE: remote, BotKind.BHOOS_URL: bool(bhoos_url),
             **{kind: bool(line) for kind, line in argv.items()}}
    kinds = [k for k in BotKind if given[k]]
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
        check_command(argv[kind], kind, f"bot {name!r}")
    if bhoos_url:
        _check_url(bhoos_url, where)
    token, digest = _token(b, name, remote)
    options = b.get("options", {}, (dict,), "a table of keyword arguments")
    folder_text = b.string("folder", "")
    if folder_text and kind not in LAUNCHED:
        raise ConfigError(f"bot {name!r}: folder is for bots the arena launches (command, stdio or bhoos = "
                          "...); remove it")
    defaults = _DEFAULTS[kind]
    if "port" in b.data and "port" not in defaults:
        raise ConfigError(f"bot {name!r}: port is for {_having('port')} bots (the port they listen on inside their "
                          "sandbox); remove it")
    if "start_timeout_s" in b.data and "start_timeout" not in defaults:
        raise ConfigError(f"bot {name!r}: start_timeout_s is for {_having('start_timeout')} bots; remove it")
    env = _environment(b, name, kind)
    seed = b.integer("seed", 0, 0, 2**63 - 1)
    folder = base / folder_text if folder_text else None
    port = b.integer("port", BHOOS_PORT, 1, 65535)
    start_timeout = b.number("start_timeout_s", defaults.get("start_timeout", START_TIMEOUT_S), 0, 3_600)
    setup: BotSetup
    match kind:
        case BotKind.PYTHON:
            setup = PythonBot(python)
        case BotKind.REMOTE:
            setup = RemoteBot(token, digest)
        case BotKind.BHOOS_URL:
            setup = BhoosUrlBot(bhoos_url.rstrip("/"), start_timeout)
        case BotKind.COMMAND:
            setup = CommandBot(argv=argv[kind], folder=folder, env=env)
        case BotKind.STDIO:
            setup = StdioBot(argv=argv[kind], folder=folder, env=env, start_timeout=start_timeout)
        case BotKind.BHOOS:
            setup = BhoosBot(argv=argv[kind], folder=folder, env=env, port=port, start_timeout=start_timeout)
    return BotConfig(name=name, setup=setup, options=options, seed=seed)


def _defaults(setup: type[BotSetup]) -> dict[str, Any]:
    """The fields of a kind's setup that have a default value (not a factory), and their defaults."""
    return {field.name: field.default for field in dataclasses.fields(setup)
            if field.default is not dataclasses.MISSING}


_DEFAULTS = {setup.kind: _defaults(setup) for setup in SETUPS}
"""By kind: :func:`_defaults` of its setup."""


def _having(field: str) -> str:
    """The kinds whose setup has ``field``, in words: ``stdio, bhoos and bhoos_url``."""
    return listed([kind for kind, defaults in _DEFAULTS.items() if field in defaults])


def roster_bots(path: Path, listed: Sequence[Any]) -> list[dict[str, Any]]:
    """A ``[[bots]]`` table for every student of the roster who plays (``arena.event.setup.roster``)."""
    tables = read_roster(path).bot_tables()
    listed_names = {item["name"].casefold() for item in listed if isinstance(item, dict)
                    and isinstance(item.get("name"), str)}
    for table in tables:
        if table["name"].casefold() in listed_names:
            raise ConfigError(f"bot {table['name']!r} is both a [[bots]] table and a student of the roster {path}: "
                              "rename one of them")
    return tables


def _command_line(b: Reader, key: str) -> tuple[str, ...]:
    """The command line under ``key`` (a string split at spaces, or a list of strings); empty if not given."""
    value = b.get(key, "", (str, list), "a command line (a string or a list of strings)")
    if isinstance(value, str):
        return tuple(value.split())
    if not all(isinstance(part, str) for part in value):
        raise ConfigError(f"{b.where}{key} must list strings only")
    return tuple(value)


def _environment(b: Reader, name: str, kind: BotKind) -> dict[str, str]:
    """A launched bot's ``env``: names a shell accepts, not ``CALLBREAK_*`` (the arena's own), string values
    an environment can hold. No message quotes a value: it may be a secret."""
    env = b.get("env", {}, (dict,), 'a table of environment variables, like env = { LEVEL = "3" }')
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


def _token(b: Reader, name: str, remote: bool) -> tuple[str, str]:
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
