"""Trains sb3-contrib's MaskablePPO on the single seat, writes the policy as a bot, and says how to rate it.

    .venv/bin/pip install -e '.[rl,sb3]'     # stable-baselines3, sb3-contrib, torch
    .venv/bin/python examples/train_maskable_ppo.py [--seconds 600] [--out results/maskable-ppo] [--seed 1]
    .venv/bin/callbreak-arena rate results/maskable-ppo/bot.py:MaskablePPO

The environment is ``gymnasium.make("callbreak/SingleSeat-v0")`` wrapped in :class:`arena.envs.ActionMasks`,
which MaskablePPO takes as it is: the observation vector of :mod:`arena.envs.layout`, and the legal actions
from ``action_masks()``. Four copies play the four seats against ``--opponents`` (the heuristic sample bot
and two house bots by default), on the deal sets of seeds ``seed + 1`` to ``seed + 4``; the reward is each
round's score in points. Training stops after ``--seconds`` of this process's CPU time (``--timesteps`` stops
it sooner), so a machine shared with other work trains as far, only later; torch is kept to one thread.

Before and after training the greedy policy (the legal action of highest probability) plays the same
``--eval-games`` games, the deal sets of seed ``seed + 100`` at each seat in turn against the same
opponents, and the script prints its mean game total on them both times: the improvement over its own
untrained start, on the same cards.

It writes to ``--out``: ``model.zip`` (MaskablePPO's own file) and ``bot.py``, the greedy policy entered as a
bot with :func:`arena.envs.policy_bot` (its version the first 16 hex digits of the model file's SHA-256),
which ``callbreak-arena rate`` places on the zoo's scale, a tournament seats with
``python = "results/maskable-ppo/bot.py:MaskablePPO"``, and ``python bot.py --arena HOST:PORT`` connects to
an arena over gRPC.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import time
from pathlib import Path
from typing import Any

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv

from arena.envs import ActionMasks

ROOT = Path(__file__).resolve().parent.parent
ENV_ID = "callbreak/SingleSeat-v0"

BOT_FILE = '''"""The greedy MaskablePPO policy of model.zip beside this file, as a bot (written by
examples/train_maskable_ppo.py): ``callbreak-arena rate {path}:MaskablePPO``, or
``python {path} --arena HOST:PORT`` over gRPC."""

import threading
from pathlib import Path

from sb3_contrib import MaskablePPO as _PPO

from arena.botkit import run
from arena.envs import policy_bot

_MODEL = _PPO.load(Path(__file__).with_name("model.zip"), device="cpu")
_ONE_AT_A_TIME = threading.Lock()  # predict() keeps the mask on the model: tables played at once must take turns


def greedy(observation):
    with _ONE_AT_A_TIME:
        action, _state = _MODEL.predict(observation["observation"], action_masks=observation["action_mask"] == 1,
                                        deterministic=True)
    return int(action)


MaskablePPO = policy_bot(greedy, name="maskable-ppo", version="{version}")

if __name__ == "__main__":
    raise SystemExit(run(MaskablePPO))
'''


class Clock(BaseCallback):  # type: ignore[misc]
    """Stops training after ``seconds`` of this process's CPU time."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.start = time.process_time()

    def _on_step(self) -> bool:
        return time.process_time() - self.start < self.seconds


def seat_env(seat: int, opponents: list[str], seed: int) -> gymnasium.Env[Any, Any]:
    return ActionMasks(gymnasium.make(ENV_ID, seat=seat, opponents=opponents, seed=seed))


def evaluate(model: Any, opponents: list[str], seed: int, games: int) -> float:
    """The greedy policy's mean game total, in points, over ``games`` games: deal set k of ``seed`` at seat k % 4."""
    tables = [seat_env(seat, opponents, seed) for seat in range(4)]
    total = 0.0
    for game in range(games):
        env = tables[game % 4]
        observation, _info = env.reset(seed=seed, options={"deal_set": game + 1})
        done = False
        while not done:
            action, _state = model.predict(observation, action_masks=env.get_wrapper_attr("action_masks")(),
                                           deterministic=True)
            observation, reward, done, _truncated, _info = env.step(int(action))
            total += float(reward)
    return total / games


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=600.0, help="how long to train (CPU seconds)")
    parser.add_argument("--timesteps", type=int, default=10**9, help="stop after this many steps, if sooner")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "maskable-ppo",
                        help="the folder for model.zip and bot.py")
    parser.add_argument("--seed", type=int, default=1, help="training uses deal sets of seeds seed+1 to seed+4")
    parser.add_argument("--opponents", default="heuristic,house,house", help="the three opponents, comma-separated")
    parser.add_argument("--eval-games", type=int, default=100, help="games of the before and after evaluation")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print(f"machine: {platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, torch {torch.__version__}", flush=True)
    opponents = args.opponents.split(",")
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    envs = DummyVecEnv([lambda seat=seat: seat_env(seat, opponents, args.seed + 1 + seat) for seat in range(4)])
    model = MaskablePPO("MlpPolicy", envs, seed=args.seed, device="cpu", n_steps=512, batch_size=256,
                        learning_rate=3e-4, gamma=0.99, ent_coef=0.01, verbose=0)
    before = evaluate(model, opponents, args.seed + 100, args.eval_games)
    print(f"untrained: mean game total {before:+.2f} points over {args.eval_games} games against "
          f"{', '.join(opponents)}", flush=True)
    began, cpu = time.monotonic(), time.process_time()
    model.learn(total_timesteps=args.timesteps, callback=Clock(args.seconds))
    seconds, cpu = time.monotonic() - began, time.process_time() - cpu
    after = evaluate(model, opponents, args.seed + 100, args.eval_games)
    print(f"trained for {cpu:.0f} CPU seconds ({seconds:.0f} s of the clock), {model.num_timesteps} steps: "
          f"mean game total {after:+.2f} points over "
          f"the same {args.eval_games} games (untrained {before:+.2f})", flush=True)

    weights = out / "model.zip"
    model.save(weights)
    version = hashlib.sha256(weights.read_bytes()).hexdigest()[:16]
    bot = out / "bot.py"
    bot.write_text(BOT_FILE.replace("{path}", str(bot)).replace("{version}", version), encoding="utf-8")
    print(f"the policy is in {weights} (version {version}), the bot in {bot}; rate it on the zoo's scale with\n"
          f"  .venv/bin/callbreak-arena rate {bot}:MaskablePPO", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
