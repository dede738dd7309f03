"""The ``rate`` command: a bot's score on the reference zoo's fixed scale (:mod:`arena.rating.zoo`)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.cli.usage import EXIT_OK, Parser, UsageError
from arena.event.setup.bots import load_bot_class
from arena.event.setup.submissions import read_submission

if TYPE_CHECKING:
    from arena.rating.zoo import Zoo


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """Adds ``rate`` (the zoo is read when the command runs: its members are found among the installed bots)."""
    command = sub.add_parser(
        "rate", help="a bot's score on the reference zoo's fixed scale, with its interval and its place",
        description="Rate BOT against the reference zoo: duplicate blocks of one deal set each, from a fixed "
        "pool, BOT with three zoo members in every block (every trio of members in turn), until the 95%% "
        "interval of its score is as narrow as --precision, --max-blocks are played, or --seconds have passed. "
        "The score is BOT's points per game above its table's mean, the scale the zoo's published scores are "
        "on (the members and their scores: arena/rating/zoo.toml, docs/research.md). The blocks' records stay "
        "in --results.",
    )
    command.add_argument("bot", metavar="BOT",
                         help="a zoo member's name, an in-process bot (module:Class or path/to/file.py:Class), or "
                         "a bot's folder (with its bot.json, or a bot.py with the bot kit)")
    command.add_argument("--precision", type=float, default=0.5, metavar="P",
                         help="stop when the 95%% interval's half width is at most P points per game (default 0.5)")
    command.add_argument("--max-blocks", type=int, default=400, metavar="N",
                         help="at most N blocks, rounded down to whole cycles of the zoo's trios (default 400)")
    command.add_argument("--seconds", type=float, default=600.0, metavar="S",
                         help="stop at the end of the cycle in which S seconds have passed (default 600)")
    command.add_argument("--seed", type=int, default=None, metavar="S",
                         help="a secret pool of deals for a contest (default: the zoo's public pool, for which "
                         "the published scores hold)")
    command.add_argument("--results", type=Path, default=None, metavar="DIR",
                         help="where the blocks' records go (default: results/rate-NAME); a block there is reused")
    command.add_argument("--sandbox", choices=("auto", "bwrap", "off"), default="auto",
                         help="how a bot's folder runs (default auto: bubblewrap where it is installed)")
    command.add_argument("--json", action="store_true", help="print the rating as one JSON object")
    command.set_defaults(func=_cmd_rate)


def _candidate(spec: str, zoo: Zoo) -> tuple[str, dict[str, Any]]:
    """A short name for ``spec`` and its ``[[bots]]`` table (without a name)."""
    member = zoo.member(spec)
    if member is not None:
        table = member.bot_table(member.name)
        del table["name"]
        return member.name, table
    path = Path(spec)
    if path.is_dir():
        table = read_submission(path, f"the bot in {path}").bot_table(path.name)
        del table["name"]
        return path.name, table
    if ":" not in spec:
        raise UsageError(f"BOT must be a zoo member ({', '.join(m.name for m in zoo.members)}), module:Class, "
                         f"path/to/file.py:Class or a bot's folder, not {spec!r}")
    load_bot_class(spec)  # a bot that cannot be loaded is said now, in one line
    return spec.rpartition(":")[2], {"python": spec}


def _cmd_rate(args: argparse.Namespace) -> int:
    import asyncio

    from arena.rating.zoo import load_zoo, rate

    zoo = load_zoo()
    name, table = _candidate(args.bot, zoo)
    folder = args.results or Path("results") / f"rate-{name}"
    say = (lambda text: None) if args.json else (lambda text: print(f"  {text}", flush=True))
    if not args.json:
        print(f"rating {args.bot} on the zoo ({', '.join(m.label for m in zoo.members)}), "
              f"{zoo.cycle} blocks a cycle, records in {folder}", flush=True)
    rating = asyncio.run(rate(table, zoo, folder, precision=args.precision, max_blocks=args.max_blocks,
                              seconds=args.seconds, seed=args.seed, sandbox=args.sandbox, log=say))
    if args.json:
        data = rating.as_dict(zoo)
        data.update(bot=args.bot, pool="secret" if args.seed is not None else zoo.pool_seed)
        for key in ("low", "high"):
            data[key] = data[key] if math.isfinite(data[key]) else None
        print(json.dumps(data))
        return EXIT_OK
    why = {"precision": "precise enough", "blocks": "all its blocks played", "time": "out of time"}[rating.stopped]
    print(f"{args.bot}: {rating.mean:+.2f} points per game [{rating.low:+.2f}, {rating.high:+.2f}] over "
          f"{rating.blocks} blocks ({4 * rating.blocks} games, {rating.seconds:.0f} s; {why})")
    print(f"on the zoo's scale: {rating.place(zoo)}")
    if args.seed is not None:
        print("on a secret pool: the published scores are of the public pool, so the place is a guide")
    return EXIT_OK
