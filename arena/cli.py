"""The ``callbreak-arena`` command line.

Exit status: 0 success, 1 failure, 2 bad usage or bad input, 3 a run that stopped with games
outstanding because the bots they need were absent (run it again to resume). A failure or bad
input is one line on stderr (:func:`main` maps the errors to their statuses).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from tabulate import tabulate

from arena import __version__
from arena.core.cards import Card, Hand, Suit
from arena.core.dealing import DealFile, seeded_deal, seeded_deals
from arena.core.game import Game, RoundResult
from arena.core.rules import PROFILES, SWITCHES, Rules, explain, legal_cards
from arena.core.scoring import format_score, round_score
from arena.errors import ArenaError, RecordsError
from arena.event.audit import audit
from arena.event.bots import load_bot_class, make_bot
from arena.event.check import (
    CHECK_DEADLINE_MS,
    LOGS,
    NAME,
    OPPONENTS,
    BotUnderTest,
    check_bot,
    play_one_deal_set,
    report,
)
from arena.event.config import PAGE_PORT, TournamentConfig, load_config, parse_config
from arena.event.roster import (
    ROSTER_FILE,
    Roster,
    read_names,
    read_roster,
    submitted_text,
    tokens_csv,
    write_tokens,
)
from arena.event.status import Status, read_status
from arena.event.store import ResultsStore
from arena.event.tournament import Tournament
from arena.players.base import Player
from arena.players.house import HouseBot
from arena.players.human import HumanPlayer, LeftTheGame
from arena.players.local import LocalPlayer, play_out
from arena.players.table import TableSettings, play_game
from arena.rating.html import REPORT_FILE
from arena.rating.leaderboard import POLL_S, LivePage
from arena.rating.live import LiveJudge
from arena.rating.report import folder_report
from arena.rating.sequential import describe
from arena.transports.grpc.tokens import new_token, token_sha256

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_OUTSTANDING = 3
EXIT_INTERRUPTED = 130
"""Stopped by Ctrl-C (SIGINT), as shells report it: 128 + 2."""
EXIT_TERMINATED = 143
"""Stopped by SIGTERM, as shells report it: 128 + 15."""


class UsageError(ArenaError):
    """Bad input on the command line: printed on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _add_rules_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile", default="nepali", metavar="P",
        help=f"rules profile: {', '.join(PROFILES)} (default: nepali)",
    )
    parser.add_argument(
        "--set", dest="switches", action="append", default=[], metavar="KEY=VALUE",
        help=f"change one rules switch, repeatable; switches: {', '.join(SWITCHES)}",
    )


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, default=None, metavar="DIR",
                        help="the results folder (default: the configuration's, or results/<name>)")
    parser.add_argument("--fresh", action="store_true",
                        help="discard any results already in the folder and start again")
    parser.add_argument("--format", choices=FORMATS, default="table", help="how to print the standings")
    parser.add_argument("--wide", action="store_true",
                        help="print every column of the standings (default: a compact table; standings.md and "
                        "standings.json in the results folder always have every column)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="play the games of in-process bots in N processes (default: tournament.workers, 1); "
                        "launched and remote bots stay in the arena's process (docs/scale.md)")


def _add_bot_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("the bot (one of)")
    group.add_argument("--bot", metavar="FILE.py:CLASS",
                       help="an in-process Python bot: path/to/bot.py:Class or module:Class")
    group.add_argument("--command", metavar="CMD",
                       help="a bot the arena launches, speaking gRPC: {address} is where it connects, as in a "
                       "configuration, e.g. \"python mybot.py --arena {address}\"")
    group.add_argument("--stdio", metavar="CMD", help="a bot the arena launches, speaking JSON lines on stdin/stdout")
    group.add_argument("--bhoos", metavar="CMD", help="a Bhoos-contest HTTP bot the arena launches, e.g. "
                       "\"node src/index.js\"")
    group.add_argument("--bhoos-url", metavar="URL", help="a Bhoos-contest HTTP bot already running at URL")
    group.add_argument("--remote", action="store_true",
                       help="a bot that connects by itself: a token is printed, and the arena waits for it")


def _bot_under_test(args: argparse.Namespace, required: bool) -> BotUnderTest | None:
    given = [(kind, value) for kind, value in (
        ("python", args.bot), ("command", args.command), ("stdio", args.stdio), ("bhoos", args.bhoos),
        ("bhoos_url", args.bhoos_url), ("remote", args.remote or None)) if value]
    if len(given) > 1:
        raise UsageError("give one bot: one of --bot, --command, --stdio, --bhoos, --bhoos-url or --remote")
    if not given:
        if required:
            raise UsageError("give the bot to check: one of --bot FILE.py:CLASS, --command CMD, --stdio CMD, "
                             "--bhoos CMD, --bhoos-url URL or --remote")
        return None
    kind, value = given[0]
    if kind == "python" and ":" not in str(value):
        raise UsageError(f"--bot must look like path/to/bot.py:Class or module:Class, not {value!r}")
    if kind != "remote":
        return BotUnderTest(kind, str(value))
    token = new_token()
    print("Connect your bot with this token (it is valid for this check only):\n"
          f"    export CALLBREAK_TOKEN={token}\nthen start it with --arena and the address printed below.",
          file=sys.stderr, flush=True)
    return BotUnderTest("remote", token=token)


def _rules(args: argparse.Namespace) -> Rules:
    return Rules.profile(args.profile).with_text_switches(args.switches)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(
        prog="callbreak-arena",
        description="Tournament harness for Callbreak bots: exact rules, seeded duplicate deals, gRPC seats.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    run = sub.add_parser(
        "run", help="run a tournament (without CONFIG: the embedded demo over real gRPC)",
        description="Run a tournament from a TOML configuration (see docs/configuration.md), writing durable "
        "records to its results folder; run it again on the same folder to resume after an interruption, or "
        "after changing the configuration (more deal sets, a late entrant, a bot removed). Games start as "
        "their bots are present; when only games of absent bots are left, tournament.forfeit decides (see "
        "docs/operations.md). Without CONFIG, run the embedded demo: the sample bots as separate processes, "
        "connected over real gRPC, in a duplicate round robin. Ends with the standings. Exit status: 0 every "
        "planned game played or settled, 1 failure, 2 bad configuration, 3 stopped with games outstanding "
        "(absent bots, named on stderr; run again to resume).",
    )
    run.add_argument("config", nargs="?", type=Path, help="the tournament configuration (TOML)")
    _add_run_options(run)
    _add_page_options(run)
    run.set_defaults(func=_cmd_run)

    serve = sub.add_parser(
        "serve", help="a long-running arena that waits for remote bots",
        description="Start the arena of CONFIG for a long event: tables start as their bots are present, and "
        "under tournament.forfeit = \"wait\" (the default) games of absent bots wait for them as long as it "
        "takes (`callbreak-arena status DIR` says for whom). Records, resume and exit statuses as with run.",
    )
    serve.add_argument("config", type=Path, help="the tournament configuration (TOML)")
    _add_run_options(serve)
    _add_page_options(serve)
    serve.set_defaults(func=_cmd_serve)

    standings = sub.add_parser(
        "standings", help="the standings of a results folder, recomputed from its records",
        description="Recompute the standings from the records of a results folder alone.",
    )
    standings.add_argument("folder", type=Path, metavar="DIR", help="a results folder")
    standings.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    standings.add_argument("--wide", action="store_true",
                           help="every column (default: a compact table of rank, bot, points per game and its "
                           "interval, matchpoints, calls made, games, faults and status)")
    standings.set_defaults(func=_cmd_standings)

    replay = sub.add_parser(
        "replay", help="one recorded game, trick by trick",
        description="Print a recorded game: for each round the four hands, the calls, every trick in play "
        "order with its winner, and the scores.",
    )
    replay.add_argument("folder", type=Path, metavar="DIR", help="a results folder")
    replay.add_argument("game", help="the game id, like r1-g1-d3-p2 (see the 'game' field of the records)")
    replay.add_argument("--round", type=int, default=None, help="only this round")
    replay.set_defaults(func=_cmd_replay)

    page = sub.add_parser(
        "report", help="the results folder as one web page: standings, plots, feedback per bot, replays",
        description="Write DIR/report.html (or --out FILE): one self-contained page that opens from disk with "
        "no network, for a projector and for each bot's author. It holds the standings with their intervals, "
        "each bot's duplicate score with its 95% interval and its course round by round (inline SVG), the "
        "head-to-head matrix as a heat map, calling accuracy and faults, a section per bot listing its faults "
        "(game, round, trick, detail), and replays of the games with faults and of a few others. A run writes "
        "the same page to its results folder when it ends. See docs/report.md.",
    )
    page.add_argument("folder", type=Path, metavar="DIR", help="a results folder")
    page.add_argument("--out", type=Path, default=None, metavar="FILE",
                      help="where to write the page (default: DIR/report.html)")
    page.add_argument("--roster", type=Path, default=None, metavar="FILE",
                      help="a class roster (roster.toml): the page shows each student's display name beside the "
                      "bot's name")
    page.set_defaults(func=_cmd_report)

    verify = sub.add_parser(
        "verify", help="audit a results folder independently",
        description="Check that every record follows from its rules and seed: legal plays, trick winners, "
        "tricks won, scores and totals, deals matching the seed, every planned game present once. "
        "Exit 0 when all holds; otherwise print the first violation with its location and exit 1.",
    )
    verify.add_argument("folder", type=Path, metavar="DIR", help="a results folder")
    verify.set_defaults(func=_cmd_verify)

    status = sub.add_parser(
        "status", help="what a tournament is doing now: bots, sessions, tables, games, faults, standings",
        description="Show the status a running arena writes to its results folder (about once a second): where "
        "it listens, the connected bots and their sessions, the tables in play, games done and planned, the bots "
        "it waits for and since when, faults per bot, and the current standings. On a folder whose run has "
        "ended, the last status and the standings.",
    )
    status.add_argument("folder", type=Path, metavar="DIR", help="a results folder")
    status.add_argument("--json", action="store_true", help="print the status as one JSON object")
    status.set_defaults(func=_cmd_status)

    game = sub.add_parser(
        "game", help="play one seeded game and print it (four random bots, or your bot against sample bots)",
        description="Play one seeded game of four sample random bots in-process, printed round by round, "
        "then the final standings. With a bot of yours (--bot, --command, --stdio, --bhoos, --bhoos-url or "
        "--remote), it plays one deal set against three sample bots (--opponents): the same deals four times, "
        "with the seats rotated, as in a tournament; the game in which it sits first is printed, then the "
        "four games' totals. Exit status: 0 played, 2 bad arguments, 3 your bot did not play.",
    )
    _add_rules_options(game)
    game.add_argument("--seed", type=int, default=1, help="the deal seed (default: 1)")
    _add_bot_options(game)
    game.add_argument("--opponents", choices=tuple(OPPONENTS), default="heuristic",
                      help="the sample bots your bot plays against (default: heuristic)")
    game.set_defaults(func=_cmd_game)

    play = sub.add_parser(
        "play", help="play a game yourself, in the terminal, against three sample bots",
        description="Sit at a table yourself against three sample bots (or three of a class of your own with "
        "--bot): your hand sorted by suit, the calls, the trick on the table and the cards you may play are "
        "shown; type a number to call and a card (like AS, TH, 10h) to play. A card the rules refuse is "
        "explained and asked again; nobody plays for you. Ctrl-D leaves the game.",
    )
    _add_rules_options(play)
    play.add_argument("--seed", type=int, default=1, help="the deal seed (default: 1)")
    play.add_argument("--seat", type=int, choices=(1, 2, 3, 4), default=1, help="your seat (default: 1)")
    play.add_argument("--opponents", choices=tuple(OPPONENTS), default="heuristic",
                      help="the sample bots you play against (default: heuristic)")
    play.add_argument("--bot", metavar="FILE.py:CLASS", help="play against three of this in-process bot instead")
    play.set_defaults(func=_cmd_play)

    check = sub.add_parser(
        "check-bot", help="check that a bot plays by the rules, in time, at several tables at once",
        description="Check a bot before a tournament: it plays at least --games games against three sample "
        "bots, a deal set under each rules profile it is checked under, four tables at once, with the "
        "tournament's deadline and fault rules. Every profile is played at one address, printed once: a bot "
        "that connects by itself (--remote) connects once. The report says, for each check, PASS, FAIL or "
        "INCOMPLETE (part of it was not played: it says which profiles, and why), and for each failure what "
        "was asked, what came back and what the rule says. When a check does not pass, the records and your "
        "bot's log are kept in --logs and the report names the log. Give the bot as one of --bot, --command, "
        "--stdio, --bhoos, --bhoos-url or --remote. Exit status: 0 every check passed, 1 a check did not "
        "pass, 2 bad arguments.",
    )
    _add_bot_options(check)
    check.add_argument("--profile", action="append", default=[], metavar="NAME",
                       help="check under this rules profile only (repeat it, or give a comma list, for more; one "
                       f"of {', '.join(PROFILES)}); default: every profile, but only bhoos for --bhoos and "
                       "--bhoos-url, as a contest bot calls 1 to 8")
    check.add_argument("--games", type=int, default=20, help="games to play at least (default: 20)")
    check.add_argument("--seed", type=int, default=1, help="the deal seed (default: 1)")
    check.add_argument("--deadline-ms", type=int, default=CHECK_DEADLINE_MS,
                       help=f"the time to answer each request (default: {CHECK_DEADLINE_MS})")
    check.add_argument("--opponents", choices=tuple(OPPONENTS), default="random",
                       help="the sample bots it plays against (default: random)")
    check.add_argument("--folder", type=Path, default=None, metavar="DIR",
                       help="a launched bot's own folder, the one its sandbox shows it, as folder = \"DIR\" of a "
                       "bot in a configuration (default: the folder of the first file its command names)")
    check.add_argument("--read-only", type=Path, action="append", default=[], metavar="DIR",
                       help="one more folder a launched bot's sandbox shows it read-only, as [sandbox] read_only "
                       "in a configuration (repeat it for more)")
    check.add_argument("--logs", type=Path, default=LOGS, metavar="DIR",
                       help=f"where a check that does not pass keeps its records and your bot's log, one folder "
                       f"per profile, replacing an earlier check's (default: {LOGS}, in the current folder)")
    check.set_defaults(func=_cmd_check_bot)

    rules = sub.add_parser(
        "rules", help="teach and check the rules: legal cards, round scores, profiles",
        description="Ask the rules core what is legal, what a round scores, or what a profile holds.",
    )
    rules_sub = rules.add_subparsers(dest="rules_command", required=True, metavar="WHAT", parser_class=_Parser)

    legal = rules_sub.add_parser(
        "legal", help="the legal cards for a hand and a trick, with the reason",
        description="Print the cards a seat holding HAND may play to TRICK, and the rule that decides it. "
        'Example: callbreak-arena rules legal --hand "TH 4H 9C" --trick "7H"',
    )
    _add_rules_options(legal)
    legal.add_argument("--hand", required=True, help='the cards held, like "AS TH 4H 2C"')
    legal.add_argument("--trick", default="", help='the cards already in the trick, in play order, like "7H 9H"')
    legal.add_argument("--trump", default=None, help="the trump suit S, H, D or C (default: the rules' trump)")
    legal.add_argument("--first-trick", action="store_true", help="this is the first trick of the round")
    legal.add_argument("--json", action="store_true", help='print one JSON object: {"legal": [...], "reason": "..."}')
    legal.set_defaults(func=_cmd_rules_legal)

    score = rules_sub.add_parser(
        "score", help="the round score of a call and the tricks taken",
        description="Print the round score of a seat that called CALL and took TRICKS. "
        "Example: callbreak-arena rules score --call 4 --tricks 5",
    )
    _add_rules_options(score)
    score.add_argument("--call", required=True, type=int, help="the call made")
    score.add_argument("--tricks", required=True, type=int, help="the tricks taken (0-13)")
    score.add_argument("--json", action="store_true", help='print one JSON object: {"tenths": 41, "display": "4.1"}')
    score.set_defaults(func=_cmd_rules_score)

    show = rules_sub.add_parser(
        "show", help="every switch of a profile", description="Print every switch of a profile, with changes applied."
    )
    _add_rules_options(show)
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.set_defaults(func=_cmd_rules_show)

    deals = sub.add_parser(
        "deals", help="print or write seeded deal sets",
        description="Print the seeded deals of COUNT games (deal sets) in the deal-file format, "
        "or write them to a file. Redeal attempts are not included.",
    )
    deals.add_argument("--seed", type=int, required=True, help="the tournament seed")
    deals.add_argument("--count", type=int, required=True, help="how many deal sets (games)")
    deals.add_argument("--rounds", type=int, default=None, help="rounds per deal set (default: the profile's)")
    deals.add_argument("--profile", default="nepali", help="profile whose round count is used (default: nepali)")
    deals.add_argument("--out", type=Path, default=None, help="write to this file instead of printing")
    deals.set_defaults(func=_cmd_deals)

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
    return parser


# -- rules ---------------------------------------------------------------------------------


def _cmd_rules_legal(args: argparse.Namespace) -> int:
    rules = _rules(args)
    hand = Hand.parse(args.hand)
    trick = [Card.parse(word) for word in args.trick.replace(",", " ").split()]
    if not hand:
        raise UsageError("--hand is empty: give the cards the seat holds")
    if len(trick) > 3:
        raise UsageError(f"--trick has {len(trick)} cards; a trick to play into holds 0 to 3 cards")
    if len(set(trick)) != len(trick):
        raise UsageError("--trick names a card twice")
    clash = [str(c) for c in trick if c in hand]
    if clash:
        raise UsageError(f"{' '.join(clash)} is both in --hand and in --trick")
    trump = int(Suit.parse(args.trump)) if args.trump else int(rules.trump)
    indices = [c.index for c in trick]
    mask, reason = legal_cards(rules, hand.mask, indices, trump, args.first_trick)
    text = explain(reason, hand.mask, indices, trump, mask)
    legal = [str(c) for c in Hand(mask)]
    if args.json:
        print(json.dumps({"legal": legal, "reason": text}))
    else:
        print(f"legal: {' '.join(legal)}")
        print(f"why:   {text}")
    return EXIT_OK


def _cmd_rules_score(args: argparse.Namespace) -> int:
    rules = _rules(args)
    if not rules.min_call <= args.call <= rules.max_call:
        raise UsageError(f"--call must be from {rules.min_call} to {rules.max_call} under these rules, not {args.call}")
    if not 0 <= args.tricks <= 13:
        raise UsageError(f"--tricks must be from 0 to 13, not {args.tricks}")
    tenths = round_score(rules, args.call, args.tricks)
    display = format_score(rules, tenths)
    if args.json:
        print(json.dumps({"tenths": tenths, "display": display}))
    else:
        print(f"call {args.call}, tricks {args.tricks}: {display}")
    return EXIT_OK


def _cmd_rules_show(args: argparse.Namespace) -> int:
    rules = _rules(args)
    data = rules.to_dict()
    if args.json:
        print(json.dumps(data))
    else:
        print(tabulate(list(data.items()), headers=["switch", "value"]))
    return EXIT_OK


# -- the live page ---------------------------------------------------------------------------


def _add_page_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--page", type=int, nargs="?", const=-1, default=None, metavar="PORT",
                        help="serve the live page (standings, tables, bots, faults; it refreshes itself) on PORT "
                        f"(0: any free port; without PORT: the configuration's [page] port, else {PAGE_PORT}); a "
                        "configuration with a [page] table serves it without this option")
    parser.add_argument("--page-host", default=None, metavar="HOST",
                        help="the address the live page listens on (default: 127.0.0.1, this machine only; "
                        "0.0.0.0 opens it to the network, e.g. for the students' laptops)")


def _live_page(args: argparse.Namespace, config: TournamentConfig, folder: Path) -> LivePage | None:
    """The live page, started, when the command line or the configuration asks for it."""
    port = args.page
    if port is None and args.page_host is not None:
        port = -1
    if port == -1:
        port = config.page_port if config.page_port is not None else PAGE_PORT
    elif port is None:
        port = config.page_port
    if port is None:
        return None
    if not 0 <= port <= 65535:
        raise UsageError(f"--page must be a port from 0 to 65535, not {port}")
    page = LivePage(folder, roster=config.roster, title=config.name, host=args.page_host or config.page_host,
                    port=port)
    url = page.start()
    everywhere = " (open to other machines: use this machine's address)" if page.everywhere else ""
    _say(f"live page at {url}{everywhere}")
    return page


# -- token ---------------------------------------------------------------------------------


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


# -- roster --------------------------------------------------------------------------------


def _add_roster_commands(sub: argparse._SubParsersAction[_Parser]) -> None:
    roster = sub.add_parser(
        "roster", help="a class roster: students, their tokens and their submitted bots",
        description="Keep a class roster (roster.toml, with a folder per submission in submissions/ beside it): "
        "each student has a token, printed once and kept as its SHA-256 digest only, and may submit a bot. A "
        'configuration with [tournament] roster = "roster.toml" plays every student: their submission, launched '
        "in the sandbox, or else a remote bot that connects with their token. See docs/classroom.md.",
    )
    what = roster.add_subparsers(dest="roster_command", required=True, metavar="WHAT", parser_class=_Parser)
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
    _say(f"added {args.name} to {roster.path}")
    return EXIT_OK


def _cmd_roster_list(args: argparse.Namespace) -> int:
    roster = read_roster(args.roster)
    rows = []
    for student in roster.students:
        try:
            submission = roster.submission(student.name)
        except ArenaError as err:
            plays = f"nothing: its submission cannot be started ({err})"
        else:
            plays = (f"its submission: {submission.describe()}" if submission is not None
                     else "connects with its token" if student.token_sha256 else "nothing (token revoked)")
        rows.append([student.name, student.display or "-", plays, submitted_text(roster.submitted_at(student.name))])
    print(tabulate(rows, headers=["name", "display", "plays as", "submitted"], disable_numparse=True)
          if rows else f"{roster.path}: no students yet")
    return EXIT_OK


def _cmd_roster_revoke(args: argparse.Namespace) -> int:
    roster = read_roster(args.roster)
    roster.revoke(args.name)
    roster.save()
    still = (f"; the bot {args.name} submitted still plays" if roster.submission(args.name) is not None else "")
    print(f"revoked the token of {args.name}: it admits nothing from the next start of the arena (an arena running "
          f"now keeps the tokens it started with){still}")
    return EXIT_OK


def _cmd_roster_token(args: argparse.Namespace) -> int:
    roster = read_roster(args.roster)
    token = roster.reissue(args.name)
    roster.save()
    _print_token(args.name, token)
    _say(f"the earlier token of {args.name} admits nothing from the next start of the arena")
    return EXIT_OK


def _cmd_roster_import(args: argparse.Namespace) -> int:
    roster = _roster(args, new=True)
    rows = read_names(args.csv)
    for name, _ in rows:
        if name in roster:
            _say(f"{name} is already on the roster: left as it is")
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
        _say(f"wrote {len(issued)} tokens to {args.tokens_out} (readable by you alone): hand each student their "
             "own, then delete the file")
    _say(f"added {len(issued)} students to {roster.path} ({len(roster.students)} in all)")
    return EXIT_OK


def _cmd_roster_submit(args: argparse.Namespace) -> int:
    roster = read_roster(args.roster)
    submission = roster.submit(args.name, args.bot)
    print(f"{args.name}: {submission.describe()}, in {submission.folder}; it plays from the next start of an event "
          "that takes its bots from this roster")
    return EXIT_OK


# -- deals ---------------------------------------------------------------------------------


def _cmd_deals(args: argparse.Namespace) -> int:
    rules = Rules.profile(args.profile)
    rounds = rules.rounds if args.rounds is None else args.rounds
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, not {args.seed}")
    if not 1 <= args.count <= 1_000_000:
        raise UsageError(f"--count must be from 1 to 1000000, not {args.count}")
    if not 1 <= rounds <= 100:
        raise UsageError(f"--rounds must be from 1 to 100, not {rounds}")
    entries = (
        (game, rnd, 0, seeded_deal(args.seed, game, rnd))
        for game in range(1, args.count + 1)
        for rnd in range(1, rounds + 1)
    )
    text = DealFile.format(entries, header=f"seed={args.seed} count={args.count} rounds={rounds}")
    if args.out is None:
        sys.stdout.write(text)
    else:
        try:
            args.out.write_text(text, encoding="utf-8")
        except OSError as err:
            raise UsageError(f"cannot write {args.out}: {err.strerror}") from None
        print(f"wrote {args.count * rounds} deals to {args.out}")
    return EXIT_OK


# -- demo ----------------------------------------------------------------------------------


def _round_table(rules: Rules, result: RoundResult, names: Sequence[str]) -> str:
    rows = [
        [
            names[seat] + (" (dealer)" if seat == result.dealer else ""),
            result.calls[seat],
            result.tricks_won[seat],
            format_score(rules, result.scores[seat]),
            format_score(rules, result.totals[seat]),
        ]
        for seat in range(4)
    ]
    return tabulate(rows, headers=["seat", "call", "tricks", "score", "total"], colalign=("left",) + ("right",) * 4)


def _cmd_game(args: argparse.Namespace) -> int:
    rules = _rules(args)
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, not {args.seed}")
    bot = _bot_under_test(args, required=False)
    if bot is not None:
        return _game_with(bot, args)
    bots = [HouseBot(seed=seat) for seat in range(4)]  # the random bot
    names = [f"random-{seat + 1}" for seat in range(4)]
    game = Game(rules, seeded_deals(args.seed, 1))
    print(f"callbreak-arena {__version__}: one game, rules {rules.profile_name}, seed {args.seed}\n")
    play_out(game, bots)
    for result in game.results:
        trump = f", trump {result.trump.noun}" if rules.trump_mode.value != "fixed" else ""
        print(f"Round {result.round_number}{trump}")
        print(_round_table(rules, result, names))
        print()
    for redeal in game.redeals:
        print(f"(round {redeal.round_number} was redealt: {redeal.reason})")
    places = game.places()
    order = sorted(range(4), key=lambda s: (places[s], s))
    rows = [[places[s], names[s], format_score(rules, game.totals[s])] for s in order]
    print("Final standings")
    print(tabulate(rows, headers=["place", "bot", "total"], colalign=("right", "left", "right")))
    return EXIT_OK


def _game_with(bot: BotUnderTest, args: argparse.Namespace) -> int:
    """``game`` with a bot of the user's against three sample bots."""
    with tempfile.TemporaryDirectory(prefix="callbreak-game-") as folder:
        summary, games = play_one_deal_set(bot, args.opponents, _rules(args), args.seed, Path(folder), _say)
        if not games:
            why = "; ".join(f"{b}: {reason}" for b, reason in summary.awaited.items()) or "no game was played"
            print(f"callbreak-arena: your bot did not play: {why}", file=sys.stderr)
            return EXIT_OUTSTANDING
        rules = games[0].first.rules
        first = next(g for g in games if g.seats[0] == NAME)
        print(f"callbreak-arena {__version__}: your bot against three {args.opponents} bots, rules "
              f"{rules.profile_name}, seed {args.seed}\n")
        names = list(first.seats)
        for record in first.rounds:
            print(f"Round {record.round}")
            rows = [[names[s] + (" (dealer)" if s == record.dealer else ""), record.calls[s], record.tricks_won[s],
                     format_score(rules, record.scores[s]), format_score(rules, record.totals[s])] for s in range(4)]
            print(tabulate(rows, headers=["seat", "call", "tricks", "score", "total"],
                           colalign=("left",) + ("right",) * 4))
            for fault in record.faults:
                print(f"  fault of {names[fault.seat]}: {fault.kind.value}: {fault.detail}")
            print()
        print("The same deals, seats rotated (your bot's total in each game)")
        rows = [[g.game, g.seats.index(NAME) + 1, format_score(rules, g.final.totals[g.seats.index(NAME)]),
                 g.final.places[g.seats.index(NAME)]] for g in games]
        print(tabulate(rows, headers=["game", "your seat", "your total", "place"]))
    return EXIT_OK


def _cmd_play(args: argparse.Namespace) -> int:
    rules = _rules(args)
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, not {args.seed}")
    spec = args.bot or OPPONENTS[args.opponents]
    if ":" not in spec:
        raise UsageError(f"--bot must look like path/to/bot.py:Class or module:Class, not {spec!r}")
    factory = load_bot_class(spec)
    label = spec.rpartition(":")[2].lower() if args.bot else args.opponents
    players: list[Player] = [LocalPlayer(make_bot(factory, n, {}), f"{label}-{n}") for n in range(1, 4)]

    def ask(prompt: str) -> str | None:
        try:
            return input(prompt)
        except EOFError:
            return None

    players.insert(args.seat - 1, HumanPlayer("you", ask, print))
    settings = TableSettings(deadline_ms=0, max_retries=1_000_000)  # a person is never hurried nor replaced
    try:
        asyncio.run(play_game(rules, players, seeded_deals(args.seed, 1), settings=settings))
    except LeftTheGame:
        print("\nYou left the game.")
    return EXIT_OK


def _cmd_check_bot(args: argparse.Namespace) -> int:
    bot = _bot_under_test(args, required=True)
    assert bot is not None
    if args.games < 1:
        raise UsageError(f"--games must be 1 or more, not {args.games}")
    if args.deadline_ms < 1:
        raise UsageError(f"--deadline-ms must be 1 or more, not {args.deadline_ms}")
    profiles = [name.strip() for given in args.profile for name in given.split(",") if name.strip()]
    unknown = [name for name in profiles if name not in PROFILES]
    if unknown:
        raise UsageError(f"--profile {unknown[0]!r} is not a rules profile; the profiles are: {', '.join(PROFILES)}")
    if (args.folder is not None or args.read_only) and bot.kind not in ("command", "stdio", "bhoos"):
        raise UsageError("--folder and --read-only are for a bot the arena launches (--command, --stdio or --bhoos)")
    for folder in [*([args.folder] if args.folder is not None else []), *args.read_only]:
        if not folder.is_dir():
            raise UsageError(f"{folder} is not a folder")
    bot = dataclasses.replace(bot, folder=args.folder.resolve() if args.folder is not None else None,
                              read_only=tuple(path.resolve() for path in args.read_only))
    checks = check_bot(bot, opponent=args.opponents, games=args.games, seed=args.seed,
                       deadline_ms=args.deadline_ms, profiles=profiles, logs=args.logs, log=_say)
    sys.stdout.write(report(checks))
    return EXIT_OK if all(c.ok for c in checks) else EXIT_FAILURE


# -- tournaments ---------------------------------------------------------------------------

FORMATS = ("table", "markdown", "json", "csv")


def _load(config_path: Path | None) -> TournamentConfig:
    if config_path is None:
        text = resources.files("arena").joinpath("demo.toml").read_text(encoding="utf-8")
        return parse_config(text)
    return load_config(config_path)


def _say(text: str) -> None:
    print(f"callbreak-arena: {text}", file=sys.stderr, flush=True)


def _run_tournament(args: argparse.Namespace, *, progress: bool, serve: bool) -> int:
    config = _load(args.config)
    if args.workers is not None:
        if args.workers < 1:
            raise UsageError(f"--workers must be 1 or more, not {args.workers}")
        config = dataclasses.replace(config, workers=args.workers)
    folder = args.results or config.results or Path("results") / config.name
    judge = LiveJudge(folder, config)
    tournament = Tournament(config, folder, fresh=args.fresh, progress=progress, serve=serve, judge=judge, log=_say)
    print(f"callbreak-arena {__version__}: {config.name}, {config.format}, rules {config.rules.profile_name}, "
          f"results in {tournament.folder}", file=sys.stderr)
    page = _live_page(args, config, tournament.folder)
    stopped_by = ["Ctrl-C"]

    def terminated(number: int, frame: object) -> None:
        # A SIGTERM (kill, a service manager's stop) stops the run as Ctrl-C does, through asyncio's own way of
        # stopping: launched bots stopped, temporary folders removed, the games played recorded.
        stopped_by[0] = "SIGTERM"
        if not callable(signal.getsignal(signal.SIGINT)):  # Ctrl-C ignored (nohup, a background job): no handler
            raise KeyboardInterrupt  # to borrow; stop as Python stops on Ctrl-C, every task cancelled and ended
        signal.raise_signal(signal.SIGINT)

    signal.signal(signal.SIGTERM, terminated)
    try:
        summary = asyncio.run(tournament.run())
    except KeyboardInterrupt:
        if page is not None:
            page.close()
        played = tournament.summary.played
        command = "serve" if serve else "run"
        print(f"\ncallbreak-arena: stopped by {stopped_by[0]}. {played} game{'s' if played != 1 else ''} played in "
              f"this run {'are' if played != 1 else 'is'} recorded in {tournament.folder}; the games in play were "
              "dropped and the launched bots stopped. To resume, run the same command again "
              f"(callbreak-arena {command} ...).", file=sys.stderr)
        return EXIT_INTERRUPTED if stopped_by[0] == "Ctrl-C" else EXIT_TERMINATED
    except BaseException:
        if page is not None:
            page.close()
        raise
    if page is not None:  # long enough for the browsers to fetch the final board
        page.close(linger=POLL_S + 0.5)
    print(f"{summary.played} games played, {summary.skipped} already recorded, {summary.faults} faults",
          file=sys.stderr)
    for bot, reason in summary.disqualified.items():
        print(f"{bot} was disqualified: {reason}", file=sys.stderr)
    for bot, reason in summary.withdrawn.items():
        print(f"{bot} was withdrawn: {reason}", file=sys.stderr)
    test = judge.sprt_state()
    if test is not None:
        stopped = "the run stopped early: " if summary.stopped_early else ""
        print(f"{stopped}{describe(test)}", file=sys.stderr)
    sys.stdout.write(folder_report(tournament.folder, args.format, args.wide))
    report_page = tournament.folder / REPORT_FILE
    if report_page.exists():
        print(f"callbreak-arena: the report of this event, for a browser: {report_page}", file=sys.stderr)
    if summary.outstanding:
        awaited = "; ".join(f"{bot} ({why})" for bot, why in summary.awaited.items())
        print(f"callbreak-arena: stopped with {summary.outstanding} games outstanding, waiting for: {awaited}. "
              "Run the same command again to play them when the bots are back (or set tournament.forfeit to "
              "\"fallback\" or \"withdraw\")", file=sys.stderr)
        return EXIT_OUTSTANDING
    return EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    return _run_tournament(args, progress=not args.no_progress and sys.stderr.isatty(), serve=False)


def _cmd_serve(args: argparse.Namespace) -> int:
    return _run_tournament(args, progress=not args.no_progress and sys.stderr.isatty(), serve=True)


def _results(folder: Path) -> ResultsStore:
    store = ResultsStore(folder)
    if store.manifest() is None:
        raise UsageError(f"{folder} is not a results folder (it has no manifest.json)")
    return store


def _cmd_standings(args: argparse.Namespace) -> int:
    _results(args.folder)
    sys.stdout.write(folder_report(args.folder, args.format, args.wide))
    return EXIT_OK


def _cmd_replay(args: argparse.Namespace) -> int:
    store = _results(args.folder)
    rounds = [r for r in store.records() if r.game == args.game]
    if not rounds:
        raise UsageError(f"no game {args.game!r} in {args.folder}; game ids look like r1-g1-d3-p2")
    if args.round is not None:
        rounds = [r for r in rounds if r.round == args.round]
        if not rounds:
            raise UsageError(f"game {args.game} has no round {args.round}")
    rules = rounds[0].rules
    seats = rounds[0].seats
    print(f"game {args.game}: deal set {rounds[0].deal_set}, rotation {rounds[0].rotation}, "
          f"rules {rules.profile_name}")
    for record in rounds:
        print(f"\nRound {record.round} (deal {record.deal}), dealer: seat {record.dealer}, "
              f"trump {Suit.parse(record.trump).noun}")
        for seat in range(4):
            print(f"  seat {seat} {seats[seat]:<20} {Hand.parse(record.hands[seat]).symbols()}")
        order = [(record.dealer + 1 + k) % 4 for k in range(4)]
        print("  calls: " + ", ".join(f"seat {s} {record.calls[s]}" for s in order))
        for number, trick in enumerate(record.tricks, start=1):
            plays = "  ".join(
                f"{(trick.leader + k) % 4}:{Card.parse(c).symbol()}" for k, c in enumerate(trick.cards)
            )
            print(f"  trick {number:2d}  {plays}   -> seat {trick.winner}")
        rows = [[seat, seats[seat], record.calls[seat], record.tricks_won[seat],
                 format_score(rules, record.scores[seat]), format_score(rules, record.totals[seat])]
                for seat in range(4)]
        print(tabulate(rows, headers=["seat", "bot", "call", "tricks", "score", "total"]))
        for fault in record.faults:
            print(f"  fault: seat {fault.seat} {fault.kind.value}: {fault.detail}"
                  + (f" (the arena played {fault.fallback})" if fault.fallback else ""))
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from arena.rating.html import write_html_report

    _results(args.folder)
    out = args.out if args.out is not None else args.folder / REPORT_FILE
    if args.roster is not None and not args.roster.is_file():
        raise UsageError(f"--roster {args.roster}: no such file (a class roster is the roster.toml of `roster add`)")
    write_html_report(args.folder, out, args.roster)
    print(f"wrote {out}")
    return EXIT_OK


def _cmd_verify(args: argparse.Namespace) -> int:
    _results(args.folder)
    violation = audit(args.folder)
    if violation is None:
        games = {r.game for r in ResultsStore(args.folder).records()}
        print(f"ok: {len(games)} games in {args.folder} follow from their rules and seeds")
        return EXIT_OK
    print(f"violation: {violation}")
    return EXIT_FAILURE


def _cmd_status(args: argparse.Namespace) -> int:
    _results(args.folder)
    status = read_status(args.folder)
    if args.json:
        print(json.dumps(None if status is None else {**status.to_dict(), "live": status.live}, indent=1))
        return EXIT_OK
    if status is None:
        print(f"{args.folder}: no run has written a status here yet")
    else:
        print(render_status(status))
    standings = args.folder / "standings.txt"
    if standings.exists():
        print("\nStandings")
        print(standings.read_text(encoding="utf-8"), end="")
    return EXIT_OK


def render_status(status: Status) -> str:
    """A status as text for people."""
    state = status.state if status.live or status.state not in ("starting", "running", "waiting") else (
        "not running (the arena that wrote this status has ended without finishing: run it again to resume)")
    age = time.time() - status.updated
    lines = [f"{status.tournament}: {state}" + (f" - {status.message}" if status.message and status.live else ""),
             f"updated {age:.0f} s ago by process {status.pid}"
             + (f"; arena on {status.address} ({'TLS' if status.tls else 'plaintext'})" if status.address else ""),
             f"games: {status.games_done} of {status.games_planned} done"
             + (" (the sequential test stops the run when it decides)" if status.test else "")]
    if status.test:
        lines.append(f"sequential test: {status.test}")
    if status.awaited:
        lines.append("waiting for: " + ", ".join(status.awaited))
    rows = [[b.bot, b.kind, b.state + (f" ({b.reason})" if b.reason else ""), b.games_done, b.games_left, b.faults,
             b.faulty_decisions] for b in status.bots]
    lines.append("\n" + tabulate(rows, headers=["bot", "kind", "state", "games done", "games left", "faults",
                                                 "faulty decisions"], disable_numparse=True))
    if status.sessions:
        rows = [[s.session, s.bot, s.version, f"{s.tables}/{s.max_tables}", "yes" if s.events else "no",
                 f"{s.connected_s:.0f} s", ", ".join(f"{kind} {n}" for kind, n in sorted(s.faults.items())) or "-"]
                for s in status.sessions]
        lines.append("\nSessions\n" + tabulate(rows, headers=["session", "bot", "version", "tables", "events",
                                                              "connected", "faults"], disable_numparse=True))
    if status.tables:
        rows = [[t.table, t.game, " ".join(t.seats), ", ".join(t.fallback) or "-", t.rounds_done,
                 f"{t.started_s:.0f} s"] for t in status.tables]
        lines.append("\nTables in play\n" + tabulate(rows, headers=["table", "game", "seats", "fallback for",
                                                                    "rounds done", "running"], disable_numparse=True))
    return "\n".join(lines)


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

