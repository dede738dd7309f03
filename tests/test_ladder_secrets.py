"""A ladder's secrets stay its own: its folder and files are its user's alone, a remote entrant's bot connects with a
bot token of its own (never the token that logs in to the site) and over TLS where the ladder gives the port a
certificate, and ``ladder serve`` says what it cannot limit or keep. Real processes: ``ladder init`` and ``serve`` as
commands, the site over a socket, bot processes connecting to the ladder's gRPC port.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import trustme
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from arena.cli import main
from arena.event.launch import cgroups
from arena.ladder.control import Ladder
from arena.ladder.db import Block, BlockState, Version, VersionState, utc_now
from arena.ladder.service import LadderService
from tests.helpers.ladder import GOOD_BOT, Served, make_ladder, serve_until, serving
from tests.helpers.runs import ROOT, cli

REMY = "remy#1"
HOUSE = (("house-a", "sample_bots.random_bot:RandomBot"), ("house-b", "sample_bots.heuristic_bot:HeuristicBot"),
         ("house-c", "sample_bots.random_bot:RandomBot"))


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_init_keeps_the_seed_the_database_and_the_versions_to_the_ladders_user(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    made = subprocess.run([sys.executable, "-c", "import os, sys; os.umask(0o022); from arena.cli import main; "
                           f"sys.exit(main(['ladder', 'init', {str(folder)!r}]))"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert (_mode(folder), _mode(folder / "ladder.toml"), _mode(folder / "ladder.db")) == (0o700, 0o600, 0o600)
    ladder = Ladder.open(folder)
    ladder.add_entrant("sita")
    version = ladder.submit("sita", "lowest.py", GOOD_BOT.encode())
    stored = folder / version.path
    assert (_mode(folder / "versions"), _mode(stored), _mode(stored / "bot.py")) == (0o700, 0o500, 0o400)
    wal = folder / "ladder.db-wal"
    assert not wal.exists() or _mode(wal) == 0o600  # SQLite gives its log the database's mode
    ladder.close()


def _said_once_serving(folder: Path, served: Served, needle: str = "") -> str:
    """What ``ladder serve`` wrote to its log once it holds ``needle`` (its warnings follow the site's address), or
    two seconds after it began to serve."""
    try:
        began = time.monotonic()
        while needle not in (said := (folder / "serve.log").read_text(encoding="utf-8")) or not needle:
            assert time.monotonic() - began < 20, said
            if not needle and time.monotonic() - began > 2:
                break
            time.sleep(0.1)
    finally:
        served.kill()
    return said


def test_serve_says_in_a_sentence_that_others_can_read_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    make_ladder(folder).close()
    folder.chmod(0o755)  # as a ladder made before, or by hand
    served = Served(folder)
    said = _said_once_serving(folder, served, "can be read by other users")
    assert (f"warning: the ladder's folder {folder.resolve()} can be read by other users of this machine, and it holds "
            f"the secret seed of every deal, the database and the entrants' code: run chmod -R go-rwx "
            f"{folder.resolve()}") in said
    folder.chmod(0o700)
    served = Served(folder)
    assert "can be read by other users" not in _said_once_serving(folder, served)[len(said):]


def test_serve_refuses_uploads_where_the_machine_cannot_limit_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    if os.geteuid() != 0:
        pytest.skip("as another user, RLIMIT_NPROC in its own user namespace limits a bot without a cgroup")
    folder = tmp_path / "ladder"
    make_ladder(folder).close()
    monkeypatch.setattr(cgroups, "_places", lambda: ({}, {"pids": "none here", "memory": "none here"}))
    assert main(["ladder", "serve", str(folder), "--port", "0"]) == 2
    said = capsys.readouterr().err
    assert ("this machine cannot limit the number of processes a bot starts (no cgroup: none here; and the arena runs "
            "as root, and the kernel never holds root to RLIMIT_NPROC), and [sandbox] limits = \"require\" in "
            "ladder.toml runs no upload without it") in said


# -- a remote entrant's bot token -------------------------------------------------------------------------


def _remote_ladder(folder: Path, **changes: str) -> tuple[Ladder, str, str]:
    """A ladder of one remote entrant, remy (no block: its bot waits in the room); remy's site and bot tokens."""
    ladder = make_ladder(folder, **changes)
    site = ladder.add_entrant("remy", remote=True)
    return ladder, site, ladder.bot_token("remy")


def _bot(address: str, token: str, *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.helpers.remote_bots", "--arena", address, "--max-backoff",
                             "0.5", *options], env={**os.environ, "CALLBREAK_TOKEN": token}, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _wait_out(service: LadderService, ladder: Ladder, refused: subprocess.Popen[str],
              admitted: subprocess.Popen[str]) -> str:
    """Serves until ``refused`` has ended and ``admitted`` is in the waiting room; what ``refused`` said."""
    try:
        serve_until(ladder, lambda session: refused.poll() is not None and service.waiting_room is not None
                    and service.waiting_room.occupied(REMY), timeout=40, service=service)
    finally:
        said = []
        for bot in (refused, admitted):
            if bot.poll() is None:
                bot.terminate()
            said.append(bot.communicate(timeout=10)[1])
    return said[0]


def test_the_site_token_admits_no_bot_and_the_bot_token_opens_nothing_on_the_site(tmp_path: Path) -> None:
    ladder, site_token, bot_token = _remote_ladder(tmp_path / "ladder")
    service = LadderService(ladder)
    said = _wait_out(service, ladder, _bot(service.remote_address, site_token), _bot(service.remote_address, bot_token))
    assert "this token is not known to the arena" in said
    with serving(ladder) as url, httpx.Client(base_url=url, timeout=30) as browser:
        assert browser.post("/login", data={"token": bot_token}).status_code == 401
        answer = browser.post("/api/submit", headers={"Authorization": f"Bearer {bot_token}"},
                              files={"file": ("bot.py", GOOD_BOT.encode())})
        assert answer.status_code == 401
    ladder.close()


def test_an_entrant_makes_a_new_bot_token_on_their_page_once_and_the_old_one_stops(tmp_path: Path) -> None:
    ladder, site_token, old = _remote_ladder(tmp_path / "ladder")
    ladder.add_entrant("sita")
    with serving(ladder) as url, httpx.Client(base_url=url, timeout=30) as browser:
        assert browser.post("/login", data={"token": site_token}).status_code == 303
        page = browser.get("/entrants/remy").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf and 'action="/bot-token"' in page and "new-bot-token" not in page
        assert 'action="/bot-token"' not in browser.get("/entrants/sita").text  # another's page: no form
        refused = browser.post("/bot-token", data={"csrf": "stale"})
        assert refused.status_code == 403
        made = browser.post("/bot-token", data={"csrf": csrf.group(1)})
        assert made.status_code == 200
        shown = re.search(r'<code id="new-bot-token">([0-9a-f]+)</code>', made.text)
        assert shown and shown.group(1) != old
        assert "new-bot-token" not in browser.get("/entrants/remy").text  # shown once
    service = LadderService(ladder)
    said = _wait_out(service, ladder, _bot(service.remote_address, old), _bot(service.remote_address, shown.group(1)))
    assert "this token is not known to the arena" in said
    ladder.close()


# -- TLS on the gRPC port ----------------------------------------------------------------------------------


def test_a_remote_entrant_connects_over_tls_with_the_ladders_ca_and_a_plaintext_bot_cannot(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir(mode=0o700)
    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1", "localhost")
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))  # what the organiser hands the entrants
    (folder / "remote.pem").write_bytes(b"".join(blob.bytes() for blob in issued.cert_chain_pems))
    issued.private_key_pem.write_to_path(str(folder / "remote.key"))
    ladder = make_ladder(folder, placement_blocks="1", patience_s="5.0")
    text = (folder / "ladder.toml").read_text(encoding="utf-8")
    (folder / "ladder.toml").write_text(text.replace('# tls_cert = "remote.pem"', 'tls_cert = "remote.pem"').replace(
        '# tls_key = "remote.key"', 'tls_key = "remote.key"'), encoding="utf-8")
    ladder.close()
    ladder = Ladder.open(folder)
    assert ladder.settings.remote.tls_cert == folder.resolve() / "remote.pem"
    for name, bot in HOUSE:
        ladder.add_entrant(name, python=bot)
    with ladder.session() as session:
        session.execute(update(Version).values(state=VersionState.ACTIVE, activated=utc_now()))
    ladder.add_entrant("remy", remote=True)
    token = ladder.bot_token("remy")
    service = LadderService(ladder)
    plain = _bot(service.remote_address, token)
    secure = _bot(service.remote_address, token, "--tls-ca", str(tmp_path / "ca.pem"))

    def played(session: Session) -> bool:  # the waiting room and then the block's own server, both over TLS
        remy = session.scalars(select(Version.id).where(Version.label == REMY)).one()
        return plain.poll() is not None and any(remy in block.seats for block in session.scalars(
            select(Block).where(Block.state == BlockState.DONE)))

    try:
        serve_until(ladder, played, timeout=90, service=service)
    finally:
        secure.terminate()
        said = [bot.communicate(timeout=10)[1] for bot in (plain, secure)]
    assert plain.returncode == 2 and "speaks TLS: run the bot with --tls-ca FILE" in said[0]
    with ladder.session() as session:
        assert not session.scalars(select(Block).where(Block.state == BlockState.VOID)).all()
    ladder.close()


def test_the_remote_tls_files_are_checked_when_the_settings_are_read(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    make_ladder(folder).close()
    text = (folder / "ladder.toml").read_text(encoding="utf-8")
    (folder / "ladder.toml").write_text(text.replace('# tls_cert = "remote.pem"', 'tls_cert = "remote.pem"'),
                                        encoding="utf-8")
    added = cli("ladder", "add", folder, "remy")
    assert added.returncode == 2
    assert "remote.tls_cert names 'remote.pem', which is not a file" in added.stderr
    (folder / "remote.pem").write_text("x", encoding="utf-8")
    added = cli("ladder", "add", folder, "remy")
    assert "remote.tls_cert and remote.tls_key go together" in added.stderr


def test_ladder_add_prints_a_remote_entrants_bot_token_beside_the_site_token(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    make_ladder(folder).close()
    added = cli("ladder", "add", folder, "remy", "--remote")
    assert added.returncode == 0, added.stderr
    lines = added.stdout.splitlines()
    assert lines[0].startswith("# the token of remy") and lines[2].startswith("# the bot token of remy")
    assert len(lines) == 4 and lines[1] != lines[3]
