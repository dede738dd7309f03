"""The research environments (arena.envs, the ``rl`` extra): PettingZoo's own API and seed tests under
every profile, the observation vector slice by slice and its two encoders agreeing, rewards in points,
deals the same as a tournament's, the Gymnasium single seat, a policy entered as a bot in-process and
over gRPC, the sampled deals of the unseen cards, the OpenSpiel game (the ``openspiel`` extra as well: its
random-simulation test, its ISMCTS bot, and the same deals and legal actions as the PettingZoo env), and
examples/train_policy.py."""

from __future__ import annotations

import copy
import hashlib
import importlib
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy", reason="the research environments need the rl extra: pip install -e '.[rl]'")
pytest.importorskip("gymnasium", reason="the research environments need the rl extra: pip install -e '.[rl]'")
pytest.importorskip("pettingzoo", reason="the research environments need the rl extra: pip install -e '.[rl]'")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from arena.core.cards import Card, Hand, card_text  # noqa: E402
from arena.core.dealing import seeded_deal, seeded_deals  # noqa: E402
from arena.core.game import Game, Round  # noqa: E402
from arena.core.rules import PROFILES, Rules  # noqa: E402
from arena.core.scoring import tenths_per_point  # noqa: E402
from arena.core.turns import seat_after  # noqa: E402
from arena.envs import SingleSeat, callbreak_v0  # noqa: E402
from arena.envs.layout import (  # noqa: E402
    ACTIONS,
    CALL_BASE,
    CALLS,
    DEALER,
    HAND,
    LEADER,
    OBSERVATION_SIZE,
    PHASE,
    PLAYED,
    ROUND,
    TOTALS,
    TRICK,
    TRUMP,
    WON,
    observation_of,
    score_scale,
)
from arena.envs.unseen import cannot_hold, deal_unseen  # noqa: E402
from arena.errors import IllegalCall, IllegalPlay  # noqa: E402
from arena.players.house import HouseBot  # noqa: E402
from tests.helpers.runs import cli, records, run, stripped, tournament_text, write  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
POLICY_BOTS = ROOT / "tests" / "helpers" / "policy_bots.py"
# PettingZoo's api_test warns of a Dict observation space and of a dict observation: both are by design
# (the vector and the mask), as in PettingZoo's own card games.
API_WARNINGS = [pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
                pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")]


def random_steps(env: callbreak_v0.raw_env, rng: random.Random):  # type: ignore[no-untyped-def]
    """Plays ``env`` to the end with random legal actions, yielding before each decision."""
    for agent in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        yield agent, observation
        env.step(rng.choice(list(observation["action_mask"].nonzero()[0])))


# -- PettingZoo's tests ----------------------------------------------------------------------------


@pytest.mark.parametrize("profile", list(PROFILES))
@API_WARNINGS[0]
@API_WARNINGS[1]
def test_pettingzoo_api_test_passes_under_every_profile(profile: str) -> None:
    api_test(callbreak_v0.env(profile, seed=3), num_cycles=400)


@pytest.mark.parametrize("reward", callbreak_v0.REWARDS)
@API_WARNINGS[0]
@API_WARNINGS[1]
def test_pettingzoo_api_test_passes_with_either_reward(reward: str) -> None:
    api_test(callbreak_v0.env("nepali", reward=reward, redeal_below=11, seed=5), num_cycles=400)


def test_pettingzoo_seed_test_passes() -> None:
    seed_test(lambda: callbreak_v0.env("nepali"), num_cycles=300)


# -- the observation -------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", list(PROFILES))
def test_the_environment_and_a_seat_view_give_the_same_observation_at_every_decision(profile: str) -> None:
    env = callbreak_v0.raw_env(profile, redeal_below=11 if profile == "nepali" else 0)
    env.reset(seed=11)
    compared = 0
    for _agent, _observation in random_steps(env, random.Random(profile)):
        for seat, agent in enumerate(callbreak_v0.AGENTS):
            mine = env.observe(agent)
            theirs = observation_of(env.game.view(seat))
            assert np.array_equal(mine["observation"], theirs["observation"]), (profile, seat)
            assert np.array_equal(mine["action_mask"], theirs["action_mask"]), (profile, seat)
            compared += 1
    assert compared >= 4 * 5 * 56


def test_the_state_is_every_hand_then_the_public_blocks_by_absolute_seat() -> None:
    env = callbreak_v0.raw_env("nepali")
    env.reset(seed=3)
    steps = random_steps(env, random.Random(3))
    for step in range(120):  # through two rounds and into a third, a trick half played
        next(steps)
        if step % 7:
            continue
        state = env.state()
        seen = [observation_of(env.game.view(seat))["observation"] for seat in range(4)]
        assert state.shape == (4 * 52 + OBSERVATION_SIZE - 52,)
        for seat in range(4):
            assert np.array_equal(state[52 * seat:52 * seat + 52], seen[seat][:52]), (step, seat)
        assert np.array_equal(state[208:], seen[0][52:]), step  # seat 0's parts are the absolute seats
        state[:] = 2.0  # a new array: the environment's own is untouched
        assert np.array_equal(env.observe("player_0")["observation"], seen[0])


def test_a_copy_of_the_environment_plays_on_by_itself() -> None:
    env = callbreak_v0.raw_env("nepali")
    env.reset(seed=12)
    steps = random_steps(env, random.Random(12))
    for _ in range(30):
        next(steps)
    before = env.state()
    twin = copy.deepcopy(env)
    for _agent, _observation in random_steps(twin, random.Random(5)):
        for seat, agent in enumerate(callbreak_v0.AGENTS):
            assert np.array_equal(twin.observe(agent)["observation"],
                                  observation_of(twin.game.view(seat))["observation"])
    assert twin.game.over and np.array_equal(env.state(), before)


def expected_vector(game: Game, me: int) -> np.ndarray:
    """The observation of ``me`` as arena/envs/layout.py lays it out, slice by slice, from the game itself."""
    rnd = game.round
    rules = game.rules
    vector = np.zeros(OBSERVATION_SIZE, np.float32)

    def part(seat: int) -> int:
        return (seat - me) % 4  # part 0 is the seat itself, part 1 the seat after it

    for card in range(52):
        if rnd.hands[me] >> card & 1:
            vector[HAND + card] = 1
    leaders = [*rnd.leaders, rnd.leader]
    for k, card in enumerate(rnd.played):
        seat = seat_after(leaders[k // 4], k % 4)
        vector[PLAYED + 52 * part(seat) + card] = 1
        if k >= 4 * len(rnd.winners):
            vector[TRICK + 52 * part(seat) + card] = 1
    vector[LEADER + part(rnd.leader)] = 1
    for seat in range(4):
        vector[CALLS + 14 * part(seat) + (rnd.calls[seat] or 0)] = 1
        vector[WON + part(seat)] = rnd.tricks_won[seat] / 13
        vector[TOTALS + part(seat)] = game.totals[seat] / score_scale(rules)
    vector[DEALER + part(rnd.dealer)] = 1
    vector[ROUND] = rnd.round_number / rules.rounds
    vector[PHASE + (0 if None in rnd.calls else 1)] = 1
    vector[TRUMP + rnd.trump] = 1
    return vector


def test_every_slice_of_the_vector_holds_what_the_layout_says() -> None:
    env = callbreak_v0.raw_env("nepali")
    env.reset(seed=4)
    checked = set()
    for agent, observation in random_steps(env, random.Random(2)):
        game = env.game
        if game.over:
            break
        me = callbreak_v0.AGENTS.index(agent)
        assert np.array_equal(observation["observation"], expected_vector(game, me))
        rnd = game.round
        checked.add((rnd.round_number, len(rnd.played) % 4, None in rnd.calls))
    # every round, mid-trick and trick-leading moments, in both phases
    assert {r for r, _, _ in checked} == {1, 2, 3, 4, 5}
    assert {k for _, k, _ in checked} == {0, 1, 2, 3}
    assert {c for _, _, c in checked} == {True, False}


def test_the_totals_are_scaled_by_the_largest_round_score_and_bounded_by_the_space() -> None:
    assert score_scale(Rules.profile("nepali")) == 130  # a call of 13 made: 13.0 points
    assert score_scale(Rules.profile("dy")) == 130  # a call of 13: 130 DY points
    env = callbreak_v0.raw_env("nepali")
    env.reset(seed=9)
    space = env.observation_space("player_0")["observation"]
    for _agent, observation in random_steps(env, random.Random(9)):
        assert space.contains(observation["observation"])
    assert env.observe("player_0")["observation"][TOTALS] == env.game.totals[0] / 130


def test_the_mask_allows_exactly_the_legal_calls_then_the_legal_cards() -> None:
    env = callbreak_v0.raw_env("bhoos")  # calls 1-8
    env.reset(seed=2)
    observation = env.observe(env.agent_selection)
    assert list(observation["action_mask"].nonzero()[0]) == [CALL_BASE + v for v in range(1, 9)]
    assert env.observe(next(a for a in callbreak_v0.AGENTS if a != env.agent_selection))["action_mask"].sum() == 0
    for _ in range(4):
        env.step(CALL_BASE + 3)
    legal = env.game.legal_mask()
    assert list(env.observe(env.agent_selection)["action_mask"].nonzero()[0]) == [
        card for card in range(52) if legal >> card & 1]
    assert env.action_space("player_0").n == ACTIONS == 66


def test_an_action_outside_the_mask_raises_with_the_rule_and_changes_nothing() -> None:
    env = callbreak_v0.env("nepali", seed=1)
    env.reset()
    with pytest.raises(IllegalCall, match="it is time to call"):
        env.step(5)
    with pytest.raises(IllegalCall, match="a call must be a whole number from 1 to 13"):
        env.step(CALL_BASE)  # a call of 0
    for _ in range(4):
        env.step(CALL_BASE + 2)
    before = env.unwrapped.state()
    agent = env.agent_selection
    legal = env.unwrapped.game.legal_mask()
    illegal = next(card for card in range(52) if not legal >> card & 1)
    with pytest.raises(IllegalPlay):
        env.step(illegal)
    with pytest.raises(IllegalPlay, match="it is time to play one"):
        env.step(CALL_BASE + 3)
    for nothing in (-1, ACTIONS):
        with pytest.raises(IllegalPlay, match=rf"action {nothing} \(there is none.*it is time to play one"):
            env.step(nothing)
    assert np.array_equal(env.unwrapped.state(), before) and env.agent_selection == agent


def test_the_arrays_last_returns_are_the_agents_own_and_later_steps_leave_them_as_they_were() -> None:
    env = callbreak_v0.raw_env("nepali")
    env.reset(seed=4)
    steps = random_steps(env, random.Random(4))
    for _ in range(6):  # the calls, then a trick begun
        next(steps)
    observation = env.last()[0]
    assert observation["observation"].dtype == np.float32 and observation["action_mask"].dtype == np.int8
    kept = {key: array.copy() for key, array in observation.items()}
    for array in observation.values():
        assert array.flags.writeable
        array[:] = 1  # the agent's to change: the environment's own stay as they were
    again = env.last()[0]
    assert all(np.array_equal(again[key], kept[key]) for key in kept)
    for _ in range(60):  # on into the next round: what was handed out stays as it was
        next(steps)
    assert all(np.array_equal(again[key], kept[key]) for key in kept)


def test_a_copy_of_the_wrapped_environment_steps_its_own_game() -> None:
    env = callbreak_v0.env("nepali", seed=8)
    with pytest.raises(AttributeError, match="before reset"):
        env.last()
    env.reset()
    for _ in range(4):
        env.step(CALL_BASE + 2)
    twin = copy.deepcopy(env)
    observation = twin.last()[0]
    twin.step(int(observation["action_mask"].nonzero()[0][0]))
    assert len(twin.unwrapped.game.round.played) == 1 and not env.unwrapped.game.round.played
    assert np.array_equal(env.last()[0]["observation"], observation["observation"])


def test_the_speed_benchmarks_environments_are_dealt_deals_of_their_own() -> None:
    """benchmarks/env_speed.py times raw_env and env() side by side against the core's seed-1 deals; the core keeps
    recent seeded deals, so an environment dealt the deals another has just been dealt would time no dealing."""
    from benchmarks.env_speed import environments

    raw, wrapped = environments("nepali")
    dealt = [raw.env.unwrapped.game.round.initial, wrapped.env.unwrapped.game.round.initial,
             seeded_deal(1, 1, 1).masks]
    assert len({*map(frozenset, dealt)}) == 3



def test_the_speed_benchmarks_parts_put_each_step_in_its_own_part() -> None:
    """``env_speed.py --parts``: a round's four calls and 48 of its cards are timed as steps, its last card as the
    round's end, and each step's draw and ``last()`` once (with the terminated agents' ``last()`` at a game's end)."""
    from benchmarks.env_speed import PARTS, step_parts

    spent, calls, steps = step_parts("nepali", 0.0, slices=2)  # 560 steps: two games of five rounds
    draw, last, step, end, rest = PARTS
    assert steps == calls[draw] == 560
    # The first game's terminated agents step (and the game is reset) before the second; the second's after.
    assert calls[end] == 10 and calls[step] == 550 and calls[rest] == 4 and calls[last] == 564
    assert all(spent[part] > 0 for part in PARTS)

# -- rewards ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("profile", "points"), [("nepali", 10), ("dy", 1)])
def test_round_rewards_are_each_rounds_scores_in_points_and_add_up_to_the_total(profile: str, points: int) -> None:
    env = callbreak_v0.raw_env(profile, rounds=3)
    env.reset(seed=6)
    given = []
    cumulative = dict.fromkeys(callbreak_v0.AGENTS, 0.0)
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _info = env.last()
        cumulative[agent] += reward
        if any(env.rewards.values()) and env.game.results and len(given) < len(env.game.results):
            given.append(tuple(env.rewards[a] for a in callbreak_v0.AGENTS))
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(observation["action_mask"].nonzero()[0][-1]))
    scores = [tuple(s / points for s in result.scores) for result in env.game.results]
    assert given == scores and len(scores) == 3
    assert [cumulative[a] for a in callbreak_v0.AGENTS] == [t / points for t in env.game.totals]


def test_the_game_reward_is_the_total_at_the_end_and_nothing_before() -> None:
    env = callbreak_v0.raw_env("nepali", reward="game", rounds=2)
    env.reset(seed=6)
    seen = []
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _info = env.last()
        if reward:
            seen.append((agent, reward, terminated))
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(observation["action_mask"].nonzero()[0][0]))
    totals = [t / 10 for t in env.game.totals]
    assert sorted(seen) == sorted((a, t, True) for a, t in zip(callbreak_v0.AGENTS, totals, strict=True) if t)


# -- seeding ---------------------------------------------------------------------------------------


def replay(env: callbreak_v0.raw_env, record_rounds: list[dict]) -> None:  # type: ignore[type-arg]
    """Plays a recorded game's calls and cards in ``env``, checking its deals and scores round by round."""
    for recorded in record_rounds:
        game = env.game
        rnd = game.round
        assert (rnd.round_number, rnd.dealer) == (recorded["round"], recorded["dealer"])
        assert [str(Hand.of_mask(hand)) for hand in rnd.initial] == recorded["hands"]
        for k in range(4):
            seat = (rnd.dealer + 1 + k) % 4
            assert env.agent_selection == callbreak_v0.AGENTS[seat]
            env.step(CALL_BASE + recorded["calls"][seat])
        for trick in recorded["tricks"]:
            for card in trick["cards"]:
                env.step(Card.parse(card).index)
        assert [env.rewards[a] for a in callbreak_v0.AGENTS] == [s / 10 for s in recorded["scores"]]


@pytest.mark.parametrize("profile", ["nepali", "master"])
def test_reset_with_a_seed_plays_the_deals_callbreak_arena_run_deals_with_that_seed(
        tmp_path: Path, profile: str) -> None:
    config = write(tmp_path / "t.toml", tournament_text(seed=7, deal_sets=2, concurrency=1,
                                                        extra=f'[rules]\nprofile = "{profile}"\n'))
    done = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert done.returncode == 0, done.stderr
    games: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for record in records(tmp_path / "out"):
        games.setdefault(record["game"], []).append(record)
    assert len(games) == 8  # two deal sets, four rotations each
    env = callbreak_v0.raw_env(profile)
    for rounds in games.values():
        env.reset(seed=7, options={"deal_set": rounds[0]["deal_set"]})
        assert rounds[0]["first_dealer"] == env.game.first_dealer
        replay(env, rounds)
        assert env.game.over and all(env.terminations.values())


def test_each_reset_plays_the_next_deal_set_of_the_seed() -> None:
    env = callbreak_v0.raw_env("nepali")
    env.reset(seed=7)
    first = env.game.round.initial
    env.reset()
    assert env.deal_set == 2 and env.game.round.initial != first
    env.reset(seed=7)
    assert env.deal_set == 1 and env.game.round.initial == first
    env.reset(options={"deal_set": 2})
    second = env.game.round.initial
    env.reset(seed=7, options={"deal_set": 2})
    assert env.game.round.initial == second
    assert callbreak_v0.raw_env("nepali", seed=7).seed == 7


# -- the single seat -------------------------------------------------------------------------------


@pytest.mark.parametrize("opponents", [["house", "heuristic", "montecarlo"],
                                       ["arena.players.house:HouseBot"] * 3])
def test_the_single_seat_plays_a_whole_game_against_the_bots_named(opponents: list[str]) -> None:
    env = SingleSeat(2, opponents, "nepali", rounds=2)
    observation, _info = env.reset(seed=3)
    rng = random.Random(3)
    total, steps, done = 0.0, 0, False
    while not done:
        assert env.table.game.current_seat == 2
        assert observation["action_mask"].any()
        action = rng.choice(list(observation["action_mask"].nonzero()[0]))
        observation, reward, done, _truncated, _info = env.step(action)
        total += reward
        steps += 1
    assert steps == 2 * 14
    assert total == env.table.game.totals[2] / 10
    assert not observation["action_mask"].any()


def test_the_single_seats_opponents_play_as_the_bot_would_at_a_table() -> None:
    env = SingleSeat(0, ["house"] * 3, "nepali", rounds=1)
    observation, _ = env.reset(seed=8)
    while not env.table.game.over:
        observation, *_ = env.step(int(observation["action_mask"].nonzero()[0][0]))
    played = env.table.game.results[0]
    # Replayed: each opponent's call and card is the one a fresh house bot of its seed (its place) makes.
    bots = {seat: HouseBot(seed=seat) for seat in (1, 2, 3)}
    check = Game(Rules.profile("nepali", rounds=1), seeded_deals(8, 1))
    for seat in (0, 1, 2, 3):  # the seat after the dealer (3) calls first
        if seat:
            assert bots[seat].call(check.view(seat)) == played.calls[seat]
        check.call(played.calls[seat])
    for trick in played.tricks:
        for k, card in enumerate(trick.cards):
            seat = seat_after(trick.leader, k)
            if seat:
                assert str(bots[seat].play(check.view(seat))) == str(card)
            check.play(card)
    assert check.over and check.totals == env.table.game.totals


def test_an_illegal_action_at_the_single_seat_ends_the_episode_with_the_lowest_reward() -> None:
    env = SingleSeat(1, ["house"] * 3, "nepali")
    env.reset(seed=1)
    _observation, reward, done, truncated, info = env.step(5)  # a card, at calling time
    assert (done, truncated) == (True, False) and "it is time to call" in info["illegal"]
    assert reward == env.illegal_reward == -5 * 13.0


def test_the_single_seat_passes_gymnasiums_env_checker() -> None:
    from gymnasium.utils.env_checker import check_env

    with pytest.warns(UserWarning, match="not having a spec"):
        check_env(SingleSeat(0, ["house"] * 3, "pagat", rounds=1))


def test_gymnasium_make_finds_the_single_seat_registered_by_arena_envs() -> None:
    import gymnasium

    env = gymnasium.make("callbreak/SingleSeat-v0", seat=2, opponents=["house"] * 3, rounds=1)
    observation, _info = env.reset(seed=3)
    assert env.unwrapped.seat == 2 and observation["action_mask"].any()
    default = gymnasium.make("callbreak/SingleSeat-v0").unwrapped
    assert [spec for spec, _factory in default._specs] == ["heuristic", "house", "house"]
    # The module-prefixed id imports the package first, as Gymnasium users write it for third-party envs.
    assert gymnasium.make("arena.envs:callbreak/SingleSeat-v0").spec.id == "callbreak/SingleSeat-v0"


def test_action_masks_hands_maskable_libraries_the_vector_and_the_legal_actions() -> None:
    import gymnasium

    from arena.envs import ActionMasks

    env = ActionMasks(gymnasium.make("callbreak/SingleSeat-v0", opponents=["house"] * 3, rounds=1))
    observation, _info = env.reset(seed=5)
    assert env.observation_space.shape == (OBSERVATION_SIZE,) and env.observation_space.contains(observation)
    rng = random.Random(5)
    done, steps = False, 0
    while not done:
        masks = env.get_wrapper_attr("action_masks")()  # as sb3-contrib's get_action_masks reads it
        assert masks.dtype == bool and np.array_equal(masks, env.unwrapped.table.observe(env.unwrapped.agent)[
            "action_mask"] == 1)
        observation, _reward, done, _truncated, _info = env.step(rng.choice(list(np.flatnonzero(masks))))
        steps += 1
    assert steps == 14 and not env.action_masks().any()


@API_WARNINGS[0]
@API_WARNINGS[1]
def test_pettingzoos_render_test_passes_and_human_mode_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    from pettingzoo.test import render_test

    render_test(lambda render_mode=None: callbreak_v0.env("nepali", seed=2, render_mode=render_mode))
    printed = capsys.readouterr().out
    assert "deal set 1, round 1, dealer 3, trump S" in printed and "player_3:" in printed
    with pytest.raises(Exception, match="render_mode must be None, 'ansi' or 'human'"):
        callbreak_v0.env("nepali", render_mode="rgb_array")


# -- a policy as a bot -----------------------------------------------------------------------------


def lowest_everywhere(folder: Path, name: str) -> int:
    """Checks that the bot ``name`` called the lowest call and played its legal card of lowest index at
    every decision of the records; returns the decisions checked."""
    checked = 0
    for record in records(folder):
        seat = record["seats"].index(name)
        rules = Rules.from_dict(record["rules"])
        assert record["calls"][seat] == rules.min_call
        hands = [Hand.parse(text).mask for text in record["hands"]]
        rnd = Round(rules, hands, record["dealer"], "SHDC".index(record["trump"]), record["round"])
        for k in range(4):
            rnd.call(record["calls"][(record["dealer"] + 1 + k) % 4])
        for trick in record["tricks"]:
            for card in trick["cards"]:
                if rnd.current_seat == seat:
                    legal = rnd.legal_mask()
                    assert Card.parse(card).index == (legal & -legal).bit_length() - 1
                    checked += 1
                rnd.play(card)
        assert not record["faults"] and not record["fallbacks"][seat]
    return checked


def test_a_policy_bot_plays_in_a_tournament_in_process_and_over_grpc_the_same_games(tmp_path: Path) -> None:
    names = ("lowest", "r2", "r3", "r4")
    local = write(tmp_path / "local.toml", tournament_text(names, seed=5, lowest=f"{POLICY_BOTS}:Lowest"))
    summary = run(local, tmp_path / "local")
    assert (summary.played, summary.faults) == (8, 0)
    assert lowest_everywhere(tmp_path / "local", "lowest") == 8 * 5 * 13
    command = f"{{python}} {POLICY_BOTS} --arena {{address}}"
    remote = tournament_text(names, seed=5).replace(
        'name = "lowest"\npython = "sample_bots.random_bot:RandomBot"', f'name = "lowest"\ncommand = "{command}"')
    assert "command =" in remote
    summary = run(write(tmp_path / "grpc.toml", remote), tmp_path / "grpc")
    assert (summary.played, summary.faults) == (8, 0)
    assert stripped(tmp_path / "grpc") == stripped(tmp_path / "local")


def readme_blocks() -> list[str]:
    """The Python blocks of arena/envs/README.md, in order."""
    return re.findall(r"```python\n(.*?)```", (ROOT / "arena" / "envs" / "README.md").read_text(encoding="utf-8"),
                      re.S)


def test_the_readmes_five_lines_are_a_bot_in_process_and_over_grpc(tmp_path: Path) -> None:
    five = readme_blocks()[0]
    assert len(five.strip().splitlines()) == 5
    bot = write(tmp_path / "first_legal.py", five)
    names = ("first-legal", "r2", "r3", "r4")
    local = tournament_text(names, seed=9, deal_sets=1, **{"first-legal": f"{bot}:FirstLegal"})
    summary = run(write(tmp_path / "local.toml", local), tmp_path / "local")
    assert (summary.played, summary.faults) == (4, 0)
    assert lowest_everywhere(tmp_path / "local", "first-legal") == 4 * 5 * 13
    remote = tournament_text(names, seed=9, deal_sets=1).replace(
        'name = "first-legal"\npython = "sample_bots.random_bot:RandomBot"',
        f'name = "first-legal"\ncommand = "{{python}} {bot} --arena {{address}}"')
    assert "command =" in remote
    summary = run(write(tmp_path / "grpc.toml", remote), tmp_path / "grpc")
    assert (summary.played, summary.faults) == (4, 0)
    assert stripped(tmp_path / "grpc") == stripped(tmp_path / "local")


def test_the_readmes_environment_example_runs() -> None:
    names: dict[str, Any] = {"__name__": "example"}
    exec(compile(readme_blocks()[1], "arena/envs/README.md", "exec"), names)
    assert names["env"].unwrapped.game.over
    assert names["seat"].table.game.current_seat == 0


def test_a_policys_action_outside_the_mask_is_refused_as_an_illegal_answer(tmp_path: Path) -> None:
    names = ("careless", "r2", "r3", "r4")
    config = tournament_text(names, seed=4, deal_sets=1, careless=f"{POLICY_BOTS}:Careless")
    summary = run(write(tmp_path / "t.toml", config), tmp_path / "out")
    assert summary.played == 4
    kinds, decisions, fallbacks = set(), 0, 0
    for record in records(tmp_path / "out"):
        seat = record["seats"].index("careless")
        kinds |= {fault["kind"] for fault in record["faults"] if fault["seat"] == seat}
        held = Hand.parse(record["hands"][seat]).mask
        decisions += 1 + 13
        fallbacks += record["fallbacks"][seat]
        assert record["fallbacks"][seat] >= 1 + 13 - (held & 1)  # all but a legal 2S are the arena's
    assert kinds == {"illegal_call", "illegal_card"} and fallbacks <= decisions


# -- the unseen cards ------------------------------------------------------------------------------


def mid_round(seed: int, cards: int) -> Round:
    game = Game(Rules.profile("nepali"), seeded_deals(seed, 1))
    rng = random.Random(seed)
    while None in game.round.calls:
        game.call(rng.choice(game.legal_calls()))
    for _ in range(cards):
        legal = game.legal_mask()
        game.play_index(rng.choice([c for c in range(52) if legal >> c & 1]))
    return game.round


def test_cannot_hold_finds_the_suit_a_seat_did_not_follow() -> None:
    rules = Rules.profile("nepali")
    # Seat 0 leads 2H; seat 1, holding no heart, plays a spade (it must trump): it holds no heart.
    hands = [Hand.parse(text).mask for text in (
        "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
        "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC")]
    rnd = Round(rules, hands, 3, 0)
    for _ in range(4):
        rnd.call(1)
    rnd.play("2H")
    rnd.play("2S")
    hearts = Hand.parse("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH").mask
    limits = cannot_hold(rnd)
    assert limits[1] & hearts == hearts and limits[0] == 0


def test_deal_unseen_keeps_the_seats_own_hand_and_the_play_and_changes_the_others() -> None:
    changed = 0
    for seed in range(20):
        rnd = mid_round(seed, 21)
        world = deal_unseen(rnd, 2, random.Random(seed))
        assert world is not None
        assert world.hands[2] == rnd.hands[2] and world.played == rnd.played and world.calls == rnd.calls
        assert [h.bit_count() for h in world.hands] == [h.bit_count() for h in rnd.hands]
        limits = cannot_hold(rnd)
        for seat in (0, 1, 3):
            assert not world.hands[seat] & limits[seat]
        changed += world.hands[0] != rnd.hands[0]
    assert changed > 15


# -- OpenSpiel -------------------------------------------------------------------------------------

SPIEL_GAMES = [("pagat", "rounds:1"), ("nepali", "rounds:2 redeal_below:11"), ("dy", "rounds:1"),
               ("master", "rounds:1"), ("bhoos", "rounds:1 trump_mode:last_card must_beat:off")]
"""Profiles and switches of the OpenSpiel tests: throw-ins by the calls and for want of a trump, the drawn
first dealer, the trump as the last card dealt."""
CARD_WORD = re.compile(r"\b[2-9TJQKA][SHDC]\b")


@pytest.fixture(scope="module")
def spiel() -> Any:
    """pyspiel, with python_callbreak registered (the test skips without the openspiel extra)."""
    module = pytest.importorskip("pyspiel", reason="the OpenSpiel game needs the openspiel extra: "
                                 "pip install -e '.[openspiel]'")
    importlib.import_module("arena.envs.openspiel")
    return module


def spiel_game(spiel: Any, profile: str, switches: str) -> Any:
    return spiel.load_game("python_callbreak", {"profile": profile, "switches": switches})


@pytest.mark.parametrize(("profile", "switches"), SPIEL_GAMES)
def test_openspiels_random_simulation_test_passes(spiel: Any, profile: str, switches: str) -> None:
    spiel.random_sim_test(spiel_game(spiel, profile, switches), num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize(("profile", "switches"), SPIEL_GAMES)
def test_openspiel_and_pettingzoo_deal_the_same_cards_and_allow_the_same_actions(
        spiel: Any, profile: str, switches: str) -> None:
    """Chance dealing the arena's seeded deals, both games agree at every decision: the seat to act, the
    hands, the legal actions, every seat's observation, each round's rewards, and the returns at the end."""
    game = spiel_game(spiel, profile, switches)
    env = callbreak_v0.raw_env(profile, **dict(item.split(":") for item in switches.split()))
    assert env.rules == game.rules
    env.reset(seed=13)
    state = game.new_initial_state()
    rng = random.Random(profile)
    dealing, position, decisions = None, 0, 0
    while not state.is_terminal():
        wanted = state.deal_wanted()
        if wanted is not None:  # chance deals deal set 1 of seed 13, card by card
            assert state.is_chance_node()
            position = position + 1 if wanted == dealing else 0
            dealing = wanted
            state.apply_action(seeded_deal(13, 1, *wanted).deck[position])
            continue
        seat = state.current_player()
        assert callbreak_v0.AGENTS[seat] == env.agent_selection
        assert state.table.round.initial == env.game.round.initial
        assert state.legal_actions() == list(env.observe(env.agent_selection)["action_mask"].nonzero()[0])
        for other, agent in enumerate(callbreak_v0.AGENTS):
            vector = env.observe(agent)["observation"]
            assert np.array_equal(np.asarray(state.observation_tensor(other), np.float32), vector), (seat, other)
            information = np.asarray(state.information_state_tensor(other), np.float32)
            assert np.array_equal(information[:OBSERVATION_SIZE], vector)
        action = rng.choice(state.legal_actions())
        finished = len(env.game.results)
        state.apply_action(action)
        env.step(action)
        decisions += 1
        if len(env.game.results) > finished:
            assert state.rewards() == [env.rewards[agent] for agent in callbreak_v0.AGENTS]
    assert env.game.over and len(env.game.results) == game.rules.rounds
    assert state.returns() == [total / tenths_per_point(game.rules) for total in env.game.totals]
    thrown_in = sum(1 for redeal in env.game.redeals if "calls" in redeal.reason)
    assert decisions == 4 * (game.rules.rounds + thrown_in) + 52 * game.rules.rounds


def random_spiel_states(spiel: Any, profile: str, switches: str, seed: int):  # type: ignore[no-untyped-def]
    """The states of one game played at random (chance by its outcomes), each yielded before its action."""
    rng = random.Random(seed)
    state = spiel_game(spiel, profile, switches).new_initial_state()
    while not state.is_terminal():
        yield state
        if state.is_chance_node():
            state.apply_action(rng.choice([card for card, _p in state.chance_outcomes()]))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    yield state


def test_openspiels_strings_and_tensors_show_a_seat_its_own_cards_and_the_played_ones_only(spiel: Any) -> None:
    hidden_seen = 0
    for state in random_spiel_states(spiel, "nepali", "rounds:2", 5):
        rnd = state.table.round
        dealing = state.deal_wanted() is not None
        for seat in range(4):
            vector = np.asarray(state.observation_tensor(seat), np.float32)
            hand = {card for card in range(52) if vector[HAND + card]}
            if dealing:  # the cards dealt to the seat so far, and no others
                dealt = state._table.dealt_to(seat, state._table.dealing, rnd.dealer)
                assert hand == set(dealt)
                continue
            assert hand == {card for card in range(52) if rnd.hands[seat] >> card & 1}
            others = {card_text(card) for other in range(4) if other != seat
                      for card in range(52) if rnd.hands[other] >> card & 1}
            # The information state recalls the seat's hands of earlier deals: the deal in play is its last part.
            recalled = state.information_state_string(seat)
            for text in (state.observation_string(seat), recalled[recalled.rindex("\nround "):]):
                assert not set(CARD_WORD.findall(text)) & others, (seat, text)
            # The check can fail: the whole state's string shows every hand.
            hidden_seen += bool(set(CARD_WORD.findall(str(state))) & others)
            if state.is_terminal():
                continue
            block = np.asarray(state.information_state_tensor(seat), np.float32)[OBSERVATION_SIZE:].reshape(52, 13)
            for position, card in enumerate(rnd.played):
                assert block[card].argmax() == position // 4 and block[card].sum() == 1
            assert block.sum() == len(rnd.played)
    assert hidden_seen > 100


def test_a_resampled_state_is_one_the_seat_cannot_tell_from_the_real_one(spiel: Any) -> None:
    sampler = spiel.UniformProbabilitySampler(0.0, 1.0)
    checked = changed = 0
    for state in random_spiel_states(spiel, "nepali", "rounds:2", 8):
        if state.is_chance_node() or state.is_terminal() or len(state.history()) % 5:
            continue
        seat = state.current_player()
        world = state.resample_from_infostate(seat, sampler)
        assert world.information_state_string(seat) == state.information_state_string(seat)
        assert world.observation_tensor(seat) == state.observation_tensor(seat)
        assert world.legal_actions() == state.legal_actions()
        assert world.table.round.hands[seat] == state.table.round.hands[seat]
        checked += 1
        changed += world.table.round.hands != state.table.round.hands
    assert checked >= 10 and changed >= checked // 2


def test_openspiels_ismcts_bot_plays_a_whole_game(spiel: Any) -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = spiel_game(spiel, "nepali", "rounds:2")
    rng = np.random.RandomState(4)
    bot = ismcts.ISMCTSBot(game=game, evaluator=mcts.RandomRolloutEvaluator(1, np.random.RandomState(5)),
                           uct_c=2.0, max_simulations=8, random_state=np.random.RandomState(6))
    state = game.new_initial_state()
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node():
            cards, chances = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(cards, p=chances)))
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            searched += 1
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert searched == 2 * 14
    results = state.table.results
    assert state.returns()[0] == sum(result.scores[0] for result in results) / 10


# -- the example -----------------------------------------------------------------------------------


def test_the_training_example_trains_then_enters_its_policy_in_a_tournament(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "train_policy.py"), "--seconds", "2",
                           "--deal-sets", "2", "--results", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "trained" in done.stdout and "episodes" in done.stdout
    standings = done.stdout[done.stdout.index("standings"):]
    for name in ("policy", "heuristic", "house-a", "house-b"):
        assert name in standings
    played = records(tmp_path / "out")
    assert len({record["game"] for record in played}) == 2 * 4
    # The policy's version is the start of its weights' SHA-256: the records say which weights played.
    digest = hashlib.sha256((tmp_path / "out" / "policy.npz").read_bytes()).hexdigest()[:16]
    finals = [record for record in played if record["final"]]
    assert {record["versions"][record["seats"].index("policy")] for record in finals} == {digest}
    assert cli("verify", tmp_path / "out").returncode == 0


@pytest.mark.slow
def test_the_maskable_ppo_example_trains_a_policy_that_beats_its_untrained_start(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib", reason="the MaskablePPO example needs the sb3 extra: pip install -e '.[sb3]'")
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "train_maskable_ppo.py"), "--seconds", "20",
                           "--eval-games", "24", "--out", str(tmp_path / "ppo")],
                          capture_output=True, text=True, timeout=600, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    before = float(re.search(r"untrained: mean game total ([-+.0-9]+)", done.stdout).group(1))  # type: ignore[union-attr]
    after = float(re.search(r"steps: mean game total ([-+.0-9]+)", done.stdout).group(1))  # type: ignore[union-attr]
    assert after > before + 5, done.stdout  # the same 24 games, against the same bots, before and after
    # The bot file plays the policy in a tournament; its version names the model's weights.
    names = ("ppo", "r2", "r3", "r4")
    config = tournament_text(names, seed=2, deal_sets=1, ppo=f"{tmp_path / 'ppo' / 'bot.py'}:MaskablePPO")
    summary = run(write(tmp_path / "t.toml", config), tmp_path / "out")
    assert (summary.played, summary.faults) == (4, 0)
    digest = hashlib.sha256((tmp_path / "ppo" / "model.zip").read_bytes()).hexdigest()[:16]
    finals = [record for record in records(tmp_path / "out") if record["final"]]
    assert {record["versions"][record["seats"].index("ppo")] for record in finals} == {digest}
