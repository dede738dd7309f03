"""A command imports only what it uses: ``callbreak-arena --help``, ``rules legal`` and the help of the
commands never import the ladder's database, the web stack or gRPC.

Each command runs in a real process under ``python -X importtime``, which names on stderr every module
the process imports. What a command costs in time is measured by ``benchmarks/cli_startup.py``, not here.
The package ``arena.ladder`` itself holds only the names of the ladder's files (which ``ladder --help``
shows), so the ladder is its modules: ``arena.ladder.*``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

NEVER = ("sqlalchemy", "alembic", "grpc", "starlette", "uvicorn", "jinja2", "arena.web", "arena.rating")
"""Packages none of the commands below may import (each with its modules)."""
LADDER = "arena.ladder."
"""The ladder's modules: none of the commands below may import one."""
EVENT_LOOP = "asyncio"
"""``--help`` and ``rules legal`` do without it (with it come ssl, threads and subprocesses)."""

COMMANDS = {
    "--help": ["--help"],
    "rules legal": ["rules", "legal", "--hand", "TH 4H 9C AS", "--trick", "7H"],
    "run --help": ["run", "--help"],
    "serve --help": ["serve", "--help"],
    "check-bot --help": ["check-bot", "--help"],
    "verify --help": ["verify", "--help"],
    "roster list --help": ["roster", "list", "--help"],
    "ladder --help": ["ladder", "--help"],
    "ladder serve --help": ["ladder", "serve", "--help"],
}


def imported(*arguments: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The modules ``callbreak-arena ARGUMENTS`` imports, and the finished process."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "arena", *arguments], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    modules = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    modules.discard("package")  # the header line: "import time: self [us] | cumulative | imported package"
    return modules, done


def within(modules: set[str], package: str) -> list[str]:
    return sorted(m for m in modules if m == package or m.startswith(package + "."))


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_imports_neither_the_ladder_nor_the_web_stack_nor_grpc(name: str) -> None:
    modules, done = imported(*COMMANDS[name])
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip()
    assert "arena.cli" in modules  # the command line did run, and importtime saw it
    for package in NEVER:
        assert not within(modules, package), f"{name} imports {within(modules, package)}"
    assert not [m for m in modules if m.startswith(LADDER)], f"{name} imports the ladder"
    if name in ("--help", "rules legal"):
        assert not within(modules, EVENT_LOOP), f"{name} imports {EVENT_LOOP}"


def test_rules_legal_answers_from_the_rules_core() -> None:
    modules, done = imported(*COMMANDS["rules legal"])
    assert done.returncode == 0
    assert "TH" in done.stdout  # the heart it must follow with
    assert "arena.core.rules" in modules


def test_a_command_that_works_with_the_ladder_does_import_it(tmp_path: Path) -> None:
    """The check above can see the ladder: a command that makes one imports its modules and sqlalchemy."""
    modules, done = imported("ladder", "init", str(tmp_path / "ladder"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "ladder" / "ladder.toml").is_file()
    assert [m for m in modules if m.startswith(LADDER)]
    assert within(modules, "sqlalchemy")


def test_a_command_refused_before_its_work_imports_nothing_of_it(tmp_path: Path) -> None:
    modules, done = imported("ladder", "check", str(tmp_path))
    assert done.returncode == 2  # no ladder there
    assert "holds no ladder" in done.stderr
    assert not within(modules, "sqlalchemy")
