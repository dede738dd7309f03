"""Launched bots on Ray: each task launches the bots of its games on the node that runs it, and the records
of one process, of two worker processes and of Ray tasks are the same but for their timings, for
``command``, ``stdio`` and ``bhoos`` bots. One local Ray (2 CPUs, the ``ray_session`` fixture) serves
the module; without Ray installed these tests are skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.event.launch.sandbox import bwrap_problem
from tests.helpers.bhoos import BHOOS_BOT
from tests.helpers.runs import COMMAND, RANDOM, ROOT, UNSANDBOXED, cli, kinds_text, run, stripped_list, write

PROBLEM = bwrap_problem()
STDIO = f"{{python}} {ROOT / 'sample_bots' / 'stdio' / 'lowest_bot.py'}"
SETUPS = {"local": "", "workers": "workers = 2\n", "ray": 'backend = "ray"\n'}



def three_ways(tmp_path: Path, text: str) -> dict[str, Path]:
    """Runs ``text`` in one process, with two workers and on Ray; the results folders."""
    folders = {}
    for name, extra in SETUPS.items():
        config = write(tmp_path / f"{name}.toml", text.replace("concurrency = 2\n", "concurrency = 2\n" + extra, 1))
        summary = run(config, tmp_path / name, timeout=240)
        assert summary.played > 0 and summary.outstanding == 0
        folders[name] = tmp_path / name
    return folders


@pytest.mark.slow
def test_command_and_stdio_bots_give_the_same_records_in_one_process_on_workers_and_on_ray(
    tmp_path: Path, ray_session: None,
) -> None:
    text = kinds_text([("a", "command", COMMAND), ("b", "command", COMMAND), ("s1", "stdio", STDIO),
                       ("s2", "stdio", STDIO), ("r", "python", RANDOM)], name="ray", seed=9, deal_sets=1,
                      extra=UNSANDBOXED)
    folders = three_ways(tmp_path, text)
    local = stripped_list(folders["local"])
    assert stripped_list(folders["workers"]) == local
    assert stripped_list(folders["ray"]) == local
    assert cli("verify", folders["ray"]).returncode == 0
    assert "launched" in (folders["ray"] / "logs" / "a.log").read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.skipif(PROBLEM is not None, reason=f"bhoos bots need the sandbox: {PROBLEM}")
def test_bhoos_bots_give_the_same_records_in_one_process_on_workers_and_on_ray(
    tmp_path: Path, ray_session: None,
) -> None:
    bot = write(tmp_path / "bot.py", BHOOS_BOT)
    text = kinds_text([(n, "bhoos", f"{{python}} {bot} modern") for n in ("b1", "b2", "b3")]
                      + [("r1", "python", RANDOM)], name="bhoos", seed=5, deal_sets=1,
                      rules='profile = "bhoos"\nrounds = 2')
    folders = three_ways(tmp_path, text)
    local = stripped_list(folders["local"])
    assert stripped_list(folders["workers"]) == local
    assert stripped_list(folders["ray"]) == local
    assert "in the sandbox" in (folders["ray"] / "logs" / "b1.log").read_text(encoding="utf-8")
