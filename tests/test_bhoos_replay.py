"""Golden replay of a real Bhoos Callbreak engine log under the ``bhoos`` profile.

The log (``tests/data/bhoos-sample-game.json``, described in ``tests/data/README.md``) is one five-round
game of the Bhoos bot contest. Every card in it must be legal, every trick winner and every cumulative
score must follow, and the engine's recorded correction of an invalid move must be a card our rules
refuse too.
"""

from __future__ import annotations

from typing import Any

import pytest

from arena.core.cards import Card, Hand
from arena.core.game import Phase, Round
from arena.core.rules import Rules, legal_with_reason
from arena.errors import IllegalPlay
from tests.helpers.bhoos import engine_log


def card(text: str) -> Card:
    """A log card: rank then suit, with the ace written ``1``."""
    return Card.parse(("A" + text[1:]) if text.startswith("1") else text)


def tenths(points: float) -> int:
    return round(points * 10)


@pytest.fixture(scope="module")
def log() -> dict[str, Any]:
    return engine_log()


def test_the_log_is_a_five_round_game(log: dict[str, Any]) -> None:
    assert len(log["players"]) == 4
    assert len(log["rounds"]) == 5
    for rnd in log["rounds"]:
        hands = [Hand.of(card(c) for c in cards) for cards in rnd["cards"]]
        assert [len(h) for h in hands] == [13] * 4
        assert hands[0].mask | hands[1].mask | hands[2].mask | hands[3].mask == (1 << 52) - 1


def test_card_conversion() -> None:
    assert str(card("1S")) == "AS"
    assert str(card("1D")) == "AD"
    assert str(card("TC")) == "TC"
    assert str(card("2H")) == "2H"


def _round(rules: Rules, data: dict[str, Any], number: int) -> Round:
    masks = [Hand.of(card(c) for c in cards).mask for cards in data["cards"]]
    return Round(rules, masks, data["dealer"], 0, number)


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5], ids=lambda n: f"round-{n}")
def test_replay_round(log: dict[str, Any], number: int) -> None:
    rules = Rules.profile("bhoos")
    data = log["rounds"][number - 1]
    rnd = _round(rules, data, number)
    dealer = data["dealer"]
    for k in range(4):
        seat = (dealer + 1 + k) % 4
        assert rnd.current_seat == seat
        rnd.call(data["bids"][seat])
    assert rnd.phase is Phase.PLAYING
    assert rnd.calls == data["bids"]
    for t, action in enumerate(data["actions"]):
        assert rnd.leader == action["started"], f"trick {t}"
        assert rnd.current_seat == action["started"], f"trick {t}"
        for text in action["cards"]:
            rnd.play(card(text))  # raises IllegalPlay for an illegal card
        assert rnd.winners[-1] == action["ended"], f"trick {t}"
    assert rnd.phase is Phase.OVER
    assert sum(rnd.tricks_won) == 13


def test_cumulative_scores(log: dict[str, Any]) -> None:
    rules = Rules.profile("bhoos")
    totals = [0, 0, 0, 0]
    for number, data in enumerate(log["rounds"], start=1):
        rnd = _round(rules, data, number)
        bids = data["bids"]
        cards = iter([card(c).index for action in data["actions"] for c in action["cards"]])
        rnd.playout(lambda seat, r, bids=bids: bids[seat], lambda seat, legal, cards=cards: next(cards))
        assert rnd.scores is not None
        for seat in range(4):
            totals[seat] += rnd.scores[seat]
        assert totals == [tenths(x) for x in data["scores"]], f"round {number}"
    assert totals == [131, 156, 74, 54]


def _errors(log: dict[str, Any]) -> list[tuple[int, int, int, dict[str, Any]]]:
    found = []
    for number, data in enumerate(log["rounds"], start=1):
        for trick, entries in (data.get("errors") or {}).items():
            for entry in entries:
                found.append((number, int(trick), int(entry["turn"]), entry))
    return found


def test_the_log_records_one_correction(log: dict[str, Any]) -> None:
    assert [(n, t, turn, e["type"], e["correction"]) for n, t, turn, e in _errors(log)] == [
        (5, 6, 3, "INVALID_MOVE", {"prev": "8D", "next": "KD"})
    ]


def test_corrected_moves_are_illegal_under_bhoos(log: dict[str, Any]) -> None:
    rules = Rules.profile("bhoos")
    for number, trick, turn, entry in _errors(log):
        data = log["rounds"][number - 1]
        rnd = _round(rules, data, number)
        for k in range(4):
            rnd.call(data["bids"][(data["dealer"] + 1 + k) % 4])
        for action in data["actions"][:trick]:
            for text in action["cards"]:
                rnd.play(card(text))
        action = data["actions"][trick]
        for text in action["cards"][:turn]:
            rnd.play(card(text))
        seat = (action["started"] + turn) % 4
        assert rnd.current_seat == seat
        prev, new = card(entry["correction"]["prev"]), card(entry["correction"]["next"])
        assert action["cards"][turn] == entry["correction"]["next"]  # the log holds the corrected card
        assert prev in Hand(rnd.hands[seat])  # a card held, but not allowed
        legal, _ = legal_with_reason(rules, rnd.hands[seat], rnd.trick, 0, not rnd.winners)
        assert not legal >> prev.index & 1
        assert legal >> new.index & 1
        played_before = list(rnd.played)
        with pytest.raises(IllegalPlay) as info:
            rnd.play(prev)
        assert str(info.value).startswith(f"{prev} is not allowed: ")
        assert f"you must play {new}" in str(info.value)
        assert rnd.played == played_before
        rnd.play(new)
