"""The test suite's own promises: it runs in any clone, it has a quick subset, and no test module imports another.

- What a test needs to read is in the repository (``tests/data``), never in a folder beside it.
- ``make test`` runs every test but the long soak runs (marked ``soak``, each with a shorter test of its promise
  that does run); ``make test-fast`` also leaves out those marked ``slow``, and some are; ``make soak`` runs
  the soak runs; ``make test-unit`` runs the pure tests in one process, where a test that starts a process or
  opens a socket fails (``tests/helpers/pure.py``).
- What test modules share is in ``tests/helpers``: a test module imports no other test module.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers.bhoos import ENGINE_LOG, engine_log
from tests.helpers.runs import ROOT

TESTS = ROOT / "tests"


def suite_modules() -> list[Path]:
    """The test modules (tests/test_*.py)."""
    return sorted(TESTS.glob("test_*.py"))


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, wherever the import is (inside functions too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_test_module_imports_another() -> None:
    offenders = {
        path.name: sorted(name for name in imported_modules(path) if re.match(r"tests\.test_", name))
        for path in suite_modules()
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_data_the_tests_read_is_in_the_repository() -> None:
    assert ENGINE_LOG.is_relative_to(TESTS / "data") and ENGINE_LOG.is_file()
    assert len(engine_log()["rounds"]) == 5
    beside = re.compile(r"shared/data|CALLBREAK_SHARED")  # where the tests once looked for a folder beside the clone
    outside = [path.name for path in [*suite_modules(), *TESTS.glob("helpers/*.py")]
               if path != Path(__file__).resolve() and beside.search(path.read_text(encoding="utf-8"))]
    assert outside == []
    assert not [path.name for path in (TESTS / "data").glob("*.py")]  # code the tests share is in tests/helpers


def make_dry_run(target: str) -> list[str]:
    """The pytest command lines ``make TARGET`` would run (printed by ``make -n``, nothing run)."""
    done = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    return [line for line in done.stdout.splitlines() if " -m pytest " in line]


def test_make_test_runs_all_but_the_soak_runs_and_make_test_fast_leaves_out_the_slow_tests() -> None:
    pytest = ".venv/bin/python -m pytest -q -n 2"
    assert make_dry_run("test") == [f'{pytest} -m "not soak"']
    assert make_dry_run("test-fast") == [f'{pytest} -m "not slow and not soak"']
    assert make_dry_run("soak") == [f"{pytest} -m soak"]
    marked = [path.name for path in suite_modules() if "pytest.mark.slow" in path.read_text(encoding="utf-8")]
    assert len(marked) >= 10, marked  # the marker is used, so the quick subset is quicker
    soaked = [path.name for path in suite_modules() if "pytest.mark.soak" in path.read_text(encoding="utf-8")]
    assert 0 < len(soaked) <= 8, soaked  # a few long runs, not a way around the suite


def test_make_test_unit_runs_the_pure_tests_and_fails_a_test_that_starts_a_process_or_opens_a_socket(
        tmp_path: Path) -> None:
    [line] = make_dry_run("test-unit")
    command = '.venv/bin/python -m pytest -q -p tests.helpers.pure -m "not soak" '
    assert line.startswith(command)
    files = line.removeprefix(command).split()
    assert len(files) >= 10 and all((ROOT / name).is_file() for name in files)
    planted = tmp_path / "test_planted.py"
    planted.write_text(
        "import socket, subprocess\n"
        "def test_pure():\n    assert sum(range(4)) == 6\n"
        "def test_a_process_refused_and_caught():\n    try:\n        subprocess.run(['true'])\n"
        "    except RuntimeError:\n        pass\n"
        "def test_a_socket():\n    socket.socket().close()\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.helpers.pure",
                           str(planted)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "2 failed, 1 passed" in done.stdout, done.stdout + done.stderr
    assert "a unit test may not start a process (subprocess.Popen)" in done.stdout
    assert "a unit test may not open a socket (socket.__new__)" in done.stdout
