"""The Node.js sample bot (sample_bots/node/bot.js) plays real tournaments over real gRPC, and a copy of its
folder, made as docs/writing-a-bot.md says, passes check-bot in the sandbox.

It reads its copy of protocol/callbreak.proto at run time with @grpc/proto-loader. The tests need ``node``; when
``sample_bots/node/node_modules`` is missing they run ``npm ci`` there first, and skip only when npm
is missing or cannot reach its registry.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.core.cards import Card, Hand, Suit
from arena.core.dealing import seeded_deals
from arena.core.rules import Rules, legal_with_reason
from arena.event.audit import audit
from arena.event.launch.sandbox import bwrap_problem
from arena.players.table import TableSettings
from arena.records.format import GameRecord
from arena.transports.grpc.server import ArenaServer, ServerSettings
from tests.conftest import ROOT, BotProcess, Bots, check_record, free_port, run, token, tokens
from tests.helpers import runs
from tests.helpers.runs import cli
from tests.helpers.seating import seat_and_play

NODE_DIR = ROOT / "sample_bots" / "node"
BOT_JS = NODE_DIR / "bot.js"
VERSION = json.loads((NODE_DIR / "package.json").read_text(encoding="utf-8"))["version"]
NETWORK_TROUBLE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH",
                   "EHOSTUNREACH", "network")
RANKS = "23456789TJQKA"


@pytest.fixture(scope="module")
def node() -> str:
    """The ``node`` executable, with the bot's packages installed (by ``npm ci`` if they are missing)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node (Node.js) is not installed: the Node sample bot cannot run")
    packages = NODE_DIR / "node_modules" / "@grpc"
    if not all((packages / name / "package.json").is_file() for name in ("grpc-js", "proto-loader")):
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed, and sample_bots/node/node_modules is missing")
        try:
            done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True,
                                  text=True, timeout=180, check=False)
        except subprocess.TimeoutExpired:
            pytest.skip("npm ci in sample_bots/node did not finish in 180 s (no network?)")
        if done.returncode != 0:
            output = done.stdout + done.stderr
            trouble = [line.strip() for line in output.splitlines() if any(w in line for w in NETWORK_TROUBLE)]
            if trouble:
                pytest.skip(f"npm ci in sample_bots/node cannot reach the npm registry ({trouble[0]})")
            pytest.fail(f"npm ci in sample_bots/node failed:\n{output}")
    return node


# The strategy bot.js describes, in Python, to check that the records hold the bot's own decisions.
def node_call(hand: Sequence[str], trump: str, rules: Rules) -> int:
    sure = sum(1 for c in hand if c[0] == "A" or (c[1] == trump and c[0] in "KQ"))
    return min(max(sure, rules.min_call), rules.max_call)


def node_card(legal: Sequence[str], trick: Sequence[str], trump: str, call_made: bool) -> str:
    ordered = sorted(legal, key=lambda c: (c[1] == trump, RANKS.index(c[0]), c[1]))

    def beats(card: str, best: str) -> bool:
        return RANKS.index(card[0]) > RANKS.index(best[0]) if card[1] == best[1] else card[1] == trump

    if not trick or call_made:
        return ordered[0]
    best = trick[0]
    for card in trick[1:]:
        best = card if beats(card, best) else best
    return next((c for c in ordered if beats(c, best)), ordered[0])


def check_decisions(record: dict[str, Any], seat: int) -> int:
    """Checks the call and the 13 cards of ``seat`` in one round record; returns the decisions checked."""
    rules = Rules.from_dict(record["rules"])
    trump = record["trump"]
    hand = Hand.parse(record["hands"][seat]).mask
    assert record["calls"][seat] == node_call([str(c) for c in Hand.of_mask(hand).cards()], trump, rules)
    won = 0
    for number, trick in enumerate(record["tricks"]):
        position = (seat - trick["leader"]) % 4
        before = trick["cards"][:position]
        mask, _ = legal_with_reason(rules, hand, [Card.parse(c).index for c in before], Suit.parse(trump), number == 0)
        legal = [str(c) for c in Hand.of_mask(mask).cards()]
        played = trick["cards"][position]
        assert played == node_card(legal, before, trump, won >= record["calls"][seat]), (record["game"], number)
        hand &= ~Card.parse(played).bit
        won += trick["winner"] == seat
    assert won == record["tricks_won"][seat]
    return 14


@pytest.mark.slow
def test_node_bots_play_a_tournament_as_launched_commands_without_a_fault(node: str, tmp_path: Path) -> None:
    """Two Node bots launched by the arena (token in CALLBREAK_TOKEN, port 0) and two in-process bots."""
    # As a student writes it: "node" from the PATH, then the script (whose folder is the bot's own).
    command = ["node", str(BOT_JS), "--arena", "{address}", "--name", "{name}", "--seed", "{seed}"]
    config = runs.write(tmp_path / "t.toml", (
        '[tournament]\nname = "node"\nseed = 11\ndeal_sets = 2\nconcurrency = 2\n\n'
        '[time]\ndeadline_ms = 10000\nabsent_after_s = 30\n\n'
        '[server]\nport = 0\n\n'
        f'[[bots]]\nname = "node-a"\ncommand = {json.dumps(command)}\nseed = 1\n\n'
        f'[[bots]]\nname = "node-b"\ncommand = {json.dumps(command)}\nseed = 2\n\n'
        '[[bots]]\nname = "heuristic"\npython = "sample_bots.heuristic_bot:HeuristicBot"\n\n'
        '[[bots]]\nname = "random"\npython = "sample_bots.random_bot:RandomBot"\nseed = 3\n'
    ))
    folder = tmp_path / "results"
    summary = runs.run(config, folder, timeout=50)
    assert (summary.played, summary.faults, summary.outstanding) == (8, 0, 0)
    assert summary.disqualified == {} and summary.withdrawn == {}
    assert audit(folder) is None

    records = runs.records(folder)
    assert len(records) == 8 * 5 and all(r["faults"] == [] for r in records)
    checked = 0
    for record in records:
        for seat, bot in enumerate(record["seats"]):
            if bot.startswith("node-"):
                assert record["fallbacks"][seat] == 0
                checked += check_decisions(record, seat)
        if record["final"]:
            versions = {bot: record["versions"][seat] for seat, bot in enumerate(record["seats"])}
            assert versions["node-a"] == versions["node-b"] == VERSION
    assert checked == 2 * 8 * 5 * 14  # each Node bot: 8 games of 5 rounds, a call and 13 cards each

    for name in ("node-a", "node-b"):
        log = (folder / "logs" / f"{name}.log").read_text(encoding="utf-8")
        said = [line for line in log.splitlines() if line.startswith(f"[{name}] ")]
        assert said[0].startswith(f"[{name}] connected to the arena at "), log
        assert not any("notice" in line or "error" in line for line in said), log


def node_process(node: str, bots: Bots, name: str, args: Sequence[str], bot_token: str) -> BotProcess:
    """``node bot.js ARGS`` with ``bot_token`` in CALLBREAK_TOKEN, killed at the test's end."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLBREAK_")}
    env["CALLBREAK_TOKEN"] = bot_token
    n = len(bots.processes)
    proc = BotProcess(name, [node, str(BOT_JS), *args], bots.directory / f"bot{n}-{name}.out",
                      bots.directory / f"bot{n}-{name}.err", env, NODE_DIR)
    bots.processes.append(proc)
    return proc


def test_node_bots_play_over_a_unix_socket_and_stop_when_the_tournament_is_over(
    node: str, bots: Bots
) -> None:
    names = ["n0", "n1", "n2", "n3"]
    rules = Rules.profile("strict")  # min_call 2, no trump on the first lead, lower trumps must be played
    with tempfile.TemporaryDirectory(prefix="cb-node-") as short:  # a socket path must stay short
        address = f"unix:{short}/arena.sock"

        async def scenario() -> GameRecord:
            server = ArenaServer(ServerSettings(rules=rules, tokens=tokens(*names),
                                                table=TableSettings(deadline_ms=5000), reconnect_grace_s=1.0))
            await server.start(address)
            try:
                wrong = node_process(node, bots, "wrong", ["--arena", address, "--name", "n0"], token("n1"))
                assert await wrong.wait_async(15) == 1
                for name in names:  # the first one's token was copied with its line end: the bot trims it
                    copied = token(name) + ("\r\n" if name == names[0] else "")
                    node_process(node, bots, name, ["--arena", address, "--name", name], copied)
                return await seat_and_play(server, names, seeded_deals(23, 1), timeout=30)
            finally:
                await server.stop(0.5)  # the tournament is over: the streams end with status OK

        record = run(scenario())
    wrong, *players = bots.processes
    assert "UNAUTHENTICATED" in wrong.stderr() and wrong.stderr().rstrip().endswith("; stopping")
    assert record.faults == []
    check_record(record, rules)
    for proc in players:
        assert proc.wait(10) == 0, proc.stderr()
        lines = proc.stderr().splitlines()
        assert lines[0].startswith(f"[{proc.name}] connected to the arena at {address} (session s-")
        assert lines[-1] == f"[{proc.name}] the arena ended the stream: the tournament is over; stopping"
        assert len(lines) == 2, lines  # no notice: every answer was legal and in time


def test_a_launched_node_bot_stops_when_its_arena_ends(node: str, tmp_path: Path) -> None:
    """With CALLBREAK_LAUNCHED=1 the bot watches its standard input; end of file means the arena is gone."""
    env = dict(os.environ, CALLBREAK_LAUNCHED="1", CALLBREAK_TOKEN="token-x")
    err = tmp_path / "err.txt"
    with err.open("wb") as stderr:
        proc = subprocess.Popen([node, str(BOT_JS), "--arena", f"127.0.0.1:{free_port()}"], cwd=tmp_path,
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    try:
        deadline = time.monotonic() + 15
        while "retrying in" not in err.read_text(encoding="utf-8") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None  # nothing listens there: it keeps trying
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    lines = err.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("[node-bot] cannot reach the arena at 127.0.0.1:")
    assert lines[-1] == "[node-bot] the arena that launched this bot has ended; stopping"


def test_an_error_in_a_node_bots_decision_is_told_to_the_arena_at_once(node: str, tmp_path: Path) -> None:
    """A bug in chooseCard (its third card) is a crash fault naming the error and its line in bot.js, answered at
    once instead of costing the deadline; and a token copied with a line end still connects."""
    folder = tmp_path / "buggy"
    folder.mkdir()
    source = BOT_JS.read_text(encoding="utf-8")
    buggy = source.replace("function chooseCard(", "let cardsChosen = 0;\nfunction chooseCard(", 1).replace(
        "function chooseCard(request) {\n",
        "function chooseCard(request) {\n  if (++cardsChosen === 3) throw new RangeError('the third card');\n", 1)
    assert buggy.count("the third card") == 1, "bot.js's chooseCard changed: update this test"
    (folder / "bot.js").write_text(buggy, encoding="utf-8")
    (folder / "node_modules").symlink_to(NODE_DIR / "node_modules")
    shutil.copy(NODE_DIR / "package.json", folder / "package.json")
    line = buggy.splitlines().index("  if (++cardsChosen === 3) throw new RangeError('the third card');") + 1
    command = ["node", str(folder / "bot.js"), "--arena", "{address}", "--proto",
               str(ROOT / "protocol" / "callbreak.proto")]
    config = runs.write(tmp_path / "t.toml", (
        '[tournament]\nname = "node-bug"\nseed = 11\ndeal_sets = 1\nconcurrency = 1\nrotation = "cyclic"\n\n'
        '[time]\ndeadline_ms = 10000\nabsent_after_s = 30\n\n'
        f'[[bots]]\nname = "buggy"\ncommand = {json.dumps(command)}\n\n'
        '[[bots]]\nname = "h1"\npython = "sample_bots.heuristic_bot:HeuristicBot"\n\n'
        '[[bots]]\nname = "r1"\npython = "sample_bots.random_bot:RandomBot"\nseed = 3\n\n'
        '[[bots]]\nname = "r2"\npython = "sample_bots.random_bot:RandomBot"\nseed = 4\n'
    ))
    runs.run(config, tmp_path / "results", timeout=50)
    faults = [f for r in runs.records(tmp_path / "results") for f in r["faults"]]
    assert faults and {f["kind"] for f in faults} == {"crash"}, faults  # not "late": no deadline was waited out
    assert all(f"RangeError: the third card, at bot.js:{line}" in f["detail"] for f in faults), faults


def copied_sample(node: str, where: Path) -> Path:
    """The sample's folder copied whole to ``where`` (outside the repository), as a student copies it."""
    del node  # the fixture has installed node_modules, which the copy takes with it
    return Path(shutil.copytree(NODE_DIR, where, symlinks=True, ignore=shutil.ignore_patterns("callbreak-check-logs")))


def check_copy(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``check-bot`` of the copy in ``folder``, run from there with the command writing-a-bot.md gives."""
    result = cli("check-bot", "--command", "node bot.js --arena {address}", *options, "--logs", folder.parent / "logs",
                 cwd=folder, timeout=300)
    assert "unsandboxed" not in result.stderr, result.stderr  # the sandbox showed the bot its folder alone
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "7 of 7 checks passed"
    return result


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"the sandbox cannot run: {bwrap_problem()}")
def test_a_copy_of_the_sample_folder_passes_check_bot_in_the_sandbox(node: str, tmp_path: Path) -> None:
    check_copy(copied_sample(node, tmp_path / "my-bot"), "--profile", "nepali", "--games", "4")


@pytest.mark.soak
@pytest.mark.skipif(bwrap_problem() is not None, reason=f"the sandbox cannot run: {bwrap_problem()}")
def test_a_copy_of_the_sample_folder_passes_check_bot_under_every_profile(node: str, tmp_path: Path) -> None:
    check_copy(copied_sample(node, tmp_path / "my-bot"))


def test_bot_js_copied_alone_says_what_to_copy(node: str, tmp_path: Path) -> None:
    """Without its callbreak.proto, the bot says in words what to copy, and stops with exit status 2."""
    folder = tmp_path / "alone"
    folder.mkdir()
    for name in ("bot.js", "package.json"):
        shutil.copy(NODE_DIR / name, folder / name)
    (folder / "node_modules").symlink_to(NODE_DIR / "node_modules")
    done = subprocess.run([node, "bot.js", "--arena", f"127.0.0.1:{free_port()}"], cwd=folder, capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith(f"[node-bot] cannot find the protocol file {folder / 'callbreak.proto'}: ")
    assert "Copy the whole sample_bots/node folder" in done.stderr and "--proto FILE" in done.stderr
    assert len(done.stderr.splitlines()) == 1 and "ENOENT" not in done.stderr  # a sentence, not a stack trace
