"""A class roster: the students of a contest, their tokens (kept as SHA-256 digests only) and the bots
they submitted; a configuration that names it (``[tournament] roster = "roster.toml"``) plays every
student (``docs/classroom.md``).

The roster is a TOML file, ``roster.toml`` by default, written by ``callbreak-arena roster ...``, one
``[[students]]`` table per student, in the order they were added::

    [[students]]
    name = "alice"                 # a bot name: 1-40 letters, digits, spaces or ._+#-
    display = "Alice Liddell"      # optional: shown on the live page
    token_sha256 = "7c0d3f..."     # the digest of the token handed to alice; absent once revoked
    revoked = true                 # only once revoked

Submissions live beside the roster, a folder per student: ``submissions/<name>/``. What is in the
folder says how the arena starts the bot:

- ``bot.json``, ``{"kind": "stdio", "command": "node bot.js"}``: a bot over stdin/stdout, started in
  its folder for every seat of every game; ``{"kind": "command", "command": "node bot.js --arena
  {address}"}``: a gRPC bot, whose command's files are read from its folder;
- otherwise ``bot.py``: a Python bot with the bot kit, run as ``{python} bot.py --arena {address}``.

A student plays as their submission when there is one (launched by the arena, in its sandbox, with
a fresh token of the arena's: their own token then admits nothing), and otherwise as a remote bot
that connects with their token. A revoked student with no submission does not play.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import shutil
import time
import tomllib
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.errors import ConfigError
from arena.event.config import is_name
from arena.event.store import write_atomic
from arena.net.tokens import is_sha256, new_token, token_sha256

__all__ = [
    "DISPLAY_LIMIT",
    "KINDS",
    "MANIFEST",
    "PYTHON_BOT",
    "ROSTER_FILE",
    "SUBMISSIONS",
    "SUBMISSION_LIMIT_MB",
    "Roster",
    "Student",
    "Submission",
    "check_display",
    "check_name",
    "read_names",
    "read_roster",
    "read_submission",
    "submitted_text",
    "write_tokens",
]

ROSTER_FILE = "roster.toml"
"""The roster's default file name."""
SUBMISSIONS = "submissions"
"""The folder beside the roster that holds a folder per student who submitted a bot."""
MANIFEST = "bot.json"
"""The file of a submission that says how to start a bot that is not ``bot.py``."""
PYTHON_BOT = "bot.py"
"""The file a Python submission is started from."""
KINDS = ("stdio", "command")
"""The kinds a ``bot.json`` may name."""
DISPLAY_LIMIT = 80
"""Characters a display name may have."""
SUBMISSION_LIMIT_MB = 200
"""The largest submission copied, in MiB (a Node.js bot with its ``node_modules`` is about 15)."""
_SKIPPED = shutil.ignore_patterns(".git", "__pycache__", "*.pyc")
"""What a submission's copy leaves out."""
_HEADER = ("# The class roster of callbreak-arena (docs/classroom.md): one [[students]] table per student.\n"
           "# Tokens are kept as SHA-256 digests only. Change it with `callbreak-arena roster ...`.\n")
_STUDENT_KEYS = {"name", "display", "token_sha256", "revoked"}
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Direction controls, which could make a display name show another's (joiners, which some scripts need, stay)."""


@dataclasses.dataclass(frozen=True)
class Submission:
    """How the arena starts a student's submitted bot."""

    kind: str
    """``python`` (``bot.py`` with the kit, over gRPC), ``command`` (gRPC) or ``stdio``."""
    argv: tuple[str, ...]
    """The command line, with its placeholders (``{python}``, ``{address}``) still in it."""
    folder: Path
    """The submission's folder: the one its sandbox shows it, and where a ``stdio`` bot starts."""

    def describe(self) -> str:
        """The submission in a few words: ``python (bot.py)``, ``stdio: node bot.js``."""
        if self.kind == "python":
            return f"python ({PYTHON_BOT})"
        shown = [Path(part).name if Path(part).is_absolute() and Path(part).is_relative_to(self.folder) else part
                 for part in self.argv]
        return f"{self.kind}: {' '.join(shown)}"

    def bot_table(self, name: str) -> dict[str, Any]:
        """The submission as a ``[[bots]]`` table of a configuration."""
        key = "stdio" if self.kind == "stdio" else "command"
        return {"name": name, key: list(self.argv), "folder": str(self.folder)}


@dataclasses.dataclass(frozen=True)
class Student:
    """One student of the roster."""

    name: str
    """Their bot's name, unique on the roster."""
    display: str = ""
    """Their name as the live page shows it (the bot's name when empty)."""
    token_sha256: str = ""
    """The digest of their token; empty once revoked."""
    revoked: bool = False

    @property
    def shown(self) -> str:
        """The name the live page shows."""
        return self.display or self.name

    def to_toml(self) -> str:
        lines = ["[[students]]", f"name = {_toml_string(self.name)}"]
        if self.display:
            lines.append(f"display = {_toml_string(self.display)}")
        if self.token_sha256:
            lines.append(f'token_sha256 = "{self.token_sha256}"')
        if self.revoked:
            lines.append("revoked = true")
        return "\n".join(lines) + "\n"


class Roster:
    """A roster file and the submissions beside it."""

    def __init__(self, path: Path, students: Sequence[Student] = ()) -> None:
        self.path = path.absolute()
        self.students: list[Student] = list(students)

    @property
    def submissions(self) -> Path:
        """The folder of the submissions (``submissions/`` beside the roster)."""
        return self.path.parent / SUBMISSIONS

    def student(self, name: str) -> Student:
        """The student of that name; a :class:`ConfigError` that says so when there is none."""
        for student in self.students:
            if student.name == name:
                return student
        raise ConfigError(f"{name!r} is not on the roster {self.path}: add them first (`callbreak-arena roster "
                          f"add {name}`)")

    def __contains__(self, name: object) -> bool:
        return any(student.name == name for student in self.students)

    def display_names(self) -> dict[str, str]:
        """Bot name -> display name, for the students who have one."""
        return {s.name: s.display for s in self.students if s.display}

    # -- changes (each written at once with :meth:`save`) ------------------------------------------

    def add(self, name: str, display: str = "") -> str:
        """Adds a student and returns their new token (the roster keeps its digest only)."""
        check_name(name)
        if name in self:
            raise ConfigError(f"{name!r} is already on the roster; `callbreak-arena roster token {name}` gives "
                              "them a new token")
        token = new_token()
        self.students.append(Student(name, check_display(display), token_sha256(token)))
        return token

    def reissue(self, name: str) -> str:
        """Gives a student a new token (the old one, if any, admits nothing any more) and returns it."""
        student = self.student(name)
        token = new_token()
        self._replace(dataclasses.replace(student, token_sha256=token_sha256(token), revoked=False))
        return token

    def revoke(self, name: str) -> None:
        """Forgets a student's token: it admits nothing any more (a submission still plays)."""
        student = self.student(name)
        self._replace(dataclasses.replace(student, token_sha256="", revoked=True))

    def _replace(self, student: Student) -> None:
        self.students = [student if s.name == student.name else s for s in self.students]

    def save(self) -> None:
        """Writes the roster file, atomically."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, _HEADER + "".join("\n" + s.to_toml() for s in self.students))

    # -- submissions ---------------------------------------------------------------------------------

    def submission(self, name: str) -> Submission | None:
        """The bot a student submitted, or ``None``; a :class:`ConfigError` when its folder holds
        neither ``bot.json`` nor ``bot.py``, or a ``bot.json`` that is wrong."""
        folder = self.submissions / name
        if not folder.is_dir():
            return None
        return read_submission(folder, f"the submission of {name!r} ({folder})")

    def submitted_at(self, name: str) -> float | None:
        """When a student's bot was submitted (``time.time()``), or ``None``."""
        folder = self.submissions / name
        return folder.stat().st_mtime if folder.is_dir() else None

    def submit(self, name: str, source: Path) -> Submission:
        """Copies a student's bot (a ``.py`` file, which becomes ``bot.py``, or a folder) into
        ``submissions/<name>/``, in place of any earlier submission."""
        self.student(name)
        if not source.exists():
            raise ConfigError(f"{source} does not exist: give the student's bot.py or its folder")
        if source.is_file() and source.suffix != ".py":
            raise ConfigError(f"{source} is not a .py file: a bot in another language is submitted as a folder with "
                              f"its {MANIFEST} (docs/classroom.md)")
        if source.is_dir():
            if self.submissions.resolve().is_relative_to(source.resolve()):
                raise ConfigError(f"{source} holds the roster's submissions: give the folder of the student's bot")
            _check_folder(source)
            read_submission(source, str(source))
        self.submissions.mkdir(parents=True, exist_ok=True)
        incoming = self.submissions / f".{name}.incoming"
        outgoing = self.submissions / f".{name}.replaced"
        for leftover in (incoming, outgoing):
            shutil.rmtree(leftover, ignore_errors=True)
        try:
            if source.is_dir():
                shutil.copytree(source, incoming, symlinks=True, ignore=_SKIPPED)
            else:
                incoming.mkdir()
                shutil.copyfile(source, incoming / PYTHON_BOT)
            final = self.submissions / name
            if final.exists():
                final.rename(outgoing)
            incoming.rename(final)
            os.utime(final)  # its time is the submission's (the copy kept the source's)
        finally:
            shutil.rmtree(incoming, ignore_errors=True)
            shutil.rmtree(outgoing, ignore_errors=True)
        submission = self.submission(name)
        assert submission is not None
        return submission

    def bot_tables(self) -> list[dict[str, Any]]:
        """A ``[[bots]]`` table per student who plays: the submission, or a remote bot with the student's
        token (a revoked student without a submission plays no more)."""
        tables = []
        for student in self.students:
            submission = self.submission(student.name)
            if submission is not None:
                tables.append(submission.bot_table(student.name))
            elif student.token_sha256:
                tables.append({"name": student.name, "remote": True, "token_sha256": student.token_sha256})
        return tables


def check_name(name: str) -> str:
    """``name`` when it may name a bot, else a :class:`ConfigError` that says what a name may be."""
    if not is_name(name):
        raise ConfigError(f"{name!r} cannot be a name: a name is 1-40 letters, digits, spaces or ._+#- characters, "
                          "beginning with a letter or a digit")
    return name


def check_display(display: str) -> str:
    """A display name, trimmed, when it is one line of at most :data:`DISPLAY_LIMIT` characters."""
    display = display.strip()
    if len(display) > DISPLAY_LIMIT:
        raise ConfigError(f"the display name {display[:20]!r}... has {len(display)} characters; at most "
                          f"{DISPLAY_LIMIT}")
    if any(unicodedata.category(c) == "Cc" or c in _BIDI for c in display):
        raise ConfigError(f"the display name {display!r} holds control characters: give it on one line, as it "
                          "should be shown")
    return display


def read_roster(path: Path) -> Roster:
    """Reads a roster file; a :class:`ConfigError` names what is wrong in it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"there is no roster at {path}: `callbreak-arena roster add NAME` starts one (or give "
                          "--roster FILE)") from None
    except OSError as err:
        raise ConfigError(f"cannot read the roster {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"the roster {path} is not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"the roster {path} is not valid TOML: {err}") from None
    unknown = sorted(set(data) - {"students"})
    if unknown:
        raise ConfigError(f"the roster {path} has an unknown key {unknown[0]!r}: it holds [[students]] tables only")
    items = data.get("students", [])
    if not isinstance(items, list):
        raise ConfigError(f"in the roster {path}, students must be [[students]] tables")
    students: list[Student] = []
    seen: dict[str, str] = {}
    for number, item in enumerate(items, start=1):
        students.append(_student(item, f"the roster {path}, students[{number}]"))
        student = students[-1]
        if student.name in seen:
            raise ConfigError(f"the roster {path} names {student.name!r} twice")
        if student.token_sha256 and student.token_sha256 in seen.values():
            raise ConfigError(f"in the roster {path}, {student.name!r} has the token of another student: give them a "
                              f"new one (`callbreak-arena roster token {student.name}`)")
        seen[student.name] = student.token_sha256
    return Roster(path, students)


def _student(item: Any, where: str) -> Student:
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where} must be a table")
    unknown = sorted(set(item) - _STUDENT_KEYS)
    if unknown:
        keys = ", ".join(sorted(_STUDENT_KEYS))
        raise ConfigError(f"{where} has an unknown key {unknown[0]!r}; the keys are: {keys}")
    name, display, digest, revoked = (item.get("name"), item.get("display", ""), item.get("token_sha256", ""),
                                      item.get("revoked", False))
    if not isinstance(name, str):
        raise ConfigError(f"{where} needs a name")
    if not isinstance(display, str) or not isinstance(digest, str) or not isinstance(revoked, bool):
        raise ConfigError(f"{where} ({name!r}): display and token_sha256 are strings, revoked is true or false")
    check_name(name)
    try:
        display = check_display(display)
    except ConfigError as err:
        raise ConfigError(f"{where} ({name!r}): {err}") from None
    if digest and not is_sha256(digest.lower()):
        raise ConfigError(f"{where} ({name!r}): token_sha256 must be 64 hexadecimal digits")
    return Student(name, display, digest.lower(), revoked)


def read_submission(folder: Path, what: str) -> Submission:
    """How the bot in ``folder`` is started: its ``bot.json``, or its ``bot.py``."""
    folder = folder.absolute()
    manifest = folder / MANIFEST
    if not manifest.is_file():
        if (folder / PYTHON_BOT).is_file():
            return Submission("python", ("{python}", str(folder / PYTHON_BOT), "--arena", "{address}"), folder)
        raise ConfigError(f"{what} holds neither {PYTHON_BOT} nor {MANIFEST}: a Python bot is {PYTHON_BOT}; any "
                          f"other says how it starts in {MANIFEST}, e.g. "
                          '{"kind": "stdio", "command": "node bot.js"} (docs/classroom.md)')
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
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
    has_address = any("{address}" in part for part in argv)
    if kind == "stdio" and has_address:
        raise ConfigError(f"{what}: a stdio bot has no {{address}}: the arena talks to it over its standard input "
                          "and output; remove {address} from its command")
    if kind == "command" and not has_address:
        raise ConfigError(f"{what}: a command bot connects to the arena: give its command --arena {{address}} (or "
                          "the like), or make it a stdio bot")
    if kind == "command":  # a command bot starts in the arena's folder: the files it names are read from its own
        argv = [str(folder / part) if not part.startswith(("-", "{")) and (folder / part).exists() else part
                for part in argv]
    return Submission(kind, tuple(argv), folder)


def _check_folder(source: Path) -> None:
    """Refuses a folder whose copy would take files from outside it (a link out of it) or be too big."""
    size = 0
    root = source.resolve()
    for directory, folders, files in os.walk(source):
        folders[:] = [f for f in folders if f not in (".git", "__pycache__")]
        for entry in [*folders, *files]:
            path = Path(directory) / entry
            if path.is_symlink() and (Path(os.readlink(path)).is_absolute()
                                      or not path.resolve().is_relative_to(root)):
                raise ConfigError(f"{path} is a link to {os.readlink(path)}, outside the submission: copy the file "
                                  "itself into the folder")
            if not path.is_symlink() and path.is_file():
                size += path.stat().st_size
    if size > SUBMISSION_LIMIT_MB << 20:
        raise ConfigError(f"{source} holds {size >> 20} MiB; a submission may hold {SUBMISSION_LIMIT_MB} MiB")


def read_names(path: Path) -> list[tuple[str, str]]:
    """The students of a CSV file, ``name[,display]`` per line (a first line ``name,display`` is a
    header), checked: a :class:`ConfigError` names the line of the first problem."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a spreadsheet's UTF-8 starts with a byte-order mark
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text: save it as CSV UTF-8") from None
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    for number, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = [cell.strip() for cell in row]
        while cells and not cells[-1]:
            cells.pop()
        if not cells:
            continue
        if number == 1 and cells[0].lower() == "name":
            continue
        if len(cells) > 2:
            raise ConfigError(f"{path}, line {number}: {len(cells)} columns; the columns are name and (optional) "
                              "display name")
        try:
            name = check_name(cells[0])
            display = check_display(cells[1] if len(cells) > 1 else "")
        except ConfigError as err:
            raise ConfigError(f"{path}, line {number}: {err}") from None
        if name in seen:
            raise ConfigError(f"{path}, line {number}: {name!r} is named twice")
        seen.add(name)
        rows.append((name, display))
    return rows


def write_tokens(path: Path, rows: Iterable[tuple[str, str, str]]) -> None:
    """Writes ``name,display,token`` lines to a new file only its owner can read (mode 0600); a file
    already there is refused (:class:`FileExistsError`), never overwritten."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["name", "display", "token"])
        writer.writerows(rows)


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def submitted_text(moment: float | None) -> str:
    """When a submission was made, for a listing."""
    return "-" if moment is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(moment))
