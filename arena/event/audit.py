"""An independent audit of a results folder: does every record follow from its rules and seed?

For every record: the deal matches its seed (or the published deal file), every call is in range,
every card played was legal, every trick winner, tricks won, round score and running total
follows, the dealer passes on, the places follow from the totals; and the plan made again
from the manifest's design is the one its SHA-256 names, and every game it plans is present exactly
once, complete, in its seats. The audit replays each round through the rules core
from the recorded hands; it trusts nothing else in the record.

Under ``rotation = "once"`` it also reads from the records that no bot was dealt the cards of any deal set twice,
and that every game of a deal set seats its bot in the same seat against the same house trio, with the same
first dealer: the comparisons the standings make are between bots that held the same cards in the same seat.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

from arena.core.cards import SUIT_OF, Hand, Suit
from arena.core.dealing import DealFile, seeded_deal
from arena.core.game import Phase, Round, places
from arena.core.rules import Rules, TrumpMode
from arena.core.turns import call_order, dealer_of
from arena.errors import ArenaError, IllegalAction, RecordsError
from arena.event.plan.manifest import Manifest
from arena.event.plan.plan import Plan
from arena.event.setup.config import read_deal_file
from arena.event.setup.formats import HOUSE_TRIO
from arena.event.setup.kinds import Rotation
from arena.records.format import RoundRecord, read_records
from arena.records.store import ResultsStore

__all__ = ["Violation", "audit"]


@dataclasses.dataclass(frozen=True)
class Violation:
    """The first thing found wrong, and where."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


class _Bad(Exception):
    pass


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise _Bad(what)


def _deal_hands(record: RoundRecord, deal_file: DealFile | None) -> tuple[list[int], Suit]:
    game, round_number, attempt = (int(x) for x in str(record.deal).split("."))
    _check(game == record.deal_set and round_number == record.round and attempt == record.attempt,
           f"deal id {record.deal} does not match deal set {record.deal_set}, round {record.round}, "
           f"attempt {record.attempt}")
    if str(record.deals).startswith("file:"):
        _check(deal_file is not None, "the records come from a deal file, which the manifest does not locate")
        assert deal_file is not None
        deal = deal_file.source(game)(round_number, attempt)
    else:
        deal = seeded_deal(int(record.seed), game, round_number, attempt)
    hands = [0, 0, 0, 0]
    dealer = int(record.dealer)
    for position, seat in enumerate(call_order(dealer)):  # hand 0 goes to the seat after the dealer
        hands[seat] = deal.masks[position]
    return hands, Suit(SUIT_OF[deal.deck[51]])


def _replay_round(record: RoundRecord, rules: Rules, deal_file: DealFile | None) -> list[int]:
    """Checks one round record; returns its scores."""
    hands, last_suit = _deal_hands(record, deal_file)
    recorded = [h.mask for h in record.hands]
    for seat in range(4):
        _check(recorded[seat] == hands[seat],
               f"seat {seat}'s hand {Hand(recorded[seat])} is not the hand its deal gives, {Hand(hands[seat])}")
    trump = record.trump
    expected_trump = last_suit if rules.trump_mode is TrumpMode.LAST_CARD else rules.trump
    _check(trump == expected_trump, f"the trump is {trump.noun}, but the rules make it {expected_trump.noun}")
    dealer = int(record.dealer)
    rnd = Round(rules, hands, dealer, int(trump), int(record.round), int(record.attempt))
    calls = record.calls
    for seat in call_order(dealer):
        try:
            rnd.call(int(calls[seat]))
        except IllegalAction as err:
            raise _Bad(f"seat {seat}'s call {calls[seat]} is illegal: {err}") from None
    tricks = record.tricks
    _check(len(tricks) == 13, f"{len(tricks)} tricks recorded, not 13")
    for number, trick in enumerate(tricks):
        _check(trick.leader == rnd.current_seat,
               f"trick {number} was led by seat {trick.leader}, but seat {rnd.current_seat} had the lead")
        _check(len(trick.cards) == 4, f"trick {number} has {len(trick.cards)} cards")
        for card in trick.cards:
            seat = rnd.current_seat
            try:
                rnd.play(card)
            except (IllegalAction, ArenaError) as err:
                raise _Bad(f"trick {number}: seat {seat} played {card}, which was not legal: {err}") from None
        _check(rnd.winners[-1] == trick.winner,
               f"trick {number} was won by seat {rnd.winners[-1]}, not seat {trick.winner} as recorded")
    _check(rnd.phase is Phase.OVER, "the round did not end")
    _check(list(rnd.tricks_won) == list(record.tricks_won),
           f"tricks won are {rnd.tricks_won}, not {record.tricks_won} as recorded")
    assert rnd.scores is not None
    _check(list(rnd.scores) == list(record.scores),
           f"the round scores are {list(rnd.scores)}, not {record.scores} as recorded")
    return list(rnd.scores)


def _audit_game(rounds: Sequence[RoundRecord], deal_file: DealFile | None) -> None:
    first = rounds[0]
    rules = first.rules
    totals = [0, 0, 0, 0]
    exact8: int | None = None
    for index, record in enumerate(rounds):
        where = f"records.jsonl line {record.line} (game {record.game}, round {record.round})"
        try:
            _check(record.round == index + 1, f"round {record.round} where round {index + 1} was due")
            _check(record.seats == first.seats, "the seating changed in the middle of a game")
            due = dealer_of(int(first.first_dealer), index + 1)
            _check(int(record.dealer) == due, f"seat {record.dealer} dealt, but the deal passes on: seat {due} was due")
            _check(int(record.attempt) == len(record.redeals),
                   f"attempt {record.attempt} was played after {len(record.redeals)} recorded redeals")
            scores = _replay_round(record, rules, deal_file)
            totals = [t + s for t, s in zip(totals, scores, strict=True)]
            _check(list(record.totals) == totals, f"the totals are {totals}, not {record.totals} as recorded")
            if rules.exact8_wins:
                for seat in range(4):
                    if record.calls[seat] == 8 and record.tricks_won[seat] == 8:
                        exact8 = seat
            last = index == len(rounds) - 1
            _check(bool(record.final) == last, "only the last round of a game is marked final")
            if last:
                _check(len(rounds) == rules.rounds or exact8 is not None,
                       f"the game has {len(rounds)} rounds, not {rules.rounds}")
                expected = list(places(totals, exact8))
                _check(list(record.places) == expected, f"the places are {expected}, not {record.places}")
        except _Bad as bad:
            raise RecordsError(str(Violation(where, str(bad)))) from None
        except (KeyError, TypeError, ValueError) as err:
            raise RecordsError(str(Violation(where, f"the record is malformed: {err!r}"))) from None


def audit(folder: Path) -> Violation | None:
    """Audits a results folder; returns the first violation found, or ``None`` when all holds."""
    store = ResultsStore(folder)
    try:
        raw = store.manifest()
        if raw is None:
            return Violation(str(folder), "no manifest.json: this is not a results folder")
        manifest = Manifest.from_dict(raw, str(store.manifest_path))
        records = read_records(store.records_path)
    except RecordsError as err:
        return Violation(str(folder), str(err))
    deal_file = None
    if manifest.config.get("deal_file"):
        path = Path(manifest.config["deal_file"])
        if path.exists():
            deal_file = read_deal_file(path)
    games: dict[str, list[RoundRecord]] = {}
    for record in records:
        games.setdefault(record.game, []).append(record)
    try:
        for game, rounds in games.items():
            # A game is written whole, once: lines of it after its final round are a second copy.
            ends = [i for i, r in enumerate(rounds) if r.final]
            if ends and ends[0] != len(rounds) - 1:
                return Violation(f"records.jsonl line {rounds[ends[0] + 1].line} (game {game})",
                                 f"the game is recorded twice (first copy ends on line {rounds[ends[0]].line})")
            if not rounds[-1].final:
                return Violation(f"records.jsonl line {rounds[-1].line} (game {game})", "the game is not complete")
            _audit_game(rounds, deal_file)
    except RecordsError as err:
        where, _, what = str(err).partition(": ")
        return Violation(where, what)
    if manifest.plan.rotation == Rotation.ONCE:
        found = _audit_once(games)
        if found is not None:
            return found
    return _audit_plan(manifest.plan, games)


def _audit_once(games: Mapping[str, Sequence[RoundRecord]]) -> Violation | None:
    """Under ``rotation = "once"``: no bot but the house trio holds a deal set's cards twice, and every game of a
    deal set seats its one bot in the same seat as the others, the house trio in the same other seats, with the same
    first dealer (the datum of a hand is then other bots' results on the same cards in the same seat)."""
    held: dict[tuple[str, int], tuple[str, int]] = {}
    shapes: dict[int, tuple[str, RoundRecord]] = {}
    for game, rounds in games.items():
        first = rounds[0]
        where = f"records.jsonl line {first.line} (game {game})"
        deal_set = first.deal_set
        bots = [(seat, bot) for seat, bot in enumerate(first.seats) if bot not in HOUSE_TRIO]
        for seat, bot in bots:
            before = held.get((bot, deal_set))
            if before is not None:
                return Violation(where, f"{bot} was dealt the cards of deal set {deal_set} twice, in game {before[0]} "
                                        f"(seat {before[1]}) and in game {game} (seat {seat}): under rotation \"once\" "
                                        "a bot holds each deal set's cards at most once in the whole event")
            held[bot, deal_set] = (game, seat)
        if len(bots) != 1:
            return Violation(where, f"the game seats {len(bots)} bots besides the house trio, not one: under rotation "
                                    "\"once\" each bot plays against the house trio alone")
        shape = shapes.setdefault(deal_set, (game, first))
        other_game, other = shape
        if [bot if bot in HOUSE_TRIO else None for bot in first.seats] != [
                bot if bot in HOUSE_TRIO else None for bot in other.seats] or first.first_dealer != other.first_dealer:
            seat, bot = bots[0]
            other_seat, other_bot = next((s, b) for s, b in enumerate(other.seats) if b not in HOUSE_TRIO)
            trio, other_trio = (", ".join(b for b in r.seats if b in HOUSE_TRIO) for r in (first, other))
            return Violation(where, f"{bot} held deal set {deal_set} in seat {seat} against {trio} (first dealer "
                                    f"{first.first_dealer}), but {other_bot} held it in seat {other_seat} against "
                                    f"{other_trio} (first dealer {other.first_dealer}) in game {other_game}: under "
                                    "rotation \"once\" every bot holds a deal set's cards in the same seat against the "
                                    "same house trio, so that they can be compared")
    return None


def _audit_plan(plan: Plan, games: Mapping[str, Sequence[RoundRecord]]) -> Violation | None:
    """The plan made again is the one the manifest's SHA-256 names; every planned game is present
    once, in the seats the plan gives it; nothing unplanned."""
    try:
        plan.verify()
    except RecordsError as err:
        return Violation("manifest.json", str(err))
    last = -1
    if plan.sequential:
        # A sequential test may stop early, but only after whole blocks, in the planned order.
        played = {rounds[0].block for rounds in games.values()}
        last = max((i for i, b in enumerate(plan.blocks()) if b.id in played), default=-1)
    missing: list[str] = []
    found = 0
    for index, block in enumerate(plan.blocks()):
        if plan.sequential and index > last:
            break
        for game in block.games(plan.rotation):
            rounds = games.get(game.id)
            if rounds is None:
                missing.append(game.id)
                continue
            found += 1
            if tuple(rounds[0].seats) != game.seats or rounds[0].first_dealer != game.first_dealer:
                return Violation(f"records.jsonl line {rounds[0].line} (game {game.id})",
                                 f"the seats {list(rounds[0].seats)} (first dealer {rounds[0].first_dealer}) are not "
                                 f"the planned {list(game.seats)} (first dealer {game.first_dealer})")
    if missing:
        return Violation("records.jsonl", f"planned game {missing[0]} is missing ({len(missing)} missing in all)")
    if found < len(games):  # some recorded game is not in the plan: the first one in the file
        planned = {game.id for block in plan.blocks() for game in block.games(plan.rotation)}
        for game_id, rounds in games.items():
            if game_id not in planned:
                dropped = {b.id for b in plan.dropped()}
                why = " (its block was dropped from the plan)" if rounds[0].block in dropped else ""
                return Violation(f"records.jsonl line {rounds[0].line}", f"game {game_id} was not in the plan{why}")
    return None
