"""In-process bots for the tournament tests, loaded by path (``tests/helpers/arena_bots.py:Class``).

- ``NoFastRandom``: the sample random bot without its fast path, so every game goes through the
  normal in-process table; it makes exactly the same choices.
- ``SlowRandom``: ``NoFastRandom`` that sleeps ``delay`` seconds (default 1 ms) per decision, so a
  tournament runs long enough to be killed in the middle.
- ``Crasher``: calls like the random bot and raises on every play (a crash fault each time).
- ``Stubborn``: plays a card it holds but may not play whenever it can (illegal_card faults).
- ``Quitter``: the random bot whose process exits (status 3) at its 30th card.
- ``Sleeper``: ``NoFastRandom`` that sleeps ``delay`` seconds (default 0.25) on its ``at``-th
  decision (default the 3rd), past a short deadline.
- ``Frozen``: ``NoFastRandom`` that, from its ``at``-th decision on (default the 2nd), waits for
  ever on a ``threading.Event`` nobody sets (``release`` sets it, to end a test cleanly).
- ``Exiter``: calls like the random bot and calls ``sys.exit(3)`` on every play.
- ``Interrupter``: calls like the random bot and raises ``KeyboardInterrupt`` on every play.
- ``EventCrasher``: ``NoFastRandom`` whose ``on_event`` counts the event, then raises
  (``RuntimeError`` and ``SystemExit`` by turns).
- ``FastExiter``: the random bot (fast path included) whose ``fast_card`` calls ``sys.exit(3)``.
- ``Sluggish``: ``SlowRandom`` at 20 ms per decision while the file named by ``CALLBREAK_SLOW`` exists (a
  ladder's in-process version: it takes no options), so a game lasts seconds while a test needs it to.
- ``TokenTeller``: the random bot that, once per process, appends to the file ``out`` one JSON line
  with its command line (``sys.argv``), its process id and the token in ``CALLBREAK_TOKEN``.

Each is also a command bot: ``python tests/helpers/arena_bots.py CLASS --arena ADDRESS --token T``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from arena.core.cards import Card
from arena.core.views import View
from sample_bots.random_bot import RandomBot


class NoFastRandom(RandomBot):
    """The random bot on the normal table only."""

    fast_call = None  # type: ignore[assignment]
    fast_card = None  # type: ignore[assignment]


class SlowRandom(NoFastRandom):
    """The random bot, slowed down, on the normal table only."""

    def __init__(self, seed: int = 0, delay: float = 0.001) -> None:
        super().__init__(seed)
        self.delay = delay

    def call(self, view: View) -> int:
        time.sleep(self.delay)
        return super().call(view)

    def play(self, view: View) -> Card:
        time.sleep(self.delay)
        return super().play(view)


class Sluggish(SlowRandom):
    """``SlowRandom`` at 20 ms a decision while the file named by ``CALLBREAK_SLOW`` exists, else at full speed."""

    @property
    def delay(self) -> float:
        slow = os.environ.get("CALLBREAK_SLOW")
        return 0.02 if slow and os.path.exists(slow) else 0.0

    @delay.setter
    def delay(self, value: float) -> None:
        """The file says the delay, not the options."""


class Crasher(NoFastRandom):
    """Raises on every play."""

    def play(self, view: View) -> Card:
        raise RuntimeError("crasher always crashes")


class Stubborn(RandomBot):
    """Plays a card it holds but may not play whenever it has one (refused, asked again, refused
    again: a deterministic illegal_card fault), else the random bot's card."""

    fast_call = None  # type: ignore[assignment]
    fast_card = None  # type: ignore[assignment]

    def play(self, view: View) -> Card:
        illegal = [card for card in view.hand.cards() if card not in view.legal]
        return illegal[0] if illegal else super().play(view)


class Quitter(RandomBot):
    """The random bot, until its process exits in the middle of its first game."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.cards = 0

    def play(self, view: View) -> Card:
        self.cards += 1
        if self.cards == 30:
            os._exit(3)
        return super().play(view)


class Sleeper(NoFastRandom):
    """Sleeps ``delay`` seconds on its ``at``-th decision (calls and plays counted together)."""

    def __init__(self, seed: int = 0, delay: float = 0.25, at: int = 3) -> None:
        super().__init__(seed)
        self.delay = delay
        self.at = at
        self.decisions = 0

    def _wait(self) -> None:
        self.decisions += 1
        if self.decisions == self.at:
            time.sleep(self.delay)

    def call(self, view: View) -> int:
        self._wait()
        return super().call(view)

    def play(self, view: View) -> Card:
        self._wait()
        return super().play(view)


class Frozen(NoFastRandom):
    """From its ``at``-th decision on, never answers: it waits on an event nobody sets."""

    def __init__(self, seed: int = 0, at: int = 2) -> None:
        super().__init__(seed)
        self.at = at
        self.decisions = 0
        self.never = threading.Event()

    def release(self) -> None:
        """Lets the stuck call return (tests use it to leave no thread behind)."""
        self.never.set()

    def _wait(self) -> None:
        self.decisions += 1
        if self.decisions >= self.at:
            self.never.wait()

    def call(self, view: View) -> int:
        self._wait()
        return super().call(view)

    def play(self, view: View) -> Card:
        self._wait()
        return super().play(view)


class Exiter(NoFastRandom):
    """Tries to end the whole process on every play."""

    def play(self, view: View) -> Card:
        sys.exit(3)


class Interrupter(NoFastRandom):
    """Raises KeyboardInterrupt on every play, as if someone pressed Ctrl-C inside the bot."""

    def play(self, view: View) -> Card:
        raise KeyboardInterrupt("the bot interrupted itself")


class EventCrasher(NoFastRandom):
    """Follows the game, and its event handler fails every time."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.events = 0

    def on_event(self, event: Any) -> None:
        self.events += 1
        if self.events % 2:
            raise RuntimeError("the event handler is broken")
        raise SystemExit(4)


class FastExiter(RandomBot):
    """The random bot, fast path included, whose fast card choice exits the process."""

    def fast_card(self, seat: int, legal: int) -> int:
        sys.exit(3)


class TokenTeller(RandomBot):
    """The random bot that says, once per process, how it was started and which token it was given."""

    told = False

    def __init__(self, seed: int = 0, out: str = "") -> None:
        super().__init__(seed)
        if out and not TokenTeller.told:
            TokenTeller.told = True
            line = {"argv": sys.argv, "pid": os.getpid(), "token": os.environ.get("CALLBREAK_TOKEN", "")}
            with open(out, "a", encoding="utf-8") as file:
                file.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    from arena.botkit import run

    raise SystemExit(run(globals()[sys.argv.pop(1)]))
