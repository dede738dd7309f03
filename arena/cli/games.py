"""The commands that play: ``game``, ``play`` (a person at the table) and ``check-bot``."""


from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from arena import __version__
from arena.cli.usage import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_OUTSTANDING,
    STOPPED_BY,
    Parser,
    UsageError,
    add_rules_options,
    rules_of,
    say,
    stoppable,
)
from arena.core.dealing import seeded_deals
from arena.core.game import Game, RoundResult
from arena.core.rules import PROFILES, Rules
from arena.core.scoring import format_score
from arena.errors import ConfigError
from arena.event.setup.defaults import CHECK_DEADLINE_MS, LATE_IN_A_ROW, LOGS, OPPONENTS

if TYPE_CHECKING:
    from arena.event.check import BotUnderTest
    from arena.web.sitting import Sitting


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """Adds ``game``, ``play`` and ``check-bot``."""
    game = sub.add_parser(
        "game", help="play one seeded game and print it (four random bots, or your bot against sample bots)",
        description="Play one seeded game of four sample random bots in-process, printed round by round, "
        "then the final standings. With a bot of yours (--bot, --command, --stdio, --bhoos, --bhoos-url or "
        "--remote), it plays one deal set against three sample bots (--opponents): the same deals four times, "
        "with the seats rotated, as in a tournament; the game in which it sits first is printed, then the "
        "four games' totals. Exit status: 0 played, 2 bad arguments, 3 your bot did not play.",
    )
    add_rules_options(game)
    game.add_argument("--seed", type=int, default=1, help="the deal seed (default: 1)")
    _add_bot_options(game)
    game.add_argument("--opponents", choices=tuple(OPPONENTS), default="heuristic",
                      help="the sample bots your bot plays against (default: heuristic)")
    game.set_defaults(func=_cmd_game)

    play = sub.add_parser(
        "play", help="play a game yourself, in the terminal or in the browser (--web), against three sample bots",
        description="Sit at a table yourself against three sample bots (or three of a class of your own with "
        "--bot): your hand sorted by suit, the calls, the trick on the table and the cards you may play are "
        "shown; type a number to call and a card (like AS, TH, 10h) to play. A card the rules refuse is "
        "explained and asked again; nobody plays for you. Ctrl-D leaves the game. With --web, the table is a "
        "page in your browser instead (the address is printed): the cards drawn as cards, the ones you may play "
        "framed and the others greyed, played by a click or typed; you play one deal set, the same deals four "
        "times with the seats rotated as in a tournament, recorded in --results, which `callbreak-arena verify` "
        "checks once the four games are played. Ctrl-C stops it.",
    )
    add_rules_options(play)
    play.add_argument("--seed", type=int, default=1, help="the deal seed (default: 1)")
    play.add_argument("--seat", type=int, choices=(1, 2, 3, 4), default=1,
                      help="your seat in the terminal (default: 1; with --web the deal set seats you in each)")
    play.add_argument("--opponents", default="heuristic", metavar="BOTS",
                      help=f"the sample bots you play against: one of {', '.join(OPPONENTS)} for all three, or "
                      "three of them with commas, like random,heuristic,montecarlo (default: heuristic)")
    play.add_argument("--bot", metavar="FILE.py:CLASS", help="play against three of this in-process bot instead")
    play.add_argument("--web", action="store_true",
                      help="play in the browser: serve the table as a page on this machine and print its address, "
                      "which holds the secret that opens it (?token=...): the page refuses a request without it")
    play.add_argument("--port", type=int, default=8000, metavar="P",
                      help="with --web, the port of the page (default: 8000; 0 takes a free one)")
    play.add_argument("--host", default="127.0.0.1", metavar="HOST",
                      help="with --web, the address the page listens on (default: 127.0.0.1, this machine only)")
    play.add_argument("--results", type=Path, default=None, metavar="DIR",
                      help="with --web, the new folder where the deal set is recorded (default: "
                      "results/play-SEED-N, the first such folder that does not exist)")
    play.set_defaults(func=_cmd_play)

    check = sub.add_parser(
        "check-bot", help="check that a bot plays by the rules, in time, at several tables at once",
        description="Check a bot before a tournament: it plays at least --games games against three sample "
        "bots, a deal set under each rules profile it is checked under, four tables at once, with the "
        "tournament's deadline and fault rules. Every profile is played at one address, printed once: a bot "
        "that connects by itself (--remote) connects once. The report says, for each check, PASS, FAIL or "
        "INCOMPLETE (part of it was not played: it says which profiles, and why), and for each failure what "
        "was asked, what came back and what the rule says. When a check does not pass, the records and your "
        "bot's log are kept in --logs and the report names the log. A line per game on stderr says how it goes "
        "(your bot's tricks, faults and slowest decision). Once your bot has missed the deadline in "
        f"{LATE_IN_A_ROW} calls in a row, or in {LATE_IN_A_ROW} cards in a row (each kind counted apart: a call "
        "answered in time does not reset the count of late cards), the check stops early: the deadline check FAILs "
        "and lists those decisions. A check of your bot's calls or cards is INCOMPLETE, not PASS, when none of them "
        "came in time. Ctrl-C or SIGTERM stop it with the report over the games played so far (what was not played "
        "is INCOMPLETE), and no temporary folder left behind. Give the bot as one of --bot, --command, "
        "--stdio, --bhoos, --bhoos-url or --remote. Exit status: 0 every check passed, 1 a check did not "
        "pass, 2 bad arguments, 130 stopped by Ctrl-C, 143 stopped by SIGTERM.",
    )
    _add_bot_options(check)
    check.add_argument("--profile", action="append", default=[], metavar="NAME",
                       help="check under this rules profile only (repeat it, or give a comma list, for more; one "
                       f"of {', '.join(PROFILES)}); default: every profile, but only bhoos for --bhoos and "
                       "--bhoos-url, as a contest bot calls 1 to 8")
    check.add_argument("--games", type=int, default=20,
                       help="games to play at least, rounded up to whole deal sets (4 games each), one deal "
                       "set under each profile checked and the rest under the first: 20 under the six "
                       "profiles plays 24 (default: 20)")
    check.add_argument("--seed", type=int, default=1, help="the deal seed (default: 1)")
    check.add_argument("--deadline-ms", type=int, default=CHECK_DEADLINE_MS,
                       help=f"the time to answer each request, in ms (default: {CHECK_DEADLINE_MS}); "
                       f"{LATE_IN_A_ROW} calls, or {LATE_IN_A_ROW} cards, in a row unanswered within it stop the check "
                       "with a FAIL")
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
    from arena.event.check import BotUnderTest
    from arena.transports.grpc.tokens import new_token

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


def _round_table(rules: Rules, result: RoundResult, names: Sequence[str]) -> str:
    from tabulate import tabulate

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
    rules = rules_of(args)
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, not {args.seed}")
    bot = _bot_under_test(args, required=False)
    if bot is not None:
        return _game_with(bot, args)
    from tabulate import tabulate

    from arena.players.house import HouseBot
    from arena.players.local import play_out

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
    import tempfile

    from tabulate import tabulate

    from arena.event.check import NAME, play_one_deal_set

    with tempfile.TemporaryDirectory(prefix="callbreak-game-") as folder:
        summary, games = play_one_deal_set(bot, args.opponents, rules_of(args), args.seed, Path(folder), say)
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


def _opponents(args: argparse.Namespace) -> list[str]:
    """The three bots ``--opponents`` (or ``--bot``) names, each a sample bot's name or ``FILE.py:CLASS``."""
    if args.bot:
        if ":" not in args.bot:
            raise UsageError(f"--bot must look like path/to/bot.py:Class or module:Class, not {args.bot!r}")
        return [args.bot] * 3
    names = [name.strip() for name in str(args.opponents).split(",")]
    if len(names) == 1:
        names *= 3
    if len(names) != 3:
        raise UsageError(f"--opponents takes one bot or three, separated by commas, not {len(names)}")
    for name in names:
        if name not in OPPONENTS:
            raise UsageError(f"--opponents: {name!r} is not a sample bot; the sample bots are "
                             f"{', '.join(OPPONENTS)} (use --bot FILE.py:CLASS for a bot of your own)")
    return names


def _cmd_play(args: argparse.Namespace) -> int:
    rules = rules_of(args)
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, not {args.seed}")
    opponents = _opponents(args)
    if args.web:
        return _play_web(args, rules, opponents)
    import asyncio

    from arena.event.setup.bots import load_bot_class, make_bot
    from arena.players.base import Player
    from arena.players.human import HumanPlayer, LeftTheGame
    from arena.players.local import LocalPlayer
    from arena.players.table import TableSettings, play_game

    players: list[Player] = []
    for n, name in enumerate(opponents, start=1):
        spec = name if args.bot else OPPONENTS[name]
        label = spec.rpartition(":")[2].lower() if args.bot else name
        players.append(LocalPlayer(make_bot(load_bot_class(spec), n, {}), f"{label}-{n}"))

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


def _play_web(args: argparse.Namespace, rules: Rules, opponents: Sequence[str]) -> int:
    """``play --web``: the deal set served as a page until it is played and Ctrl-C is pressed."""
    import asyncio

    from arena.web.seat import SeatSite
    from arena.web.sitting import Sitting

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be from 0 to 65535, not {args.port}")
    folder = args.results
    if folder is None:
        n = 1
        while (folder := Path("results") / f"play-{args.seed}-{n}").exists():
            n += 1
    try:
        sitting = Sitting(rules, args.seed, opponents, folder)
    except ConfigError as err:
        raise UsageError(str(err)) from None

    async def serve() -> None:
        site = SeatSite(sitting)
        url = await site.start(args.host, args.port)
        elsewhere = (" (from another machine: with this machine's name or address in place of its host)"
                     if args.host in ("0.0.0.0", "::") else "")
        print(f"Your table is at {url} : open it in a browser{elsewhere}. The address is the table's key: whoever has "
              f"it can see your hand and play for you. The games are recorded in {folder}.", flush=True)
        try:
            await sitting.play()
            print(f"The deal set is over. Check its records with: callbreak-arena verify {folder}\n"
                  "The page stays open until Ctrl-C.", flush=True)
            await asyncio.Event().wait()
        finally:
            await site.stop()

    _, stopped_by = stoppable(serve())
    print(f"\nStopped. {_played_words(sitting, folder)}", flush=True)
    return STOPPED_BY.get(stopped_by, EXIT_OK)


def _played_words(sitting: Sitting, folder: Path) -> str:
    """What a stopped sitting recorded, in words: how many of its games were played to their end, and where."""
    played = max(0, sitting.number - (0 if sitting.seat.state.over else 1))
    if played:
        return f"{played} of its {len(sitting.games)} games {'was' if played == 1 else 'were'} played to the end; " \
               f"they are recorded in {folder}."
    if not folder.exists():
        return "No game was played, and nothing was recorded."
    return (f"No game was played to its end: {folder} holds the sitting's plan and any rounds played, which no "
            "standings count.")


def _cmd_check_bot(args: argparse.Namespace) -> int:
    from arena.event.check import BotCheck, report

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
    check = BotCheck(bot, opponent=args.opponents, games=args.games, seed=args.seed, deadline_ms=args.deadline_ms,
                     profiles=profiles, logs=args.logs, log=say)
    checks, stopped_by = stoppable(check.run())
    if checks is None:  # stopped before its end: the verdict over what was played
        checks = check.verdict(stopped_by)
    sys.stdout.write(report(checks))
    if stopped_by:
        played = check.battery.played
        say(f"stopped by {stopped_by}: the report covers the {played} game{'s' if played != 1 else ''} played to "
            "the end; the games in play were dropped, and the checks left INCOMPLETE name the rules not played")
        return STOPPED_BY[stopped_by]
    return EXIT_OK if all(c.ok for c in checks) else EXIT_FAILURE


