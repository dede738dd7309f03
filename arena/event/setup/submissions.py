"""A student's submitted bot: how the arena starts it (its ``bot.json``, or its ``bot.py``), and its copy into
the roster's folder, refused whole when it holds what a sandbox must not be shown.

What is in the folder says how the arena starts the bot:

- ``bot.json``, ``{"kind": "stdio", "command": "node bot.js"}``: a bot over stdin/stdout, started in
  its folder for every seat of every game; ``{"kind": "command", "command": "node bot.js --arena
  {address}"}``: a gRPC bot, whose command's files are read from its folder;
- otherwise ``bot.py``: a Python bot with the bot kit, run as ``{python} bot.py --arena {address}``.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import re
import shlex
import stat
import string
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from arena.errors import ConfigError
from arena.event.setup.entries import check_command
from arena.event.setup.kinds import BotKind

__all__ = ["KINDS", "MANIFEST", "OPEN_FLAGS", "PYTHON_BOT", "SUBMISSION_FILES", "SUBMISSION_LIMIT_MB", "Submission",
           "copy_file", "copy_folder", "read_submission", "refuse_odd", "walk"]

MANIFEST = "bot.json"
"""The file of a submission that says how to start a bot that is not ``bot.py``."""
PYTHON_BOT = "bot.py"
"""The file a Python submission is started from."""
KINDS = (BotKind.STDIO, BotKind.COMMAND)
"""The kinds a ``bot.json`` may name."""
SUBMISSION_LIMIT_MB = 200
"""The largest submission copied, in MiB (a Node.js bot with its ``node_modules`` is about 15)."""
SUBMISSION_FILES = 20_000
"""The most files, folders and links a submission may hold (a Node.js bot's ``node_modules`` holds a few
thousand)."""
MANIFEST_LIMIT = 64 << 10
"""The largest ``bot.json`` read, in bytes."""
_SKIPPED_NAMES = frozenset({".git", "__pycache__"})
"""What a submission's copy leaves out, besides ``*.pyc`` files."""
_CHUNK = 1 << 20
"""Bytes a copy reads at a time."""
OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""How a file of a submission is opened to be copied: never through a link, and never waiting (a named pipe
put in a file's place after the check opens at once, and :func:`os.fstat` then refuses it)."""


@dataclasses.dataclass(frozen=True)
class Submission:
    """How the arena starts a student's submitted bot."""

    kind: str
    """``python`` (``bot.py`` with the kit, over gRPC), ``command`` (gRPC) or ``stdio``."""
    argv: tuple[str, ...]
    """The command line, with its placeholders (``{python}``, ``{address}``) still in it."""
    folder: Path
    """The submission's folder: the one its sandbox shows it, and where a ``stdio`` bot starts."""

    def command_line(self, name: str = "", seed: int = 0) -> list[str]:
        """The command line as the launcher fills it in for the bot ``name`` (by default the folder's) with
        its ``seed``; ``{address}`` stays as it is, the arena choosing it when it listens."""
        values = {"name": name or self.folder.name, "seed": str(seed), "python": sys.executable,
                  "address": "{address}"}
        argv = [part.format(**values) for part in self.argv]
        if argv and argv[0] in ("python", "python3"):
            argv[0] = sys.executable  # as the launcher does: the arena's own Python and its packages
        return argv

    def describe(self, name: str = "", within: Path | None = None) -> str:
        """The kind and the command line exactly as it runs, quoted as a shell would need it:
        ``python: /home/t/arena/.venv/bin/python /home/t/class/submissions/ada/bot.py --arena '{address}'`` (a
        teacher reads there any path it names). With ``within`` (the roster's folder), shorter, to fit a terminal's
        line: a path in that folder from it, and the arena's own Python as ``python``
        (``python: python submissions/ada/bot.py --arena '{address}'``)."""
        argv = self.command_line(name)
        if within is not None:
            argv = ["python" if part == sys.executable else _from(Path(part), within.absolute()) for part in argv]
        return f"{self.kind}: {shlex.join(argv)}"

    def bot_table(self, name: str) -> dict[str, Any]:
        """The submission as a ``[[bots]]`` table of a configuration."""
        key = "stdio" if self.kind == "stdio" else "command"
        return {"name": name, key: list(self.argv), "folder": str(self.folder)}



def read_submission(folder: Path, what: str) -> Submission:
    """How the bot in ``folder`` is started: its ``bot.json``, or its ``bot.py``. The command of a
    ``bot.json`` is checked as a configuration's is (:func:`~arena.event.setup.entries.check_command`) and may
    name no path outside the folder (:func:`_refuse_paths_out`)."""
    folder = folder.absolute()
    manifest = folder / MANIFEST
    if not manifest.is_file():
        if (folder / PYTHON_BOT).is_file():
            return Submission("python", ("{python}", _literal(folder / PYTHON_BOT), "--arena", "{address}"), folder)
        raise ConfigError(f"{what} holds neither {PYTHON_BOT} nor {MANIFEST}: a Python bot is {PYTHON_BOT}; any "
                          f"other says how it starts in {MANIFEST}, e.g. "
                          '{"kind": "stdio", "command": "node bot.js"} (docs/classroom.md)')
    try:
        with manifest.open("rb") as f:
            raw = f.read(MANIFEST_LIMIT + 1)
        if len(raw) > MANIFEST_LIMIT:
            raise ConfigError(f"{what}: {MANIFEST} is over {MANIFEST_LIMIT >> 10} KiB; it holds one short JSON "
                              "object")
        data = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise ConfigError(f"{what}: {MANIFEST} cannot be read as JSON: {err}") from None
    if not isinstance(data, dict) or set(data) - {"kind", "command"} or data.get("kind") not in KINDS:
        raise ConfigError(f"{what}: {MANIFEST} must be one JSON object with \"kind\" ({' or '.join(KINDS)}) and "
                          f"\"command\", e.g. {{\"kind\": \"stdio\", \"command\": \"node bot.js\"}}")
    command = data.get("command")
    argv = command.split() if isinstance(command, str) else command
    if not isinstance(argv, list) or not argv or not all(isinstance(part, str) and part for part in argv):
        raise ConfigError(f"{what}: the \"command\" of {MANIFEST} must be a command line (a string, or a list of "
                          "strings)")
    kind = data["kind"]
    check_command(argv, kind, f"{what}: the \"command\" of {MANIFEST}")
    _refuse_paths_out(argv, what)
    has_address = any("{address}" in part for part in argv)
    if kind == "command" and not has_address:
        raise ConfigError(f"{what}: a command bot connects to the arena: give its command --arena {{address}} (or "
                          "the like), or make it a stdio bot")
    if kind == "command":  # a command bot starts in the arena's folder: the files it names are read from its own
        argv = [_literal(folder / part) if not part.startswith(("-", "{")) and (folder / part).exists() else part
                for part in argv]
    return Submission(kind, tuple(argv), folder)


def _from(path: Path, folder: Path) -> str:
    """``path`` from ``folder`` when it is an absolute path in it, else as it is."""
    return str(path.relative_to(folder)) if path.is_absolute() and path.is_relative_to(folder) else str(path)


def _literal(path: Path) -> str:
    """``path`` as a part of a command template: its braces doubled, so that filling in the placeholders
    gives the path back (a class folder may be called ``class {2026}``)."""
    return str(path).replace("{", "{{").replace("}", "}}")


_PATH_STEPS = re.compile(r"[/\\=:,]")
"""What separates the steps of a path in a command's part (``lib/x``, ``--config=x``, ``-I:x``)."""


def _refuse_paths_out(argv: Sequence[str], what: str) -> None:
    """Refuses a ``bot.json`` command naming a path outside its folder: a ``..`` step, or an absolute
    path (the sandbox would not show it; the refusal keeps the listing from misleading the teacher)."""
    for part in argv:
        text = "".join(literal for literal, *_ in string.Formatter().parse(part))  # the placeholders are the arena's
        if ".." in _PATH_STEPS.split(text) or re.search(r"(^|=)[/~]", text):
            raise ConfigError(f"{what}: the part {part!r} of the \"command\" of {MANIFEST} names a path outside the "
                              "submission: name its files from its own folder (bot.js, lib/x.js) and the program by "
                              "its name (node, python) or {python}")


def refuse_odd(path: Path, mode: int) -> None:
    """Refuses anything but a file, a folder or a link: a device or a named pipe may never end, and a
    socket is no file at all."""
    kinds = ((stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISFIFO, "a named pipe"),
             (stat.S_ISSOCK, "a socket"))
    what = next((name for test, name in kinds if test(mode)), "")
    if what or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
        raise ConfigError(f"{path} is {what or 'not a file'}: a submission holds only files, folders and links "
                          "within it; remove it from the folder")


def _refuse_linked(path: Path, links: int) -> None:
    """Refuses a file with other names: a hard link may be a file of anyone's, from outside the folder."""
    if links > 1:
        raise ConfigError(f"{path} has other names (it is a hard link, one of {links} names of the same file): it may "
                          "be a file from outside the folder; put a copy of the file itself in its place")


@dataclasses.dataclass(frozen=True)
class _Entry:
    """One entry of a submitted folder, as :func:`_walk` found it."""

    relative: Path
    """Its path in the folder."""
    folder: int
    """A descriptor of the folder it is in (valid while the walk is at that folder)."""
    stat: os.stat_result
    """Its ``lstat``."""
    link: str = ""
    """What it links to, when it is a link."""


def walk(source: Path) -> Iterator[_Entry]:
    """The entries of the folder ``source`` that a copy takes, each folder before what it holds, with
    every refusal in a sentence naming the file: a device, named pipe or socket; a hard link; a link to
    anything outside the folder; more than :data:`SUBMISSION_FILES` entries or :data:`SUBMISSION_LIMIT_MB`
    MiB in all. Nothing is followed or opened: each entry is seen through ``lstat``."""
    root = source.resolve()
    count = size = 0
    for top, folders, files, top_fd in os.fwalk(source, onerror=_raise):
        folders[:] = [f for f in folders if f not in _SKIPPED_NAMES]
        here = Path(top)
        for name in sorted([*folders, *files]):
            if name in _SKIPPED_NAMES or name.endswith(".pyc"):
                continue
            path = here / name
            status = os.lstat(name, dir_fd=top_fd)
            refuse_odd(path, status.st_mode)
            link = ""
            if stat.S_ISLNK(status.st_mode):
                link = os.readlink(name, dir_fd=top_fd)
                inside = os.path.normpath(path.parent.relative_to(source) / link)  # as the copy will read it
                leaves = inside == ".." or inside.startswith("../")
                if Path(link).is_absolute() or leaves or not path.resolve().is_relative_to(root):
                    raise ConfigError(f"{path} is a link to {link}, outside the submission: copy the file itself "
                                      "into the folder")
            elif stat.S_ISREG(status.st_mode):
                _refuse_linked(path, status.st_nlink)
                size += status.st_size
            count += 1
            if count > SUBMISSION_FILES:
                raise ConfigError(f"{source} holds more than {SUBMISSION_FILES} entries; a submission may hold "
                                  f"{SUBMISSION_FILES} files and folders")
            if size > SUBMISSION_LIMIT_MB << 20:
                raise ConfigError(f"{source} holds more than {SUBMISSION_LIMIT_MB} MiB; a submission may hold "
                                  f"{SUBMISSION_LIMIT_MB} MiB")
            yield _Entry(path.relative_to(source), top_fd, status, link)


def _raise(err: OSError) -> None:
    """Stops a walk at a folder it cannot read (a walk would pass it by, and the copy lack it)."""
    raise err


def copy_folder(source: Path, target: Path) -> None:
    """Copies the folder ``source`` into the new folder ``target`` as :func:`_walk` takes it (checked
    again as it goes: the folder may change after its first walk), reading at most
    :data:`SUBMISSION_LIMIT_MB` MiB in all."""
    target.mkdir()
    budget = SUBMISSION_LIMIT_MB << 20
    for entry in walk(source):
        path, out = source / entry.relative, target / entry.relative
        try:
            if stat.S_ISDIR(entry.stat.st_mode):
                out.mkdir()
            elif stat.S_ISLNK(entry.stat.st_mode):
                os.symlink(entry.link, out)
            else:
                descriptor = os.open(entry.relative.name, OPEN_FLAGS, dir_fd=entry.folder)
                try:
                    budget -= copy_file(path, descriptor, out, budget)
                finally:
                    os.close(descriptor)
        except OSError as err:
            if err.errno == errno.ELOOP:  # O_NOFOLLOW met a link put in the file's place after the walk
                raise ConfigError(f"{path} changed while it was copied: submit the folder again") from None
            raise _copy_error(path, target, err) from None


def copy_file(path: Path, descriptor: int, out: Path, budget: int) -> int:
    """Copies the open file ``descriptor`` (of ``path``) to the new file ``out``, reading at most
    ``budget`` bytes (a file may grow after it was counted); the number of bytes copied."""
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode):
        refuse_odd(path, status.st_mode)
    _refuse_linked(path, status.st_nlink)
    copied = 0
    try:
        with out.open("xb") as sink:
            while chunk := os.read(descriptor, min(_CHUNK, budget - copied + 1)):
                copied += len(chunk)
                if copied > budget:
                    raise ConfigError(f"{path} grew past the limit while it was copied: a submission may hold "
                                      f"{SUBMISSION_LIMIT_MB} MiB")
                sink.write(chunk)
        out.chmod(stat.S_IMODE(status.st_mode) & 0o755)  # its own and executable bits, nobody else's writing
    except OSError as err:
        raise _copy_error(path, out.parent, err) from None
    return copied


def _copy_error(path: Path, target: Path, err: OSError) -> OSError:
    """The system's refusal to copy ``path`` (a full disk, a file it may not read), naming that file."""
    return OSError(err.errno, f"cannot copy it into {target}: {err.strerror or err}", str(path))
