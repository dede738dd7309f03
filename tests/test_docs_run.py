"""The commands of the docs run as written, from a fresh clone, with no virtualenv activated.

Every command of the README and docs/ names a program a fresh clone has without an activated virtualenv
(``.venv/bin/callbreak-arena``, ``.venv/bin/python``: the README's ``make`` made ``.venv``), and the
subcommands and options of ``callbreak-arena`` it gives are ones the command line takes.

The commands of docs/classroom.md, docs/ladder.md, docs/research.md and docs/writing-a-bot.md are then run,
in the order of their document, as processes of their own in a copy of the clone (its files linked, its
``.venv`` the one running these tests, ``results/`` its own), with a ``PATH`` that holds no virtualenv: the
quick ones (:func:`quick`) in ``make test``, and those that take longer too in ``make soak``. A command
that is not run is listed in :data:`NOT_RUN` with the reason, and a command that takes longer in
:data:`LONG`: a new command that is neither quick nor listed fails here until it is classified.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.cli import build_parser
from arena.event.setup.roster import Roster
from tests.helpers.docs import DOCUMENTS, ROOT, Command, commands, fences

RUN = [ROOT / "docs" / name for name in ("classroom.md", "ladder.md", "research.md", "writing-a-bot.md")]
"""The documents whose commands are run."""
VENV = ".venv/bin/"
SYSTEM = {"git", "make", "sudo", "mkdir", "ln", "cd", "export", "openssl", "nice", "jq"}
"""The programs the docs may name without ``.venv/bin/``: the system's own (``python3 -m venv`` too)."""
QUICK_PROGRAMS = {"mkdir", "ln", "cd", "openssl"}
QUICK_COMMANDS = ("rules", "deals", "verify", "standings", "roster", "ladder init", "ladder import", "ladder add",
                  "ladder check", "game --bot", "check-bot --bot")
"""The subcommands of ``callbreak-arena`` that finish within a few seconds (in-process bots, a few games)."""

SYNOPSIS = "a synopsis: the words in capitals stand for the reader's own values"
CONNECTS = "connects to an arena that is running somewhere else"
INSTALLS = "installs from the network: the copy's .venv is this clone's, with what the tests need"
NOT_RUN = {
    "git clone https://ORGANISER/callbreak-arena.git && cd callbreak-arena":
        "fetches the repository from the organiser's address: the copy the commands run in is this clone",
    "make demo": "sets .venv up and plays the demo: the copy links this clone's .venv, and tests/test_cli.py's "
                 "first test plays the demo",
    "sudo apt install bubblewrap": "installs a system package (tests/test_sandbox.py runs bots in bubblewrap)",
    "sudo apt install nodejs": "installs a system package",
    ".venv/bin/callbreak-arena serve week-1.toml":
        "serves the week until it is played, waiting for absent students: tests/test_first_hour.py serves a class",
    "export CALLBREAK_TOKEN=the-token-you-were-given": "the token of the command after it, which " + CONNECTS,
    "export CALLBREAK_TOKEN=the-token-printed": "the token of the command after it, which " + CONNECTS,
    "export CALLBREAK_TOKEN=...": "the token of the command after it, which " + CONNECTS,
    ".venv/bin/python bot.py --arena HOST:50051": CONNECTS,
    ".venv/bin/python lowest_bot.py --arena 127.0.0.1:PORT": CONNECTS + " (check-bot --remote)",
    ".venv/bin/python lowest_bot.py --arena arena.example.org:50051": CONNECTS,
    ".venv/bin/python mybot.py --arena ladder.example:50051 --tls-ca ca.pem --max-backoff 2": CONNECTS,
    "CALLBREAK_TOKEN=T .venv/bin/python sample_bots/ismcts_bot.py --arena HOST:PORT --option simulations=40":
        CONNECTS,
    ".venv/bin/callbreak-arena ladder serve class-ladder --host 0.0.0.0":
        "serves the ladder until Ctrl-C: tests/test_ladder_service.py serves one",
    ".venv/bin/callbreak-arena ladder init DIR [--database URL]": SYNOPSIS,
    ".venv/bin/callbreak-arena ladder add DIR NAME [--display TEXT] [--python MODULE:CLASS | --remote]": SYNOPSIS,
    ".venv/bin/callbreak-arena ladder import DIR ROSTER": SYNOPSIS,
    ".venv/bin/callbreak-arena ladder serve DIR [--host H] [--port P] [--tls-cert FILE --tls-key FILE] "
    "[--proxy ADDRESS]": SYNOPSIS,
    ".venv/bin/callbreak-arena ladder submit --url URL --token TOKEN PATH": SYNOPSIS,
    ".venv/bin/callbreak-arena ladder check DIR": SYNOPSIS,
    ".venv/bin/python examples/train_policy.py [--seconds 60] [--deal-sets 20] [--results results/train-policy] "
    "[--seed 1]": SYNOPSIS + " (tests/test_envs.py trains for a few seconds)",
    ".venv/bin/pip install -e '.[rl]'": INSTALLS,
    ".venv/bin/pip install -e '.[openspiel]'": INSTALLS,
    ".venv/bin/pip install -e '.[rl,sb3]'": INSTALLS,
    "python3 -m venv .venv": "makes the reader's virtualenv: the copy links this clone's",
    ".venv/bin/pip install /path/to/callbreak-arena": INSTALLS,
    '.venv/bin/pip install "git+https://ORGANISER/callbreak-arena.git"': INSTALLS,
    ".venv/bin/callbreak-arena rate my_policy.py:MyPolicy":
        "rates the reader's own policy, for up to 10 minutes (tests/test_zoo.py rates bots on the zoo)",
    ".venv/bin/callbreak-arena rate my-bot/ --precision 0.3 --seconds 1800 --json":
        "rates the reader's own bot, for up to 30 minutes",
    "nice .venv/bin/python examples/train_maskable_ppo.py --seconds 600 --out results/maskable-ppo":
        "trains for 10 minutes with the sb3 extra (torch, about 6 GB): tests/test_envs.py trains it briefly",
    ".venv/bin/callbreak-arena rate results/maskable-ppo/bot.py:MaskablePPO --max-blocks 30 --seconds 100000":
        "rates the policy the command above trains, for about 40 minutes",
}
"""Commands of the documents in :data:`RUN` that are never run here, with the reason."""

LONG = {
    '.venv/bin/callbreak-arena check-bot --command "python submissions/alice/bot.py --arena {address}"':
        "24 games, each bot a new process in the sandbox: about 20 s",
    '.venv/bin/callbreak-arena check-bot --stdio "node submissions/bob/bot.js"': "24 games, a process a seat",
    '.venv/bin/callbreak-arena check-bot --command "python bot.py --arena {address}"': "24 games, about 20 s",
    '.venv/bin/callbreak-arena check-bot --stdio "node bot.js"': "24 games, a process a seat",
    '.venv/bin/callbreak-arena game --command "python lowest_bot.py --arena {address}"':
        "four games, the bot a new process for each: about 5 s",
    '.venv/bin/callbreak-arena game --stdio "node my_bot.js"': "four games, a process a seat: about 5 s",
    '.venv/bin/callbreak-arena check-bot --command "python lowest_bot.py --arena {address}"': "24 games, about 20 s",
}
"""Commands that finish on their own but take longer: run by the soak test."""
NEEDS_NODE = "node "


def program(words: list[str]) -> tuple[str, list[str]]:
    """The program a command runs and its arguments, past the variables it sets and ``nice``."""
    while words and (re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]) or words[0] == "nice"):
        words = words[1:]
    return (words[0], words[1:]) if words else ("", [])


def parts(command: Command) -> list[list[str]]:
    """The simple commands of ``command``, each as its words (``a && b`` is two)."""
    found: list[list[str]] = [[]]
    for word in shlex.split(command.text.replace("<(", "(")):
        if word == "&&":
            found.append([])
        else:
            found[-1].append(word)
    return [words for words in found if words]


def quick(command: Command) -> bool:
    """A command that finishes within a few seconds: a quick subcommand of the arena, or a quick program."""
    for words in parts(command):
        name, args = program(words)
        if name == VENV + "callbreak-arena":
            text = " ".join(args)
            if "--help" not in args and not any(text == q or text.startswith(q + " ") for q in QUICK_COMMANDS):
                return False
        elif name not in QUICK_PROGRAMS:
            return False
    return True


# -- every document: the programs and the options ---------------------------------------------------


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fence_names_its_language(document: Path) -> None:
    assert [f.line for f in fences(document) if not f.language] == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_names_a_program_a_fresh_clone_has(document: Path) -> None:
    """No ``callbreak-arena``, ``python`` or ``pip`` alone: without an activated virtualenv they are not there,
    or are another Python, without the arena."""
    wrong = []
    bin_folder = Path(sys.executable).parent
    for command in commands(document):
        for words in parts(command):
            name, args = program(words)
            if name.startswith(VENV):
                ok = (bin_folder / name.removeprefix(VENV)).exists()
            else:
                ok = name in SYSTEM or (name == "python3" and args[:2] == ["-m", "venv"])
            if not ok:
                wrong.append(str(command))
    assert wrong == []


@functools.cache
def _parser() -> argparse.ArgumentParser:
    return build_parser()


def _subparser(parser: argparse.ArgumentParser, args: list[str]) -> argparse.ArgumentParser:
    """The parser of the subcommand ``args`` begin with (``ladder init DIR`` -> ``ladder init``'s)."""
    for word in args:
        choices = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not choices or word not in choices[0].choices:
            break
        parser = choices[0].choices[word]
    return parser


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_option_the_docs_give_the_arena_is_one_it_takes(document: Path) -> None:
    """A synopsis's options exist; a whole command is read as the command line reads it."""
    wrong = []
    for command in commands(document):
        for words in parts(command):
            name, args = program(words)
            if name != VENV + "callbreak-arena":
                continue
            options = {o for a in _subparser(_parser(), args)._actions for o in a.option_strings}
            given = {w.split("=", 1)[0].strip("[]") for w in args if w.lstrip("[").startswith("--")}
            if given - options:
                wrong.append(f"{command}: {sorted(given - options)}")
            elif NOT_RUN.get(command.text) != SYNOPSIS and "--help" not in args:
                try:
                    _parser().parse_args(args)
                except SystemExit:
                    wrong.append(f"{command}: the command line refuses it")
    assert wrong == []


def test_the_classification_of_the_commands_is_of_commands_the_docs_hold() -> None:
    held = {c.text for document in RUN for c in commands(document)}
    assert sorted(set(NOT_RUN) - held) == [] and sorted(set(LONG) - held) == []
    assert sorted(set(NOT_RUN) & set(LONG)) == []
    assert [c for c in LONG if quick(Command(c, "", 0))] == []


# -- the documents run ------------------------------------------------------------------------------


def _bot(name: str) -> str:
    """The tutorial's first bot, its class called ``name``."""
    bot = next(f.text for f in fences(ROOT / "docs" / "writing-a-bot.md") if f.language == "python")
    return bot.replace("LowestBot", name)


def _class(stage: Path) -> None:
    """What a teacher has in hand: the students' CSV file, a bot file and a folder handed in."""
    folder = stage.parent / "class"
    (folder / "handed-in" / "bob").mkdir(parents=True)
    (folder / "students.csv").write_text("name,display\nalice,Alice Adhikari\nbob,Bob Bhandari\nsita,सीता शर्मा\n",
                                         encoding="utf-8")
    (folder / "alice_bot.py").write_text(_bot("LowestBot"), encoding="utf-8")
    (folder / "bot.py").write_text(_bot("MyBot"), encoding="utf-8")  # a student's, for the students' part
    for bot in (folder / "handed-in" / "bob" / "bot.js", folder / "bot.js"):
        shutil.copy(ROOT / "sample_bots" / "stdio" / "lowest_bot.js", bot)
    (folder / "handed-in" / "bob" / "bot.json").write_text('{"kind": "stdio", "command": "node bot.js"}',
                                                          encoding="utf-8")


def _roster(stage: Path) -> None:
    """The class's roster, as docs/classroom.md makes it."""
    roster = Roster(stage / "roster.toml")
    for name, display in (("alice", "Alice Adhikari"), ("bob", ""), ("sita", "सीता शर्मा")):
        roster.add(name, display)
    roster.save()


def _student(stage: Path) -> None:
    """A student's folder: the tutorial's bot, and the stdio bot of docs/bots.md."""
    (stage / "lowest_bot.py").write_text(_bot("LowestBot"), encoding="utf-8")
    shutil.copy(ROOT / "sample_bots" / "stdio" / "lowest_bot.js", stage / "my_bot.js")


GIVEN: dict[str, Callable[[Path], None]] = {"classroom.md": _class, "ladder.md": _roster,
                                            "writing-a-bot.md": _student, "research.md": lambda stage: None}
"""What the reader of each document has made before its commands, in the copy of the clone."""
KEPT_OUT = {".git", ".venv", "results", ".pytest_cache", ".mypy_cache", ".ruff_cache", "build"}


def clone(folder: Path) -> Path:
    """A copy of the clone in ``folder/callbreak-arena``: its files linked, ``.venv`` the running one's."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("the docs' commands run with the clone's .venv: run the tests with a virtualenv's Python")
    stage = folder / "callbreak-arena"
    stage.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in KEPT_OUT and not entry.name.endswith(".egg-info"):
            (stage / entry.name).symlink_to(entry)
    (stage / ".venv").symlink_to(sys.prefix)
    return stage


def environment() -> dict[str, str]:
    """This process's environment with no virtualenv on ``PATH``, as a fresh shell has it."""
    venv = Path(sys.executable).parent.resolve()
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and not (Path(p) / "callbreak-arena").exists() and Path(p).resolve() != venv]
    return {**{k: v for k, v in os.environ.items() if not k.startswith("CALLBREAK_") and k != "VIRTUAL_ENV"},
            "PATH": os.pathsep.join(path)}


def run_document(document: Path, tmp_path: Path, long: bool) -> None:
    stage = clone(tmp_path)
    GIVEN[document.name](stage)
    where, env, mark = stage, environment(), tmp_path / "pwd"
    unknown, ran = [], []
    for command in commands(document):
        if command.text in NOT_RUN or (command.text in LONG and not long):
            continue
        if command.text not in LONG and not quick(command):
            unknown.append(str(command))
            continue
        if NEEDS_NODE in command.text and shutil.which("node") is None:
            continue
        # Each command in a shell of its own; a `cd` carries over to the next, as in the reader's terminal.
        script = f"{command.text}\nstatus=$?\npwd > {shlex.quote(str(mark))}\nexit $status\n"
        shell = subprocess.Popen(["bash", "-c", script], cwd=where, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = shell.communicate(timeout=600 if long else 120)
        finally:  # a command that did not end, and whatever it started, is stopped with its shell
            if shell.poll() is None:
                os.killpg(shell.pid, signal.SIGKILL)
                shell.wait()
        assert shell.returncode == 0, f"{command} exited {shell.returncode}:\n{out}\n{err}"
        where = Path(mark.read_text(encoding="utf-8").strip())
        ran.append(command.text)
    assert unknown == [], "neither quick nor in NOT_RUN or LONG: classify them"
    assert ran or document.name == "research.md"


@pytest.mark.parametrize("document", RUN, ids=lambda p: p.name)
def test_the_quick_commands_of_the_docs_run(document: Path, tmp_path: Path) -> None:
    run_document(document, tmp_path, long=False)


@pytest.mark.soak
@pytest.mark.parametrize("document", RUN, ids=lambda p: p.name)
def test_the_commands_of_the_docs_run_the_long_ones_too(document: Path, tmp_path: Path) -> None:
    run_document(document, tmp_path, long=True)
