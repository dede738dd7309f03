"""The PettingZoo environment's steps per second beside the rules core's decisions per second, in one run.

A step is one decision of a seated agent: ``env.last()``, a uniformly random action among those the
mask allows, ``env.step(action)`` (the steps of terminated agents at the end of a game are not
counted; their time is). The environment plays whole seeded games, a new seeded deal each round; the
rules core is measured as ``benchmarks/engine.py`` measures it (its ``fresh`` mode, a new seeded deal
for every deal, random legal calls and cards through ``Round.playout``), and a deal is 56 decisions
(4 calls, 52 cards). The modes take turns in short slices and count CPU time, as ``engine.py``'s do,
so that a machine shared with other work slows them alike. Prints the median of the repetitions of
``raw_env`` and of ``env()`` (the order-enforcing wrapper), and their ratio to the core's rate (target
>= 0.2).

    python benchmarks/env_speed.py [--seconds 2] [--repeats 5] [--profile nepali]
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
from arena.envs import callbreak_v0  # noqa: E402
from benchmarks.engine import Mode  # noqa: E402

TARGET = 0.2
DECISIONS_PER_DEAL = 56
SLICE = 280
"""Decisions per turn of a mode: a game of five rounds."""


class EnvMode:
    """Random legal play through an environment, resumable a slice of steps at a time."""

    def __init__(self, environment: Any) -> None:
        self.env = environment
        self.env.reset(seed=1)
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


def repetition(profile: str, seconds: float) -> dict[str, float]:
    """Decisions (or steps) per CPU second of the core and of both environments, taking turns."""
    rules = Rules.profile(profile)
    engine = Mode(rules, "fresh")
    raw = EnvMode(callbreak_v0.raw_env(profile))
    wrapped = EnvMode(callbreak_v0.env(profile))
    while min(engine.cpu, raw.cpu, wrapped.cpu) < seconds:
        engine.play(SLICE // DECISIONS_PER_DEAL)
        raw.play(SLICE)
        wrapped.play(SLICE)
    return {"engine": engine.deals * DECISIONS_PER_DEAL / engine.cpu, "raw_env": raw.steps / raw.cpu,
            "env": wrapped.steps / wrapped.cpu}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds of each mode in one repetition")
    parser.add_argument("--repeats", type=int, default=5, help="timed repetitions (the median is reported)")
    parser.add_argument("--profile", default="nepali", help="rules profile to play")
    args = parser.parse_args(argv)
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}, profile {args.profile}")
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
