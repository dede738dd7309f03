"""What a command of the command line costs before it does anything: CPU time of short commands, against
``python -c "import grpc"`` in the same run.

Every command starts a Python process that imports what the command needs; the command line imports only
that (a command's heavy modules, such as the ladder's database or the web servers, are imported by the
function that runs it: ``tests/test_cli_imports.py``). Printed, for each command: the CPU time (user +
system) of its whole process, best and median of N runs, the median wall time, and the median CPU against
``import grpc``'s. The commands run in turn, round after round, so a load on the machine falls on all of
them alike. The references: the bare interpreter (``python -c pass``) and ``import grpc`` (the floor of any
gRPC bot or arena). The target: ``--help`` and ``rules legal`` at most 0.5 s of CPU and at most twice
``import grpc``. ``--baseline DIR`` runs the same commands with the code in DIR too (another copy of the
project: ``git worktree add /tmp/before <commit>``), interleaved.

    python benchmarks/cli_startup.py [--runs 15] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 0.5
TARGET_GRPC = 2.0
GRPC = 'python -c "import grpc"'
HELD = ("--help", "rules legal")
"""The commands the target is for."""

COMMANDS = {
    "--help": ["--help"],
    "rules legal": ["rules", "legal", "--hand", "TH 4H 9C AS", "--trick", "7H"],
    "rules score": ["rules", "score", "--call", "4", "--tricks", "5"],
    "run --help": ["run", "--help"],
    "check-bot --help": ["check-bot", "--help"],
    "verify --help": ["verify", "--help"],
    "roster list --help": ["roster", "list", "--help"],
    "ladder serve --help": ["ladder", "serve", "--help"],
    "ladder submit --help": ["ladder", "submit", "--help"],
}


def cases(baseline: Path | None, cache: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """What is measured: a label -> its command and its environment. Every process keeps its compiled modules
    in ``cache`` (``make bench`` writes none into the repository), so that each tree is measured compiled."""
    common = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    common["PYTHONPYCACHEPREFIX"] = str(cache)
    here = {**common, "PYTHONPATH": str(ROOT)}
    measured = {
        "python -c pass": ([sys.executable, "-c", "pass"], here),
        GRPC: ([sys.executable, "-c", "import grpc"], here),
    }
    for name, arguments in COMMANDS.items():
        measured[f"callbreak-arena {name}"] = ([sys.executable, "-m", "arena", *arguments], here)
        if baseline is not None:
            before = {**common, "PYTHONPATH": str(baseline)}
            measured[f"  before: {name}"] = ([sys.executable, "-m", "arena", *arguments], before)
    return measured


def where_arena(environment: dict[str, str], folder: Path) -> Path:
    """The folder whose ``arena`` a process with ``environment``, started in ``folder``, imports."""
    done = subprocess.run([sys.executable, "-c", "import arena; print(arena.__file__)"], env=environment,
                          capture_output=True, text=True, check=True, cwd=folder)
    return Path(done.stdout.strip()).parent.parent


def cpu_of(command: list[str], environment: dict[str, str], folder: Path) -> tuple[float, float]:
    """The CPU seconds (user + system) and the wall seconds of one run of ``command`` in ``folder``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=folder,
                   env=environment)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each command (default: 15)")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="another copy of the project, measured in the same run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cli-startup-") as name:
        empty = Path(name) / "start"  # the processes start here, so that the code each imports is PYTHONPATH's
        empty.mkdir()
        measured = cases(args.baseline.resolve() if args.baseline is not None else None, Path(name) / "pycache")
        cpu: dict[str, list[float]] = {label: [] for label in measured}
        wall: dict[str, list[float]] = {label: [] for label in measured}
        for command, environment in measured.values():
            folder = Path(environment["PYTHONPATH"])
            assert where_arena(environment, empty) == folder, f"{folder}/arena is not the package imported"
            cpu_of(command, environment, empty)  # one run each first, not counted: the files in the page cache
        for _ in range(args.runs):
            for label, (command, environment) in measured.items():
                seconds, elapsed = cpu_of(command, environment, empty)
                cpu[label].append(seconds)
                wall[label].append(elapsed)
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}; {args.runs} runs of each command, in turn")
    grpc = statistics.median(cpu[GRPC])
    width = max(len(label) for label in measured)
    print(f"{'command':<{width}}  {'CPU best':>9}  {'CPU median':>10}  {'wall median':>11}  {'CPU vs grpc':>11}")
    for label in measured:
        median = statistics.median(cpu[label])
        print(f"{label:<{width}}  {min(cpu[label]):8.3f}s  {median:9.3f}s  {statistics.median(wall[label]):10.3f}s  "
              f"{median / grpc:10.2f}x")
    for name in HELD:
        median = statistics.median(cpu[f"callbreak-arena {name}"])
        met = median <= TARGET_S and median <= TARGET_GRPC * grpc
        print(f"target for {name}: at most {TARGET_S} s of CPU and {TARGET_GRPC:g} x import grpc: "
              f"{median:.3f} s, {median / grpc:.2f} x: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
