"""A student outside the repository: the project's wheel, installed on its own, gives the bot kit,
and the README's example bot, copied from the README, plays a real game over gRPC with it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.core.dealing import seeded_deals
from arena.records.format import GameRecord
from tests.conftest import Bots, arena, check_record, run, token
from tests.helpers.seating import seat_and_play

ROOT = Path(__file__).resolve().parent.parent
NAMES = ["student", "r1", "r2", "r3"]
BUILD_IGNORES = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "results",
                 "node_modules", "callbreak-check-logs")
"""What the wheel's build does not need from the tree: version control, environments, outputs and caches."""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project built as a wheel and installed into a folder of its own (``--target``).

    The wheel is built from a copy of the source tree: the build writes ``build/`` into the tree it builds,
    and two test processes building from the same tree at once break each other's build."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*BUILD_IGNORES))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(base / "wheel"), str(source)], check=True, capture_output=True, timeout=300)
    wheel = next((base / "wheel").glob("callbreak_arena-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(base / "site"),
                    str(wheel)], check=True, capture_output=True, timeout=300)
    return base / "site"


def readme_bot() -> str:
    """The first Python example of the README's "Writing a bot"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Writing a bot"):]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    return found.group(1)


def test_the_wheel_holds_the_kit_the_protocol_and_the_sample_bots(installed: Path) -> None:
    for path in ("arena/botkit.py", "arena/kit/bot.py", "protocol/callbreak.proto", "protocol/callbreak_pb2.py",
                 "sample_bots/heuristic_bot.py", "sample_bots/montecarlo_bot.py", "arena/demo.toml"):
        assert (installed / path).is_file(), path


def test_the_readme_bot_plays_a_game_with_the_installed_kit(installed: Path, tmp_path: Path, bots: Bots) -> None:
    student = tmp_path / "student"
    student.mkdir()
    (student / "lowest_bot.py").write_text(readme_bot(), encoding="utf-8")
    # From the student's own folder, with only the installed wheel (and its dependencies) to import from.
    env = dict(os.environ, PYTHONPATH=str(installed), CALLBREAK_TOKEN=token("student"))
    where = subprocess.run([sys.executable, "-c", "import arena.botkit; print(arena.botkit.__file__)"],
                           cwd=student, env=env, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).is_relative_to(installed)

    async def scenario() -> GameRecord:
        async with arena(NAMES) as (server, port):
            bots.start("student", [str(student / "lowest_bot.py"), "--arena", f"127.0.0.1:{port}"], env=env,
                       cwd=student)
            for seed, name in enumerate(NAMES[1:]):
                bots.random(port, name, seed=seed)
            return await seat_and_play(server, NAMES, seeded_deals(5, 1), timeout=30)

    record = run(scenario())
    assert record.faults == []
    check_record(record, record.rules)
