"""The Python bot kit, under its public name: ``from arena.botkit import Bot, run``.

The kit itself lives in :mod:`arena.net.botkit`; this module only names it for bot authors.
"""

from arena.net.botkit import Bot, Refused, parse_args, play_session, run

__all__ = ["Bot", "Refused", "parse_args", "play_session", "run"]
