"""Golden playthroughs: seeded tournaments whose records, standings and replays must not change.

One small tournament under each rules profile, one under each format and one under ``rotation = "once"``, every
one played by the
command line with in-process sample bots (deterministic for a seed) at one table at a time (so the
file's order is the plan's, not the order in which concurrent games happen to end), are compared byte for byte
with the files kept in ``tests/golden/``: each record line (its ``timings`` aside, the one field
that measures the machine), the manifest, the standings in every form and the replay of the first
game. A change that alters what a seed plays, or how a record is written, fails here with the name
of the file and the first line that differs.

A change that means to alter them (a new record field, a rules fix) regenerates the files with
``UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`` and shows the difference in its commit.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.helpers.runs import cli

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
TIMINGS = re.compile(r'"timings":\{[^{}]*\}\}$')
"""The last field of a record: how long each seat thought, the one thing a second run changes."""

BOTS = """
[[bots]]
name = "rand-a"
python = "sample_bots.random_bot:RandomBot"
seed = 1

[[bots]]
name = "heur-b"
python = "sample_bots.heuristic_bot:HeuristicBot"

[[bots]]
name = "rand-c"
python = "sample_bots.random_bot:RandomBot"
seed = 3

[[bots]]
name = "heur-d"
python = "sample_bots.heuristic_bot:HeuristicBot"
options = { aggression = 0.5 }
"""

FIFTH = """
[[bots]]
name = "rand-e"
python = "sample_bots.random_bot:RandomBot"
seed = 5
"""

PROFILES = ("nepali", "master", "bhoos", "pagat", "strict", "dy")

FORMATS = {
    "round-robin": ("", BOTS + FIFTH),
    "gauntlet": ('[gauntlet]\nchampion = "heur-b"\n', BOTS + FIFTH),
    "head-to-head": ('[head-to-head]\na = "heur-b"\nb = "heur-d"\nopponents = ["rand-a", "rand-c"]\n', BOTS),
    "swiss": ("[swiss]\nopening_rounds = 1\n", BOTS + FIFTH),
    "sprt": ('[sprt]\na = "heur-b"\nb = "rand-a"\nopponents = ["rand-c", "heur-d"]\n'
             "delta0 = 0.0\ndelta1 = 1.0\nburn_in = 10\n", BOTS),
}

FILES = ("manifest.json", "standings.txt", "standings.md", "standings.json", "standings.csv")


def config(name: str, fmt: str, profile: str, tables: str, bots: str, deal_sets: int) -> str:
    rotation = f'rotation = "{ROTATIONS[name]}"\n' if name in ROTATIONS else ""
    return (f'[tournament]\nname = "{name}"\nseed = 2026\ndeal_sets = {deal_sets}\nformat = "{fmt}"\n{rotation}'
            f'concurrency = 1\n\n[rules]\nprofile = "{profile}"\n\n{tables}\n{bots}')


CASES = {f"profile-{p}": ("round-robin", p, "", BOTS, 1) for p in PROFILES}
CASES |= {f"format-{f}": (f, "nepali", tables, bots, 12 if f == "sprt" else 2) for f, (tables, bots) in FORMATS.items()}
CASES["rotation-once"] = ("round-robin", "nepali", "", BOTS, 3)
ROTATIONS = {"rotation-once": "once"}
"""The cases played under a rotation of their own (the others: the default, ``cyclic``)."""


def normalised_records(folder: Path) -> str:
    lines = (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return "".join(TIMINGS.sub('"timings":{}}', line) + "\n" for line in lines)


def outputs(folder: Path) -> dict[str, str]:
    """Every golden file of a finished results folder, by name, as text."""
    out = {"records.jsonl": normalised_records(folder)}
    for name in FILES:
        out[name] = (folder / name).read_text(encoding="utf-8")
    first = next(iter(out["records.jsonl"].splitlines()))
    game = re.search(r'"game":"([^"]+)"', first)
    assert game, first
    replay = cli("replay", folder, game.group(1))
    assert replay.returncode == 0, replay.stderr
    out["replay.txt"] = replay.stdout.replace(str(folder), "RESULTS")
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_playthrough(case: str, tmp_path: Path) -> None:
    fmt, profile, tables, bots, deal_sets = CASES[case]
    toml = tmp_path / f"{case}.toml"
    toml.write_text(config(case, fmt, profile, tables, bots, deal_sets), encoding="utf-8")
    folder = tmp_path / "results"
    done = cli("run", toml, "--results", folder)
    assert done.returncode == 0, done.stderr
    got = outputs(folder)
    kept = GOLDEN / case
    if UPDATE:
        kept.mkdir(parents=True, exist_ok=True)
        for name, text in got.items():
            (kept / name).write_text(text, encoding="utf-8")
        return
    for name, text in got.items():
        want = (kept / name).read_text(encoding="utf-8")
        if text != want:
            for number, (a, b) in enumerate(zip(want.splitlines(), text.splitlines(), strict=False), 1):
                assert a == b, f"{case}/{name} line {number} differs from tests/golden"
            assert text == want, f"{case}/{name}: a different number of lines than tests/golden"


def test_golden_files_are_all_used() -> None:
    """Every kept case is still played (a renamed case would otherwise leave a stale folder behind)."""
    if UPDATE:
        pytest.skip("the folders are being written")
    assert sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()) == sorted(CASES)
