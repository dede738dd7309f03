"""The ``callbreak-arena`` command line.

Exit status: 0 success, 1 failure, 2 bad usage or bad input (with a one-line error on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from tabulate import tabulate

from arena import __version__
from arena.cards import Card, Hand, Suit
from arena.dealing import DealFile, seeded_deal, seeded_deals
from arena.errors import ArenaError
from arena.game import Game, Phase, RoundResult
from arena.rules import PROFILES, SWITCHES, Rules, explain, legal_cards
from arena.scoring import format_score, round_score

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


class UsageError(Exception):
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

    demo = sub.add_parser(
        "demo", help="play one seeded game of four random bots in-process and print it",
        description="Play one seeded game of four sample random bots in-process, printed round by round, "
        "then the final standings.",
    )
    _add_rules_options(demo)
    demo.add_argument("--seed", type=int, default=1, help="the deal seed (default: 1)")
    demo.set_defaults(func=_cmd_demo)

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


def _cmd_demo(args: argparse.Namespace) -> int:
    from sample_bots.random_bot import RandomBot

    rules = _rules(args)
    bots = [RandomBot(seed=seat) for seat in range(4)]
    names = [f"random-{seat + 1}" for seat in range(4)]
    game = Game(rules, seeded_deals(args.seed, 1))
    print(f"callbreak-arena {__version__}: one game, rules {rules.profile_name}, seed {args.seed}\n")
    shown = 0
    while not game.over:
        seat = game.current_seat
        view = game.view(seat)
        if game.phase is Phase.CALLING:
            game.call(bots[seat].call(view))
        else:
            game.play(bots[seat].play(view))
        for result in game.results[shown:]:
            trump = f", trump {result.trump.noun}" if rules.trump_mode.value != "fixed" else ""
            print(f"Round {result.round_number}{trump}")
            print(_round_table(rules, result, names))
            print()
            shown += 1
    for redeal in game.redeals:
        print(f"(round {redeal.round_number} was redealt: {redeal.reason})")
    places = game.places()
    order = sorted(range(4), key=lambda s: (places[s], s))
    rows = [[places[s], names[s], format_score(rules, game.totals[s])] for s in order]
    print("Final standings")
    print(tabulate(rows, headers=["place", "bot", "total"], colalign=("right", "left", "right")))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
    except (UsageError, ArenaError) as err:
        print(f"callbreak-arena: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("callbreak-arena: interrupted", file=sys.stderr)
        return EXIT_FAILURE
    except BrokenPipeError:  # the reader (e.g. `head`) went away: not an error of ours
        sys.stderr.close()
        return EXIT_OK
    return status

