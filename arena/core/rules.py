"""The rules in force: one value holding every switch, six named profiles, and the legal-card rule.

Everything here is a pure function of values: no I/O, no clock. The legal-card algorithm is the
one of ``RULES.md`` with its switches; :func:`legal_cards` returns the mask of legal cards and a
:class:`Reason` saying which part of the rule decided, and :func:`explain` turns that into the
sentence a student reads (``7H was led and you hold TH, which beats the winning 7H: you must play
TH``). Hands and tricks are passed as card indices and masks (see :mod:`arena.core.cards`).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import Any

from arena.core.cards import ABOVE, SUIT_MASK, SUIT_OF, Suit, card_text
from arena.errors import RulesError

__all__ = [
    "PROFILES",
    "SWITCHES",
    "LowerTrump",
    "Penalty",
    "Reason",
    "Rules",
    "Scoring",
    "TrumpMode",
    "explain",
    "legal_cards",
    "legal_mask",
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
"""The six named profiles of RULES.md, by name; ``nepali`` is the default."""

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


def legal_cards(
    rules: Rules, hand: int, trick: Sequence[int], trump: int, first_trick: bool
) -> tuple[int, Reason]:
    """The mask of legal cards for a seat holding ``hand``, with the reason that decided it.

    ``trick`` holds the card indices played so far to this trick, in order. ``first_trick`` is
    true for the first trick of a round.
    """
    if not trick:
        return legal_mask(rules, hand, -1, -1, trump, first_trick)
    return legal_mask(rules, hand, SUIT_OF[trick[0]], trick[trick_winner(trick, trump)], trump, first_trick)


def legal_mask(
    rules: Rules, hand: int, led: int, win: int, trump: int, first_trick: bool
) -> tuple[int, Reason]:
    """:func:`legal_cards` for a trick summed up as its led suit and winning card (-1, -1 to lead).

    This is the one legal-card algorithm of RULES.md; the game state machine calls it directly
    because it keeps ``led`` and ``win`` up to date as cards fall.
    """
    if led < 0:
        if first_trick and rules.first_lead_no_trump:
            others = hand & ~SUIT_MASK[trump]
            if others:
                return others, Reason.LEAD_NOT_TRUMP
        return hand, Reason.LEAD
    follow = hand & SUIT_MASK[led]
    if follow:
        if SUIT_OF[win] != led:
            # Once the led suit is trumped (and trumps were not led), any card of it is legal.
            return follow, Reason.FOLLOW_TRUMPED
        if rules.must_beat:
            higher = follow & ABOVE[win]
            if higher:
                return higher, Reason.BEAT
            return follow, Reason.FOLLOW_CANNOT_BEAT
        return follow, Reason.FOLLOW
    trumps = hand & SUIT_MASK[trump]
    if not trumps:
        return hand, Reason.NO_TRUMP
    if not rules.must_trump:
        return hand, Reason.MAY_TRUMP
    if SUIT_OF[win] != trump:
        return trumps, Reason.MUST_TRUMP
    higher = trumps & ABOVE[win]
    if higher:
        return higher, Reason.OVERTRUMP
    if rules.lower_trump is LowerTrump.TRUMP:
        return trumps, Reason.UNDERTRUMP
    return hand, Reason.CANNOT_OVERTRUMP


def trick_winner(trick: Sequence[int], trump: int) -> int:
    """The position in ``trick`` of the winning card: the highest trump, else the highest of the led suit."""
    best = 0
    best_card = trick[0]
    for position in range(1, len(trick)):
        card = trick[position]
        suit = SUIT_OF[card]
        best_suit = SUIT_OF[best_card]
        if (suit == best_suit and card > best_card) or (suit == trump and best_suit != trump):
            best = position
            best_card = card
    return best


def _cards_phrase(mask: int) -> str:
    names = [card_text(i) for i in range(51, -1, -1) if mask >> i & 1]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


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
