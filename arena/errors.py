"""The exceptions callbreak-arena raises, in one tree.

* ``ArenaError`` -- the root of every error this package raises on purpose.
  * ``RulesError`` (also a ``ValueError``) -- a rules profile or switch is unknown, has a bad
    value, or the switches together make an impossible game.
  * ``CardError`` (also a ``ValueError``) -- text that should name cards does not.
  * ``DealFileError`` (also a ``ValueError``) -- a deal file is malformed; the message names
    the line and the reason.
  * ``IllegalAction`` (also a ``ValueError``) -- a call or a card that the rules forbid, or an
    action out of turn; the message explains the rule in a student's words.
    * ``IllegalCall``
    * ``IllegalPlay``
  * ``ConfigError`` (also a ``ValueError``) -- a tournament configuration is wrong: the message
    names the key, what was found and what is allowed.
  * ``RecordsError`` -- a results folder cannot be resumed or read: it belongs to another
    configuration, or its records are damaged beyond a torn last line.

Every message is a complete sentence meant for the person who made the mistake, so the command
line can print it as it is.
"""

from __future__ import annotations

__all__ = [
    "ArenaError",
    "CardError",
    "ConfigError",
    "DealFileError",
    "IllegalAction",
    "IllegalCall",
    "IllegalPlay",
    "RecordsError",
    "RulesError",
]


class ArenaError(Exception):
    """Root of every error callbreak-arena raises on purpose."""


class RulesError(ArenaError, ValueError):
    """An unknown profile or switch, a bad switch value, or an impossible combination."""


class CardError(ArenaError, ValueError):
    """Text that should name a card or a hand does not."""


class DealFileError(ArenaError, ValueError):
    """A malformed deal file; the message names the line and the reason."""


class IllegalAction(ArenaError, ValueError):
    """A call or card the rules forbid, or an action out of turn."""


class IllegalCall(IllegalAction):
    """A call outside the allowed range, or made out of turn."""


class IllegalPlay(IllegalAction):
    """A card the seat does not hold or may not play now."""


class ConfigError(ArenaError, ValueError):
    """A wrong or missing key in a tournament configuration."""


class RecordsError(ArenaError):
    """A results folder that cannot be resumed or read as it is."""
