"""Lists in words, as every message of the package writes them: ``a``, ``a and b``, ``a, b and c``."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["listed"]


def listed(items: Sequence[str]) -> str:
    """``items`` joined as a sentence lists them: ``a``, ``a and b``, ``a, b and c`` (``""`` for none)."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"
