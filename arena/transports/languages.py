"""The language a stdio bot's command suggests, and how that language gets an answer out of its output buffer.

Most languages hold what a program writes to a pipe in a buffer until the buffer fills, so a first stdio bot's
answers often never reach the arena: the fault then asks whether it flushed, in the words of its language
(:func:`flush_hint`). The language is guessed from the command alone, without running anything: its
interpreter (``python``, ``{python}``, ``node``, ``java``, ``go run``, ``cargo run``), a script's name
(``bot.py``, ``bot.js``, ``bot.jar``) or first line (``#!/usr/bin/env python3``), or, for a program of the
bot's own (``./bot``), the sources beside it (``bot.c``, ``main.cpp``, ``main.go`` or ``go.mod``, ``Cargo.toml``
or ``main.rs``, ``Main.java``); when nothing says, or the sources of two languages do, the hint is neutral.
"""

from __future__ import annotations

import enum
import functools
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

__all__ = ["FLUSH_HINTS", "NEUTRAL_HINT", "Language", "flush_hint", "language_of"]


class Language(enum.Enum):
    """A language a stdio bot may be written in, as far as flushing its output goes."""

    PYTHON = "Python"
    NODE = "Node.js"
    JAVA = "Java"
    C = "C"
    CPP = "C++"
    GO = "Go"
    RUST = "Rust"


FLUSH_HINTS = {
    Language.PYTHON: "did it flush its output? (Python: print(..., flush=True), or run python with -u)",
    Language.C: "did it flush its output? (C: fflush(stdout) after each answer, or setvbuf(stdout, NULL, _IOLBF, 0) "
                "once at the start: standard output to a pipe is held until its buffer fills)",
    Language.CPP: "did it flush its output? (C++: std::cout << std::flush after each answer, or end it with "
                  "std::endl rather than \"\\n\"; after printf, fflush(stdout))",
    Language.GO: "did it flush its output? (Go: call Flush() on the bufio.Writer you print with after each answer; "
                 "fmt.Println to os.Stdout is not held)",
    Language.RUST: "did it flush its output? (Rust: io::stdout().flush() after each answer, with use std::io::Write; "
                   "a BufWriter around stdout, or print! without a newline, holds the answer until then)",
    Language.JAVA: "did it flush its output? (Java: System.out.flush() after each answer, or flush() on the "
                   "PrintWriter or BufferedWriter you print with)",
    Language.NODE: "Node.js does not hold process.stdout.write(...) or console.log(...) in a buffer, so a flush is "
                   "not what is missing: check that each answer ends with \"\\n\" and that the code that writes it "
                   "runs (an exception, or a promise that never settles, stops it; the bot's log shows errors)",
}
"""What a late stdio bot is told when its answers may sit in its output buffer, by language."""
NEUTRAL_HINT = ("did it flush its output? Most languages hold what a program writes to a pipe in a buffer until the "
                "buffer fills: flush standard output after each answer line")
"""The hint when the command does not say which language the bot is written in."""

_INTERPRETERS = [
    (re.compile(r"(python|pypy)[0-9.]*(\.exe)?|py|\{python\}"), Language.PYTHON),
    (re.compile(r"(node|nodejs|bun|deno|npm|npx|yarn|pnpm)(\.exe)?"), Language.NODE),
    (re.compile(r"(java|javaw)(\.exe)?"), Language.JAVA),
    (re.compile(r"go(\.exe)?"), Language.GO),
    (re.compile(r"cargo(\.exe)?"), Language.RUST),
]
"""A program's name -> the language of the bot it runs."""
_SCRIPTS = {".py": Language.PYTHON, ".js": Language.NODE, ".mjs": Language.NODE, ".cjs": Language.NODE,
            ".ts": Language.NODE, ".jar": Language.JAVA}
"""A script's suffix -> its language."""
_SOURCES = {".c": Language.C, ".cpp": Language.CPP, ".cc": Language.CPP, ".cxx": Language.CPP,
            ".hpp": Language.CPP, ".go": Language.GO, ".rs": Language.RUST, ".java": Language.JAVA}
"""A source file's suffix -> its language, for a program of the bot's own."""
_PROJECTS = {"go.mod": Language.GO, "Cargo.toml": Language.RUST, "pom.xml": Language.JAVA,
             "build.gradle": Language.JAVA}
"""A project file -> its language."""
_WRAPPERS = {"env", "exec", "nice", "nohup", "stdbuf", "time", "sh", "bash", "dash", "zsh"}
"""Programs that run the next word of the command (after their options): the language is that word's."""
_SCANNED = 200
"""Entries of a folder looked at, at most, for sources."""
_FIRST_LINE = 256
"""Bytes of a program read, at most, for its ``#!`` line."""


def _by_name(word: str) -> Language | None:
    name = os.path.basename(word)
    for pattern, language in _INTERPRETERS:
        if pattern.fullmatch(name):
            return language
    return _SCRIPTS.get(os.path.splitext(name)[1].lower())


def _shebang(path: Path) -> Language | None:
    """The language the ``#!`` line of ``path`` names (``#!/usr/bin/env python3``), if it has one."""
    try:  # without blocking: a named pipe or a terminal where the program should be has no first line to read
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        head = os.read(fd, _FIRST_LINE) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    except OSError:
        return None
    finally:
        os.close(fd)
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", errors="replace").split()
    words = [word for word in words if os.path.basename(word) not in _WRAPPERS and not word.startswith("-")]
    return _by_name(words[0]) if words else None


def _beside(program: Path) -> Language | None:
    """The one language of the sources in the folder of ``program`` (a Rust program's project, from
    ``target/release/``), or ``None`` when there are none, or several languages'."""
    folder = program.parent
    folders = [folder]
    if folder.parent.name == "target":
        folders.append(folder.parent.parent)
    found: set[Language] = set()
    for place in folders:
        for where in (place, place / "src"):
            try:
                with os.scandir(where) as entries:
                    for _, entry in zip(range(_SCANNED), entries, strict=False):
                        language = _PROJECTS.get(entry.name) or _SOURCES.get(os.path.splitext(entry.name)[1].lower())
                        if language is not None:
                            found.add(language)
            except OSError:
                continue
    if found == {Language.C, Language.CPP}:
        return Language.CPP  # C++ sources beside C ones: the program is C++
    return found.pop() if len(found) == 1 else None


def language_of(argv: Sequence[str], folder: Path | None = None) -> Language | None:
    """The language a bot's command suggests (``None``: it does not say). ``folder`` is where the command
    runs (``None``: here); a program's relative path is taken from there."""
    words = [word for word in argv if not re.fullmatch(r"\w+=.*", word)]  # FOO=1 before the program
    while words and (os.path.basename(words[0]) in _WRAPPERS or words[0].startswith("-")):
        words = words[1:]
    if not words:
        return None
    named = _by_name(words[0])
    if named is not None:
        return named
    program = Path(words[0])
    if not program.is_absolute():
        if os.sep not in words[0]:
            return None  # a program found on the PATH: a system's, which says nothing of the bot
        program = (folder or Path.cwd()) / program
    return _shebang(program) or _beside(program)


@functools.lru_cache(maxsize=256)
def flush_hint(argv: tuple[str, ...], folder: Path | None = None) -> str:
    """What to ask a late stdio bot whose command is ``argv``, run in ``folder``, about flushing its output."""
    language = language_of(argv, folder)
    return NEUTRAL_HINT if language is None else FLUSH_HINTS[language]
