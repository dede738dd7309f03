"""Every mistake a user can make, and every refusal of the system, is one line on stderr and a
documented exit status (README: 1 failure, 2 bad usage or input), never a traceback.

Each case runs the real command line as a process of its own. ``run`` prints one line naming the
tournament before it starts; the error is the one line after it.
"""

from __future__ import annotations

import errno
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import arena.cli.games
from arena.cli import main
from tests.helpers.runs import ROOT, cli, tournament_text, write

USAGE = 2
FAILURE = 1

REMOTE = '\n[[bots]]\nname = "far"\nremote = true\ntoken = "far-secret"\n'
"""A bot over the network: the arena then starts its server."""


def error_line(result: subprocess.CompletedProcess[str], status: int) -> str:
    """The one error line of a finished process, checked: its exit status, no traceback, nothing else."""
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if not line.startswith("callbreak-arena 0.")]
    assert len(lines) == 1, result.stderr
    assert result.returncode == status, result.stderr
    return lines[0]


def in_process(spec: str) -> str:
    """A configuration whose first bot is the in-process class ``spec``."""
    return tournament_text(("a", "b", "c", "d"), deal_sets=1, a=spec)


def with_remote(server: str) -> str:
    """A configuration with a remote bot and a ``[server]`` table, on a seed too large to warn about."""
    return tournament_text(("a", "b", "c"), seed=2**40, deal_sets=1, extra=f"{REMOTE}\n[server]\n{server}\n")


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


Case = Callable[[Path, int], list[str]]
"""Writes what a case needs into a folder and gives the command line's arguments."""


def _bot_file(text: str) -> Callable[[Path, int], list[str]]:
    def case(tmp: Path, port: int) -> list[str]:
        write(tmp / "mybot.py", text)
        return ["run", str(write(tmp / "t.toml", in_process(f"{tmp / 'mybot.py'}:Bot"))), "--results", str(tmp / "out")]
    return case


def _config(text: Callable[[Path, int], str]) -> Callable[[Path, int], list[str]]:
    def case(tmp: Path, port: int) -> list[str]:
        return ["run", str(write(tmp / "t.toml", text(tmp, port))), "--results", str(tmp / "out")]
    return case


def _latin1(tmp: Path, port: int) -> list[str]:
    (tmp / "t.toml").write_bytes('[tournament]\nname = "café"\n'.encode("latin-1"))
    return ["run", str(tmp / "t.toml"), "--results", str(tmp / "out")]


def _latin1_deals(tmp: Path, port: int) -> list[str]:
    (tmp / "deals.txt").write_bytes("# café\n".encode("latin-1"))
    text = tournament_text(deal_sets=0, tournament='deal_file = "deals.txt"\n')
    return ["run", str(write(tmp / "t.toml", text)), "--results", str(tmp / "out")]


def _results_file(tmp: Path, port: int) -> list[str]:
    write(tmp / "taken", "a file, not a folder")
    return ["run", str(write(tmp / "t.toml", tournament_text(deal_sets=1))), "--results", str(tmp / "taken")]


CASES: dict[str, tuple[Case, int, list[str]]] = {
    "bot with a syntax error": (
        _bot_file("class Bot:\n    def call(self, view)\n        return 1\n"), USAGE,
        ["cannot load the in-process bot", "mybot.py, line 2", "invalid Python"]),
    "bot raising at import": (
        _bot_file("raise RuntimeError('no model file')\n"), USAGE,
        ["cannot load the in-process bot", "importing it raised RuntimeError: no model file"]),
    "bot exiting at import": (
        _bot_file("import sys\nsys.exit(3)\n"), USAGE, ["cannot load the in-process bot", "SystemExit: 3"]),
    "bot constructor raising": (
        _bot_file("class Bot:\n    def __init__(self, seed=0):\n        raise ValueError('bad weights')\n"), USAGE,
        ["cannot create the in-process bot 'a'", "its constructor raised ValueError: bad weights"]),
    "missing TLS files": (
        _config(lambda tmp, port: with_remote('tls_cert = "nowhere/cert.pem"\ntls_key = "nowhere/key.pem"')), USAGE,
        ["cannot read the TLS", "nowhere", "No such file or directory"]),
    "port in use": (
        _config(lambda tmp, port: with_remote(f"port = {port}")), USAGE, ["is in use by another program"]),
    "unbindable host": (
        _config(lambda tmp, port: with_remote('host = "203.0.113.77"')), USAGE,
        ["cannot listen on 203.0.113.77", "is not an address of this machine"]),
    "unknown host": (
        _config(lambda tmp, port: with_remote('host = "no-such-host.invalid"')), USAGE,
        ["cannot listen on no-such-host.invalid", "is not a host name or address known here"]),
    "non-UTF-8 configuration": (_latin1, USAGE, ["t.toml is not UTF-8 text", "save it as UTF-8"]),
    "non-UTF-8 deal file": (_latin1_deals, USAGE, ["deals.txt is not UTF-8 text"]),
    "results folder is a file": (_results_file, USAGE, ["taken is a file, not a results folder"]),
    "negative seed": (lambda tmp, port: ["game", "--seed", "-1"], USAGE, ["--seed must be 0 or more, not -1"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_an_error_is_one_line_and_its_status(name: str, tmp_path: Path, busy_port: int) -> None:
    make, status, words = CASES[name]
    args = make(tmp_path, busy_port)
    if args[0] == "run":
        args.append("--no-progress")
    line = error_line(cli(*args), status)
    assert line.startswith("callbreak-arena: error: ")
    for word in words:
        assert word in line, line
    assert not (tmp_path / "out" / "records.jsonl").exists()


def test_a_bot_kits_missing_tls_ca_is_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sample_bots.random_bot", "--arena", "127.0.0.1:1", "--token", "x",
         "--tls-ca", "/nowhere/ca.pem"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == USAGE
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "cannot read --tls-ca /nowhere/ca.pem: No such file or directory" in lines[0]


def test_what_the_system_refuses_is_one_line_and_status_1(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    def full(args: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", "/data/results/records.jsonl")

    monkeypatch.setattr(arena.cli.games, "_cmd_game", full)
    assert main(["game"]) == FAILURE
    assert capsys.readouterr().err == (
        "callbreak-arena: error: /data/results/records.jsonl: No space left on device\n"
    )
