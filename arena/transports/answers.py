"""What a bot's bytes say: one JSON reader for every answer a stdio or Bhoos bot sends, that never raises.

A bot's answer is a few bytes of JSON (``{"call": 3}``, ``{"value": "QS"}``), but a bot may send anything,
and :func:`json.loads` alone is not safe on anything: deep nesting exhausts the interpreter's stack
(``RecursionError``), a number of thousands of digits is refused with a ``ValueError`` about Python's
own limits or costs quadratic time, ``1e999`` reads as infinity, ``NaN`` is read though it is not JSON,
and a lone surrogate (``"\\ud800"``) reads into a string that cannot be written back as UTF-8.

:func:`read_json` reads an answer's bytes as JSON under bounds checked before or while it parses:

- the bytes are UTF-8 (a leading byte order mark, as some runtimes write, is skipped) without a NUL;
- arrays and objects are nested at most :data:`DEPTH_LIMIT` deep, counted by a scan of the brackets
  outside strings before the parser runs;
- a number is at most :data:`NUMBER_LIMIT` characters long and finite; ``NaN`` and ``Infinity`` are refused;
- an object names each key once;
- a string holds no lone surrogate.

What it cannot read it returns as :class:`Unreadable`, with the reason in words a student understands;
the transport turns that into a ``malformed`` fault of the seat. No exception leaves it for any input.
The length of an answer is bounded by the transport before it gets here (a line, a response body).
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from arena.core.faults import shown

__all__ = ["DEPTH_LIMIT", "NUMBER_LIMIT", "Unreadable", "read_json"]

DEPTH_LIMIT = 32
"""The deepest nesting of arrays and objects an answer may have (``{"call": 3}`` is 1 deep)."""
NUMBER_LIMIT = 100
"""The most characters a number in an answer may have."""

_BOM = b"\xef\xbb\xbf"
_NUL = b"\0"
# A JSON string (its escapes included) or a bracket: the scan of the nesting skips what strings hold.
# Possessive, so a long string is matched once, never backtracked into.
_STRING_OR_BRACKET = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.DOTALL)
_OPENING = frozenset(b"[{")


@dataclasses.dataclass(frozen=True, slots=True)
class Unreadable:
    """An answer that is not usable JSON; ``reason`` completes "the answer ..." (``is not JSON``,
    ``is nested deeper than 32 levels``)."""

    reason: str


class _Refused(ValueError):
    """Raised inside the parser's hooks to stop at the first thing refused; never leaves this module."""


def _too_deep(raw: bytes) -> bool:
    """Whether arrays and objects nest more than :data:`DEPTH_LIMIT` deep in ``raw`` (brackets inside
    strings not counted); it stops at the first bracket too deep."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(raw):
        token = match.group()
        if len(token) != 1:
            continue  # a string
        if token[0] in _OPENING:
            depth += 1
            if depth > DEPTH_LIMIT:
                return True
        else:
            depth -= 1
    return False


def _number_text(text: str) -> None:
    if len(text) > NUMBER_LIMIT:
        raise _Refused(f"holds a number of {len(text):,} characters (at most {NUMBER_LIMIT})")


def _int(text: str) -> int:
    _number_text(text)
    return int(text)


def _float(text: str) -> float:
    _number_text(text)
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"holds the number {text}, too large for a number of JSON as the arena reads it")
    return value


def _constant(name: str) -> Any:
    raise _Refused(f"holds {name}, which is not JSON (JSON has no NaN or Infinity)")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"names the key {shown(key)} twice (which one would count?)")
            seen.add(key)
    return data


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_int=_int, parse_float=_float,
                            parse_constant=_constant)


def read_json(raw: bytes) -> object:
    """The JSON value of an answer's bytes, or :class:`Unreadable` saying why there is none (see the module
    docstring for the bounds); never raises."""
    if raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    if _NUL in raw:
        return Unreadable(f"holds a NUL byte (at byte {raw.index(_NUL):,})")
    # Depth cannot pass the number of opening brackets: the scan is only for answers that have many.
    if raw.count(b"[") + raw.count(b"{") > DEPTH_LIMIT and _too_deep(raw):
        return Unreadable(f"nests arrays and objects more than {DEPTH_LIMIT} levels deep")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return Unreadable(f"is not UTF-8 text (byte 0x{raw[err.start]:02x} at byte {err.start:,})")
    text = text.strip()
    if not text:
        return Unreadable("is empty")
    try:
        value, end = _DECODER.raw_decode(text)
    except _Refused as err:
        return Unreadable(str(err))
    except json.JSONDecodeError as err:
        return Unreadable(f"is not JSON ({err.msg} at character {err.pos:,})")
    except (ValueError, RecursionError):  # neither can happen under the bounds above: kept as a net
        return Unreadable("is not JSON")
    if end != len(text):
        return Unreadable("is not JSON (more follows the first value)")
    if "\\u" in text and not _encodable(value):
        return Unreadable("holds a lone surrogate escape (like \\ud800), which is no character")
    return value


def _encodable(value: object) -> bool:
    """Whether every string in ``value`` can be written as UTF-8 (a lone surrogate cannot)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
