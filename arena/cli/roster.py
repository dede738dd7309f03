"""The commands that hand out access: ``token`` for a remote bot and ``roster`` for a class."""


from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from arena.cli.usage import (
    EXIT_OK,
    Parser,
    UsageError,
    say,
)
from arena.errors import ArenaError
from arena.event.setup.defaults import ROSTER_FILE
from arena.transports.grpc.tokens import new_token, token_sha256

if TYPE_CHECKING:
    from arena.event.setup.roster import Roster


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """Adds ``token`` and ``roster``."""
    token = sub.add_parser(
        "token", help="make a new random token for a remote bot, and its line for the configuration",
        description="Print a new random token (32 hexadecimal digits) for a remote bot, then the line "
        'token_sha256 = "..." for its [[bots]] table: the configuration then holds only the SHA-256 digest of '
        "the token, and whoever reads the file cannot connect as the bot. Give the token to the bot's author "
        "alone; their bot reads it from the environment variable CALLBREAK_TOKEN (or --token). Run it once per "
        "bot.",
    )
    token.add_argument("--name", default=None,
                       help="the bot's name: print its whole [[bots]] table (name, remote, token_sha256)")
    token.set_defaults(func=_cmd_token)
    _add_roster_commands(sub)


def _cmd_token(args: argparse.Namespace) -> int:
    token = new_token()
    whose = f"the token of bot {json.dumps(args.name)}" if args.name else "the token"
    print(f"# {whose}: give it to the bot's author (their bot reads CALLBREAK_TOKEN), and to no one else")
    print(token)
    if args.name:
        print("# the bot's table for the configuration")
        print(f"[[bots]]\nname = {json.dumps(args.name)}\nremote = true")
    else:
        print("# the line for the bot's [[bots]] table in the configuration")
    print(f'token_sha256 = "{token_sha256(token)}"')
    return EXIT_OK


def _add_roster_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    roster = sub.add_parser(
        "roster", help="a class roster: students, their tokens and their submitted bots",
        description="Keep a class roster (roster.toml, with a folder per submission in submissions/ beside it): "
        "each student has a token, printed once and kept as its SHA-256 digest only, and may submit a bot. A "
        'configuration with [tournament] roster = "roster.toml" plays every student: their submission, launched '
        "in the sandbox, or else a remote bot that connects with their token. See docs/classroom.md.",
    )
    what = roster.add_subparsers(dest="roster_command", required=True, metavar="WHAT", parser_class=Parser)
    add = what.add_parser("add", help="add a student and print their token (once)",
                          description="Add a student to the roster and print their new token: give it to them "
                          "alone. The roster keeps only its SHA-256 digest, so it is not shown again (`roster token "
                          "NAME` makes a new one).")
    add.add_argument("name", help="the student's bot name: 1-40 letters, digits, spaces or ._+#-")
    add.add_argument("--display", default="", metavar="TEXT", help='the name the live page shows, e.g. "Ada Lovelace"')
    add.set_defaults(func=_cmd_roster_add)
    listing = what.add_parser("list", help="the students, their display names and submissions (never tokens)",
                              description="List the students: name, display name, how each plays (their "
                              "submission, or connecting with their token) and when they last submitted.")
    listing.set_defaults(func=_cmd_roster_list)
    revoke = what.add_parser("revoke", help="revoke a student's token",
                             description="Forget a student's token: from the next start of the arena it admits "
                             "nothing. A submitted bot still plays; `roster token NAME` gives a new token.")
    revoke.add_argument("name")
    revoke.set_defaults(func=_cmd_roster_revoke)
    token = what.add_parser("token", help="give a student a new token (the old one stops working)",
                            description="Make a new token for a student (lost, or revoked) and print it once.")
    token.add_argument("name")
    token.set_defaults(func=_cmd_roster_token)
    imported = what.add_parser("import", help="add the students of a CSV file (name[,display])",
                               description="Add every student of a CSV file of lines name[,display] (a first line "
                               "name,display is a header) who is not on the roster yet, and print each new token "
                               "once, as CSV lines name,display,token, or write them to --tokens-out. Nothing is "
                               "added unless every line is right.")
    imported.add_argument("csv", type=Path, metavar="FILE.csv")
    imported.add_argument("--tokens-out", type=Path, default=None, metavar="FILE",
                          help="write the new tokens to FILE (a new file, readable by you alone) instead of printing "
                          "them")
    imported.set_defaults(func=_cmd_roster_import)
    submit = what.add_parser("submit", help="copy a student's bot into submissions/NAME/",
                             description="Copy a student's bot into submissions/NAME/, replacing their earlier "
                             "submission: a .py file (it becomes bot.py, run as `python bot.py --arena ADDRESS` with "
                             "the bot kit), or a folder holding bot.py, or bot.json saying how it starts, e.g. "
                             '{"kind": "stdio", "command": "node bot.js"}. It plays from the next start of an event '
                             "that takes its bots from the roster; results already recorded stay.")
    submit.add_argument("name")
    submit.add_argument("bot", type=Path, metavar="FILE_OR_FOLDER")
    submit.set_defaults(func=_cmd_roster_submit)
    for parser in (add, listing, revoke, token, imported, submit):
        parser.add_argument("--roster", type=Path, default=Path(ROSTER_FILE), metavar="FILE",
                            help=f"the roster file (default: {ROSTER_FILE} in this folder); submissions/ is beside it")


def _roster(args: argparse.Namespace, *, new: bool = False) -> Roster:
    """The roster of ``--roster``; an empty one when ``new`` and the file is not there yet."""
    from arena.event.setup.roster import Roster, read_roster

    if new and not args.roster.exists():
        return Roster(args.roster)
    return read_roster(args.roster)


def _print_token(name: str, token: str) -> None:
    print(f"# the token of {json.dumps(name)}: give it to them alone (their bot reads CALLBREAK_TOKEN); it is not "
          "shown again")
    print(token)


def _cmd_roster_add(args: argparse.Namespace) -> int:
    roster = _roster(args, new=True)
    token = roster.add(args.name, args.display)
    roster.save()
    _print_token(args.name, token)
    say(f"added {args.name} to {roster.path}")
    return EXIT_OK


def _cmd_roster_list(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from arena.event.setup.roster import submitted_text

    roster = _roster(args)
    folder = roster.path.absolute().parent
    rows = []
    for student in roster.students:
        try:
            submission = roster.submission(student.name)
        except ArenaError as err:
            plays = f"nothing: its submission cannot be started ({err})"
        else:
            plays = (f"its submission: {submission.describe(within=folder)}" if submission is not None
                     else "connects with its token" if student.token_sha256 else "nothing (token revoked)")
        rows.append([student.name, student.display or "-", plays, submitted_text(roster.submitted_at(student.name))])
    if not rows:
        print(f"{roster.path}: no students yet")
        return EXIT_OK
    # tabulate measures each cell as a terminal shows it (wide characters: Chinese, Devanagari) with wcwidth.
    print(tabulate(rows, headers=["name", "display", "plays as", "submitted"], disable_numparse=True))
    if any(row[2].startswith("its submission") for row in rows):
        print(f"\nPaths are from the roster's folder, {folder}; python is the arena's own, {sys.executable}.")
    return EXIT_OK


def _cmd_roster_revoke(args: argparse.Namespace) -> int:
    roster = _roster(args)
    roster.revoke(args.name)
    roster.save()
    still = (f"; the bot {args.name} submitted still plays" if roster.submission(args.name) is not None else "")
    print(f"revoked the token of {args.name}: it admits nothing from the next start of the arena (an arena running "
          f"now keeps the tokens it started with){still}")
    return EXIT_OK


def _cmd_roster_token(args: argparse.Namespace) -> int:
    roster = _roster(args)
    token = roster.reissue(args.name)
    roster.save()
    _print_token(args.name, token)
    say(f"the earlier token of {args.name} admits nothing from the next start of the arena")
    return EXIT_OK


def _cmd_roster_import(args: argparse.Namespace) -> int:
    from arena.event.setup.roster import read_names, tokens_csv, write_tokens

    roster = _roster(args, new=True)
    rows = read_names(args.csv)
    for name, _ in rows:
        if name in roster:
            say(f"{name} is already on the roster: left as it is")
    issued = [(name, display, roster.add(name, display)) for name, display in rows if name not in roster]
    if args.tokens_out is not None and issued:
        try:  # before the roster is saved: tokens that cannot be handed out must not be the only ones
            write_tokens(args.tokens_out, issued)
        except FileExistsError:
            raise UsageError(f"{args.tokens_out} exists already: give --tokens-out a new file (tokens are never "
                             "written over)") from None
    roster.save()
    if args.tokens_out is None:
        sys.stdout.write(tokens_csv(issued))
    elif issued:
        say(f"wrote {len(issued)} tokens to {args.tokens_out} (readable by you alone): hand each student their "
             "own, then delete the file")
    say(f"added {len(issued)} students to {roster.path} ({len(roster.students)} in all)")
    return EXIT_OK


def _cmd_roster_submit(args: argparse.Namespace) -> int:
    roster = _roster(args)
    submission = roster.submit(args.name, args.bot)
    print(f"{args.name}: {submission.describe()}, in {submission.folder}; it plays from the next start of an event "
          "that takes its bots from this roster")
    return EXIT_OK


