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
    if parts[0] != "arena":
        return None
    if len(parts) == 1:
        return LAYERS["core"]  # the package itself names only the rules core (and its version)
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


def violations(path: Path, module: str) -> list[str]:
    """What breaks the layering in a file that is the module ``module``, one line each."""
    mine = layer_of(module)
    if mine is None:
        return [f"{path} is in no layer"]
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            found.append(f"{path}:{node.lineno}: a relative import; name the module in full")
    for name, line in imports(path):
        theirs = layer_of(name)
        if theirs is not None and theirs > mine:
            found.append(f"{path}:{line} imports {name}, a layer above it")
        if name.split(".")[0] in ("grpc", "grpc_health", "grpc_reflection", "protocol") and not module.startswith(
            "arena.net."
        ):
            found.append(f"{path}:{line}: only arena/net may import {name}")
    return found


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ARENA.parent)))
def test_each_module_imports_only_its_own_layer_and_those_below(path: Path) -> None:
    assert violations(path, own_module(path)) == []


@pytest.mark.parametrize("path", sorted((ARENA / "core").glob("*.py")), ids=lambda p: p.name)
def test_the_rules_core_is_pure(path: Path) -> None:
    for name, line in imports(path):
        assert name.split(".")[0] not in PURE, f"{path}:{line} imports {name}: the rules core does no I/O"


def test_the_package_itself_names_only_the_rules_core() -> None:
    for name, line in imports(ARENA / "__init__.py"):
        assert layer_of(name) in (LAYERS["errors"], LAYERS["core"]) or name == "__future__", f"line {line}: {name}"


def test_the_layer_map_covers_every_folder() -> None:
    folders = {p.name for p in ARENA.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders == {name for name in LAYERS if (ARENA / name).is_dir()}


@pytest.mark.parametrize(("module", "source", "expected"), [
    ("arena.core.x", "from arena.rating.ratings import compute_standings\n", "imports arena.rating.ratings"),
    ("arena.players.x", "import arena.net.botkit\n", "imports arena.net.botkit"),
    ("arena.event.x", "import grpc\n", "only arena/net may import grpc"),
    ("arena.rating.x", "from protocol import callbreak_pb2\n", "only arena/net may import protocol"),
    ("arena.event.x", "from .plan import Plan\n", "a relative import"),
])
def test_the_checker_finds_each_kind_of_violation(tmp_path: Path, module: str, source: str, expected: str) -> None:
    fake = tmp_path / "x.py"
    fake.write_text(source, encoding="utf-8")
    [found] = violations(fake, module)
    assert expected in found


def test_the_checker_passes_imports_that_go_down(tmp_path: Path) -> None:
    fake = tmp_path / "x.py"
    source = ("import asyncio\nimport grpc\nfrom arena.core.cards import Card\nfrom arena.errors import ArenaError\n"
              "from arena.event.store import ResultsStore\n")
    fake.write_text(source, encoding="utf-8")
    assert violations(fake, "arena.net.x") == [f"{fake}:5 imports arena.event.store, a layer above it"]
