"""The short step every launched bot process starts through: its limits, its descriptors, and its death with the arena.

The launcher (:mod:`arena.event.launch.launcher`) starts each bot's program through a small Python program of its
own rather than with ``preexec_fn``: it joins the bot's control group where the launcher made one
(:mod:`arena.event.launch.cgroups`), so that everything the bot starts is counted in it, sets the address space and CPUs
of the ``[sandbox]`` table, on Linux has the kernel kill the bot when the arena dies (``PR_SET_PDEATHSIG``), and
puts in place the descriptors the arena passes (files held in memory, a bridge's socket, a ``stdio`` bot's pipes).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["limited", "memory_file"]


_LIMITED = """\
import ctypes, fcntl, os, resource, signal, sys
arena, memory, cpus, plan = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
for procs in filter(None, sys.argv[5].split("\\n")):  # the bot's control group, before anything of the bot runs
    try:
        with open(procs, "w") as group:
            group.write(str(os.getpid()))
    except OSError as err:
        print(f"cannot join the bot's control group {procs}: {err.strerror}", file=sys.stderr)
        os._exit(125)
if sys.platform.startswith("linux"):
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG, kept through exec
    if os.getppid() != arena:
        os._exit(0)  # the arena died before the request: no signal would come
    if cpus:
        os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})
if memory:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
pairs = [tuple(map(int, pair.split(":"))) for pair in plan.split(",") if pair]
copies = [(target, fcntl.fcntl(source, fcntl.F_DUPFD_CLOEXEC, 100)) for target, source in pairs]
null = os.open(os.devnull, os.O_RDWR)
for _, source in pairs:
    if source > 2:
        os.close(source)
    else:  # a standard stream moved elsewhere: bubblewrap's own processes must not hold it
        os.dup2(null, source)
for target, copy in copies:
    os.dup2(copy, target)
os.environ.pop("LC_CTYPE", None)  # set by this Python's own locale coercion, not given to the bot
try:
    os.execvp(sys.argv[6], sys.argv[7:])
except OSError as err:
    print(f"cannot start {sys.argv[6]}: {err.strerror}", file=sys.stderr)
    os._exit(127)
"""


def limited(program: str, argv: list[str], plan: dict[int, int], memory_mb: int, cpus: Sequence[int],
            group: Sequence[str] = ()) -> list[str]:
    """``program`` started (with the command line ``argv``) through a short step that joins its control group
    (``group``: the ``cgroup.procs`` files to write its pid into), sets its limits
    (address space, CPUs), on Linux has the kernel kill it when the arena dies, and puts descriptors in
    place: ``plan`` maps a descriptor of the started program to the one of the step that it is (one the
    arena passed, or 0 and 1, its pipes, then replaced by ``/dev/null``). A step of its own rather than
    ``preexec_fn``: that makes :mod:`subprocess` fork the whole arena, gRPC threads and all, where it
    otherwise uses vfork."""
    moves = ",".join(f"{target}:{source}" for target, source in plan.items())
    return [sys.executable, "-I", "-S", "-c", _LIMITED, str(os.getpid()), str(memory_mb * 2**20),
            ",".join(map(str, cpus)), moves, "\n".join(group), program, *argv]


def memory_file(data: bytes) -> int:
    """A descriptor of an anonymous file holding ``data``, read from its start (nothing on any disk)."""
    fd = os.memfd_create("callbreak-launch", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
