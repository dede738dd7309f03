"""The reference zoo's own scores: each member rated on the zoo as any candidate is, over the published number
of blocks of the public pool (``zoo.toml``'s ``blocks``), with no early stop. These are the scores, and the 95 %
intervals, that ``arena/rating/zoo.toml`` publishes and docs/research.md quotes; ``callbreak-arena rate`` of a
member then lands on them.

    python benchmarks/zoo.py [--blocks N] [--members random,heuristic] [--results FOLDER]

Printed per member: its score in points per game above its table's mean, the interval, the blocks, the
seconds; then the lines to paste into zoo.toml. The blocks' records go to a temporary folder, or with
``--results`` to ``FOLDER/MEMBER``, where a block already played is read, not played again: a run stopped
part-way goes on from where it was.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.rating.zoo import load_zoo, rate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=None, help="blocks per member (default: zoo.toml's blocks)")
    parser.add_argument("--members", default="", help="comma-separated members to rate (default: all)")
    parser.add_argument("--results", type=Path, default=None,
                        help="keep the blocks in FOLDER/MEMBER, reading those already played (default: a temporary "
                             "folder)")
    args = parser.parse_args()
    zoo = load_zoo()
    blocks = args.blocks or zoo.blocks
    chosen = [m for m in zoo.members if not args.members or m.name in args.members.split(",")]
    print(f"# the zoo on the public pool {zoo.pool_seed}, {zoo.profile} rules, {blocks} blocks per member "
          f"({zoo.cycle} blocks a cycle of trios)")
    lines = []
    with tempfile.TemporaryDirectory(prefix="zoo-") as temporary:
        base = args.results or Path(temporary)
        for member in chosen:
            table = member.bot_table(member.name)
            del table["name"]
            began = time.perf_counter()
            rating = asyncio.run(rate(table, zoo, base / member.name, precision=1e-9, max_blocks=blocks,
                                      seconds=math.inf))
            print(f"{member.label:18} {rating.mean:+7.2f} points per game [{rating.low:+.2f}, {rating.high:+.2f}]"
                  f"  {rating.blocks} blocks  {time.perf_counter() - began:6.0f} s", flush=True)
            lines.append(f"{member.name}: score = {rating.mean:.2f}, low = {rating.low:.2f}, high = {rating.high:.2f}")
    print("\n# for zoo.toml")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
