"""Uploads a hostile entrant sends the ladder: archives that claim or unpack to far more than they weigh, name
a compression they do not have, or hold what a submission may not; made in memory in well under a second.

A decompression bomb here is a run of compressed streams, each the same few dozen bytes that unpack to one MiB
of zeros: concatenated streams are one stream to gzip and bzip2, so a bomb of any size costs nothing to make.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import io
import tarfile
import zipfile

MIB = 1 << 20
GIB = 1 << 30


@functools.cache
def _zeros(compression: str) -> bytes:
    """One MiB of zeros, compressed as one stream."""
    zeros = bytes(MIB)
    return gzip.compress(zeros, 9, mtime=0) if compression == "gzip" else bz2.compress(zeros, 9)


def _compress(data: bytes, compression: str) -> bytes:
    return gzip.compress(data, 9, mtime=0) if compression == "gzip" else bz2.compress(data, 9)


def tar_header(name: str, size: int, kind: bytes = tarfile.REGTYPE, mode: int = 0o644) -> bytes:
    """One tar header block (GNU format, so that sizes past 8 GiB are written too)."""
    info = tarfile.TarInfo(name)
    info.size, info.type, info.mode = size, kind, mode
    return info.tobuf(format=tarfile.GNU_FORMAT)


def tar_bomb(compression: str, members: int = 1, claimed: int = GIB, kind: bytes = tarfile.REGTYPE) -> bytes:
    """A tar, compressed with ``compression`` (``gzip`` or ``bzip2``), of ``members`` entries whose headers each
    claim ``claimed`` bytes (a whole number of MiB), all of them there as zeros: a reader that walks its entries
    decompresses ``members * claimed`` bytes."""
    assert claimed % MIB == 0
    parts = []
    for number in range(members):
        parts.append(_compress(tar_header(f"f{number}.bin", claimed, kind) + bytes(MIB - 512), compression))
        parts.append(_zeros(compression) * (claimed // MIB - 1))
        parts.append(_compress(bytes(512), compression))  # the 512 bytes the header took from the first MiB
    return b"".join(parts)


def tar_of(files: dict[str, bytes], modes: dict[str, int] | None = None, compression: str = "gzip") -> bytes:
    """An ordinary tar of ``files`` (``modes``: a file's mode, 0o644 when not given)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if compression == "gzip" else "w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), (modes or {}).get(name, 0o644)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def zip_of(files: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED, modes: dict[str, int] | None = None) -> bytes:
    """A zip of ``files``, each compressed with ``method`` (``modes``: a file's Unix mode)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            info.create_system = 3
            info.external_attr = (0o100000 | (modes or {}).get(name, 0o644)) << 16
            archive.writestr(info, data)
    return buffer.getvalue()


@functools.cache
def hostile_archives() -> dict[str, tuple[str, bytes]]:
    """What a hostile entrant uploads, by what it tries: (file name, bytes), each to be refused."""
    bz2_bomb = tar_bomb("bzip2", members=50)  # 50 GiB of bzip2 in a few MB, named as no compression
    return {
        "bzip2 named .tar": ("bot.tar", bz2_bomb),
        "gzip named .tar": ("bot.tar", tar_bomb("gzip", claimed=64 * MIB)),
        "a header claiming 1 GiB": ("bot.tar.gz", tar_bomb("gzip", members=1)),
        "a pax header claiming 64 MiB": ("bot.tar.gz", tar_bomb("gzip", claimed=64 * MIB, kind=tarfile.XHDTYPE)),
        "an unknown entry type of 64 MiB": ("bot.tar.gz", tar_bomb("gzip", claimed=64 * MIB, kind=b"Z")),
        "a zip of bzip2": ("bot.zip", zip_of({"bot.py": b"x" * 1000}, zipfile.ZIP_BZIP2)),
        "a zip of lzma": ("bot.zip", zip_of({"bot.py": b"x" * 1000}, zipfile.ZIP_LZMA)),
        "a link": ("bot.tar.gz", _link()),
        "a name outside": ("bot.tar.gz", tar_of({"../../escape.py": b"x"})),
        "not an archive": ("bot.tar.gz", b"\x1f\x8b" + b"\xff" * 200),
        "a truncated gzip": ("bot.tgz", gzip.compress(tar_header("bot.py", 5000) + b"x" * 100)[:-20]),
        "no bot": ("bot.zip", zip_of({"readme.txt": b"hello"})),
    }


def _link() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("secret")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(info)
    return buffer.getvalue()
