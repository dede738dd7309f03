"""A class's event as docs/classroom.md lays it out, played through the command line, for the page tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers.runs import ROOT

CLASS = (("alice", "Alice Adhikari"), ("bob", "Bob Basnet"), ("carol", "Carol Chhetri"), ("dave", "Dave Dahal"),
         ("erin", "Erin Eklund"), ("frank", "Frank Fong"), ("gita", "Gita Gurung"))
SUBMITTED = {"alice": "random_bot.py", "bob": "random_bot.py", "carol": "random_bot.py", "dave": "heuristic_bot.py"}
"""Four students hand in a bot; erin, frank and gita never connect theirs."""
ARENA = ROOT / ".venv" / "bin" / "callbreak-arena"


def class_event(base: Path) -> Path:
    """A class folder as docs/classroom.md lays it out, with a finished event played through the command line:
    seven students on the roster (four submitted a bot, three never connect, so the fallback plays their seats),
    two bots of the teacher's, and three house bots that fill the tables of the nine. Returns its results folder."""
    names = base / "students.csv"
    names.write_text("name,display\n" + "".join(f"{n},{d}\n" for n, d in CLASS), encoding="utf-8")

    def arena(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(ARENA), *args], cwd=base, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done

    arena("roster", "import", "students.csv", "--tokens-out", "tokens.csv")
    for name, bot in SUBMITTED.items():
        arena("roster", "submit", name, str(ROOT / "sample_bots" / bot))
    (base / "week-1.toml").write_text(
        '[tournament]\nname = "week-1"\nseed = 7\ndeal_sets = 2\nconcurrency = 4\nroster = "roster.toml"\n'
        'forfeit = "fallback"\n\n[time]\ndeadline_ms = 5000\nabsent_after_s = 10\n\n[sandbox]\nmode = "off"\n\n'
        '[[bots]]\nname = "teacher"\npython = "sample_bots.heuristic_bot:HeuristicBot"\n\n'
        '[[bots]]\nname = "teacher-2"\npython = "sample_bots.heuristic_bot:HeuristicBot"\n', encoding="utf-8")
    arena("run", "week-1.toml", "--results", "results/week-1", "--no-progress")
    return base / "results" / "week-1"


def podium_names(folder: Path) -> tuple[str, str]:
    """The winner and the runner-up of a finished event, as the standings files name them."""
    data = json.loads((folder / "standings.json").read_text(encoding="utf-8"))
    assert data["ended"], data
    return data["winner"], data["runner_up"]


def shown_as(bot: str) -> str:
    """How a page names a bot of the class: its display name, then its bot name."""
    return f"{dict(CLASS)[bot]} ({bot})" if bot in dict(CLASS) else bot
