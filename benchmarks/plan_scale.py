"""Planning a very large tournament: seconds, peak memory and the size of the manifest.

A round robin of four in-process bots over N deal sets (default 1,000,000: 4,000,000 games) is
planned into a fresh results folder, as ``callbreak-arena run`` does before it plays, then planned
again on that folder, as a resumed run does (the stored plan is made again and checked against its
SHA-256). Each is timed; the peak resident memory of the process is printed beside the memory it
held before planning. The manifest's size is compared with the earlier form, which listed every
block, measured at 10,000 deal sets.

    python benchmarks/plan_scale.py [--deal-sets 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import tempfile
import time
from pathlib import Path

from tournament import CONFIG  # the four random bots of benchmarks/tournament.py, beside this script

from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config


def peak_mb() -> float:
    """The process's peak resident memory so far, in MB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def plan(deal_sets: int, folder: Path) -> float:
    """Seconds to plan (or re-plan) the tournament into ``folder``."""
    tournament = Tournament(parse_config(CONFIG.format(deal_sets=deal_sets)), folder)
    start = time.perf_counter()
    tournament.prepare()
    return time.perf_counter() - start


def listed_size(deal_sets: int) -> int:
    """Bytes of the manifest's plan in the earlier form (every block listed), written as it was."""
    tournament = Tournament(parse_config(CONFIG.format(deal_sets=deal_sets)), Path("unused"))
    with tempfile.TemporaryDirectory() as folder:
        tournament.folder = Path(folder)
        tournament.store.folder = Path(folder)
        tournament.store.manifest_path = Path(folder) / "manifest.json"
        tournament.store.records_path = Path(folder) / "records.jsonl"
        tournament.prepare()
        assert tournament.manifest is not None
        plan = tournament.manifest.plan
        listing = {**tournament.manifest.to_dict(), "format_version": 2,
                   "plan": {"rotation": plan.rotation, "rounds": plan.rounds, "adaptive": plan.adaptive,
                            "sequential": plan.sequential, "field": plan.field,
                            "blocks": [b.to_list() for b in plan.blocks()], "dropped": []}}
        return len((json.dumps(listing, indent=1, sort_keys=True) + "\n").encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deal-sets", type=int, default=1_000_000, help="deal sets to plan (4 games each)")
    args = parser.parse_args(argv)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    before = peak_mb()
    with tempfile.TemporaryDirectory() as folder:
        results = Path(folder) / "plan"
        fresh = plan(args.deal_sets, results)
        after_fresh = peak_mb()
        again = plan(args.deal_sets, results)
        after_again = peak_mb()
        size = (results / "manifest.json").stat().st_size
        blocks = json.loads((results / "manifest.json").read_text(encoding="utf-8"))["plan"]["block_count"]
    print(f"{args.deal_sets:,} deal sets, round robin of 4 bots: {blocks:,} blocks, {4 * blocks:,} games")
    print(f"plan a fresh folder:          {fresh:6.2f} s, peak resident memory {after_fresh:.0f} MB "
          f"({before:.0f} MB before planning)")
    print(f"plan again (resume, checked): {again:6.2f} s, peak resident memory {after_again:.0f} MB")
    print(f"manifest: {size:,} bytes")
    sample = 10_000
    old = listed_size(sample)
    print(f"the earlier manifest (every block listed): {old:,} bytes at {sample:,} deal sets, so about "
          f"{old * args.deal_sets / sample / 1e6:,.0f} MB at {args.deal_sets:,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
