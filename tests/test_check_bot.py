"""``check-bot`` passes the sample bots and fails careless ones with lines that name the broken rule;
``game --bot`` plays a bot of the user's against sample bots. Real processes, real gRPC."""

from __future__ import annotations

import pytest

from tests.data.runs import ROOT, cli

CARELESS = ROOT / "tests" / "data" / "careless_bots.py"


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
        assert "PASS  20 full games without a fault" in out
        assert any(line.startswith("      24 games, up to 4 tables at once") for line in out)


@pytest.mark.parametrize(("bot", "failed", "words"), [
    pytest.param(f"{CARELESS}:OverCaller", "calls in the legal range under every rules profile",
                 "13 is not a legal call: call a whole number from 1 to 8 under the bhoos rules", id="calls"),
    pytest.param(f"{CARELESS}:FirstCard", "only legal cards", "was led and you hold", id="cards"),
])
def test_a_careless_bot_fails_the_check_of_the_rule_it_breaks(bot: str, failed: str, words: str) -> None:
    result = cli("check-bot", "--bot", bot, "--games", "4", timeout=300)
    assert result.returncode == 1
    out = lines(result.stdout)
    assert f"FAIL  {failed}" in out
    failure = out[out.index(f"FAIL  {failed}") + 1]
    assert failure.startswith("      ") and " rules, game r" in failure
    assert "asked for a" in failure and "your hand: " in failure
    assert words in result.stdout
    assert "(4 times: refused and asked again)" in result.stdout  # a decision's retries are told once
    assert "PASS  loads and plays" in out


def test_a_late_launched_bot_fails_the_deadline_check() -> None:
    command = f"{{python}} {CARELESS} Dawdler --arena {{address}}"
    result = cli("check-bot", "--command", command, "--deadline-ms", "100", "--games", "4", timeout=300)
    assert result.returncode == 1
    out = lines(result.stdout)
    assert "FAIL  answers within the deadline (100 ms)" in out
    assert "the deadline passed" in out[out.index("FAIL  answers within the deadline (100 ms)") + 1]


def test_a_bot_that_cannot_start_fails_with_its_reason_and_its_log() -> None:
    result = cli("check-bot", "--command", "{python} -c raise.SystemExit(4)", "--games", "4", timeout=300)
    assert result.returncode == 1
    out = lines(result.stdout)
    assert out[0] == "FAIL  starts and connects"
    assert "before it connected" in out[1]
    assert any("SyntaxError" in line for line in out)
    assert "FAIL  4 full games without a fault" in out


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
