"""What every command shares: the exit statuses, the usage error, a parser that exits 2, one line to stderr.

The command modules import at their top only what building the parser needs (the standard library, this
module, the rules core, the exception tree and the light modules that hold a default their help shows); the
modules a command works with are imported by the function that runs it. So ``callbreak-arena --help`` or
``rules legal`` never import the ladder's database, the web servers or gRPC (``tests/test_cli_imports.py``;
``benchmarks/cli_startup.py`` measures what a command costs).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from arena.core.rules import PROFILES, SWITCHES, Rules
from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.records.store import ResultsStore

_T = TypeVar("_T")

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_OUTSTANDING = 3
EXIT_INTERRUPTED = 130
"""Stopped by Ctrl-C (SIGINT), as shells report it: 128 + 2."""
EXIT_TERMINATED = 143
"""Stopped by SIGTERM, as shells report it: 128 + 15."""

STOPPED_BY = {"Ctrl-C": EXIT_INTERRUPTED, "SIGTERM": EXIT_TERMINATED}
"""What may stop a command that :func:`stoppable` runs, and the exit status it then ends with."""

FORMATS = ("table", "markdown", "json", "csv")
"""The ways a command prints standings (``--format``)."""


class UsageError(ArenaError):
    """Bad input on the command line: printed on one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser that prints its usage and exits with :data:`EXIT_USAGE` on bad arguments."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def say(text: str) -> None:
    """Tells the person at the terminal ``text``, on one line of stderr, at once."""
    print(f"callbreak-arena: {text}", file=sys.stderr, flush=True)


def add_rules_options(parser: argparse.ArgumentParser) -> None:
    """Adds ``--profile`` and ``--set``, which :func:`rules_of` reads."""
    parser.add_argument(
        "--profile", default="nepali", metavar="P",
        help=f"rules profile: {', '.join(PROFILES)} (default: nepali)",
    )
    parser.add_argument(
        "--set", dest="switches", action="append", default=[], metavar="KEY=VALUE",
        help=f"change one rules switch, repeatable; switches: {', '.join(SWITCHES)}",
    )


def rules_of(args: argparse.Namespace) -> Rules:
    """The rules that ``--profile`` and ``--set`` name."""
    return Rules.profile(args.profile).with_text_switches(args.switches)


def results_store(folder: Path) -> ResultsStore:
    """The store of a results folder; :class:`UsageError` when ``folder`` is not one."""
    from arena.records.store import ResultsStore

    store = ResultsStore(folder)
    if store.manifest() is None:
        raise UsageError(f"{folder} is not a results folder (it has no manifest.json)")
    return store


def stoppable(main: Coroutine[Any, Any, _T]) -> tuple[_T | None, str]:
    """Runs ``main`` on an event loop of its own, as ``asyncio.run`` does, where a SIGTERM (kill, a service
    manager's stop) stops it as Ctrl-C does: its task is cancelled, so the bots it launched are stopped and its
    temporary folders removed. Returns what ``main`` returned (``None`` when it ended by the cancel) and what
    stopped it: ``""`` (nothing), or a key of :data:`STOPPED_BY`."""
    import asyncio
    import signal

    stopped_by = [""]

    async def guarded() -> _T:
        # Raising from a signal handler instead (into whatever coroutine happened to run) crashed the interpreter
        # now and then: the handler cancels the task, and the task ends as it does on Ctrl-C.
        task = asyncio.current_task()
        assert task is not None

        def terminated() -> None:
            stopped_by[0] = "SIGTERM"
            task.cancel()

        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, terminated)
        return await main

    try:
        return asyncio.run(guarded()), stopped_by[0]
    except (KeyboardInterrupt, asyncio.CancelledError):
        return None, stopped_by[0] or "Ctrl-C"
