"""Bots of the Bhoos Callbreak contest over HTTP (``bhoos = "..."``, ``bhoos_url = "..."``): real processes,
real HTTP, real bubblewrap.

The bots are small HTTP servers written here with the standard library, as contest bots are: hard-wired
to port 7000 on 127.0.0.1, stateful (one dies when asked out of order), in the older body shape,
failing with HTTP 500, late, crashing. Each ``bhoos`` instance plays one seat of one game in a network
namespace of its own, so four of them in each of two tables at once all listen on port 7000. The bodies
the arena sends are checked against the bots' own logs, and against a real game log of the contest's
engine (``tests/data/bhoos-sample-game.json``). The bot's script is ``tests/helpers/bhoos.py``.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.core.cards import Card
from arena.core.dealing import Deal, seeded_deals
from arena.core.faults import FaultKind, PlayerFault
from arena.core.game import Game
from arena.core.rules import Rules
from arena.errors import ConfigError
from arena.event.audit import audit
from arena.event.launch.sandbox import bwrap_problem
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.players.base import Decision, DecisionKind
from arena.transports.bhoos.httpclient import Endpoint, Response
from arena.transports.bhoos.player import BhoosPlayer, bhoos_card, bid_body, from_bhoos_card, play_body, read_answer
from tests.conftest import run as run_async
from tests.helpers.bhoos import BHOOS_BOT, engine_log, serving
from tests.helpers.runs import RANDOM, cli, faults_of, kinds_text, records, run, write

PROBLEM = bwrap_problem()
needs_bwrap = pytest.mark.skipif(PROBLEM is not None, reason=f"bhoos bots need the sandbox: {PROBLEM}")

@pytest.fixture
def bot(tmp_path: Path) -> Path:
    folder = tmp_path / "bot"
    folder.mkdir()
    return write(folder / "bot.py", BHOOS_BOT)


def config_text(
    bots: Sequence[tuple[str, str, str]], *, deal_sets: int = 1, concurrency: int = 2, rules: str = "rounds = 2",
    deadline_ms: int = 2000, extra: str = "",
) -> str:
    """A configuration under the bhoos profile: ``bots`` as (name, key, value) triples."""
    return kinds_text(bots, name="bhoos", seed=5, deal_sets=deal_sets, concurrency=concurrency,
                      rules=f'profile = "bhoos"\n{rules}', time=f"deadline_ms = {deadline_ms}", extra=extra)


def bodies(log: Path) -> list[tuple[str, dict[str, Any]]]:
    """The (path, body) of every request a test bot logged."""
    out = []
    for line in log.read_text().splitlines():
        if line.startswith("BODY "):
            path, _, body = line[5:].partition(" ")
            out.append((path, json.loads(body)))
    return out


def processes_running(marker: str) -> list[str]:
    """The command lines of this machine's processes that contain ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(cmdline)
    return found


@needs_bwrap
def test_bots_hard_wired_to_port_7000_fill_two_tables_at_once_without_a_fault(tmp_path: Path, bot: Path) -> None:
    names = ("b1", "b2", "b3", "b4")
    # Two of them run as two processes each, a reloader and its server, as some contest bots do.
    modes = {"b1": "reloader", "b2": "modern", "b3": "reloader", "b4": "modern"}
    text = config_text([(n, "bhoos", f"{{python}} {bot} {modes[n]}") for n in names])
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.faults, summary.outstanding) == (4, 0, 0)
    assert audit(results) is None
    assert processes_running(str(bot)) == []  # every instance's whole process tree ended with its game
    for name in names:  # a new instance for each seat of each game, two of them alive at once
        log = (results / "logs" / f"{name}.log").read_text()
        events = re.findall(r"(launched for|ended with)", log)
        assert events.count("launched for") == 4
        assert events[:2] == ["launched for", "launched for"]
        assert "in the sandbox" in log


@needs_bwrap
def test_stateful_old_and_modern_bots_play_and_the_bodies_say_what_the_seat_may_know(
    tmp_path: Path, bot: Path,
) -> None:
    text = config_text([("stateful", "bhoos", f"{{python}} {bot} stateful"), ("old", "bhoos", f"{{python}} {bot} old"),
                        ("modern", "bhoos", f"{{python}} {bot} modern"), ("r1", "python", RANDOM)],
                       deadline_ms=1500)
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.faults, summary.outstanding) == (4, 0, 0)
    assert "DYING" not in (results / "logs" / "stateful.log").read_text()
    rounds = {(r["game"], r["round"]): r for r in records(results)}
    sent = bodies(results / "logs" / "modern.log")
    assert [path for path, _ in sent].count("/bid") == 4 * 2 and [path for path, _ in sent].count("/play") == 4 * 2 * 13
    for path, body in sent:
        record = rounds[(body["matchId"], body["context"]["round"])]
        seat = record["seats"].index("modern")
        assert body["playerIds"] == ["P0", "P1", "P2", "P3"] and body["playerId"] == f"P{seat}"
        assert body["timeBudget"] == 1500
        players = body["context"]["players"]
        assert list(players) == ["P0", "P1", "P2", "P3"]
        dealt = {bhoos_card(Card.parse(c)) for c in record["hands"][seat].split()}
        if path == "/bid":
            assert set(body["cards"]) == dealt and len(body["cards"]) == 13
            order = [(record["dealer"] + 1 + k) % 4 for k in range(4)]
            before = order[: order.index(seat)]
            assert [players[f"P{s}"]["bid"] for s in range(4)] == [
                record["calls"][s] if s in before else 0 for s in range(4)]
            assert all(p["won"] == 0 for p in players.values())
            continue
        history = body["history"]
        tricks = record["tricks"][: len(history)]
        assert history == [[t["leader"], [bhoos_card(Card.parse(c)) for c in t["cards"]], t["winner"]]
                           for t in tricks]
        mine = {bhoos_card(Card.parse(t["cards"][(seat - t["leader"]) % 4])) for t in tricks}
        assert set(body["cards"]) == dealt - mine  # its own cards still held: no other seat's
        trick = record["tricks"][len(history)]
        assert body["played"] == [bhoos_card(Card.parse(c)) for c in trick["cards"][: (seat - trick["leader"]) % 4]]
        assert [players[f"P{s}"]["bid"] for s in range(4)] == record["calls"]
        assert [players[f"P{s}"]["won"] for s in range(4)] == [
            sum(1 for t in tricks if t["winner"] == s) for s in range(4)]
        assert body["players"] == body["playerIds"]


@pytest.mark.slow
@needs_bwrap
def test_a_bot_that_fails_is_charged_alone_and_the_tournament_completes(tmp_path: Path, bot: Path) -> None:
    modes = ("bid500", "late", "crash", "modern")
    # Deadlines generous enough for a loaded machine: only the late bot is late.
    text = config_text([(m, "bhoos", f"{{python}} {bot} {m}") for m in modes], deadline_ms=3000)
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.outstanding) == (4, 0)
    assert audit(results) is None
    faults = faults_of(results)
    assert "modern" not in faults
    assert {f["kind"] for f in faults["bid500"]} == {"crash"} and len(faults["bid500"]) == 4 * 2
    assert faults["bid500"][0]["detail"].startswith("POST /bid answered HTTP 500 'Internal Server Error'")
    assert all(f["trick"] is None and f["fallback"] == "1" for f in faults["bid500"])  # the lowest call, each time
    assert [f["kind"] for f in faults["late"]] == ["late"] * 4
    assert faults["late"][0]["detail"] == "no answer to POST /play within 3000 ms: the deadline passed"
    assert [f["kind"] for f in faults["crash"]] == ["crash"] * 4
    assert "exit status 3" in faults["crash"][0]["detail"]
    assert "DYING: crashing on purpose" in (results / "logs" / "crash.log").read_text()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def running_bot(bot: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The stateful bot, started by the test on a free port: its URL and its log."""
    log = tmp_path / "url-bot.log"
    with serving(bot, "stateful", log) as url:
        yield url, log


def test_a_bhoos_url_bot_plays_one_seat_at_a_time(tmp_path: Path, running_bot: tuple[str, Path]) -> None:
    url, log = running_bot
    text = config_text([("url", "bhoos_url", url), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                        ("r3", "python", RANDOM)], concurrency=3)
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    # Stateful, and one process for every game: a second table at once would have killed it.
    assert (summary.played, summary.faults, summary.outstanding) == (4, 0, 0)
    assert "DYING" not in log.read_text()
    assert len([b for b in bodies(log) if b[0] == "/bid"]) == 4 * 2


def test_a_bot_that_dies_on_a_call_out_of_order_is_a_crash_of_its_seat(running_bot: tuple[str, Path]) -> None:
    """The stateful test bot is a real check: asked to play before its bid, it dies, and the seat gets a
    ``crash`` fault; the arena goes on."""
    url, log = running_bot
    game = Game(Rules.profile("bhoos"), seeded_deals(1, 1))
    for _ in range(4):
        game.call(1)
    seat = game.current_seat
    player = BhoosPlayer("stateful", Endpoint.from_url(url))
    decision = Decision(DecisionKind.PLAY, "t", "g", seat, game.view(seat), ("a",) * 4, 2000, 0)
    with pytest.raises(PlayerFault) as caught:
        run_async(player.decide(decision))
    assert caught.value.kind is FaultKind.CRASH
    assert caught.value.detail.startswith(f"POST /play to {url}: ")
    assert "DYING: /play before /bid" in log.read_text()


def test_a_bhoos_url_bot_that_is_not_there_holds_up_only_its_own_games(tmp_path: Path) -> None:
    text = config_text([("gone", "bhoos_url", f"http://127.0.0.1:{free_port()}"), ("r1", "python", RANDOM),
                        ("r2", "python", RANDOM), ("r3", "python", RANDOM)],
                       extra="\n[faults]\nrestarts = 0\n").replace('seed = 1\n', 'seed = 1\nstart_timeout_s = 0.5\n', 1)
    summary = run(write(tmp_path / "t.toml", text), tmp_path / "results")
    assert summary.played == 0 and summary.outstanding == 4
    assert "did not answer GET /hi within 0.5 s (cannot connect: Connection refused)" in summary.awaited["gone"]


def test_a_bhoos_command_without_the_sandbox_is_refused_in_one_line(tmp_path: Path, bot: Path) -> None:
    text = config_text([("b", "bhoos", f"{{python}} {bot} modern"), ("r1", "python", RANDOM),
                        ("r2", "python", RANDOM), ("r3", "python", RANDOM)],
                       extra='\n[sandbox]\nmode = "off"\n').replace(
        "concurrency = 2\n", f"concurrency = 2\nresults = {json.dumps(str(tmp_path / 'results'))}\n")
    config = write(tmp_path / "t.toml", text)
    with pytest.raises(ConfigError) as caught:
        run_async(Tournament(parse_config(text, config), tmp_path / "results").run())
    assert "needs a network namespace of its own" in str(caught.value)
    done = cli("run", config, "--no-progress")
    assert done.returncode == 2, done.stderr
    error = done.stderr.strip().splitlines()[-1]  # after the line that names the tournament
    assert error.startswith("callbreak-arena: error: bot 'b' is a bhoos bot")
    assert "bubblewrap" in error and "bhoos_url" in error
    assert not (tmp_path / "results").exists()  # refused before anything ran


def test_a_bhoos_command_where_bubblewrap_cannot_run_is_refused(
    tmp_path: Path, bot: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import arena.event.play.services

    missing = "bubblewrap (bwrap) is not installed (on Debian or Ubuntu: apt install bubblewrap)"
    monkeypatch.setattr(arena.event.play.services, "bwrap_problem", lambda: missing)
    text = config_text([("b", "bhoos", f"{{python}} {bot} modern"), ("r1", "python", RANDOM),
                        ("r2", "python", RANDOM), ("r3", "python", RANDOM)])
    with pytest.raises(ConfigError) as caught:
        run_async(Tournament(parse_config(text, tmp_path / "t.toml"), tmp_path / "results").run())
    assert str(caught.value) == (
        "bot 'b' is a bhoos bot, and each of its instances needs a network namespace of its own (they all listen "
        f"on port 7000), which only the bubblewrap sandbox gives, but {missing}: install bubblewrap where it can "
        "run, or start the bot yourself and give it as bhoos_url = \"http://host:port\"")
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(("table", "words"), [
    ('bhoos = "{python} bot.py"\nbhoos_url = "http://h:7000"', ["exactly one of", "found bhoos, bhoos_url"]),
    ('bhoos_url = "ftp://h:7000"', ["bots[1].bhoos_url must look like http://host:port"]),
    ('bhoos_url = "http://h:port"', ["bots[1].bhoos_url has a port that is not a number"]),
    ('bhoos = "{python} bot.py --arena {address}"', ["a bhoos bot has no {address}"]),
    ('bhoos = "{python} bot.py"\nport = 70000', ["bots[1].port must be a whole number from 1 to 65535"]),
    ('bhoos_url = "http://h:7000"\nfolder = "x"', ["folder is for bots the arena launches"]),
])
def test_bhoos_configuration_errors_name_the_key(table: str, words: list[str]) -> None:
    text = config_text([("r1", "python", RANDOM), ("r2", "python", RANDOM), ("r3", "python", RANDOM)])
    text = text.replace("[[bots]]", f'[[bots]]\nname = "x"\n{table}\n\n[[bots]]', 1)
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    assert "\n" not in str(caught.value)
    for word in words:
        assert word in str(caught.value), str(caught.value)


def test_a_bhoos_url_bot_cannot_be_copied_in_a_head_to_head() -> None:
    text = config_text([("a", "bhoos_url", "http://h:7000"), ("b", "python", RANDOM)]).replace(
        "[rules]", '[head-to-head]\na = "a"\nb = "b"\n\n[rules]').replace(
        "concurrency = 2", 'concurrency = 2\nformat = "head-to-head"')
    with pytest.raises(ConfigError, match="'a' is a bhoos_url bot: such a bot cannot be copied"):
        parse_config(text)


# -- the protocol, without processes -------------------------------------------------------------


def test_cards_in_the_contests_notation() -> None:
    assert bhoos_card(Card.parse("AS")) == "1S" and bhoos_card(Card.parse("TD")) == "TD"
    assert from_bhoos_card("1S") == "AS" and from_bhoos_card("8D/1") == "8D" and from_bhoos_card("1h/0") == "Ah"
    assert from_bhoos_card("QC") == "QC" and from_bhoos_card("bogus") == "bogus"


@pytest.mark.parametrize(("kind", "body", "value"), [
    (DecisionKind.CALL, b'{"value": 3}', 3),
    (DecisionKind.CALL, b"3", 3),
    (DecisionKind.CALL, b'"4"', 4),
    (DecisionKind.CALL, b'{"value": 2.0}', 2),
    (DecisionKind.PLAY, b'{"value": "1S"}', "AS"),
    (DecisionKind.PLAY, b'"QH"', "QH"),
    (DecisionKind.PLAY, b'{"value": "8D/1"}', "8D"),
    (DecisionKind.PLAY, b'{"value": "ZZ"}', "ZZ"),  # not a card: the table refuses it and asks again
])
def test_answers_in_both_shapes_are_read(kind: DecisionKind, body: bytes, value: object) -> None:
    assert read_answer(kind, "/x", Response(200, "OK", {}, body)) == value


@pytest.mark.parametrize(("kind", "body", "words"), [
    (DecisionKind.CALL, b"three", "is not JSON"),
    (DecisionKind.CALL, b'{"bid": 3}', 'has no "value"'),
    (DecisionKind.CALL, b'{"value": true}', "is not a whole number"),
    (DecisionKind.PLAY, b'{"value": 7}', "is not a string"),
])
def test_answers_that_cannot_be_read_are_malformed(kind: DecisionKind, body: bytes, words: str) -> None:
    with pytest.raises(PlayerFault) as caught:
        read_answer(kind, "/x", Response(200, "OK", {}, body))
    assert caught.value.kind is FaultKind.MALFORMED and words in caught.value.detail


def test_the_bodies_match_a_real_game_log_of_the_contest_engine() -> None:
    """Replayed through the arena's own game, every /play body's ``history``, ``played``, ``cards`` and
    ``context`` is what the contest's engine logged for that moment, in its notation."""
    log = engine_log()

    def deal(number: int, attempt: int) -> Deal:
        data = log["rounds"][number - 1]
        seats = [(data["dealer"] + 1 + k) % 4 for k in range(4)]  # hand k goes to the k-th seat after the dealer
        return Deal(tuple(Card.parse(from_bhoos_card(log_card)).index
                          for position in range(13) for log_card in (data["cards"][s][position] for s in seats)))

    game = Game(Rules.profile("bhoos"), deal, first_dealer=log["rounds"][0]["dealer"])
    checked = 0
    for number, data in enumerate(log["rounds"], start=1):
        totals = [0.0] * 4 if number == 1 else log["rounds"][number - 2]["scores"]
        for seat in [(data["dealer"] + 1 + k) % 4 for k in range(4)]:
            body = bid_body(Decision(DecisionKind.CALL, "t", "g", seat, game.view(seat), ("a",) * 4, 1000, 0))
            assert sorted(body["cards"]) == sorted(data["cards"][seat])
            game.call(data["bids"][seat])
        for index, action in enumerate(data["actions"]):
            for position, log_card in enumerate(action["cards"]):
                seat = (action["started"] + position) % 4
                view = game.view(seat)
                body = play_body(Decision(DecisionKind.PLAY, "t", "g", seat, view, ("a",) * 4, 1000, 0))
                assert body["history"] == [[a["started"], a["cards"], a["ended"]] for a in data["actions"][:index]]
                assert body["played"] == action["cards"][:position]
                held = set(data["cards"][seat]) - {a["cards"][(seat - a["started"]) % 4]
                                                   for a in data["actions"][:index]}
                assert set(body["cards"]) == held
                context = body["context"]
                assert context["round"] == number
                assert [context["players"][f"P{s}"]["bid"] for s in range(4)] == data["bids"]
                assert [context["players"][f"P{s}"]["totalPoints"] for s in range(4)] == pytest.approx(totals)
                assert [context["players"][f"P{s}"]["won"] for s in range(4)] == [
                    sum(1 for a in data["actions"][:index] if a["ended"] == s) for s in range(4)]
                game.play(Card.parse(from_bhoos_card(log_card)))
                checked += 1
    assert checked == 5 * 52
    assert [t / 10 for t in game.totals] == pytest.approx(log["rounds"][-1]["scores"])
