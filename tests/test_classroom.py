"""A class of thirty: a roster imported from a spreadsheet, a bot submitted for every student (copies of
the sample bots: Python with the bot kit over gRPC, Python and JavaScript over stdin/stdout), a league
that takes its bots from the roster, in the sandbox where bubblewrap runs, and standings that list
every student by their display name."""

from __future__ import annotations

import json
import shutil
import time
import tomllib
from pathlib import Path

import pytest

from arena.cli import main
from arena.event.launch.sandbox import bwrap_problem
from arena.event.plan.status import read_status
from arena.event.setup.roster import ROSTER_FILE, read_roster
from arena.rating.leaderboard import Board
from arena.rating.standing import NOT_RANKED_TITLE
from tests.helpers.runs import ROOT, run

FIRST = ("Ada", "Alan", "Barbara", "Claude", "Donald", "Edsger", "Frances", "Grace", "Hedy", "Ivan", "John",
         "Katherine", "Leslie", "Margaret", "Niklaus", "Ole", "Peter", "Radia", "Shafi", "Tim", "Urs", "Vint",
         "Whitfield", "Xavier", "Yukihiro", "Zhores", "Ken", "Dennis", "Bjarne", "Guido")
LAST = ("Lovelace", "Turing", "Liskov", "Shannon", "Knuth", "Dijkstra", "Allen", "Hopper", "Lamarr", "Sutherland",
        "McCarthy", "Johnson", "Lamport", "Hamilton", "Wirth", "Dahl", "Naur", "Perlman", "Goldwasser", "Berners-Lee",
        "Hölzle", "Cerf", "Diffie", "Leroy", "Matsumoto", "Alferov", "Thompson", "Ritchie", "Stroustrup", "van Rossum")
SAMPLES = ROOT / "sample_bots"


def students() -> list[tuple[str, str]]:
    """Thirty students: a bot name and a display name each."""
    return [(f"{first.lower()}-{last[0].lower()}", f"{first} {last}") for first, last in zip(FIRST, LAST, strict=True)]


def bot_for(number: int, folder: Path) -> Path:
    """The bot the ``number``-th student hands in, made in ``folder``: the sample random bot or the heuristic
    bot as a Python file, or a folder with a stdin/stdout bot in Python or JavaScript and its bot.json."""
    kind = number % 5
    if kind in (0, 1):
        return SAMPLES / "random_bot.py"
    if kind == 2:
        return SAMPLES / "heuristic_bot.py"
    script = "lowest_bot.js" if kind == 4 and shutil.which("node") else "lowest_bot.py"
    runner = "node" if script.endswith(".js") else "python"
    folder.mkdir(parents=True)
    shutil.copy(SAMPLES / "stdio" / script, folder / script)
    (folder / "bot.json").write_text(json.dumps({"kind": "stdio", "command": f"{runner} {script}"}), encoding="utf-8")
    return folder


@pytest.mark.slow
def test_a_class_of_thirty_plays_a_league_from_its_roster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    began = time.monotonic()
    roster_path = tmp_path / ROSTER_FILE
    sheet = tmp_path / "students.csv"
    sheet.write_text("name,display\n" + "".join(f"{name},{display}\n" for name, display in students()),
                     encoding="utf-8")
    assert main(["roster", "import", str(sheet), "--roster", str(roster_path), "--tokens-out",
                 str(tmp_path / "tokens.csv")]) == 0
    for number, (name, _) in enumerate(students()):
        bot = bot_for(number, tmp_path / "handed-in" / name)
        assert main(["roster", "submit", name, str(bot), "--roster", str(roster_path)]) == 0
    capsys.readouterr()
    assert main(["roster", "list", "--roster", str(roster_path)]) == 0
    listing = capsys.readouterr().out
    assert listing.count("its submission: python: ") == 18 and listing.count("its submission: stdio: ") == 12

    sandbox = "bwrap" if bwrap_problem() is None else "off"
    config = tmp_path / "league.toml"
    config.write_text(
        # The league, not the bots' processes, is what is tested: they keep theirs for the whole run.
        '[tournament]\nname = "class-league"\nseed = 2026\ndeal_sets = 1\nconcurrency = 8\nroster = "roster.toml"\n'
        'fresh_process = false\n\n'
        f'[time]\ndeadline_ms = 10000\n\n[sandbox]\nmode = "{sandbox}"\n\n'
        '[[bots]]\nname = "teacher"\npython = "sample_bots.heuristic_bot:HeuristicBot"\n', encoding="utf-8")
    folder = tmp_path / "results"
    summary = run(config, folder, timeout=240)

    # 30 students, the teacher's bot and one house bot: 8 tables, each deal set in 4 rotations.
    assert summary.played == 32 and summary.faults == 0 and not summary.outstanding
    snapshot = Board(folder, roster_path).snapshot()
    rows = {row.bot: row for row in snapshot.standings}
    displays = dict(students())
    assert set(displays) <= set(rows) and len(rows) == 32
    for name, display in displays.items():
        row = rows[name]
        assert (row.display, row.games, row.faults, row.status) == (display, 4, 0, "finished"), name
        assert row.rank is not None
    assert sorted(row.rank for row in rows.values() if row.rank is not None) == list(range(1, 32))
    status = read_status(folder)
    assert status is not None and status.state == "finished"
    assert all(bot.state == "finished" and bot.faults == 0 for bot in status.bots)
    if sandbox == "bwrap":
        for name in displays:
            assert "in the sandbox: it sees" in (folder / "logs" / f"{name}.log").read_text(encoding="utf-8")
    assert len(read_roster(roster_path).students) == 30
    print(f"a class of thirty: {time.monotonic() - began:.1f} s, sandbox {sandbox}")


ILLEGAL_BOT = """\
from arena.botkit import Bot, Card, run


class Illegal(Bot):
    \"\"\"Calls legally, and answers every card with one it may not play: a card of its hand that is not legal, or,
    when every card it holds is, one it does not hold.\"\"\"

    def call(self, view):
        return view.legal_calls[0]

    def play(self, view):
        held = {str(card) for card in view.hand}
        barred = sorted(held - {str(card) for card in view.legal})
        return Card.parse(barred[0] if barred else next(c for c in ("AS", "2C", "AH") if c not in held))


raise SystemExit(run(Illegal))
"""


def test_a_student_whose_every_card_the_fallback_played_is_listed_apart_with_why(tmp_path: Path) -> None:
    """A class's event with its defaults: a submitted bot that never answers a legal card is not ranked among the
    bots that played (the fallback player's lowest legal card beats the random sample bots), and the standings say
    why; faults.unranked_above_fallback_pct changes the share, on the same records."""
    roster_path = tmp_path / ROSTER_FILE
    (tmp_path / "students.csv").write_text("name,display\neve,Eve Evans\n", encoding="utf-8")
    assert main(["roster", "import", str(tmp_path / "students.csv"), "--roster", str(roster_path),
                 "--tokens-out", str(tmp_path / "tokens.csv")]) == 0
    (tmp_path / "bot.py").write_text(ILLEGAL_BOT, encoding="utf-8")
    assert main(["roster", "submit", "eve", str(tmp_path / "bot.py"), "--roster", str(roster_path)]) == 0
    teacher = "".join(f'\n[[bots]]\nname = "{name}"\npython = "{bot}"\n' for name, bot in (
        ("teacher", "sample_bots.heuristic_bot:HeuristicBot"), ("rand-1", "sample_bots.random_bot:RandomBot"),
        ("rand-2", "sample_bots.random_bot:RandomBot")))
    config = tmp_path / "week-1.toml"
    config.write_text('[tournament]\nname = "week-1"\nseed = 5094852831912121465\ndeal_sets = 1\n'
                      'roster = "roster.toml"\n' + teacher, encoding="utf-8")
    folder = tmp_path / "results"
    assert main(["run", str(config), "--results", str(folder), "--no-progress"]) == 0

    rows = {row["bot"]: row for row in json.loads((folder / "standings.json").read_text(encoding="utf-8"))["standings"]}
    eve = rows["eve"]
    assert eve["games"] == 4 and eve["fallbacks"] == 4 * 5 * 13 and eve["decisions"] == 4 * 5 * 14
    assert eve["faults"] == 4 * 5 * 13 * 4  # every card: refused, asked again three times, then the fallback's
    assert eve["rank"] is None and eve["rank_range"] is None
    assert eve["not_ranked"] == (
        "the fallback played 93% for it (260 of its 280 decisions), more than the 50% a ranked bot may leave to the "
        "fallback (faults.unranked_above_fallback_pct), so these results are the fallback player's, not the bot's")
    assert sorted(row["rank"] for bot, row in rows.items() if bot != "eve") == [1, 2, 3]
    assert all(row["not_ranked"] == "" for bot, row in rows.items() if bot != "eve")

    text = (folder / "standings.txt").read_text(encoding="utf-8")
    ranking, apart = text.split(NOT_RANKED_TITLE)
    assert " eve " not in ranking and all(f" {bot} " in ranking for bot in ("teacher", "rand-1", "rand-2"))
    assert "finished, the fallback played 93% for it" in apart
    assert " ".join(apart.split()).count("eve is not ranked: the fallback played 93% for it (260 of its 280 "
                                         "decisions), more than the 50% a ranked bot") == 1
    report = (folder / "report.html").read_text(encoding="utf-8")
    assert "eve is not ranked: the fallback played 93% for it" in report

    # The organiser's choice: with 100, every bot that played a game is ranked, and this one above a working bot.
    config.write_text(config.read_text(encoding="utf-8") + "\n[faults]\nunranked_above_fallback_pct = 100\n",
                      encoding="utf-8")
    assert main(["run", str(config), "--results", str(folder), "--no-progress"]) == 0
    rows = {row["bot"]: row for row in json.loads((folder / "standings.json").read_text(encoding="utf-8"))["standings"]}
    assert rows["eve"]["rank"] is not None and rows["eve"]["not_ranked"] == ""
    assert rows["eve"]["rank"] < max(rows[bot]["rank"] for bot in ("rand-1", "rand-2"))
    assert NOT_RANKED_TITLE not in (folder / "standings.txt").read_text(encoding="utf-8")


def test_the_teachers_own_bot_is_not_called_a_house_bot_which_the_standings_keep_for_table_fillers() -> None:
    # The standings list "house bots" apart, unranked: the arena's own, added to fill tables. A bot the
    # teacher names in [[bots]] is ranked like a student's, so the page's configuration does not call it one.
    page = (ROOT / "docs" / "classroom.md").read_text(encoding="utf-8")
    config = next(block for block in page.split("```toml\n")[1:] if "[[bots]]" in block).split("```")[0]
    names = [bot["name"] for bot in tomllib.loads(config)["bots"]]
    assert names and not any("house" in name for name in names), names
    assert "house bots filling tables" in NOT_RANKED_TITLE
    assert "is a contestant like any student's: it is ranked" in " ".join(page.split())
