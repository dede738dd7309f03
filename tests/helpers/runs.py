"""Helpers of the tournament tests: configurations, runs in-process or through the command line,
and records compared without their timings."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.event.run.summary import RunSummary
from arena.event.run.tournament import Tournament
from arena.event.setup.config import load_config
from arena.rating.live import LiveJudge
from arena.rating.report import folder_report

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "helpers" / "arena_bots.py"
RANDOM = "sample_bots.random_bot:RandomBot"
"""The sample random bot in-process (it has the fast path)."""
NO_FAST = f"{BOTS}:NoFastRandom"
SLOW = f"{BOTS}:SlowRandom"
CRASHER = f"{BOTS}:Crasher"
STUBBORN = f"{BOTS}:Stubborn"
COMMAND = "{python} -m sample_bots.random_bot --arena {address} --seed {seed}"
"""The sample random bot as a process of its own, over gRPC."""
UNSANDBOXED = '\n[sandbox]\nmode = "off"\n'
KEPT = "fresh_process = false\n"
"""The ``[tournament]`` line that keeps each launched bot's process for the whole run: for the tests of that mode
(restarts, a token per run), and for tests about something else whose launched bots would otherwise pay a
process's start for every game (tests/test_fresh_process.py holds the default)."""
"""For launched test bots that tell the test what they saw through files outside their own folder, or
connect over TLS (a sandboxed bot has neither: tests/test_sandbox.py)."""


needs_zoo = pytest.mark.skipif(
    importlib.util.find_spec("pyspiel") is None,
    reason="a rating on the zoo seats its ismcts member, which needs the openspiel extra: "
           "pip install -e '.[openspiel]'")
"""For a test that rates a bot on the published zoo (every rating plays some of its blocks against ismcts)."""


def bot_tables(names: Sequence[str], kind: str = "python", spec: str = RANDOM, **special: str) -> str:
    """``[[bots]]`` tables: every bot ``kind = spec`` with seed = its position, unless ``special``
    gives it a spec of its own (still of ``kind``)."""
    out = []
    for seed, name in enumerate(names, start=1):
        out.append(f'\n[[bots]]\nname = "{name}"\n{kind} = "{special.get(name, spec)}"\nseed = {seed}\n')
    return "".join(out)


def tournament_text(
    names: Sequence[str] = ("r1", "r2", "r3", "r4"), *, name: str = "t", seed: int = 7, deal_sets: int = 2,
    concurrency: int = 2, kind: str = "python", spec: str = RANDOM, extra: str = "", tournament: str = "",
    **special: str,
) -> str:
    """A whole configuration; ``extra`` goes after ``[tournament]`` (other tables), ``tournament``
    inside it (more keys)."""
    deals = f"deal_sets = {deal_sets}\n" if deal_sets else ""
    return (f'[tournament]\nname = "{name}"\nseed = {seed}\n{deals}concurrency = {concurrency}\n{tournament}\n'
            f"[time]\ndeadline_ms = 10000\nabsent_after_s = 30\n{extra}\n"
            + bot_tables(names, kind, spec, **special))


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def run(config: Path, folder: Path, *, fresh: bool = False, serve: bool = False, timeout: float = 120) -> RunSummary:
    """Runs a tournament in this process, with the live judge the command line gives it."""
    loaded = load_config(config)
    tournament = Tournament(loaded, folder, fresh=fresh, serve=serve, judge=LiveJudge(folder, loaded))
    return asyncio.run(asyncio.wait_for(tournament.run(), timeout))


def finished_tournament(base: Path, seed: int) -> Path:
    """``base`` holding ``t.toml`` (4 random bots, 2 deal sets) and its finished ``results`` folder."""
    run(write(base / "t.toml", tournament_text(seed=seed)), base / "results")
    return base


def copy_results(finished: Path, into: Path) -> Path:
    """A private copy of a finished tournament's results folder, with its configuration beside it."""
    shutil.copy(finished / "t.toml", into / "t.toml")
    shutil.copytree(finished / "results", into / "results")
    return into / "results"


def cli(
    *args: str | Path, timeout: float = 120, cwd: Path = ROOT, env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``callbreak-arena ARGS`` as a process of its own, from the repository root (or ``cwd``), in
    this environment (or ``env``)."""
    return subprocess.run([sys.executable, "-m", "arena", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, check=False, env=env)


def records(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()]


def stripped(folder: Path) -> set[str]:
    """The record lines of a folder as a set, less their timings (the only field that may differ)."""
    out = set()
    for record in records(folder):
        record.pop("timings")
        out.add(json.dumps(record, sort_keys=True))
    return out


def stripped_list(folder: Path) -> list[str]:
    """:func:`stripped`, as a sorted list that counts duplicates."""
    lines = []
    for record in records(folder):
        record.pop("timings")
        lines.append(json.dumps(record, sort_keys=True))
    return sorted(lines)


def standings(folder: Path) -> Any:
    """The JSON report of a folder, as data."""
    return json.loads(folder_report(folder, "json"))


def games(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """The records by game id, in file order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for record in records(folder):
        out.setdefault(record["game"], []).append(record)
    return out


def keep_games(source: Path, target: Path, keep: int, torn: bool = False, partial: int = 0) -> list[str]:
    """A copy of ``source`` as if the run had stopped after ``keep`` games (in file order), with the
    first ``partial`` rounds of the next game and, if ``torn``, half of the round after them."""
    target.mkdir()
    shutil.copy(source / "manifest.json", target / "manifest.json")
    lines = (source / "records.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    order = list(games(source))
    kept = set(order[:keep])
    text = "".join(line for line in lines if json.loads(line)["game"] in kept)
    following = [line for line in lines if json.loads(line)["game"] == order[keep]]
    text += "".join(following[:partial])
    if torn:
        text += following[partial][: len(following[partial]) // 3]
    (target / "records.jsonl").write_text(text, encoding="utf-8")
    return order


def kinds_text(
    bots: Sequence[tuple[str, str, str]], *, name: str, seed: int, deal_sets: int = 1, concurrency: int = 2,
    rules: str = "", time: str = "deadline_ms = 2000", extra: str = "",
) -> str:
    """A configuration whose bots are given as (name, key, value) triples, one ``[[bots]]`` table each
    (``key`` is the bot's kind: ``python``, ``stdio``, ``bhoos``, ...)."""
    tables = "".join(f'\n[[bots]]\nname = "{n}"\n{key} = {json.dumps(value)}\nseed = {i}\n'
                     for i, (n, key, value) in enumerate(bots, start=1))
    return (f'[tournament]\nname = "{name}"\nseed = {seed}\ndeal_sets = {deal_sets}\nconcurrency = {concurrency}\n\n'
            f"[rules]\n{rules}\n\n[time]\n{time}\n{extra}\n" + tables)


def faults_of(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Every recorded fault by the name of the bot that made it."""
    out: dict[str, list[dict[str, Any]]] = {}
    for record in records(folder):
        for fault in record["faults"]:
            out.setdefault(record["seats"][fault["seat"]], []).append(fault)
    return out
