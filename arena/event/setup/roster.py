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

How a submission is read and copied in is :mod:`arena.event.setup.submissions`' job.

A student plays as their submission when there is one (launched by the arena, in its sandbox, with
a fresh token of the arena's: their own token then admits nothing), and otherwise as a remote bot
that connects with their token. A revoked student with no submission does not play.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import shutil
import time
import tomllib
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.errors import ConfigError
from arena.event.setup.defaults import ROSTER_FILE
from arena.event.setup.entries import is_name
from arena.event.setup.submissions import (
    MANIFEST,
    OPEN_FLAGS,
    PYTHON_BOT,
    SUBMISSION_LIMIT_MB,
    Submission,
    copy_file,
    copy_folder,
    read_submission,
    refuse_odd,
    walk,
)
from arena.records.store import write_atomic
from arena.transports.grpc.tokens import is_sha256, new_token, token_sha256

__all__ = [
    "DISPLAY_LIMIT",
    "ROSTER_FILE",
    "SUBMISSIONS",
    "Roster",
    "Student",
    "check_display",
    "check_name",
    "read_names",
    "read_roster",
    "spreadsheet_cell",
    "submitted_text",
    "tokens_csv",
    "write_tokens",
]

SUBMISSIONS = "submissions"
"""The folder beside the roster that holds a folder per student who submitted a bot."""
DISPLAY_LIMIT = 80
"""Characters a display name may have."""
CSV_LIMIT_MB = 16
"""The largest students' CSV file read, in MiB."""
CSV_LINE_LIMIT = 1024
"""Characters a line of a students' CSV file may have (a name and a display name take at most 121)."""
_FORMULA = ("=", "+", "-", "@", "\t", "\r")
"""What a cell a spreadsheet would run as a formula begins with (OWASP, "CSV Injection")."""
_HEADER = ("# The class roster of callbreak-arena (docs/classroom.md): one [[students]] table per student.\n"
           "# Tokens are kept as SHA-256 digests only. Change it with `callbreak-arena roster ...`.\n")
_STUDENT_KEYS = {"name", "display", "token_sha256", "revoked"}
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Direction controls, which could make a display name show another's (joiners, which some scripts need, stay)."""
_BREAKS = {"Cc", "Zl", "Zp"}
"""Unicode categories of control characters and line and paragraph separators: never in a name or display name."""


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

    def find(self, name: str) -> Student | None:
        """The student of that name, whatever its case and Unicode form, or ``None``."""
        key = _key(name)
        return next((student for student in self.students if _key(student.name) == key), None)

    def student(self, name: str) -> Student:
        """The student of that name (whatever its case); a :class:`ConfigError` that says so when there is none."""
        student = self.find(name)
        if student is None:
            raise ConfigError(f"{name!r} is not on the roster {self.path}: add them first (`callbreak-arena roster "
                              f"add {name}`)")
        return student

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def display_names(self) -> dict[str, str]:
        """Bot name -> display name, for the students who have one."""
        return {s.name: s.display for s in self.students if s.display}

    # -- changes (each written at once with :meth:`save`) ------------------------------------------

    def add(self, name: str, display: str = "") -> str:
        """Adds a student and returns their new token (the roster keeps its digest only)."""
        name = check_name(name)
        there = self.find(name)
        if there is not None:
            also = "" if there.name == name else f" as {there.name!r} (names differing only in case are one name)"
            raise ConfigError(f"{name!r} is already on the roster{also}; `callbreak-arena roster token {there.name}` "
                              "gives them a new token")
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
        ``submissions/<name>/``, in place of any earlier submission.

        A folder is walked whole before anything is copied (:func:`_walk`): it may hold files, folders and
        links that stay inside it, no more than :data:`SUBMISSION_LIMIT_MB` MiB in :data:`SUBMISSION_FILES`
        entries; the copy then reads each file through a bounded reader. A partial copy never stays behind.
        """
        name = self.student(name).name
        if not source.exists():
            raise ConfigError(f"{source} does not exist: give the student's bot.py or its folder")
        if source.is_dir():
            if self.submissions.resolve().is_relative_to(source.resolve()):
                raise ConfigError(f"{source} holds the roster's submissions: give the folder of the student's bot")
            for _ in walk(source):  # every refusal before anything is copied
                pass
            read_submission(source, str(source))
        elif source.suffix != ".py":
            raise ConfigError(f"{source} is not a .py file: a bot in another language is submitted as a folder with "
                              f"its {MANIFEST} (docs/classroom.md)")
        self._refuse_twin(name)
        self.submissions.mkdir(parents=True, exist_ok=True)
        incoming = self.submissions / f".{name}.incoming"
        outgoing = self.submissions / f".{name}.replaced"
        for leftover in (incoming, outgoing):
            shutil.rmtree(leftover, ignore_errors=True)
        try:
            if source.is_dir():
                copy_folder(source, incoming)
            else:
                incoming.mkdir()
                # The teacher's own link to a student's file is followed (it names the one file to take).
                refuse_odd(source, source.stat().st_mode)
                descriptor = os.open(source, OPEN_FLAGS & ~os.O_NOFOLLOW)
                try:
                    copy_file(source, descriptor, incoming / PYTHON_BOT, SUBMISSION_LIMIT_MB << 20)
                finally:
                    os.close(descriptor)
            read_submission(incoming, str(source))  # what was copied is what was checked
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

    def _refuse_twin(self, name: str) -> None:
        """Refuses a folder of ``submissions/`` whose name differs from ``name`` only in case: on some file
        systems the two are one folder, and a listing would show one student's bot as another's."""
        if not self.submissions.is_dir():
            return
        for entry in os.listdir(self.submissions):
            if entry != name and not entry.startswith(".") and _key(entry) == _key(name):
                raise ConfigError(f"{self.submissions} holds {entry!r}, which differs from {name!r} only in case (a "
                                  "folder of a student taken off the roster?): some file systems take the two for "
                                  "one folder; remove or rename it first")

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
    """``name`` in Unicode's NFKC form when it may name a bot, else a :class:`ConfigError` that says what a
    name may be. NFKC makes a name typed in full-width letters, or with a no-break space, the name of
    plain letters and spaces; two names are then one when they differ only in case (:func:`_key`)."""
    normal = unicodedata.normalize("NFKC", name)
    if normal != normal.strip() and not any(unicodedata.category(c) in _BREAKS for c in normal):
        raise ConfigError(f"{name!r} has spaces before or after it: a name is taken as given, never trimmed, and "
                          f"{normal.strip()!r} would list the same; give it without them")
    if not is_name(normal):
        raise ConfigError(f"{name!r} cannot be a name: a name is 1-40 letters, digits, spaces or ._+#- characters, "
                          "beginning with a letter or a digit")
    return normal


def check_display(display: str) -> str:
    """A display name in Unicode's NFC form (letters and their accents composed, as they are shown),
    trimmed, when it is one line of at most :data:`DISPLAY_LIMIT` characters."""
    display = unicodedata.normalize("NFC", display).strip()
    if len(display) > DISPLAY_LIMIT:
        raise ConfigError(f"the display name {display[:20]!r}... has {len(display)} characters; at most "
                          f"{DISPLAY_LIMIT}")
    if any(unicodedata.category(c) in _BREAKS or c in _BIDI for c in display):
        raise ConfigError(f"the display name {display!r} holds control characters: give it on one line, as it "
                          "should be shown")
    return display


def _key(name: str) -> str:
    """What two names share when they are one: the same letters, whatever their case and Unicode form."""
    return unicodedata.normalize("NFKC", name).casefold()


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
    names: dict[str, str] = {}
    digests: set[str] = set()
    for number, item in enumerate(items, start=1):
        students.append(_student(item, f"the roster {path}, students[{number}]"))
        student = students[-1]
        first = names.get(_key(student.name))
        if first is not None:
            also = "" if first == student.name else f" (as {student.name!r} too: names differing only in case are one)"
            raise ConfigError(f"the roster {path} names {first!r} twice{also}")
        if student.token_sha256 and student.token_sha256 in digests:
            raise ConfigError(f"in the roster {path}, {student.name!r} has the token of another student: give them a "
                              f"new one (`callbreak-arena roster token {student.name}`)")
        names[_key(student.name)] = student.name
        digests.add(student.token_sha256)
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
    name = check_name(name)
    try:
        display = check_display(display)
    except ConfigError as err:
        raise ConfigError(f"{where} ({name!r}): {err}") from None
    if digest and not is_sha256(digest.lower()):
        raise ConfigError(f"{where} ({name!r}): token_sha256 must be 64 hexadecimal digits")
    return Student(name, display, digest.lower(), revoked)



def read_names(path: Path) -> list[tuple[str, str]]:
    """The students of a CSV file, ``name[,display]`` per line (a first line ``name,display`` is a
    header), checked: a :class:`ConfigError` names the line of the first problem.

    A field is one line: a quoted field that runs over two lines is refused, not joined; a line may have
    :data:`CSV_LINE_LIMIT` characters, and the file :data:`CSV_LIMIT_MB` MiB. A name is taken as it is
    (:func:`check_name` refuses spaces around it); a display name is trimmed."""
    try:
        with path.open("rb") as f:
            raw = f.read((CSV_LIMIT_MB << 20) + 1)
        text = raw.decode("utf-8-sig")  # a spreadsheet's UTF-8 starts with a byte-order mark
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text: save it as CSV UTF-8") from None
    if len(raw) > CSV_LIMIT_MB << 20:
        raise ConfigError(f"{path} is over {CSV_LIMIT_MB} MiB: a list of students is a line per student")
    rows: list[tuple[str, str]] = []
    seen: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        cells = _csv_cells(line.removesuffix("\r"), f"{path}, line {number}")
        while cells and not cells[-1].strip():
            cells.pop()
        if not cells:
            continue
        if number == 1 and cells[0].strip().lower() == "name":
            continue
        if len(cells) > 2:
            raise ConfigError(f"{path}, line {number}: {len(cells)} columns; the columns are name and (optional) "
                              "display name")
        try:
            name = check_name(cells[0])
            display = check_display(cells[1] if len(cells) > 1 else "")
        except ConfigError as err:
            raise ConfigError(f"{path}, line {number}: {err}") from None
        if _key(name) in seen:
            first, line_number = seen[_key(name)]
            why = "is named twice" if first == name else (f"is {first!r} of line {line_number}: names differing only "
                                                          "in case are one name")
            raise ConfigError(f"{path}, line {number}: {name!r} {why}")
        seen[_key(name)] = (name, number)
        rows.append((name, display))
    return rows


def _csv_cells(line: str, where: str) -> list[str]:
    """The cells of one line of CSV; a :class:`ConfigError` beginning with ``where`` when it is not one."""
    if len(line) > CSV_LINE_LIMIT:
        raise ConfigError(f"{where}: {len(line)} characters; a line is a name and a display name, at most "
                          f"{CSV_LINE_LIMIT} characters")
    try:
        return next(csv.reader([line], strict=True), [])
    except csv.Error as err:
        if line.count('"') % 2:
            raise ConfigError(f"{where}: a quoted field runs over two lines (or its closing quote is missing): a "
                              "display name is one line") from None
        raise ConfigError(f"{where}: cannot be read as CSV ({err})") from None


def write_tokens(path: Path, rows: Iterable[tuple[str, str, str]]) -> None:
    """Writes ``name,display,token`` lines, ending in LF, to a new file only its owner can read (mode
    0600); a file already there is refused (:class:`FileExistsError`), never overwritten. A name or
    display name that a spreadsheet would run as a formula is written after a single quote
    (:func:`spreadsheet_cell`)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as f:
        f.write(tokens_csv(rows))


def tokens_csv(rows: Iterable[tuple[str, str, str]]) -> str:
    """The ``name,display,token`` lines of :func:`write_tokens` (LF, formulas escaped), as text."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", "display", "token"])
    writer.writerows((spreadsheet_cell(name), spreadsheet_cell(display), token) for name, display, token in rows)
    return out.getvalue()


def spreadsheet_cell(text: str) -> str:
    """``text`` as a spreadsheet shows it rather than runs it: after a single quote when it begins as a
    formula does (``=``, ``+``, ``-``, ``@``, a tab or a carriage return), as OWASP's "CSV Injection"
    advises; a spreadsheet shows the text without the quote."""
    return "'" + text if text.startswith(_FORMULA) else text


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
