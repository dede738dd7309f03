"""Bot tokens: made at random, kept only as SHA-256 digests, looked up by digest.

A token is the secret that says which bot of a tournament a ``Hello`` speaks for. The arena never
keeps one: the configuration may give a remote bot's ``token_sha256`` (the hexadecimal SHA-256 of
the token's UTF-8 bytes, what :func:`token_sha256` returns), and a plain ``token`` or a token made
for a launched bot is hashed as soon as the arena reads it. :func:`find_bot` looks a Hello's token
up by its digest, in time that does not depend on how many bots there are. A lookup by digest
tells a guesser nothing about the token: changing a guess changes its whole digest, so how far a
lookup got before it missed says nothing about how close the guess was.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping

__all__ = ["find_bot", "is_sha256", "new_token", "token_sha256"]

_SHA256 = re.compile(r"[0-9a-f]{64}")


def new_token() -> str:
    """A fresh random token: 32 hexadecimal digits (128 bits), safe in any shell or file."""
    return secrets.token_hex(16)


def token_sha256(token: str) -> str:
    """The digest the arena keeps of ``token``: SHA-256 of its UTF-8 bytes, in lower-case hexadecimal."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def is_sha256(text: str) -> bool:
    """True when ``text`` is a SHA-256 digest as :func:`token_sha256` writes it."""
    return _SHA256.fullmatch(text) is not None


def find_bot(digests: Mapping[str, str], token: str) -> str | None:
    """The bot whose digest (``digests``: digest -> bot) is the token's, or ``None``."""
    return digests.get(token_sha256(token))
