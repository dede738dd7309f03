"""A new version arrives: an upload (a Python kit file, or an archive of a folder with its ``bot.json``) is
checked against the ladder's limits, unpacked, stored by content hash, and recorded as a submitted version.

What an upload may be:

- ``NAME.py``: a Python bot with the bot kit; stored as ``bot.py``;
- ``NAME.tar.gz`` or ``NAME.tgz`` (gzip), ``NAME.tar`` (no compression) or ``NAME.zip`` (stored or deflated
  entries): a folder, as ``roster submit`` takes one (``bot.json`` saying how it starts, or ``bot.py``), its
  files at the top of the archive (``./`` before their names or not) or in one folder.

An archive may hold files and folders only: links, devices and pipes are refused, and so are names that
climb out (``..``, absolute paths). Work is bounded before it is done: an archive is read as a stream, each
entry refused from its header when it claims more bytes than are left, and every byte it decompresses
counted (:class:`_Budget`), so that it is refused at the first byte past ``[submissions] max_bytes`` of files
(or past that and room for the entries' headers, of the stream) or past :data:`UNPACK_S` seconds, whatever its
headers claim. A file keeps whether it was packed executable (a compiled bot, a ``run.sh``), and nothing else of
its mode: every file is stored read-only and readable by the ladder's user alone (0400, or 0500 for an executable),
never setuid, setgid or sticky, in folders of mode 0500 under ``versions/`` (0700): a submission is its entrant's,
which the machine's other users do not read. Nothing of a refused upload stays behind.

An upload refused once its bytes were read counts toward the entrant's ``per_hour`` as a version does
(:class:`~arena.ladder.db.Refusal`); one refused before (:class:`TooOften`: the hour's uploads spent, or one
still being unpacked) costs nothing and does not.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path, PurePosixPath
from typing import IO, Protocol

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.errors import ArenaError
from arena.event.setup.submissions import PYTHON_BOT, read_submission
from arena.ladder.db import Entrant, Refusal, Version, VersionState, aware, utc_now
from arena.ladder.settings import SubmissionLimits

__all__ = ["ARCHIVES", "UNPACK_S", "VERSIONS", "SubmissionError", "TooOften", "check_pace", "content_digest",
           "new_version", "record_refusal", "store_upload", "submit_upload"]

VERSIONS = "versions"
"""The folder, in the ladder's, where each version's files are kept: ``versions/<content SHA-256>/``."""
ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")
"""The archive names an upload may have."""
UNPACK_S = 20.0
"""Seconds an upload's unpacking may take before it is refused (its bytes are bounded long before, on a machine
that is not starved)."""
HEADER_ROOM = 4096
"""Bytes of a tar stream allowed for each entry beyond its file's bytes: its header, a long name, padding."""
_CHUNK = 1 << 16
_COMPRESSIONS = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"(\xb5/\xfd", "zstd"),
                 (b"PK\x03\x04", "zip"))
"""What a file's first bytes say it is compressed with."""
_ZIP_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}
"""The compression a zip's entry may use: what every zip tool writes by default."""


class SubmissionError(ArenaError):
    """An upload refused: the message says why, in words the entrant can act on."""


class TooOften(SubmissionError):
    """An upload refused before any of it was read: the entrant's uploads of the hour are spent, or another of
    theirs is still being unpacked (429)."""


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
    """An entry's path inside the bot's folder (empty for the folder itself, ``.`` or ``./``)."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts:
        raise SubmissionError(f"{filename} holds {name!r}, a name outside the bot's folder: pack the folder itself")
    return PurePosixPath(*[part for part in path.parts if part != "."])


class _Budget:
    """What unpacking one upload may still cost: bytes of files, bytes of the decompressed stream, and time. Each
    is spent as it goes, and the upload refused at the first byte or second past it."""

    def __init__(self, filename: str, limits: SubmissionLimits) -> None:
        self.filename = filename
        self.max_bytes = limits.max_bytes
        self.files = limits.max_bytes
        self.stream = limits.max_bytes + (limits.max_files + 2) * HEADER_ROOM
        self.deadline = time.monotonic() + UNPACK_S

    def _over(self) -> SubmissionError:
        return SubmissionError(f"{self.filename} unpacks to more than {self.max_bytes:,} bytes, the most a "
                               "submission may hold")

    def in_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise SubmissionError(f"{self.filename} took more than {UNPACK_S:g} seconds to unpack: make it smaller")

    def claim(self, size: int, what: str) -> None:
        """Refuses entries whose headers say they hold more than the files' bytes left, before they are read."""
        if size > self.files:
            raise SubmissionError(f"{self.filename} unpacks to more than {self.max_bytes:,} bytes, the most a "
                                  f"submission may hold: {what} {size:,} bytes")

    def spend_files(self, size: int) -> None:
        self.files -= size
        if self.files < 0:
            raise self._over()
        self.in_time()

    def spend_stream(self, size: int) -> None:
        self.stream -= size
        if self.stream < 0:
            raise self._over()
        self.in_time()


class _Reader(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _Counted(io.RawIOBase):
    """A reader of decompressed bytes that spends them from a :class:`_Budget` as they come."""

    def __init__(self, source: _Reader, budget: _Budget) -> None:
        super().__init__()
        self.source = source
        self.budget = budget

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.source.read(_CHUNK if size is None or size < 0 else min(size, _CHUNK))
        self.budget.spend_stream(len(data))
        return data

    def close(self) -> None:
        closing = getattr(self.source, "close", None)
        if closing is not None:
            closing()
        super().close()


def _compression(data: bytes) -> str:
    return next((name for magic, name in _COMPRESSIONS if data.startswith(magic)), "")


def _refuse_mislabelled(data: bytes, kind: str, filename: str) -> None:
    """Only the compression the name says is read: a ``.tar`` that is really bzip2 is refused at once."""
    found = _compression(data)
    wanted = "gzip" if kind in (".tar.gz", ".tgz") else "zip" if kind == ".zip" else ""
    if found == wanted:
        return
    what = "a zip" if kind == ".zip" else "a tar"
    how = "pack your bot's folder with `tar czf bot.tar.gz -C FOLDER .`, or zip it"
    if not found:
        raise SubmissionError(f"{filename} cannot be read as {what} archive: it is not {wanted}, as its name says; "
                              f"{how}")
    rename = ": name it .tar.gz" if found == "gzip" else ""
    raise SubmissionError(f"{filename} cannot be read as {what} archive: it is {found}-compressed, which its name "
                          f"does not say{rename}; the ladder reads .tar.gz (gzip), .tar (no compression) and .zip: "
                          f"{how}")


_Entry = tuple[PurePosixPath, int, IO[bytes] | _Counted | None]
"""An entry of an archive: its path, its mode as packed, and a reader for a file (``None`` for a folder)."""


def _tar_entries(data: bytes, kind: str, filename: str, limits: SubmissionLimits, budget: _Budget) -> Iterator[
        _Entry]:
    """The entries of a tar archive, read as a stream: each refused from its header (a link or a special file,
    one past the count of entries or the bytes left) before its bytes are read."""
    source: _Reader = io.BytesIO(data)
    if kind != ".tar":
        source = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb")
    archive = tarfile.open(fileobj=_Counted(source, budget), mode="r|")  # noqa: SIM115 (read as the entries are)
    for count, member in enumerate(archive, start=1):
        if count > limits.max_files:
            raise SubmissionError(f"{filename} holds more than {limits.max_files} entries; a submission may hold at "
                                  f"most {limits.max_files} files")
        if not (member.isreg() or member.isdir()) or member.issparse():
            what = "a link" if member.issym() or member.islnk() else "a special file"
            raise SubmissionError(f"{filename} holds {member.name!r}, which is {what}: a submission holds files and "
                                  "folders only")
        path = _member_path(member.name, filename)
        if member.isdir():
            yield path, member.mode, None
            continue
        budget.claim(member.size, f"its {path} says it is")
        yield path, member.mode, archive.extractfile(member)


def _zip_entries(data: bytes, filename: str, limits: SubmissionLimits, budget: _Budget) -> Iterator[_Entry]:
    """The entries of a zip archive, refused whole from its directory (a link or a special file, more entries or
    bytes than the limits, a compression other than deflate) before any is read."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    infos = archive.infolist()
    if len(infos) > limits.max_files:
        raise SubmissionError(f"{filename} holds {len(infos)} entries; a submission may hold at most "
                              f"{limits.max_files} files")
    for info in infos:
        entry_type = stat.S_IFMT(info.external_attr >> 16)  # 0 when the archive names no type: a plain entry
        if entry_type and entry_type not in (stat.S_IFREG, stat.S_IFDIR):
            raise SubmissionError(f"{filename} holds {info.filename!r}, which is a link or a special file: a "
                                  "submission holds files and folders only")
        if info.compress_type not in _ZIP_METHODS:
            raise SubmissionError(f"{filename} holds {info.filename!r} compressed in a way the ladder does not "
                                  "read: zip it with deflate (every zip tool's default), or pack a .tar.gz")
    budget.claim(sum(info.file_size for info in infos), "its files say they are")
    for info in infos:
        path = _member_path(info.filename, filename)
        mode = (info.external_attr >> 16) & 0o7777 if info.create_system == 3 else 0o644  # 3: made on Unix
        yield path, mode, None if info.is_dir() else _Counted(archive.open(info), budget)


def _stored_mode(packed: int) -> int:
    """A stored file's mode: readable by the ladder's user alone, executable where it was packed so, writable by
    none; never setuid, setgid or sticky."""
    return 0o500 if packed & 0o111 else 0o400


def _unpack(data: bytes, kind: str, filename: str, target: Path, limits: SubmissionLimits) -> None:
    """Writes the upload's files under ``target``, each read-only, within a :class:`_Budget`."""
    if kind == ".py":
        (target / PYTHON_BOT).write_bytes(data)
        (target / PYTHON_BOT).chmod(_stored_mode(0))
        return
    _refuse_mislabelled(data, kind, filename)
    budget = _Budget(filename, limits)
    entries = _zip_entries(data, filename, limits, budget) if kind == ".zip" else _tar_entries(
        data, kind, filename, limits, budget)
    try:
        for path, mode, reader in entries:
            out = target.joinpath(*path.parts)
            if reader is None:
                out.mkdir(parents=True, exist_ok=True)
                continue
            if not path.parts:
                raise SubmissionError(f"{filename} holds a file with no name")
            out.parent.mkdir(parents=True, exist_ok=True)
            if out.exists():
                raise SubmissionError(f"{filename} holds {path} twice")
            with reader, out.open("xb") as written:
                while chunk := reader.read(_CHUNK):
                    budget.spend_files(len(chunk))
                    written.write(chunk)
            out.chmod(_stored_mode(mode))
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError, zlib.error, ValueError) as err:
        raise SubmissionError(f"{filename} cannot be read as {'a zip' if kind == '.zip' else 'a tar'} archive: "
                              f"{err}") from None
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
    """SHA-256 of a stored version: each file's path, whether it is executable, and its bytes, in path order
    (folders alone add nothing)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix().encode()
        executable = b"x" if path.stat().st_mode & 0o111 else b""  # the same bytes made executable are a new bot
        data = path.read_bytes()
        digest.update(len(relative).to_bytes(4, "big") + relative + executable + len(data).to_bytes(8, "big"))
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
    versions.mkdir(mode=0o700, parents=True, exist_ok=True)
    versions.chmod(0o700)
    incoming = versions / f".incoming-{os.urandom(6).hex()}"
    incoming.mkdir(mode=0o700)
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
            for path in [incoming, *incoming.rglob("*")]:
                if path.is_dir():
                    path.chmod(0o500)
            incoming.rename(final)
        return digest, submission.kind, f"{VERSIONS}/{digest}"
    finally:
        shutil.rmtree(incoming, ignore_errors=True)


def check_pace(session: Session, entrant: Entrant, limits: SubmissionLimits) -> None:
    """Refuses (:class:`TooOften`) an upload of ``entrant`` once they have made ``limits.per_hour`` in the last
    hour: the versions they submitted and the uploads refused once read, alike."""
    now = utc_now()
    since = now - timedelta(hours=1)
    made = [aware(created) for created in session.scalars(select(Version.created).where(
        Version.entrant_id == entrant.id, Version.created > since))]
    refused = [aware(created) for created in session.scalars(select(Refusal.created).where(
        Refusal.entrant_id == entrant.id, Refusal.created > since))]
    if len(made) + len(refused) >= limits.per_hour:
        wait = min(made + refused) + timedelta(hours=1) - now
        minutes = max(1, round(wait.total_seconds() / 60))
        counted = f" ({len(refused)} of them refused)" if refused else ""
        raise TooOften(f"you have submitted {len(made) + len(refused)} versions in the last hour{counted}, the most "
                       f"allowed; the next may come in about {minutes} minute{'s' if minutes > 1 else ''}")


def record_refusal(session: Session, entrant_id: int, filename: str, refusal: SubmissionError) -> None:
    """Keeps an upload refused once read: it counts toward the entrant's hour (:func:`check_pace`)."""
    session.add(Refusal(entrant_id=entrant_id, filename=filename[:200], reason=str(refusal)[:1000],
                        created=utc_now()))


def submit_upload(session: Session, ladder_folder: Path, entrant: Entrant, filename: str, data: bytes,
                  limits: SubmissionLimits) -> Version:
    """A new version of ``entrant`` from an upload, stored and waiting for its check. Refused (with
    :class:`SubmissionError`) when the entrant's newest version that has not failed holds the same files; the
    caller checks the pace first (:func:`check_pace`)."""
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
