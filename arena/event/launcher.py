"""Bot processes the arena starts itself: ``command`` bots.

Each launched bot runs in a process group of its own, with its standard error in
``logs/<bot>.log`` and its standard input a pipe the arena holds open for as long as it runs: a bot
learns that the arena has ended, even by ``kill -9``, when that pipe reaches end-of-file. On Linux
the kernel also kills it when the arena dies (``PR_SET_PDEATHSIG``), so even a process that never
reads its standard input, or dies before it begins to, does not outlive the arena. The bot
is told that it was launched by the environment variable ``CALLBREAK_LAUNCHED=1``, and gets its
token in ``CALLBREAK_TOKEN``, never on its command line, where every local user could read it
(``ps``, ``/proc``). The token is fresh: made for the run of a long-lived bot (its restarts keep
it), or for the one game of a process launched per game, and forgotten when that game ends.

Where bubblewrap runs, each process starts in the sandbox of :mod:`arena.event.sandbox` and reaches
the arena through a Unix socket; every launched process, sandboxed or not, runs under the limits of
the ``[sandbox]`` table (address space, CPUs).

A process that ends before its bot ever connected *failed to start*: the bot is broken at once
(its games wait under the tournament's absence policy). A process that ends after its bot
connected is started again, up to ``restarts`` times; after that the bot is broken too. With
``fresh_process`` every game starts processes of its own, and a launch that fails counts against
the same budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from arena.errors import ConfigError
from arena.event.config import BotConfig
from arena.event.sandbox import INSIDE_SOCKET, UNCONFINED, SandboxSettings, own_folder, sandboxed
from arena.net.remote import Session
from arena.net.tokens import new_token

__all__ = ["LaunchFailed", "Launcher"]

PLACEHOLDERS = "{address}, {name}, {seed} and {python}"


_LIMITED = """\
import ctypes, os, resource, signal, sys
arena, memory, cpus = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if sys.platform.startswith("linux"):
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG, kept through exec
    if os.getppid() != arena:
        os._exit(0)  # the arena died before the request: no signal would come
    if cpus:
        os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})
if memory:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
try:
    os.execvp(sys.argv[4], sys.argv[4:])
except OSError as err:
    print(f"cannot start {sys.argv[4]}: {err.strerror}", file=sys.stderr)
    os._exit(127)
"""


def _limited(argv: list[str], memory_mb: int, cpus: Sequence[int]) -> list[str]:
    """``argv`` started through a short step that sets its limits (address space, CPUs) and, on
    Linux, has the kernel kill it when the arena dies. A step of its own rather than ``preexec_fn``:
    that makes :mod:`subprocess` fork the whole arena, gRPC threads and all, where it otherwise uses vfork."""
    return [sys.executable, "-I", "-S", "-c", _LIMITED, str(os.getpid()), str(memory_mb * 2**20),
            ",".join(map(str, cpus)), *argv]


class LaunchFailed(Exception):
    """A process started for one game did not connect."""


class _Process:
    """One running bot process and its log."""

    def __init__(self, process: asyncio.subprocess.Process, log: Path, token: str) -> None:
        self.process = process
        self.log = log
        self.token = token
        """The token of a process launched for one game ("" for a long-lived bot's)."""
        self.started = time.monotonic()


class Launcher:
    """Starts, watches and restarts the bot processes of one run."""

    def __init__(
        self, folder: Path, address: str, *, restarts: int, register: Callable[[str, str], None],
        unregister: Callable[[str], None], present: Callable[[str], bool], changed: Callable[[], None],
        sandbox: SandboxSettings = UNCONFINED, socket: Path | None = None,
    ) -> None:
        self.folder = folder
        self.address = address
        self.restarts = restarts
        self._register = register
        """Admits a token for a bot key (the arena server's ``add_token``)."""
        self._unregister = unregister
        """Forgets a token (``remove_token``): a process launched for one game keeps its token for that game only."""
        self._present = present
        self._changed = changed
        self.sandbox = sandbox
        self.socket = socket
        """The arena's Unix socket that sandboxed bots reach it by; ``None``: bots run unsandboxed."""
        self._cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self._launches = 0
        self.broken: dict[str, str] = {}
        """Bot -> why it cannot play any more (failed to start, or ended too often)."""
        self.restarted: dict[str, int] = {}
        self._connected: set[str] = set()
        self._watchers: set[asyncio.Task[None]] = set()
        self._all: list[_Process] = []
        """The processes running (or not yet stopped)."""
        self._closing = False

    def _argv(self, bot: BotConfig) -> list[str]:
        address = f"unix:{INSIDE_SOCKET}" if self.socket is not None else self.address
        values = {"address": address, "name": bot.name, "seed": str(bot.seed), "python": sys.executable}
        try:
            argv = [part.format(**values) for part in bot.command]
        except (KeyError, IndexError, ValueError) as err:
            raise ConfigError(
                f"bot {bot.name!r}: cannot fill in its command ({err}); the placeholders are {PLACEHOLDERS}"
            ) from None
        if argv and argv[0] in ("python", "python3"):
            argv[0] = sys.executable  # the arena's own interpreter, so the bots see the same packages
        return argv

    def check(self, bot: BotConfig) -> None:
        """Refuses, before anything runs, a command whose placeholders cannot be filled in, or a
        folder that is not one."""
        self._argv(bot)
        if bot.folder is not None and not bot.folder.is_dir():
            raise ConfigError(f"bot {bot.name!r}: its folder {bot.folder} is not a folder")

    def _limits(self) -> tuple[int, list[int]]:
        """The address space and CPUs of the next process: CPUs handed out in turn."""
        cpus: list[int] = []
        wanted = self.sandbox.cpus
        if wanted and wanted < len(self._cpus):
            cpus = [self._cpus[(self._launches * wanted + i) % len(self._cpus)] for i in range(wanted)]
        self._launches += 1
        return self.sandbox.memory_mb, cpus

    async def _spawn(self, bot: BotConfig, token: str, *, one_game: bool = False) -> _Process:
        argv = self._argv(bot)
        logs = self.folder / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log = logs / f"{bot.name}.log"
        shown = shlex.join(argv)
        env = dict(os.environ, CALLBREAK_LAUNCHED="1", CALLBREAK_TOKEN=token)
        note = ""
        if self.socket is not None:
            folder = own_folder(argv, bot.folder)
            argv, env = sandboxed(argv, folder=folder, socket=self.socket, settings=self.sandbox,
                                  hidden=[self.folder], env=env)
            note = (f"--- in the sandbox: it sees {folder} read-only\n" if folder else
                    "--- in the sandbox: its command names no file of its own, so it sees no folder of its own (give "
                    "the bot folder = \"...\" in the configuration to show it one)\n")
        with log.open("ab") as err_log:
            err_log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} launched: {shown}\n{note}".encode())
            err_log.flush()
            process = await asyncio.create_subprocess_exec(
                *_limited(argv, *self._limits()), stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL, stderr=err_log, env=env, start_new_session=True,
            )
        entry = _Process(process, log, token if one_game else "")
        self._all.append(entry)
        return entry

    async def start(self, bot: BotConfig) -> None:
        """Starts the long-lived process of ``bot`` and watches it."""
        try:
            entry = await self._spawn(bot, bot.token)
        except OSError as err:
            self._break(bot.name, f"its command could not be started: {err.strerror or err}")
            return
        task = asyncio.get_running_loop().create_task(self._watch(bot, entry))
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)

    def connected(self, bot: str) -> None:
        """Notes that ``bot`` connected at least once (a later exit is a crash, not a failed start)."""
        self._connected.add(bot)

    async def _watch(self, bot: BotConfig, entry: _Process) -> None:
        status = await entry.process.wait()
        if entry in self._all:
            self._all.remove(entry)
        self._note_exit(entry, status)
        if self._closing:
            return
        name = bot.name
        if name not in self._connected and not self._present(name):
            self._break(name, f"its process ended with exit status {status} before it connected "
                              f"(see {entry.log})")
            return
        used = self.restarted.get(name, 0)
        if used >= self.restarts:
            self._break(name, f"its process ended {used + 1} times, the last time with exit status {status} "
                              f"(see {entry.log})")
            return
        self.restarted[name] = used + 1
        self._connected.discard(name)
        await asyncio.sleep(min(5.0, 0.5 * (used + 1)))
        if not self._closing:
            await self.start(bot)

    def _note_exit(self, entry: _Process, status: int) -> None:
        with contextlib.suppress(OSError), entry.log.open("ab") as log:
            log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} ended with exit status {status}\n".encode())

    def _break(self, bot: str, reason: str) -> None:
        self.broken[bot] = reason
        self._changed()

    async def launch_for_game(
        self, bot: BotConfig, key: str, connect: Callable[[str, float], Awaitable[Session]], timeout: float,
    ) -> tuple[_Process, Session]:
        """Starts a process of ``bot`` for one game under the token key ``key`` and waits up to
        ``timeout`` s for its session (``connect(key, timeout)``); raises :class:`LaunchFailed` if
        the process ends or does not connect in time."""
        token = new_token()
        self._register(token, key)
        try:
            entry = await self._spawn(bot, token, one_game=True)
        except OSError as err:
            self._unregister(token)
            self._break(bot.name, f"its command could not be started: {err.strerror or err}")
            raise LaunchFailed(bot.name) from None
        waiter = asyncio.ensure_future(connect(key, timeout))
        ended = asyncio.ensure_future(entry.process.wait())
        await asyncio.wait({waiter, ended}, return_when=asyncio.FIRST_COMPLETED)
        if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
            ended.cancel()
            return entry, waiter.result()
        waiter.cancel()
        ended.cancel()
        await self.stop(entry)
        used = self.restarted.get(bot.name, 0)
        if used >= self.restarts:
            why = "its process ended before it connected" if entry.process.returncode not in (None, -15) else (
                f"it did not connect within {timeout:g} s")
            self._break(bot.name, f"{used + 1} launches failed; the last: {why} (see {entry.log})")
        else:
            self.restarted[bot.name] = used + 1
        raise LaunchFailed(bot.name)

    async def stop(self, entry: _Process) -> None:
        """Ends one process (its whole group): terminate, then kill after 5 s. The token of a process
        launched for one game is forgotten."""
        if entry in self._all:
            self._all.remove(entry)
        if entry.token:
            self._unregister(entry.token)
        process = entry.process
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 5.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
            self._note_exit(entry, await process.wait())
        if process.stdin is not None:
            process.stdin.close()

    async def close(self) -> None:
        """Stops every process this launcher started."""
        self._closing = True
        for task in list(self._watchers):
            task.cancel()
        await asyncio.gather(*(self.stop(entry) for entry in list(self._all)), return_exceptions=True)
