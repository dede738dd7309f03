"""What an in-process bot is handed holds no other seat's unplayed cards, however hard it looks.

A :class:`SeatView` is walked the way a curious bot could walk it: every slot and ``__dict__``
entry, private ones included, closures and defaults of functions, bound methods, class attributes
of the project's classes, and whatever :func:`gc.get_referents` reports. Nothing reached may be
the game, its round or its deal source, a mutable object the game holds (a bot could change the
game through it), or anything naming a card another seat still holds: a card, a hand, a mask, a
list of card indices, a text. The walker is itself tested on leaks made on purpose. The fast path
and a real table with in-process bots are checked the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import functools
import gc
import random
import re
import types
from collections.abc import Iterator
from typing import Any

import pytest

from arena.core.cards import FULL_DECK, Card, Hand
from arena.core.dealing import Deal, seeded_deals
from arena.core.game import Game, Phase, Round, RoundResult
from arena.core.rules import Rules
from arena.core.views import SeatView, View
from arena.players.base import TableEvent
from arena.players.fast import play_fast
from arena.players.local import LocalPlayer
from arena.players.table import TableSettings, play_game

CARD_TEXT = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][SHDC](?![A-Za-z0-9])")
_CLASS_NAMES_SKIPPED = {"__doc__", "__module__", "__qualname__", "__annotations__", "__match_args__"}
_MUTABLE = (list, dict, set, bytearray)


def reachable(root: object) -> Iterator[object]:
    """Every object a bot can reach from ``root`` without going through a module's globals."""
    seen: set[int] = set()
    alive: list[object] = []  # keeps what was met alive, so an id is never reused during the walk
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        alive.append(obj)
        yield obj
        if isinstance(obj, types.ModuleType):
            continue  # the way to everything in the process, not something a view holds
        if isinstance(obj, type):
            if obj.__module__.startswith(("arena", "tests", "sample_bots")):
                stack.extend(v for k, v in vars(obj).items() if k not in _CLASS_NAMES_SKIPPED)
            continue
        if isinstance(obj, types.FunctionType):
            for cell in obj.__closure__ or ():
                with contextlib.suppress(ValueError):  # an empty cell
                    stack.append(cell.cell_contents)
            stack.extend(obj.__defaults__ or ())
            stack.extend((obj.__kwdefaults__ or {}).values())
            continue
        if isinstance(obj, property):
            stack.extend(f for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
            continue
        if isinstance(obj, classmethod | staticmethod):
            stack.append(obj.__func__)  # not its copy of the docstring, whose examples name cards
            continue
        if isinstance(obj, str | bytes | int | float):
            continue
        for klass in type(obj).__mro__:
            for name in getattr(klass, "__slots__", ()):
                with contextlib.suppress(AttributeError):  # an empty slot
                    stack.append(getattr(obj, name))
        if hasattr(obj, "__dict__"):
            stack.extend(vars(obj).values())
        stack.extend(gc.get_referents(obj))


class Secrets:
    """What one seat may not see at one moment of a game."""

    def __init__(self, game: Game, seat: int) -> None:
        rnd = game.round
        self.seat = seat
        self.mask = 0
        for other in range(4):
            if other != seat:
                self.mask |= rnd.hands[other]
        self.objects = {id(game), id(rnd), id(game.deals)}
        # Mutable things the game holds: reaching one would let a bot change the game. The rules are
        # public, frozen, and shared by every table on purpose, so what hangs off them is left out.
        public = _public(game.rules)
        self.mutable = {
            id(o) for o in _instance_data(game) if isinstance(o, _MUTABLE) and id(o) not in public
        }

    def leak(self, obj: object) -> str | None:
        """What ``obj`` gives away, or ``None``."""
        if isinstance(obj, Game | Round | Deal | RoundResult) or id(obj) in self.objects:
            return f"a {type(obj).__name__} of the game"
        if id(obj) in self.mutable:
            return f"a {type(obj).__name__} the game itself holds: {obj!r:.80}"
        if isinstance(obj, Card):
            return f"the card {obj}" if self.mask >> obj.index & 1 else None
        if isinstance(obj, Hand):
            return f"the hand {obj}" if obj.mask & self.mask else None
        if isinstance(obj, bool):
            return None
        if isinstance(obj, int):
            # An int the size of a mask (past the spades) with a hidden card in it. Smaller ones are
            # seats, calls, scores and card indices, which name no hand.
            if 1 << 13 <= obj <= FULL_DECK and obj & self.mask:
                return f"the mask {obj:#x}, holding {Hand.of_mask(obj & self.mask)}"
            return None
        if isinstance(obj, str):
            hidden = [t for t in CARD_TEXT.findall(obj) if self.mask >> Card.parse(t).index & 1]
            return f"the text {obj!r:.80}, naming {' '.join(hidden)}" if hidden else None
        if isinstance(obj, tuple | list) and len(obj) >= 5:
            indices = [i for i in obj if type(i) is int and 0 <= i < 52]
            if len(indices) == len(obj) and any(self.mask >> i & 1 for i in indices):
                return f"the card indices {obj!r:.80}"
        return None

    def leaks(self, root: object) -> list[str]:
        return [found for obj in reachable(root) if (found := self.leak(obj)) is not None]


@functools.cache
def _public(rules: Rules) -> frozenset[int]:
    """The ids of what hangs off the rules (cached: the rules of a game never change)."""
    return frozenset(id(o) for o in reachable(rules))


def _instance_data(root: object) -> Iterator[object]:
    """What ``root`` holds as data: :func:`reachable` without entering classes."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type | types.ModuleType | types.FunctionType | str | int | enum.Enum):
            continue  # enum members are shared constants, not the game's data
        seen.add(id(obj))
        yield obj
        if hasattr(obj, "__dict__"):
            stack.extend(vars(obj).values())
        for klass in type(obj).__mro__:
            for name in getattr(klass, "__slots__", ()):
                with contextlib.suppress(AttributeError):
                    stack.append(getattr(obj, name))
        stack.extend(gc.get_referents(obj))


def step(game: Game, rng: random.Random) -> None:
    if game.phase is Phase.CALLING:
        game.call(rng.choice(game.legal_calls()))
    else:
        legal = game.legal_mask()
        game.play_index(rng.choice([i for i in range(52) if legal >> i & 1]))


# -- the walker finds what it should -------------------------------------------------------------


def _game_mid_round() -> Game:
    game = Game(Rules.profile("nepali"), seeded_deals(5, 1))
    rng = random.Random(5)
    for _ in range(4 + 9):
        step(game, rng)
    return game


class _Holder:
    """A stand-in for a view that keeps something it should not."""

    def __init__(self, kept: object) -> None:
        self.kept = kept


class _SlotHolder:
    __slots__ = ("_kept",)

    def __init__(self, kept: object) -> None:
        self._kept = kept


@pytest.mark.parametrize("make", [
    pytest.param(lambda g: _SlotHolder(g.round), id="private-slot-round"),
    pytest.param(lambda g: _Holder(g), id="dict-game"),
    pytest.param(lambda g: _Holder(lambda: g.round.hands), id="closure"),
    pytest.param(lambda g: _SlotHolder(g.round.hands[1]), id="mask"),
    pytest.param(lambda g: _Holder(str(Hand(g.round.hands[2]))), id="text"),
    pytest.param(lambda g: _Holder(Hand(g.round.hands[3])), id="hand"),
    pytest.param(lambda g: _Holder([i for i in range(52) if g.round.hands[1] >> i & 1]), id="indices"),
    pytest.param(lambda g: _Holder(g.round.played), id="shared-list"),
    pytest.param(lambda g: _Holder(g.deals), id="deal-source"),
    pytest.param(lambda g: _Holder(g.round.tricks_won.__len__), id="bound-method"),
])
def test_the_walker_finds_a_leak_made_on_purpose(make: Any) -> None:
    game = _game_mid_round()
    assert Secrets(game, 0).leaks(make(game))


def test_the_walker_sees_what_the_old_view_kept() -> None:
    """The view of release 0.1.0 kept the round: ``view._round.hands[1]`` was another seat's hand."""
    game = _game_mid_round()

    class OldView:
        __slots__ = ("_game", "_round", "seat")

        def __init__(self, game: Game, seat: int) -> None:
            self._game, self._round, self.seat = game, game.round, seat

    assert any("Round" in leak for leak in Secrets(game, 0).leaks(OldView(game, 0)))


# -- the view ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("profile", "switches", "seed"), [
    ("nepali", {}, 11),
    ("dy", {"rounds": 3}, 12),  # redeals a hand with no trump
    ("nepali", {"redeal_below": 24}, 13),  # random calls total less at times: redeals after the calls
    ("bhoos", {"rounds": 2}, 14),
])
def test_no_view_reaches_another_seats_unplayed_cards(profile: str, switches: dict[str, Any], seed: int) -> None:
    game = Game(Rules.profile(profile, **switches), seeded_deals(seed, 1))
    rng = random.Random(seed)
    checked = 0
    while True:
        for seat in range(4):
            view = game.view(seat)
            assert not hasattr(view, "__dict__")
            leaks = Secrets(game, seat).leaks(view)
            assert not leaks, f"seat {seat}, round {game.round_number}, {len(game.round.played)} played: {leaks[:3]}"
            checked += 1
        if game.over:
            break
        for _ in range(rng.choice((1, 2, 3, 4))):  # a moment every few decisions keeps the test quick
            if not game.over:
                step(game, rng)
    assert checked > 4 * 15 * game.rules.rounds
    assert bool(game.redeals) is bool(game.rules.redeal_below or game.rules.redeal_no_trump)


def test_a_bot_cannot_change_the_game_through_its_view() -> None:
    game = _game_mid_round()
    before = (list(game.round.hands), list(game.round.played), list(game.totals), list(game.round.calls))
    view = game.view(0)
    for name in SeatView.__slots__:
        value = getattr(view, name)
        if isinstance(value, list):
            value.clear()
    assert (list(game.round.hands), list(game.round.played), list(game.totals), list(game.round.calls)) == before
    assert all(not isinstance(getattr(view, name), _MUTABLE) for name in SeatView.__slots__)


def test_the_view_still_answers_every_attribute() -> None:
    game = _game_mid_round()
    rnd = game.round
    view = game.view(rnd.current_seat)
    assert view.hand == Hand(rnd.hands[rnd.current_seat])
    assert view.played.mask == sum(1 << i for i in rnd.played)
    assert view.tricks == tuple(rnd.tricks)
    assert view.trick == tuple(Card(i) for i in rnd.trick)
    assert view.legal.mask == rnd.legal_mask() != 0
    for name in [n for n in dir(View) if not n.startswith("_")]:
        getattr(view, name)  # every attribute a bot may use is there


# -- what in-process bots are handed at a table and on the fast path ----------------------------


class _Walker:
    """A bot that walks every view and event it is handed, as it gets it, and keeps the cards found."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.seen: list[tuple[int, int, set[str], list[str]]] = []
        """(round, cards played in the round, card texts found, forbidden objects found) per thing handed."""
        self.rng = random.Random(seat)

    def _walk(self, root: object, round_number: int, n_played: int) -> None:
        texts: set[str] = set()
        objects: list[str] = []
        for obj in reachable(root):
            if isinstance(obj, Game | Round | Deal | RoundResult):
                objects.append(type(obj).__name__)
            elif isinstance(obj, Card):
                texts.add(str(obj))
            elif isinstance(obj, Hand):
                texts.update(str(c) for c in obj)
            elif isinstance(obj, str):
                texts.update(CARD_TEXT.findall(obj))
            elif type(obj) is int and 1 << 13 <= obj <= FULL_DECK:
                texts.update(str(c) for c in Hand.of_mask(obj))
        self.seen.append((round_number, n_played, texts, objects))

    def call(self, view: View) -> int:
        self._walk(view, view.round_number, len(view.played))
        return self.rng.choice(view.legal_calls)

    def play(self, view: View) -> str:
        self._walk(view, view.round_number, len(view.played))
        return str(self.rng.choice(list(view.legal)))

    def on_event(self, event: TableEvent) -> None:
        self.seen.append((-1, -1, set(), [type(o).__name__ for o in reachable(event)
                                          if isinstance(o, Game | Round | Deal | RoundResult)]))


def test_in_process_bots_at_a_table_are_handed_nothing_hidden() -> None:
    bots = [_Walker(s) for s in range(4)]
    players = [LocalPlayer(bot, f"w{s}") for s, bot in enumerate(bots)]
    rules = Rules.profile("nepali", rounds=2)

    async def main() -> Any:
        try:
            return await play_game(rules, players, seeded_deals(3, 1), table_id="t1", settings=TableSettings())
        finally:
            for player in players:
                await player.close()

    record = asyncio.run(main())
    for seat, bot in enumerate(bots):
        assert len(bot.seen) > 2 * 14
        for round_number, n_played, texts, objects in bot.seen:
            assert not objects, f"seat {seat} was handed {objects}"
            if round_number < 0:
                continue
            result = record.rounds[round_number - 1]
            order = [((t.leader + k) % 4, str(c)) for t in result.tricks for k, c in enumerate(t.cards)]
            hidden = {str(c) for s, hand in enumerate(result.hands) if s != seat for c in hand}
            hidden -= {card for _, card in order[:n_played]}
            assert not texts & hidden, f"seat {seat} round {round_number} at {n_played}: {texts & hidden}"


class _FastSpy:
    """A fast-path bot that keeps every argument it is handed."""

    def __init__(self, seat: int) -> None:
        self.rng = random.Random(seat)
        self.handed: list[tuple[object, ...]] = []

    def call(self, view: View) -> int:
        return 1

    def play(self, view: View) -> str:
        return str(min(view.legal))

    def fast_call(self, *args: object) -> int:
        self.handed.append(args)
        return 2

    def fast_card(self, *args: object) -> int:
        self.handed.append(args)
        legal = args[1]
        assert isinstance(legal, int)
        return (legal & -legal).bit_length() - 1


def test_the_fast_path_hands_bots_only_their_own_cards() -> None:
    bots = [_FastSpy(s) for s in range(4)]
    rules = Rules.profile("nepali", rounds=1)
    record = play_fast(rules, bots, ["a", "b", "c", "d"], seeded_deals(4, 1), table_id="t1", game_id="g",
                       game_number=1, first_dealer=3)
    assert record is not None
    for seat, bot in enumerate(bots):
        own = Hand.of(record.rounds[0].hands[seat]).mask
        assert len(bot.handed) == 1 + 13
        for args in bot.handed:
            assert all(type(a) in (int, range) for a in args), args  # plain values: nothing to walk into
        (_, _, _, hand, _), *cards = bot.handed
        assert hand == own  # fast_call(seat, game, round, hand, calls): the seat's own dealt hand
        assert all(legal & ~own == 0 for _, legal in cards)  # fast_card(seat, legal): some of its own cards
