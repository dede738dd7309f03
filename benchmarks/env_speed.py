"""The PettingZoo environment's steps per second beside the rules core's decisions per second, in one run.

A step is one decision of a seated agent: ``env.last()``, a uniformly random action among those the
mask allows, ``env.step(action)`` (the steps of terminated agents at the end of a game are not
counted; their time is). Each environment plays whole seeded games of a seed of its own (so neither is
dealt the deals the other has just dealt, which the core keeps), a new seeded deal each round; the
rules core is measured as ``benchmarks/engine.py`` measures it (its ``fresh`` mode, a new seeded deal
for every deal, random legal calls and cards through ``Round.playout``), and a deal is 56 decisions
(4 calls, 52 cards). The modes take turns in short slices and count CPU time, as ``engine.py``'s do,
so that a machine shared with other work slows them alike. Prints the median of the repetitions of
``raw_env`` and of ``env()`` (the order-enforcing wrapper), and their ratio to the core's rate (target
>= 0.3).

With ``--clones``, it measures the OpenSpiel game's states instead (the ``openspiel`` extra): for each
round of a seeded game played at random, the clones per CPU second of a state 20 cards into the round
(``state.clone()``, what ISMCTS and MCTS do at every simulation) and the actions applied per CPU second
from there (a clone played to the end of the round, each action a random legal one), the median of the
repetitions, and round 5's clone rate as a share of round 1's (target >= 0.5: a state late in a game
clones about as fast as an early one).

With ``--parts``, it prints where ``raw_env``'s step goes: the wall-clock microseconds per step of the
harness's draw from the mask, of ``last()``, of ``step()`` (apart: the steps that end a round, which
deal the next one), of ``reset()`` and the terminated agents' steps, each call timed on its own with the
timer's own cost taken out; then the core's microseconds per decision and the step time 0.3 × would need.

    python benchmarks/env_speed.py [--seconds 2] [--repeats 5] [--profile nepali] [--clones | --parts]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from arena.core.rules import Rules  # noqa: E402
from arena.core.views import Phase  # noqa: E402
from arena.envs import callbreak_v0  # noqa: E402
from benchmarks.engine import Mode  # noqa: E402

TARGET = 0.3
DECISIONS_PER_DEAL = 56
SLICE = 280
"""Decisions per turn of a mode: a game of five rounds."""


class EnvMode:
    """Random legal play through an environment, resumable a slice of steps at a time."""

    def __init__(self, environment: Any, seed: int) -> None:
        self.env = environment
        self.env.reset(seed=seed)
        self.random = random.Random(7).random
        self.steps = 0
        self.cpu = 0.0

    def play(self, steps: int) -> None:
        env, draw = self.env, self.random
        start = time.process_time()
        done = 0
        while done < steps:
            observation, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                if not env.agents:
                    env.reset()
                continue
            legal = observation["action_mask"].nonzero()[0]
            env.step(int(legal[int(draw() * len(legal))]))
            done += 1
        self.steps += done
        self.cpu += time.process_time() - start


def environments(profile: str) -> tuple[EnvMode, EnvMode]:
    """``raw_env`` and ``env()``, each playing a seed of its own (and not the core's mode's seed 1): the core keeps
    recent seeded deals, so an environment playing deals just dealt would be spared the dealing the core's mode
    pays for at every deal."""
    return EnvMode(callbreak_v0.raw_env(profile), seed=2), EnvMode(callbreak_v0.env(profile), seed=3)


def repetition(profile: str, seconds: float) -> dict[str, float]:
    """Decisions (or steps) per CPU second of the core and of both environments, taking turns."""
    rules = Rules.profile(profile)
    engine = Mode(rules, "fresh")
    raw, wrapped = environments(profile)
    while min(engine.cpu, raw.cpu, wrapped.cpu) < seconds:
        engine.play(SLICE // DECISIONS_PER_DEAL)
        raw.play(SLICE)
        wrapped.play(SLICE)
    return {"engine": engine.deals * DECISIONS_PER_DEAL / engine.cpu, "raw_env": raw.steps / raw.cpu,
            "env": wrapped.steps / wrapped.cpu}


CLONE_TARGET = 0.5


def spiel_rates(profile: str, seconds: float) -> dict[int, tuple[float, float]]:
    """By round: clones per CPU second of a state 20 cards into the round, and actions applied per CPU second."""
    import pyspiel

    import arena.envs.openspiel  # noqa: F401  (registers the game)

    rng = random.Random(3)
    state = pyspiel.load_game("python_callbreak", {"profile": profile}).new_initial_state()
    marks = {}
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice([card for card, _p in state.chance_outcomes()]))
            continue
        table = state.table
        if len(table.round.played) == 20 and table.round_number not in marks:
            marks[table.round_number] = state.clone()
        state.apply_action(rng.choice(state.legal_actions()))
    out = {}
    for round_number, mark in sorted(marks.items()):
        clones, start = 0, time.process_time()
        while time.process_time() - start < seconds:
            for _ in range(100):
                mark.clone()
            clones += 100
        clone_rate = clones / (time.process_time() - start)
        applied, spent = 0, 0.0
        while spent < seconds:
            twin = mark.clone()
            start = time.process_time()
            while not twin.is_terminal() and twin.table.round_number == round_number:
                twin.apply_action(rng.choice(twin.legal_actions()))
                applied += 1
            spent += time.process_time() - start
        apply_rate = applied / spent
        out[round_number] = (clone_rate, apply_rate)
    return out


def clones_main(args: argparse.Namespace) -> int:
    runs = [spiel_rates(args.profile, args.seconds / 2) for _ in range(args.repeats)]
    rounds = sorted(runs[0])
    print("round   clones per CPU second   actions applied per CPU second")
    for round_number in rounds:
        clone = statistics.median(run[round_number][0] for run in runs)
        applied = statistics.median(run[round_number][1] for run in runs)
        print(f"{round_number:>5} {clone:>23,.0f} {applied:>32,.0f}")
    share = statistics.median(run[rounds[-1]][0] / run[rounds[0]][0] for run in runs)
    print(f"round {rounds[-1]} clones at {share:.2f} × round {rounds[0]}'s rate (median of the repetitions; "
          f"target >= {CLONE_TARGET})")
    return 0


PARTS = ("the harness's draw from the mask", "last()", "step(), a call or a card", "step(), the round's end",
         "reset() and terminated agents' steps")


def step_parts(profile: str, seconds: float, slices: int = 1) -> tuple[dict[str, float], dict[str, int], int]:
    """Nanoseconds spent in each of :data:`PARTS` over ``seconds`` of CPU time of random play through ``raw_env``
    (whole slices of :data:`SLICE` steps, ``slices`` at least), the timer's own cost taken out; the calls timed in
    each part; and the steps (as :class:`EnvMode` counts them: a terminated agent's step is not one)."""
    clock = time.perf_counter_ns
    start = clock()
    for _ in range(10_000):
        clock()
    tick = (clock() - start) / 10_000  # one call of the timer; each part below is timed by two
    env = callbreak_v0.raw_env(profile)
    env.reset(seed=2)
    draw = random.Random(7).random
    spent, calls = dict.fromkeys(PARTS, 0.0), dict.fromkeys(PARTS, 0)
    draw_part, last_part, step_part, end_part, rest_part = PARTS
    steps, cpu = 0, time.process_time()
    while steps < slices * SLICE or time.process_time() - cpu < seconds:
        goal = steps + SLICE
        while steps < goal:
            rnd = env.game.round  # to tell, after the step, a step that ended this round (outside the timed parts)
            a = clock()
            observation, _reward, terminated, truncated, _info = env.last()
            b = clock()
            spent[last_part] += b - a - tick
            if terminated or truncated:
                env.step(None)
                if not env.agents:
                    env.reset()
                spent[rest_part] += clock() - b - tick
                calls[rest_part] += 1
                continue
            legal = observation["action_mask"].nonzero()[0]
            action = int(legal[int(draw() * len(legal))])
            c = clock()
            env.step(action)
            d = clock()
            spent[draw_part] += c - b - tick
            part = end_part if rnd.phase is Phase.OVER else step_part
            spent[part] += d - c - tick
            calls[part] += 1
            steps += 1
    calls[draw_part] = steps
    calls[last_part] = steps + calls[rest_part]
    return spent, calls, steps


def parts_main(args: argparse.Namespace) -> int:
    runs = []
    for _ in range(args.repeats):
        engine = Mode(Rules.profile(args.profile), "fresh")
        while engine.cpu < args.seconds / 2:
            engine.play(SLICE // DECISIONS_PER_DEAL)
        spent, _calls, steps = step_parts(args.profile, args.seconds / 2)
        runs.append(({part: spent[part] / steps / 1000 for part in PARTS},
                     engine.cpu / (engine.deals * DECISIONS_PER_DEAL) * 1e6))
    print("where a step of callbreak_v0.raw_env goes, in microseconds of the clock per step (median of the "
          "repetitions):")
    total = 0.0
    for part in PARTS:
        value = statistics.median(run[0][part] for run in runs)
        total += value
        print(f"  {part:<40} {value:>6.2f}")
    print(f"  {'all of them':<40} {total:>6.2f}")
    core = statistics.median(run[1] for run in runs)
    print(f"the rules core (engine.py, fresh deals): {core:.2f} microseconds of CPU per decision; {TARGET} × its "
          f"decisions per second is a step in {core / TARGET:.2f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds of each mode in one repetition")
    parser.add_argument("--repeats", type=int, default=5, help="timed repetitions (the median is reported)")
    parser.add_argument("--profile", default="nepali", help="rules profile to play")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--clones", action="store_true", help="the OpenSpiel game's clones and actions by round")
    modes.add_argument("--parts", action="store_true", help="where raw_env's step goes, part by part")
    args = parser.parse_args(argv)
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}, profile {args.profile}")
    if args.clones:
        return clones_main(args)
    if args.parts:
        return parts_main(args)
    runs = [repetition(args.profile, args.seconds) for _ in range(args.repeats)]
    engine = statistics.median(r["engine"] for r in runs)
    print(f"rules core (engine.py, fresh deals)  {engine:>10,.0f} decisions per CPU second")
    for name in ("raw_env", "env"):
        rate = statistics.median(r[name] for r in runs)
        ratio = statistics.median(r[name] / r["engine"] for r in runs)
        print(f"callbreak_v0.{name + '()' if name == 'env' else name:<23} {rate:>10,.0f} steps per CPU second, "
              f"{ratio:.2f} × the core's decisions (median of the repetitions; target >= {TARGET})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
