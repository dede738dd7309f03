"""The ``ladder`` commands: ``ladder init`` makes a standing ladder's folder, settings and database."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.cli.usage import EXIT_OK, Parser, UsageError, say
from arena.ladder.founding import ORGANISER, found_ladder
from arena.ladder.settings import DATABASE_FILE, SETTINGS_FILE


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """Adds ``ladder`` and its ``init``."""
    ladder = sub.add_parser(
        "ladder", help="a standing ladder: bots submitted at any time, played in duplicate blocks and rated",
        description="A standing ladder keeps running: entrants submit versions of their bot whenever they like, "
        "and each version is checked, plays duplicate blocks and is rated. Its folder holds its settings "
        f"({SETTINGS_FILE}) and, unless you choose another database, its SQLite database ({DATABASE_FILE}). "
        "See docs/ladder.md.",
    )
    what = ladder.add_subparsers(dest="ladder_command", required=True, metavar="WHAT", parser_class=Parser)
    init = what.add_parser(
        "init", help="make a new ladder: its folder, settings, database and the organiser's token",
        description=f"Make a new ladder in the folder DIR (created if it is not there): write {SETTINGS_FILE} "
        "with every setting at its default and a comment on each (edit it afterwards), create the database "
        "with every table, and print the organiser's token. Keep the token secret: it is what lets you run "
        "the ladder, and it is shown only this once (the database keeps only its SHA-256 digest). A folder "
        f"that already holds a {SETTINGS_FILE} is refused and left as it is.",
    )
    init.add_argument("folder", type=Path, metavar="DIR", help="the ladder's folder")
    init.add_argument("--database", default=None, metavar="URL",
                      help=f"where the database is, as a URL, e.g. postgresql+psycopg://USER:PASSWORD@HOST/NAME "
                      f"(default: the SQLite file {DATABASE_FILE} in DIR)")
    init.set_defaults(func=_cmd_init)


def _cmd_init(args: argparse.Namespace) -> int:
    settings_file = args.folder / SETTINGS_FILE
    if settings_file.exists():
        raise UsageError(f"{args.folder} already holds a ladder ({settings_file} exists): nothing was changed; "
                         "choose a new folder")
    try:
        founded = found_ladder(args.folder, args.database)
    except FileExistsError:  # made between the check above and the write
        raise UsageError(f"{args.folder} already holds a ladder ({settings_file} exists): nothing was changed; "
                         "choose a new folder") from None
    print(f"# the token of the ladder's {ORGANISER}: keep it secret; it is not shown again")
    print(founded.token)
    say(f"made the ladder {founded.settings.name!r} in {args.folder}: settings in {settings_file}, database at "
        f"schema {founded.revision}")
    return EXIT_OK
