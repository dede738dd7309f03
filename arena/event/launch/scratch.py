"""The arena's temporary folders, named after the process that made them, and the removal of those of an arena
that no longer runs.

A folder is ``callbreak-<kind>-<random>`` in the system's temporary folder, mode 0700, and holds a file
:data:`OWNER` that names the arena's process: its pid and start time. (Not in the folder's name: a Unix socket's
path, which some of these folders hold, may not be longer than 107 bytes.) The arena removes its own folders
when it is done with them, after a SIGTERM or a Ctrl-C too; one killed with ``kill -9`` cannot, so every arena,
as it makes its first folder of a kind, removes the folders of that kind whose arena no longer runs (its pid
gone, or reused by a process that started at another time). It touches only real folders of its own user whose
owner file it can read, and follows no link.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["OWNER", "owner", "remove_leftovers", "scratch_folder"]

PREFIX = "callbreak-"
OWNER = ".owner"
"""The file in each folder that names the arena that made it: ``<pid> <start time>``."""


def started(pid: int) -> str | None:
    """When process ``pid`` started, as a text that tells it from a later process given the same pid (its
    start time in clock ticks, where ``/proc`` says; else ``""``), or ``None`` when no such process runs."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return None
    except OSError:
        pass
    else:  # the 22nd field; the 2nd, the program's name in parentheses, may hold spaces
        fields = stat.rsplit(")", 1)[-1].split()
        return fields[19] if len(fields) > 19 else ""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except OSError:  # it runs, as another user
        pass
    return ""


def owner(folder: Path) -> tuple[int, str] | None:
    """The pid and start time of the arena that made ``folder``, or ``None`` when its owner file cannot be read
    (not one of ours). The file is opened without following a link."""
    try:
        descriptor = os.open(folder / OWNER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as f:
        words = f.read(64).decode("ascii", errors="replace").split()
    if len(words) != 2 or not words[0].isdigit():
        return None
    return int(words[0]), words[1]


SOCKET_PATH_LIMIT = 107
"""The longest path a Unix socket may have (``sun_path`` holds 108 bytes with the closing NUL)."""
_SHORT = Path("/tmp")
"""Where a folder goes whose sockets' paths would be too long under the temporary folder (a deep ``TMPDIR``)."""


def _bases() -> list[Path]:
    return list(dict.fromkeys([Path(tempfile.gettempdir()), _SHORT]))


def remove_leftovers(kind: str, base: Path | None = None) -> None:
    """Removes the ``kind`` folders (of this user) in ``base`` (the temporary folders) of arenas that no longer
    run."""
    prefix = f"{PREFIX}{kind}-"
    entries: list[os.DirEntry[str]] = []
    for folder in [base] if base is not None else _bases():
        try:
            entries += os.scandir(folder)
        except OSError:
            continue
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not entry.is_dir(follow_symlinks=False) or info.st_uid != os.getuid():
            continue  # a link, or another user's: never followed, never touched
        made_by = owner(Path(entry.path))
        if made_by is None:
            continue  # of an arena that did not say it made it
        pid, start = made_by
        now = started(pid)
        if pid != os.getpid() and (now is None or (now or "-") != start):
            shutil.rmtree(entry.path, ignore_errors=True)


def scratch_folder(kind: str, socket_path: int = 0) -> Path:
    """A new private folder (only the arena's user enters it) of ``kind``, with the file that names this arena.
    ``socket_path``: the length of the path of the Unix sockets the folder will hold, below it; when that would
    make them longer than :data:`SOCKET_PATH_LIMIT` under the temporary folder, the folder is made in ``/tmp``."""
    me = os.getpid()
    base = Path(tempfile.gettempdir())
    if len(os.fsencode(base)) + len(PREFIX) + len(kind) + 10 + socket_path > SOCKET_PATH_LIMIT and _SHORT.is_dir():
        base = _SHORT
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-", dir=base))
    (folder / OWNER).write_text(f"{me} {started(me) or '-'}\n", encoding="ascii")
    return folder
