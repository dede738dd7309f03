"""A new version arrives: an upload (a Python kit file, or an archive of a folder with its ``bot.json``) is
checked against the ladder's limits, unpacked, stored by content hash, and recorded as a submitted version.

What an upload may be:

- ``NAME.py``: a Python bot with the bot kit; stored as ``bot.py``;
- ``NAME.tar.gz``, ``NAME.tgz``, ``NAME.tar`` or ``NAME.zip``: a folder, as ``roster submit`` takes one
  (``bot.json`` saying how it starts, or ``bot.py``), its files at the top of the archive or in one folder.

An archive may hold files and folders only: links, devices and pipes are refused, and so are names that
climb out (``..``, absolute paths). Its size, its number of entries and the bytes it unpacks to are
bounded by ``[submissions]`` before anything is written (an archive that says it holds little but unpacks
to more is cut off at the limit and refused). Nothing of a refused upload stays behind.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path, PurePosixPath
from typing import IO

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.errors import ArenaError
from arena.event.submissions import PYTHON_BOT, read_submission
from arena.ladder.db import Entrant, Version, VersionState, aware, utc_now
from arena.ladder.settings import SubmissionLimits

__all__ = ["ARCHIVES", "VERSIONS", "SubmissionError", "content_digest", "new_version", "store_upload", "submit_upload"]

VERSIONS = "versions"
"""The folder, in the ladder's, where each version's files are kept: ``versions/<content SHA-256>/``."""
ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")
"""The archive names an upload may have."""
_CHUNK = 1 << 16


class SubmissionError(ArenaError):
    """An upload refused: the message says why, in words the entrant can act on."""


def _kind(filename: str) -> str:
    lower = filename.lower()
    if lower.endswith(".py"):
        return ".py"
    for suffix in ARCHIVES:
        if lower.endswith(suffix):
            return suffix
    raise SubmissionError(f"{filename!r} is neither a .py file nor an archive ({', '.join(ARCHIVES)}): upload "
                          "your bot.py, or your bot's folder packed with its bot.json")


def _member_path(name: str, filename: str) -> PurePosixPath:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise SubmissionError(f"{filename} holds {name!r}, a name outside the bot's folder: pack the folder itself")
    return PurePosixPath(*[part for part in path.parts if part != "."])


def _entries(data: bytes, kind: str, filename: str, limits: SubmissionLimits) -> Iterator[
        tuple[PurePosixPath, IO[bytes] | None]]:
    """The archive's entries: a path and a reader for a file, ``None`` for a folder; refused before any is
    given if the archive holds anything but files and folders, or more entries than the limit."""
    if kind == ".zip":
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
            infos = archive.infolist()
        except (zipfile.BadZipFile, OSError, ValueError) as err:
            raise SubmissionError(f"{filename} cannot be read as a zip archive: {err}") from None
        if len(infos) > limits.max_files:
            raise SubmissionError(f"{filename} holds {len(infos)} entries; a submission may hold at most "
                                  f"{limits.max_files} files")
        for info in infos:
            entry_type = stat.S_IFMT(info.external_attr >> 16)  # 0 when the archive names no type: a plain entry
            if entry_type and entry_type not in (stat.S_IFREG, stat.S_IFDIR):
                raise SubmissionError(f"{filename} holds {info.filename!r}, which is a link or a special file: a "
                                      "submission holds files and folders only")
        for info in infos:
            path = _member_path(info.filename, filename)
            yield path, None if info.is_dir() else archive.open(info)
        return
    try:
        archive_t = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")  # noqa: SIM115 (read as the entries are)
        members = []
        for member in archive_t:
            members.append(member)
            if len(members) > limits.max_files:
                raise SubmissionError(f"{filename} holds more than {limits.max_files} entries; a submission may "
                                      f"hold at most {limits.max_files} files")
    except (tarfile.TarError, OSError, EOFError, ValueError) as err:
        raise SubmissionError(f"{filename} cannot be read as a tar archive: {err}") from None
    for member in members:
        if not (member.isfile() or member.isdir()):
            what = "a link" if member.issym() or member.islnk() else "a special file"
            raise SubmissionError(f"{filename} holds {member.name!r}, which is {what}: a submission holds files and "
                                  "folders only")
    for member in members:
        path = _member_path(member.name, filename)
        yield path, archive_t.extractfile(member) if member.isfile() else None


def _unpack(data: bytes, kind: str, filename: str, target: Path, limits: SubmissionLimits) -> None:
    """Writes the upload's files under ``target``; the bytes written never pass ``limits.max_bytes``."""
    if kind == ".py":
        (target / PYTHON_BOT).write_bytes(data)
        return
    budget = limits.max_bytes
    for path, reader in _entries(data, kind, filename, limits):
        out = target.joinpath(*path.parts)
        if reader is None:
            out.mkdir(parents=True, exist_ok=True)
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists():
            raise SubmissionError(f"{filename} holds {path} twice")
        with reader, out.open("xb") as written:
            while chunk := reader.read(_CHUNK):
                budget -= len(chunk)
                if budget < 0:
                    raise SubmissionError(f"{filename} unpacks to more than {limits.max_bytes:,} bytes, the most a "
                                          "submission may hold")
                written.write(chunk)
    _lift_single_folder(target)


def _lift_single_folder(target: Path) -> None:
    """An archive of a folder (``mybot/bot.json``, ...) becomes that folder's files."""
    entries = list(target.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not (target / PYTHON_BOT).exists():
        inner = entries[0]
        parked = target / f".{os.urandom(4).hex()}"
        inner.rename(parked)
        for child in parked.iterdir():
            child.rename(target / child.name)
        parked.rmdir()


def content_digest(folder: Path) -> str:
    """SHA-256 of a stored version: each file's path and bytes, in path order (folders alone add nothing)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix().encode()
        data = path.read_bytes()
        digest.update(len(relative).to_bytes(4, "big") + relative + len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def store_upload(ladder_folder: Path, filename: str, data: bytes, limits: SubmissionLimits) -> tuple[str, str, str]:
    """Unpacks and checks an upload; returns its content digest, how it starts (``python``, ``command`` or
    ``stdio``) and where it is kept, relative to ``ladder_folder``. :class:`SubmissionError` says why one is
    refused; nothing of it is then left."""
    if len(data) > limits.max_bytes:
        raise SubmissionError(f"{filename} is {len(data):,} bytes; a submission may be at most "
                              f"{limits.max_bytes:,}")
    kind = _kind(filename)
    versions = ladder_folder / VERSIONS
    versions.mkdir(parents=True, exist_ok=True)
    incoming = versions / f".incoming-{os.urandom(6).hex()}"
    incoming.mkdir()
    try:
        _unpack(data, kind, filename, incoming, limits)
        try:
            submission = read_submission(incoming, filename)
        except ArenaError as err:
            raise SubmissionError(str(err).replace(str(incoming), filename)) from None
        digest = content_digest(incoming)
        final = versions / digest
        if final.exists():
            shutil.rmtree(incoming)  # the same files were stored before: keep one copy
        else:
            for path in [incoming, *incoming.rglob("*")]:  # the sandbox shows them read-only anyway
                path.chmod(0o755 if path.is_dir() else 0o644)
            incoming.rename(final)
        return digest, submission.kind, f"{VERSIONS}/{digest}"
    finally:
        shutil.rmtree(incoming, ignore_errors=True)


def submit_upload(session: Session, ladder_folder: Path, entrant: Entrant, filename: str, data: bytes,
                  limits: SubmissionLimits) -> Version:
    """A new version of ``entrant`` from an upload, stored and waiting for its check. Refused (with
    :class:`SubmissionError`) past ``limits.per_hour`` submissions in the last hour, and when the entrant's
    newest version that has not failed holds the same files."""
    now = utc_now()
    recent = [aware(created) for created in session.scalars(select(Version.created).where(
        Version.entrant_id == entrant.id, Version.created > now - timedelta(hours=1)))]
    if len(recent) >= limits.per_hour:
        wait = min(recent) + timedelta(hours=1) - now
        minutes = max(1, round(wait.total_seconds() / 60))
        raise SubmissionError(f"you have submitted {len(recent)} versions in the last hour, the most allowed; "
                              f"the next may come in about {minutes} minute{'s' if minutes > 1 else ''}")
    digest, kind, path = store_upload(ladder_folder, filename, data, limits)
    latest = session.scalars(select(Version).where(
        Version.entrant_id == entrant.id, Version.state != VersionState.FAILED).order_by(Version.number.desc())
    ).first()
    if latest is not None and latest.content_sha256 == digest:
        raise SubmissionError(f"this is the same bot as your version {latest.label} (the same files): change "
                              "something before submitting again")
    return new_version(session, entrant, kind, path, digest)


def new_version(session: Session, entrant: Entrant, kind: str, path: str, digest: str,
                state: VersionState = VersionState.SUBMITTED) -> Version:
    """The entrant's next version (numbered from 1), in ``state``."""
    number = (session.scalar(select(func.max(Version.number)).where(Version.entrant_id == entrant.id)) or 0) + 1
    version = Version(entrant_id=entrant.id, content_sha256=digest, kind=kind, path=path, state=state,
                      number=number, label=f"{entrant.name}#{number}", created=utc_now())
    session.add(version)
    session.flush()
    return version
