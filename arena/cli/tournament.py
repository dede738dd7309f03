"""The commands that run a tournament: ``run``, ``serve``, and the live page they may serve."""


from __future__ import annotations

import argparse
import dataclasses
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from arena import __version__
from arena.cli.usage import (
    EXIT_OK,
    EXIT_OUTSTANDING,
    FORMATS,
    STOPPED_BY,
    Parser,
    UsageError,
    say,
    stoppable,
)
from arena.event.setup.defaults import PAGE_PORT, WATCH_DELAY_S

if TYPE_CHECKING:
    from arena.event.setup.config import TournamentConfig
    from arena.web.live import LivePage


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """Adds ``run`` and ``serve``."""
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



def _add_page_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--page", type=int, nargs="?", const=-1, default=None, metavar="PORT",
                        help="serve the live page (standings, tables, bots, faults; it refreshes itself) on PORT "
                        f"(0: any free port; without PORT: the configuration's [page] port, else {PAGE_PORT}); a "
                        "configuration with a [page] table serves it without this option")
    parser.add_argument("--page-host", default=None, metavar="HOST",
                        help="the address the live page listens on (default: 127.0.0.1, this machine only; "
                        "0.0.0.0 opens it to the network, e.g. for the students' laptops)")
    parser.add_argument("--watch-delay", type=float, default=WATCH_DELAY_S, metavar="S",
                        help="the live page's spectators (/watch) see each game replayed a card every S seconds, a "
                        "deal set once all its games are over (default: %(default)s)")
    parser.add_argument("--watch-hands", action="store_true",
                        help="the spectators see the four hands too (default: only the calls and the cards played)")


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
    if not args.watch_delay > 0:
        raise UsageError(f"--watch-delay must be more than 0 seconds, not {args.watch_delay:g}")
    from arena.web.live import LivePage
    from arena.web.watch import WatchOptions

    page = LivePage(folder, roster=config.roster, title=config.name, host=args.page_host or config.page_host,
                    port=port, watch=WatchOptions(args.watch_delay, args.watch_hands))
    url = page.start()
    everywhere = " (open to other machines: use this machine's address)" if page.everywhere else ""
    say(f"live page at {url}{everywhere}")
    return page


def _load(config_path: Path | None) -> TournamentConfig:
    from importlib import resources

    from arena.event.setup.config import load_config, parse_config

    if config_path is None:
        text = resources.files("arena").joinpath("demo.toml").read_text(encoding="utf-8")
        return parse_config(text)
    return load_config(config_path)

def _run_tournament(args: argparse.Namespace, *, progress: bool, serve: bool) -> int:
    from arena.event.run.tournament import Tournament
    from arena.event.setup.config import GUESSABLE_SEED
    from arena.rating.html import REPORT_FILE
    from arena.rating.leaderboard import POLL_S
    from arena.rating.live import LiveJudge
    from arena.rating.report import folder_report
    from arena.rating.sequential import describe

    config = _load(args.config)
    if args.workers is not None:
        if args.workers < 1:
            raise UsageError(f"--workers must be 1 or more, not {args.workers}")
        config = dataclasses.replace(config, workers=args.workers)
    folder = args.results or config.results or Path("results") / config.name
    judge = LiveJudge(folder, config)
    tournament = Tournament(config, folder, fresh=args.fresh, progress=progress, serve=serve, judge=judge, log=say)
    print(f"callbreak-arena {__version__}: {config.name}, {config.format}, rules {config.rules.profile_name}, "
          f"results in {tournament.folder}", file=sys.stderr)
    if config.guessable_seed():
        unguessable = GUESSABLE_SEED + secrets.randbelow(2**63 - GUESSABLE_SEED)
        say(f"warning: tournament.seed = {config.seed} is small enough for a bot to find by trying every seed, and")
        say(f"  then know every hand from its own: for bots you did not write, use seed = {unguessable} instead")
        say("  (docs/security.md).")
    page = _live_page(args, config, tournament.folder)
    try:
        # A SIGTERM stops the run as Ctrl-C does: launched bots are stopped, temporary folders removed and the games
        # played recorded.
        summary, stopped_by = stoppable(tournament.run())
    except BaseException:
        if page is not None:
            page.close()
        raise
    if stopped_by:  # even when the run caught its cancellation and ended by itself
        if page is not None:
            page.close()
        played = tournament.summary.played
        command = "serve" if serve else "run"
        print(f"\ncallbreak-arena: stopped by {stopped_by}. {played} game{'s' if played != 1 else ''} played in "
              f"this run {'are' if played != 1 else 'is'} recorded in {tournament.folder}; the games in play were "
              "dropped and the launched bots stopped. To resume, run the same command again "
              f"(callbreak-arena {command} ...).", file=sys.stderr)
        return STOPPED_BY[stopped_by]
    assert summary is not None
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


