"""The commands that read a results folder: ``standings``, ``replay``, ``report``, ``verify``, ``status``."""


from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from arena.cli.usage import (
    EXIT_FAILURE,
    EXIT_OK,
    FORMATS,
    Parser,
    UsageError,
    results_store,
)
from arena.core.scoring import format_score
from arena.core.turns import call_order, seat_after

if TYPE_CHECKING:
    from arena.event.plan.status import Status


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """Adds ``standings``, ``replay``, ``report``, ``verify`` and ``status``."""
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
        "verify", help="audit results folders independently",
        description="Check that every record follows from its rules and seed: legal plays, trick winners, "
        "tricks won, scores and totals, deals matching the seed, every planned game present once. "
        "Exit 0 when all holds; otherwise print the first violation with its location and exit 1. Several "
        "folders are checked one after the other in this one process, each with its line (ok, or its first "
        "violation), and a last line of how many hold; the exit status is 1 if any does not.",
    )
    verify.add_argument("folders", type=Path, nargs="+", metavar="DIR", help="a results folder")
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


def _cmd_standings(args: argparse.Namespace) -> int:
    from arena.rating.report import folder_report

    results_store(args.folder)
    sys.stdout.write(folder_report(args.folder, args.format, args.wide))
    return EXIT_OK


def _cmd_replay(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    store = results_store(args.folder)
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
              f"trump {record.trump.noun}")
        for seat in range(4):
            print(f"  seat {seat} {seats[seat]:<20} {record.hands[seat].symbols()}")
        print("  calls: " + ", ".join(f"seat {s} {record.calls[s]}" for s in call_order(record.dealer)))
        for number, trick in enumerate(record.tricks, start=1):
            plays = "  ".join(
                f"{seat_after(trick.leader, k)}:{c.symbol()}" for k, c in enumerate(trick.cards)
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
    from arena.rating.html import REPORT_FILE, write_html_report

    results_store(args.folder)
    out = args.out if args.out is not None else args.folder / REPORT_FILE
    if args.roster is not None and not args.roster.is_file():
        raise UsageError(f"--roster {args.roster}: no such file (a class roster is the roster.toml of `roster add`)")
    write_html_report(args.folder, out, args.roster)
    print(f"wrote {out}")
    return EXIT_OK


def _cmd_verify(args: argparse.Namespace) -> int:
    from arena.event.audit import audit

    folders: list[Path] = args.folders
    stores = [results_store(folder) for folder in folders]  # a folder that is not one is refused before any audit
    held = 0
    for folder, store in zip(folders, stores, strict=True):
        violation = audit(folder)
        if violation is None:
            games = {r.game for r in store.records()}
            print(f"ok: {len(games)} games in {folder} follow from their rules and seeds", flush=True)
            held += 1
        else:
            print(f"violation{f' in {folder}' if len(folders) > 1 else ''}: {violation}", flush=True)
    if len(folders) > 1:
        print(f"{held} of {len(folders)} folders follow from their rules and seeds")
    return EXIT_OK if held == len(folders) else EXIT_FAILURE


def _cmd_status(args: argparse.Namespace) -> int:
    from arena.event.plan.status import read_status

    results_store(args.folder)
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
    from tabulate import tabulate

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


