"""A submitted version's check before it plays: check-bot's battery against the house bots, in the sandbox,
under the ladder's rules profile; then the version enters the pool, or the entrant's page says why not.

Every check of the battery is stored (:class:`~arena.ladder.db.Check`), a failed one with where its first
fault was seen (the profile, the game, the round, the trick, the bot's hand) and the tail of the bot's
stderr. A version that passes becomes active, and the entrant's oldest active versions beyond
``[submissions] active_versions`` retire.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.errors import ArenaError
from arena.event.check import NAME, Check, check_bot
from arena.ladder.blocks import bot_under_test
from arena.ladder.control import Ladder
from arena.ladder.db import Check as CheckRow
from arena.ladder.db import Version, VersionState, utc_now

__all__ = ["CHECKS", "STDERR_TAIL_BYTES", "STDERR_TAIL_LINES", "check_version", "retire_beyond"]

CHECKS = "checks"
"""The folder, in the ladder's, where a failed check keeps its records and the bot's log: ``checks/NNNNNN``."""
SERVER_ONLY = "the games are kept in "
"""The start of check-bot's line naming the folder of its games: a path on the server, left off the site."""
STDERR_TAIL_LINES = 40
STDERR_TAIL_BYTES = 8 << 10
"""How much of the bot's stderr a failed check keeps for the entrant's page."""


@dataclasses.dataclass(frozen=True)
class _Found:
    checks: list[Check]
    error: str = ""
    """Why the battery could not be played at all (the version's files, the sandbox), in words."""


def _tail(log: Path) -> str:
    try:
        with log.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - STDERR_TAIL_BYTES))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-STDERR_TAIL_LINES:])


def check_version(ladder: Ladder, version_id: int, log: Callable[[str], None] = lambda text: None) -> bool:
    """Checks the version ``version_id`` (blocking: call it from a thread) and stores what was found; True when
    it passed and is now active."""
    with ladder.session() as session:
        version = session.get(Version, version_id)
        if version is None or version.state not in (VersionState.SUBMITTED, VersionState.CHECKING):
            return False
        version.state = VersionState.CHECKING
        label, kind = version.label, version.kind
    settings = ladder.settings
    profile = settings.rules.profile_name
    logs = ladder.folder / CHECKS / f"{version_id:06d}"
    said: list[str] = []
    try:
        bot = bot_under_test(version, ladder.folder, settings.sandbox)
        found = _Found(check_bot(bot, games=settings.submissions.check_games, seed=version_id,
                                 deadline_ms=settings.deadline_ms, profiles=(profile,), logs=logs,
                                 log=said.append, connect_s=30.0))
    except ArenaError as err:
        found = _Found([], str(err))
    tail = _tail(logs / profile / "logs" / f"{NAME}.log")
    passed = not found.error and all(check.ok for check in found.checks)
    with ladder.session() as session:
        version = session.get(Version, version_id)
        assert version is not None
        if version.state != VersionState.CHECKING:  # revoked meanwhile
            return False
        if found.error:
            session.add(CheckRow(version_id=version_id, passed=False, check_name="starts and connects",
                                 profile=profile, detail=found.error, stderr_tail=tail, created=utc_now()))
        for check in found.checks:
            where = check.first
            session.add(CheckRow(
                version_id=version_id, passed=check.ok, check_name=check.name[:80], profile=profile,
                game=where.game if where else None, round=where.round if where else None,
                trick=where.trick if where else None, hand=where.hand if where else None,
                detail="\n".join(line for line in check.lines if not line.startswith(SERVER_ONLY)),
                stderr_tail="" if check.ok else tail, created=utc_now()))
        if passed:
            version.state, version.activated = VersionState.ACTIVE, utc_now()
            retire_beyond(session, version.entrant_id, settings.submissions.active_versions)
        else:
            version.state = VersionState.FAILED
    log(f"version {label} ({kind}) {'passed its check and plays' if passed else 'failed its check'}")
    return passed


def retire_beyond(session: Session, entrant_id: int, keep: int) -> None:
    """Retires the entrant's oldest active versions past the ``keep`` newest."""
    active = session.scalars(select(Version).where(Version.entrant_id == entrant_id,
                                                   Version.state == VersionState.ACTIVE)
                             .order_by(Version.number.desc())).all()
    for old in active[keep:]:
        old.state, old.retired = VersionState.RETIRED, utc_now()
