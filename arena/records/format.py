"""The records format (``docs/records.md``): its one writer, its one reader, and the typed records of a game.

A game played at a table is a :class:`GameRecord`; each of its rounds becomes one line of
``records.jsonl`` (:func:`game_lines`), and each line reads back as a :class:`RoundRecord`, the rounds
of one game as :class:`GameRecords`. Both name a game's parts alike: ``game`` (the game id), ``seats``
(the bot in each seat), ``deal_set`` (the deal set, which is the game number of its deals).

Reading checks every field a reader relies on and names the file, the line and the field when one is
missing or of the wrong type, so a damaged file gives one clear sentence, never a ``KeyError``. Cards,
hands and the trump read back as :class:`~arena.core.cards.Card`, :class:`~arena.core.cards.Hand` and
:class:`~arena.core.cards.Suit`. Records of format version 1 (before the ``fallbacks`` and
``versions`` fields) read with no fallbacks and no versions.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from arena.core.cards import CARDS, Card, Hand, Suit, card_text
from arena.core.faults import Fault, FaultKind
from arena.core.game import Redeal, RoundResult
from arena.core.rules import Rules
from arena.errors import ArenaError, CardError, RecordsError, RulesError

__all__ = [
    "FORMAT_VERSION",
    "GameRecord",
    "GameRecords",
    "Placing",
    "RedealEntry",
    "RoundRecord",
    "TornLine",
    "TrickEntry",
    "game_lines",
    "group_games",
    "iter_records",
    "parse_record",
    "read_lines",
    "read_records",
    "read_tail",
    "round_dict",
    "round_json",
]

FORMAT_VERSION = 2
"""The version of the record format written (``v`` in every record)."""
READABLE_VERSIONS = (1, 2)


# -- a game as played ------------------------------------------------------------------------------


@dataclasses.dataclass
class GameRecord:
    """Everything about one game played at a table, before it is written as records."""

    table_id: str
    game: str
    """The game id."""
    deal_set: int
    """The game number of the deals (the deal set, in a tournament)."""
    rules: Rules
    seats: tuple[str, ...]
    """The name of the player in each seat."""
    first_dealer: int
    rounds: list[RoundResult]
    redeals: list[Redeal]
    faults: list[Fault]
    totals: tuple[int, ...]
    places: tuple[int, ...]
    think_ms: list[float]
    """Time each seat took to answer, summed over the game (not part of the deterministic record)."""
    decisions: list[int]
    """Decisions asked of each seat."""
    fallbacks: list[tuple[int, int, int, int]] = dataclasses.field(default_factory=list)
    """For each round of :attr:`rounds`, the decisions the arena made for each seat (fallbacks)."""
    versions: tuple[str, ...] = ("", "", "", "")
    """Each seat's bot version, as the bot states it."""

    def to_dict(self) -> dict[str, object]:
        """Plain data, for comparing games; everything but ``timings`` is a pure function of seed, rules and
        bots. (A results folder holds :func:`game_lines`, not this.)"""
        return {
            "table": self.table_id,
            "game": self.game,
            "deal_set": self.deal_set,
            "rules": self.rules.to_dict(),
            "seats": list(self.seats),
            "first_dealer": self.first_dealer,
            "rounds": [round_dict(r) for r in self.rounds],
            "fallbacks": [list(f) for f in self.fallbacks],
            "versions": list(self.versions),
            "redeals": [{"round": r.round_number, "attempt": r.attempt, "reason": r.reason} for r in self.redeals],
            "faults": [f.to_dict() for f in self.faults],
            "totals": list(self.totals),
            "places": list(self.places),
            "timings": {"think_ms": [round(t, 3) for t in self.think_ms], "decisions": self.decisions},
        }


# -- writing ---------------------------------------------------------------------------------------


class Placing(Protocol):
    """Where a game sits in a tournament's schedule (an :class:`arena.event.plan.schedule.Assignment`)."""

    @property
    def id(self) -> str: ...
    @property
    def block(self) -> str: ...
    @property
    def round(self) -> int: ...
    @property
    def group(self) -> int: ...
    @property
    def deal_set(self) -> int: ...
    @property
    def rotation(self) -> int: ...
    @property
    def seats(self) -> Sequence[str]: ...
    @property
    def first_dealer(self) -> int: ...


_TEXT = tuple(card_text(i) for i in range(52))


def round_dict(result: RoundResult) -> dict[str, object]:
    """A finished round's own fields as plain data: the readable definition of what :func:`round_json` writes."""
    return {
        "round": result.round_number,
        "attempt": result.attempt,
        "dealer": result.dealer,
        "trump": result.trump.letter,
        "hands": [str(h) for h in result.hands],
        "calls": list(result.calls),
        "tricks": [
            {"leader": t.leader, "cards": [str(c) for c in t.cards], "winner": t.winner} for t in result.tricks
        ],
        "tricks_won": list(result.tricks_won),
        "scores": list(result.scores),
        "totals": list(result.totals),
    }


def round_json(result: RoundResult) -> str:
    """``json.dumps(round_dict(result))`` (compact), built directly: records are written for
    every round of every game, and this is most of their cost."""
    tricks = ",".join(
        f'{{"leader":{t.leader},"cards":["{_TEXT[t.cards[0].index]}","{_TEXT[t.cards[1].index]}",'
        f'"{_TEXT[t.cards[2].index]}","{_TEXT[t.cards[3].index]}"],"winner":{t.winner}}}'
        for t in result.tricks
    )
    c, w, sc, to = result.calls, result.tricks_won, result.scores, result.totals
    return (
        f'{{"round":{result.round_number},"attempt":{result.attempt},"dealer":{result.dealer},'
        f'"trump":"{result.trump.letter}","hands":["{result.hands[0]}","{result.hands[1]}","{result.hands[2]}",'
        f'"{result.hands[3]}"],"calls":[{c[0]},{c[1]},{c[2]},{c[3]}],"tricks":[{tricks}],'
        f'"tricks_won":[{w[0]},{w[1]},{w[2]},{w[3]}],"scores":[{sc[0]},{sc[1]},{sc[2]},{sc[3]}],'
        f'"totals":[{to[0]},{to[1]},{to[2]},{to[3]}]}}'
    )


def game_lines(
    tournament: str, seed: int, deals: str, placing: Placing, record: GameRecord, first: int = 0
) -> list[str]:
    """The records of a game's rounds from ``first`` on, one JSON line per round, in the public format.

    ``record`` may be a game in progress: its last round is then not marked final.
    """
    # The fields shared by every round of the game are encoded once; each line is that prefix
    # followed by the round's own fields.
    head = _json({
        "v": FORMAT_VERSION, "tournament": tournament, "game": placing.id, "block": placing.block,
        "schedule_round": placing.round, "group": placing.group, "deal_set": placing.deal_set,
        "rotation": placing.rotation, "seed": seed, "deals": deals, "rules": record.rules.to_dict(),
        "seats": list(placing.seats), "first_dealer": placing.first_dealer,
    })[:-1]
    over = any(record.places)
    lines = []
    last = len(record.rounds) - 1
    for index in range(first, len(record.rounds)):
        result = record.rounds[index]
        final = over and index == last
        data: dict[str, Any] = {
            "faults": [f.to_dict() for f in record.faults if f.round_number == result.round_number],
            "redeals": [
                {"attempt": r.attempt, "reason": r.reason}
                for r in record.redeals if r.round_number == result.round_number
            ],
            "fallbacks": list(record.fallbacks[index]) if index < len(record.fallbacks) else [0, 0, 0, 0],
            "final": final,
        }
        if final:
            data["places"] = list(record.places)
            data["versions"] = list(record.versions)
        data["timings"] = {"think_ms": [round(t, 3) for t in record.think_ms]} if final else {}
        lines.append(
            f'{head},"deal":"{placing.deal_set}.{result.round_number}.{result.attempt}",'
            f"{round_json(result)[1:-1]},{_json(data)[1:]}\n"
        )
    return lines


def _json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"))


# -- the typed records -----------------------------------------------------------------------------


class TrickEntry(NamedTuple):
    """One recorded trick: the leader, the cards in play order, the winner."""

    leader: int
    cards: tuple[Card, ...]
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
    trump: Suit
    hands: tuple[Hand, ...]
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
    """The rounds of one complete game as stored, in order."""

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


def group_games(records: Sequence[RoundRecord]) -> list[GameRecords]:
    """The complete games among ``records`` (rounds in file order), in file order of their first round."""
    by_game: dict[str, list[RoundRecord]] = {}
    for record in records:
        by_game.setdefault(record.game, []).append(record)
    return [GameRecords(tuple(rounds)) for rounds in by_game.values() if rounds[-1].final]


# -- reading one record ----------------------------------------------------------------------------

_RULES: dict[tuple[tuple[str, Any], ...], Rules] = {}
_CARD_OF = {card_text(i): CARDS[i] for i in range(52)}
_SUIT_OF = {suit.letter: suit for suit in Suit}
_HANDS: dict[str, Hand] = {}
"""Hands read lately, by text: a duplicate deal set holds the same four hands in each of its rotations."""


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

    def suit(self, key: str) -> Suit:
        text = self.text(key)
        suit = _SUIT_OF.get(text)
        if suit is None:
            try:
                suit = Suit.parse(text)
            except CardError:
                raise self.bad(key, "a suit letter (S, H, D or C)") from None
        return suit

    def hands(self, key: str) -> tuple[Hand, ...]:
        hands = []
        for text in self.texts(key):
            hand = _HANDS.get(text)
            if hand is None:
                try:
                    hand = Hand.parse(text)
                except CardError as err:
                    raise RecordsError(f"{self.where}: field {key!r} must hold four hands: {err}") from None
                if len(_HANDS) >= 4096:
                    _HANDS.clear()
                _HANDS[text] = hand
            hands.append(hand)
        return tuple(hands)


def _card(text: Any, f: _Fields) -> Card:
    if type(text) is not str:
        raise f.bad("cards", "a list of card texts")
    try:
        return Card.parse(text)
    except CardError:
        raise f.bad("cards", "a list of card texts") from None


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
    # Thirteen tricks a line: a well-formed one is read without the checking below, its canonical card
    # texts looked up at C speed; anything else takes the checking path, which names what is wrong.
    if type(item) is dict:
        leader, texts, winner = item.get("leader"), item.get("cards"), item.get("winner")
        if type(leader) is int and type(winner) is int and type(texts) is list:
            try:
                return TrickEntry(leader, tuple(map(_CARD_OF.__getitem__, texts)), winner)
            except (KeyError, TypeError):
                pass
    return _checked_trick(item, where)


def _checked_trick(item: Any, where: str) -> TrickEntry:
    if not isinstance(item, dict):
        raise RecordsError(f"{where}: a trick must be an object, not {item!r}")
    f = _Fields(item, where + " (a trick)")
    texts = item.get("cards")
    if not isinstance(texts, list):
        raise f.bad("cards", "a list of card texts")
    # Any number of cards reads: a trick of the wrong size is the audit's to report, with its trick.
    cards = tuple(_card(c, f) for c in texts)
    return TrickEntry(f.whole("leader"), cards, f.whole("winner"))


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
        attempt=f.whole("attempt"), dealer=f.whole("dealer"), trump=f.suit("trump"), hands=f.hands("hands"),
        calls=f.wholes("calls"), tricks=tuple(_trick(t, where) for t in f.items("tricks")),
        tricks_won=f.wholes("tricks_won"), scores=f.wholes("scores"), totals=f.wholes("totals"),
        faults=tuple(_fault(item, where) for item in f.items("faults")), redeals=tuple(redeals),
        fallbacks=f.wholes("fallbacks") if version >= 2 else (0, 0, 0, 0), final=final,
        places=f.wholes("places") if final else (),
        versions=f.texts("versions") if final and version >= 2 else ("", "", "", ""),
        think_ms=tuple(float(t) for t in think if isinstance(t, int | float)),
    )


# -- reading a file --------------------------------------------------------------------------------


class TornLine(enum.StrEnum):
    """What a reader does with a torn last line (no newline yet, or not a JSON object)."""

    REFUSE = "refuse"
    """An error: the file must be repaired first."""
    REPAIR = "repair"
    """Cut off the file (a run resuming after a power cut)."""
    SKIP = "skip"
    """Left out (a reader of a folder being written, which may see a line half written)."""


def read_lines(path: Path, torn: TornLine = TornLine.REFUSE) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of a records file with their line numbers, one line at a time, never the
    file at once. A torn last line is handled as ``torn`` says; damage anywhere else is always an
    error naming the file and the line."""
    if not path.exists():
        return
    with path.open("rb") as f:
        held: bytes | None = None
        start = 0  # where the held line begins in the file
        number = 0
        for line in f:
            if held is not None:
                yield number, _object(held, number, path)
                start += len(held)
            held = line
            number += 1
    if held is None:
        return
    data = _decoded(held) if held.endswith(b"\n") else None
    if data is not None:
        yield number, data
    elif torn is TornLine.REFUSE:
        raise RecordsError(f"{path}, line {number}: the last record is incomplete (a torn write)")
    elif torn is TornLine.REPAIR:
        with path.open("r+b") as f:
            f.truncate(start)
            f.flush()
            os.fsync(f.fileno())


def _decoded(line: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _object(line: bytes, number: int, path: Path) -> dict[str, Any]:
    data = _decoded(line)
    if data is None:
        raise RecordsError(f"{path}, line {number}: not a JSON record; the file is damaged")
    return data


def iter_records(path: Path, torn: TornLine = TornLine.REFUSE) -> Iterator[RoundRecord]:
    """The records of a file as typed values, one line at a time (see :func:`read_lines`)."""
    where = str(path)
    for number, data in read_lines(path, torn):
        yield parse_record(data, number, where)


def read_records(path: Path, repair: bool = False) -> list[RoundRecord]:
    """Every record of a file as typed values; a torn last line is an error, or cut off with ``repair``."""
    return list(iter_records(path, TornLine.REPAIR if repair else TornLine.REFUSE))


def read_tail(path: Path, size: int) -> list[RoundRecord]:
    """The records whole in the last ``size`` bytes of a file being written, best effort: a line cut
    at either end, or one that does not read, is left out (a live view never refuses a folder)."""
    try:
        with path.open("rb") as f:
            end = f.seek(0, 2)
            f.seek(max(0, end - size))
            tail = f.read()
    except OSError:
        return []
    lines = tail.split(b"\n")
    if end > size:
        lines = lines[1:]  # the first is a piece of a line
    found = []
    for line in lines[:-1]:  # the last is empty, or a line still being written
        try:
            found.append(parse_record(json.loads(line), 0, str(path)))
        except (ArenaError, ValueError, TypeError, KeyError):
            continue
    return found
