"""The house bot is the package's own and plays as the sample random bot always did; the sample opponents
are found by their entry points, and a missing one is named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.core.dealing import seeded_deals
from arena.core.game import Game
from arena.core.rules import PROFILES, Rules
from arena.event.check import OPPONENTS
from arena.event.setup.bots import BOT_ENTRY_POINTS, HOUSE_BOT, load_bot_class
from arena.players.fast import play_fast
from arena.players.house import HouseBot
from arena.players.local import play_out
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.montecarlo_bot import MonteCarloBot
from sample_bots.random_bot import RandomBot

ARENA = Path(sys.executable).parent / "callbreak-arena"


def _arena(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ARENA), *args], capture_output=True, text=True, timeout=120, check=False, env=env,
                          cwd=cwd)


def test_the_game_command_plays_the_same_game_as_before(tmp_path: Path) -> None:
    # The final standings of `game --seed 5`, printed when the command played sample_bots.random_bot: a
    # house bot that drew differently would change them.
    result = _arena("game", "--seed", "5", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    standings = result.stdout.split("Final standings\n", 1)[1].splitlines()[2:]
    assert [line.split() for line in standings] == [
        ["1", "random-2", "-22"], ["2", "random-3", "-32.9"], ["3", "random-1", "-38.9"], ["4", "random-4", "-40.7"],
    ]


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_the_house_bot_and_the_sample_random_bot_make_the_same_choices(profile: str) -> None:
    rules = Rules.profile(profile)
    for seed in range(3):
        games = []
        for kind in (HouseBot, RandomBot):
            game = Game(rules, seeded_deals(seed, 1))
            play_out(game, [kind(seed=seed * 4 + seat) for seat in range(4)])
            games.append(game.results)
        assert games[0] == games[1]
        for kind in (HouseBot, RandomBot):  # the fast path makes the same choices as the views
            fast = play_fast(rules, [kind(seed=seed * 4 + seat) for seat in range(4)], "abcd", seeded_deals(seed, 1),
                             table_id="t", game_id="g", game_number=1, first_dealer=3)
            assert fast is not None and fast.rounds == games[0]


def test_the_house_bot_is_named_and_versioned_as_the_random_bot_in_records() -> None:
    house = load_bot_class(HOUSE_BOT)(seed=0)
    assert (house.name, house.version) == (RandomBot.name, RandomBot.version) == ("random", "3")
    assert not hasattr(house, "on_event")  # an in-process bot that wants no events, as the sample one


def test_the_opponents_are_the_house_bot_and_the_registered_sample_bots() -> None:
    assert list(OPPONENTS) == ["random", "heuristic", "montecarlo"]
    assert load_bot_class(OPPONENTS["random"]) is HouseBot
    assert load_bot_class(OPPONENTS["heuristic"]) is HeuristicBot
    assert load_bot_class(OPPONENTS["montecarlo"]) is MonteCarloBot


def test_a_sample_opponent_that_is_not_installed_is_named(tmp_path: Path) -> None:
    # Installed metadata of this package that registers no bots, found before the real one.
    info = tmp_path / "site" / "callbreak_arena-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: callbreak-arena\nVersion: 0.1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[console_scripts]\ncallbreak-arena = arena.cli:main\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    result = _arena("game", "--seed", "3", "--bot", "arena.players.house:HouseBot", "--opponents", "heuristic",
                    env=env, cwd=tmp_path)
    assert result.returncode != 0
    assert f"no bot called 'heuristic' is installed: the sample bots register theirs as entry points " \
           f"({BOT_ENTRY_POINTS})" in result.stderr
    assert "Traceback" not in result.stderr
    # The random opponent is the package's own: it needs no entry point.
    result = _arena("game", "--seed", "3", "--bot", "arena.players.house:HouseBot", "--opponents", "random",
                    env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "your bot against three random bots" in result.stdout
