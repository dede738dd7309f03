"""Every public exception the package defines is rooted at :class:`arena.errors.ArenaError` and
written out in the tree of ``arena/errors.py``'s docstring, so a caller can catch the package's
errors with one ``except`` and a reader finds them all in one place."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import arena
from arena import errors
from arena.errors import ArenaError

RESEARCH_EXTRAS = {"gymnasium", "numpy", "open_spiel", "pettingzoo", "pyspiel"}
"""What the extras rl and openspiel install: arena.envs needs them, and is left out where they are absent."""


def public_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(arena.__path__, "arena."):
        if info.name.endswith("__main__"):  # runs the command line when imported
            continue
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as err:  # a research environment without its optional extra installed
            if info.name.startswith("arena.envs") and (err.name or "").split(".")[0] in RESEARCH_EXTRAS:
                continue
            raise
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name
                    and not name.startswith("_")):
                found[f"{info.name}.{name}"] = value
    return found


def test_the_walk_finds_the_exceptions_defined_outside_errors_py() -> None:
    found = public_exceptions()
    assert "arena.core.faults.PlayerFault" in found
    assert "arena.errors.RecordsError" in found


def test_every_public_exception_is_an_arena_error() -> None:
    outside = sorted(name for name, cls in public_exceptions().items() if not issubclass(cls, ArenaError))
    assert outside == []


def test_every_public_exception_is_named_in_the_tree() -> None:
    doc = errors.__doc__ or ""
    missing = sorted(name for name, cls in public_exceptions().items() if f"``{cls.__name__}``" not in doc)
    assert missing == []
