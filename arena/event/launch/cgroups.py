"""A control group of its own for each launched bot, where the machine gives the arena one: a cap on its
processes (``pids.max``) and on its memory as a whole (``memory.max``, or ``memory.limit_in_bytes`` under
cgroup v1).

The arena makes a bot's group beneath a cgroup that is its own to divide: under cgroup v2 its own cgroup, when
that is writable and already hands the controller down to its children (``cgroup.subtree_control``, as systemd's
``Delegate=yes`` or a container's runtime sets it up); under cgroup v1 its own cgroup of the controller's
hierarchy, when that is writable and either belongs to the arena's user (delegated to it) or is the hierarchy's
root and the arena runs as root. A cgroup that another program made and placed the arena in (a service manager's
slice) is that program's: the arena makes nothing in it. Where none is to be had, :func:`why_not` says why, in
words, and the sandbox falls back on what a process can do alone (:mod:`arena.event.launch.sandbox`).

A group is named ``callbreak-arena-<pid>-<n>`` after the arena's process. The start step of the bot's process
(:mod:`arena.event.launch.startstep`) writes its own pid into the group's ``cgroup.procs`` before it runs the bot, so
that everything the bot starts is counted in it; the launcher removes the group once the process has ended,
killing whatever is left in it, and every new launcher first removes the groups of arenas that no longer run
(one killed by ``kill -9``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import signal
import time
from pathlib import Path

from arena.event.launch.scratch import started

__all__ = ["PREFIX", "Group", "delegated", "remove_leftovers", "why_not"]

PREFIX = "callbreak-arena-"
"""The start of the name of every group the arena makes."""
CONTROLLERS = ("pids", "memory")


@dataclasses.dataclass(frozen=True)
class _Place:
    """Where the arena may make groups of one controller: a folder of the cgroup file system."""

    folder: Path
    version: int
    """1 or 2."""


def _mounts() -> list[tuple[str, Path, str, set[str]]]:
    """The cgroup file systems mounted here: (root within the hierarchy, mount point, type, options)."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        found.append((fields[3], Path(fields[4]), tail[0], set(tail[2].split(","))))
    return found


def _own() -> dict[str, str]:
    """The arena's own cgroup path in each v1 hierarchy (by controller) and in v2 (``""``)."""
    own = {}
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    for line in lines:
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and not controllers:
            own[""] = path
        for controller in controllers.split(","):
            if controller:
                own[controller] = path
    return own


def _folder(mount: tuple[str, Path, str, set[str]], path: str) -> Path | None:
    """The folder of the cgroup ``path`` in a mounted hierarchy, when the mount shows it."""
    root, point = mount[0], mount[1]
    relative = os.path.relpath(path, root)
    if relative.startswith(".."):
        return None
    return (point / relative).resolve() if relative != "." else point


@functools.cache
def _places() -> tuple[dict[str, _Place], dict[str, str]]:
    """Where each controller's groups may be made, and, for each that may not, why."""
    places: dict[str, _Place] = {}
    why: dict[str, str] = {}
    mounts, own = _mounts(), _own()
    euid = os.geteuid() if hasattr(os, "geteuid") else -1
    for controller in CONTROLLERS:
        v1 = next((m for m in mounts if m[2] == "cgroup" and controller in m[3]), None)
        v2 = next((m for m in mounts if m[2] == "cgroup2"), None)
        if v1 is not None and controller in own:
            folder = _folder(v1, own[controller])
            if folder is None or not folder.is_dir():
                why[controller] = f"the arena's own cgroup of {controller} is not visible here"
            elif not os.access(folder, os.W_OK):
                why[controller] = f"the arena's own cgroup of {controller} ({folder}) is not writable by its user"
            elif (euid != 0 and folder.stat().st_uid == euid) or (euid == 0 and folder == v1[1]):
                places[controller] = _Place(folder, 1)  # delegated to its user, or the hierarchy's root to root
            else:
                why[controller] = (f"the arena's own cgroup of {controller} ({folder}) was made by another program, "
                                   "which manages it, and is not delegated to the arena")
            continue
        if v2 is not None and "" in own:
            folder = _folder(v2, own[""])
            try:
                enabled = (folder / "cgroup.subtree_control").read_text().split() if folder else []
            except OSError:
                enabled = []
            if folder is None or not folder.is_dir():
                why[controller] = "the arena's own cgroup is not visible here"
            elif not os.access(folder, os.W_OK):
                why[controller] = f"the arena's own cgroup ({folder}) is not writable by its user"
            elif controller not in enabled:
                why[controller] = (f"the arena's own cgroup ({folder}) does not hand the {controller} controller to "
                                   "its children (run it in a delegated cgroup: systemd-run --user --scope -p "
                                   "Delegate=yes ...)")
            else:
                places[controller] = _Place(folder, 2)
            continue
        why[controller] = f"no cgroup file system with the {controller} controller is mounted"
    return places, why


def delegated(controller: str) -> bool:
    """The arena may make groups of ``controller`` (``pids`` or ``memory``) here."""
    return controller in _places()[0]


def why_not(controller: str) -> str:
    """Why the arena may not make groups of ``controller`` here ("" when it may)."""
    return _places()[1].get(controller, "")


class Group:
    """One bot process's control group (in each hierarchy that holds a controller it uses)."""

    _made = 0

    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders

    @classmethod
    def make(cls, processes: int, memory_bytes: int) -> Group | None:
        """A new group holding at most ``processes`` tasks (0: no cap) and ``memory_bytes`` of memory (0: no cap),
        with each controller the arena may use; ``None`` when it may use neither. :class:`OSError` when the
        cgroup file system refuses it."""
        places = _places()[0]
        wanted = {c: v for c, v in (("pids", processes), ("memory", memory_bytes)) if v and c in places}
        if not wanted:
            return None
        cls._made += 1
        name = f"{PREFIX}{os.getpid()}-{cls._made}"
        folders: dict[Path, _Place] = {}
        for controller in wanted:
            place = places[controller]
            folders.setdefault(place.folder / name, place)
        group = cls(list(folders))
        try:
            for folder in folders:
                folder.mkdir()
            for controller, value in wanted.items():
                place = places[controller]
                folder = place.folder / name
                if controller == "pids":
                    (folder / "pids.max").write_text(str(value))
                elif place.version == 2:
                    (folder / "memory.max").write_text(str(value))
                    with contextlib.suppress(OSError):  # no swap to spill into, where the machine has swap
                        (folder / "memory.swap.max").write_text("0")
                else:
                    (folder / "memory.limit_in_bytes").write_text(str(value))
        except OSError:
            group.remove()
            raise
        return group

    @property
    def procs(self) -> list[str]:
        """The files a process writes its pid into to join the group."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def remove(self) -> None:
        """Kills whatever is left in the group and removes it (tries for a second while its last tasks end)."""
        for folder in self.folders:
            _remove(folder)


def _remove(folder: Path) -> None:
    if not folder.is_dir():
        return
    deadline = time.monotonic() + 1.0
    while True:
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
        killer = folder / "cgroup.kill"
        if killer.exists():
            with contextlib.suppress(OSError):
                killer.write_text("1")
        else:
            with contextlib.suppress(OSError):
                for pid in (folder / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        os.kill(int(pid), signal.SIGKILL)
        time.sleep(0.02)


def remove_leftovers() -> None:
    """Removes the groups of arenas that no longer run, and whatever is left in them."""
    for place in {p.folder for p in _places()[0].values()}:
        try:
            entries = list(place.iterdir())
        except OSError:
            continue
        for folder in entries:
            pid = folder.name.removeprefix(PREFIX).split("-")[0]
            if folder.name.startswith(PREFIX) and pid.isdigit() and started(int(pid)) is None:
                _remove(folder)
