"""The package's layers import only downwards, and only the network layer touches grpc.

``arena/core`` < ``arena/players`` < ``arena/net`` < ``arena/event`` < ``arena/rating`` < the command
line. ``arena/errors.py`` (the exception tree) sits below them all; ``arena/__init__.py`` and
``arena/botkit.py`` are public faces that may name any layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parent.parent / "arena"
LAYERS = {"errors": 0, "core": 1, "players": 2, "net": 3, "event": 4, "rating": 5, "cli": 6, "__main__": 7}
FACES = {"__init__", "botkit"}
"""Modules that only re-export others under public names."""
PURE = {"asyncio", "os", "time", "socket", "subprocess", "threading", "grpc", "protocol", "pathlib", "random"}
"""What the rules core must never import: no I/O, no clock, no network, no hidden randomness."""


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "arena" or len(parts) == 1:
        return None
    return LAYERS.get(parts[1])


def modules() -> list[Path]:
    return sorted(p for p in ARENA.rglob("*.py") if p.stem not in FACES or p.parent != ARENA)


def imports(path: Path) -> list[tuple[str, int]]:
    """Every module a file imports (absolute names), with the line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
    return found


def own_module(path: Path) -> str:
    relative = path.relative_to(ARENA.parent).with_suffix("")
    return ".".join(relative.parts)


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ARENA.parent)))
def test_each_module_imports_only_its_own_layer_and_those_below(path: Path) -> None:
    mine = layer_of(own_module(path))
    assert mine is not None, f"{path} is in no layer"
    for name, line in imports(path):
        theirs = layer_of(name)
        if name == "arena":  # ``from arena import __version__``: the package's version, below everything
            continue
        assert theirs is None or theirs <= mine, f"{path}:{line} imports {name}, a layer above it"
        if name.split(".")[0] in ("grpc", "grpc_health", "grpc_reflection", "protocol"):
            assert own_module(path).startswith("arena.net."), f"{path}:{line}: only arena/net may import {name}"


@pytest.mark.parametrize("path", sorted((ARENA / "core").glob("*.py")), ids=lambda p: p.name)
def test_the_rules_core_is_pure(path: Path) -> None:
    for name, line in imports(path):
        assert name.split(".")[0] not in PURE, f"{path}:{line} imports {name}: the rules core does no I/O"


def test_the_layer_map_covers_every_folder() -> None:
    folders = {p.name for p in ARENA.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders == {name for name in LAYERS if (ARENA / name).is_dir()}


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The test above would catch an upward import (it reads real import statements)."""
    fake = tmp_path / "bad.py"
    fake.write_text("from arena.rating.ratings import compute_standings\nimport grpc\n", encoding="utf-8")
    assert [(layer_of(name), line) for name, line in imports(fake)] == [(5, 1), (None, 2)]
