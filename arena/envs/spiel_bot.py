"""Any OpenSpiel bot as an arena bot: :func:`openspiel_bot`, and OpenSpiel's ISMCTS so seated (:data:`ISMCTS`).

    import numpy as np
    from open_spiel.python.algorithms import mcts
    from arena.envs.spiel_bot import openspiel_bot

    def make(game, seat, seed, simulations=50):
        rng = np.random.RandomState(seed)
        return mcts.MCTSBot(game, 2.0, simulations, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)

    DeterminisedMCTS = openspiel_bot(make, name="mcts", version="1")

``DeterminisedMCTS`` is a :class:`~arena.botkit.Bot`: ``python = "my_bots.py:DeterminisedMCTS"`` seats it
in a tournament (``options`` are the keyword arguments of ``make`` after the first three), and
``arena.botkit.run(DeterminisedMCTS)`` connects it to an arena over gRPC (the ISMCTS sample bot is such a
file).

At each decision the bot turns its view into a state of the OpenSpiel game ``python_callbreak``
(:mod:`arena.envs.openspiel`) that its seat cannot tell from the table: a game that starts at the deal
of the round in play with the view's dealer and totals (``start_round``, ``start_dealer``,
``start_totals``), the seat's own cards dealt to it, the cards it has not seen dealt to the others at
random under what the play shows (:func:`arena.envs.unseen.deal_seen`), and the round's calls and cards
so far. It then asks a bot made for that game by ``make(game, seat, seed, **options)`` for its
``step(state)``. A search that samples worlds itself (ISMCTS, by ``resample_from_infostate``) treats the
dealt world as one of them; one that searches the state it is handed (``MCTSBot``) searches that world,
a determinisation; a policy reads the observation tensor, which is exactly the one of the real table.

``horizon`` is where the game ends: ``"round"`` (the default) with the round in play, so a search plays
out to the round's end, as the points it can still change are this round's (``end_round``); ``"game"``
with the game's last round. The game's rewards are ``terminal`` (what ``MCTSBot`` needs) unless
``rewards="round"`` is asked for.

Randomness. The world dealt and the ``seed`` handed to ``make`` come from one generator keyed by the
bot's own seed and the position: the view's ``seat_seed`` where the arena gives one (the same for the
same cards in every rotation of a deal set, so two versions with the same seed share their draws), and
where it gives none (0) the deal set, round and seat, as the Monte Carlo sample bot does; then the
seat's cards and the cards played. So the same position gets the same decision, in-process or over the
network. A decision with one legal action is answered without a search.
"""

from __future__ import annotations

import functools
import inspect
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts as _ismcts
from open_spiel.python.algorithms import mcts

from arena.core.cards import CARDS, Card
from arena.core.rules import Rules
from arena.core.turns import call_order
from arena.core.views import View
from arena.envs.layout import CALL_BASE, action_text
from arena.envs.openspiel import GAME_NAME, CallbreakState
from arena.envs.spiel_table import deck_of
from arena.envs.unseen import Seen, deal_seen
from arena.errors import ArenaError
from arena.kit.bot import Bot

__all__ = ["HORIZONS", "ISMCTS", "Maker", "SpielBot", "ismcts", "openspiel_bot", "spiel_game", "spiel_state"]

Maker = Callable[..., Any]
"""``make(game, seat, seed, **options)``: an OpenSpiel bot (anything with ``step(state)``) for ``game``,
to play ``seat``, its randomness drawn from ``seed``."""
HORIZONS = ("round", "game")
"""Where the game a bot searches ends: with the round in play, or with the game's last round."""
TRIES = 1000
"""Deals of the unseen cards tried before the bot gives up on a world (the play's limits are never that tight
in practice; see :func:`arena.envs.unseen.deal_seen`)."""


@functools.lru_cache(maxsize=256)
def _game(profile: str, switches: str, params: tuple[tuple[str, Any], ...]) -> Any:
    return pyspiel.load_game(GAME_NAME, {"profile": profile, "switches": switches, **dict(params)})


def spiel_game(view: View, horizon: str = "round", rewards: str = "terminal") -> Any:
    """The ``python_callbreak`` game of ``view``'s rules that starts at the deal of the view's round, with its
    dealer and totals, and ends as ``horizon`` says."""
    if horizon not in HORIZONS:
        raise ArenaError(f"horizon must be one of {', '.join(HORIZONS)}, not {horizon!r}")
    rules: Rules = view.rules
    switches = " ".join(f"{key}:{value}" for key, value in rules.changed_switches().items() if key != "profile")
    params = (("rewards", rewards), ("start_round", view.round_number), ("start_dealer", view.dealer),
              ("start_totals", " ".join(str(total) for total in view.totals)),
              ("end_round", view.round_number if horizon == "round" else 0))
    return _game(rules.profile_name, switches, params)


def spiel_state(view: View, game: Any, rng: random.Random) -> CallbreakState | None:
    """A state of ``game`` (:func:`spiel_game` of the view) that the view's seat cannot tell from the table: its
    own cards, the unseen cards dealt at random under what the play shows, and the calls and cards so far.
    ``None`` when no such deal was found in :data:`TRIES` tries."""
    seen = Seen.of_view(view)
    world = deal_seen(seen, rng, TRIES)
    if world is None:
        return None
    state: CallbreakState = game.new_initial_state()
    for card in deck_of(world.initial, seen.dealer, seen.trump, seen.rules, rng):
        state.apply_action(card)
    for caller in call_order(seen.dealer):
        call = seen.calls[caller]
        if call is None:
            break
        state.apply_action(CALL_BASE + call)
    for card in seen.played:
        state.apply_action(card)
    return state


class SpielBot(Bot):
    """The base of the classes :func:`openspiel_bot` makes: made with a seed and the options of ``make``, as a
    tournament makes a bot."""

    make: Maker
    horizon = "round"
    rewards = "terminal"

    def __init__(self, seed: int = 0, **options: Any) -> None:
        try:
            inspect.signature(type(self).make).bind(None, 0, 0, **options)
        except TypeError as err:
            raise ArenaError(f"{self.name}'s options are the keyword arguments of its make function: {err}") from None
        self.seed = seed
        self.options = options

    def call(self, view: View) -> int:
        return self.decide(view) - CALL_BASE

    def play(self, view: View) -> Card | str:
        action = self.decide(view)
        return CARDS[action] if 0 <= action < CALL_BASE else action_text(action)

    def decide(self, view: View) -> int:
        """The action the OpenSpiel bot takes in a world the seat cannot tell from the table."""
        if None in view.calls:
            legal = [CALL_BASE + call for call in view.legal_calls]
        else:
            mask = view.legal_mask
            legal = [card for card in range(52) if mask >> card & 1]
        if len(legal) == 1:
            return legal[0]
        rng = random.Random(self._key(view))
        game = spiel_game(view, self.horizon, self.rewards)
        state = spiel_state(view, game, rng)
        if state is None:
            return legal[0]  # no world fits the play (never seen): the lowest legal action, as a policy would
        bot = type(self).make(game, view.seat, rng.getrandbits(31), **self.options)
        return int(bot.step(state))

    def _key(self, view: View) -> int:
        """The generator's key: the bot's seed and the position (see the module docstring)."""
        seat_seed = view.seat_seed
        if seat_seed:
            key = self.seed << 64 | seat_seed
        else:
            key = (self.seed << 32 | view.game_number) << 16 | view.round_number << 2 | view.seat
        played = view.played.mask
        calls = sum(1 for call in view.calls if call is not None)
        return ((key << 52 | view.hand_mask) << 52 | played) << 8 | len(view.trick) << 4 | calls


def openspiel_bot(make: Maker, name: str = "openspiel", version: str = "0", *, horizon: str = "round",
                  rewards: str = "terminal") -> type[SpielBot]:
    """A bot class that asks a bot made by ``make(game, seat, seed, **options)`` at every decision (see the
    module docstring); ``name`` and ``version`` are the bot's own (an arena records the version with every game)."""
    if horizon not in HORIZONS:
        raise ArenaError(f"horizon must be one of {', '.join(HORIZONS)}, not {horizon!r}")
    maker = make

    class Made(SpielBot):
        __doc__ = f"The OpenSpiel bot of {getattr(maker, '__qualname__', repr(maker))} as an arena bot."

        make = staticmethod(maker)

    Made.name = name
    Made.version = version
    Made.horizon = horizon
    Made.rewards = rewards
    Made.__qualname__ = Made.__name__ = f"SpielBot[{name}]"
    return Made


def ismcts(game: Any, seat: int, seed: int, simulations: int = 20, uct_c: float = 2.0, rollouts: int = 1) -> Any:
    """OpenSpiel's Python ISMCTS (``open_spiel.python.algorithms.ismcts.ISMCTSBot``) with random rollouts: at
    each decision, ``simulations`` worlds resampled from the seat's information state, each searched once
    down the tree and played out ``rollouts`` times at random. Every draw, the worlds' included, comes from
    ``seed``, so the same seed in the same position makes the same decision."""
    rng = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(rollouts, np.random.RandomState(rng.randint(2**31)))
    bot = _ismcts.ISMCTSBot(game=game, evaluator=evaluator, uct_c=uct_c, max_simulations=simulations,
                            random_state=rng)
    # Left to itself the bot resamples with a pyspiel.UniformProbabilitySampler made afresh each time, seeded
    # from the system's entropy: its worlds, so its decisions, would differ from run to run.
    worlds = np.random.RandomState(rng.randint(2**31))
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, worlds.random_sample))
    return bot


ISMCTS = openspiel_bot(ismcts, name="ismcts", version="1")
"""OpenSpiel's ISMCTS as an arena bot, to the end of the round in play (the zoo's ``ismcts`` member);
``options``: ``simulations``, ``uct_c``, ``rollouts`` of :func:`ismcts`."""
