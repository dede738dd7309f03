"""Tokens: never on a command line, kept only as digests, bound to one bot name, one live session per
bot; over real gRPC on port 0, with real bot processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.cli import main
from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.event.launch.launcher import Launcher
from arena.event.run.tournament import Tournament
from arena.event.setup.botconfig import BotConfig, CommandBot
from arena.event.setup.config import load_config
from arena.transports.grpc.server import ArenaServer, ServerSettings
from arena.transports.grpc.session import Session
from arena.transports.grpc.tokens import find_bot, is_sha256, new_token, token_sha256
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc
from tests.conftest import Bots, arena, check_record, free_port, handshake, hello, run, token, tokens
from tests.helpers.runs import BOTS, KEPT, RANDOM, ROOT, UNSANDBOXED, tournament_text, write
from tests.helpers.runs import run as run_tournament
from tests.helpers.seating import seat_and_play

FOUR = ["ana", "bo", "cy", "di"]
TELLER = f"{{python}} {BOTS} TokenTeller --arena {{address}} --seed {{seed}} --option out={{out}}/{{name}}.jsonl"


def refusal(received: list[pb.ConnectResponse]) -> str:
    """The name of the one refusal received."""
    assert [m.WhichOneof("kind") for m in received] == ["refusal"], received
    return str(pb.RefusalReason.Name(received[0].refusal.reason))


# --- digests ------------------------------------------------------------------------------------------


def test_a_token_is_known_by_its_sha256_digest_alone() -> None:
    # The FIPS 180-2 test vector: the digest is plain SHA-256 of the UTF-8 bytes, as `sha256sum` gives it.
    assert token_sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    digests = {token_sha256("alpha"): "ana", token_sha256("beta"): "bo"}
    assert find_bot(digests, "alpha") == "ana" and find_bot(digests, "beta") == "bo"
    assert find_bot(digests, "gamma") is None
    assert find_bot(digests, token_sha256("alpha")) is None  # the digest itself is no token
    made = {new_token() for _ in range(100)}
    assert len(made) == 100 and all(len(t) == 32 and int(t, 16) >= 0 for t in made)
    assert is_sha256(token_sha256(new_token())) and not is_sha256("ABC") and not is_sha256("0" * 63)


def test_the_arena_holds_no_token() -> None:
    server = ArenaServer(ServerSettings(rules=Rules.profile(), tokens=tokens("ana")))
    server.add_token("launched-secret", "bo@r1-g1-d1-p1")
    held = repr(vars(server)) + repr(server.settings)
    assert "launched-secret" not in held and token("ana") not in held
    assert server.admit(hello("launched-secret").hello) == ("bo@r1-g1-d1-p1", None)


# --- a token binds one bot name -------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "welcomed"), [
    pytest.param("", True, id="no-name"),
    pytest.param("ana", True, id="its-name"),
    pytest.param("bo", False, id="another-bot"),
    pytest.param("Ana", False, id="other-case"),
    pytest.param("ana ", False, id="trailing-space"),
])
def test_a_hello_may_name_only_the_bot_its_token_belongs_to(name: str, welcomed: bool) -> None:
    async def scenario() -> tuple[list[pb.ConnectResponse], grpc.StatusCode, str]:
        async with arena(FOUR) as (_, port):
            return await handshake(port, hello(token("ana"), name=name))

    received, code, detail = run(scenario())
    if welcomed:
        assert [m.WhichOneof("kind") for m in received] == ["welcome"]
        return
    assert refusal(received) == "REFUSAL_REASON_BAD_TOKEN" and code is grpc.StatusCode.UNAUTHENTICATED
    assert detail == (f"this token belongs to the bot 'ana', but the Hello names {name!r}: use your own bot's "
                      "token, and send the name the organiser gave your bot or no name at all")


def test_a_process_launched_for_one_game_is_named_as_its_bot() -> None:
    async def scenario() -> tuple[str, str]:
        async with arena(FOUR) as (server, port):
            server.add_token("per-game", "ana@r1-g1-d1-p1")
            welcomed = await handshake(port, hello("per-game", name="ana"))
            refused = await handshake(port, hello("per-game", name="ana@r1-g1-d1-p1"))
            return welcomed[0][0].WhichOneof("kind"), refusal(refused[0])

    assert run(scenario()) == ("welcome", "REFUSAL_REASON_BAD_TOKEN")


def test_the_bot_kit_sends_a_name_only_when_told_and_is_refused_for_a_wrong_one(bots: Bots) -> None:
    async def scenario() -> tuple[int, Any]:
        async with arena(FOUR) as (server, port):
            wrong = bots.random(port, "ana", "--name", "bo")
            status = await wrong.wait_async(15)
            # The kit's own class name ("random") is not sent: three bots without --name are welcomed.
            for seed, name in enumerate(FOUR):
                bots.random(port, name, *(["--name", name] if name == "ana" else []), seed=seed)
            return status, await seat_and_play(server, FOUR, seeded_deals(5, 1), timeout=20)

    status, record = run(scenario())
    assert status == 1
    assert ("refused by the arena: REFUSAL_REASON_BAD_TOKEN: this token belongs to the bot 'ana', but the Hello "
            "names 'bo'") in bots.processes[0].stderr()
    assert record.faults == []
    check_record(record, Rules.profile())


# --- one live session per bot ---------------------------------------------------------------------------


async def open_stream(channel: grpc.aio.Channel, name: str) -> tuple[Any, pb.ConnectResponse]:
    stream = pb_grpc.ArenaStub(channel).Connect()
    await stream.write(hello(token(name)))
    return stream, await stream.read()


def test_a_second_and_third_stream_on_one_token_are_refused_by_default() -> None:
    async def scenario() -> tuple[str, list[tuple[list[pb.ConnectResponse], grpc.StatusCode, str]]]:
        async with arena(FOUR) as (_, port), grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            _, first = await open_stream(channel, "ana")
            more = [await handshake(port, hello(token("ana"))) for _ in range(2)]
            return first.WhichOneof("kind"), more

    first, more = run(scenario())
    assert first == "welcome"
    for received, code, detail in more:
        assert refusal(received) == "REFUSAL_REASON_DUPLICATE_SESSION" and code is grpc.StatusCode.ALREADY_EXISTS
        assert detail == ("the bot 'ana' already has a live session, the most this arena allows: another copy of "
                          "it is connected with the same token; stop that copy, or wait until its connection ends")


def test_an_arena_may_allow_a_bot_more_sessions() -> None:
    async def scenario() -> list[str]:
        async with arena(FOUR, max_sessions=3) as (_, port), grpc.aio.insecure_channel(
            f"127.0.0.1:{port}"
        ) as channel:
            kinds = [(await open_stream(channel, "ana"))[1].WhichOneof("kind") for _ in range(3)]
            received, _, detail = await handshake(port, hello(token("ana")))
            assert "already has 3 live sessions" in detail
            return [*kinds, refusal(received)]

    assert run(scenario()) == ["welcome"] * 3 + ["REFUSAL_REASON_DUPLICATE_SESSION"]


def test_a_bot_that_drops_its_stream_and_comes_back_at_once_is_welcomed() -> None:
    async def scenario() -> list[str]:
        kinds = []
        async with arena(FOUR) as (_, port):
            for _ in range(5):
                async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                    stream, first = await open_stream(channel, "ana")
                    kinds.append(first.WhichOneof("kind"))
                    stream.cancel()  # the bot drops the stream and dials again straight away
        return kinds

    assert run(scenario()) == ["welcome"] * 5


def test_a_session_whose_stream_is_being_cancelled_does_not_count() -> None:
    """The new Hello may be read before the old stream's handler has run its cancellation: the old
    session is gone all the same, or a bot that reconnects at once would lose its reconnect grace."""

    async def scenario() -> tuple[Any, Any]:
        server = ArenaServer(ServerSettings(rules=Rules.profile(), tokens=tokens("ana")))

        async def write(msg: pb.ConnectResponse) -> None:
            pass

        session = Session("s-1", "ana", write, pb.Rules(), on_close=server.lobby.remove)
        session.handler = asyncio.get_running_loop().create_task(asyncio.sleep(10))
        server.lobby.add(session)
        live = server.admit(hello(token("ana")).hello)
        session.handler.cancel()  # the peer cancelled; the handler has not run since
        dropped = server.admit(hello(token("ana")).hello)
        session.close("test over")
        return live, dropped

    live, dropped = run(scenario())
    assert live[1] is not None and live[1][0] == pb.REFUSAL_REASON_DUPLICATE_SESSION
    assert dropped == ("ana", None)


def test_sessions_per_bot_in_the_configuration_is_the_arenas_limit(tmp_path: Path) -> None:
    port = free_port()
    text = tournament_text(("a", "b", "c", "d"), spec=RANDOM, extra=f"[server]\nport = {port}\nsessions_per_bot = 2\n")
    config = load_config(write(tmp_path / "t.toml", text + '\n[[bots]]\nname = "ana"\nremote = true\n'
                                                           f'token_sha256 = "{token_sha256(token("ana"))}"\n'))

    async def scenario() -> list[str]:
        tournament = Tournament(config, tmp_path / "out")
        running = asyncio.create_task(tournament.run())
        try:
            for _ in range(100):  # the arena is listening once a stream gets an answer
                try:
                    kinds = []
                    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                        for _ in range(2):
                            kinds.append((await open_stream(channel, "ana"))[1].WhichOneof("kind"))
                        received, _, _ = await handshake(port, hello(token("ana")))
                        return [*kinds, refusal(received)]
                except grpc.aio.AioRpcError:
                    await asyncio.sleep(0.1)
            raise AssertionError("the arena never listened")
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)

    assert run(scenario(), timeout=60) == ["welcome", "welcome", "REFUSAL_REASON_DUPLICATE_SESSION"]


# --- launched bots get their tokens in the environment --------------------------------------------------


def told(folder: Path, name: str) -> list[dict[str, Any]]:
    """What each process of bot ``name`` said about its start (``TokenTeller``)."""
    return [json.loads(line) for line in (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


def test_a_launched_bot_gets_a_fresh_token_per_run_in_its_environment_only(tmp_path: Path) -> None:
    text = tournament_text(FOUR, kind="command", spec=TELLER.replace("{out}", str(tmp_path)), deal_sets=1,
                           tournament=KEPT, extra=UNSANDBOXED)
    config = write(tmp_path / "t.toml", text)
    assert run_tournament(config, tmp_path / "first").played == 4
    assert run_tournament(config, tmp_path / "second").played == 4
    seen = set()
    for name in FOUR:
        first, second = told(tmp_path, name)  # one process per run: restarts would keep the run's token
        for start in (first, second):
            assert start["token"] and start["token"] not in " ".join(start["argv"])
            assert "--token" not in start["argv"]
            seen.add(start["token"])
        for folder in ("first", "second"):
            log = (tmp_path / folder / "logs" / f"{name}.log").read_text(encoding="utf-8")
            assert first["token"] not in log and second["token"] not in log
    assert len(seen) == 8  # every bot, every run: a token of its own


def test_a_bot_launched_for_each_game_gets_a_token_for_each_game(tmp_path: Path) -> None:
    text = tournament_text(("r1", "r2"), kind="command", spec=TELLER.replace("{out}", str(tmp_path)), deal_sets=1,
                           tournament="fresh_process = true\n", extra=UNSANDBOXED)
    text += "".join(f'\n[[bots]]\nname = "r{n}"\npython = "{RANDOM}"\nseed = {n}\n' for n in (3, 4))
    assert run_tournament(write(tmp_path / "fresh.toml", text), tmp_path / "out").played == 4
    for name in ("r1", "r2"):
        starts = told(tmp_path, name)
        assert len(starts) == 4 and len({s["token"] for s in starts}) == 4
        assert all(s["token"] not in " ".join(s["argv"]) for s in starts)


def test_a_results_folder_recorded_with_token_on_the_command_line_resumes(tmp_path: Path) -> None:
    """Folders recorded before the token left the command line: dropping --token {token} from a bot's
    command does not make it another bot."""
    command = "{python} -m sample_bots.random_bot --arena {address} --seed {seed}"
    config = write(tmp_path / "t.toml", tournament_text(("r1", "r2"), kind="command", spec=command, deal_sets=1)
                   + "".join(f'\n[[bots]]\nname = "r{n}"\npython = "{RANDOM}"\nseed = {n}\n' for n in (3, 4)))
    assert run_tournament(config, tmp_path / "out").played == 4
    manifest_path = tmp_path / "out" / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for bot in manifest["config"]["bots"]:
        if bot["command"]:
            bot["command"][4:4] = ["--token", "{token}"]
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    write(tmp_path / "t.toml", config.read_text(encoding="utf-8").replace("deal_sets = 1", "deal_sets = 2"))
    summary = run_tournament(config, tmp_path / "out")
    assert summary.played == 4 and summary.skipped == 4


# --- hashed tokens in the configuration, end to end -----------------------------------------------------


def test_remote_bots_configured_by_digest_play_and_no_token_is_written(tmp_path: Path) -> None:
    port = free_port()
    made = {name: new_token() for name in FOUR}
    text = tournament_text((), deal_sets=1, extra=f"[server]\nport = {port}\n")
    for name in FOUR:
        key = f'token = "{made[name]}"' if name == "di" else f'token_sha256 = "{token_sha256(made[name])}"'
        text += f'\n[[bots]]\nname = "{name}"\nremote = true\n{key}\n'
    config = write(tmp_path / "t.toml", text)
    env = {k: v for k, v in os.environ.items() if k != "CALLBREAK_LAUNCHED"}
    procs = [subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot", "--arena", f"127.0.0.1:{port}",
                               "--seed", str(seed)], cwd=ROOT, env={**env, "CALLBREAK_TOKEN": made[name]},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for seed, name in enumerate(FOUR)]
    try:
        summary = run_tournament(config, tmp_path / "out")
        statuses = [proc.wait(20) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert summary.played == 4 and summary.faults == 0
    assert statuses == [0] * 4  # each read its token from CALLBREAK_TOKEN and saw the tournament end
    written = "".join(p.read_text(encoding="utf-8", errors="replace") for p in (tmp_path / "out").rglob("*")
                      if p.is_file())
    assert not [name for name in FOUR if made[name] in written or token_sha256(made[name]) in written]


# --- callbreak-arena token ------------------------------------------------------------------------------


def test_the_token_command_prints_a_token_and_the_line_for_the_configuration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["token"]) == 0
    comment, made, comment2, line = capsys.readouterr().out.splitlines()
    assert comment.startswith("# ") and comment2.startswith("# ") and "CALLBREAK_TOKEN" in comment
    assert len(made) == 32 and tomllib.loads(line) == {"token_sha256": token_sha256(made)}
    assert main(["token"]) == 0
    assert capsys.readouterr().out.splitlines()[1] != made  # a new one each time


def test_the_token_commands_table_for_a_named_bot_is_admitted_by_an_arena(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    assert main(["token", "--name", "ana"]) == 0
    lines = capsys.readouterr().out.splitlines()
    made, table = lines[1], "\n".join(lines[2:])
    assert tomllib.loads(table)["bots"] == [{"name": "ana", "remote": True, "token_sha256": token_sha256(made)}]
    config = load_config(write(tmp_path / "t.toml", tournament_text(("b", "c", "d"), spec=RANDOM) + table + "\n"))
    digests = {config.bot("ana").setup.token_sha256: "ana"}
    server = ArenaServer(ServerSettings(rules=Rules.profile(), tokens=digests))
    assert server.admit(hello(made, name="ana").hello) == ("ana", None)


def test_the_token_command_has_help() -> None:
    result = subprocess.run([sys.executable, "-m", "arena", "token", "--help"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0
    assert "token_sha256" in result.stdout and "CALLBREAK_TOKEN" in result.stdout and "--name" in result.stdout


def test_the_token_of_a_process_launched_for_one_game_is_forgotten_when_it_stops(tmp_path: Path) -> None:
    """A process launched for one game holds a token for that game only: once it is stopped, the
    arena refuses the token, so a copy kept by the bot (or read off it) opens nothing later."""
    async def scenario() -> tuple[bool, bool, str]:
        async with arena(FOUR) as (server, port):
            launcher = Launcher(tmp_path, f"127.0.0.1:{port}", restarts=0, register=server.add_token,
                                unregister=server.remove_token, present=server.lobby.present, changed=lambda: None)
            bot = BotConfig("bo", CommandBot(argv=("{python}", "-m", "sample_bots.random_bot", "--arena", "{address}")))
            entry, session = await launcher.launch_for_game(bot, "bo@g1", server.lobby.claim, 30)
            known_while_playing = "bo@g1" in server._tokens.values()
            session.close("test over")
            await launcher.stop(entry)
            forgotten = "bo@g1" not in server._tokens.values()
            await launcher.close()
            return known_while_playing, forgotten, session.bot

    known, forgotten, bot = run(scenario())
    assert bot == "bo@g1" and known and forgotten


def test_a_game_called_off_while_its_process_comes_up_leaves_no_process_and_no_token(tmp_path: Path) -> None:
    """A launch for one game cancelled before the process connected (the page that asked for it went away,
    say): its process is stopped at once and its token forgotten, not left to wait out the connect timeout."""
    async def scenario() -> tuple[int | None, bool, float]:
        async with arena(FOUR) as (server, port):
            launcher = Launcher(tmp_path, f"127.0.0.1:{port}", restarts=0, register=server.add_token,
                                unregister=server.remove_token, present=server.lobby.present, changed=lambda: None)
            silent = ("{python}", "-c", "import time; time.sleep(60)")  # never connects
            bot = BotConfig("mute", CommandBot(argv=silent))
            launch = asyncio.ensure_future(launcher.launch_for_game(bot, "mute@g1", server.lobby.claim, 30))
            while not launcher._all:
                await asyncio.sleep(0.01)
            process = launcher._all[0].process
            await asyncio.sleep(0.3)
            began = time.monotonic()
            launch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await launch
            took = time.monotonic() - began
            forgotten = "mute@g1" not in server._tokens.values()
            await launcher.close()
            return process.returncode, forgotten, took

    status, forgotten, took = run(scenario())
    assert status is not None and forgotten and took < 10
