"""The package's layers import only downwards, no module imports itself round a cycle, only the gRPC
transport and the bot kit touch grpc, and nothing in the package names the sample bots.

``arena/core`` < ``arena/records`` (the records format and the results folder) < ``arena/players`` <
``arena/transports`` < ``arena/kit`` < ``arena/event`` <
``arena/rating`` < ``arena/ladder`` (the standing ladder) < ``arena/web`` (the pages a server answers) <
``arena/envs`` (the research environments) < ``arena/cli`` (the command line).
``arena/errors.py`` (the exception tree) sits below them all; ``arena/__init__.py`` and
``arena/botkit.py`` are public faces that may name any layer.

``arena/event`` is divided into rooms, held in the same way: ``setup`` (what organisers and students
write) < ``plan`` (the plan, the manifest, the live status) < ``launch`` (the start of a bot's process) <
``play`` (where and how each game is played) < ``run`` (the tournament and what steers it); the modules
of ``arena/event`` itself (the audit, check-bot) stand above every room.

The cycle check reads the import graph of the whole package, inside a layer too: an edge for every
``import arena.x.y`` and every ``from arena.x import y`` (to ``arena.x.y`` when ``y`` is a module, else to
``arena.x``), wherever the statement is. Imports inside functions count: deferring an import to call
time hides a cycle from the interpreter, not from a reader, and the two modules still cannot be
understood or tested apart. Imports under ``if TYPE_CHECKING:`` count too: they form no cycle when
the code runs, but the dependency is as real to a reader and to mypy, and the style guide wants none;
a module that needs another's type only for a parameter takes a :class:`typing.Protocol` of its own
instead. The package a module sits in, which Python imports first, is no edge: every module would
otherwise make a cycle with an ``__init__.py`` that names its modules.

The sample bots (``sample_bots/``) build on the package, never the other way round: no module of the
package imports them or names one of their modules in a string (a ``module:Class`` spec is an import
by another name). The bots the arena itself needs live in the package (``arena/players/house.py``);
the sample opponents of ``check-bot`` are found by their entry points.

No module is longer than :data:`MODULE_LINES` lines: one job per module, and a module past the limit is
split along the lines of its own content (generated code, ``*_pb2*.py``, aside).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parent.parent / "arena"
LAYERS = {"errors": 0, "core": 1, "records": 2, "players": 3, "transports": 4, "kit": 5, "event": 6, "rating": 7,
          "ladder": 8, "web": 9, "envs": 10, "cli": 11, "__main__": 12}
ROOMS = {"setup": 0, "plan": 1, "launch": 2, "play": 3, "run": 4}
"""The rooms of ``arena/event`` in their order; a module of ``arena/event`` itself is above them all."""
GRPC = ("arena.transports.grpc.", "arena.kit.")
"""Where grpc and the generated protocol code may be imported."""
MODULE_LINES = 650
"""The longest a module of the package may be, in lines."""
FACES = {"__init__", "botkit"}
"""Modules that only re-export others under public names."""
PURE = {"asyncio", "os", "time", "socket", "subprocess", "threading", "grpc", "protocol", "pathlib", "random"}
"""What the rules core must never import: no I/O, no clock, no network, no hidden randomness."""
SAMPLES = "sample_bots"
SAMPLE_SPEC = re.compile(r"\bsample_bots[./:]")
"""A string naming a module or file of the sample bots (``sample_bots.random_bot:RandomBot``)."""


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "arena":
        return None
    if len(parts) == 1:
        return LAYERS["core"]  # the package itself names only the rules core (and its version)
    return LAYERS.get(parts[1])


def room_of(module: str) -> int | None:
    """The rank of the room of ``arena/event`` a module is in, or ``None`` outside ``arena/event``."""
    parts = module.split(".")
    if parts[:2] != ["arena", "event"] or len(parts) == 2:
        return None
    return ROOMS.get(parts[2], len(ROOMS))


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


def room_imports(tree: ast.Module) -> list[tuple[str, int]]:
    """Every module of ``arena/event`` a file imports, with the line: ``from arena.event import audit`` names
    ``arena.event.audit``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            prefix = f"{node.module}." if node.module == "arena.event" else ""
            found.extend((f"{prefix}{alias.name}" if prefix else node.module, node.lineno) for alias in node.names)
    return [(name, line) for name, line in found if name.startswith("arena.event.")]


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
        if name.split(".")[0] in ("grpc", "grpc_health", "grpc_reflection", "protocol") and not module.startswith(GRPC):
            found.append(f"{path}:{line}: only the gRPC transport and the kit may import {name}")
        if name.split(".")[0] == SAMPLES:
            found.append(f"{path}:{line} imports {name}: the package must not depend on the sample bots")
    room = room_of(module)
    for name, line in room_imports(tree):
        theirs = room_of(name)
        if room is not None and theirs is not None and theirs > room:
            found.append(f"{path}:{line} imports {name}, from a room of arena/event above its own")
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SAMPLE_SPEC.search(node.value):
            found.append(f"{path}:{node.lineno} names a sample bot ({node.value!r}): the package must not depend "
                         "on the sample bots")
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


def test_the_room_map_covers_every_folder_of_the_event() -> None:
    folders = {p.name for p in (ARENA / "event").iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders == set(ROOMS)


@pytest.mark.parametrize(("module", "source", "expected"), [
    ("arena.core.x", "from arena.rating.ratings import compute_standings\n", "imports arena.rating.ratings"),
    ("arena.players.x", "import arena.kit.bot\n", "imports arena.kit.bot"),
    ("arena.event.x", "import grpc\n", "only the gRPC transport and the kit may import grpc"),
    ("arena.rating.x", "from protocol import callbreak_pb2\n",
     "only the gRPC transport and the kit may import protocol"),
    ("arena.event.x", "from .plan import Plan\n", "a relative import"),
    ("arena.event.setup.x", "from arena.event.plan.schedule import Block\n",
     "imports arena.event.plan.schedule, from a room of arena/event above its own"),
    ("arena.event.plan.x", "def f():\n    from arena.event.launch import sandbox\n",
     "imports arena.event.launch, from a room of arena/event above its own"),
    ("arena.event.play.x", "import arena.event.run.tournament\n",
     "imports arena.event.run.tournament, from a room of arena/event above its own"),
    ("arena.event.run.x", "from arena.event import check\n",
     "imports arena.event.check, from a room of arena/event above its own"),
])
def test_the_checker_finds_each_kind_of_violation(tmp_path: Path, module: str, source: str, expected: str) -> None:
    fake = tmp_path / "x.py"
    fake.write_text(source, encoding="utf-8")
    [found] = violations(fake, module)
    assert expected in found


def test_the_checker_passes_imports_that_go_down(tmp_path: Path) -> None:
    fake = tmp_path / "x.py"
    source = ("import asyncio\nimport grpc\nfrom arena.core.cards import Card\nfrom arena.errors import ArenaError\n"
              "from arena.records.store import ResultsStore\nfrom arena.event.plan.plan import Plan\n")
    fake.write_text(source, encoding="utf-8")
    assert violations(fake, "arena.transports.grpc.x") == [f"{fake}:6 imports arena.event.plan.plan, a layer above it"]


def test_the_checker_passes_imports_from_the_rooms_below(tmp_path: Path) -> None:
    fake = tmp_path / "x.py"
    fake.write_text("from arena.event.setup.config import TournamentConfig\nfrom arena.event.plan import plan\n"
                    "import arena.event.launch.launcher\nfrom arena.event.play.host import Host\n"
                    "from arena.event.run.tournament import Tournament\n", encoding="utf-8")
    assert violations(fake, "arena.event.run.x") == []
    assert violations(fake, "arena.event.audit") == []


# -- cycles -----------------------------------------------------------------------------------


def module_graph(package: Path) -> dict[str, set[str]]:
    """The import graph of the package in the folder ``package``: module -> the modules of the package it
    imports, anywhere in its file (see the module docstring for what counts)."""
    files: dict[str, Path] = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in files else node.module
                           for alias in node.names]
            graph[name].update(target for target in targets if target in files)
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` that hold a cycle (two modules or more, or one that
    imports itself), each sorted, in order of their first module: Tarjan's algorithm, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(sorted(component))
    return sorted(found)


def cycle_in_words(graph: Mapping[str, set[str]], component: list[str]) -> str:
    """One cycle through the first module of ``component``, in words, and every module caught in it."""
    start = component[0]
    members = set(component)
    paths = {start: [start]}
    frontier = [start]
    loop: list[str] = []
    while frontier and not loop:  # breadth first: the shortest way back to the start
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    loop = [*paths[node], start]
                    break
                if child not in paths:
                    paths[child] = [*paths[node], child]
                    following.append(child)
            if loop:
                break
        frontier = following
    words = f"{loop[0]} imports {loop[1]}" + "".join(f", which imports {name}" for name in loop[2:])
    caught = f" (the modules caught in the cycle: {', '.join(component)})" if len(component) > 2 else ""
    return f"an import cycle: {words}{caught}; move what they share to the lower one, or to a module of its own"


def cycle_report(package: Path) -> list[str]:
    """Each import cycle of the package in ``package``, in words."""
    graph = module_graph(package)
    return [cycle_in_words(graph, component) for component in cycles(graph)]


def test_no_module_of_the_package_imports_itself_round_a_cycle() -> None:
    assert cycle_report(ARENA) == []


def _tree(root: Path, files: Mapping[str, str]) -> Path:
    """A fake package ``arena`` under ``root`` holding ``files`` (path -> source), with the ``__init__.py`` files."""
    for name, source in files.items():
        path = root / "arena" / name
        for folder in [path.parent, *path.parent.parents]:
            if folder == root:
                break
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "__init__.py").touch()
        path.write_text(source, encoding="utf-8")
    return root / "arena"


@pytest.mark.parametrize(("files", "expected"), [
    ({"core/game.py": "from arena.core import views\n", "core/views.py": "from arena.core.game import Trick\n"},
     "an import cycle: arena.core.game imports arena.core.views, which imports arena.core.game;"),
    ({"core/game.py": "def view():\n    from arena.core.views import SeatView\n",  # deferred to a function
      "core/views.py": "import arena.core.game\n"},
     "an import cycle: arena.core.game imports arena.core.views, which imports arena.core.game;"),
    ({"transports/grpc/remote.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                   "    from arena.transports.grpc.server import Lobby\n",
      "transports/grpc/server.py": "from arena.transports.grpc.remote import Session\n"},
     "an import cycle: arena.transports.grpc.remote imports arena.transports.grpc.server, which imports "
     "arena.transports.grpc.remote;"),
    ({"event/config.py": "from arena.event import roster\n", "event/roster.py": "from arena.event import store\n",
      "event/store.py": "from arena.event.config import parse_config\n"},
     "an import cycle: arena.event.config imports arena.event.roster, which imports arena.event.store, which "
     "imports arena.event.config (the modules caught in the cycle: arena.event.config, arena.event.roster, "
     "arena.event.store)"),
    ({"core/cards.py": "import arena.core.cards\n"}, "an import cycle: arena.core.cards imports arena.core.cards;"),
])
def test_the_checker_finds_a_planted_cycle(tmp_path: Path, files: Mapping[str, str], expected: str) -> None:
    [found] = cycle_report(_tree(tmp_path, files))
    assert found.startswith(expected)


def test_the_checker_passes_a_tree_without_cycles(tmp_path: Path) -> None:
    package = _tree(tmp_path, {
        "core/game.py": "from arena.core import views\nfrom arena.core.views import Trick\n",
        "core/views.py": "from arena.core.cards import Card\n",
        "core/cards.py": "import dataclasses\n",
        "transports/grpc/server.py": ("from arena import core\nfrom arena.core.game import Game\n"
                                      "import arena.core.cards\n"),
    })
    assert module_graph(package)["arena.core.game"] == {"arena.core.views"}
    assert module_graph(package)["arena.transports.grpc.server"] == {
        "arena.core", "arena.core.game", "arena.core.cards"}
    assert cycle_report(package) == []


@pytest.mark.parametrize(("source", "expected"), [
    ("from sample_bots.random_bot import RandomBot\n", "imports sample_bots.random_bot"),
    ("def bot():\n    import sample_bots.heuristic_bot\n", "imports sample_bots.heuristic_bot"),
    ('HOUSE_BOT = "sample_bots.random_bot:RandomBot"\n', "names a sample bot ('sample_bots.random_bot:RandomBot')"),
    ('BOT = "sample_bots/montecarlo_bot.py:MonteCarloBot"\n', "names a sample bot"),
])
def test_the_checker_finds_a_planted_use_of_the_sample_bots(tmp_path: Path, source: str, expected: str) -> None:
    fake = tmp_path / "x.py"
    fake.write_text(source, encoding="utf-8")
    [found] = violations(fake, "arena.event.x")
    assert expected in found and "must not depend on the sample bots" in found


def long_modules(package: Path, limit: int = MODULE_LINES) -> list[str]:
    """Each module under ``package`` longer than ``limit`` lines, with its length (generated code aside)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if "_pb2" in path.name:
            continue
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            found.append(f"{path.relative_to(package.parent)} has {lines} lines, over {limit}: split it by its jobs")
    return found


def test_no_module_of_the_package_is_longer_than_the_limit() -> None:
    assert long_modules(ARENA) == []


def test_the_length_checker_names_a_long_module_and_its_length(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"short.py": "x = 1\n" * 5, "inner/long.py": "x = 1\n" * 7, "long_pb2.py": "x = 1\n" * 9})
    assert long_modules(root, limit=6) == ["arena/inner/long.py has 7 lines, over 6: split it by its jobs"]
