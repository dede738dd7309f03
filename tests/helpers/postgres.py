"""A private PostgreSQL server for a test module, started as the postgres user and stopped after it; skipped
with the reason where Debian's server, the driver or root is missing."""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.ladder.db import open_database

__all__ = ["fresh_database", "postgres_server"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _as_postgres(*argv: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv]


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A private PostgreSQL server on a free port, for as long as the ``with`` lasts; its URL."""
    binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not binaries:
        pytest.skip("Debian's PostgreSQL server is not installed (apt-get install postgresql)")
    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("psycopg is not installed (pip install 'callbreak-arena[postgres]')")
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("the server is started as the postgres user, which needs root and runuser")
    bin_dir = Path(binaries[-1]).parent
    # Not pytest's tmp_path: its parent folder is readable by root alone, and the server runs as postgres.
    home = Path(tempfile.mkdtemp(prefix="ladder-pg-"))
    shutil.chown(home, "postgres", "postgres")
    data = home / "data"
    port = _free_port()
    server = None
    try:
        subprocess.run(_as_postgres(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                                    "--no-sync"), check=True, capture_output=True, timeout=120)
        server = subprocess.Popen(_as_postgres(str(bin_dir / "postgres"), "-D", str(data), "-k", str(home), "-p",
                                               str(port), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
        deadline = time.monotonic() + 60
        while True:
            engine = open_database(url)
            try:
                with engine.connect():
                    break
            except Exception:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the test's PostgreSQL did not start: {server.stderr!r}") from None
                time.sleep(0.2)
            finally:
                engine.dispose()
        yield url
    finally:
        if server is not None:
            subprocess.run(_as_postgres(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"),
                           capture_output=True, timeout=60, check=False)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            if server.stderr is not None:
                server.stderr.close()
        shutil.rmtree(home, ignore_errors=True)


def fresh_database(url: str, name: str) -> str:
    """A new empty database on the server at ``url``; its URL."""
    engine = open_database(url).execution_options(isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    finally:
        engine.dispose()
    return url.rsplit("/", 1)[0] + f"/{name}"
