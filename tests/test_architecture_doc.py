"""docs/architecture.md names every module of the package, in the row of its folder, and nothing that
is not there: a module added, moved or removed without the document fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARENA = ROOT / "arena"
DOC = ROOT / "docs" / "architecture.md"


def rows() -> dict[str, set[str]]:
    """The folder table: each folder, and the modules its row names (``grpc/`` and ``stdio.py`` are
    names in a folder, ``answers`` a module)."""
    found: dict[str, set[str]] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = line.split("|")
        if len(cells) < 4 or not re.fullmatch(r" `\w+/` ", cells[1]):
            continue
        folder = cells[1].strip(" `/")
        names = set()
        for name in re.findall(r"`([\w/.]+)`", cells[2]):
            names.add(name.removesuffix(".py").removesuffix("/"))
        found[folder] = names
    return found


def modules(folder: Path) -> set[str]:
    """What a folder holds: its modules (``__init__`` aside), and its packages with theirs as ``package/x``."""
    out = set()
    for path in folder.iterdir():
        if path.suffix == ".py" and path.stem != "__init__":
            out.add(path.stem)
        elif path.is_dir() and (path / "__init__.py").exists():
            out.add(path.name)
            out |= {f"{path.name}/{inner}" for inner in modules(path)}
    return out


def test_the_table_has_a_row_for_every_folder_of_the_package() -> None:
    folders = {p.name for p in ARENA.iterdir() if (p / "__init__.py").exists()}
    assert set(rows()) == folders


def test_each_row_names_every_module_of_its_folder_and_no_other() -> None:
    for folder, named in rows().items():
        held = modules(ARENA / folder)
        # a package's modules may be named in its parentheses, without the package's name before them
        plain = {name.split("/")[-1] for name in held}
        top = {n for n in held if "/" not in n}
        assert top <= named, f"{folder}: modules the row does not name: {sorted(top - named)}"
        inner = {n.split("/")[-1] for n in held if "/" in n}
        assert inner <= named, f"{folder}: modules of its packages the row does not name: {sorted(inner - named)}"
        assert named <= plain, f"{folder}: the row names modules that are not there: {sorted(named - plain)}"


def layer_rule() -> tuple[list[str], list[str]]:
    """The layers and the rooms of ``arena/event`` in the order tests/test_layers.py holds them, read from its
    source (a test module imports no other)."""
    tree = ast.parse((ROOT / "tests" / "test_layers.py").read_text(encoding="utf-8"))
    found = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id in ("LAYERS", "ROOMS"):
            found[target.id] = ast.literal_eval(node.value)
    return [sorted(found[name], key=found[name].get) for name in ("LAYERS", "ROOMS")]


def test_the_picture_draws_the_layers_and_rooms_in_the_order_the_layer_test_holds() -> None:
    text = DOC.read_text(encoding="utf-8")
    picture = text.split("The same layers as a picture", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    drawn = [m.group(1) for m in re.finditer(r"^(\w+)(?:/|\.py)", picture, re.M)]
    layers, rooms = layer_rule()
    assert [*drawn, "__main__"] == layers and picture.rstrip().endswith("__main__.py")
    event = next(line for line in picture.splitlines() if line.startswith("event/"))
    assert re.findall(r"(\w+)/ ◄", event) == rooms and event.endswith("◄ audit.py, check.py, verdicts.py")


def test_the_tagged_union_of_a_bots_setup_is_listed_whole() -> None:
    from arena.event.setup.botconfig import SETUPS

    text = " ".join(DOC.read_text(encoding="utf-8").split())
    listed = text.split("`botconfig.BotConfig.setup` is one of ", 1)[1].split(")", 1)[0]
    assert re.findall(r"`(\w+)`", listed) == [setup.__name__ for setup in SETUPS]
