"""Tournament configuration: a TOML file, checked whole before anything runs.

Every table and key is listed in ``docs/configuration.md``. A wrong or missing key is refused
with a :class:`~arena.errors.ConfigError` that names the key, what was found and what is allowed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.core.dealing import SEAT_KEY_BYTES, DealFile
from arena.core.rules import Rules
from arena.errors import ConfigError, DealFileError, RulesError
from arena.event.setup.botconfig import BotConfig, read_bots, roster_bots
from arena.event.setup.defaults import PAGE_PORT
from arena.event.setup.entries import is_name
from arena.event.setup.formats import SPRT_DEAL_SETS, FormatOptions, read_format_options
from arena.event.setup.kinds import Backend, BotKind, Forfeit, Format, Rotation
from arena.event.setup.sandboxing import DEFAULT_SANDBOX, LIMITS, MODES, SandboxSettings
from arena.event.setup.tables import FAULTS, PAGE, REQUIRED, SANDBOX, SERVER, TIME, TOP, TOURNAMENT, Reader, read_text
from arena.players.table import TableSettings

__all__ = ["GUESSABLE_SEED", "PAGE_PORT", "UNRANKED_ABOVE_FALLBACK_PCT", "TournamentConfig", "fallback_limit",
           "load_config", "parse_config", "read_deal_file"]

GUESSABLE_SEED = 2**32
"""Seeds below this, where the numbers people type fall, an entrant could find by trying them (the deal
algorithm is public and a bot knows its own hand), and then know every hand."""
UNRANKED_ABOVE_FALLBACK_PCT = 50.0
"""``faults.unranked_above_fallback_pct``'s default: a bot the fallback player made more than half of the decisions
for is listed apart from the ranking, as its results are the fallback player's (which can beat a working bot's), not
its own (a student who never connected, under ``forfeit = "fallback"``, or a bot none of whose cards was legal)."""


@dataclasses.dataclass(frozen=True)
class TournamentConfig:
    """A whole tournament: who plays, under which rules, on which deals, in which format."""

    name: str
    seed: int
    deal_sets: int
    deal_file: Path | None
    format: Format
    rotation: Rotation
    concurrency: int
    fresh_process: bool
    """Every game of a launched ``command`` bot is a new process (the default): every format replays each deal
    set in several rotations, and a bot kept from one rotation to the next could remember the hands."""
    rules: Rules
    table: TableSettings
    bots: tuple[BotConfig, ...]
    format_options: FormatOptions
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
    forfeit: Forfeit = Forfeit.WAIT
    """What happens to the games of a bot absent past ``absent_after_s``."""
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
    unranked_above_fallback_pct: float = UNRANKED_ABOVE_FALLBACK_PCT
    """A bot the fallback player made more than this share (in %) of the decisions for is not ranked (100: every bot
    with a game is); read by the standings alone, so it may change between runs of a folder."""
    sandbox: SandboxSettings = DEFAULT_SANDBOX
    """How launched bots are confined: see :mod:`arena.event.launch.sandbox`."""
    results: Path | None = None
    source: Path | None = None
    """The file the configuration came from (not part of its identity)."""
    roster: Path | None = None
    """The class roster whose students are bots of the tournament (``tournament.roster``), if any."""
    page_host: str = "127.0.0.1"
    page_port: int | None = None
    """Where the live page is served (``[page]``; ``None``: only when asked on the command line)."""
    workers: int = 1
    """Processes that play the games of in-process bots (``arena.event.play.backends``); 1: the arena's own."""
    backend: Backend = Backend.LOCAL
    """Where the games of in-process bots are played."""
    ray_address: str = ""
    """The Ray cluster under ``backend = "ray"``: ``auto``, ``ray://host:port``, or empty to start one here."""
    seat_key: bytes | None = dataclasses.field(default=None, repr=False)
    """The key of the seat seeds fixed by ``tournament.seat_key`` (``None``: a random one, kept in the results
    folder); not part of the identity, and never in the manifest."""

    def bot(self, name: str) -> BotConfig:
        """The bot of that name."""
        for bot in self.bots:
            if bot.name == name:
                return bot
        raise KeyError(name)

    def guessable_seed(self) -> bool:
        """True when the deals come from a seed below :data:`GUESSABLE_SEED` and a bot plays outside the arena's
        process (launched, remote, or a Bhoos bot elsewhere), where no one sees what it computes."""
        return (self.deal_file is None and self.seed < GUESSABLE_SEED
                and any(bot.kind != BotKind.PYTHON for bot in self.bots))

    def identity(self) -> dict[str, Any]:
        """What a results folder's records depend on besides the bots and the number of deal sets:
        a run on an existing folder must keep all of it (the rest may change between runs)."""
        return {
            "name": self.name, "seed": self.seed, "deal_file": str(self.deal_file) if self.deal_file else None,
            "format": self.format, "rotation": self.rotation, "fresh_process": self.fresh_process,
            "rules": self.rules.to_dict(),
            "time": {"deadline_ms": self.table.deadline_ms, "time_bank_ms": self.table.time_bank_ms},
            "faults": {"max_retries": self.table.max_retries, "disqualify_after": self.disqualify_after},
            "format_options": self.format_options.to_dict(),
        }

    def to_dict(self) -> dict[str, Any]:
        """The canonical form the manifest stores: the identity, the deal sets and the bots."""
        return {
            **self.identity(), "deal_sets": self.deal_sets, "bots": [b.to_dict() for b in self.bots],
            "operations": {"forfeit": self.forfeit, "absent_after_s": self.absent_after,
                           "reconnect_grace_s": self.reconnect_grace, "unresponsive_after": self.unresponsive_after,
                           "restarts": self.restarts, "sandbox": self.sandbox.to_dict(),
                           "unranked_above_fallback_pct": self.unranked_above_fallback_pct},
        }

    def digest(self) -> str:
        """SHA-256 of the identity: what a resumed run must match."""
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()


def parse_config(text: str, source: Path | None = None) -> TournamentConfig:
    """Reads and checks a configuration; raises :class:`ConfigError` on the first problem found."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"the configuration is not valid TOML: {err}") from None
    top = Reader(data, "", TOP)
    # Absolute, so the manifest locates a deal file whatever folder verify or resume runs from.
    base = source.resolve().parent if source else Path.cwd()
    t = Reader(data.get("tournament", {}), "tournament.", TOURNAMENT)
    name = t.string("name", source.stem if source else "tournament")
    if not is_name(name):
        raise ConfigError(f"tournament.name {name!r} must be 1-40 letters, digits, spaces or ._+#- characters")
    deal_file_text = t.string("deal_file", "")
    deal_file = (base / deal_file_text) if deal_file_text else None
    if deal_file is not None and "deal_sets" in t.data:
        raise ConfigError("give tournament.deal_sets or tournament.deal_file, not both: a deal file fixes the deals")
    fmt = Format(t.string("format", Format.ROUND_ROBIN, tuple(Format)))
    rules = _rules(data.get("rules", {}))
    time = Reader(data.get("time", {}), "time.", TIME)
    faults = Reader(data.get("faults", {}), "faults.", FAULTS)
    server = Reader(data.get("server", {}), "server.", SERVER)
    table = TableSettings(
        deadline_ms=time.integer("deadline_ms", 2000, 0, 600_000),
        time_bank_ms=time.integer("time_bank_ms", 0, 0, 3_600_000),
        max_retries=faults.integer("max_retries", 3, 0, 100),
    )
    roster_text = t.string("roster", "")
    roster = base / roster_text if roster_text else None
    listed = top.get("bots", [] if roster else REQUIRED, (list,), "a list of [[bots]] tables")
    bots = read_bots([*listed, *(roster_bots(roster, listed) if roster else [])], base)
    page = Reader(data.get("page", {}), "page.", PAGE)
    rotation = Rotation(t.string("rotation", Rotation.CYCLIC, tuple(Rotation)))
    format_options = read_format_options(data, fmt, bots, rotation)
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
            "deal_sets", SPRT_DEAL_SETS if fmt == Format.SPRT else 8, 1, 10_000_000),
        deal_file=deal_file,
        format=fmt,
        rotation=rotation,
        concurrency=t.integer("concurrency", 4, 1, 1024),
        fresh_process=t.boolean("fresh_process", True),
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
        forfeit=Forfeit(t.string("forfeit", Forfeit.WAIT, tuple(Forfeit))),
        absent_after=time.number("absent_after_s", 30, 0, 86_400),
        reconnect_grace=time.number("reconnect_grace_s", 5, 0, 3_600),
        disqualify_after=faults.integer("disqualify_after", 0, 0, 1_000_000),
        unresponsive_after=faults.integer("unresponsive_after", 3, 0, 1_000),
        restarts=faults.integer("restarts", 3, 0, 1_000),
        unranked_above_fallback_pct=faults.number("unranked_above_fallback_pct", UNRANKED_ABOVE_FALLBACK_PCT, 0, 100),
        sandbox=_sandbox(data.get("sandbox", {}), base),
        results=base / results if results else None,
        source=source,
        roster=roster,
        page_host=page.string("host", "127.0.0.1"),
        page_port=page.integer("port", PAGE_PORT, 0, 65535) if "page" in data else None,
        workers=t.integer("workers", 1, 1, 1024),
        backend=Backend(t.string("backend", Backend.LOCAL, tuple(Backend))),
        ray_address=t.string("ray_address", ""),
        seat_key=_seat_key(t.string("seat_key", "")),
    )


def _seat_key(text: str) -> bytes | None:
    """``tournament.seat_key``: 64 hexadecimal digits, or ``None`` when not given."""
    if not text:
        return None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != SEAT_KEY_BYTES or len(text) != 2 * SEAT_KEY_BYTES:
        raise ConfigError(
            f"tournament.seat_key must be {2 * SEAT_KEY_BYTES} hexadecimal digits (a {SEAT_KEY_BYTES}-byte key), "
            f"not a text of {len(text)} characters; make one with: "
            "python -c \"import secrets; print(secrets.token_hex(32))\", or leave the key out for a random one"
        )
    return key


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
    s = Reader(data, "sandbox.", SANDBOX)
    read_only = s.get("read_only", [], (list,), "a list of folders")
    if not all(isinstance(path, str) for path in read_only):
        raise ConfigError("sandbox.read_only must list folders as strings")
    return SandboxSettings(
        mode=s.string("mode", "auto", MODES), cpus=s.integer("cpus", 1, 0, 4096),
        memory_mb=s.integer("memory_mb", 2048, 0, 1 << 24), read_only=tuple(base / p for p in read_only),
        processes=s.integer("processes", DEFAULT_SANDBOX.processes, 0, 1 << 22),
        tmp_mb=s.integer("tmp_mb", DEFAULT_SANDBOX.tmp_mb, 0, 1 << 24), limits=s.string("limits", "warn", LIMITS),
    )


def fallback_limit(stored: Mapping[str, Any]) -> float:
    """``faults.unranked_above_fallback_pct`` of a configuration as a manifest stores it
    (:meth:`TournamentConfig.to_dict`); the default for a folder written before the key, or one whose value is not a
    share."""
    operations = stored.get("operations")
    value = operations.get("unranked_above_fallback_pct") if isinstance(operations, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
        return UNRANKED_ABOVE_FALLBACK_PCT
    return float(value)


def read_deal_file(path: Path) -> DealFile:
    """Reads a deal file from disk (the format is in docs/dealing.md)."""
    return DealFile.parse(read_text(path, "deal file", DealFileError), str(path))


def load_config(path: Path) -> TournamentConfig:
    """Reads a configuration file."""
    return parse_config(read_text(path, "the configuration"), path)
