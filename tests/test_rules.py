"""The legal-card rule, the trick winner and the rules value, one table row per case of RULES.md.

Hands are realistic 13-card hands. Where a seed gives only a fragment of a hand, the rest is filled
with other suits so that each example's four hands form one consistent deal (noted per example).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import pytest

from arena.core.cards import Card, Hand, Suit
from arena.core.rules import (
    PROFILES,
    SWITCHES,
    LowerTrump,
    Penalty,
    Reason,
    Rules,
    Scoring,
    TrumpMode,
    explain,
    legal_with_reason,
    trick_winner,
)
from arena.errors import RulesError
from tests.helpers.hands import (
    ACE_THREE_HEARTS,
    ALL_SPADES,
    ASHMA_1,
    ASHMA_2,
    BIMAL_1,
    BIMAL_2,
    FIRST_3,
    FOURTH_3,
    MIXED_LEAD,
    SECOND_3,
    THIRD_3,
    TULSI_1,
    TULSI_2,
    YOU_1,
    YOU_2,
)

S, H, D, C = 0, 1, 2, 3


def indices(text: str) -> list[int]:
    return [Card.parse(word).index for word in text.split()]


def mask(text: str) -> int:
    return Hand.parse(text).mask


def test_seed_example_deals_are_consistent() -> None:
    for hands in (
        (BIMAL_1, ASHMA_1, TULSI_1, YOU_1),
        (YOU_2, ASHMA_2, TULSI_2, BIMAL_2),
        (FIRST_3, SECOND_3, THIRD_3, FOURTH_3),
    ):
        masks = [mask(h) for h in hands]
        assert all(m.bit_count() == 13 for m in masks)
        assert masks[0] | masks[1] | masks[2] | masks[3] == (1 << 52) - 1
    for text in (ACE_THREE_HEARTS, ALL_SPADES, MIXED_LEAD):
        assert len(Hand.parse(text)) == 13


class LegalCase(NamedTuple):
    profile: str
    switches: dict[str, Any]
    hand: str
    trick: str
    legal: str
    reason: Reason
    trump: int = S
    first_trick: bool = False


LEGAL_CASES: dict[str, LegalCase] = {
    # Seed 001, "A trick, played out" (nepali).
    "001-7H-led-ashma-must-play-TH": LegalCase("nepali", {}, ASHMA_1, "7H", "TH", Reason.BEAT),
    "001-7H-led-tulsi-must-play-QH": LegalCase("nepali", {}, TULSI_1, "7H TH", "QH", Reason.BEAT),
    "001-7H-led-void-must-trump-any-spade": LegalCase(
        "nepali", {}, YOU_1, "7H TH QH", "QS JS 7S 3S", Reason.MUST_TRUMP
    ),
    # Seed 001, "A second trick, with an overtrump".
    "001-AH-led-void-ashma-must-trump": LegalCase(
        "nepali", {}, ASHMA_2, "AH", "AS KS QS TS 9S 8S 7S 6S 4S 3S 2S", Reason.MUST_TRUMP
    ),
    "001-AH-2S-tulsi-must-overtrump-5S-or-JS": LegalCase(
        "nepali", {}, TULSI_2, "AH 2S", "JS 5S", Reason.OVERTRUMP
    ),
    "001-AH-2S-JS-bimal-no-spades-anything": LegalCase(
        "nepali", {}, BIMAL_2, "AH 2S JS", BIMAL_2, Reason.NO_TRUMP
    ),
    "001-AH-2S-5S-bimal-no-spades-anything": LegalCase(
        "nepali", {}, BIMAL_2, "AH 2S 5S", BIMAL_2, Reason.NO_TRUMP
    ),
    # Seed 003 (strict).
    "003-AH-led-6H-cannot-beat-any-heart": LegalCase(
        "strict", {}, SECOND_3, "AH", "8H 7H 6H 5H 4H 3H 2H", Reason.FOLLOW_CANNOT_BEAT
    ),
    "003-AH-6H-third-void-must-trump": LegalCase(
        "strict", {}, THIRD_3, "AH 6H", "AS KS QS JS TS 9S 4S", Reason.MUST_TRUMP
    ),
    "003-AH-6H-4S-strict-fourth-must-play-2S": LegalCase(
        "strict", {}, FOURTH_3, "AH 6H 4S", "2S", Reason.UNDERTRUMP
    ),
    "003-AH-6H-4S-nepali-fourth-may-play-KD": LegalCase(
        "nepali", {}, FOURTH_3, "AH 6H 4S", FOURTH_3, Reason.CANNOT_OVERTRUMP
    ),
    "003-7H-led-strict-AH-and-3H-must-play-AH": LegalCase(
        "strict", {}, ACE_THREE_HEARTS, "7H", "AH", Reason.BEAT
    ),
    "003-first-lead-strict-no-spade": LegalCase(
        "strict", {}, MIXED_LEAD, "", "9H 4H AD QD 6D 3D KC TC 5C 2C", Reason.LEAD_NOT_TRUMP, first_trick=True
    ),
    "003-first-lead-dy-no-spade": LegalCase(
        "dy", {}, MIXED_LEAD, "", "9H 4H AD QD 6D 3D KC TC 5C 2C", Reason.LEAD_NOT_TRUMP, first_trick=True
    ),
    "003-first-lead-nepali-spade-allowed": LegalCase(
        "nepali", {}, MIXED_LEAD, "", MIXED_LEAD, Reason.LEAD, first_trick=True
    ),
    "003-first-lead-pagat-spade-allowed": LegalCase(
        "pagat", {}, MIXED_LEAD, "", MIXED_LEAD, Reason.LEAD, first_trick=True
    ),
    "first_lead_no_trump-later-lead-any": LegalCase("strict", {}, MIXED_LEAD, "", MIXED_LEAD, Reason.LEAD),
    "first_lead_no_trump-only-trumps-may-lead-trump": LegalCase(
        "strict", {}, ALL_SPADES, "", ALL_SPADES, Reason.LEAD, first_trick=True
    ),
    "first_lead_no_trump-switch-on-nepali": LegalCase(
        "nepali", {"first_lead_no_trump": True}, MIXED_LEAD, "", "9H 4H AD QD 6D 3D KC TC 5C 2C",
        Reason.LEAD_NOT_TRUMP, first_trick=True,
    ),
    "first_lead_no_trump-trump-diamonds": LegalCase(
        "strict", {"trump": "D"}, MIXED_LEAD, "", "AS KS 7S 9H 4H KC TC 5C 2C", Reason.LEAD_NOT_TRUMP,
        trump=D, first_trick=True,
    ),
    # must_beat.
    "must_beat-off-pagat-may-play-under": LegalCase("pagat", {}, ASHMA_1, "7H", "TH 4H", Reason.FOLLOW),
    "must_beat-off-switch-on-nepali": LegalCase(
        "nepali", {"must_beat": "off"}, ACE_THREE_HEARTS, "7H", "AH 3H", Reason.FOLLOW
    ),
    "must_beat-beat-the-winner-not-the-led-card": LegalCase(
        "nepali", {}, "KS 6S JH 8H QD 9D 5D 2D JC 8C 7C 4C 2C", "7H TH", "JH", Reason.BEAT
    ),
    "must_beat-offsuit-discard-does-not-count": LegalCase(
        "nepali", {}, "KS 6S 8H 2H QD 9D 5D 2D JC 8C 7C 4C 2C", "7H AD", "8H", Reason.BEAT
    ),
    "must_beat-cannot-beat-any-of-led-suit": LegalCase(
        "nepali", {}, "KS 6S 5H 2H QD 9D 5D 2D JC 8C 7C 4C 2C", "7H TH", "5H 2H", Reason.FOLLOW_CANNOT_BEAT
    ),
    "must_beat-several-beaters-all-legal": LegalCase(
        "nepali", {}, "KS 6S KH JH 8H 2H 9D 5D 2D JC 8C 7C 2C", "7H", "KH JH 8H", Reason.BEAT
    ),
    "once-trumped-any-card-of-led-suit": LegalCase(
        "nepali", {}, ASHMA_1, "7H 3S", "TH 4H", Reason.FOLLOW_TRUMPED
    ),
    "once-trumped-any-card-of-led-suit-strict": LegalCase(
        "strict", {}, ACE_THREE_HEARTS, "7H 2S 8H", "AH 3H", Reason.FOLLOW_TRUMPED
    ),
    "trumps-led-must-beat-the-winning-trump": LegalCase(
        "nepali", {}, "KS TS 8S 2S AH 9D 5D 2D JC 8C 7C 4C 2C", "7S 9S", "KS TS", Reason.BEAT
    ),
    "trumps-led-cannot-beat-any-trump": LegalCase(
        "nepali", {}, "8S 2S AH KH 9D 5D 2D JC 8C 7C 4C 3C 2C", "7S AS", "8S 2S", Reason.FOLLOW_CANNOT_BEAT
    ),
    "trumps-led-pagat-any-trump": LegalCase(
        "pagat", {}, "KS TS 8S 2S AH 9D 5D 2D JC 8C 7C 4C 2C", "7S 9S", "KS TS 8S 2S", Reason.FOLLOW
    ),
    "trumps-led-void-no-trumps-any-card": LegalCase(
        "nepali", {}, "AH KH 9D 5D 2D JC 8C 7C 6C 5C 4C 3C 2C", "7S 9S", "AH KH 9D 5D 2D JC 8C 7C 6C 5C 4C 3C 2C",
        Reason.NO_TRUMP,
    ),
    # must_trump.
    "must_trump-off-dy-void-may-discard": LegalCase("dy", {}, YOU_1, "7H TH QH", YOU_1, Reason.MAY_TRUMP),
    "must_trump-off-dy-under-a-trump-any-card": LegalCase(
        "dy", {}, FOURTH_3, "AH 6H 4S", FOURTH_3, Reason.MAY_TRUMP
    ),
    "must_trump-off-switch-on-nepali": LegalCase(
        "nepali", {"must_trump": "off"}, TULSI_2, "AH 2S", TULSI_2, Reason.MAY_TRUMP
    ),
    "must_trump-off-still-must-follow-and-beat": LegalCase("dy", {}, ASHMA_1, "7H", "TH", Reason.BEAT),
    "must_trump-overtrump-when-one-trump-beats": LegalCase(
        "nepali", {}, "JS 3S KD QD JD TD 9D KC QC JC TC 9C 8C", "AH 5S", "JS", Reason.OVERTRUMP
    ),
    "must_trump-pagat-overtrump": LegalCase("pagat", {}, TULSI_2, "AH 2S", "JS 5S", Reason.OVERTRUMP),
    # lower_trump.
    "lower_trump-any-pagat": LegalCase("pagat", {}, FOURTH_3, "AH 6H 4S", FOURTH_3, Reason.CANNOT_OVERTRUMP),
    "lower_trump-trump-switch-on-nepali": LegalCase(
        "nepali", {"lower_trump": "trump"}, FOURTH_3, "AH 6H 4S", "2S", Reason.UNDERTRUMP
    ),
    "lower_trump-trump-several-lower-trumps": LegalCase(
        "strict", {}, "4S 3S 2S KD QD JD TD 9D KC QC JC TC 9C", "AH 6H 5S", "4S 3S 2S", Reason.UNDERTRUMP
    ),
    "lower_trump-trump-higher-trump-still-wins": LegalCase(
        "strict", {}, "6S 3S 2S KD QD JD TD 9D KC QC JC TC 9C", "AH 6H 5S", "6S", Reason.OVERTRUMP
    ),
    # The other profiles apply the nepali rule.
    "master-7H-led-must-play-TH": LegalCase("master", {}, ASHMA_1, "7H", "TH", Reason.BEAT),
    "bhoos-AH-2S-must-overtrump": LegalCase("bhoos", {}, TULSI_2, "AH 2S", "JS 5S", Reason.OVERTRUMP),
    "bhoos-lower-trumps-any-card": LegalCase(
        "bhoos", {}, FOURTH_3, "AH 6H 4S", FOURTH_3, Reason.CANNOT_OVERTRUMP
    ),
    # A trump suit other than spades.
    "trump-hearts-void-in-spades-must-trump-hearts": LegalCase(
        "nepali", {"trump": "H"}, "AH 9H 3H KD QD JD TD 9D KC QC JC TC 9C", "7S", "AH 9H 3H", Reason.MUST_TRUMP,
        trump=H,
    ),
    "trump-hearts-spades-are-plain-cards": LegalCase(
        "nepali", {"trump": "H"}, "AS 5S AH 9H 3H QD JD TD 9D KC QC JC TC", "7D 2S", "QD JD TD 9D", Reason.BEAT,
        trump=H,
    ),
    "trump-clubs-overtrump-with-clubs": LegalCase(
        "nepali", {"trump": "C"}, "AS KS QS JS TS 9S 8S 7S 6S KC 5C 3C 2C", "AH 4C", "KC 5C", Reason.OVERTRUMP,
        trump=C,
    ),
    "trump-diamonds-trumped-led-suit-any": LegalCase(
        "nepali", {"trump": "D"}, ASHMA_1, "7H 2D", "TH 4H", Reason.FOLLOW_TRUMPED, trump=D,
    ),
}


def _rules(case: LegalCase) -> Rules:
    return Rules.profile(case.profile, **case.switches)


@pytest.mark.parametrize("case", list(LEGAL_CASES.values()), ids=list(LEGAL_CASES))
def test_legal_cards(case: LegalCase) -> None:
    rules = _rules(case)
    assert int(rules.trump) == case.trump
    legal, reason = legal_with_reason(rules, mask(case.hand), indices(case.trick), case.trump, case.first_trick)
    assert str(Hand(legal)) == str(Hand.parse(case.legal))
    assert reason is case.reason
    assert legal & ~mask(case.hand) == 0


def test_the_table_covers_every_reason() -> None:
    assert {case.reason for case in LEGAL_CASES.values()} == set(Reason)


@pytest.mark.parametrize("case", list(LEGAL_CASES.values()), ids=list(LEGAL_CASES))
def test_every_reason_explains_itself(case: LegalCase) -> None:
    rules = _rules(case)
    trick = indices(case.trick)
    legal, reason = legal_with_reason(rules, mask(case.hand), trick, case.trump, case.first_trick)
    sentence = explain(reason, mask(case.hand), trick, case.trump, legal)
    assert sentence.strip()
    assert "\n" not in sentence
    if trick:
        assert case.trick.split()[0] in sentence  # the led card is named
    else:
        assert "lead" in sentence


@pytest.mark.parametrize(
    ("hand", "trick", "expected"),
    [
        pytest.param(ASHMA_1, "7H", "7H was led and you hold TH, which beats the winning 7H: you must play TH",
                     id="seed-001-7H-TH"),
        pytest.param(TULSI_1, "7H TH", "7H was led and you hold QH, which beats the winning TH: you must play QH",
                     id="seed-001-7H-TH-QH"),
        pytest.param(
            "KS 6S KH JH 8H 2H 9D 5D 2D JC 8C 7C 2C", "7H",
            "7H was led and you hold KH, JH and 8H, which beat the winning 7H: you must play one of them",
            id="several-beaters",
        ),
        pytest.param(
            TULSI_2, "AH 2S",
            "AH was led, you have no hearts and 2S is winning: you must overtrump with one of JS and 5S",
            id="overtrump",
        ),
        pytest.param(
            YOU_1, "7H TH QH",
            "7H was led and you have no hearts: you must trump with one of your spades",
            id="must-trump",
        ),
    ],
)
def test_explanation_text(hand: str, trick: str, expected: str) -> None:
    rules = Rules.profile("nepali")
    legal, reason = legal_with_reason(rules, mask(hand), indices(trick), S, False)
    assert explain(reason, mask(hand), indices(trick), S, legal) == expected


# --- trick winner --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trick", "trump", "winner"),
    [
        pytest.param("7H TH QH 3S", S, 3, id="seed-001-3S-wins"),
        pytest.param("AH 2S JS 7D", S, 2, id="seed-001-overtrump-wins"),
        pytest.param("AH 6H 4S 2S", S, 2, id="seed-003-4S-captures"),
        pytest.param("7H AD 8H 2C", S, 2, id="offsuit-ace-does-not-win"),
        pytest.param("2C AH KD QS", S, 3, id="any-spade-beats-aces"),
        pytest.param("KS AS 2S QS", S, 1, id="trumps-led"),
        pytest.param("5D 9D 2D AD", S, 3, id="no-trump-highest-of-led"),
        pytest.param("AS 2H KS 3H", H, 3, id="trump-hearts-highest-heart"),
        pytest.param("AS 2H KS 3H", S, 0, id="same-trick-trump-spades"),
        pytest.param("5D 9D 2C AD", C, 2, id="trump-clubs-2C"),
        pytest.param("AH KH", D, 0, id="partial-trick"),
        pytest.param("5D", S, 0, id="one-card"),
    ],
)
def test_trick_winner(trick: str, trump: int, winner: int) -> None:
    assert trick_winner(indices(trick), trump) == winner


# --- the rules value -----------------------------------------------------------------------------


PROFILE_TABLE = {
    # name: (min_call, max_call, must_beat, must_trump, lower_trump, first_lead_no_trump, scoring, rounds)
    "nepali": (1, 13, True, True, LowerTrump.ANY, False, Scoring.STANDARD, 5),
    "master": (1, 13, True, True, LowerTrump.ANY, False, Scoring.STANDARD, 5),
    "bhoos": (1, 8, True, True, LowerTrump.ANY, False, Scoring.STANDARD, 5),
    "pagat": (2, 13, False, True, LowerTrump.ANY, False, Scoring.PAGAT, 5),
    "strict": (2, 13, True, True, LowerTrump.TRUMP, True, Scoring.STANDARD, 5),
    "dy": (2, 13, True, False, LowerTrump.ANY, True, Scoring.DY, 10),
}


def test_the_six_profiles() -> None:
    assert list(PROFILES) == ["nepali", "master", "bhoos", "pagat", "strict", "dy"]
    assert Rules.profile() == PROFILES["nepali"] == Rules()


@pytest.mark.parametrize("name", list(PROFILE_TABLE))
def test_profile_values_follow_rules_md(name: str) -> None:
    rules = Rules.profile(name)
    assert rules.profile_name == name
    values = (
        rules.min_call, rules.max_call, rules.must_beat, rules.must_trump, rules.lower_trump,
        rules.first_lead_no_trump, rules.scoring, rules.rounds,
    )
    assert values == PROFILE_TABLE[name]
    assert rules.call_range == range(rules.min_call, rules.max_call + 1)
    # The house rules are off unless the profile says otherwise.
    assert rules.penalty is Penalty.WHOLE
    assert rules.overtrick == 1
    assert rules.pagat_bonus == 13
    assert rules.redeal_below == 0
    assert rules.exact8_wins is False
    assert rules.trump_mode is TrumpMode.FIXED
    assert rules.trump is Suit.SPADES
    assert rules.draw_seating is (name == "master")
    assert rules.redeal_no_trump is (name == "dy")


@pytest.mark.parametrize(
    ("switches", "expected"),
    [
        pytest.param({"min_call": "2"}, {"min_call": 2}, id="int-text"),
        pytest.param({"max_call": 8, "overtrick": "0"}, {"max_call": 8, "overtrick": 0}, id="pagat-cap-variation"),
        pytest.param({"must_beat": "off"}, {"must_beat": False}, id="off"),
        pytest.param({"must_beat": "no"}, {"must_beat": False}, id="no"),
        pytest.param({"must_beat": "0"}, {"must_beat": False}, id="zero"),
        pytest.param({"exact8_wins": "on"}, {"exact8_wins": True}, id="on"),
        pytest.param({"exact8_wins": "Yes"}, {"exact8_wins": True}, id="Yes"),
        pytest.param({"redeal_no_trump": "true"}, {"redeal_no_trump": True}, id="true"),
        pytest.param({"first_lead_no_trump": True}, {"first_lead_no_trump": True}, id="bool"),
        pytest.param({"lower_trump": "trump"}, {"lower_trump": LowerTrump.TRUMP}, id="lower-trump-text"),
        pytest.param({"lower_trump": LowerTrump.TRUMP}, {"lower_trump": LowerTrump.TRUMP}, id="lower-trump-enum"),
        pytest.param({"penalty": "SHORTFALL"}, {"penalty": Penalty.SHORTFALL}, id="penalty-upper"),
        pytest.param({"trump": "h"}, {"trump": Suit.HEARTS}, id="trump-letter"),
        pytest.param({"trump": "♦"}, {"trump": Suit.DIAMONDS}, id="trump-symbol"),
        pytest.param({"trump": Suit.CLUBS}, {"trump": Suit.CLUBS}, id="trump-enum"),
        pytest.param({"trump_mode": "last_card"}, {"trump_mode": TrumpMode.LAST_CARD}, id="trump-mode"),
        pytest.param({"redeal_below": "10"}, {"redeal_below": 10}, id="redeal-below"),
        pytest.param({"pagat_bonus": 16}, {"pagat_bonus": 16}, id="pagat-bonus-16"),
        pytest.param({"rounds": " 7 "}, {"rounds": 7}, id="rounds-spaces"),
        pytest.param({"scoring": "dy"}, {"scoring": Scoring.DY}, id="scoring"),
    ],
)
def test_switches_accept_typed_and_text_values(switches: dict[str, object], expected: dict[str, object]) -> None:
    rules = Rules.profile("nepali").with_switches(switches)
    for key, value in expected.items():
        assert getattr(rules, key) == value
    assert rules.profile_name == "nepali"
    assert Rules.profile("nepali", **switches) == rules


def test_with_text_switches() -> None:
    rules = Rules.profile("pagat").with_text_switches(["min_call=3", " must_trump = off ", "pagat_bonus=16"])
    assert (rules.min_call, rules.must_trump, rules.pagat_bonus) == (3, False, 16)
    assert rules.profile_name == "pagat"
    assert rules.changed_switches() == {"min_call": 3, "must_trump": False, "pagat_bonus": 16}


def test_with_switches_returns_a_copy() -> None:
    base = Rules.profile("nepali")
    changed = base.with_switches({"min_call": 2})
    assert base.min_call == 1
    assert changed.min_call == 2
    assert PROFILES["nepali"].min_call == 1


@pytest.mark.parametrize(
    ("make", "words"),
    [
        pytest.param(lambda: Rules.profile("nepal"), ["nepal", "nepali", "master", "bhoos", "pagat", "strict", "dy"],
                     id="unknown-profile"),
        pytest.param(lambda: Rules.profile("nepali", must_follow=True), ["must_follow", *SWITCHES],
                     id="unknown-switch"),
        pytest.param(lambda: Rules.profile("nepali").with_text_switches(["must_follow=on"]), ["must_follow", *SWITCHES],
                     id="unknown-text-switch"),
        pytest.param(lambda: Rules.profile("nepali", must_beat="maybe"), ["must_beat", "on", "off"], id="bad-bool"),
        pytest.param(lambda: Rules.profile("nepali", must_beat=2), ["must_beat", "on", "off"], id="bool-from-2"),
        pytest.param(lambda: Rules.profile("nepali", min_call="two"), ["min_call", "whole number"], id="bad-int"),
        pytest.param(lambda: Rules.profile("nepali", min_call=True), ["min_call", "whole number"], id="int-from-bool"),
        pytest.param(lambda: Rules.profile("nepali", min_call=0), ["min_call", "1", "13", "zero"], id="min-call-0"),
        pytest.param(lambda: Rules.profile("nepali", max_call=14), ["max_call", "13"], id="max-call-14"),
        pytest.param(lambda: Rules.profile("nepali", min_call=5, max_call=4), ["max_call", "min_call"],
                     id="min-above-max"),
        pytest.param(lambda: Rules.profile("strict", max_call=1), ["max_call", "min_call (2)"],
                     id="max-below-profile-min"),
        pytest.param(lambda: Rules.profile("nepali", exact8_wins=True, max_call=7), ["exact8_wins", "8"],
                     id="exact8-with-max-7"),
        pytest.param(lambda: Rules.profile("bhoos", exact8_wins="on", min_call=9, max_call=13), ["exact8_wins"],
                     id="exact8-with-min-9"),
        pytest.param(lambda: Rules.profile("pagat", penalty="shortfall"), ["shortfall", "pagat"],
                     id="shortfall-with-pagat"),
        pytest.param(lambda: Rules.profile("dy", penalty="shortfall"), ["shortfall", "dy"], id="shortfall-with-dy"),
        pytest.param(lambda: Rules.profile("dy", lower_trump="trump"), ["lower_trump", "must_trump"],
                     id="lower-trump-without-must-trump-dy"),
        pytest.param(lambda: Rules.profile("strict", must_trump="off"), ["lower_trump", "must_trump"],
                     id="strict-without-must-trump"),
        pytest.param(lambda: Rules.profile("nepali", redeal_below=53), ["redeal_below", "52"],
                     id="redeal-below-53"),
        pytest.param(lambda: Rules.profile("bhoos", redeal_below=33), ["redeal_below", "32"],
                     id="redeal-below-33-bhoos"),
        pytest.param(lambda: Rules.profile("nepali", redeal_below=-1), ["redeal_below"], id="redeal-below-negative"),
        pytest.param(lambda: Rules.profile("nepali", scoring="bridge"), ["scoring", "standard", "pagat", "dy"],
                     id="bad-scoring"),
        pytest.param(lambda: Rules.profile("nepali", lower_trump="none"), ["lower_trump", "any", "trump"],
                     id="bad-lower-trump"),
        pytest.param(lambda: Rules.profile("nepali", trump="X"), ["trump", "S, H, D, C"], id="bad-trump"),
        pytest.param(lambda: Rules.profile("nepali", overtrick=2), ["overtrick", "1", "0"], id="overtrick-2"),
        pytest.param(lambda: Rules.profile("pagat", pagat_bonus=14), ["pagat_bonus", "13", "16"], id="bonus-14"),
        pytest.param(lambda: Rules.profile("nepali", rounds=0), ["rounds", "1", "100"], id="rounds-0"),
        pytest.param(lambda: Rules.profile("nepali").with_text_switches(["min_call"]), ["key=value"],
                     id="text-without-equals"),
        pytest.param(lambda: Rules.profile("nepali").with_text_switches(["=2"]), ["key=value"], id="text-without-key"),
    ],
)
def test_rules_errors_name_the_valid_choices(make: Any, words: list[str]) -> None:
    with pytest.raises(RulesError) as info:
        make()
    message = str(info.value)
    for word in words:
        assert word in message
    assert isinstance(info.value, ValueError)


def test_rules_are_immutable() -> None:
    rules = Rules.profile("nepali")
    with pytest.raises(AttributeError):
        rules.min_call = 2  # type: ignore[misc]


ROUND_TRIP_CASES = {
    **{name: (name, {}) for name in PROFILES},
    "nepali-house-rules": ("nepali", {"min_call": 2, "penalty": "shortfall", "redeal_below": 10,
                                      "exact8_wins": True, "redeal_no_trump": True}),
    "pagat-capped": ("pagat", {"max_call": 8, "overtrick": 0, "pagat_bonus": 16, "rounds": 10}),
    "strict-trump-hearts": ("strict", {"trump": "H"}),
    "dy-last-card": ("dy", {"trump_mode": "last_card"}),
    "bhoos-no-must-beat": ("bhoos", {"must_beat": False, "first_lead_no_trump": True}),
    "master-lower-trump": ("master", {"lower_trump": "trump", "draw_seating": False}),
}


@pytest.mark.parametrize(("name", "switches"), list(ROUND_TRIP_CASES.values()), ids=list(ROUND_TRIP_CASES))
def test_to_dict_from_dict_round_trip(name: str, switches: dict[str, object]) -> None:
    rules = Rules.profile(name, **switches)
    data = rules.to_dict()
    assert data["profile"] == name
    assert set(data) == {"profile", *SWITCHES}
    text = json.dumps(data)  # JSON-ready: enums are text
    back = Rules.from_dict(json.loads(text))
    assert back == rules
    assert back.profile_name == name
    assert back.to_dict() == data


def test_a_list_in_words_is_written_as_every_message_writes_it() -> None:
    from arena.core.words import listed

    assert [listed(items) for items in ([], ["AS"], ["AS", "KS"], ["AS", "KS", "QS"])] == [
        "", "AS", "AS and KS", "AS, KS and QS"]
