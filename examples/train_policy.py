"""Trains a small policy with numpy, then enters it in a duplicate tournament against the sample bots.

    python examples/train_policy.py [--seconds 60] [--deal-sets 20] [--results results/train-policy]
                                    [--seed 1] [--profile nepali]

The policy is linear: the logits of the 66 actions are ``W @ x + b`` for the observation vector ``x``
of :mod:`arena.envs.layout`, with a softmax over the actions the mask allows. It learns by REINFORCE
in :class:`arena.envs.SingleSeat` against the heuristic sample bot and two house bots, taking each of
the four seats in turn (deal sets of seeds ``seed + 1`` to ``seed + 4``, so none of the tournament's
deals): every decision of a round is credited with the seat's score of that round in points, less a
running mean of round scores, and the weights move by Adam after every batch of games.

After ``--seconds`` of training it writes to the results folder ``policy.npz`` (the weights) and
``tournament.toml``, a duplicate round robin on ``--deal-sets`` deal sets of seed ``--seed`` in which
``policy`` (the policy made greedy, the legal action of highest logit, entered with
:func:`arena.envs.policy_bot`) meets ``heuristic``, ``house-a`` and ``house-b``. It runs that with
``callbreak-arena run`` into the same folder, which prints the standings; the run starts afresh each
time, as the weights are new. The games are checked with ``callbreak-arena verify DIR``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from arena.envs import ACTIONS, OBSERVATION_SIZE, Observation, PolicyBot, SingleSeat, policy_bot

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = "examples/train_policy.py"
"""This file, as the tournament names it (the run's working folder is the repository's root)."""
OPPONENTS = ("heuristic", "house", "house")
"""The sample bots the policy trains against, in the seats after its own."""
BATCH = 8
"""Games per update of the weights."""
Floats = npt.NDArray[np.float32]


class LinearPolicy:
    """A softmax over the legal actions of ``W @ x + b``."""

    def __init__(self, weights: Floats | None = None, bias: Floats | None = None) -> None:
        self.weights = weights if weights is not None else np.zeros((ACTIONS, OBSERVATION_SIZE), np.float32)
        self.bias = bias if bias is not None else np.zeros(ACTIONS, np.float32)

    def logits(self, observation: Observation) -> Floats:
        """The logits of the legal actions; the others are minus infinity."""
        logits: Floats = self.weights @ observation["observation"] + self.bias
        logits[observation["action_mask"] == 0] = -np.inf
        return logits

    def probabilities(self, observation: Observation) -> Floats:
        """The probability of each action (0 for those the mask forbids)."""
        logits = self.logits(observation)
        exp: Floats = np.exp(logits - logits.max())
        exp /= exp.sum()
        return exp

    def greedy(self, observation: Observation) -> int:
        """The legal action of highest logit."""
        return int(np.argmax(self.logits(observation)))

    def save(self, path: Path) -> None:
        np.savez(path, weights=self.weights, bias=self.bias)

    @classmethod
    def load(cls, path: str | Path) -> LinearPolicy:
        with np.load(path) as saved:
            return cls(saved["weights"].astype(np.float32), saved["bias"].astype(np.float32))


class Adam:
    """Adam steps of one array, ascending its gradient."""

    def __init__(self, shape: tuple[int, ...], rate: float) -> None:
        self.rate = rate
        self.first = np.zeros(shape, np.float32)
        self.second = np.zeros(shape, np.float32)
        self.steps = 0

    def step(self, value: Floats, gradient: Floats) -> None:
        self.steps += 1
        self.first = 0.9 * self.first + 0.1 * gradient
        self.second = 0.999 * self.second + 0.001 * gradient * gradient
        first = self.first / (1 - 0.9 ** self.steps)
        second = self.second / (1 - 0.999 ** self.steps)
        value += (self.rate * first / (np.sqrt(second) + 1e-8)).astype(np.float32)


class Trainer:
    """REINFORCE with a running baseline, one seat at a time, in batches of :data:`BATCH` games."""

    def __init__(self, profile: str, seed: int, rate: float = 0.003) -> None:
        self.policy = LinearPolicy()
        self.tables = [SingleSeat(seat, OPPONENTS, profile, seed=seed + 1 + seat) for seat in range(4)]
        self.rng = np.random.default_rng(seed)
        self.adam_w = Adam(self.policy.weights.shape, rate)
        self.adam_b = Adam(self.policy.bias.shape, rate)
        self.baseline = 0.0
        self.spread = 1.0
        self.totals: list[float] = []
        """The policy's game total in points, game by game."""

    def game(self) -> tuple[list[Floats], list[Floats], list[int], list[float]]:
        """One game at the next seat: each decision's vector, probabilities and action, and its round's score."""
        table = self.tables[len(self.totals) % 4]
        observation, _info = table.reset()
        vectors, probabilities, actions, rounds = [], [], [], []
        scores: list[float] = []
        done = False
        while not done:
            p = self.policy.probabilities(observation)
            action = int(np.searchsorted(np.cumsum(p), self.rng.random() * p.sum()))
            action = min(action, ACTIONS - 1)
            if not observation["action_mask"][action]:  # rounding at the top of the sum
                action = int(np.flatnonzero(observation["action_mask"])[-1])
            vectors.append(observation["observation"])
            probabilities.append(p)
            actions.append(action)
            rounds.append(len(scores))
            round_number = table.table.game.round_number
            observation, reward, done, _truncated, _info = table.step(action)
            if done or table.table.game.round_number != round_number:
                scores.append(reward)  # the step that ends a round is rewarded with the round's score
        self.totals.append(sum(scores))
        credit = [scores[r] if r < len(scores) else 0.0 for r in rounds]
        return vectors, probabilities, actions, credit

    def batch(self) -> None:
        """:data:`BATCH` games, then one step of the weights."""
        vectors: list[Floats] = []
        probabilities: list[Floats] = []
        actions: list[int] = []
        credit: list[float] = []
        for _ in range(BATCH):
            v, p, a, c = self.game()
            vectors += v
            probabilities += p
            actions += a
            credit += c
        scores = np.asarray(credit, np.float32)
        advantage = (scores - self.baseline) / self.spread
        # The running baseline and spread of round scores, updated after they are used.
        self.baseline = 0.9 * self.baseline + 0.1 * float(scores.mean())
        self.spread = 0.9 * self.spread + 0.1 * float(scores.std() + 1e-3)
        # d log p(a) / d logits = onehot(a) - p, zero outside the mask.
        step = -np.stack(probabilities)
        step[np.arange(len(actions)), actions] += 1.0
        step *= advantage[:, None] / len(actions)
        self.adam_w.step(self.policy.weights, step.T @ np.stack(vectors))
        self.adam_b.step(self.policy.bias, step.sum(axis=0))


@functools.lru_cache(maxsize=4)
def _loaded(path: str) -> tuple[LinearPolicy, str]:
    data = Path(path).read_bytes()
    return LinearPolicy.load(path), hashlib.sha256(data).hexdigest()[:16]


def trained_policy(seed: int = 0, weights: str = "policy.npz") -> PolicyBot:
    """The greedy policy of the weights file ``weights`` as a bot (a tournament's ``options``); its version
    is the start of the file's SHA-256, so the records say which weights played."""
    policy, digest = _loaded(weights)
    return policy_bot(policy.greedy, name="policy", version=digest)(seed)


def configuration(seed: int, deal_sets: int, profile: str, weights: Path) -> str:
    """The tournament: the policy against the heuristic sample bot and two house bots."""
    return (f'[tournament]\nname = "train-policy"\nseed = {seed}\ndeal_sets = {deal_sets}\nconcurrency = 1\n\n'
            f'[rules]\nprofile = "{profile}"\n\n'
            f'[[bots]]\nname = "policy"\npython = "{SCRIPT}:trained_policy"\n'
            f'options = {{ weights = "{weights.as_posix()}" }}\n\n'
            '[[bots]]\nname = "heuristic"\npython = "sample_bots.heuristic_bot:HeuristicBot"\nseed = 1\n\n'
            '[[bots]]\nname = "house-a"\npython = "arena.players.house:HouseBot"\nseed = 2\n\n'
            '[[bots]]\nname = "house-b"\npython = "arena.players.house:HouseBot"\nseed = 3\n')


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to train (wall-clock seconds)")
    parser.add_argument("--deal-sets", type=int, default=20, help="deal sets of the tournament (4 games each)")
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "train-policy",
                        help="the folder for the weights, the configuration and the tournament's results")
    parser.add_argument("--seed", type=int, default=1, help="the tournament's seed (training uses seed+1 to seed+4)")
    parser.add_argument("--profile", default="nepali", help="the rules profile")
    args = parser.parse_args(argv)
    folder: Path = args.results.resolve()
    folder.mkdir(parents=True, exist_ok=True)

    trainer = Trainer(args.profile, args.seed)
    start = time.monotonic()
    shown = start
    while True:
        trainer.batch()
        now = time.monotonic()
        if now - start >= args.seconds:
            break
        if now - shown >= 10:
            shown = now
            print(f"{len(trainer.totals)} games, mean game total of the last 100: "
                  f"{mean(trainer.totals[-100:]):+.2f} points", flush=True)
    totals = trainer.totals
    part = max(1, len(totals) // 10)
    print(f"trained for {time.monotonic() - start:.0f} s: {len(totals)} episodes (games) against "
          f"{', '.join(OPPONENTS)}; mean game total {mean(totals[:part]):+.2f} points in the first "
          f"{part} episodes, {mean(totals[-part:]):+.2f} in the last {part}")

    weights = folder / "policy.npz"
    trainer.policy.save(weights)
    config = folder / "tournament.toml"
    config.write_text(configuration(args.seed, args.deal_sets, args.profile, weights), encoding="utf-8")
    print(f"weights in {weights}; the tournament in {config}, its standings:", flush=True)
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(config), "--results", str(folder),
                           "--fresh", "--no-progress"], cwd=ROOT, check=False)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
