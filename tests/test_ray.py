"""The Ray backend: games of in-process bots played as Ray tasks give the records of one process, and
a run resumed on Ray submits only the games not yet recorded. One local Ray (2 CPUs, the ``ray_session``
fixture) serves the module; without Ray installed these tests are skipped, and
``backend = "ray"`` is refused."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.helpers.runs import CRASHER, NO_FAST, cli, keep_games, run, stripped_list, tournament_text, write

FIVE = ("a", "b", "c", "d", "e")
RAY = 'backend = "ray"\n'


def test_without_ray_installed_the_ray_backend_is_refused_in_one_line(tmp_path: Path) -> None:
    fake = tmp_path / "site"
    fake.mkdir()
    (fake / "ray.py").write_text('raise ImportError("No module named ray")\n', encoding="utf-8")
    config = write(tmp_path / "t.toml", tournament_text(tournament=RAY))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")])}
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress", env=env)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        'callbreak-arena: error: tournament.backend is "ray" but Ray is not installed: pip install '
        '"callbreak-arena[ray]" (or set backend = "local")')
    assert not (tmp_path / "out" / "manifest.json").exists()




class _SlowToStartRay:
    """Stands for the ``ray`` module on a machine too busy for Ray's node to register in its 30 s."""

    def __init__(self, failures: int) -> None:
        self.failures, self.calls = failures, []

    def init(self, **options: object) -> None:
        self.calls.append("init")
        if self.calls.count("init") <= self.failures:
            raise Exception("The current node timed out during startup.")  # what Ray raises

    def shutdown(self) -> None:
        self.calls.append("shutdown")


def test_a_local_ray_that_misses_its_start_is_cleaned_up_and_tried_again_then_refused_in_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from arena.errors import ConfigError
    from arena.event.play.backends import start_local_ray
    once = _SlowToStartRay(failures=1)
    monkeypatch.setitem(sys.modules, "ray", once)
    start_local_ray(2)
    assert once.calls == ["init", "shutdown", "init"]  # the half-started processes are stopped first
    always = _SlowToStartRay(failures=9)
    monkeypatch.setitem(sys.modules, "ray", always)
    with pytest.raises(ConfigError, match=r'^cannot start a local Ray \(tried 2 times; a busy machine .* timed out '
                                          r'during startup\. Try again, or set backend = "local" with workers = N$'):
        start_local_ray(2)
    assert always.calls == ["init", "shutdown", "init", "shutdown"]

@pytest.mark.slow
def test_local_workers_and_ray_give_the_same_records_and_ray_resumes(tmp_path: Path, ray_session: None) -> None:
    # The fast path: the very same bytes from one process, two worker processes and Ray tasks.
    for name, extra in (("local", ""), ("workers", "workers = 2\n"), ("ray", RAY)):
        summary = run(write(tmp_path / f"{name}.toml", tournament_text(FIVE, deal_sets=2, tournament=extra)),
                      tmp_path / name)
        assert (summary.played, summary.faults) == (40, 0)
    local = (tmp_path / "local" / "records.jsonl").read_bytes()
    assert (tmp_path / "workers" / "records.jsonl").read_bytes() == local
    assert (tmp_path / "ray" / "records.jsonl").read_bytes() == local
    # Normal tables, with a bot that crashes on every card: the same records but for the timings.
    text = tournament_text(FIVE, spec=NO_FAST, b=CRASHER, deal_sets=1)
    run(write(tmp_path / "slow-local.toml", text), tmp_path / "slow-local")
    slow = write(tmp_path / "slow-ray.toml", text.replace("concurrency = 2\n", "concurrency = 2\n" + RAY))
    run(slow, tmp_path / "slow-ray")
    assert stripped_list(tmp_path / "slow-ray") == stripped_list(tmp_path / "slow-local")
    # Stopped after 6 games, a torn line and 2 rounds of the 7th: resumed on Ray, only the 34 games
    # not recorded are submitted, and the folder is the uninterrupted one.
    keep_games(tmp_path / "ray", tmp_path / "part", 6, torn=True, partial=2)
    resumed = run(tmp_path / "ray.toml", tmp_path / "part")
    assert (resumed.played, resumed.skipped) == (34, 6)
    assert stripped_list(tmp_path / "part") == stripped_list(tmp_path / "local")
    assert cli("verify", tmp_path / "part").returncode == 0
