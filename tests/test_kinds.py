"""Each kind of bot has one class that answers for it (arena/event/play/kinds.py): every member of BotKind has one,
it answers as the documentation of each kind says, and a bot of each kind made from a configuration is seated,
served, placed and checked by it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.event.check import BotUnderTest, bot_table, default_profiles
from arena.event.play.kinds import KINDS, SeatingMode, kind_of
from arena.event.play.placement import launched_on_workers, shares_launched
from arena.event.play.seats import Seating
from arena.event.setup.botconfig import SETUPS, CommandBot, LaunchedBot
from arena.event.setup.config import TournamentConfig, parse_config
from arena.event.setup.kinds import BotKind
from tests.helpers.runs import ROOT

ROWS = {
    # kind: (in_process, launched, served, looked_after, mode, mode with processes of the game's own)
    BotKind.PYTHON: (True, False, False, False, SeatingMode.LOCAL, SeatingMode.LOCAL),
    BotKind.COMMAND: (False, True, True, True, SeatingMode.REMOTE, SeatingMode.FRESH),
    BotKind.STDIO: (False, True, False, True, SeatingMode.FRESH, SeatingMode.FRESH),
    BotKind.BHOOS: (False, True, False, True, SeatingMode.FRESH, SeatingMode.FRESH),
    BotKind.BHOOS_URL: (False, False, False, True, SeatingMode.SINGLE, SeatingMode.SINGLE),
    BotKind.REMOTE: (False, False, True, False, SeatingMode.REMOTE, SeatingMode.REMOTE),
}
"""What each kind's documentation says of it (arena/event/play/kinds.py, docs/configuration.md)."""
TABLES = {
    BotKind.PYTHON: 'python = "mybot.py:MyBot"',
    BotKind.COMMAND: 'command = "{python} bot.py --arena {address}"',
    BotKind.STDIO: 'stdio = "{python} bot.py"',
    BotKind.BHOOS: 'bhoos = "node bot.js"\nport = 8000',
    BotKind.BHOOS_URL: 'bhoos_url = "http://127.0.0.1:7000"',
    BotKind.REMOTE: f'remote = true\ntoken_sha256 = "{"ab" * 32}"',
}


def _config(*lines: str, extra: str = "") -> TournamentConfig:
    bots = "".join(f'\n[[bots]]\nname = "{kind}"\n{TABLES[kind]}\n' for kind in BotKind)
    text = f'[tournament]\nname = "kinds"\nseed = 1\n{"".join(lines)}{extra}\n' + bots
    return parse_config(text, Path.cwd() / "kinds.toml")


def test_every_kind_has_its_class_and_its_setup() -> None:
    assert set(KINDS) == set(BotKind)
    assert {setup.kind for setup in SETUPS} == set(BotKind)
    assert set(ROWS) == set(BotKind)  # a new kind needs its row here too


@pytest.mark.parametrize("kind", list(BotKind))
def test_each_kind_answers_as_documented(kind: BotKind) -> None:
    in_process, launched, served, looked_after, mode, fresh_mode = ROWS[kind]
    behaviour = KINDS[kind]
    assert (behaviour.in_process, behaviour.launched, behaviour.served, behaviour.looked_after) == (
        in_process, launched, served, looked_after)
    assert (behaviour.on_workers(False), behaviour.on_workers(True)) == (in_process, in_process or launched)
    assert (behaviour.mode(False), behaviour.mode(True)) == (mode, fresh_mode)


@pytest.mark.parametrize("fresh_process", [False, True])
def test_a_bot_of_each_kind_is_seated_by_its_class(fresh_process: bool) -> None:
    config = _config(f"fresh_process = {str(fresh_process).lower()}\n")
    bots = {bot.name: bot for bot in config.bots}
    seating = Seating(config, bots, {})
    for kind in BotKind:
        assert kind_of(bots[kind]) is KINDS[kind]
        assert seating.mode(kind) is ROWS[kind][5 if fresh_process else 4]


def test_the_workers_play_the_kinds_a_worker_can_seat() -> None:
    config = _config(extra="workers = 2\n")
    assert launched_on_workers(config)
    assert shares_launched(config)  # remote and bhoos_url bots are the arena's alone
    for bot in config.bots:  # a worker is sent the bots it plays, and no other
        for launches in (False, True):
            assert (kind_of(bot).shipped(bot, launches) is not None) is kind_of(bot).on_workers(launches)


def test_a_kind_admits_a_bot_to_the_arena_server_by_its_token() -> None:
    bots = {bot.kind: bot for bot in _config().bots}
    command, digest = KINDS[BotKind.COMMAND].admitted(bots[BotKind.COMMAND], fresh_process=False)
    assert isinstance(command.setup, CommandBot) and command.setup.token and len(digest) == 64
    assert KINDS[BotKind.COMMAND].admitted(bots[BotKind.COMMAND], fresh_process=True) == (bots[BotKind.COMMAND], "")
    assert KINDS[BotKind.REMOTE].admitted(bots[BotKind.REMOTE], fresh_process=False)[1] == "ab" * 32
    for kind in set(BotKind) - {BotKind.COMMAND, BotKind.REMOTE}:  # every other kind: admitted by no token
        assert KINDS[kind].admitted(bots[kind], fresh_process=False) == (bots[kind], "")


def test_only_a_bhoos_bot_needs_the_sandbox() -> None:
    bots = {bot.kind: bot for bot in _config().bots}
    for kind in BotKind:
        refusal = KINDS[kind].sandbox_refusal(bots[kind], "it is off")
        assert bool(refusal) is (kind == BotKind.BHOOS)
    assert "port 8000" in KINDS[BotKind.BHOOS].sandbox_refusal(bots[BotKind.BHOOS], "it is off")


@pytest.mark.parametrize("kind", list(BotKind))
def test_check_bot_gives_a_bot_of_each_kind_as_its_kind(kind: BotKind) -> None:
    spec = {BotKind.PYTHON: "mybot.py:MyBot", BotKind.COMMAND: "{python} bot.py --arena {address}",
            BotKind.BHOOS_URL: "http://127.0.0.1:7000", BotKind.REMOTE: ""}.get(kind, "{python} bot.py")
    table = bot_table(BotUnderTest(str(kind), spec, token="t" * 43))
    others = "".join(f'\n[[bots]]\nname = "b{n}"\npython = "x:Y"\n' for n in range(3))
    config = parse_config('[tournament]\nname = "check"\n' + table + others, Path.cwd() / "check.toml")
    assert config.bots[0].kind is kind
    assert default_profiles(kind) == (("bhoos",) if kind in (BotKind.BHOOS, BotKind.BHOOS_URL) else
                                      default_profiles("python"))


def test_nothing_but_the_kinds_decides_by_a_bots_kind_where_bots_are_launched_seated_and_played() -> None:
    # docs/architecture.md: nothing in launch/, play/ or run/ decides by a bot's kind but play/kinds.py (an assert
    # that narrows a type is no decision).
    kinds = "|".join(map(str, BotKind))
    setups = "|".join(setup.__name__ for setup in (*SETUPS, LaunchedBot))
    decides = re.compile(rf"BotKind\.[A-Z]|\.kind (?:==|!=|in) [\"'(]?(?:{kinds})|"
                         rf"(?<!assert )isinstance\([^)]*(?:{setups})|case (?:{setups})\(")
    found = []
    for room in ("launch", "play", "run"):
        for path in sorted((ROOT / "arena" / "event" / room).glob("*.py")):
            if path.name == "kinds.py":
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if decides.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
    assert decides.search("if isinstance(bot.setup, StdioBot):") and decides.search("if bot.kind == 'stdio':")
    assert not decides.search("assert isinstance(setup, PythonBot)")
