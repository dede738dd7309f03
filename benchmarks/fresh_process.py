"""What a new process for every game costs: the same launched bots kept for the whole run, and started again
for every game (``fresh_process``), in the same run.

Each row is a real tournament (records written to a temporary results folder) of four bots of one kind that
think not at all, a duplicate round robin of ``--deal-sets`` deal sets (four games each), at 1 and at 4 tables,
sandboxed in bubblewrap (where it runs) and not, each tournament in a process of its own, the rows interleaved
so that they share the machine's noise:

- ``kit bot, gRPC``: ``benchmarks/trivial_bots.py kit``, a Python bot made with the bot kit;
- ``C++ bot, gRPC``: ``benchmarks/native/trivial_bot.cc``;
- ``Python bot, stdio``: ``sample_bots/stdio/lowest_bot.py``;
- ``C bot, stdio``: ``benchmarks/native/trivial_stdio.c``.

The gRPC bots run twice, ``fresh_process = false`` (a process per bot for the whole run) and ``true`` (a
process per bot per game); a stdio bot always gets a process per seat per game, so it has one row. The native
bots are built on first use (a C and C++ compiler, protoc and the gRPC C++ library; on Debian
``libgrpc++-dev protobuf-compiler-grpc``); without them their rows are left out.

Printed per row: the games, the seconds per game (the run's wall time, its start and end included, over its
games), and, unsandboxed, the CPU per game of the arena's process and of the arena with every process it started
(``getrusage`` of the run's process and of its children, once every bot has ended). Sandboxed, only the seconds:
a bot ended by a signal takes bubblewrap's processes with it unwaited for, and its CPU with them. For each gRPC
bot, what the new processes add per game and per process started. Then what one start costs: a Python
interpreter, one that imports the bot kit, and a process started as the arena starts a bot, unsandboxed and in
the sandbox (``python -c pass`` through the arena's start step and bubblewrap), the fewest of ``--starts`` runs
in wall time and (unsandboxed) in CPU, and the memory of the step the arena keeps beside a sandboxed
bot. With ``--baseline DIR`` (another copy of the project, e.g. ``git
worktree add /tmp/before <commit>``), the CPU of ``import arena.botkit`` with this code and with DIR's,
interleaved.

    python benchmarks/fresh_process.py [--deal-sets 3] [--repeats 3] [--tables 1 4] [--sandbox auto off]
    python benchmarks/fresh_process.py --repeats 0 --sandbox off --baseline DIR
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trivial_bots import NATIVE_BUILD, native_bots  # benchmarks/trivial_bots.py

from arena.event.launch.sandbox import LIFELINE_FD, bot_environment, bwrap_problem, sandboxed
from arena.event.launch.startstep import limited, memory_file
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.event.setup.sandboxing import SandboxSettings

ROOT = Path(__file__).resolve().parent.parent
KINDS = {
    "kit bot, gRPC": f'command = "{{python}} {ROOT / "benchmarks" / "trivial_bots.py"} kit --arena {{address}}"',
    "C++ bot, gRPC": f'command = "{NATIVE_BUILD / "trivial_bot"} --arena {{address}}"',
    "Python bot, stdio": f'stdio = "{{python}} {ROOT / "sample_bots" / "stdio" / "lowest_bot.py"}"',
    "C bot, stdio": f'stdio = "{NATIVE_BUILD / "trivial_stdio"}"',
}
"""Each kind's ``[[bots]]`` line."""
NATIVE = ("C++ bot, gRPC", "C bot, stdio")
KEPT_TOO = ("kit bot, gRPC", "C++ bot, gRPC")
"""The kinds whose processes ``fresh_process = false`` keeps for the whole run."""

Measured = tuple[int, float, float, float, int]
"""Games, wall seconds, the arena's CPU seconds, the CPU seconds of every process it started, faults."""
Row = tuple[str, bool, int, str]
"""Kind, a process per game, tables, sandbox mode."""


def config_text(kind: str, fresh: bool, tables: int, deal_sets: int, sandbox: str) -> str:
    bots = "".join(f'[[bots]]\nname = "b{i}"\n{KINDS[kind]}\nseed = {i}\n\n' for i in range(1, 5))
    # A generous deadline: a slow start on a busy machine is measured, never turned into a fault.
    return (f'[tournament]\nname = "fresh"\nseed = 7\ndeal_sets = {deal_sets}\nconcurrency = {tables}\n'
            f"fresh_process = {'true' if fresh else 'false'}\n\n[time]\ndeadline_ms = 30000\n\n"
            f'[sandbox]\nmode = "{sandbox}"\n\n{bots}')


def once(kind: str, fresh: bool, tables: int, deal_sets: int, sandbox: str) -> Measured:
    """One tournament, in this process: every process it started has ended when it returns."""
    with tempfile.TemporaryDirectory() as temp:
        config = parse_config(config_text(kind, fresh, tables, deal_sets, sandbox))
        began = time.perf_counter()
        summary = asyncio.run(Tournament(config, Path(temp) / "results").run())
        wall = time.perf_counter() - began
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime
    return summary.played, wall, cpu, cpu + children.ru_utime + children.ru_stime, summary.faults


def measured(row: Row, deal_sets: int) -> Measured:
    """:func:`once` in a process of its own."""
    kind, fresh, tables, sandbox = row
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(fresh), str(tables), str(deal_sets), sandbox],
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                         check=True).stdout
    games, wall, cpu, total, faults = json.loads(out.splitlines()[-1])
    return int(games), float(wall), float(cpu), float(total), int(faults)


def started(program: str, argv: list[str], runs: int, plan: dict[int, bytes] | None = None,
            env: dict[str, str] | None = None, lifeline: bool = False) -> tuple[float, float]:
    """The fewest milliseconds of wall time and of CPU (the process and its children) that ``program`` (with the
    command line ``argv``) took to start and end, over ``runs`` runs; with ``plan`` (the contents of the
    descriptors it is given: a sandbox's files), through the arena's start step, as a launched bot starts;
    ``lifeline``: a life line at :data:`LIFELINE_FD`, its other end held open here."""
    wall = cpu = float("inf")
    for _ in range(runs):
        fds = {target: memory_file(data) for target, data in (plan or {}).items()}
        held = []
        if lifeline:
            reading, writing = os.pipe()
            fds[LIFELINE_FD], held = reading, [writing]
        command = limited(program, argv, fds, 0, []) if plan is not None else [program, *argv[1:]]
        before, began = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run(command, cwd=ROOT, env=env, pass_fds=list(fds.values()), check=True)
        wall = min(wall, time.perf_counter() - began)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = min(cpu, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        for fd in (*fds.values(), *held):
            os.close(fd)
    return wall * 1000, cpu * 1000


def starts(runs: int, sandbox: bool) -> list[tuple[str, tuple[float, float]]]:
    """What one start costs, by what is started."""
    python = sys.executable
    out = [("a Python interpreter (python -c pass)", started(python, [python, "-c", "pass"], runs)),
           ("one that imports the bot kit", started(python, [python, "-c", "import arena.botkit"], runs)),
           ("python -c pass through the arena's start step", started(python, [python, "-c", "pass"], runs, plan={}))]
    if sandbox:
        with tempfile.TemporaryDirectory() as temp:
            confinement = sandboxed([python, "-c", "pass"], folder=None, socket=None,
                                    settings=SandboxSettings(), hidden=[Path(temp)],
                                    env=bot_environment({}, confined=True), cwd=Path(temp))
            out.append(("the same in the bubblewrap sandbox", started(
                confinement.program, confinement.argv, runs, plan=confinement.files, env=confinement.env,
                lifeline=True)))
    return out


def step_memory() -> tuple[float, float]:
    """The MiB of memory of its own (``RssAnon``) and resident (``VmRSS``) of the arena's step that stays beside a
    sandboxed bot as the sandbox's first process, read from ``/proc`` while a sleeping bot runs."""
    python, marker = sys.executable, f"step-memory-{os.getpid()}"
    with tempfile.TemporaryDirectory() as temp:
        confinement = sandboxed([python, "-c", "import time; time.sleep(60)", marker], folder=None, socket=None,
                                settings=SandboxSettings(), hidden=[Path(temp)],
                                env=bot_environment({}, confined=True), cwd=Path(temp))
        fds = {target: memory_file(data) for target, data in confinement.files.items()}
        reading, writing = os.pipe()
        fds[LIFELINE_FD] = reading
        process = subprocess.Popen(limited(confinement.program, confinement.argv, fds, 0, []), env=confinement.env,
                                   pass_fds=list(fds.values()))
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                for entry in Path("/proc").iterdir():
                    try:
                        argv = (entry / "cmdline").read_bytes().split(b"\0")
                        status = (entry / "status").read_text()
                    except OSError:
                        continue
                    if marker.encode() in argv and argv[1:4] == [b"-I", b"-S", b"-c"]:  # the step, not the bot
                        kib = {line.split(":")[0]: int(line.split()[1]) for line in status.splitlines()
                               if line.startswith(("RssAnon:", "VmRSS:"))}
                        if len(kib) == 2:
                            return kib["RssAnon"] / 1024, kib["VmRSS"] / 1024
                time.sleep(0.05)
            raise RuntimeError("the sandbox's step was not seen running")
        finally:
            for fd in (*fds.values(), writing):
                os.close(fd)
            process.wait(timeout=30)


def kit_imports(baseline: Path, runs: int) -> dict[str, list[float]]:
    """The CPU milliseconds of ``import arena.botkit`` with this tree's code and with ``baseline``'s, ``runs``
    times each, interleaved (the other first every other time)."""
    trees = {"this": ROOT, "before": baseline.resolve()}
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    for run in range(runs):
        for name in (list(trees) if run % 2 == 0 else list(trees)[::-1]):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", "import arena.botkit"], cwd=trees[name],
                           env={**os.environ, "PYTHONPATH": str(trees[name])}, check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    return cpu


def compare(args: argparse.Namespace, modes: list[str], kinds: list[str]) -> None:
    """Every row's tournaments, interleaved, and what a process per game adds."""
    rows: list[Row] = [(kind, fresh, tables, mode) for mode in modes for tables in args.tables for kind in kinds
                       for fresh in ((False, True) if kind in KEPT_TOO else (True,))]
    results: dict[Row, list[Measured]] = {row: [] for row in rows}
    began = time.perf_counter()
    for repeat in range(args.repeats):
        for row in (rows if repeat % 2 == 0 else rows[::-1]):
            results[row].append(measured(row, args.deal_sets))
        print(f"repetition {repeat + 1} of {args.repeats} done after {time.perf_counter() - began:.0f} s", flush=True)

    def per_game(row: Row) -> tuple[float, float, float]:
        """Medians of (wall s, the arena's CPU ms, all CPU ms) per game."""
        runs = results[row]
        return (statistics.median(run[1] / run[0] for run in runs),
                statistics.median(run[2] / run[0] * 1000 for run in runs),
                statistics.median(run[3] / run[0] * 1000 for run in runs))

    print(f"medians of {args.repeats}; four bots of each kind, {args.deal_sets} deal sets ({4 * args.deal_sets} games) "
          "a tournament; CPU (unsandboxed only): the arena's process, and the arena with every process it started")
    print(f"{'bot':18s} {'processes':17s} {'sandbox':8s} {'tables':>6s} {'s a game':>9s} {'arena CPU ms':>13s} "
          f"{'all CPU ms':>11s} {'faults':>6s}")
    for row in rows:
        kind, fresh, tables, mode = row
        wall, arena, total = per_game(row)
        cpu = f"{arena:13.1f} {total:11.1f}" if mode == "off" else f"{'-':>13s} {'-':>11s}"
        processes, sandboxed_in = "one per game" if fresh else "kept for the run", "bwrap" if mode == "auto" else "none"
        print(f"{kind:18s} {processes:17s} {sandboxed_in:8s} {tables:6d} {wall:9.3f} {cpu} "
              f"{sum(run[4] for run in results[row]):6d}")
    for mode in modes:
        for tables in args.tables:
            for kind in (k for k in KEPT_TOO if k in kinds):
                kept, fresh = per_game((kind, False, tables, mode)), per_game((kind, True, tables, mode))
                cpu = (f", {fresh[2] - kept[2]:+,.0f} ms of CPU a game ({(fresh[2] - kept[2]) / 4:+,.0f} ms a "
                       f"process started)" if mode == "off" else "")
                print(f"{kind}, {'sandboxed' if mode == 'auto' else 'unsandboxed'}, {tables} table"
                      f"{'s' if tables > 1 else ''}: a process per game adds {fresh[0] - kept[0]:+.3f} s a game{cpu}: "
                      f"{fresh[0] / kept[0]:.2f} x the seconds of a game")


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deal-sets", type=int, default=3, help="deal sets per tournament (four games each)")
    parser.add_argument("--repeats", type=int, default=3, help="repetitions of each row")
    parser.add_argument("--tables", type=int, nargs="+", default=[1, 4], help="table counts to measure")
    parser.add_argument("--sandbox", nargs="+", choices=("auto", "off"), default=["auto", "off"],
                        help="[sandbox] modes to measure (auto: bubblewrap where it runs)")
    parser.add_argument("--starts", type=int, default=20, help="runs of each start timed")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="another copy of the project: the bot kit's import timed with its code too, interleaved")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, fresh, tables, deal_sets, sandbox = args.child
        print(json.dumps(once(kind, fresh == "True", int(tables), int(deal_sets), sandbox)))
        return 0
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average {load()}")
    problem = bwrap_problem()
    modes = list(args.sandbox)
    if problem is not None and "auto" in modes:
        modes.remove("auto")
        print(f"sandboxed rows left out: {problem}")
    kinds = list(KINDS)
    try:
        native_bots()
    except RuntimeError as error:
        print(f"native bots left out: {error}")
        kinds = [kind for kind in kinds if kind not in NATIVE]
    if args.repeats > 0:
        compare(args, modes, kinds)
    print(f"one start, the fewest of {args.starts} runs:")
    for what, (wall, cpu) in starts(args.starts, "auto" in modes):
        # In the sandbox the processes bubblewrap starts are not waited for by it: their CPU is not counted.
        print(f"  {what:48s} {wall:7.1f} ms" + (f", {cpu:6.1f} ms of CPU" if "sandbox" not in what else ""))
    if "auto" in modes:
        own, resident = step_memory()
        print(f"  the sandbox's first process beside a bot (the arena's step): {own:.1f} MiB of memory of its own, "
              f"{resident:.1f} MiB resident")
    if args.baseline is not None:
        print(f"import arena.botkit, {3 * args.starts} interleaved runs each, ms of CPU (fewest / median):")
        for name, values in kit_imports(args.baseline, 3 * args.starts).items():
            print(f"  {name:7s} {min(values):6.1f} / {statistics.median(values):6.1f}")
    print(f"load average at the end {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
