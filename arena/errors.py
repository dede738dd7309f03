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
  * ``UsageError`` (:mod:`arena.cli.usage`) -- bad input on the command line: printed on one line, exit
    status 2.
  * ``PlayerFault`` (:mod:`arena.core.faults`) -- a player could not give a decision (late,
    disconnected, crashed); it carries the fault's kind and detail, and whether the seat is gone.
  * ``LeftTheGame`` (:mod:`arena.players.human`) -- the person at a human seat ended their input.
  * ``SessionClosed`` (:mod:`arena.transports.grpc.session`) -- a remote bot's session ended while a
    request to it was open.
  * ``HttpError`` (:mod:`arena.transports.bhoos.httpclient`) -- a request to a Bhoos bot got no
    complete HTTP response; the message says why in words.
    * ``TooLong`` -- the response's headers or body are longer than the client reads.
  * ``LaunchFailed`` (:mod:`arena.event.launch.launcher`) -- a process started for one game did not connect.
  * ``Refused`` (:mod:`arena.kit.bot`, for bot authors as ``arena.botkit.Refused``) -- the arena
    refused a bot's connection; it carries the protocol's reason and its words.
  * ``SubmissionError`` (:mod:`arena.ladder.intake`) -- an upload to the ladder was refused (too large, too
    many files, a link, too many this hour, the same content again); the message says which limit.
    * ``TooOften`` -- refused before any of it was read: the entrant's uploads of the hour are spent, or
      another of theirs is still being unpacked (HTTP 429).

The exceptions after ``RecordsError`` carry data of their own layer (a fault kind, a protocol
reason), so they are defined in the module named beside them and only rooted here.

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
