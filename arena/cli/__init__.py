"""The ``callbreak-arena`` command line.

Exit status: 0 success, 1 failure, 2 bad usage or bad input, 3 a run that stopped with games
outstanding because the bots they need were absent (run it again to resume). A failure or bad
input is one line on stderr (:func:`main` maps the errors to their statuses).

The commands live in one module per group: :mod:`arena.cli.tournament` (run, serve),
:mod:`arena.cli.results` (standings, replay, report, verify, status), :mod:`arena.cli.games`
(game, play, check-bot), :mod:`arena.cli.rules` (rules, deals), :mod:`arena.cli.roster`
(token, roster), :mod:`arena.cli.ladder` (ladder) and :mod:`arena.cli.zoo` (rate); :mod:`arena.cli.usage`
holds what they share.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from arena import __version__
from arena.cli import games, ladder, results, roster, rules, tournament, zoo
from arena.cli.usage import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, Parser, UsageError
from arena.errors import ArenaError, RecordsError

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = Parser(
        prog="callbreak-arena",
        description="Tournament harness for Callbreak bots: exact rules, seeded duplicate deals, gRPC seats.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    # The order of these calls is the order of the commands in --help.
    tournament.add_commands(sub)
    results.add_commands(sub)
    games.add_commands(sub)
    rules.add_commands(sub)
    roster.add_commands(sub)
    ladder.add_commands(sub)
    zoo.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status.

    Every error a user can meet ends here as one line on stderr and its exit status: a results
    folder that cannot be used as it is (:class:`RecordsError`) or a file the system refuses
    (:class:`OSError`) is a failure, 1; any other :class:`ArenaError` (a configuration, a rule, a
    deal file) and a :class:`UsageError` are bad input, 2.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
    except RecordsError as err:
        return _error(err, EXIT_FAILURE)
    except (UsageError, ArenaError) as err:
        return _error(err, EXIT_USAGE)
    except KeyboardInterrupt:
        print("callbreak-arena: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader (e.g. `head`) went away: not an error of ours
        sys.stderr.close()
        return EXIT_OK
    except OSError as err:  # the disk is full, a folder is not writable: the system's refusal, said plainly
        where = f"{err.filename}: " if err.filename else ""
        return _error(f"{where}{err.strerror or err}", EXIT_FAILURE)
    return status


def _error(error: object, status: int) -> int:
    text = " ".join(str(error).split())  # one line, whatever the message holds
    print(f"callbreak-arena: error: {text}", file=sys.stderr)
    return status
