"""Bot processes the arena starts itself: ``command`` bots.

Each launched bot runs in a process group of its own, with its standard error in ``logs/<bot>.log``
(through a pipe the arena reads, up to the limits of :mod:`arena.event.launch.botlog`), an environment made
afresh (:func:`~arena.event.launch.sandbox.bot_environment`), and its standard input a pipe the arena holds
open for as long as it runs: a bot learns that the arena has ended, even by ``kill -9``, when that pipe
reaches end-of-file. On Linux the kernel also kills it when the arena dies (``PR_SET_PDEATHSIG``), so
even a process that never reads its standard input, or dies before it begins to, does not outlive the
arena. The bot is told that it was launched by the environment variable ``CALLBREAK_LAUNCHED=1``, and
gets its token in ``CALLBREAK_TOKEN``, never on its command line, where every local user could read it
(``ps``, ``/proc``). The token is fresh: made for the run of a long-lived bot (its restarts keep it), or
for the one game of a process launched per game, and forgotten when that game ends.

Where bubblewrap runs, each process starts in the sandbox of :mod:`arena.event.launch.sandbox` and reaches the
arena through a Unix socket; every launched process, sandboxed or not, runs under the limits of the
``[sandbox]`` table (address space, CPUs), and in a control group of its own where the machine gives the arena
one (:mod:`arena.event.launch.cgroups`: its processes and memory), removed when the process ends.

A process that ends before its bot ever connected *failed to start*: the bot is broken at once (its
games wait under the tournament's absence policy). A process that ends after its bot connected is
started again, up to ``restarts`` times; after that the bot is broken too. With ``fresh_process`` every
game starts processes of its own, and a launch that fails counts against the same budget.

``stdio`` and ``bhoos`` bots always run a process per seat per game (nothing they remember outlives the
game). A ``stdio`` process talks over its standard input and output, has no token and no socket, and
*failed to start* when it ends before it ever wrote a line. A ``bhoos`` process is the bridge of
:mod:`arena.transports.bhoos.bridge`, which starts the bot's command beside it in the same sandbox (each instance
a network namespace of its own) and carries the arena's HTTP requests to the bot's port through a Unix
socket that the arena made, listening, in a folder of its own no bot sees, and passed to the bridge
open; it failed to start when it does not answer ``GET /hi`` within its ``start_timeout_s``. A
``bhoos_url`` bot is not started, only asked ``GET /hi`` before each of its games, under the same
budget. Either kind starts in its ``folder`` when it has one.

The folder of the ``bhoos`` instances' sockets is a scratch folder of the arena's (:mod:`arena.event.launch.scratch`);
the launcher removes it when it closes, as the arena does when it stops (Ctrl-C, or a SIGTERM, which stops it
the same way), and every new launcher first removes those of arenas that no longer run (one killed by SIGKILL,
or by a crash of the machine).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from arena.errors import ArenaError, ConfigError
from arena.event.launch import cgroups
from arena.event.launch.botlog import BotLogs, size_text
from arena.event.launch.sandbox import (
    INSIDE_SOCKET,
    LIFELINE_FD,
    PASSED_FD,
    bot_environment,
    memory_cap,
    own_folder,
    sandboxed,
    unseen,
)
from arena.event.launch.scratch import remove_leftovers, scratch_folder
from arena.event.launch.startstep import limited, memory_file
from arena.event.setup.botconfig import BhoosBot, BhoosUrlBot, BotConfig, CommandBot, LaunchedBot
from arena.event.setup.sandboxing import UNCONFINED, SandboxSettings
from arena.transports.bhoos import bridge
from arena.transports.bhoos.httpclient import Endpoint
from arena.transports.bhoos.player import wait_until_ready
from arena.transports.grpc.session import Session
from arena.transports.grpc.tokens import new_token
from arena.transports.stdio import StdioPlayer

__all__ = ["LaunchFailed", "Launcher"]

_Setup = TypeVar("_Setup", bound=LaunchedBot | BhoosUrlBot)

PLACEHOLDERS = "{address}, {name}, {seed} and {python}"
OWN_PLACEHOLDERS = "{name}, {seed} and {python}"
"""The placeholders of a ``stdio`` or ``bhoos`` command (they have no address)."""
NOT_STARTED = (126, 127)
"""The exit statuses of a program that could not be run (not executable; not found, or its interpreter not)."""
STDIO_EXIT_WAIT_S = 1.0
"""How long a ``stdio`` process may take to end by itself once its game is over and its input closed."""
LOG_DRAIN_S = 2.0
"""How long the rest of an ended process's standard error may take to reach its log."""


def _interpreter(program: Path) -> Path | None:
    """The interpreter the first line of a script names (``#!/path/to/python``), if it names one."""
    try:
        with program.open("rb") as file:
            first = file.read(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].split(b"\n", 1)[0].split()
    return Path(os.fsdecode(words[0])) if words else None


INSTANCES = "http"
"""The kind of the folders of ``bhoos`` instances' sockets (:mod:`arena.event.launch.scratch`)."""


class LaunchFailed(ArenaError):
    """A process started for one game did not connect."""


class _Process:
    """One running bot process and its log."""

    def __init__(self, process: asyncio.subprocess.Process, log: Path, token: str, bot: BotConfig) -> None:
        self.process = process
        self.log = log
        self.token = token
        """The token of a process launched for one game ("" for a long-lived bot's)."""
        self.bot = bot
        self.started = time.monotonic()
        self.private: Path | None = None
        """A ``bhoos`` instance's folder of the arena's (its bridge's socket), removed when it stops."""
        self.copier: asyncio.Task[int] | None = None
        """Copies its standard error into its log; the bytes it dropped (the log's limit)."""
        self.player: StdioPlayer | None = None
        """A ``stdio`` process's seat, which says whether the bot ever answered."""
        self.label = ""
        """The seat and game of a process started for one seat of one game, as its log names them."""
        self.group: cgroups.Group | None = None
        """Its control group, removed when it has ended."""
        self.lifeline: int | None = None
        """The arena's end of a sandboxed process's life line (:data:`~arena.event.launch.sandbox.LIFELINE_FD`),
        held open until the process has ended."""

    def ended(self) -> None:
        """Lets go of the life line, once the process has ended."""
        if self.lifeline is not None:
            os.close(self.lifeline)
            self.lifeline = None


class Launcher:
    """Starts, watches and restarts the bot processes of one run."""

    def __init__(
        self, folder: Path, address: str, *, restarts: int, register: Callable[[str, str], None] = lambda t, k: None,
        unregister: Callable[[str], None] = lambda t: None, present: Callable[[str], bool] = lambda b: False,
        changed: Callable[[], None] = lambda: None, sandbox: SandboxSettings = UNCONFINED, socket: Path | None = None,
        confined: bool | None = None,
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
        """The arena's Unix socket that sandboxed ``command`` bots reach it by."""
        self.confined = socket is not None if confined is None else confined
        """Launched bots run in the sandbox (by default, when there is a socket to reach the arena by)."""
        self._instances: Path | None = None
        """The private folder of the ``bhoos`` instances' folders (made at the first)."""
        self._logs = BotLogs()
        self._answered: set[str] = set()
        """``stdio`` bots that wrote a line in this run (a later silent end is a crash, not a failed start)."""
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
        remove_leftovers(INSTANCES)
        cgroups.remove_leftovers()

    def _argv(self, bot: BotConfig) -> list[str]:
        setup = _setup(bot, LaunchedBot)
        values = {"name": bot.name, "seed": str(bot.seed), "python": sys.executable}
        if setup.connects:
            values["address"] = f"unix:{INSIDE_SOCKET}" if self.socket is not None else self.address
        try:
            argv = [part.format(**values) for part in setup.argv]
        except (KeyError, IndexError, ValueError) as err:
            placeholders = PLACEHOLDERS if setup.connects else OWN_PLACEHOLDERS
            raise ConfigError(
                f"bot {bot.name!r}: cannot fill in its command ({err}); the placeholders are {placeholders}"
            ) from None
        if argv and argv[0] in ("python", "python3"):
            argv[0] = sys.executable  # the arena's own interpreter, so the bots see the same packages
        return argv

    def check(self, bot: BotConfig) -> None:
        """Refuses, before anything runs, a command whose placeholders cannot be filled in, or a
        folder that is not one."""
        self._argv(bot)
        folder = _setup(bot, LaunchedBot).folder
        if folder is not None and not folder.is_dir():
            raise ConfigError(f"bot {bot.name!r}: its folder {folder} is not a folder")

    def _unstartable(self, bot: BotConfig, status: int | None) -> str:
        """Why a process of ``bot`` that ended with ``status`` before it answered could not run its program,
        when the status says it could not (:data:`NOT_STARTED`) and the reason can be found: its program
        (or the interpreter the program's first line names) is missing, not executable, or outside every
        folder the sandbox shows; a sentence that says how to fix it, else ``""``."""
        if status not in NOT_STARTED:
            return ""
        try:
            program = self._argv(bot)[0]
        except (ConfigError, IndexError):
            return ""
        setup = _setup(bot, LaunchedBot)
        cwd = setup.folder if not setup.connects and setup.folder is not None else Path.cwd()
        if "/" not in program:
            search = setup.env.get("PATH") or os.environ.get("PATH") or os.defpath
            found = shutil.which(program, path=search)
            if found is None:
                return f"its program {program!r} is in no folder of its PATH ({search})"
            path = Path(found)
        else:
            path = cwd / program
            if not path.exists():
                return f"its program {path} does not exist"
        paths = [("its program", path)]
        interpreter = _interpreter(path)
        if interpreter is not None:
            if not interpreter.exists():
                return f"the interpreter that the first line of its program {path} names, {interpreter}, does not exist"
            paths.append((f"the interpreter that the first line of its program {path} names", interpreter))
        if self.confined:
            folder = own_folder(self._argv(bot), setup.folder)
            for what, candidate in paths:
                if unseen(candidate, self.sandbox, folder):
                    parent = candidate.absolute().parent
                    runtime = parent.parent if parent.name == "bin" else parent  # a virtualenv's or a runtime's root
                    return (f"{what}, {candidate}, exists on this machine but is outside every folder the sandbox "
                            f"shows (the system's, the arena's Python, [sandbox] read_only, and the bot's own folder"
                            f"{f' {folder}' if folder else ''}): add read_only = [\"{runtime}\"] to the [sandbox] "
                            "table of the configuration, or give the bot folder = \"...\" holding it")
        if not os.access(path, os.X_OK):
            return f"its program {path} is not executable (chmod +x {shlex.quote(str(path))})"
        return ""

    def _ended_before(self, bot: BotConfig, status: int | None, what: str, log: Path) -> str:
        """The reason of a process that ended with ``status`` before ``what``: its exit status, why its
        program could not run (when that can be told), and its log."""
        why = self._unstartable(bot, status)
        return f"its process ended with exit status {status} before {what}{f': {why}' if why else ''} (see {log})"

    def _limits(self) -> tuple[int, list[int]]:
        """The address space and CPUs of the next process: CPUs handed out in turn."""
        cpus: list[int] = []
        wanted = self.sandbox.cpus
        if wanted and wanted < len(self._cpus):
            cpus = [self._cpus[(self._launches * wanted + i) % len(self._cpus)] for i in range(wanted)]
        self._launches += 1
        return self.sandbox.memory_mb, cpus

    async def _spawn(
        self, bot: BotConfig, token: str, *, one_game: bool = False, label: str = "", piped: bool = False,
        bridged: tuple[socket.socket, int] | None = None,
    ) -> _Process:
        """Starts a process of ``bot``: one that connects with ``token``, one that talks over its standard streams
        (``piped``), or a ``bhoos`` bridge accepting on the listening socket of ``bridged`` for the bot's port;
        its standard error goes to its log, through the log's limits."""
        argv = self._argv(bot)
        logs = self.folder / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log = logs / f"{bot.name}.log"
        shown = shlex.join(argv)
        setup = _setup(bot, LaunchedBot)
        connects = setup.connects
        cwd = setup.folder if not connects and setup.folder is not None else None
        variables = {**setup.env, **({"CALLBREAK_LAUNCHED": "1", "CALLBREAK_TOKEN": token} if connects else {})}
        env = bot_environment(variables, confined=self.confined)
        folder = own_folder(argv, setup.folder) if self.confined else None
        plan: dict[int, int] = {}
        """A descriptor of the started program -> the one of the arena's (or 0 and 1, its pipes) it is."""
        if bridged is not None:  # the bridge starts the bot beside it, in the same sandbox
            listener, port = bridged
            argv = [sys.executable, "-I", str(Path(bridge.__file__).resolve()), str(PASSED_FD), str(port), "--", *argv]
            plan[PASSED_FD] = listener.fileno()
        program, note, files = argv[0], "", {}
        if self.confined:
            confinement = sandboxed(
                argv, folder=folder, socket=self.socket if connects else None, settings=self.sandbox,
                hidden=[self.folder], env=env, cwd=cwd, stdio=piped)
            program, argv, env, files = confinement.program, confinement.argv, confinement.env, confinement.files
            if piped:  # its pipes reach the bot alone, not bubblewrap's processes
                plan[PASSED_FD], plan[PASSED_FD + 1] = 0, 1
            note = (f"--- in the sandbox: it sees {folder} read-only\n" if folder else
                    "--- in the sandbox: its command names no file of its own, so it sees no folder of its own (give "
                    "the bot folder = \"...\" in the configuration to show it one)\n")
        what = f"launched for {label}" if label else "launched"
        if setup.env:  # the names only: a value may be a secret
            note += f"--- with env {', '.join(sorted(setup.env))} set (values not shown)\n"
        with log.open("ab") as out:
            out.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {what}: {shown}\n{note}".encode())
        opened: list[int] = []
        group = cgroups.Group.make(self.sandbox.processes, memory_cap(self.sandbox))
        lifeline: int | None = None
        try:
            for target, data in files.items():
                opened.append(memory_file(data))
                plan[target] = opened[-1]
            if self.confined:  # the arena's end is not inheritable: only this process holds it
                reading, lifeline = os.pipe()
                opened.append(reading)
                plan[LIFELINE_FD] = reading
            read_end, write_end = os.pipe()
            opened.append(write_end)
            try:
                process = await asyncio.create_subprocess_exec(
                    *limited(program, argv, plan, *self._limits(), group=group.procs if group else ()),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE if piped else asyncio.subprocess.DEVNULL,
                    stderr=write_end, env=env, start_new_session=True, cwd=cwd,
                    pass_fds=[source for source in plan.values() if source > 2],
                )
            except BaseException:
                os.close(read_end)
                raise
        except BaseException:
            if lifeline is not None:
                os.close(lifeline)
            if group is not None:
                group.remove()
            raise
        finally:
            for fd in opened:  # the process has its own copies
                os.close(fd)
        entry = _Process(process, log, token if one_game else "", bot)
        entry.group = group
        entry.lifeline = lifeline
        entry.label = label
        entry.copier = asyncio.get_running_loop().create_task(self._logs.copy(read_end, log))
        self._all.append(entry)
        return entry

    async def start(self, bot: BotConfig) -> None:
        """Starts the long-lived process of ``bot`` and watches it."""
        try:
            entry = await self._spawn(bot, _setup(bot, CommandBot).token)
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
        entry.ended()
        if entry in self._all:
            self._all.remove(entry)
        await self._ungroup(entry)
        self._note_exit(entry, status, await self._log_ended(entry))
        if self._closing:
            return
        name = bot.name
        if name not in self._connected and not self._present(name):
            self._break(name, self._ended_before(bot, status, "it connected", entry.log))
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

    @staticmethod
    async def _log_ended(entry: _Process) -> int:
        """Waits, briefly, for the rest of an ended process's output to reach its log; the bytes the log dropped."""
        if entry.copier is None:
            return 0
        try:  # a process it left behind may hold the pipe open: its output is no longer this process's
            return await asyncio.wait_for(entry.copier, LOG_DRAIN_S)
        except (TimeoutError, OSError):
            return 0

    def _note_exit(self, entry: _Process, status: int, dropped: int, stopped: str = "") -> None:
        """The line of a process's end: ``stopped`` says when the arena ended it (and it did not end first)."""
        if stopped and status in (-signal.SIGTERM, -signal.SIGKILL):
            text = f"stopped by the arena {stopped}"
        else:
            text = f"ended with exit status {status}"
        if entry.label:
            text += f" ({entry.label})"
        if dropped:
            text += f"; {size_text(dropped)} of its output dropped (the log's limit)"
        self._note(entry, text)

    @staticmethod
    def _note(entry: _Process, text: str) -> None:
        with contextlib.suppress(OSError), entry.log.open("ab") as log:
            log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {text}\n".encode())

    def _break(self, bot: str, reason: str) -> None:
        self.broken[bot] = reason
        self._changed()

    def mark_broken(self, bot: str, reason: str) -> None:
        """Notes that ``bot`` cannot play any more (a worker that launches it gave up on it), unless already noted."""
        if bot not in self.broken:
            self._break(bot, reason)

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
        try:
            await asyncio.wait({waiter, ended}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the game was called off while its process came up: nothing left behind
            waiter.cancel()
            ended.cancel()
            await asyncio.shield(self.stop(entry))
            raise
        if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
            ended.cancel()
            return entry, waiter.result()
        waiter.cancel()
        ended.cancel()
        await self.stop(entry)
        status = entry.process.returncode
        why = self._ended_before(bot, status, "it connected", entry.log) if status not in (None, -15) else (
            f"it did not connect within {timeout:g} s (see {entry.log})")
        self._launch_failed(bot, why)
        raise LaunchFailed(bot.name)

    def _launch_failed(self, bot: BotConfig, why: str) -> None:
        """Counts a launch for one game that failed; the bot is broken once ``restarts`` more have failed."""
        used = self.restarted.get(bot.name, 0)
        if used >= self.restarts:
            launches = f"{used + 1} launches" if used else "its launch"
            self._break(bot.name, f"{launches} failed; the last: {why}" if used else f"{launches} failed: {why}")
        else:
            self.restarted[bot.name] = used + 1

    async def start_stdio(self, bot: BotConfig, label: str) -> _Process:
        """Starts a ``stdio`` bot's process for one seat of one game (``label`` names them in its log)."""
        try:
            return await self._spawn(bot, "", one_game=True, label=label, piped=True)
        except OSError as err:
            self._break(bot.name, f"its command could not be started: {err.strerror or err}")
            raise LaunchFailed(bot.name) from None

    async def start_bhoos(self, bot: BotConfig, label: str) -> tuple[_Process, Endpoint]:
        """Starts a ``bhoos`` bot's instance for one seat of one game, in a sandbox of its own, and waits
        until it answers ``GET /hi``; raises :class:`LaunchFailed` if it does not within its start-up time.

        The arena makes the bridge's socket itself, listening, in a folder of its own that no bot sees,
        and passes it to the bridge open: nothing in the way between them is a bot's to replace."""
        setup = _setup(bot, BhoosBot)
        if self._instances is None:
            self._instances = scratch_folder(INSTANCES, socket_path=len("/12345678/") + len(bridge.SOCKET_NAME))
        private = Path(tempfile.mkdtemp(dir=self._instances))
        path = private / bridge.SOCKET_NAME
        try:
            with socket.socket(socket.AF_UNIX) as listener:  # the bridge has its own copy once started
                listener.bind(str(path))
                listener.listen(16)
                entry = await self._spawn(bot, "", one_game=True, label=label, bridged=(listener, setup.port))
        except OSError as err:
            shutil.rmtree(private, ignore_errors=True)
            self._break(bot.name, f"its command could not be started: {err.strerror or err}")
            raise LaunchFailed(bot.name) from None
        entry.private = private
        endpoint = Endpoint(unix=str(path), host="localhost", port=setup.port)
        why = await wait_until_ready(endpoint, setup.start_timeout, lambda: entry.process.returncode)
        if why is None:
            return entry, endpoint
        hint = self._unstartable(bot, entry.process.returncode)
        why += f": {hint}" if hint else ""
        self._note(entry, f"not ready for {label}: {why}")
        await self.stop(entry)
        self._launch_failed(bot, f"{why} (see {entry.log})")
        raise LaunchFailed(bot.name)

    async def reach(self, bot: BotConfig) -> Endpoint:
        """The endpoint of a ``bhoos_url`` bot, once it answers ``GET /hi``; raises :class:`LaunchFailed`
        (counted as a failed launch) if it does not within its start-up time."""
        setup = _setup(bot, BhoosUrlBot)
        endpoint = Endpoint.from_url(setup.url)
        why = await wait_until_ready(endpoint, setup.start_timeout)
        if why is None:
            return endpoint
        self._launch_failed(bot, f"{setup.url}: {why}")
        raise LaunchFailed(bot.name)

    async def stop(self, entry: _Process, when: str = "at the end of its game") -> None:
        """Ends one process (its whole group): terminate, then kill after 5 s; its log says it was stopped
        ``when``. The token of a process launched for one game is forgotten."""
        if entry in self._all:
            self._all.remove(entry)
        if entry.token:
            self._unregister(entry.token)
        process = entry.process
        if entry.player is not None:
            ended_early = process.returncode is not None
            if not ended_early:  # its input is closed: it may end by itself
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), STDIO_EXIT_WAIT_S)
            self._stdio_ended(entry, ended_early)
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 5.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
            status = await process.wait()
            self._note_exit(entry, status, await self._log_ended(entry), stopped=when)
        elif not _setup(entry.bot, LaunchedBot).connects:  # a long-lived command bot's end is noted by its watcher
            self._note_exit(entry, process.returncode, await self._log_ended(entry))
        if process.stdin is not None:
            process.stdin.close()
        if process.stdout is not None:
            await self._drained(process)
        if entry.private is not None:
            shutil.rmtree(entry.private, ignore_errors=True)
        entry.ended()
        await self._ungroup(entry)

    @staticmethod
    async def _ungroup(entry: _Process) -> None:
        """Removes an ended process's control group, with whatever it left in it."""
        group, entry.group = entry.group, None
        if group is not None:
            await asyncio.to_thread(group.remove)

    @staticmethod
    async def _drained(process: asyncio.subprocess.Process) -> None:
        """Reads what is left of an ended ``stdio`` process's output to its end, and drops it, so that its pipe
        closes: a bot that flooded its output left its reader paused on a full buffer, where it would never
        see the end of the stream, and the pipe would stay open as long as the arena runs."""
        assert process.stdout is not None
        deadline = time.monotonic() + LOG_DRAIN_S
        with contextlib.suppress(TimeoutError, OSError):
            while await asyncio.wait_for(process.stdout.read(2**16), max(0.0, deadline - time.monotonic())):
                pass
        if not process.stdout.at_eof():  # a process it left behind holds the pipe open: close the arena's end
            transport = getattr(process, "_transport", None)  # asyncio has no public way to close one pipe
            if transport is not None:
                transport.close()

    def _stdio_ended(self, entry: _Process, ended_early: bool) -> None:
        """A ``stdio`` process that ended before its game did without ever writing a line failed to start:
        it counts against the bot's launches, unless the bot has answered in this run before."""
        player, bot = entry.player, entry.bot
        assert player is not None
        if player.answers:
            self._answered.add(bot.name)
        elif ended_early and bot.name not in self._answered:
            self._launch_failed(bot, self._ended_before(bot, entry.process.returncode, "it answered a request",
                                                        entry.log))

    async def close(self) -> None:
        """Stops every process this launcher started."""
        self._closing = True
        for task in list(self._watchers):
            task.cancel()
        await asyncio.gather(*(self.stop(entry, "at the end of the event") for entry in list(self._all)),
                             return_exceptions=True)
        if self._instances is not None:
            shutil.rmtree(self._instances, ignore_errors=True)
            self._instances = None


def _setup(bot: BotConfig, kind: type[_Setup]) -> _Setup:
    """The setup of a bot given to a method of the launcher for bots of ``kind`` (it is given no other)."""
    if not isinstance(bot.setup, kind):
        raise TypeError(f"bot {bot.name!r} is a {bot.kind} bot, which this part of the launcher is not for")
    return bot.setup
