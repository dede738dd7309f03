"""The cards a seat has not seen: which other seat may hold which, and deals of them that fit the play so far.

A search that cannot see the other hands (ISMCTS, determinised Monte Carlo) plays out worlds the seat
cannot tell from the real one: the same own hand, the same calls and cards played, and other hands
that could have made those plays legally. :func:`cannot_hold` reads what the play shows from the
legal-card rule itself (the lines of :func:`arena.core.rules.legal_table`, tried in order as the rule
tries them): a seat whose card passed over a line its hand would have had to meet holds no card of
that line's test. :func:`deal_unseen` deals the unseen cards at random under those limits and
replays the round on the rules core, so a world it returns is one the rules allow, card for card.
:func:`deal_seen` does the same from a :class:`Seen`, what one seat knows, which a bot makes from its view
(:meth:`Seen.of_view`) without the other hands.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import NamedTuple

from arena.core.cards import SUIT_OF
from arena.core.dealing import Deal
from arena.core.game import MAX_REDEALS, Round
from arena.core.rules import LINES, Rules, TrumpMode, legal_table, trick_winner
from arena.core.turns import call_order, seat_after
from arena.core.views import View
from arena.errors import IllegalAction

__all__ = ["Seen", "cannot_hold", "deal_seen", "deal_unseen"]


class Seen(NamedTuple):
    """What one seat knows of a round: the public play, its own cards, and how many cards each seat holds.

    Made from the round itself (:meth:`of_round`) or from a seat's view (:meth:`of_view`, what a bot is
    handed), so a search deals the same worlds from either."""

    rules: Rules
    seat: int
    dealer: int
    trump: int
    round_number: int
    attempt: int
    calls: tuple[int | None, ...]
    """By seat, ``None`` for a seat yet to call."""
    played: tuple[int, ...]
    """Every card index played this round, in order."""
    leaders: tuple[int, ...]
    """The leader of each trick begun, the current one's last."""
    own: int
    """The cards the seat was dealt, as a mask."""
    sizes: tuple[int, int, int, int]
    """By seat, the cards it still holds."""

    @classmethod
    def of_round(cls, rnd: Round, seat: int) -> Seen:
        hands = rnd.hands
        sizes = (hands[0].bit_count(), hands[1].bit_count(), hands[2].bit_count(), hands[3].bit_count())
        return cls(rnd.rules, seat, rnd.dealer, rnd.trump, rnd.round_number, rnd.attempt, tuple(rnd.calls),
                   tuple(rnd.played), (*rnd.leaders, rnd.leader), rnd.initial[seat], sizes)

    @classmethod
    def of_view(cls, view: View) -> Seen:
        tricks = [(trick.leader, [card.index for card in trick.cards]) for trick in view.tricks]
        tricks.append((view.leader, [card.index for card in view.trick]))
        sizes = [13, 13, 13, 13]
        own = view.hand_mask
        for leader, cards in tricks:
            for k, card in enumerate(cards):
                sizes[(leader + k) & 3] -= 1
                if (leader + k) & 3 == view.seat:
                    own |= 1 << card
        return cls(view.rules, view.seat, view.dealer, int(view.trump), view.round_number, 0, tuple(view.calls),
                   tuple(card for _leader, cards in tricks for card in cards), tuple(leader for leader, _ in tricks),
                   own, (sizes[0], sizes[1], sizes[2], sizes[3]))


def cannot_hold(rnd: Round) -> tuple[int, int, int, int]:
    """For each seat, the mask of cards it cannot hold now, as the play of ``rnd`` shows.

    Only what the rule proves: the first lines of the legal-card rule that the card played passed over,
    up to the first line that would have allowed the whole hand (what follows such a line binds the
    hand only if it missed that line, which the play does not say).
    """
    return _cannot_hold(rnd.rules, rnd.trump, rnd.played, (*rnd.leaders, rnd.leader))


def _cannot_hold(rules: Rules, trump: int, played: Sequence[int], leaders: Sequence[int]) -> tuple[int, int, int, int]:
    table = legal_table(rules, trump).lines
    # The cards each seat still held at each of its plays that are known: the ones it played from then on.
    known = [0, 0, 0, 0]
    later: list[int] = [0] * len(played)
    seats = [seat_after(leaders[k >> 2], k & 3) for k in range(len(played))]
    for k in range(len(played) - 1, -1, -1):
        known[seats[k]] |= 1 << played[k]
        later[k] = known[seats[k]]
    out = [0, 0, 0, 0]
    for k, card in enumerate(played):
        start = k & ~3
        if k == start:
            lines = table[4][int(k == 0)]
        else:
            trick = played[start:k]
            lines = table[SUIT_OF[trick[0]]][trick[trick_winner(trick, trump)]]
        held = later[k]
        for line in range(LINES - 1):
            test, whole = lines[2 * line], lines[2 * line + 1]
            if held & test or whole:
                break  # this line decided with the cards known, or would have allowed anything
            if not (1 << card) & test:
                out[seats[k]] |= test
    return out[0], out[1], out[2], out[3]


def deal_unseen(rnd: Round, seat: int, rng: random.Random, tries: int = 100) -> Round | None:
    """A copy of ``rnd`` replayed to the same moment, in which the cards ``seat`` has not seen are dealt
    afresh among the other seats, each holding as many as before and none it :func:`cannot_hold`;
    ``None`` when ``tries`` deals all failed (limits too tight for random dealing to meet).

    The dealt hands are also kept to what the deal itself required: with ``redeal_no_trump`` every
    hand holds a trump, and with ``trump_mode=last_card`` the dealer holds a card of the trump suit.
    """
    return deal_seen(Seen.of_round(rnd, seat), rng, tries)


def deal_seen(seen: Seen, rng: random.Random, tries: int = 100) -> Round | None:
    """:func:`deal_unseen` from what a seat knows (a :class:`Seen`): a round replayed to the moment ``seen``
    describes, with the seat's own cards and the others dealt at random under what the play shows."""
    rules, seat = seen.rules, seen.seat
    others = [other for other in range(4) if other != seat]
    limits = _cannot_hold(rules, seen.trump, seen.played, seen.leaders)
    gone = [0, 0, 0, 0]
    for k, card in enumerate(seen.played):
        gone[seat_after(seen.leaders[k >> 2], k & 3)] |= 1 << card
    known = seen.own | gone[0] | gone[1] | gone[2] | gone[3]
    pool = [card for card in range(52) if not known >> card & 1]
    for _ in range(tries):
        hands = _share(pool, {other: seen.sizes[other] for other in others},
                       {other: limits[other] for other in others}, rng)
        if hands is None:
            continue
        dealt = [0, 0, 0, 0]
        dealt[seat] = seen.own
        for other in others:
            dealt[other] = hands[other] | gone[other]
        if not _could_be_dealt(rules, seen.dealer, seen.trump, seen.attempt, dealt):
            continue
        world = Round(rules, dealt, seen.dealer, seen.trump, seen.round_number, seen.attempt)
        try:
            for caller in call_order(seen.dealer):
                call = seen.calls[caller]
                if call is None:
                    break
                world.call(call)
            for card in seen.played:
                world.play_index(card)
        except IllegalAction:
            continue  # a limit the rule sets that cannot_hold does not prove: deal again
        return world
    return None


def _share(pool: list[int], sizes: dict[int, int], limits: dict[int, int],
           rng: random.Random) -> dict[int, int] | None:
    """The cards of ``pool`` shared at random between the seats of ``sizes``, each taking its size and
    no card of its limit; the most limited cards go first. ``None`` when the cards run into a dead end."""
    room = dict(sizes)
    hands = dict.fromkeys(sizes, 0)
    order = pool[:]
    rng.shuffle(order)
    order.sort(key=lambda card: sum(1 for other in sizes if not limits[other] >> card & 1))
    for card in order:
        takers = [other for other in sizes if room[other] and not limits[other] >> card & 1]
        if not takers:
            return None
        # Weighted by the room left, so the seats fill evenly and no seat is left only cards it cannot take.
        pick = rng.choices(takers, weights=[room[other] for other in takers])[0]
        hands[pick] |= 1 << card
        room[pick] -= 1
    return hands


def _could_be_dealt(rules: Rules, dealer: int, trump: int, attempt: int, dealt: list[int]) -> bool:
    """Whether the rules would have let these hands be played rather than dealt again."""
    if attempt >= MAX_REDEALS:
        return True
    # The hands in dealing order; whichever card of the trump suit the dealer holds is dealt last.
    order = call_order(dealer)
    cards = [[card for card in range(52) if dealt[hand] >> card & 1] for hand in order]
    last = cards[3]
    trumps = [card for card in last if SUIT_OF[card] == trump]
    if rules.trump_mode is TrumpMode.LAST_CARD:
        if not trumps:
            return False
        last.remove(trumps[0])
        last.append(trumps[0])
    deal = Deal(tuple(cards[k & 3][k >> 2] for k in range(52)))
    return not (rules.redeal_no_trump and deal.has_no_trump_hand(trump))
