"""A first hour, scripted from the docs as a new student and teacher follow them: a bot from the tutorial
and a stdio bot through check-bot and a tournament, then a class of five with a roster, one submitted bot,
one student connecting with the token cut from tokens.csv, and a Ctrl-C in the middle of `serve`.

Every step is the command the docs give, run as a process of its own in a fresh folder outside the
repository (the demo, the first command of the README, is tests/test_cli.py's first test)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.helpers.runs import ROOT

ARENA = [sys.executable, "-m", "arena"]
TUTORIAL = ROOT / "docs" / "writing-a-bot.md"


def arena(folder: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLBREAK_")}
    return subprocess.run([*ARENA, *args], cwd=folder, capture_output=True, text=True, timeout=timeout, env=env,
                          check=False)


def tutorial_bot() -> str:
    """The first Python bot of docs/writing-a-bot.md, exactly as a student copies it."""
    text = TUTORIAL.read_text(encoding="utf-8")
    start = text.index("### In Python")
    return text[start:].split("```python\n", 1)[1].split("```", 1)[0]


def records(folder: Path) -> list[dict[str, object]]:
    path = folder / "records.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.endswith("}")]


def test_a_students_bots_pass_check_bot_and_play_a_tournament(tmp_path: Path) -> None:
    (tmp_path / "lowest_bot.py").write_text(tutorial_bot(), encoding="utf-8")
    shutil.copy(ROOT / "sample_bots" / "stdio" / "lowest_bot.py", tmp_path / "lowest_stdio.py")
    python = sys.executable
    for bot in (["--bot", "lowest_bot.py:LowestBot"], ["--stdio", f"{python} lowest_stdio.py"]):
        checked = arena(tmp_path, "check-bot", *bot)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "FAIL" not in checked.stdout and "INCOMPLETE" not in checked.stdout
        assert checked.stderr.count("arena listening") <= 1
    assert not list(tmp_path.glob("callbreak-check-logs")), "a check that passed keeps nothing"
    (tmp_path / "league.toml").write_text("""
[tournament]
name = "league"
seed = 7
deal_sets = 2

[[bots]]
name = "mine"
command = "{python} lowest_bot.py --arena {address}"

[[bots]]
name = "stdio"
stdio = "{python} lowest_stdio.py"

[[bots]]
name = "heuristic"
python = "sample_bots.heuristic_bot:HeuristicBot"

[[bots]]
name = "random"
python = "sample_bots.random_bot:RandomBot"
""", encoding="utf-8")
    played = arena(tmp_path, "run", "league.toml", "--no-progress")
    assert played.returncode == 0, played.stderr
    assert "8 games played, 0 already recorded, 0 faults" in played.stderr
    assert played.stdout.startswith("Winner: ")
    assert f"for a browser: {Path('results') / 'league' / 'report.html'}" in played.stderr
    assert arena(tmp_path, "verify", "results/league").returncode == 0


CLASS = """\
[tournament]
name = "week-1"
seed = 3
deal_sets = 1
concurrency = 2
roster = "roster.toml"
forfeit = "fallback"

[time]
deadline_ms = 2000
absent_after_s = 10

[server]
port = {port}

[[bots]]
name = "teacher"
python = "sample_bots.heuristic_bot:HeuristicBot"
"""
"""Five students and the teacher's bot: 15 tables of four, 60 games. A fixed port, as a class has, so that a
student's bot finds the arena again when the teacher resumes it."""


@pytest.mark.slow
def test_a_class_of_five_with_a_remote_student_and_a_ctrl_c_during_serve(tmp_path: Path) -> None:
    (tmp_path / "lowest_bot.py").write_text(tutorial_bot(), encoding="utf-8")
    (tmp_path / "students.csv").write_text(
        "name,display\nada,Ada Acharya\nbea,Bea Bhandari\ncai,Cai Chhetri\ndev,Dev Dahal\neli,Eli Ekka\n",
        encoding="utf-8")
    imported = arena(tmp_path, "roster", "import", "students.csv", "--tokens-out", "tokens.csv")
    assert imported.returncode == 0, imported.stderr
    assert b"\r" not in (tmp_path / "tokens.csv").read_bytes()
    submitted = arena(tmp_path, "roster", "submit", "ada", "lowest_bot.py")
    assert submitted.returncode == 0, submitted.stderr
    (tmp_path / "class.toml").write_text(CLASS.format(port=free_port()), encoding="utf-8")
    tokens = {row["name"]: row["token"] for row in csv.DictReader(io.StringIO(
        (tmp_path / "tokens.csv").read_text(encoding="utf-8")))}
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLBREAK_")}
    serve = subprocess.Popen([*ARENA, "serve", "class.toml", "--no-progress"], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    student = None
    try:
        assert serve.stderr is not None
        said = ""
        while "arena listening on " not in said:
            line = serve.stderr.readline()
            assert line, said
            said += line
        address = re.search(r"arena listening on (\S+)", said)
        assert address is not None
        # bea connects from her laptop with the token cut from tokens.csv, as docs/writing-a-bot.md says.
        with (tmp_path / "bea.log").open("w") as log:
            student = subprocess.Popen([sys.executable, "lowest_bot.py", "--arena", address.group(1)],
                                       cwd=tmp_path, env={**env, "CALLBREAK_TOKEN": tokens["bea"] + "\n"},
                                       stdout=subprocess.DEVNULL, stderr=log)
        folder = tmp_path / "results" / "week-1"
        deadline = time.monotonic() + 240
        while not any("bea" in r["seats"] and r.get("final") for r in records(folder)):  # type: ignore[operator]
            assert time.monotonic() < deadline and serve.poll() is None, "bea never played"
            time.sleep(0.2)
        serve.send_signal(signal.SIGINT)  # Ctrl-C
        _out, err = serve.communicate(timeout=30)
        assert serve.returncode == 130, said + err
        assert "stopped by Ctrl-C" in err and "To resume, run the same command again" in err
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
        if sys.exc_info()[0] is not None and student is not None and student.poll() is None:
            student.kill()  # the test failed: bea's bot must not outlive it
            student.wait()
    # The teacher resumes; bea's kit reconnects by itself, and the event plays to its end.
    try:
        resumed = arena(tmp_path, "serve", "class.toml", "--no-progress", timeout=600)
        assert resumed.returncode == 0, resumed.stderr
    finally:
        if student is not None:
            assert student.wait(60) == 0, (tmp_path / "bea.log").read_text()  # told the tournament is over
    assert arena(tmp_path, "verify", "results/week-1").returncode == 0
    standings = json.loads((tmp_path / "results" / "week-1" / "standings.json").read_text(encoding="utf-8"))
    rows = {row["bot"]: row for row in standings["standings"]}
    assert rows["ada"]["rank"] is not None and rows["bea"]["rank"] is not None  # submitted, and connected
    for never in ("cai", "dev", "eli"):  # never connected: played by the fallback, so not ranked
        assert rows[never]["rank"] is None and rows[never]["fallback_pct"] == 100.0
    assert standings["ended"] and standings["winner"] in rows
