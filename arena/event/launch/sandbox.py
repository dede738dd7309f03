"""The sandbox of launched bots: bubblewrap (``bwrap``) where it runs, resource limits everywhere.

A sandboxed bot sees the system's programs and libraries (``/usr`` and a few files of ``/etc``), the
Python the arena runs on with its installed packages, the arena's own package, protocol and sample bots
(so the bot kit imports, and a bot may build on a sample bot), and its own folder, all read-only; a
private, empty ``/tmp``; and nothing else of the machine: no home folder, no results folder, no other
bot's folder. It has no network at all (a network namespace of its own, with only a loopback interface
nobody listens on) and reaches the arena through one Unix domain socket bound into the sandbox at
:data:`INSIDE_SOCKET`, which the ``{address}`` placeholder of its command names. It has its own
process and IPC namespaces, keeps no capabilities, starts in a new session (it cannot type into the
organiser's terminal), and dies with the arena. The sandbox's first process (bubblewrap's ``--as-pid-1``) is
the arena's own short step: it holds a pipe only the arena writes to (:data:`LIFELINE_FD`), starts the bot beside
it, and ends when that pipe ends (the arena died, even by ``kill -9``, or let the bot go); the end of a pid
namespace's first process is the end of every process in it. bubblewrap's ``--die-with-parent`` binds that first
process to the arena too, but only some time after the arena's side of it is running: an arena killed in between
is seen by the step at its first look at the pipe, and no bot starts. The bot can neither stop, trace nor kill
that step. A new process for every game makes such starts frequent.

The other launched kinds get the same sandbox with a different way out: a ``stdio`` bot gets no socket
at all (it talks over its standard streams only); a ``bhoos`` instance gets the listening socket the
arena made in a folder of its own, which the sandbox never shows, as an inherited file descriptor
(:data:`PASSED_FD`): the arena's bridge (:mod:`arena.transports.bhoos.bridge`), running beside the bot in the
sandbox, accepts on it. No folder is shared with a bot read-write, so nothing a bot makes is ever
followed by the arena. Its network namespace, private to the instance, is what lets any number of bots
that all listen on port 7000 run at once.

Nothing of a bot's launch is on a command line (which every local user reads in ``ps``): bubblewrap
reads its arguments, the bot's environment among them (a ``command`` bot's token), from a memory file
(``--args``), so its command line is only ``bwrap --args 3 /bin/sh /run/callbreak/start``; that short
script, put in the sandbox from another memory file, starts the bot's command through a step of the arena's
Python (the sandbox's first process, whose command line names the bot's own and no more) that gives a ``stdio``
bot its pipes as its standard input and output. Those pipes reach the bot alone: bubblewrap and the step
hold ``/dev/null`` in their place, so when the bot closes its output, or ends, the arena
reads end-of-file at once. A bot's environment is made afresh (:func:`bot_environment`), never copied
from the arena's.

Limits apply to every launched bot, sandboxed or not: its address space (``memory_mb``, the
``RLIMIT_AS`` of each of its processes) and the CPUs it may run on (``cpus``, chosen in turn among the
machine's, so two bots share a CPU only when there are more bots than CPUs). Where the machine gives the arena
a cgroup of its own (:mod:`arena.event.launch.cgroups`), each bot process also gets a group that caps its processes and
threads (``processes``) and its memory as a whole. In the sandbox, the bot can write only to its ``/tmp`` and
``/dev/shm``, each a memory-backed file system of at most ``tmp_mb`` MiB (bubblewrap's ``--size``); the rest of
its file system is read-only. Where no cgroup caps its processes, a sandboxed bot that runs in a user namespace of
its own (bubblewrap makes one for an arena that is not run as root) gets ``RLIMIT_NPROC``: the kernel counts a
user's processes in each user namespace apart, so the count is the bot's own, not that of the arena's user.
:func:`shortfalls` says which of these limits the machine cannot give; ``limits = "require"`` refuses to run
launched bots without them, ``"warn"`` says so and runs them.

Without ``bwrap`` (or where it cannot run, as in a container that forbids namespaces) launched bots
run as the arena's user, with that user's rights: they could read the records. ``mode = "auto"``
says so in a warning and goes on; ``mode = "bwrap"`` refuses to run.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from arena.event.launch import cgroups
from arena.event.setup.sandboxing import SandboxSettings

__all__ = ["ARGS_FD", "INSIDE_FOLDER", "INSIDE_SOCKET", "LIFELINE_FD", "PASSED_FD", "START_FD", "Confinement",
           "Shortfall", "bot_environment", "bwrap_problem", "memory_cap", "nproc_inside", "own_folder", "sandboxed",
           "shortfalls", "unseen"]

INSIDE_FOLDER = "/run/callbreak"
"""The folder of the sandbox where the arena's socket is (for a ``command`` bot), and the start script."""
INSIDE_SOCKET = f"{INSIDE_FOLDER}/arena.sock"
"""Where a sandboxed bot finds the arena: ``{address}`` is ``unix:`` and this path."""
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""System folders shown read-only (on merged-/usr systems, most are links into /usr)."""
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "nsswitch.conf", "passwd",
        "group", "hosts", "ssl", "ca-certificates", "mime.types", "os-release")
"""The files of /etc a program may need to start; the rest (shadow, ssh keys, ...) stays out."""
START = f"{INSIDE_FOLDER}/start"
"""The script, read-only in the sandbox, that bubblewrap runs: it names nothing of the machine's."""
ARGS_FD = 3
"""The descriptor bubblewrap reads its arguments from (NUL-separated)."""
START_FD = 4
"""The descriptor bubblewrap reads the script :data:`START` from."""
PASSED_FD = 5
"""The first descriptor passed through to the bot: a ``stdio`` bot's input and output (5 and 6) until the
start step makes them its standard ones; a ``bhoos`` bridge's listening socket (5)."""
_ENV = ("PATH", "LANG", "LC_ALL", "TZ")
"""Environment variables of the arena's a launched bot gets; no other one of the arena's (its own
``CALLBREAK_*`` least of all: an organiser may have exported a token of theirs)."""
LIFELINE_FD = 7
"""A pipe from the arena that the bot's start holds: ended before the bot starts, no bot starts; ended later (the arena
died or let the bot go), every process of the sandbox is killed."""
_INNER = """\
import ctypes, os, resource, select, signal, sys
os.set_blocking(7, False)
try:
    os.read(7, 1)  # b"": the arena's end is closed, so the arena died as the sandbox was being made
    os._exit(0)
except BlockingIOError:  # the arena holds its end open: it lives
    pass
ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: no tracing, no opening of its descriptors
signal.signal(signal.SIGINT, signal.SIG_DFL)  # unhandled, so the bot cannot send it here either
if int(sys.argv[2]):  # counted in this sandbox's own user namespace: this step's processes and the bot's
    resource.setrlimit(resource.RLIMIT_NPROC, (int(sys.argv[2]), int(sys.argv[2])))
woken, wake = os.pipe()
os.set_blocking(wake, False)
signal.set_wakeup_fd(wake, warn_on_full_buffer=False)
signal.signal(signal.SIGCHLD, lambda number, frame: None)
bot = os.fork()
if bot == 0:
    os.close(7)
    if sys.argv[1] == "stdio":
        os.dup2(5, 0); os.dup2(6, 1); os.close(5); os.close(6)
    os.environ.pop("LC_CTYPE", None)  # set by this Python's own locale coercion, not given to the bot
    os.environ.pop("PWD", None)  # set by the shell that runs the start script
    try:
        os.execvp(sys.argv[3], sys.argv[3:])
    except OSError as err:
        print(f"cannot start {sys.argv[3]}: {err.strerror}", file=sys.stderr)
        os._exit(127)
null = os.open(os.devnull, os.O_RDWR)  # the bot's streams and sockets are its alone: their ends reach the arena
os.dup2(null, 0); os.dup2(null, 1)
for fd in (5, 6):
    try:
        os.close(fd)
    except OSError:
        pass
watch = select.poll()
watch.register(7, select.POLLIN)
watch.register(woken, select.POLLIN)
while True:
    if 7 in {fd for fd, _ in watch.poll()}:  # the life line ended: the arena died or let the bot go
        os._exit(137)  # the end of a pid namespace's first process is the end of every process in it
    os.read(woken, 4096)
    while (ended := os.waitpid(-1, os.WNOHANG))[0]:  # the bot, or an orphan of the bot's this first process reaps
        if ended[0] == bot:
            code = os.waitstatus_to_exitcode(ended[1])
            os._exit(code if code >= 0 else 128 - code)
"""
"""The first process of a bot's sandbox (bubblewrap's ``--as-pid-1``), between bubblewrap and the bot: no bot if the
arena died as the sandbox was made; else the bot's command, its pipes in place and its process limit set where no
cgroup holds it, started beside a watcher that holds the life line. When the line ends, the watcher ends, and with
the first process of its pid namespace every process of the sandbox ends. bubblewrap binds that process to the
arena before it starts the command; the life line also covers an arena killed before that, and one that let the bot
go while its sandbox was being made. The bot cannot stop, trace or kill the watcher: the kernel sends the first
process of a pid namespace no signal from inside it that it does not handle (and never SIGKILL or SIGSTOP), and a
process that is not dumpable cannot be traced, nor its descriptors opened through ``/proc``."""


@functools.cache
def bwrap_problem() -> str | None:
    """Why launched bots cannot be sandboxed here, or ``None`` when bwrap runs."""
    if not sys.platform.startswith("linux"):
        return "the sandbox needs Linux"
    found = shutil.which("bwrap")
    if found is None:
        return "bubblewrap (bwrap) is not installed (on Debian or Ubuntu: apt install bubblewrap)"
    try:
        probe = subprocess.run(
            [found, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
            capture_output=True, timeout=20, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bwrap could not be run: {err}"
    if probe.returncode != 0:
        why = probe.stderr.decode(errors="replace").strip().splitlines()
        return f"bwrap cannot make a sandbox here ({why[-1] if why else f'exit status {probe.returncode}'})"
    return None


@functools.cache
def _bwrap_can(*options: str) -> bool:
    """bubblewrap runs here with ``options`` (each probe run once)."""
    found = shutil.which("bwrap")
    if found is None or bwrap_problem() is not None:
        return False
    try:
        probe = subprocess.run([found, "--ro-bind", "/", "/", "--unshare-all", *options, "true"],
                               capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def _sized() -> bool:
    """This bubblewrap sizes a tmpfs (``--size``, from bubblewrap 0.8)."""
    return _bwrap_can("--size", str(1 << 20), "--tmpfs", "/tmp")


def _user_namespace() -> bool:
    """bubblewrap can give each sandbox a user namespace of its own here."""
    return _bwrap_can("--unshare-user")


def nproc_inside(settings: SandboxSettings) -> int:
    """The ``RLIMIT_NPROC`` the start step sets inside a bot's sandbox (0: none): ``processes`` where the sandbox
    has a user namespace of its own, so that the kernel counts the bot's processes apart from its user's others."""
    return settings.processes if settings.processes and _user_namespace() else 0


def memory_cap(settings: SandboxSettings) -> int:
    """The bytes of a bot's cgroup memory limit (0: none): ``memory_mb`` and what its ``/tmp`` and ``/dev/shm``
    may hold, which the kernel counts as the bot's memory."""
    return (settings.memory_mb + 2 * settings.tmp_mb) << 20 if settings.memory_mb else 0


@dataclasses.dataclass(frozen=True)
class Shortfall:
    """A limit of the ``[sandbox]`` table that the machine cannot give its launched bots."""

    key: str
    """The setting (``processes``, ``tmp_mb``, ``memory_mb``)."""
    text: str
    """What is not limited, and why, in words."""
    required: bool
    """``limits = "require"`` refuses to run launched bots without it."""


def shortfalls(settings: SandboxSettings, confined: bool) -> list[Shortfall]:
    """The limits launched bots would run without here (``confined``: in the sandbox)."""
    found = []
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    if settings.processes and not cgroups.delegated("pids") and not (confined and nproc_inside(settings) and not root):
        how = ("the arena runs as root, and the kernel never holds root to RLIMIT_NPROC" if confined and root else
               "bubblewrap cannot make a user namespace here, without which RLIMIT_NPROC would count every process "
               "of the arena's user" if confined else
               "an unsandboxed bot runs as the arena's user, whose every process RLIMIT_NPROC would count")
        found.append(Shortfall("processes", f"the number of processes a bot starts (no cgroup: "
                                            f"{cgroups.why_not('pids')}; and {how})", True))
    if settings.tmp_mb and not (confined and _sized()) and not cgroups.delegated("memory"):
        how = ("this bubblewrap is older than 0.8 and cannot size a tmpfs (--size)" if confined else
               "an unsandboxed bot writes to the machine's own /tmp")
        found.append(Shortfall("tmp_mb", f"the size of a bot's /tmp ({how}; and no cgroup counts it: "
                                         f"{cgroups.why_not('memory')})", True))
    if settings.memory_mb and not cgroups.delegated("memory"):
        found.append(Shortfall("memory_mb", f"a bot's memory as a whole (no cgroup: {cgroups.why_not('memory')}); "
                                            f"each of its processes is still held to {settings.memory_mb} MiB of "
                                            "address space", False))
    return found


def own_folder(argv: Sequence[str], given: Path | None) -> Path | None:
    """A launched bot's own folder: ``given``; or, for ``python -m package.module``, the package's
    folder; or the folder of the first file or folder its arguments name (``python bots/mine/bot.py``,
    ``/usr/bin/node bots/mine/bot.js`` -> ``bots/mine``); or the program's own folder when it is not a
    system program (``./mybot`` -> ``.``); ``None`` when it names none."""
    if given is not None:
        return given.resolve()
    python = bool(argv) and Path(argv[0]).resolve() == Path(sys.executable).resolve()
    if python and "-m" in argv[:-1]:
        module = argv[argv.index("-m") + 1].split(".")[0]
        try:  # a top-level name is found without running any of its code
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            return Path(next(iter(spec.submodule_search_locations))).resolve()
        if spec is not None and spec.origin and spec.has_location:
            return Path(spec.origin).parent.resolve()
        return None
    for part in argv[1:]:
        path = Path(part)
        if not part.startswith("-") and path.exists():
            return (path if path.is_dir() else path.parent).resolve()
    program = Path(argv[0]) if argv and "/" in argv[0] else None  # ./mybot: the program is the bot
    if program is not None and program.is_file() and not python and not any(
            program.resolve().is_relative_to(system) for system in _SYSTEM):
        return program.parent.resolve()
    return None


def _python_paths() -> list[Path]:
    """What the arena's Python needs to run and to import the bot kit and the sample bots."""
    paths = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent]
    for package in ("arena", "protocol", "sample_bots"):  # found, not imported
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            paths += [Path(location) for location in spec.submodule_search_locations]
    paths += [Path(p) for p in sys.path if p and Path(p).is_dir() and "site-packages" in p]
    return paths


def _shown(settings: SandboxSettings, folder: Path | None) -> list[Path]:
    """The folders bound read-only into the sandbox besides the system's: each as given and as its target."""
    shown: list[Path] = []
    for path in [*_python_paths(), *settings.read_only, *([folder] if folder else [])]:
        for variant in {path.absolute(), path.resolve()}:
            if variant.exists() and not any(variant.is_relative_to(s) for s in shown):
                shown.append(variant)
    return shown


def unseen(program: Path, settings: SandboxSettings, folder: Path | None) -> bool:
    """True when ``program``, a file of this machine, is not in the sandbox of a bot whose own folder is
    ``folder``: neither its path nor the file it leads to (through symbolic links) lies in a folder shown."""
    shown = [*(Path(system) for system in _SYSTEM), *_shown(settings, folder)]
    absolute = Path(os.path.abspath(program))  # its links kept: the sandbox must show the path itself too
    return not all(any(path.is_relative_to(s) for s in shown) for path in (absolute, program.resolve()))


def bot_environment(own: dict[str, str], *, confined: bool) -> dict[str, str]:
    """The whole environment of a launched bot: ``PATH``, ``LANG``, ``LC_ALL`` and ``TZ`` from the arena's
    (where set), ``HOME`` (``/tmp`` in the sandbox, else the arena's), and ``own``, the bot's ``env`` and the
    ``CALLBREAK_*`` variables the arena sets for that bot, which replace any of the others; nothing else of
    the arena's."""
    env = {key: os.environ[key] for key in _ENV if key in os.environ}
    env.setdefault("PATH", os.defpath)
    home = "/tmp" if confined else os.environ.get("HOME")
    if home:
        env["HOME"] = home
    return {**env, **own}


@dataclasses.dataclass(frozen=True)
class Confinement:
    """How to start a bot in the sandbox: a command line with nothing of the bot's on it, and what the
    started process reads at :data:`ARGS_FD` and :data:`START_FD`."""

    program: str
    """bubblewrap's path."""
    argv: list[str]
    """bubblewrap's command line: ``bwrap --args 3 /bin/sh /run/callbreak/start``."""
    env: dict[str, str]
    """bubblewrap's own environment (``PATH`` only; the bot's is among its arguments)."""
    files: dict[int, bytes]
    """What the started process reads at each descriptor: its arguments, the start script."""


def sandboxed(
    argv: Sequence[str], *, folder: Path | None, socket: Path | None, settings: SandboxSettings,
    hidden: Sequence[Path], env: dict[str, str], cwd: Path | None = None, stdio: bool = False,
) -> Confinement:
    """How to run ``argv`` with the environment ``env`` (all of it: see :func:`bot_environment`) inside
    the sandbox: ``folder`` (if any) read-only, ``socket`` (the arena's Unix socket, if the bot talks
    gRPC) at :data:`INSIDE_SOCKET`, and each of ``hidden`` (the results folder) covered by an empty
    folder even where it lies inside something shown. The command starts in ``cwd`` (default: the
    arena's own working folder, shown empty unless it is shown anyway). With ``stdio``, the started
    process's descriptors 5 and 6 become the bot's standard input and output.

    A bot given no ``socket`` (a ``stdio`` or ``bhoos`` bot) reaches nothing outside the sandbox but its
    own standard streams and the descriptors it is passed. The started process must be passed, at
    :data:`LIFELINE_FD`, the reading end of a pipe whose other end the arena alone holds open."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    cwd = cwd or Path.cwd()
    sized = ["--size", str(settings.tmp_mb << 20)] if settings.tmp_mb and _sized() else []
    args = ["--unshare-all", *(["--unshare-user"] if _user_namespace() else []), "--cap-drop", "ALL",
            "--die-with-parent", "--as-pid-1", "--new-session", "--hostname", "callbreak-bot", "--clearenv",
            "--proc", "/proc", "--dev", "/dev", *sized, "--tmpfs", "/tmp", *sized, "--tmpfs", "/dev/shm",
            "--dir", INSIDE_FOLDER, "--ro-bind-data", str(START_FD), START]
    for system in _SYSTEM:
        path = Path(system)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), system]
        elif path.is_dir():
            args += ["--ro-bind", system, system]
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    shown = _shown(settings, folder)
    for path in sorted(shown):
        args += ["--ro-bind", str(path), str(path)]
    for path in hidden:
        if any(path.resolve().is_relative_to(s) for s in shown):
            args += ["--tmpfs", str(path.resolve()), "--remount-ro", str(path.resolve())]
    if socket is not None:
        args += ["--bind", str(socket), INSIDE_SOCKET]
    args += ["--dir", str(cwd), "--chdir", str(cwd)]
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]  # writable: /tmp and /dev/shm alone, each of a size
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    start = shlex.join([sys.executable, "-I", "-S", "-c", _INNER, "stdio" if stdio else "-",
                        str(nproc_inside(settings)), *argv])
    return Confinement(
        program=bwrap, argv=["bwrap", "--args", str(ARGS_FD), "/bin/sh", START],
        env={"PATH": env.get("PATH", os.defpath)},
        files={ARGS_FD: b"".join(arg.encode() + b"\0" for arg in args), START_FD: f"exec {start}\n".encode()},
    )
