"""The standing ladder's foundation: ``ladder init``, ladder.toml's settings, the database and its migrations.

Real files, real SQLite, the command line as a process of its own; and, where Debian's PostgreSQL
server is installed, the same migrations and ``ladder init`` on a private server started for the test.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect, select
from sqlalchemy.orm import Session

from arena.core.rules import Rules
from arena.errors import ConfigError
from arena.ladder.blocks import block_config
from arena.ladder.db import Base, Organiser, Version, open_database
from arena.ladder.founding import settings_text
from arena.ladder.schema import alembic_config, head, schema_version, upgrade
from arena.ladder.settings import LadderSettings, load_settings, parse_settings, sqlite_url
from arena.transports.grpc.tokens import token_sha256
from tests.helpers.postgres import fresh_database, postgres_server
from tests.helpers.runs import ROOT, cli


def init(folder: Path, *more: str) -> tuple[str, str]:
    """``ladder init folder``, which must succeed; its organiser token and its stderr."""
    done = cli("ladder", "init", folder, *more)
    assert done.returncode == 0, done.stderr
    comment, token, *rest = done.stdout.splitlines()
    assert "not shown again" in comment and not rest
    return token, done.stderr


def files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def differences(engine: Engine) -> list[object]:
    """What the models have that the database does not, or the other way round."""
    with engine.connect() as connection:
        return list(compare_metadata(MigrationContext.configure(connection), Base.metadata))


def schema(engine: Engine) -> str:
    """Every table's columns, indexes and foreign keys, as the database reports them (types by their text)."""
    found = inspect(engine)
    return repr({table: (found.get_columns(table), found.get_indexes(table), found.get_foreign_keys(table))
                 for table in sorted(found.get_table_names())})


# --- ladder init --------------------------------------------------------------------------------


def test_init_writes_the_settings_and_a_database_at_head_with_wal(tmp_path: Path) -> None:
    folder = tmp_path / "spring-ladder"
    _, said = init(folder)
    assert "spring-ladder" in said and head() in said
    assert sorted(files(folder)) >= ["ladder.db", "ladder.toml"]
    settings = load_settings(folder)
    assert settings == LadderSettings(name="spring-ladder", database_url=sqlite_url(folder / "ladder.db"),
                                      seed=settings.seed)
    assert settings.seed != load_settings_of_another_init(tmp_path).seed  # a fresh secret for each ladder
    assert settings.rules == Rules.profile("nepali") and settings.rating.tau == 0.0
    assert settings.matchmaking.placement_blocks == 4 and settings.submissions.active_versions == 1
    with sqlite3.connect(folder / "ladder.db") as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)  # kept in the file itself
    engine = open_database(settings.database_url)
    try:
        assert schema_version(engine) == head()
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 10_000
    finally:
        engine.dispose()


def test_the_token_printed_is_accepted_by_its_digest_and_its_text_is_stored_nowhere(tmp_path: Path) -> None:
    token, _ = init(tmp_path / "l")
    engine = open_database(sqlite_url(tmp_path / "l" / "ladder.db"))
    try:
        with Session(engine) as session:
            found = session.scalars(select(Organiser).where(Organiser.token_sha256 == token_sha256(token))).all()
            assert [o.name for o in found] == ["organiser"] and found[0].revoked is None
    finally:
        engine.dispose()
    for name, content in files(tmp_path / "l").items():
        assert token.encode() not in content, name


def test_ladder_toml_and_the_docs_say_what_tables_counts_as_the_service_counts_it() -> None:
    """``tables`` is the blocks in play at once, each block a tournament of one table at a time: ladder.toml's
    comment and docs/ladder.md say so alike."""
    comment = re.search(r"(?m)^tables = \d+ +# (.*)$", settings_text("l", None))
    row = re.search(r"(?m)^\| `\[capacity\] tables` \| \d+ \| (.*) \|$",
                    (ROOT / "docs" / "ladder.md").read_text(encoding="utf-8"))
    assert comment is not None and row is not None
    assert comment.group(1) == "blocks played at the same time, each one game at a time"
    assert row.group(1).startswith(comment.group(1))
    bots = [{"name": f"v{n}#1", "python": "sample_bots.random_bot:RandomBot"} for n in range(4)]
    assert block_config(7, 11, bots, parse_settings("[capacity]\ntables = 5\n", ROOT)).concurrency == 1


def load_settings_of_another_init(tmp_path: Path) -> LadderSettings:
    init(tmp_path / "another")
    return load_settings(tmp_path / "another")


def test_init_twice_refuses_and_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "l"
    init(folder)
    before = files(folder)
    again = cli("ladder", "init", folder)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr.count("\n") == 1 and "already holds a ladder" in again.stderr
    assert files(folder) == before


def test_init_on_a_database_that_cannot_be_used_leaves_no_ladder_behind(tmp_path: Path) -> None:
    done = cli("ladder", "init", tmp_path / "l", "--database", "nosuchdb://somewhere/x")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "cannot be used" in done.stderr
    assert not (tmp_path / "l").exists()


def test_the_help_says_what_init_makes() -> None:
    done = cli("ladder", "init", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "ladder.toml" in text and "shown only this once" in text and "--database URL" in text


# --- ladder.toml --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "words"), [
    ("[rating]\nbeta = 'wide'\n", ["rating.beta", "a number"]),
    ("[matchmaking]\nspred = 2.0\n", ["matchmaking.spred", "did you mean 'spread'"]),
    ("[ladder]\nworkers = 2\n", ["ladder.workers", "belongs in the [capacity] table"]),
    ("[capacity]\ntables = 0\n", ["capacity.tables", "from 1 to"]),
    ("[submissions]\nactive_versions = true\n", ["submissions.active_versions", "whole number"]),
    ("[sumbissions]\nper_hour = 3\n", ["'sumbissions'", "did you mean 'submissions'"]),
    ("[rules]\nmust_beet = true\n", ["rules.must_beet", "did you mean 'must_beat'"]),
    ("[rules]\nprofile = 'chess'\n", ["[rules]", "chess"]),
    ("time = 5\n", ["time must be a table"]),
    ("[ladder]\nname = ''\n", ["ladder.name"]),
])
def test_a_bad_key_or_value_is_one_line_naming_the_key(tmp_path: Path, text: str, words: list[str]) -> None:
    (tmp_path / "ladder.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_settings_read_as_written(tmp_path: Path) -> None:
    text = ("[ladder]\nname = 'club'\n[rules]\nprofile = 'bhoos'\nrounds = 3\n[time]\ndeadline_ms = 500\n"
            "[capacity]\ntables = 6\nworkers = 2\n[rating]\nbeta = 3\n[matchmaking]\nspread = 1.5\n"
            "[submissions]\nmax_files = 20\n[database]\nurl = 'postgresql+psycopg://u@h/ladder'\n")
    settings = parse_settings(text, tmp_path)
    assert settings.name == "club" and settings.rules == Rules.profile("bhoos").with_switches({"rounds": 3})
    assert (settings.deadline_ms, settings.capacity.tables, settings.capacity.workers) == (500, 6, 2)
    assert (settings.rating.beta, settings.matchmaking.spread, settings.submissions.max_files) == (3.0, 1.5, 20)
    assert settings.database_url == "postgresql+psycopg://u@h/ladder"


# --- the database and its migrations ------------------------------------------------------------


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Iterator[Engine]:
    engine = open_database(sqlite_url(tmp_path / "ladder.db"))
    yield engine
    engine.dispose()


def test_an_empty_database_has_no_schema_version(sqlite_engine: Engine) -> None:
    assert schema_version(sqlite_engine) is None


def test_the_models_and_the_migrations_agree(sqlite_engine: Engine) -> None:
    upgrade(sqlite_engine)
    assert differences(sqlite_engine) == []


def test_migrating_to_head_is_idempotent(sqlite_engine: Engine) -> None:
    assert upgrade(sqlite_engine) == head()
    first = schema(sqlite_engine)
    assert upgrade(sqlite_engine) == head() == schema_version(sqlite_engine)
    assert schema(sqlite_engine) == first


def _migrate(engine: Engine, revision: str, down: bool = False) -> None:
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        (command.downgrade if down else command.upgrade)(config, revision)


def test_a_database_of_0002_upgrades_in_place_and_a_version_set_aside_for_a_time_is_back(
        sqlite_engine: Engine) -> None:
    _migrate(sqlite_engine, "0002")
    with sqlite_engine.begin() as connection:
        connection.exec_driver_sql("INSERT INTO entrants (id, name, display, token_sha256, created) "
                                   "VALUES (1, 'remy', '', 'x', '2025-01-01')")
        connection.exec_driver_sql("INSERT INTO versions (id, entrant_id, content_sha256, kind, path, state, created, "
                                   "number, label, away_until) VALUES (1, 1, '', 'remote', '', 'active', '2025-01-01', "
                                   "1, 'remy#1', '2099-01-01')")
    assert upgrade(sqlite_engine) == head()
    with Session(sqlite_engine) as session:
        version = session.get(Version, 1)
        assert version is not None and (version.label, version.missed, version.set_aside) == ("remy#1", 0, None)
    _migrate(sqlite_engine, "0002", down=True)  # and back, the version kept
    columns = {column["name"] for column in inspect(sqlite_engine).get_columns("versions")}
    assert "away_until" in columns and not {"missed", "set_aside"} & columns
    with sqlite_engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT label FROM versions").scalars().all() == ["remy#1"]


def test_foreign_keys_are_enforced_on_sqlite(sqlite_engine: Engine) -> None:
    upgrade(sqlite_engine)
    with sqlite_engine.connect() as connection, pytest.raises(Exception, match="FOREIGN KEY"):
        connection.exec_driver_sql(
            "INSERT INTO versions (entrant_id, content_sha256, kind, path, state, created) "
            "VALUES (99, 'x', 'python', 'p', 'submitted', '2025-01-01')")


# --- the same on PostgreSQL ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A private PostgreSQL server for this module's tests, on a free port; its URL."""
    with postgres_server() as url:
        yield url


def test_postgresql_migrates_to_head_idempotently_and_agrees_with_the_models(postgres_url: str) -> None:
    engine = open_database(fresh_database(postgres_url, "migrations"))
    try:
        assert schema_version(engine) is None
        assert upgrade(engine) == head()
        first = schema(engine)
        assert differences(engine) == []
        assert upgrade(engine) == head() == schema_version(engine)
        assert schema(engine) == first
    finally:
        engine.dispose()


def test_init_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    url = fresh_database(postgres_url, "ladder")
    token, _ = init(tmp_path / "l", "--database", url)
    assert sorted(files(tmp_path / "l")) == ["ladder.toml"]  # the database is the server's
    assert load_settings(tmp_path / "l").database_url == url
    engine = open_database(url)
    try:
        assert schema_version(engine) == head()
        with Session(engine) as session:
            digests = session.scalars(select(Organiser.token_sha256)).all()
        assert digests == [token_sha256(token)]
    finally:
        engine.dispose()
    again = cli("ladder", "init", tmp_path / "other", "--database", url)
    assert again.returncode == 2 and "already holds a ladder" in again.stderr
    assert not (tmp_path / "other").exists()


def test_settings_that_are_not_utf8_or_missing_are_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "ladder.toml").write_bytes('[ladder]\nname = "caf\u00e9"\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match=r"ladder\.toml is not UTF-8 text \(byte 21 is 0xe9\): save it as UTF-8"):
        load_settings(tmp_path)
    with pytest.raises(ConfigError, match=r"cannot read the ladder's settings .*missing.*ladder\.toml"):
        load_settings(tmp_path / "missing")
