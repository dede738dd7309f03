"""The tables and keys of a configuration file, and typed access to one table with errors that name the key.

A wrong or missing key is refused with a :class:`~arena.errors.ConfigError` that names the key, what was found
and what is allowed; a key written in the wrong table is pointed to its own.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.core.rules import SWITCHES
from arena.errors import ArenaError, ConfigError
from arena.event.setup.kinds import BotKind

__all__ = [
    "BOT",
    "FAULTS",
    "FORMAT_KEYS",
    "PAGE",
    "REQUIRED",
    "SANDBOX",
    "SERVER",
    "TIME",
    "TOP",
    "TOURNAMENT",
    "Reader",
    "read_text",
    "toml_value",
]

TOP = {"tournament", "rules", "time", "faults", "server", "sandbox", "bots", "gauntlet", "head-to-head", "swiss",
       "sprt", "page"}
TOURNAMENT = {"name", "seed", "deal_sets", "deal_file", "format", "rotation", "concurrency", "fresh_process",
              "results", "forfeit", "roster", "workers", "backend", "ray_address", "seat_key"}
TIME = {"deadline_ms", "time_bank_ms", "absent_after_s", "reconnect_grace_s"}
FAULTS = {"max_retries", "disqualify_after", "unresponsive_after", "restarts", "unranked_above_fallback_pct"}
_RENAMED = {"time.connect_timeout_s": "time.absent_after_s"}
"""Keys of earlier versions: refused with the name that replaced them."""
SERVER = {"host", "port", "tls_cert", "tls_key", "tls_client_ca", "tls_client_names", "sessions_per_bot"}
SANDBOX = {"mode", "cpus", "memory_mb", "read_only", "processes", "tmp_mb", "limits"}
PAGE = {"host", "port"}
BOT = {"name", *map(str, BotKind), "token", "token_sha256", "options", "seed", "folder", "port", "start_timeout_s",
       "env"}
_TABLES = {"tournament": TOURNAMENT, "time": TIME, "faults": FAULTS, "server": SERVER, "sandbox": SANDBOX,
           "rules": set(SWITCHES) | {"profile"}, "bots": BOT}
"""Where each key belongs, to point a key written in the wrong table to its own."""
FORMAT_KEYS = {"gauntlet": {"champion"}, "head-to-head": {"a", "b", "opponents"},
               "sprt": {"a", "b", "opponents", "delta0", "delta1", "alpha", "beta", "burn_in", "method"},
               "swiss": {"opening_rounds"}}
"""The keys of each format's own table."""

REQUIRED: Any = object()
"""The default of a key that must be given."""


class Reader:
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

    def get(self, key: str, default: Any, kinds: tuple[type, ...], what: str) -> Any:
        """The value of ``key``, of one of the types ``kinds`` (``what`` says which in words)."""
        if key not in self.data:
            if default is REQUIRED:
                raise ConfigError(f"missing key {self.where}{key!r}: {what} is required")
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in kinds:
            raise ConfigError(f"{self.where}{key} must be {what}, not {value!r}")
        if not isinstance(value, kinds):
            raise ConfigError(f"{self.where}{key} must be {what}, not {value!r}")
        return value

    def integer(self, key: str, default: Any, low: int, high: int) -> int:
        value = self.get(key, default, (int,), f"a whole number from {low} to {high}")
        if not low <= value <= high:
            raise ConfigError(f"{self.where}{key} must be a whole number from {low} to {high}, not {value}")
        return int(value)

    def number(self, key: str, default: Any, low: float, high: float) -> float:
        value = self.get(key, default, (int, float), f"a number from {low} to {high}")
        if not low <= value <= high:
            raise ConfigError(f"{self.where}{key} must be a number from {low} to {high}, not {value}")
        return float(value)

    def string(self, key: str, default: Any, choices: Sequence[str] = ()) -> str:
        what = "one of: " + ", ".join(choices) if choices else "a string"
        value = self.get(key, default, (str,), what)
        if choices and value not in choices:
            raise ConfigError(f"{self.where}{key} must be one of: {', '.join(choices)}; not {value!r}")
        return str(value)

    def boolean(self, key: str, default: bool) -> bool:
        return bool(self.get(key, default, (bool,), "true or false"))


def read_text(path: Path, what: str, error: type[ArenaError] = ConfigError) -> str:
    """A file the organiser wrote, as text: ``error`` naming it (``what``, e.g. "the configuration") when it
    cannot be read or is not UTF-8, with the first bad byte and what to do."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise error(f"cannot read {what} {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise error(f"{what} {path} is not UTF-8 text (byte {err.start + 1} is {err.object[err.start]:#04x}): "
                    "save it as UTF-8") from None


def toml_value(value: object) -> str:
    """``value`` written as TOML: a string, number, boolean, list of strings, or an inline table of them."""
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)  # a JSON string, number or list of strings is TOML too
