"""The public API is what the public faces export, and what users read teaches only that.

docs/architecture.md ("What is public") states the rule: in Python, the public API is exactly the ``__all__``
of :data:`FACES`; every other module is internal. Here each name a face exports imports and has a docstring,
the section names every face, and every import of the arena in what users read (the READMEs, docs/ but the
architecture, examples/, sample_bots/) is of a face and of names it exports, but for the entries of
:data:`ALLOWED`, each with its reason.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FACES = ("arena", "arena.botkit", "arena.envs", "arena.envs.callbreak_v0", "arena.envs.openspiel")
"""The public faces: the package, the bot kit, the environments, and the two environment modules whose
libraries name an environment by its module (PettingZoo's ``callbreak_v0.env()``, OpenSpiel's registration on
import)."""

EXTRAS = {"numpy", "gymnasium", "pettingzoo", "pyspiel", "open_spiel"}
"""The optional dependencies a face's names may need (the ``rl`` and ``openspiel`` extras)."""

ALLOWED: dict[tuple[str, str], tuple[frozenset[str], str]] = {
    ("sample_bots/heuristic_bot.py", "arena.core.cards"): (
        frozenset({"ABOVE", "CARDS", "FULL_DECK", "SUIT_MASK", "SUIT_OF"}),
        "the heuristic bot's inference runs on the rules core's card bit tables for speed; the sample bots are "
        "installed with the package (its callbreak_arena.bots entry points) and change with it, and the bit "
        "layout is no promise to other bots",
    ),
    ("sample_bots/montecarlo_bot.py", "arena.core.cards"): (
        frozenset({"ABOVE", "CARDS", "FULL_DECK", "SUIT_MASK", "SUIT_OF"}),
        "the Monte Carlo bot deals and plays out its samples on the same bit tables, for the same reason",
    ),
    ("sample_bots/random_bot.py", "arena.players.house"): (
        frozenset({"HouseBot"}),
        "the random bot is the arena's house bot with the bot kit: one logic, so the two always play alike",
    ),
}
"""Imports of internal modules that what users read keeps, by file and module: the names, and why."""


def module_path(name: str) -> Path:
    """The source file of a module of the package, found without importing it."""
    base = ROOT.joinpath(*name.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def exported(face: str) -> list[str]:
    """A face's ``__all__``, read from its source (importing it may need an extra)."""
    tree = ast.parse(module_path(face).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            names = ast.literal_eval(node.value)
            assert isinstance(names, list)
            return names
    raise AssertionError(f"{face} declares no __all__")


def attribute_docstring(module: str, name: str, depth: int = 0) -> bool:
    """Whether ``name`` is assigned at the top of ``module`` with a docstring right after it, following
    ``from arena... import name`` to the module that defines it."""
    path = module_path(module)
    if depth > 4 or not path.exists():
        return False
    tree = ast.parse(path.read_text())
    for node, after in zip(tree.body, [*tree.body[1:], None], strict=True):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str) and bool(after.value.value.strip()))
    for node in ast.walk(tree):  # imports under TYPE_CHECKING count: a lazy face names its homes there
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("arena"):
            original = next((a.name for a in node.names if (a.asname or a.name) == name), None)
            if original is not None:
                return attribute_docstring(node.module, original, depth + 1)
    return False


def documented(face: str, name: str, value: object) -> bool:
    """A class, function or module by its own docstring; anything else by the docstring after its assignment."""
    if isinstance(value, type):
        own = vars(value).get("__doc__")
    elif isinstance(value, types.ModuleType) or inspect.isroutine(value):
        own = value.__doc__
    else:
        own = None
    return bool(own and own.strip()) or attribute_docstring(face, name)


@pytest.mark.parametrize("face", FACES)
def test_every_name_a_face_exports_imports_and_has_a_docstring(face: str) -> None:
    try:
        module = importlib.import_module(face)
    except ModuleNotFoundError as err:
        if err.name and err.name.split(".")[0] in EXTRAS:
            pytest.skip(f"{face} needs {err.name} (an extra)")
        raise
    assert module.__doc__ and module.__doc__.strip(), f"{face} has no docstring"
    assert list(module.__all__) == exported(face)
    missing, undocumented, skipped = [], [], []
    for name in module.__all__:
        try:
            value = getattr(module, name)
        except ModuleNotFoundError as err:
            if err.name and err.name.split(".")[0] in EXTRAS:
                skipped.append(name)
                continue
            raise
        except AttributeError:
            missing.append(name)
            continue
        if name != "__version__" and not documented(face, name, value):
            undocumented.append(name)
    assert not missing, f"{face}.__all__ names what it does not define: {missing}"
    assert not undocumented, f"{face} exports names without a docstring: {undocumented}"
    if skipped:
        pytest.skip(f"{', '.join(skipped)} of {face} need an extra that is not installed")


def test_the_version_is_documented() -> None:
    assert attribute_docstring("arena", "__version__")


IMPORT = re.compile(
    r"(?<![\w.])(?:from[ \t]+(arena(?:\.\w+)*)[ \t]+import[ \t]+(?:\(([\w\s,]+)\)|(\w+(?:[ \t]*,[ \t]*\w+)*))"
    r"|import[ \t]+(arena(?:\.\w+)*))"
)
"""An import of the arena in a document's text: ``from arena.x import a, b`` or ``import arena.x``."""


def read_by_users() -> list[Path]:
    """What users read: the READMEs (the package's too), the documents but the architecture, the examples
    and the sample bots."""
    docs = [path for path in sorted((ROOT / "docs").glob("*.md")) if path.name != "architecture.md"]
    readmes = sorted([*(ROOT / "arena").rglob("README.md"), *(ROOT / "sample_bots").rglob("*.md")])
    code = sorted([*(ROOT / "examples").rglob("*.py"), *(ROOT / "sample_bots").rglob("*.py")])
    return [ROOT / "README.md", *docs, *readmes, *code]


def imports_in(path: Path) -> list[tuple[int, str, tuple[str, ...]]]:
    """Each import of the arena in a file: its line, the module, and the names taken from it (none for
    ``import M``)."""
    text = path.read_text()
    found: list[tuple[int, str, tuple[str, ...]]] = []
    if path.suffix == ".py":
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                found += [(node.lineno, a.name, ()) for a in node.names if a.name.split(".")[0] == "arena"]
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "arena":
                found.append((node.lineno, node.module, tuple(a.name for a in node.names)))
        return found
    for match in IMPORT.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        if match.group(4):
            found.append((line, match.group(4), ()))
        else:
            names = tuple(n.strip() for n in (match.group(2) or match.group(3)).split(",") if n.strip())
            found.append((line, match.group(1), names))
    return found


def test_what_users_read_imports_only_the_public_faces() -> None:
    """A document, an example or a sample bot that imported an internal module would teach it to users."""
    exports = {face: set(exported(face)) for face in FACES}
    wrong, used = [], set()
    for path in read_by_users():
        where = path.relative_to(ROOT).as_posix()
        for line, module, names in imports_in(path):
            if not names:
                if module not in FACES and not any(face.startswith(module + ".") for face in FACES):
                    wrong.append(f"{where}:{line}: import {module} (not a public face)")
                continue
            allowed, _reason = ALLOWED.get((where, module), (frozenset(), ""))
            if allowed:
                used.add((where, module))
            for name in names:
                public = module in FACES and (name in exports[module] or f"{module}.{name}" in FACES)
                if not public and name not in allowed:
                    wrong.append(f"{where}:{line}: from {module} import {name} (not exported by a public face)")
    assert not wrong, "\n".join(wrong)
    assert used == set(ALLOWED), f"allowed imports no longer made: {set(ALLOWED) - used}"


def test_the_text_reader_finds_each_kind_of_import(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("Use `from arena.botkit import Bot, run`.\n\n```python\nimport arena.kit.view\n"
                    "from arena.core.cards import (\n    Card,\n    Hand,\n)\n```\n"
                    "Importing `arena.envs` registers it.\n")
    assert imports_in(page) == [(1, "arena.botkit", ("Bot", "run")), (4, "arena.kit.view", ()),
                                (5, "arena.core.cards", ("Card", "Hand"))]


def test_the_architecture_names_every_public_face() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("\n## What is public\n", 1)[1].split("\n## ", 1)[0]
    for face in FACES:
        assert f"`{face}`" in section, f"'What is public' does not name {face}"


def test_the_docstring_check_tells_a_documented_name_from_one_without() -> None:
    class Documented:
        """Has one."""

    class Bare(Documented):
        pass

    def bare() -> None:
        pass

    assert documented("arena", "Card", Documented) and documented("arena.envs", "ACTIONS", 66)
    assert not documented("arena", "Bare", Bare) and not documented("arena", "bare", bare)
    assert not documented("arena", "nothing", 3)  # data is documented only by a docstring after its assignment
