"""The rules in force: one value holding every switch, six named profiles, the legal-card rule and the trick winner.

Everything here is a pure function of values: no I/O, no clock. The legal-card algorithm is the
one of ``docs/rules.md`` with its switches, written once as lines tried in order (:class:`LegalTable`);
:func:`legal_with_reason` returns the mask of legal cards and a :class:`Reason` saying which line
decided, and :func:`explain` turns that into the sentence a student reads (``7H was led and you
hold TH, which beats the winning 7H: you must play TH``). Which card takes a trick is written once
too, as :data:`TAKES`. The game, its fast path and the rules tool all read these two tables. Hands
and tricks are passed as card indices and masks (see :mod:`arena.core.cards`).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from arena.core.cards import ABOVE, FULL_DECK, SUIT_MASK, SUIT_OF, Suit, card_text
from arena.core.words import listed
from arena.errors import RulesError

__all__ = [
    "LINES",
    "PROFILES",
    "SWITCHES",
    "TAKES",
    "LegalTable",
    "LowerTrump",
    "Penalty",
    "Reason",
    "Rules",
    "Scoring",
    "Step",
    "TrumpMode",
    "explain",
    "legal_cards",
    "legal_from",
    "legal_mask",
    "legal_table",
    "legal_with_reason",
    "trick_winner",
]


class LowerTrump(enum.Enum):
    """What a seat void in the led suit may do when it holds only trumps lower than the winner."""

    ANY = "any"
    """Any card of the hand (a trump that cannot win need not be wasted)."""
    TRUMP = "trump"
    """One of the lower trumps must still be played (no free discard)."""


class Scoring(enum.Enum):
    """How a round is scored (see :mod:`arena.core.scoring`)."""

    STANDARD = "standard"
    PAGAT = "pagat"
    DY = "dy"


class Penalty(enum.Enum):
    """What a missed call costs under standard scoring."""

    WHOLE = "whole"
    """Minus the whole call."""
    SHORTFALL = "shortfall"
    """Minus the tricks missing."""


class TrumpMode(enum.Enum):
    """Where the trump suit comes from."""

    FIXED = "fixed"
    """The ``trump`` switch, spades unless set, for the whole game."""
    LAST_CARD = "last_card"
    """The suit of the last card dealt, each round (the dealer's last card)."""


@dataclasses.dataclass(frozen=True)
class Rules:
    """Every switch of the game; build one with :meth:`profile` and :meth:`with_switches`."""

    profile_name: str = "nepali"
    """The profile these rules started from."""
    min_call: int = 1
    """The lowest call allowed."""
    max_call: int = 13
    """The highest call allowed."""
    must_beat: bool = True
    """A seat following suit must beat the winning card of the led suit if it can."""
    must_trump: bool = True
    """A seat void in the led suit must trump, and overtrump a trump already in the trick."""
    lower_trump: LowerTrump = LowerTrump.ANY
    """With ``must_trump``, what a void seat holding only lower trumps may play."""
    first_lead_no_trump: bool = False
    """The first lead of a round may not be a trump while the leader holds another suit."""
    scoring: Scoring = Scoring.STANDARD
    """The scoring scheme."""
    penalty: Penalty = Penalty.WHOLE
    """Standard scoring: what a missed call costs."""
    overtrick: int = 1
    """Standard scoring: tenths of a point per trick above the call (1 or 0)."""
    pagat_bonus: int = 13
    """Pagat scoring: points for a successful call of 8 or more (13 or 16)."""
    redeal_below: int = 0
    """Redeal when the four calls total less than this (0: never)."""
    redeal_no_trump: bool = False
    """Redeal when a hand holds no trump."""
    exact8_wins: bool = False
    """Calling 8 and taking exactly 8 tricks wins the game at once."""
    rounds: int = 5
    """Rounds in a game."""
    trump_mode: TrumpMode = TrumpMode.FIXED
    """Where the trump suit comes from."""
    trump: Suit = Suit.SPADES
    """The trump suit when ``trump_mode`` is fixed."""
    draw_seating: bool = False
    """Seating and the first dealer are drawn from the seed (the ``master`` profile)."""

    def __post_init__(self) -> None:
        _check(self)

    @classmethod
    def profile(cls, name: str = "nepali", **switches: object) -> Rules:
        """The named profile, with any switches changed; unknown names raise :class:`RulesError`."""
        try:
            base = PROFILES[name]
        except KeyError:
            raise RulesError(
                f"unknown rules profile {name!r}; choose one of: {', '.join(PROFILES)}"
            ) from None
        return base.with_switches(switches) if switches else base

    def with_switches(self, switches: Mapping[str, object]) -> Rules:
        """A copy with switches changed; values may be typed or text like ``"on"`` or ``"2"``."""
        changes: dict[str, Any] = {}
        for key, value in switches.items():
            changes[key] = _convert(key, value)
        return dataclasses.replace(self, **changes)

    def with_text_switches(self, assignments: Sequence[str]) -> Rules:
        """A copy with ``key=value`` assignments applied (as given on the command line)."""
        switches: dict[str, str] = {}
        for item in assignments:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise RulesError(f"{item!r} is not a switch setting: write key=value, like min_call=2")
            switches[key.strip()] = value.strip()
        return self.with_switches(switches)

    @property
    def call_range(self) -> range:
        """The calls allowed, lowest first."""
        return range(self.min_call, self.max_call + 1)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict: profile plus every switch, enums as their text values."""
        out: dict[str, object] = {"profile": self.profile_name}
        for key in SWITCHES:
            value = getattr(self, key)
            out[key] = value.letter if isinstance(value, Suit) else getattr(value, "value", value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Rules:
        """Reads what :meth:`to_dict` wrote."""
        data = dict(data)
        name = str(data.pop("profile", "nepali"))
        return dataclasses.replace(cls.profile(name).with_switches(data), profile_name=name)

    def changed_switches(self) -> dict[str, object]:
        """The switches that differ from the named profile, as text values."""
        base = PROFILES.get(self.profile_name, PROFILES["nepali"]).to_dict()
        return {k: v for k, v in self.to_dict().items() if base.get(k) != v}


SWITCHES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Rules) if f.name != "profile_name")
"""The names of every switch, settable on any profile."""

_BOOL_WORDS = {
    "on": True, "yes": True, "true": True, "1": True,
    "off": False, "no": False, "false": False, "0": False,
}


def _convert(key: str, value: object) -> object:
    if key not in SWITCHES:
        raise RulesError(f"unknown rules switch {key!r}; the switches are: {', '.join(SWITCHES)}")
    kind = {f.name: f.type for f in dataclasses.fields(Rules)}[key]
    text = str(value).strip().lower()
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if text in _BOOL_WORDS:
            return _BOOL_WORDS[text]
        raise RulesError(f"{key} must be on or off, not {value!r}")
    if kind == "int":
        if isinstance(value, bool):
            raise RulesError(f"{key} must be a whole number, not {value!r}")
        if isinstance(value, int):
            return value
        try:
            return int(text)
        except ValueError:
            raise RulesError(f"{key} must be a whole number, not {value!r}") from None
    if kind == "Suit":
        if isinstance(value, Suit):
            return value
        try:
            return Suit.parse(str(value))
        except ValueError:
            raise RulesError(f"trump must be one of S, H, D, C, not {value!r}") from None
    enum_type = {"LowerTrump": LowerTrump, "Scoring": Scoring, "Penalty": Penalty, "TrumpMode": TrumpMode}[
        str(kind)
    ]
    if isinstance(value, enum_type):
        return value
    for member in enum_type:
        if text == member.value:
            return member
    choices = ", ".join(member.value for member in enum_type)
    raise RulesError(f"{key} must be one of: {choices}; not {value!r}")


def _check(rules: Rules) -> None:
    def bad(message: str) -> RulesError:
        return RulesError(message)

    if not 1 <= rules.min_call <= 13:
        raise bad(f"min_call must be between 1 and 13 (there is no zero call), not {rules.min_call}")
    if not rules.min_call <= rules.max_call <= 13:
        raise bad(f"max_call must be between min_call ({rules.min_call}) and 13, not {rules.max_call}")
    if rules.overtrick not in (0, 1):
        raise bad(f"overtrick must be 1 (0.1 point per extra trick) or 0, not {rules.overtrick}")
    if rules.pagat_bonus not in (13, 16):
        raise bad(f"pagat_bonus must be 13 or 16, not {rules.pagat_bonus}")
    if not 0 <= rules.redeal_below <= 4 * rules.max_call:
        raise bad(
            f"redeal_below must be between 0 (off) and {4 * rules.max_call} (four calls of max_call), "
            f"not {rules.redeal_below}: otherwise every deal would be redealt"
        )
    if not 1 <= rules.rounds <= 100:
        raise bad(f"rounds must be between 1 and 100, not {rules.rounds}")
    if rules.exact8_wins and not rules.min_call <= 8 <= rules.max_call:
        raise bad(f"exact8_wins needs a call of 8 to be allowed, but calls run {rules.min_call}-{rules.max_call}")
    if rules.penalty is not Penalty.WHOLE and rules.scoring is not Scoring.STANDARD:
        raise bad(f"penalty=shortfall applies only to standard scoring, not scoring={rules.scoring.value}")
    if rules.lower_trump is LowerTrump.TRUMP and not rules.must_trump:
        raise bad("lower_trump=trump needs must_trump=on: without it a void seat may always play any card")


PROFILES: dict[str, Rules] = {}
"""The six named profiles of docs/rules.md, by name; ``nepali`` is the default."""

PROFILES["nepali"] = Rules(profile_name="nepali")
PROFILES["master"] = Rules(profile_name="master", draw_seating=True)
PROFILES["bhoos"] = Rules(profile_name="bhoos", max_call=8)
PROFILES["pagat"] = Rules(profile_name="pagat", min_call=2, must_beat=False, scoring=Scoring.PAGAT)
PROFILES["strict"] = Rules(
    profile_name="strict", min_call=2, lower_trump=LowerTrump.TRUMP, first_lead_no_trump=True
)
PROFILES["dy"] = Rules(
    profile_name="dy",
    min_call=2,
    must_trump=False,
    first_lead_no_trump=True,
    scoring=Scoring.DY,
    rounds=10,
    redeal_no_trump=True,
)


class Reason(enum.Enum):
    """Which part of the legal-card rule decided the legal set."""

    LEAD = "lead"
    LEAD_NOT_TRUMP = "lead_not_trump"
    FOLLOW = "follow"
    FOLLOW_TRUMPED = "follow_trumped"
    BEAT = "beat"
    FOLLOW_CANNOT_BEAT = "follow_cannot_beat"
    MUST_TRUMP = "must_trump"
    MAY_TRUMP = "may_trump"
    OVERTRUMP = "overtrump"
    UNDERTRUMP = "undertrump"
    CANNOT_OVERTRUMP = "cannot_overtrump"
    NO_TRUMP = "no_trump"


Step = tuple[int, bool, Reason]
"""One line of the legal-card rule: ``(test, whole, reason)``. A hand holding a card of ``test``
must play one of them (or, when ``whole``, may play any card), for ``reason``; otherwise the next
line decides."""


def _lines(rules: Rules, led: int, win: int, trump: int, first_trick: bool) -> tuple[Step, ...]:
    """The legal-card rule of docs/rules.md for one trick state, as the lines to try in order; the last
    matches any card.

    This is the rule, written once: :func:`legal_mask`, the rules tool and the fast path of
    :meth:`arena.core.game.Round.playout` all read the :class:`LegalTable` made of these lines.
    """
    trumps = SUIT_MASK[trump]
    if led < 0:
        anything = (FULL_DECK, True, Reason.LEAD)
        if first_trick and rules.first_lead_no_trump:
            return (FULL_DECK & ~trumps, False, Reason.LEAD_NOT_TRUMP), anything
        return (anything,)
    follow = SUIT_MASK[led]
    higher = ABOVE[win]
    lines: list[Step] = []
    if SUIT_OF[win] != led:
        # Once the led suit is trumped (and trumps were not led), any card of it is legal.
        lines.append((follow, False, Reason.FOLLOW_TRUMPED))
    elif rules.must_beat:
        lines += [(higher, False, Reason.BEAT), (follow, False, Reason.FOLLOW_CANNOT_BEAT)]
    else:
        lines.append((follow, False, Reason.FOLLOW))
    # Void in the led suit (when trumps were led, a void seat holds no trump and the last line decides).
    if not rules.must_trump:
        lines.append((trumps, True, Reason.MAY_TRUMP))
    elif SUIT_OF[win] != trump:
        lines.append((trumps, False, Reason.MUST_TRUMP))
    else:
        lines.append((higher, False, Reason.OVERTRUMP))
        if rules.lower_trump is LowerTrump.TRUMP:
            lines.append((trumps, False, Reason.UNDERTRUMP))
        else:
            lines.append((trumps, True, Reason.CANNOT_OVERTRUMP))
    lines.append((FULL_DECK, True, Reason.NO_TRUMP))
    return tuple(lines)


LINES = 5
"""The most lines the rule has for one trick state (two to follow suit, two when void, then any card)."""


class LegalTable(NamedTuple):
    """The legal-card rule of one rules value and trump suit, worked out for every trick state.

    Row ``led`` (0-3), column ``win`` (0-51) is a trick led in suit ``led`` and now won by card
    ``win``; row 4, column ``first_trick`` (0 or 1) is a lead. Each state has :data:`LINES` lines:
    the rule's own, padded with lines no hand meets before the last, which any card meets. So a
    reader may try the first four in turn, and give the whole hand when none is met; a lead has
    one line at most before that last one (the first-lead rule), so there the first alone will do.
    """

    lines: tuple[tuple[tuple[int, ...], ...], ...]
    """The first four lines of each state without their reasons, flat: ``test0, whole0, test1, whole1, ...``."""
    reasons: tuple[tuple[tuple[Reason, ...], ...], ...]
    """The reason of each of the five lines of each state."""


def _padded(lines: tuple[Step, ...]) -> tuple[tuple[int, ...], tuple[Reason, ...]]:
    *rule, last = lines
    rule += [(0, False, last[2])] * (LINES - len(lines))  # test 0: no hand meets it
    flat = tuple(value for test, whole, _reason in rule for value in (test, int(whole)))
    return flat, (*(reason for _test, _whole, reason in rule), last[2])


_LEGAL_TABLES: dict[int, tuple[Rules, list[LegalTable | None]]] = {}


def legal_table(rules: Rules, trump: int) -> LegalTable:
    """The :class:`LegalTable` of ``rules`` with ``trump`` as trumps.

    Made once per rules value and trump suit, and looked up by identity (as
    :func:`arena.core.scoring.score_table` is): a round reads it at every card.
    """
    entry = _LEGAL_TABLES.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_LEGAL_TABLES) >= 64:  # rules made one by one (tests, tools): keep the memo small
            _LEGAL_TABLES.clear()
        entry = _LEGAL_TABLES[id(rules)] = (rules, [None, None, None, None])
    table = entry[1][trump]
    if table is None:
        states = [[_padded(_lines(rules, led, win, trump, False)) for win in range(52)] for led in range(4)]
        states.append([_padded(_lines(rules, -1, -1, trump, first)) for first in (False, True)])
        table = entry[1][trump] = LegalTable(
            tuple(tuple(lines for lines, _reasons in row) for row in states),
            tuple(tuple(reasons for _lines, reasons in row) for row in states),
        )
    return table


def legal_with_reason(
    rules: Rules, hand: int, trick: Sequence[int], trump: int, first_trick: bool
) -> tuple[int, Reason]:
    """The mask of legal cards for a seat holding ``hand``, and the :class:`Reason` that decided it.

    ``trick`` holds the card indices played so far to this trick, in order. ``first_trick`` is
    true for the first trick of a round.
    """
    if not trick:
        return legal_mask(rules, hand, -1, -1, trump, first_trick)
    return legal_mask(rules, hand, SUIT_OF[trick[0]], trick[trick_winner(trick, trump)], trump, first_trick)


def legal_mask(
    rules: Rules, hand: int, led: int, win: int, trump: int, first_trick: bool
) -> tuple[int, Reason]:
    """:func:`legal_with_reason` for a trick summed up as its led suit and winning card (-1, -1 to lead).

    The game state machine calls it directly, because it keeps ``led`` and ``win`` up to date as
    cards fall. An empty hand gets an empty mask.
    """
    return legal_from(legal_table(rules, trump), hand, led, win, first_trick)


def legal_cards(table: LegalTable, hand: int, led: int, win: int, first_trick: bool) -> int:
    """The mask of :func:`legal_from` without its reason: what a round asks at every card of the step-by-step
    path, where the reason is wanted only to explain a refusal."""
    lines = table.lines[led][win] if led >= 0 else table.lines[4][first_trick]
    # The same reading of the same lines as legal_from's, without the reason's look-ups.
    if legal := hand & lines[0]:
        return hand if lines[1] else legal
    if legal := hand & lines[2]:
        return hand if lines[3] else legal
    if legal := hand & lines[4]:
        return hand if lines[5] else legal
    if legal := hand & lines[6]:
        return hand if lines[7] else legal
    return hand


def legal_from(table: LegalTable, hand: int, led: int, win: int, first_trick: bool) -> tuple[int, Reason]:
    """:func:`legal_mask` from the :class:`LegalTable` of the rules and trump suit (a round keeps its own)."""
    row, column = (led, win) if led >= 0 else (4, int(first_trick))
    lines = table.lines[row][column]
    # The first four lines in turn, unrolled (this runs at every card of the step-by-step path).
    if legal := hand & lines[0]:
        return hand if lines[1] else legal, table.reasons[row][column][0]
    if legal := hand & lines[2]:
        return hand if lines[3] else legal, table.reasons[row][column][1]
    if legal := hand & lines[4]:
        return hand if lines[5] else legal, table.reasons[row][column][2]
    if legal := hand & lines[6]:
        return hand if lines[7] else legal, table.reasons[row][column][3]
    return hand, table.reasons[row][column][LINES - 1]


def _takes(win: int, trump: int) -> int:
    """The cards that take a trick now won by ``win``: a higher card of its suit, or any trump when it is not one."""
    return ABOVE[win] | (SUIT_MASK[trump] if SUIT_OF[win] != trump else 0)


TAKES: tuple[tuple[tuple[bool, ...], ...], ...] = tuple(
    tuple(tuple(bool(_takes(win, trump) >> card & 1) for card in range(52)) for win in range(52)) for trump in range(4)
)
"""The trick-winner rule, written once: ``TAKES[trump][win][card]`` is true when ``card``, played to
a trick now won by card ``win``, becomes its winner (a table of truths rather than of masks: the
game reads it at every card, and a look-up makes no new integer)."""


def trick_winner(trick: Sequence[int], trump: int) -> int:
    """The position in ``trick`` of the winning card: the highest trump, else the highest of the led suit."""
    takes = TAKES[trump]
    best = 0
    win = trick[0]
    for position in range(1, len(trick)):
        card = trick[position]
        if takes[win][card]:
            best = position
            win = card
    return best


def _cards_phrase(mask: int) -> str:
    return listed([card_text(i) for i in range(51, -1, -1) if mask >> i & 1])


def explain(reason: Reason, hand: int, trick: Sequence[int], trump: int, legal: int) -> str:
    """The rule that decided ``legal``, in a student's words."""
    trump_suit = Suit(trump)
    if reason is Reason.LEAD:
        return "you lead this trick: any card is legal"
    if reason is Reason.LEAD_NOT_TRUMP:
        return (
            f"this is the first lead of the round: you may not lead a trump ({trump_suit.noun}) "
            "while you hold another suit"
        )
    led_card = card_text(trick[0])
    led = Suit(SUIT_OF[trick[0]])
    win = card_text(trick[trick_winner(trick, trump)])
    one = legal.bit_count() == 1
    if reason is Reason.BEAT:
        held = _cards_phrase(legal)
        if one:
            return f"{led_card} was led and you hold {held}, which beats the winning {win}: you must play {held}"
        return f"{led_card} was led and you hold {held}, which beat the winning {win}: you must play one of them"
    if reason is Reason.FOLLOW_CANNOT_BEAT:
        return f"{led_card} was led and none of your {led.noun} beats the winning {win}: play any of your {led.noun}"
    if reason is Reason.FOLLOW:
        return f"{led_card} was led: you must follow suit with one of your {led.noun}"
    if reason is Reason.FOLLOW_TRUMPED:
        return (
            f"{led_card} was led and {win} has trumped it, so any of your {led.noun} is legal, "
            "but you must follow suit"
        )
    if reason is Reason.NO_TRUMP:
        return f"{led_card} was led and you have no {led.noun} and no {trump_suit.noun}: any card is legal"
    if reason is Reason.MAY_TRUMP:
        return f"{led_card} was led and you have no {led.noun}: any card is legal (trumping is allowed, not required)"
    if reason is Reason.MUST_TRUMP:
        return f"{led_card} was led and you have no {led.noun}: you must trump with one of your {trump_suit.noun}"
    if reason is Reason.OVERTRUMP:
        held = _cards_phrase(legal)
        what = held if one else f"one of {held}"
        return f"{led_card} was led, you have no {led.noun} and {win} is winning: you must overtrump with {what}"
    if reason is Reason.UNDERTRUMP:
        return (
            f"{led_card} was led, you have no {led.noun} and your {trump_suit.noun} are all lower than the "
            f"winning {win}: you must still play one of them"
        )
    return (
        f"{led_card} was led, you have no {led.noun} and none of your {trump_suit.noun} beats the winning "
        f"{win}: any card is legal"
    )
