"""``check-bot`` passes the sample bots and fails careless ones with lines that name the broken rule;
``game --bot`` plays a bot of the user's against sample bots. Real processes, real gRPC, real files."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.event.check import Check, _slowest, report
from arena.event.launch.sandbox import bwrap_problem
from tests.helpers.bhoos import BHOOS_BOT
from tests.helpers.runs import ROOT, cli, write

CARELESS = ROOT / "tests" / "helpers" / "careless_bots.py"


def lines(text: str) -> list[str]:
    return text.strip().splitlines()


def test_the_sample_bots_pass_every_check_in_process_and_launched() -> None:
    for bot in (["--bot", "sample_bots/heuristic_bot.py:HeuristicBot"],
                ["--command", "{python} -m sample_bots.random_bot --arena {address} --seed {seed}"]):
        result = cli("check-bot", *bot, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        out = lines(result.stdout)
        assert out[-1] == "7 of 7 checks passed"
        assert all(line.startswith(("PASS", "      ")) for line in out[:-2])
        assert "PASS  24 full games without a fault" in out
        assert any(line.startswith("      24 games under every rules profile, up to 4 tables at once")
                   for line in out)
        assert result.stderr.count("arena listening on") <= 1


@pytest.mark.parametrize(("bot", "failed", "words"), [
    pytest.param(f"{CARELESS}:OverCaller", "calls in the legal range under every rules profile",
                 "13 is not a legal call: call a whole number from 1 to 8 under the bhoos rules", id="calls"),
    pytest.param(f"{CARELESS}:FirstCard", "only legal cards", "was led and you hold", id="cards"),
])
def test_a_careless_bot_fails_the_check_of_the_rule_it_breaks(
    bot: str, failed: str, words: str, tmp_path: Path,
) -> None:
    result = cli("check-bot", "--bot", bot, "--games", "4", "--logs", tmp_path / "logs", timeout=300)
    assert result.returncode == 1
    out = lines(result.stdout)
    assert f"FAIL  {failed}" in out
    failure = out[out.index(f"FAIL  {failed}") + 1]
    assert failure.startswith("      ") and " rules, game r" in failure
    assert "asked for a" in failure and "your hand: " in failure
    assert words in result.stdout
    assert "(4 times: refused and asked again)" in result.stdout  # a decision's retries are told once
    assert "PASS  loads and plays" in out


@pytest.mark.slow
def test_a_late_launched_bot_fails_the_deadline_check(tmp_path: Path) -> None:
    command = f"{{python}} {CARELESS} Dawdler --arena {{address}}"
    result = cli("check-bot", "--command", command, "--deadline-ms", "100", "--games", "4", "--profile", "nepali",
                 "--logs", tmp_path / "logs", timeout=300)
    assert result.returncode == 1
    out = lines(result.stdout)
    assert "FAIL  answers within the deadline (100 ms)" in out
    assert "the deadline passed" in out[out.index("FAIL  answers within the deadline (100 ms)") + 1]


def test_a_bot_that_cannot_start_fails_with_its_reason_and_the_path_of_its_kept_log(tmp_path: Path) -> None:
    temp, earlier = tmp_path / "tmp", tmp_path / "callbreak-check-logs" / "master"
    temp.mkdir()
    earlier.mkdir(parents=True)
    write(earlier / "manifest.json", "{}")  # an earlier check's, replaced by this one's
    # Before it dies, it writes what would erase the FAIL line on a terminal and draw a PASS in its place.
    write(tmp_path / "dies.py", "import sys\n"
                                "sys.stderr.write('\\x1b[1A\\x1b[2KPASS  starts and connects\\x1b]0;t\\x07\\n')\n"
                                "exec('raise.SystemExit(4)')\n")
    result = cli("check-bot", "--command", "{python} dies.py", "--games", "4",
                 timeout=300, cwd=tmp_path, env={**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "    \\x1b[1A\\x1b[2KPASS  starts and connects\\x1b]0;t\\x07" in result.stdout  # shown, escaped
    out = lines(result.stdout)
    assert out[0] == "FAIL  starts and connects"
    assert "before it connected" in out[1] and out[1].startswith("      under the nepali rules: ")
    assert any("SyntaxError" in line for line in out)
    assert not earlier.exists()
    kept = tmp_path / "callbreak-check-logs" / "nepali" / "logs" / "yours.log"
    assert f"      your bot's log (nepali rules): {kept}" in out
    assert "SyntaxError" in kept.read_text()
    # The checks of the records played nothing: not a PASS, and they say which profiles and why.
    assert "INCOMPLETE  calls in the legal range under every rules profile" in out
    assert ("      not played under the nepali, master, bhoos, pagat, strict and dy rules: the bot did not play to "
            "the end under the nepali rules (see the first check)") in out
    assert "FAIL  24 full games without a fault" in out
    assert out[-1] == "0 of 7 checks passed"
    # Every path the report names is still there once the check has ended: its kept copy, not the temporary one.
    named = re.findall(r"(/[^\s\"'),:]+)", result.stdout)
    assert named and all(Path(path).exists() for path in named), named
    assert list(temp.iterdir()) == []  # the games' temporary folder is gone


def _waited_for(path: Path, pattern: str, timeout: float = 60) -> str:
    """The first match of ``pattern`` in the file ``path`` (a process's stderr), once it is written."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = re.search(pattern, path.read_text())
        if found:
            return found[1]
        time.sleep(0.1)
    raise AssertionError(f"no {pattern!r} in:\n{path.read_text()}")


def test_a_kit_bot_connected_once_passes_every_profile_at_one_address(tmp_path: Path) -> None:
    temp, errors, bot_errors = tmp_path / "tmp", tmp_path / "check.err", tmp_path / "bot.err"
    temp.mkdir()
    with errors.open("w") as err, bot_errors.open("w") as bot_err:
        check = subprocess.Popen([sys.executable, "-m", "arena", "check-bot", "--remote", "--games", "4"], cwd=ROOT,
                                 env={**os.environ, "TMPDIR": str(temp)}, stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            token = _waited_for(errors, r"CALLBREAK_TOKEN=(\S+)")
            address = _waited_for(errors, r"arena listening on (\S+)")
            # As writing-a-bot.md tells a student to start it.
            bot = subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot", "--arena", address], cwd=ROOT,
                                   env={**os.environ, "CALLBREAK_TOKEN": token}, stdout=bot_err, stderr=bot_err)
            try:
                out, _ = check.communicate(timeout=400)
                assert bot.wait(timeout=30) == 0  # told that the tournament is over, once, at the very end
            finally:
                bot.kill()
                bot.wait()
        finally:
            check.kill()
            check.wait()
    said = errors.read_text()
    assert check.returncode == 0, out + said
    report = lines(out)
    assert report[-1] == "7 of 7 checks passed"
    assert "PASS  calls in the legal range under every rules profile" in report
    assert any(line.startswith("      24 games under every rules profile, up to 4 tables at once") for line in report)
    assert said.count("arena listening on") == 1
    for profile in ("nepali", "master", "bhoos", "pagat", "strict", "dy"):
        assert f"checking under the {profile} rules" in said
    bot_said = bot_errors.read_text()  # between two profiles the kit is told to reconnect, and does at once
    assert bot_said.count("connected to the arena at") == 6, bot_said
    assert bot_said.count("the tournament is over; stopping") == 1, bot_said
    assert bot_said.count("this part is over and the next follows at the same address") == 5, bot_said
    assert "the arena stopped before the tournament is over" not in bot_said
    assert list(temp.iterdir()) == []


def _answering(delay: float) -> str:
    """A stdio bot that takes ``delay`` seconds over each answer, and flushes it."""
    return f"""\
import json, sys, time
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] != "game_over":
        time.sleep({delay})
        key, legal = ("call", "legal_calls") if request["type"] == "call" else ("card", "legal_cards")
        print(json.dumps({{key: request[legal][0]}}), flush=True)
"""


@pytest.mark.parametrize(("sent", "stopped_by", "status"), [(signal.SIGINT, "Ctrl-C", 130),
                                                           (signal.SIGTERM, "SIGTERM", 143)])
def test_a_check_stopped_by_a_signal_reports_what_it_played_and_leaves_no_temporary_folder(
    sent: signal.Signals, stopped_by: str, status: int, tmp_path: Path,
) -> None:
    temp, errors, kept = tmp_path / "tmp", tmp_path / "check.err", tmp_path / "kept"
    temp.mkdir()
    bot = write(tmp_path / "bot.py", _answering(0.01))
    with errors.open("w") as err:
        check = subprocess.Popen(
            [sys.executable, "-m", "arena", "check-bot", "--stdio", f"{{python}} {bot}", "--logs", str(kept)], cwd=ROOT,
            env={**os.environ, "TMPDIR": str(temp)}, stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            # A line per game as it goes: the bot's tricks, its faults, its slowest decision.
            progress = _waited_for(errors, r"callbreak-arena: (game 1 of 24 .*)")
            took = r"(\d+ ms|\d+\.\d s)"
            assert re.fullmatch(rf"game 1 of 24 \(nepali rules\): \d+ tricks taken in 5 rounds, 0 faults, slowest "
                                rf"decision {took}( \(the first {took}, with your program's start\))?", progress)
            assert [p for p in temp.iterdir() if p.name.startswith("callbreak-check-")]  # it plays there
            check.send_signal(sent)
            out, _ = check.communicate(timeout=60)
        finally:
            check.kill()
            check.wait()
    said = errors.read_text()
    assert check.returncode == status, said
    assert list(temp.iterdir()) == []
    assert f"its records so far and your bot's log are in {kept}" in said
    assert (kept / "nepali" / "manifest.json").is_file()
    assert "Traceback" not in said and "Error" not in said
    # The verdict over the games played to the end: what passed over them, and what was not played.
    played = int(_waited_for(errors, rf"stopped by {stopped_by}: the report covers the (\d+) games? played to the end"))
    assert played >= 1
    report = lines(out)
    assert report[0] == "PASS  starts and connects"
    assert "INCOMPLETE  only legal cards" in report
    # Only the profiles not played are named so; the one played in part says how much of it was.
    assert played >= 4 or (f"      not played under the master, bhoos, pagat, strict and dy rules, and only {played} "
                           f"of 4 games under the nepali rules played: the check was stopped by {stopped_by} after "
                           f"{played} of 24 games") in report
    assert "INCOMPLETE  24 full games without a fault" in report
    assert (f"      only {played} of 24 games were played: the check was stopped by {stopped_by} after {played} of 24 "
            "games") in report
    assert report[-1] == "1 of 7 checks passed"


def test_a_bot_late_in_every_decision_fails_early_with_its_late_decisions(tmp_path: Path) -> None:
    bot = write(tmp_path / "bot.py", _answering(0.3))
    result = cli("check-bot", "--stdio", f"{{python}} {bot}", "--deadline-ms", "100", "--logs", tmp_path / "logs",
                 timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.findall(r"checking under the (\w+) rules", result.stderr) == ["nepali"]  # not the five profiles after
    out = lines(result.stdout)
    deadline = out.index("FAIL  answers within the deadline (100 ms)")
    late = out[deadline + 1: deadline + 6]
    for line in late:  # which decisions, and the deadline
        assert re.match(r"      nepali rules, game r1-g1-d1-p\d, round 1, (the calls|trick \d+): asked for a", line)
        assert "no answer within 100 ms: the deadline passed" in line or "requests in a row unanswered" in line
    assert out[deadline + 6].startswith("      ... and ") or out[deadline + 6].startswith("      the check stopped")
    assert ("      the check stopped after these 5 cards in a row past the deadline: a bot this slow would keep "
            "you waiting a deadline per decision for the whole check") in out
    assert any(re.fullmatch(r"      only \d of 24 games were played: your bot missed the deadline \(100 ms\) in 5 "
                            r"cards in a row under the nepali rules, so the check stopped early \(see the deadline "
                            r"check\)", line) for line in out)
    assert "INCOMPLETE  only legal cards" in out


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"bhoos bots need the sandbox: {bwrap_problem()}")
def test_a_contest_bot_calling_1_to_8_passes_under_the_bhoos_profile_by_default(tmp_path: Path) -> None:
    bot = write(tmp_path / "bot.py", BHOOS_BOT)
    result = cli("check-bot", "--bhoos", f"{{python}} {bot} modern", "--games", "4", "--logs", tmp_path / "logs",
                 timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    out = lines(result.stdout)
    assert "PASS  calls in the legal range under the bhoos rules" in out
    assert any(line.startswith("      4 games under the bhoos rules") for line in out)
    assert re.findall(r"checking under the (\w+) rules", result.stderr) == ["bhoos"]


def test_profile_names_exactly_the_profiles_checked(tmp_path: Path) -> None:
    for given in (["--profile", "nepali", "--profile", "master"], ["--profile", "nepali,master"]):
        result = cli("check-bot", "--bot", "sample_bots/random_bot.py:RandomBot", *given, "--games", "4",
                     "--logs", tmp_path / "logs", timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        out = lines(result.stdout)
        assert re.findall(r"checking under the (\w+) rules", result.stderr) == ["nepali", "master"]
        assert "PASS  calls in the legal range under the nepali and master rules" in out
        assert any(line.startswith("      8 games under the nepali and master rules") for line in out)
    result = cli("check-bot", "--bot", "sample_bots/random_bot.py:RandomBot", "--profile", "nepal")
    assert result.returncode == 2 and "'nepal' is not a rules profile" in result.stderr


STDIO_BOT = """\
import json, sys
print(open(sys.argv[1]).read().strip(), file=sys.stderr)  # a file outside its own folder, or a crash
for line in sys.stdin:
    request = json.loads(line)
    answer = {"call": request["legal_calls"][0]} if request["type"] == "call" else {"card": request["legal_cards"][0]}
    print(json.dumps(answer), flush=True)
"""


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"the sandbox cannot run: {bwrap_problem()}")
def test_folder_and_read_only_give_a_launched_bot_its_sandbox_as_in_a_tournament(tmp_path: Path) -> None:
    code, data = tmp_path / "code", tmp_path / "data"
    code.mkdir()
    data.mkdir()
    write(code / "bot.py", STDIO_BOT)
    table = write(data / "table.txt", "an opening book")
    # "bot.py" names no file from where check-bot runs: only --folder shows the bot its folder, and starts it there.
    args = ("check-bot", "--stdio", f"{{python}} bot.py {table}", "--profile", "nepali", "--games", "4")
    result = cli(*args, "--folder", code, "--read-only", data, "--logs", tmp_path / "logs", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines(result.stdout)[-1] == "7 of 7 checks passed"
    result = cli(*args, "--folder", code, "--logs", tmp_path / "logs", timeout=300)  # the data is not shown
    assert result.returncode == 1
    assert "No such file or directory" in (tmp_path / "logs" / "nepali" / "logs" / "yours.log").read_text()
    result = cli("check-bot", "--bot", "sample_bots/random_bot.py:RandomBot", "--folder", code)
    assert result.returncode == 2 and "for a bot the arena launches" in result.stderr


DIVIDER = """\
from arena.botkit import Bot, run


class Divider(Bot):
    def __init__(self, seed=0):
        self.cards = 0

    def call(self, view):
        return view.legal_calls[0]

    def play(self, view):
        self.cards += 1
        if self.cards == 3:
            return self.cards // 0
        return view.legal.cards()[0]


raise SystemExit(run(Divider))
"""
RAISING_LINE = DIVIDER.splitlines().index("            return self.cards // 0") + 1


def test_an_exception_in_a_kit_bot_is_shown_whole_with_the_path_of_its_log(tmp_path: Path) -> None:
    bot = write(tmp_path / "divider.py", DIVIDER)
    result = cli("check-bot", "--command", f"{{python}} {bot} --arena {{address}}", "--profile", "nepali",
                 "--games", "4", "--logs", tmp_path / "logs", timeout=300)
    assert result.returncode == 1
    out = lines(result.stdout)
    failed = out[out.index("FAIL  stays up to the end of every game") + 1:]
    crash = failed[0]
    assert crash.startswith("      nepali rules, game r1-g1-d1-p") and ", round 1, trick 3: asked for a card" in crash
    assert f"ZeroDivisionError: integer division or modulo by zero, at divider.py:{RAISING_LINE}" in crash
    kept = tmp_path / "logs" / "nepali"
    assert f"      your bot's log (nepali rules): {kept / 'logs' / 'yours.log'}" in failed
    assert "ZeroDivisionError" in (kept / "logs" / "yours.log").read_text()
    assert f"      the games are kept in {kept}: `callbreak-arena replay {kept} GAME` shows one, trick by trick" in out
    game = re.findall(r"game (r1-g1-d1-p\d)", crash)[0]
    assert "rules nepali" in cli("replay", kept, game).stdout


def test_a_detail_of_many_lines_is_reported_whole_and_indented() -> None:
    check = Check("stays up to the end of every game")
    check.fail("nepali rules, game r1-g1-d1-p0, round 1, trick 3: the bot raised\nTraceback (most recent call last):"
               "\n  File \"bot.py\", line 15, in play\nZeroDivisionError: division by zero")
    assert report([check]).splitlines() == [
        "FAIL  stays up to the end of every game",
        "      nepali rules, game r1-g1-d1-p0, round 1, trick 3: the bot raised",
        "        Traceback (most recent call last):",
        "          File \"bot.py\", line 15, in play",
        "        ZeroDivisionError: division by zero",
        "",
        "0 of 1 checks passed",
    ]


def test_check_bot_needs_exactly_one_bot() -> None:
    result = cli("check-bot")
    assert result.returncode == 2 and "give the bot to check" in result.stderr
    result = cli("check-bot", "--bot", "a.py:A", "--stdio", "x")
    assert result.returncode == 2 and "give one bot" in result.stderr


def test_game_with_a_bot_plays_it_against_sample_bots() -> None:
    args = ("game", "--bot", "sample_bots/heuristic_bot.py:HeuristicBot", "--opponents", "random",
            "--profile", "bhoos", "--seed", "3")
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "your bot against three random bots, rules bhoos, seed 3" in out
    assert out.count("Round ") == 5 and "yours" in out
    assert "The same deals, seats rotated" in out
    assert cli(*args).stdout == out  # seeded: the same game


UNFLUSHED_CARDS = """\
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "call":
        print(json.dumps({"call": request["legal_calls"][0]}), flush=True)
    elif request["type"] == "play":
        print(json.dumps({"card": request["legal_cards"][0]}))  # held in the buffer: the calls alone get out
"""


def test_the_flush_hint_speaks_the_language_of_the_bot_and_comes_when_its_cards_stop_coming(tmp_path: Path) -> None:
    python, compiled = tmp_path / "python", tmp_path / "compiled"
    for folder in (python, compiled):
        folder.mkdir()
        write(folder / "bot.py", UNFLUSHED_CARDS)
    # A program of its own, built from C: a shell script stands in for the binary beside its source.
    write(compiled / "bot.c", "int main(void) { return 0; }\n")
    write(compiled / "bot", f"#!/bin/sh\nexec {sys.executable} bot.py\n").chmod(0o755)
    checks = {folder: subprocess.Popen(  # side by side: each waits out its bot's deadlines
        [sys.executable, "-m", "arena", "check-bot", "--stdio", command, "--folder", str(folder), "--profile", "nepali",
         "--games", "4", "--deadline-ms", "100", "--logs", str(folder / "logs")], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for folder, command in ((python, "{python} bot.py"), (compiled, "./bot"))}
    said = {}
    try:
        for folder, check in checks.items():
            said[folder], err = check.communicate(timeout=300)
            assert check.returncode == 1, said[folder] + err
    finally:
        for check in checks.values():
            check.kill()
            check.wait()
    # Its calls came, its cards did not: the hint comes once the silence lasts two requests.
    silence = "the bot answered earlier requests, but has written nothing for the last 2: if it is not still thinking, "
    assert silence + "did it flush its output? (Python: print(..., flush=True), or run python with -u)" in said[python]
    assert (silence + "did it flush its output? (C: fflush(stdout) after each answer, or setvbuf(stdout, NULL, "
            "_IOLBF, 0) once at the start") in said[compiled]
    assert "Python" not in said[compiled]


def test_a_bot_that_flushes_its_calls_but_not_its_cards_is_stopped_early_and_its_cards_are_not_passed(
    tmp_path: Path,
) -> None:
    bot = write(tmp_path / "bot.py", UNFLUSHED_CARDS)
    result = cli("check-bot", "--stdio", f"{{python}} {bot}", "--deadline-ms", "100", "--logs", tmp_path / "logs",
                 timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    # Its calls come in time, but each of its cards is late: the late cards in a row stop it in the first profile.
    assert re.findall(r"checking under the (\w+) rules", result.stderr) == ["nepali"]
    out = lines(result.stdout)
    assert ("      the check stopped after these 5 cards in a row past the deadline: a bot this slow would keep you "
            "waiting a deadline per decision for the whole check") in out
    played = int(re.findall(r"only (\d+) of 24 games were played: your bot missed the deadline \(100 ms\) in 5 cards "
                            r"in a row under the nepali rules", result.stdout)[0])
    assert played >= 1
    # Not one of its cards came in time: the checks of its cards have nothing to pass.
    games = f"{played} game{'s' if played > 1 else ''}"
    nothing = (f"      nothing to check: in the {games} played, your bot answered none of its cards in time (the "
               "fallback played them for it; see the deadline check)")
    for check in ("only legal cards", "well-formed answers"):
        assert out[out.index(f"INCOMPLETE  {check}") + 1] == nothing
    assert "PASS  calls in the legal range under every rules profile" not in out  # INCOMPLETE: profiles not played
    # Its progress lines name its slowest decision: here its first, the one call it answered before it stalled.
    progress = re.findall(r"callbreak-arena: (game \d+ of 24 .*)", result.stderr)
    assert len(progress) == played
    for line in progress:
        assert re.fullmatch(r"game \d of 24 \(nepali rules\): \d+ tricks taken in 5 rounds, 3 faults, slowest decision "
                            r"(\d+ ms|\d\.\d s) \(the first, with your program's start\), 3 past the deadline "
                            r"\(100 ms\)", line), line


@pytest.mark.parametrize(("slowest", "first", "said"), [
    pytest.param(12.0, None, "slowest decision 12 ms", id="no start"),
    pytest.param(12.0, 300.0, "slowest decision 12 ms (the first 0.3 s, with your program's start)", id="stdio"),
    pytest.param(450.0, 300.0, "slowest decision 0.5 s", id="first not slowest"),
    pytest.param(None, 300.0, "slowest decision 0.3 s (the first, with your program's start)", id="only the first"),
    pytest.param(None, None, "slowest decision: none answered", id="late in all"),
])
def test_the_progress_line_always_names_the_slowest_decision(slowest: float | None, first: float | None,
                                                             said: str) -> None:
    assert _slowest(slowest, first) == said
