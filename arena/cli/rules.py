"""The commands that teach the rules and the deals: ``rules legal|score|show`` and ``deals``."""


from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from arena.cli.usage import (
    EXIT_OK,
    Parser,
    UsageError,
    add_rules_options,
    rules_of,
)
from arena.core.cards import Card, Hand, Suit
from arena.core.dealing import DealFile, seeded_deal
from arena.core.rules import Rules, explain, legal_with_reason
from arena.core.scoring import format_score, round_score


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """Adds ``rules`` (with ``legal``, ``score``, ``show``) and ``deals``."""
    rules = sub.add_parser(
        "rules", help="teach and check the rules: legal cards, round scores, profiles",
        description="Ask the rules core what is legal, what a round scores, or what a profile holds.",
    )
    rules_sub = rules.add_subparsers(dest="rules_command", required=True, metavar="WHAT", parser_class=Parser)

    legal = rules_sub.add_parser(
        "legal", help="the legal cards for a hand and a trick, with the reason",
        description="Print the cards a seat holding HAND may play to TRICK, and the rule that decides it. "
        'Example: callbreak-arena rules legal --hand "TH 4H 9C" --trick "7H"',
    )
    add_rules_options(legal)
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
    add_rules_options(score)
    score.add_argument("--call", required=True, type=int, help="the call made")
    score.add_argument("--tricks", required=True, type=int, help="the tricks taken (0-13)")
    score.add_argument("--json", action="store_true", help='print one JSON object: {"tenths": 41, "display": "4.1"}')
    score.set_defaults(func=_cmd_rules_score)

    show = rules_sub.add_parser(
        "show", help="every switch of a profile", description="Print every switch of a profile, with changes applied."
    )
    add_rules_options(show)
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


def _cmd_rules_legal(args: argparse.Namespace) -> int:
    rules = rules_of(args)
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
    mask, reason = legal_with_reason(rules, hand.mask, indices, trump, args.first_trick)
    text = explain(reason, hand.mask, indices, trump, mask)
    legal = [str(c) for c in Hand(mask)]
    if args.json:
        print(json.dumps({"legal": legal, "reason": text}))
    else:
        print(f"legal: {' '.join(legal)}")
        print(f"why:   {text}")
    return EXIT_OK


def _cmd_rules_score(args: argparse.Namespace) -> int:
    rules = rules_of(args)
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
    from tabulate import tabulate

    rules = rules_of(args)
    data = rules.to_dict()
    if args.json:
        print(json.dumps(data))
    else:
        print(tabulate(list(data.items()), headers=["switch", "value"]))
    return EXIT_OK


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


