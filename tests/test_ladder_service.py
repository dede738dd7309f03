"""``ladder serve`` as an organiser runs it: twelve entrants (Python kit files and stdio bots submitted with
``ladder submit``, a remote gRPC bot connecting with its token), the service killed with SIGKILL mid-block,
started again, and ``ladder check`` and ``verify`` on what it recorded; on SQLite and on PostgreSQL.

Everything is real: the command line as processes, the site over a socket, the bots as sandboxed processes
(where bubblewrap is installed), the database a file or a private PostgreSQL server.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from arena.event.audit import audit
from arena.ladder.control import Ladder
from arena.ladder.db import Block, BlockState, Version, VersionState
from tests.helpers.ladder import GOOD_BOT, SANDBOX, Served
from tests.helpers.postgres import fresh_database, postgres_server
from tests.helpers.runs import ROOT, cli

STDIO_BOT = (ROOT / "sample_bots" / "stdio" / "lowest_bot.py").read_text(encoding="utf-8")


def _remote(address: str, token: str) -> subprocess.Popen[bytes]:
    """The remote entrant's kit bot, connected to ``address`` with its token."""
    return subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot", "--arena", address,
                             "--max-backoff", "1"],
                            env={**os.environ, "CALLBREAK_TOKEN": token}, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _end(process: subprocess.Popen[bytes] | None) -> None:
    if process is not None and process.poll() is None:
        process.terminate()
        process.wait(10)


def _wait(ladder: Ladder, condition: object, timeout: float, what: str) -> None:
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        with ladder.session() as session:
            if condition(session):  # type: ignore[operator]
                return
        time.sleep(0.3)
    raise AssertionError(f"{what} did not happen within {timeout} s")


def _blocks(session: object, state: BlockState) -> list[Block]:
    return list(session.scalars(select(Block).where(Block.state == state)))  # type: ignore[attr-defined]


def _scenario(tmp_path: Path, database: str | None) -> None:
    folder = tmp_path / "ladder"
    init = ["ladder", "init", folder, *(["--database", database] if database else [])]
    assert cli(*init).returncode == 0
    settings = folder / "ladder.toml"
    text = settings.read_text(encoding="utf-8").replace('mode = "bwrap"', f'mode = "{SANDBOX}"')
    for key, value in (("placement_blocks", "1"), ("check_games", "4"), ("patience_s", "10.0"),
                       ("per_hour", "4")):
        text = re.sub(rf"^{key} = \S+", f"{key} = {value}", text, flags=re.M)
    settings.write_text(text, encoding="utf-8")
    tokens = {}
    names = [f"py-{n}" for n in range(8)] + [f"stdio-{n}" for n in range(3)] + ["remote-0"]
    for name in names:
        added = cli("ladder", "add", folder, name, *(["--remote"] if name.startswith("remote") else []))
        assert added.returncode == 0, added.stderr
        lines = added.stdout.splitlines()
        tokens[name] = lines[3] if name.startswith("remote") else lines[1]  # a remote bot's own token, not its site's
        assert len(lines) == (4 if name.startswith("remote") else 2) and "bot token" not in lines[0]
    served = Served(folder)
    ladder = Ladder.open(folder)
    remote_bot = None
    try:
        for name in names[:-1]:
            if name.startswith("py"):
                path = tmp_path / f"{name}.py"
                path.write_text(GOOD_BOT + f"\n# {name}\n", encoding="utf-8")
            else:
                path = tmp_path / name
                path.mkdir()
                (path / "bot.py").write_text(STDIO_BOT + f"\n# {name}\n", encoding="utf-8")
                (path / "bot.json").write_text('{"kind": "stdio", "command": "{python} bot.py"}', encoding="utf-8")
            sent = subprocess.run([sys.executable, "-m", "arena", "ladder", "submit", "--url", served.url, str(path)],
                                  env={**os.environ, "CALLBREAK_TOKEN": tokens[name]}, cwd=ROOT,
                                  capture_output=True, text=True, timeout=60)
            assert sent.returncode == 0, sent.stderr
            assert f"submitted {name}#1" in sent.stdout
        remote_bot = _remote(served.remote, tokens["remote-0"])
        _wait(ladder, lambda s: all(v.state == VersionState.ACTIVE for v in s.scalars(select(Version))),
              180, "every version's check")
        def every_kind_done(session: object) -> bool:
            seated = {v for b in _blocks(session, BlockState.DONE) for v in b.seats}
            return {session.get(Version, v).kind for v in seated} >= {"python", "stdio", "remote"}  # type: ignore

        _wait(ladder, lambda s: len(_blocks(s, BlockState.DONE)) >= 4 and every_kind_done(s)
              and _blocks(s, BlockState.PLAYING), 240,
              "four blocks done, among them python, stdio and remote entrants, and one in play")
        served.kill()
        with ladder.session() as session:
            in_play = [b.id for b in _blocks(session, BlockState.PLAYING)]
            done_before = len(_blocks(session, BlockState.DONE))
        assert in_play
        served = Served(folder)
        # The site and the remote port were chosen afresh (port 0): the entrant connects to the new address, as
        # one would to a ladder moved to another port; its block in play waits patience_s for it.
        _end(remote_bot)
        remote_bot = _remote(served.remote, tokens["remote-0"])
        _wait(ladder, lambda s: all(s.get(Block, b).state != BlockState.PLAYING for b in in_play)
              and len(_blocks(s, BlockState.DONE)) >= done_before + 1, 240, "the resumed blocks and one more")
        assert served.stop() == 128 + signal.SIGTERM
        with ladder.session() as session:
            done = _blocks(session, BlockState.DONE)
            assert all(session.get(Block, b).state == BlockState.DONE for b in in_play)
            remote = session.scalars(select(Version).where(Version.label == "remote-0#1")).one()
            assert any(remote.id in b.seats for b in done), "the remote entrant played"
            kinds = {session.get(Version, v).kind for b in done for v in b.seats}
            assert {"python", "stdio", "remote"} <= kinds
        for block in done:
            assert audit(folder / block.folder) is None
        checked = cli("ladder", "check", folder)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert checked.stdout.startswith(f"ok: {len(done)} blocks")
        verified = cli("verify", folder / done[0].folder)
        assert verified.returncode == 0 and verified.stdout.startswith("ok: 4 games")
    finally:
        if served.process.poll() is None:
            served.kill()
        _end(remote_bot)
        ladder.close()


@pytest.mark.slow
def test_twelve_entrants_survive_a_sigkill_mid_block_on_sqlite(tmp_path: Path) -> None:
    _scenario(tmp_path, None)


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.mark.slow
@pytest.mark.soak  # the same scenario as on SQLite, which make test runs; PostgreSQL's own tests are in make test
def test_twelve_entrants_survive_a_sigkill_mid_block_on_postgresql(tmp_path: Path, postgres_url: str) -> None:
    _scenario(tmp_path, fresh_database(postgres_url, "scenario"))
