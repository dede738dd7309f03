"""What a new student, teacher or researcher meets in their first hour, tried from their side: the
terminal, the messages, the files they open."""

from __future__ import annotations

import io
from pathlib import Path

from arena.event.config import parse_config
from arena.event.status import Progress
from arena.event.tournament import Tournament
from tests.data.runs import tournament_text


def test_a_log_line_clears_the_progress_bar_and_the_bar_comes_back_after_it() -> None:
    terminal = io.StringIO()
    bar = Progress(10, 0, True, file=terminal)
    bar.update(0, {}, step=1)
    with bar.writing():
        terminal.write("callbreak-arena: ghost is absent\n")
    bar.update(0, {}, step=1)
    bar.close()
    shown = terminal.getvalue()
    before, after = shown.split("callbreak-arena: ghost is absent\n")
    # The line starts on a cleared line (no bar text before it), and the bar is drawn again below it.
    assert before.endswith("\r") and before.split("\r")[-2].strip() == ""
    assert "game/s" in after


def test_the_tournament_log_goes_around_its_progress_bar(tmp_path: Path) -> None:
    lines: list[str] = []
    tournament = Tournament(parse_config(tournament_text()), tmp_path / "out", log=lines.append)
    terminal = io.StringIO()
    tournament._bar = Progress(4, 0, True, file=terminal)
    tournament.log("a line")
    # The bar was cleared for the line (the log's own stream is its terminal too), then drawn again.
    assert lines == ["a line"] and "\r" + " " * 20 in terminal.getvalue()
    assert terminal.getvalue().endswith("game/s]")
