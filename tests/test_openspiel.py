"""OpenSpiel's algorithms on python_callbreak (the ``openspiel`` extra): MCTSBot and an AlphaZero-style evaluator
with terminal rewards, OpenSpiel's own API and observation tests under every observation type, states copied by
value, games that start mid-way, and OpenSpiel bots seated at an arena table (in-process and over the bot kit,
keyed by the seat seed). The game's random-simulation test and its agreement with the PettingZoo environment
are in tests/test_envs.py."""

from __future__ import annotations

import random
import re
import unittest
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy", reason="the OpenSpiel game needs the openspiel extra: pip install -e '.[openspiel]'")
pyspiel = pytest.importorskip("pyspiel", reason="the OpenSpiel game needs the openspiel extra: "
                              "pip install -e '.[openspiel]'")

from open_spiel.python.algorithms import mcts  # noqa: E402
from open_spiel.python.observation import make_observation  # noqa: E402

import arena.envs.openspiel  # noqa: E402,F401  (registers python_callbreak)
from arena.core.cards import card_text  # noqa: E402
from arena.core.dealing import seeded_deals  # noqa: E402
from arena.core.game import Game  # noqa: E402
from arena.core.rules import Rules  # noqa: E402
from arena.envs.layout import HAND, OBSERVATION_SIZE, ROUND, TOTALS, observation_of  # noqa: E402
from arena.envs.spiel_bot import ISMCTS, openspiel_bot, spiel_game, spiel_state  # noqa: E402
from tests.helpers.runs import records, run, stripped, tournament_text, write  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
IIG = pyspiel.IIGObservationType
PRIVATE = pyspiel.PrivateInfoType
OBSERVATION_TYPES = [IIG(public_info=public, perfect_recall=recall, private_info=private)
                     for public in (True, False) for recall in (False, True)
                     for private in (PRIVATE.NONE, PRIVATE.SINGLE_PLAYER, PRIVATE.ALL_PLAYERS)]


def load(**params: Any) -> Any:
    return pyspiel.load_game("python_callbreak", params)


def play_at_random(state: Any, rng: random.Random, until: Any = lambda state: False) -> Any:
    """Plays ``state`` on at random (chance by its outcomes) until ``until(state)`` or the end."""
    while not state.is_terminal() and not until(state):
        if state.is_chance_node():
            state.apply_action(rng.choice([card for card, _p in state.chance_outcomes()]))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


# -- terminal rewards: MCTSBot and the AlphaZero-style evaluator ------------------------------------


def mcts_game(game: Any, evaluator: Any, **options: Any) -> Any:
    """A game in which seat 0 is MCTSBot with ``evaluator`` and the others play at random; the final state."""
    bot = mcts.MCTSBot(game, 2.0, 12, evaluator, random_state=np.random.RandomState(2), **options)
    rng = random.Random(3)
    state = game.new_initial_state()
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node() or state.current_player() != 0:
            play_at_random(state, rng, until=lambda s: not s.is_chance_node() and s.current_player() == 0)
            continue
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
        searched += 1
    assert searched == 14 * game.rules.rounds
    return state


def test_mctsbot_refuses_round_rewards_and_plays_with_terminal_rewards() -> None:
    with pytest.raises(ValueError, match="terminal rewards"):
        mcts.MCTSBot(load(), 2.0, 10, mcts.RandomRolloutEvaluator())
    game = load(rewards="terminal", switches="rounds:2")
    assert game.get_type().reward_model == pyspiel.GameType.RewardModel.TERMINAL
    state = mcts_game(game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(1)))
    totals = [total / 10 for total in state.table.totals]
    assert state.returns() == state.rewards() == totals
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_terminal_rewards_are_zero_until_the_end() -> None:
    state = load(rewards="terminal", switches="rounds:2").new_initial_state()
    rng = random.Random(4)
    while not state.is_terminal():
        assert state.returns() == state.rewards() == [0.0] * 4
        if state.is_chance_node():
            state.apply_action(rng.choice([card for card, _p in state.chance_outcomes()]))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    assert any(state.returns())


class LinearEvaluator(mcts.Evaluator):  # type: ignore[misc]
    """An AlphaZero-style evaluator (``evaluate`` a value per player, ``prior`` a policy over the legal actions),
    a fixed linear network of the observation tensor, as ``open_spiel.python.algorithms.alpha_zero.evaluator``'s
    reads the tensor and the legal actions' mask."""

    def __init__(self, seed: int) -> None:
        rng = np.random.RandomState(seed)
        self.value = rng.normal(0, 0.1, OBSERVATION_SIZE)
        self.logits = rng.normal(0, 0.1, (66, OBSERVATION_SIZE))
        self.evaluated = 0

    def evaluate(self, state: Any) -> Any:
        self.evaluated += 1
        player = state.current_player()
        value = float(np.tanh(self.value @ np.asarray(state.observation_tensor(player))))
        values = np.full(4, -value / 3)
        values[player] = value
        return values

    def prior(self, state: Any) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()  # type: ignore[no-any-return]
        logits = self.logits @ np.asarray(state.observation_tensor(state.current_player()))
        mask = np.asarray(state.legal_actions_mask(), bool)
        exp = np.where(mask, np.exp(logits - logits[mask].max()), 0.0)
        exp /= exp.sum()
        return [(action, float(exp[action])) for action in state.legal_actions()]


def test_an_alphazero_style_evaluator_drives_mcts_through_a_game() -> None:
    evaluator = LinearEvaluator(7)
    game = load(rewards="terminal", switches="rounds:1")
    state = mcts_game(game, evaluator, solve=False, child_selection_fn=mcts.SearchNode.puct_value,
                      dont_return_chance_node=True)
    assert state.is_terminal() and evaluator.evaluated > 14


# -- observers --------------------------------------------------------------------------------------


class _Api:
    """OpenSpiel's own API test of one game (integration_tests/api_test.py): observations of invalid players
    raise, the private and public observations hold what they should, the sequence lengths are bounded."""

    @staticmethod
    def run(game: Any) -> unittest.TestResult:
        from absl import flags
        from open_spiel.integration_tests import api_test

        if not flags.FLAGS.is_parsed():
            flags.FLAGS(["pytest"])
        case = type("CallbreakApiTest", (api_test.EnforceAPIOnPartialTreeBase,),
                    {"game": game, "game_name": "python_callbreak"})
        result = unittest.TestResult()
        unittest.TestLoader().loadTestsFromTestCase(case).run(result)
        return result


@pytest.mark.parametrize("params", [{"switches": "rounds:1"}, {"rewards": "terminal", "switches": "rounds:2"},
                                    {"profile": "bhoos", "switches": "rounds:1 trump_mode:last_card"},
                                    {"start_round": 4, "start_totals": "31 -40 0 120"}])
def test_openspiels_api_test_passes_public_and_private_observations_included(params: dict[str, Any]) -> None:
    result = _Api.run(load(**params))
    assert result.testsRun == 5 and result.wasSuccessful(), result.failures + result.errors


def test_every_observation_type_has_an_observer_and_the_default_ones_are_the_states_own() -> None:
    game = load(switches="rounds:2")
    observers = [make_observation(game, kind) for kind in OBSERVATION_TYPES]
    rng = random.Random(6)
    state = game.new_initial_state()
    checked = 0
    while True:
        for kind, observer in zip(OBSERVATION_TYPES, observers, strict=True):
            strings = [observer.string_from(state, seat) for seat in range(4)]
            tensors = []
            for seat in range(4):
                observer.set_from(state, seat)
                tensors.append(observer.tensor.copy())
            hidden = kind.private_info == PRIVATE.NONE
            if hidden and kind.public_info:  # the public observation is the same for every player
                assert len(set(strings)) == 1 and all(np.array_equal(tensors[0], t) for t in tensors)
            if hidden and not kind.public_info:
                assert strings == [""] * 4 and all(t.size == 0 for t in tensors)
            if kind.private_info == PRIVATE.SINGLE_PLAYER and kind.public_info and not state.is_chance_node():
                for seat in range(4):
                    if kind.perfect_recall:
                        assert strings[seat] == state.information_state_string(seat)
                        assert list(tensors[seat]) == state.information_state_tensor(seat)
                    else:
                        assert strings[seat] == state.observation_string(seat)
                        assert list(tensors[seat]) == state.observation_tensor(seat)
            checked += 1
        if state.is_terminal():
            break
        stop = len(state.history()) + 7
        play_at_random(state, rng, until=lambda s, stop=stop: len(s.history()) >= stop)
    assert checked > 30 * len(OBSERVATION_TYPES)


def test_the_public_observation_shows_the_play_and_no_hand() -> None:
    game = load(switches="rounds:1")
    public = make_observation(game, IIG(public_info=True, perfect_recall=False, private_info=PRIVATE.NONE))
    history = make_observation(game, IIG(public_info=True, perfect_recall=True, private_info=PRIVATE.NONE))
    every = make_observation(game, IIG(public_info=True, perfect_recall=False, private_info=PRIVATE.ALL_PLAYERS))
    state = play_at_random(game.new_initial_state(), random.Random(2),
                           until=lambda s: not s.is_chance_node() and len(s.table.round.played) == 23)
    rnd = state.table.round
    public.set_from(state, 2)
    # The public tensor is the vector less its hand block, seats counted from seat 0.
    assert np.array_equal(public.tensor, observation_of(state.table.view(0))["observation"][HAND + 52:])
    text = public.string_from(state, 3) + history.string_from(state, 1)
    held = {str(card) for seat in range(4) for card in state.table.view(seat).hand}
    shown = set(re.findall(r"[2-9TJQKA][SHDC]", text))
    assert not held & shown and {card_text(card) for card in rnd.played} <= shown
    assert "calls " in public.string_from(state, 0) and len(history.string_from(state, 0).splitlines()) > 23
    # The all-players observation: the seat's vector, then the other three hands from the seat after it.
    every.set_from(state, 1)
    assert np.array_equal(every.dict["observation"], np.asarray(state.observation_tensor(1), np.float32))
    for k in range(3):
        hand = rnd.hands[(1 + 1 + k) % 4]
        assert [card for card in range(52) if every.dict["other_hands"][k][card]] == [
            card for card in range(52) if hand >> card & 1]


def test_openspiels_playthrough_writes_every_observation() -> None:
    from open_spiel.python.algorithms import generate_playthrough

    lines = generate_playthrough.playthrough_lines("python_callbreak(switches=rounds:1)", seed=3)
    assert any(line.startswith("PublicObservationString() = ") for line in lines)
    assert any(line.startswith("PrivateObservationString(3) = \"hand ") for line in lines)
    assert lines[-1].startswith("Returns() = ")


# -- states by value --------------------------------------------------------------------------------


def test_a_clone_copies_the_game_and_replays_no_action(monkeypatch: pytest.MonkeyPatch) -> None:
    game = load()
    rng = random.Random(9)
    state = play_at_random(game.new_initial_state(), rng,
                           until=lambda s: s.table.round_number == 5 and len(s.table.round.played) == 10)
    applied = []
    for name in ("call", "play_index"):
        original = getattr(Game, name)
        monkeypatch.setattr(Game, name, lambda self, value, _original=original: (applied.append(value),
                                                                                 _original(self, value))[1])
    clone = state.clone()
    assert applied == []  # a copy, not a replay of the 4 rounds and more before it
    monkeypatch.undo()
    # The clone is the state, and plays on apart from it.
    replayed = game.new_initial_state()
    for action in state.history():
        replayed.apply_action(action)
    for twin in (clone, replayed):
        assert str(twin) == str(state) and twin.history() == state.history()
        for seat in range(4):
            assert twin.information_state_tensor(seat) == state.information_state_tensor(seat)
            assert twin.information_state_string(seat) == state.information_state_string(seat)
    before = str(state)
    play_at_random(clone, rng)
    assert clone.is_terminal() and str(state) == before and not state.is_terminal()
    play_at_random(state, rng)
    assert state.is_terminal()


def test_a_game_can_start_mid_way_and_end_with_a_round() -> None:
    game = load(start_round=3, start_dealer=1, start_totals="31 -40 0 120", end_round=3)
    state = play_at_random(game.new_initial_state(), random.Random(5),
                           until=lambda s: not s.is_chance_node())
    vector = np.asarray(state.observation_tensor(0), np.float32)
    assert state.table.round_number == 3 and state.table.round.dealer == 1
    assert vector[ROUND] == pytest.approx(3 / 5)
    assert list(vector[TOTALS:TOTALS + 4]) == pytest.approx([31 / 130, -40 / 130, 0, 120 / 130])
    play_at_random(state, random.Random(5))
    result = state.table.results[-1]
    assert len(state.table.results) == 1 and result.round_number == 3
    assert state.returns() == [score / 10 for score in result.scores]  # the start totals are not counted
    with pytest.raises(ValueError, match="start_round"):
        load(start_round=4, end_round=2)
    with pytest.raises(ValueError, match="start_totals"):
        load(start_totals="1 2 3")


# -- OpenSpiel bots at an arena table ---------------------------------------------------------------

SEAT_KEY = 'seat_key = "' + "ab" * 32 + '"\n'


def test_ismcts_plays_in_a_tournament_in_process_and_over_the_bot_kit_the_same_games(tmp_path: Path) -> None:
    names = ("ismcts", "r2", "r3", "r4")
    local = tournament_text(names, seed=3, deal_sets=1, tournament=SEAT_KEY, ismcts="arena.envs.spiel_bot:ISMCTS",
                            extra='[rules]\nprofile = "nepali"\nrounds = 2\n').replace(
        'spiel_bot:ISMCTS"\nseed = 1\n', 'spiel_bot:ISMCTS"\nseed = 1\noptions = { simulations = 4 }\n')
    assert "simulations = 4" in local
    summary = run(write(tmp_path / "local.toml", local), tmp_path / "local")
    assert (summary.played, summary.faults) == (4, 0)
    command = "{python} sample_bots/ismcts_bot.py --arena {address} --seed 1 --option simulations=4"
    remote = local.replace('python = "arena.envs.spiel_bot:ISMCTS"', f'command = "{command}"').replace(
        "options = { simulations = 4 }\n", "")
    assert "ismcts_bot.py" in remote
    summary = run(write(tmp_path / "grpc.toml", remote), tmp_path / "grpc")
    assert (summary.played, summary.faults) == (4, 0)
    assert stripped(tmp_path / "grpc") == stripped(tmp_path / "local")
    assert all(not record["fallbacks"][record["seats"].index("ismcts")] for record in records(tmp_path / "local"))


def mid_round_views(seed: int, key: bytes | None) -> list[Any]:
    """The views of seat 2 at each of its decisions of a round played by the lowest legal action."""
    game = Game(Rules.profile("nepali"), seeded_deals(seed, 1), seat_key=key)
    views = []
    while game.round_number == 1:
        if game.current_seat == 2:
            views.append(game.view(2))
        if None in game.round.calls:
            game.call(2)
        else:
            legal = game.legal_mask()
            game.play_index((legal & -legal).bit_length() - 1)
    return views


def test_a_seated_bot_is_keyed_by_the_seat_seed_or_else_the_position() -> None:
    seen: list[tuple[int, int]] = []

    def make(game: Any, seat: int, seed: int) -> Any:
        seen.append((seat, seed))
        return pyspiel.make_uniform_random_bot(seat, seed)

    Random = openspiel_bot(make, name="uniform")
    keyed, other_key, unkeyed = (mid_round_views(4, key) for key in (b"k" * 32, b"j" * 32, None))
    choices = [k for k, view in enumerate(keyed) if view.legal_mask.bit_count() > 1]
    at, then = choices[1], choices[2]
    assert unkeyed[at].seat_seed == 0 and keyed[at].seat_seed != 0
    view = keyed[at]
    first = Random(1).play(view)
    assert Random(1).play(view) == first and seen[0] == seen[1]  # the same position, the same draws
    Random(1).play(other_key[at])
    Random(2).play(view)
    Random(1).play(unkeyed[at])
    Random(1).play(unkeyed[then])
    assert len(seen) == 6
    seeds = [seed for _seat, seed in seen]
    assert len(set(seeds)) == len(seeds) - 1  # another key, another bot seed, another position: new draws


def test_mcts_on_a_determinisation_and_a_policy_play_whole_games_seated() -> None:
    from open_spiel.python import policy as spiel_policy
    from open_spiel.python.bots import policy as policy_bots

    def determinised(game: Any, seat: int, seed: int) -> Any:
        rng = np.random.RandomState(seed)
        return mcts.MCTSBot(game, 2.0, 8, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)

    def uniform(game: Any, seat: int, seed: int) -> Any:
        return policy_bots.PolicyBot(seat, np.random.RandomState(seed), spiel_policy.UniformRandomPolicy(game))

    bots = [openspiel_bot(determinised, name="mcts")(1), openspiel_bot(uniform, horizon="game")(2),
            ISMCTS(3, simulations=3), openspiel_bot(determinised, name="mcts", rewards="terminal")(4)]
    game = Game(Rules.profile("nepali", rounds=2), seeded_deals(8, 1), seat_key=b"s" * 32)
    while not game.over:
        seat = game.current_seat
        view = game.view(seat)
        if None in game.round.calls:
            game.call(bots[seat].call(view))
        else:
            game.play(bots[seat].play(view))
    assert len(game.results) == 2


def test_a_seated_bots_state_is_one_its_seat_cannot_tell_from_the_table() -> None:
    for view in mid_round_views(11, b"q" * 32)[::3]:
        game = spiel_game(view, "game")
        state = spiel_state(view, game, random.Random(1))
        assert state is not None and state.current_player() == view.seat
        assert np.array_equal(np.asarray(state.observation_tensor(view.seat), np.float32),
                              observation_of(view)["observation"])
        assert state.legal_actions() == list(np.flatnonzero(observation_of(view)["action_mask"]))


def test_a_seated_bots_options_are_checked_when_it_is_made() -> None:
    with pytest.raises(Exception, match="simulaitons"):
        ISMCTS(1, simulaitons=5)
