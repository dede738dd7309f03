"""Memory and time of one standings pass over a large results folder.

A small real tournament is played first (five in-process bots, a duplicate round robin of two deal
sets: 100 record lines a schedule round); its lines are then replicated, schedule round after
schedule round, with new round numbers, deal sets, block and game ids, into a synthetic results
folder of N recorded rounds (lines of records.jsonl), with a manifest whose plan lists every block.
The pass itself (``write_standings``: every standings file and head_to_head.csv, one streaming read
of the records) runs in a fresh process, which reports its peak resident memory (getrusage) and its
seconds; the memory of the interpreter and its imports before the pass is printed beside it.

    python benchmarks/standings_memory.py                 # N = 100,000
    python benchmarks/standings_memory.py --rounds 1000000
    python benchmarks/standings_memory.py --rounds 20000 50000 --keep /tmp/folders
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from arena.event.plan.manifest import Manifest
from arena.event.plan.plan import Plan
from arena.event.plan.schedule import Block

TARGET_MB = 500
"""A pass over 1,000,000 recorded rounds should stay under this."""

CONFIG = """
[tournament]
name = "memory"
seed = 5
deal_sets = 2
concurrency = 4

[[bots]]
name = "heuristic"
python = "sample_bots.heuristic_bot:HeuristicBot"
seed = 1
[[bots]]
name = "bold"
python = "sample_bots.heuristic_bot:HeuristicBot"
seed = 2
options = {{ aggression = 1.0 }}
[[bots]]
name = "r1"
python = "sample_bots.random_bot:RandomBot"
seed = 3
[[bots]]
name = "r2"
python = "sample_bots.random_bot:RandomBot"
seed = 4
[[bots]]
name = "r3"
python = "sample_bots.random_bot:RandomBot"
seed = 5
"""


def play_template(folder: Path) -> None:
    """The small real run whose lines are replicated."""
    from arena.event.run.tournament import Tournament
    from arena.event.setup.config import parse_config

    asyncio.run(Tournament(parse_config(CONFIG.format()), folder).run())


def synthesise(template: Path, folder: Path, lines: int) -> int:
    """Writes a results folder of at least ``lines`` record lines by replicating the template's schedule
    rounds; returns the number of lines written."""
    manifest: dict[str, Any] = json.loads((template / "manifest.json").read_text(encoding="utf-8"))
    by_round: dict[int, list[dict[str, Any]]] = {}
    for text in (template / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(text)
        by_round.setdefault(record["schedule_round"], []).append(record)
    plan_blocks: dict[int, list[list[Any]]] = {}
    for block in Manifest.from_dict(manifest).plan.blocks():
        plan_blocks.setdefault(block.round, []).append(block.to_list())
    sources = sorted(by_round)
    rounds = -(-lines // len(by_round[sources[0]]))
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    blocks: list[list[Any]] = []
    with (folder / "records.jsonl").open("w", encoding="utf-8") as out:
        for number in range(1, rounds + 1):
            source = sources[(number - 1) % len(sources)]
            for record in by_round[source]:
                block = f"r{number}-g{record['group']}-d{number}"
                _, round_number, attempt = record["deal"].split(".")
                out.write(json.dumps({
                    **record, "game": f"{block}-p{record['rotation']}", "block": block, "schedule_round": number,
                    "deal_set": number, "deal": f"{number}.{round_number}.{attempt}",
                }, separators=(",", ":")) + "\n")
                written += 1
            blocks += [[number, group, number, order, dealer] for _, group, _, order, dealer in plan_blocks[source]]
    # The synthetic blocks follow no design: the plan lists them all (as a swiss plan does).
    template_plan = Manifest.from_dict(manifest).plan
    manifest["plan"] = Plan(template_plan.rotation, rounds, False, False, [Block.from_list(b) for b in blocks],
                            template_plan.field).to_dict()
    manifest["config"]["deal_sets"] = rounds
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return written


def measure(folder: Path) -> dict[str, float]:
    """Run in a fresh process: the pass's seconds and the process's peak RSS (MB), before and after."""
    from arena.rating.report import write_standings

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    write_standings(folder)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "before_mb": before}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, nargs="+", default=[100_000],
                        help="recorded rounds (record lines) per folder (default: 100000; the target is for 1000000)")
    parser.add_argument("--keep", type=Path, help="build the folders here and keep them (default: a temporary folder)")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args(argv)
    if args.measure is not None:
        print(json.dumps(measure(args.measure)))
        return 0
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or Path(scratch)
        template = base / "template"
        if not (template / "records.jsonl").exists():
            play_template(template)
        for lines in args.rounds:
            folder = base / f"rounds-{lines}"
            start = time.perf_counter()
            written = synthesise(template, folder, lines)
            size = (folder / "records.jsonl").stat().st_size / 1e6
            built = time.perf_counter() - start
            child = subprocess.run([sys.executable, __file__, "--measure", str(folder)], capture_output=True,
                                   text=True, check=True, env={**os.environ, "PYTHONPATH": str(Path.cwd())})
            figures = json.loads(child.stdout)
            verdict = "" if lines < 1_000_000 else (
                f" (target {TARGET_MB} MB: {'met' if figures['peak_mb'] < TARGET_MB else 'missed'})")
            print(f"{written:>9,} recorded rounds ({size:,.0f} MB of records, built in {built:.0f} s): "
                  f"pass {figures['seconds']:.1f} s, {written / figures['seconds']:,.0f} rounds/s, "
                  f"peak RSS {figures['peak_mb']:.0f} MB ({figures['before_mb']:.0f} MB before the pass){verdict}")
            if args.keep is None:
                for path in folder.iterdir():
                    path.unlink()
                folder.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
