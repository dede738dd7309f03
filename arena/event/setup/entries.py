"""What a bot's entry may say: its name, and the command line the arena launches it with.

The checks a configuration's ``[[bots]]`` table and a roster's students and ``bot.json`` share, below
both (:mod:`arena.event.setup.config` reads a roster, so the roster cannot ask the configuration).
"""

from __future__ import annotations

import difflib
import re
import string
from collections.abc import Sequence

from arena.errors import ConfigError

__all__ = ["COMMAND_PLACEHOLDERS", "OWN_PLACEHOLDERS", "check_command", "is_name"]

_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9 ._+#-]{0,38}[A-Za-z0-9._+#-])?")
"""A name: it begins with a letter or digit and does not end with a space (``alice `` would list as ``alice``)."""
COMMAND_PLACEHOLDERS = ("address", "name", "seed", "python")
"""The placeholders of a ``command`` bot's command line, which the launcher fills in."""
OWN_PLACEHOLDERS = ("name", "seed", "python")
"""The placeholders of a ``stdio`` or ``bhoos`` command line (it has no address)."""


def is_name(text: str) -> bool:
    """True when ``text`` may name a bot or a tournament: 1-40 letters, digits, spaces or ``._+#-``,
    beginning with a letter or a digit and not ending with a space."""
    return _NAME.fullmatch(text) is not None


def check_command(argv: Sequence[str], kind: str, where: str) -> None:
    """Refuses a launched bot's command line that the launcher's ``part.format(**values)`` could not
    fill in safely; ``where`` begins the message (``bot 'alice'``).

    Each part must be text (``{{`` and ``}}`` for braces) with placeholders that are bare names of
    :data:`COMMAND_PLACEHOLDERS` (``kind`` ``command``) or :data:`OWN_PLACEHOLDERS` (``stdio``,
    ``bhoos``): no format spec, no conversion, no attribute or index. Filling one in then costs what
    the value it puts there costs, where ``{python:>3000000000}`` would ask for 3 GB. The roster checks
    a submission's ``bot.json`` with this same function.
    """
    known = COMMAND_PLACEHOLDERS if kind == "command" else OWN_PLACEHOLDERS
    listed = ", ".join(f"{{{name}}}" for name in known)
    for part in argv:
        try:
            fields = [(field, spec, conversion) for _, field, spec, conversion in string.Formatter().parse(part)
                      if field is not None]
        except ValueError:
            raise ConfigError(f"{where}: the part {part!r} has a lone {{ or }}: write {{{{ or }}}} for a brace "
                              f"itself; the placeholders are {listed}") from None
        for field, spec, conversion in fields:
            if field == "token":
                raise ConfigError(
                    f"{where}: {{token}} is no longer a placeholder of a command: a launched bot gets its token in "
                    "the environment variable CALLBREAK_TOKEN, which the bot kit reads; remove --token {token} from "
                    "its command"
                )
            if field == "address" and kind != "command":
                raise ConfigError(
                    f"{where}: a {kind} bot has no {{address}}: the arena talks to it "
                    f"{'over its standard input and output' if kind == 'stdio' else 'over HTTP on its port'}; "
                    "remove {address} from its command"
                )
            if not field or field.isdigit():
                raise ConfigError(f"{where}: the part {part!r} has an empty placeholder {{{field}}}; the "
                                  f"placeholders are {listed}")
            if "." in field or "[" in field:
                raise ConfigError(f"{where}: the part {part!r} holds {{{field}}}: a placeholder is a bare name, "
                                  f"one of {listed}")
            if field not in known:
                close = difflib.get_close_matches(field, known, n=1)
                hint = f"did you mean {{{close[0]}}}? " if close else ""
                raise ConfigError(f"{where}: the part {part!r} names {{{field}}}, which is not a placeholder; "
                                  f"{hint}the placeholders are {listed}")
            if spec or conversion:
                raise ConfigError(f"{where}: the part {part!r}: a placeholder takes no format or conversion; write "
                                  f"{{{field}}} alone")
