"""The closed sets of a tournament's configuration: a bot's kind, the format, the rotation, the forfeit rule
and the backend.

Each is a ``StrEnum`` whose values are the words of the configuration file and of the manifest, so a
member compares equal to its word and is written as it (``json.dumps(Format.SPRT) == '"sprt"'``).
"""

from __future__ import annotations

import enum

__all__ = ["Backend", "BotKind", "Forfeit", "Format", "Rotation"]


class BotKind(enum.StrEnum):
    """How a bot plays: the key of its ``[[bots]]`` table that says so (each table has exactly one). Each kind's
    configuration is in :mod:`arena.event.setup.botconfig`, and how it plays in :mod:`arena.event.play.kinds`."""

    COMMAND = "command"
    """A program the arena launches, which connects over gRPC."""
    PYTHON = "python"
    """A class the arena runs in its own process."""
    REMOTE = "remote"
    """A program that connects by itself, with its token."""
    STDIO = "stdio"
    """A program the arena launches for each seat, speaking JSON lines on its standard streams."""
    BHOOS = "bhoos"
    """A Bhoos-contest HTTP bot the arena launches for each seat."""
    BHOOS_URL = "bhoos_url"
    """A Bhoos-contest HTTP bot already running elsewhere."""



class Format(enum.StrEnum):
    """Who meets whom (docs/configuration.md, "Format options")."""

    ROUND_ROBIN = "round-robin"
    GAUNTLET = "gauntlet"
    HEAD_TO_HEAD = "head-to-head"
    SWISS = "swiss"
    SPRT = "sprt"

    @property
    def compares_two(self) -> bool:
        """True for the formats that compare two bots, A and B."""
        return self in (Format.HEAD_TO_HEAD, Format.SPRT)


class Rotation(enum.StrEnum):
    """How a group of four bots is seated round the deals of a block."""

    CYCLIC = "cyclic"
    """4 seatings: each bot holds each hand once."""
    FULL = "full"
    """All 24 seatings."""
    ONCE = "once"
    """One seating: each bot holds a deal set's cards once, in the seat every other bot holds them in, against the
    house trio (:func:`arena.event.plan.schedule.once_order`)."""

    @property
    def seatings(self) -> int:
        """The games of one block."""
        return {Rotation.CYCLIC: 4, Rotation.FULL: 24, Rotation.ONCE: 1}[self]


class Forfeit(enum.StrEnum):
    """What happens to the games of a bot absent past ``absent_after_s`` once nothing else can be played."""

    WAIT = "wait"
    FALLBACK = "fallback"
    WITHDRAW = "withdraw"


class Backend(enum.StrEnum):
    """Where games of in-process bots are played: this machine (``workers`` processes), or a Ray cluster."""

    LOCAL = "local"
    RAY = "ray"
