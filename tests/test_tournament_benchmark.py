"""The scaling benchmark runs its native kinds end to end, briefly: the trivial C++ gRPC bot and C stdio bot of
``benchmarks/native/`` are built, launched by the arena with one process and with two workers, and every figure
the scaling notes quote is printed for each (deals/s with 1 and 2 workers, their ratio, the parent's CPU per deal
and its ratio, the hours for a million deals, the machine's CPU per deal and its ceiling)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_native_bots_are_built_and_the_scaling_figures_printed_for_them() -> None:
    built = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "trivial_bots.py"), "native"], cwd=ROOT,
                           capture_output=True, text=True, timeout=600)
    if built.returncode != 0 and built.stderr.startswith("the native trivial bots need"):
        pytest.skip(built.stderr.strip())  # a tool or library missing: anything else is a failure below
    assert built.returncode == 0, built.stderr
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "tournament.py"), "--kinds", "command-native,stdio-native",
         "--launched-deal-sets", "1", "--repeats", "1", "--tables", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=True,
    ).stdout
    for kind in ("command-native", "stdio-native"):
        for workers in ("1 worker ", "2 workers"):  # each run played every game: 1 deal set, 4 games of 5 deals
            assert re.search(rf"^{kind} {workers}     20 deals: +[\d,]+ deals/s; the arena's process +[\d,]+ µs",
                             out, re.MULTILINE), out
        summary = re.search(rf"^{kind} +[\d,]+ +[\d,]+ +[\d.]+x +[\d,]+ +[\d,]+ +[\d.]+ +[\d.]+ +[\d.]+  "
                            r"(meets both targets|misses: .+)$", out, re.MULTILINE)
        assert summary is not None, out
        assert re.search(rf"^{kind} 2 workers +[\d,]+ µs a deal; ceiling +[\d,]+ deals/s", out, re.MULTILINE), out
