"""The example bots of the README and docs/bots.md do what their docstrings say."""

from __future__ import annotations

from typing import Any

import pytest

from arena.core.cards import Card, Hand
from arena.core.rules import Rules
from tests.helpers.docs import ROOT, fences


def example(path: str, heading: str) -> dict[str, Any]:
    """Runs the first Python block after ``heading`` in ``path`` (not as __main__) and returns its names."""
    text = (ROOT / path).read_text(encoding="utf-8")
    line = text[:text.index(heading)].count("\n") + 1
    code = next(f.text for f in fences(ROOT / path) if f.language == "python" and f.line > line)
    names: dict[str, Any] = {"__name__": "example"}
    exec(compile(code, path, "exec"), names)
    return names


class View:
    """The attributes the examples read."""

    def __init__(self, legal: str) -> None:
        self.legal = Hand.parse(legal)
        self.hand = self.legal
        self.legal_calls = list(range(1, 14))
        self.rules = Rules.profile()


@pytest.mark.parametrize(("path", "heading"), [("README.md", "## Writing a bot"), ("docs/bots.md", "# ")])
def test_the_lowest_bot_plays_its_lowest_card_and_calls_the_lowest_call(path: str, heading: str) -> None:
    bot = example(path, heading)["LowestBot"]()
    # The lowest card is a diamond: neither first nor last when the hand is listed by suit.
    assert bot.play(View("AS KS TH 2D 9C 8C")) is Card.parse("2D")
    assert bot.call(View("AS")) == 1
