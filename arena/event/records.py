"""The records of a results folder as typed values: one :class:`RoundRecord` per line of
``records.jsonl``, and :class:`GameRecords` for the rounds of one game.

Reading checks every field a reader relies on and names the line and the field when one is
missing or of the wrong type, so a damaged file gives one clear sentence, never a ``KeyError``.
The format itself is documented in ``docs/records.md``; records of format version 1 (before the
``fallbacks`` and ``versions`` fields) read with no fallbacks and no versions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from arena.core.faults import Fault, FaultKind
from arena.core.rules import Rules
from arena.errors import RecordsError, RulesError

__all__ = ["FORMAT_VERSION", "GameRecords", "RedealEntry", "RoundRecord", "TrickEntry", "parse_record"]

FORMAT_VERSION = 2
"""The version of the record format written (``v`` in every record)."""
READABLE_VERSIONS = (1, 2)


class TrickEntry(NamedTuple):
    """One recorded trick: the leader, the four cards in play order (text), the winner."""

    leader: int
    cards: tuple[str, ...]
    winner: int


class RedealEntry(NamedTuple):
    """A deal thrown in before the one played: its attempt and why."""

    attempt: int
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class RoundRecord:
    """One round played at a table: a line of ``records.jsonl``."""

    line: int
    """The line of the file it was read from (1-based), for messages."""
    version: int
    tournament: str
    game: str
    block: str
    schedule_round: int
    group: int
    deal_set: int
    rotation: int
    seed: int
    deals: str
    rules: Rules
    seats: tuple[str, ...]
    first_dealer: int
    deal: str
    round: int
    attempt: int
    dealer: int
    trump: str
    hands: tuple[str, ...]
    calls: tuple[int, ...]
    tricks: tuple[TrickEntry, ...]
    tricks_won: tuple[int, ...]
    scores: tuple[int, ...]
    totals: tuple[int, ...]
    faults: tuple[Fault, ...]
    redeals: tuple[RedealEntry, ...]
    fallbacks: tuple[int, ...]
    """Decisions the arena made for each seat in this round (fallbacks)."""
    final: bool
    places: tuple[int, ...]
    """Places 1-4 by seat on the final round; empty on the others."""
    versions: tuple[str, ...]
    """Each seat's bot version on the final round (empty strings when unknown)."""
    think_ms: tuple[float, ...]
    """Thinking time by seat over the game, on the final round (the only field that varies between runs)."""

    @property
    def decisions(self) -> int:
        """Decisions each seat had to make in this round: a call per deal, and 13 cards."""
        return 14 + len(self.redeals)


@dataclasses.dataclass(frozen=True)
class GameRecords:
    """The rounds of one complete game, in order."""

    rounds: tuple[RoundRecord, ...]

    @property
    def first(self) -> RoundRecord:
        return self.rounds[0]

    @property
    def final(self) -> RoundRecord:
        return self.rounds[-1]

    @property
    def game(self) -> str:
        return self.rounds[0].game

    @property
    def block(self) -> str:
        return self.rounds[0].block

    @property
    def seats(self) -> tuple[str, ...]:
        return self.rounds[0].seats


_RULES: dict[tuple[tuple[str, Any], ...], Rules] = {}


class _Fields:
    """Typed access to one record's fields, with errors that name the line and the field."""

    __slots__ = ("data", "where")

    def __init__(self, data: Mapping[str, Any], where: str) -> None:
        self.data = data
        self.where = where

    def bad(self, key: str, what: str) -> RecordsError:
        if key not in self.data:
            return RecordsError(f"{self.where}: the record has no {key!r} field")
        return RecordsError(f"{self.where}: field {key!r} must be {what}, not {self.data[key]!r}")

    def whole(self, key: str) -> int:
        value = self.data.get(key)
        if type(value) is not int:
            raise self.bad(key, "a whole number")
        return value

    def text(self, key: str) -> str:
        value = self.data.get(key)
        if type(value) is not str:
            raise self.bad(key, "a string")
        return value

    def wholes(self, key: str, length: int | None = 4) -> tuple[int, ...]:
        value = self.data.get(key)
        if not isinstance(value, list) or (length is not None and len(value) != length) or any(
            type(v) is not int for v in value
        ):
            raise self.bad(key, f"a list of {length or 'some'} whole numbers")
        return tuple(value)

    def texts(self, key: str, length: int = 4) -> tuple[str, ...]:
        value = self.data.get(key)
        if not isinstance(value, list) or len(value) != length or any(type(v) is not str for v in value):
            raise self.bad(key, f"a list of {length} strings")
        return tuple(value)

    def items(self, key: str) -> list[Any]:
        value = self.data.get(key)
        if not isinstance(value, list):
            raise self.bad(key, "a list")
        return value


def _rules(fields: _Fields) -> Rules:
    data = fields.data.get("rules")
    if not isinstance(data, dict):
        raise fields.bad("rules", "a table of rules switches")
    key = tuple(sorted(data.items()))
    rules = _RULES.get(key)
    if rules is None:
        try:
            rules = Rules.from_dict(data)
        except (RulesError, TypeError) as err:
            raise RecordsError(f"{fields.where}: the rules cannot be read: {err}") from None
        _RULES[key] = rules
    return rules


def _fault(item: Any, where: str) -> Fault:
    if not isinstance(item, dict):
        raise RecordsError(f"{where}: a fault must be an object, not {item!r}")
    f = _Fields(item, where + " (a fault)")
    try:
        kind = FaultKind(f.text("kind"))
    except ValueError:
        raise f.bad("kind", "a fault kind") from None
    trick = item.get("trick")
    if trick is not None and type(trick) is not int:
        raise f.bad("trick", "a whole number or null")
    fallback = item.get("fallback")
    if fallback is not None and type(fallback) is not str:
        raise f.bad("fallback", "a string or null")
    return Fault(f.whole("seat"), kind, f.text("detail"), f.whole("round"), trick, fallback)


def _trick(item: Any, where: str) -> TrickEntry:
    if not isinstance(item, dict):
        raise RecordsError(f"{where}: a trick must be an object, not {item!r}")
    f = _Fields(item, where + " (a trick)")
    cards = item.get("cards")
    if not isinstance(cards, list) or any(type(c) is not str for c in cards):
        raise f.bad("cards", "a list of card texts")
    return TrickEntry(f.whole("leader"), tuple(cards), f.whole("winner"))


def parse_record(data: Any, line: int, path: str = "records.jsonl") -> RoundRecord:
    """A record from one decoded JSON line; raises :class:`RecordsError` naming the line and field."""
    where = f"{path}, line {line}"
    if not isinstance(data, dict):
        raise RecordsError(f"{where}: a record must be a JSON object, not {data!r}")
    f = _Fields(data, where)
    version = f.whole("v")
    if version not in READABLE_VERSIONS:
        raise RecordsError(f"{where}: record format version {version} is not one this arena reads "
                           f"({', '.join(map(str, READABLE_VERSIONS))})")
    final = data.get("final")
    if type(final) is not bool:
        raise f.bad("final", "true or false")
    redeals = []
    for item in f.items("redeals"):
        if not isinstance(item, dict):
            raise RecordsError(f"{where}: a redeal must be an object, not {item!r}")
        r = _Fields(item, where + " (a redeal)")
        redeals.append(RedealEntry(r.whole("attempt"), r.text("reason")))
    timings = data.get("timings", {})
    think = timings.get("think_ms", ()) if isinstance(timings, dict) else ()
    return RoundRecord(
        line=line, version=version, tournament=f.text("tournament"), game=f.text("game"), block=f.text("block"),
        schedule_round=f.whole("schedule_round"), group=f.whole("group"), deal_set=f.whole("deal_set"),
        rotation=f.whole("rotation"), seed=f.whole("seed"), deals=f.text("deals"), rules=_rules(f),
        seats=f.texts("seats"), first_dealer=f.whole("first_dealer"), deal=f.text("deal"), round=f.whole("round"),
        attempt=f.whole("attempt"), dealer=f.whole("dealer"), trump=f.text("trump"), hands=f.texts("hands"),
        calls=f.wholes("calls"), tricks=tuple(_trick(t, where) for t in f.items("tricks")),
        tricks_won=f.wholes("tricks_won"), scores=f.wholes("scores"), totals=f.wholes("totals"),
        faults=tuple(_fault(item, where) for item in f.items("faults")), redeals=tuple(redeals),
        fallbacks=f.wholes("fallbacks") if version >= 2 else (0, 0, 0, 0), final=final,
        places=f.wholes("places") if final else (),
        versions=f.texts("versions") if final and version >= 2 else ("", "", "", ""),
        think_ms=tuple(float(t) for t in think if isinstance(t, int | float)),
    )


def group_games(records: Sequence[RoundRecord]) -> list[GameRecords]:
    """The complete games among ``records`` (rounds in file order), in file order of their first round."""
    by_game: dict[str, list[RoundRecord]] = {}
    for record in records:
        by_game.setdefault(record.game, []).append(record)
    return [GameRecords(tuple(rounds)) for rounds in by_game.values() if rounds[-1].final]
