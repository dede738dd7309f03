"""In-process bots of a tournament: loading the class a configuration names, and making instances.

A configuration names an in-process bot as ``module:Class`` or ``path/to/file.py:Class``. Every
game gets a fresh instance, so no bot carries memory from one rotation of a deal set to the next.

The arena's own bot, the house bot, is in the package (:mod:`arena.players.house`). Other bots it
offers by name (the sample opponents of ``check-bot`` and ``game``) are found by their entry points in
the group :data:`BOT_ENTRY_POINTS`, which the package that holds them declares (the sample bots', in
``pyproject.toml``): the arena never names them itself.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from arena.errors import ConfigError

__all__ = ["BOT_ENTRY_POINTS", "HOUSE_BOT", "load_bot_class", "make_bot", "registered_bot", "try_instantiate"]

HOUSE_BOT = "arena.players.house:HouseBot"
"""The unranked filler bot that pads a field to a multiple of four."""
BOT_ENTRY_POINTS = "callbreak_arena.bots"
"""The entry-point group that names bots the arena offers by name: ``heuristic = "module:Class"``."""


def registered_bot(name: str) -> str:
    """The ``module:Class`` of the bot registered as ``name`` in :data:`BOT_ENTRY_POINTS`; a
    :class:`ConfigError` that says how to install it when no installed package registers one."""
    import importlib.metadata  # slow to import, and only a sample bot's name needs it

    for entry in importlib.metadata.entry_points(group=BOT_ENTRY_POINTS, name=name):
        return f"{entry.module}:{entry.attr}"
    raise ConfigError(f"no bot called {name!r} is installed: the sample bots register theirs as entry points "
                      f"({BOT_ENTRY_POINTS}) when callbreak-arena is installed (pip install -e . in its folder)")


def load_bot_class(spec: str) -> Callable[..., Any]:
    """The class named by ``module:Class`` or ``path/to/file.py:Class``."""
    module_name, _, class_name = spec.rpartition(":")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            loader_spec = importlib.util.spec_from_file_location(path.stem, path)
            if loader_spec is None or loader_spec.loader is None:
                raise ImportError(f"cannot load {path}")
            module = importlib.util.module_from_spec(loader_spec)
            loader_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
        factory = getattr(module, class_name)
    except (ImportError, AttributeError, OSError) as err:
        raise ConfigError(f"cannot load the in-process bot {spec!r}: {err}") from None
    except SyntaxError as err:
        raise ConfigError(f"cannot load the in-process bot {spec!r}: {err.filename}, line {err.lineno}: "
                          f"invalid Python ({err.msg})") from None
    except (Exception, SystemExit) as err:  # the module's own code failed as it was imported
        raise ConfigError(f"cannot load the in-process bot {spec!r}: importing it raised "
                          f"{type(err).__name__}{_said(err)}") from None
    if not callable(factory):
        raise ConfigError(f"{spec!r} is not a class or function")
    return factory  # type: ignore[no-any-return]


def make_bot(factory: Callable[..., Any], seed: int, options: Mapping[str, Any], bot: str = "") -> Any:
    """A fresh bot instance (each game gets its own, so none carries memory between replays)."""
    try:
        return factory(seed=seed, **options)
    except TypeError:
        try:
            return factory(**options)
        except TypeError as err:  # options the class does not take: the configuration's mistake
            raise ConfigError(
                f"cannot create the in-process bot {_named(factory, bot)} with options {dict(options)}: {err}"
            ) from None


def try_instantiate(factory: Callable[..., Any], seed: int, options: Mapping[str, Any], bot: str) -> None:
    """Makes one instance of ``bot`` before a tournament begins: a bot that cannot be made at all is
    refused with a :class:`ConfigError` naming it. (Once games run, a failure to make one is a
    crash of that game's seat instead.)"""
    try:
        make_bot(factory, seed, options, bot)
    except ConfigError:
        raise
    except (Exception, SystemExit) as err:
        raise ConfigError(f"cannot create the in-process bot {_named(factory, bot)}: its constructor raised "
                          f"{type(err).__name__}{_said(err)}") from None


def _named(factory: Callable[..., Any], bot: str) -> str:
    name = str(getattr(factory, "__qualname__", repr(factory)))
    return f"{bot!r} ({name})" if bot else name


def _said(error: BaseException) -> str:
    """``: message`` for an error with a message, else nothing."""
    text = " ".join(str(error).split())
    return f": {text}" if text else ""
