"""Bot tokens: made at random, kept only as SHA-256 digests, compared in constant time.

A token is the secret that says which bot of a tournament a ``Hello`` speaks for. The arena never
keeps one: the configuration may give a remote bot's ``token_sha256`` (the hexadecimal SHA-256 of
the token's UTF-8 bytes, what :func:`token_sha256` returns), and a plain ``token`` or a token made
for a launched bot is hashed as soon as the arena reads it. :func:`find_bot` compares a Hello's
token with every digest the arena holds, in constant time for each.
"""

from __future__ import annotations

import hashlib
import hmac
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
    """The bot whose digest (``digests``: digest -> bot) is the token's, or ``None``.

    Every digest is compared, each with :func:`hmac.compare_digest`, so the time taken does not
    depend on how much of a guess is right.
    """
    offered = token_sha256(token)
    found = None
    for digest, bot in digests.items():
        if hmac.compare_digest(digest, offered):
            found = bot
    return found
