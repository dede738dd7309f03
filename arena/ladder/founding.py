"""A new ladder: its folder, a ``ladder.toml`` with every setting at its default, its database, an organiser token.

The folder holds the ladder's secrets (the seed in ``ladder.toml`` that every block's deals and seat keys come
from; the database) and its entrants' code, so it is made readable by the ladder's user alone: the folder 0700,
``ladder.toml`` and the SQLite database 0600 (SQLite gives its write-ahead log the database's mode)."""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
from pathlib import Path

from sqlalchemy import make_url, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from arena.core.rules import SWITCHES
from arena.errors import ConfigError
from arena.ladder.db import LadderState, Organiser, open_database
from arena.ladder.schema import upgrade
from arena.ladder.settings import (
    DATABASE_FILE,
    LADDER_SANDBOX,
    SETTINGS_FILE,
    Capacity,
    LadderSettings,
    Matchmaking,
    RatingSettings,
    Remote,
    SubmissionLimits,
    TestSettings,
    parse_settings,
)
from arena.transports.grpc.tokens import new_token, token_sha256

__all__ = ["ORGANISER", "Founded", "found_ladder", "open_to_others", "settings_text"]

ORGANISER = "organiser"
"""The name of the organiser whose token a new ladder makes."""


@dataclasses.dataclass(frozen=True)
class Founded:
    """A ladder just made: its settings, the schema revision its database is at, and the organiser's token."""

    settings: LadderSettings
    revision: str
    token: str
    """The organiser's token: the database keeps only its SHA-256, so this is the one chance to show it."""


def settings_text(name: str, database_url: str | None, seed: int = 1) -> str:
    """A commented ``ladder.toml``, every setting at its default (``database_url``: ``None`` for the SQLite file)
    but the deals' secret ``seed``."""
    database = (f"url = {json.dumps(database_url)}" if database_url is not None else
                f'# url = "postgresql+psycopg://USER:PASSWORD@HOST/DATABASE"  (left out: {DATABASE_FILE} here)')
    return f"""\
# The settings of the ladder {json.dumps(name)}, every key at its default: docs/ladder.md
# describes them.

[ladder]
name = {json.dumps(name)}            # 1-40 letters, digits, spaces or ._+#-
seed = {seed}   # the secret every block's deals come from: keep this file private

[rules]
profile = "nepali"        # nepali, master, bhoos, pagat, strict or dy (docs/rules.md)
# Any switch may follow, as in a tournament's [rules]: {", ".join(SWITCHES)}

[time]
deadline_ms = 2000        # milliseconds a bot has for each decision

[blocks]
rotation = "cyclic"       # "cyclic": each version holds every hand of a block's deal set, in four games (the most
                          # efficient); "once": each plays the deal set once, in the same seat, against the house
                          # trio, for remote entrants who may remember a deal set (docs/ladder.md)

[capacity]
tables = {Capacity.tables}                # blocks played at the same time, each one game at a time
workers = {Capacity.workers}               # processes playing the final's games (1: the ladder's own)

[rating]
# OpenSkill (Plackett-Luce); a version is shown by its ordinal, mu - 3 sigma.
beta = {RatingSettings.beta!r}    # spread of one game's result around a bot's skill (25/6)
tau = {RatingSettings.tau!r}                 # skill drift per game: none, a version does not change

[matchmaking]
placement_blocks = {Matchmaking.placement_blocks}      # blocks a new version plays before its rating picks opponents
spread = {Matchmaking.spread!r}              # how far apart (in sigmas) the ratings of one block's versions may be
no_rematch_blocks = {Matchmaking.no_rematch_blocks}     # blocks before a version meets the same three versions again

[submissions]
active_versions = {SubmissionLimits.active_versions}       # versions of one entrant that play at once
max_bytes = {SubmissionLimits.max_bytes}      # the largest submission, all files together
max_files = {SubmissionLimits.max_files}           # the most files in one submission
per_hour = {SubmissionLimits.per_hour}              # uploads one entrant may make in an hour (refused ones count)
check_games = {SubmissionLimits.check_games}           # games of a new version's check against the house bots

[tests]
# Version tests (B against A, a sequential test) and scrimmages.
share = {TestSettings.share!r}               # the part of the tables they may take while rated blocks wait
delta1 = {TestSettings.delta1!r}              # H1: B is this many points per game better than A (H0: no better)
alpha = {TestSettings.alpha!r}              # the two error rates
beta = {TestSettings.beta!r}
burn_in = {TestSettings.burn_in}              # blocks before a test may decide
cap = {TestSettings.cap}                 # blocks at most, then it stops without a decision
per_entrant = {TestSettings.per_entrant}          # tests and scrimmages one entrant may have running at once
scrimmage_blocks = {TestSettings.scrimmage_blocks}     # the most blocks one scrimmage may ask for

[remote]
# Where the bots of remote entrants connect over gRPC.
host = {json.dumps(Remote.host)}
port = {Remote.port}                  # 0: a free port, chosen at start and printed
patience_s = {Remote.patience_s!r}         # seconds a game waits for a remote version, then the fallback plays it
set_aside_after = {Remote.set_aside_after}       # blocks missed in a row, then it waits for its bot to connect again
# tls_cert = "remote.pem"     # TLS on the gRPC port: its certificate chain and key (PEM, from this folder), so
# tls_key = "remote.key"      # that bot tokens never cross the network in clear (docs/ladder.md, remote versions)
# tls_client_ca = "ca.pem"    # and, with it, every bot shows a client certificate this CA signed

[sandbox]
mode = "bwrap"            # submitted bots run only in the bubblewrap sandbox ("auto"/"off": trusted bots only)
processes = {LADDER_SANDBOX.processes}            # processes and threads one bot may have at once
tmp_mb = {LADDER_SANDBOX.tmp_mb}               # MiB a bot's /tmp (and its /dev/shm) may hold
limits = "require"        # run no upload where the machine cannot limit both ("warn": run them anyway)

[database]
{database}
"""


def found_ladder(folder: Path, database_url: str | None = None) -> Founded:
    """Makes a ladder in ``folder`` (created if need be): writes ``ladder.toml``, brings the database to the
    newest schema and makes the organiser's token, kept there as its digest only.

    :class:`FileExistsError` when ``folder`` holds a ``ladder.toml`` already, and :class:`ConfigError` when the
    database already belongs to a ladder: either way nothing is changed. Should the database fail, the
    ``ladder.toml`` just written is removed (and the folder, if made here and left empty), so the command
    can be run again.
    """
    made = not folder.exists()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)  # the seed, the database and the entrants' code are the ladder's user's alone
    name = folder.resolve().name or "ladder"
    text = settings_text(name, database_url, secrets.randbelow(1 << 62))
    settings = parse_settings(text, folder)  # what is written must read back: a test of the template
    path = folder / SETTINGS_FILE
    # O_EXCL: never over a ladder.toml, even one made meanwhile; 0600 from its first byte
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as out:
        out.write(text)
    path.chmod(0o600)
    database = folder / DATABASE_FILE if database_url is None else None
    made_database = database is not None and not database.exists()
    try:
        if database is not None and made_database:  # made before SQLite opens it, so never readable by others
            os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            database.chmod(0o600)
        engine = open_database(settings.database_url)
        try:
            revision = upgrade(engine)
            token = new_token()
            with Session(engine) as session, session.begin():
                if session.scalars(select(Organiser).limit(1)).first() is not None:
                    raise ConfigError(f"the database {engine.url.render_as_string()} already holds a ladder (it "
                                      "has an organiser): give --database a new database")
                session.add(Organiser(name=ORGANISER, token_sha256=token_sha256(token)))
                session.add(LadderState(id=1))
        finally:
            engine.dispose()
    except SQLAlchemyError as err:
        _undo(path, made, database if made_database else None)
        where = make_url(settings.database_url).render_as_string() if "://" in settings.database_url else "?"
        detail = " ".join(str(getattr(err, "orig", None) or err).split("\n")[0].split())
        raise ConfigError(f"the database {where} cannot be used: {detail}") from None
    except BaseException:
        _undo(path, made, database if made_database else None)
        raise
    return Founded(settings, revision, token)


def _undo(path: Path, made: bool, database: Path | None) -> None:
    """Removes the ``ladder.toml`` just written (and the SQLite file, if this call made it), and its folder if this
    call made it (and it is empty)."""
    path.unlink()
    if database is not None:
        for leftover in (database, database.with_name(database.name + "-wal"),
                         database.with_name(database.name + "-shm")):
            leftover.unlink(missing_ok=True)
    if made and not any(path.parent.iterdir()):
        path.parent.rmdir()


def open_to_others(folder: Path) -> str:
    """A sentence saying that other users of this machine can reach the ladder's folder (its seed, database and
    entrants' code), with the command that closes it; ``""`` when they cannot."""
    try:
        mode = folder.stat().st_mode
    except OSError:
        return ""
    if not mode & 0o077:
        return ""
    return (f"the ladder's folder {folder} can be read by other users of this machine, and it holds the secret seed "
            f"of every deal, the database and the entrants' code: run chmod -R go-rwx {folder}")
