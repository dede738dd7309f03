"""The gRPC benchmark runs end to end, briefly, and prints each figure the performance notes quote:
deals/s beside the bare table, CPU per decision split between the event loop's thread and gRPC's,
and the arena's own work with the transport faked."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_grpc_benchmark_prints_its_ratios_and_where_the_cpu_goes() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "grpc_table.py"), "--seconds", "0.5", "--repeats", "1",
         "--tables", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=180, check=True,
    ).stdout
    for setup in ("bare", "arena", "arena+kit", "faked"):  # deals/s, CPU, and the event loop's part of it
        assert re.search(rf"^{re.escape(setup)}, 1 table\(s\) +[\d.]+ / +[\d.]+ / +[\d.]+ +[\d.]+ +[\d.]+$", out,
                         re.MULTILINE), out
    ratio = re.search(r"1 table\(s\), arena: deals/s (\d+\.\d+) x bare .* arena CPU (\d+) µs per decision, "
                      r"([+-]\d+) µs beside bare's .* in the event loop's thread ([+-]\d+) µs, in gRPC's threads "
                      r"([+-]\d+) µs", out)
    assert ratio is not None, out
    beside, loop_thread, grpc_threads = (int(ratio.group(i)) for i in (3, 4, 5))
    assert loop_thread + grpc_threads in (beside - 1, beside, beside + 1)  # the two parts add up (rounding)
    faked = re.search(r"transport faked: (\d+) µs of CPU per decision; a request (\d+) bytes \(bare: (\d+)\)", out)
    assert faked is not None and int(faked.group(1)) > 0 and int(faked.group(2)) > int(faked.group(3)), out
