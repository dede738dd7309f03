"""The fenced blocks of the README and docs/, and the shell commands in them, as a reader copies them.

Every fence names its language: ``sh`` holds commands alone (a ``\\`` at a line's end continues it, ``#``
starts a comment), ``console`` holds commands after ``$ `` with what they print, ``text`` holds what a
program prints or a folder's tree, and the languages of code and files (``python``, ``toml``, ``json``...).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""The documents a user reads: the README and docs/."""
_FENCE = re.compile(r"( *)```(\w*)")


@dataclasses.dataclass(frozen=True)
class Fence:
    """A fenced block: its language, its text (its indent taken off) and the line of its opening fence."""

    language: str
    text: str
    line: int


@dataclasses.dataclass(frozen=True)
class Command:
    """A command of a ``sh`` or ``console`` block, its continuation lines joined and its comment left out."""

    text: str
    document: str
    """The document's path in the repository."""
    line: int

    def __str__(self) -> str:
        return f"{self.document}:{self.line}: {self.text}"


def fences(document: Path) -> list[Fence]:
    """The fenced blocks of ``document``, in order; an :class:`AssertionError` for a fence left open."""
    found, opened, lines = [], None, []
    for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), start=1):
        match = _FENCE.fullmatch(line)
        if opened is None and match is not None:
            opened, lines = (len(match.group(1)), match.group(2), number), []
        elif opened is not None and match is not None and not match.group(2):
            indent, language, start = opened
            found.append(Fence(language, "".join(f"{text[indent:]}\n" for text in lines), start))
            opened = None
        elif opened is not None:
            lines.append(line)
    assert opened is None, f"{document.name}:{opened[2]}: a fence left open"
    return found


def commands(document: Path) -> list[Command]:
    """The commands of the ``sh`` and ``console`` blocks of ``document``, in order."""
    name = str(document.relative_to(ROOT))
    found = []
    for fence in fences(document):
        if fence.language not in ("sh", "console"):
            continue
        pending, start = "", 0
        for offset, line in enumerate(fence.text.splitlines(), start=1):
            if fence.language == "console" and not pending:
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            if not pending:
                start = fence.line + offset
            line = line.lstrip() if pending else line
            if line.endswith("\\"):
                pending += line[:-1].rstrip() + " "
                continue
            text = uncommented(pending + line).strip()
            pending = ""
            if text:
                found.append(Command(text, name, start))
    return found


def uncommented(line: str) -> str:
    """``line`` without its shell comment: a ``#`` after a blank, outside quotes."""
    quote = ""
    for at, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (at == 0 or line[at - 1].isspace()):
            return line[:at].rstrip()
    return line


def fences_by_heading(document: Path) -> dict[str, list[Fence]]:
    """The fenced blocks of ``document`` under each heading (``### `GET /api/play` `` -> its blocks), by the
    heading's text."""
    found: dict[str, list[Fence]] = {}
    heading, inside = "", False
    blocks = iter(fences(document))
    for line in document.read_text(encoding="utf-8").splitlines():
        if _FENCE.fullmatch(line):
            if not inside:
                found.setdefault(heading, []).append(next(blocks))
            inside = not inside
        elif not inside and re.match(r"#{1,6} ", line):
            heading = line.lstrip("#").strip()
    return found
