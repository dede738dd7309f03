"""A pytest plugin that fails a test which starts a process or opens a socket (``make test-unit`` loads it).

The unit tests (``UNIT_TESTS`` in the Makefile) are the ones that need neither: the rules core, the records,
the standings and the plan. Python's audit hooks see every process started (``subprocess``, ``fork``,
``posix_spawn``) and every socket made, an event loop's own pair included; the hook refuses the operation and
notes it, and a test during which one was tried fails, even where the code under test caught the refusal.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

REFUSED = {
    "subprocess.Popen": "start a process",
    "os.fork": "start a process",
    "os.forkpty": "start a process",
    "os.posix_spawn": "start a process",
    "os.spawn": "start a process",
    "os.system": "start a process",
    "os.exec": "start a process",
    "socket.__new__": "open a socket",
}
"""The audit events a unit test may not raise, and what each is in words."""

_TRIED: list[str] = []


def _refuse(event: str, args: tuple[object, ...]) -> None:
    if event in REFUSED:
        what = f"a unit test may not {REFUSED[event]} ({event}); list it out of UNIT_TESTS in the Makefile"
        _TRIED.append(what)
        raise RuntimeError(what)


def pytest_configure(config: pytest.Config) -> None:
    sys.addaudithook(_refuse)  # for the rest of this process: make test-unit runs the unit tests alone


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    before = len(_TRIED)
    yield  # the test's own failure, if it has one, goes on as it is
    if len(_TRIED) > before:
        pytest.fail(_TRIED[before], pytrace=False)
