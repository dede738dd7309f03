"""Spectating a tournament: its games replayed trick by trick on the live page, never a deal set still in play.

The hidden-information rule (``docs/security.md``) holds for spectators too: while any game of a deal set is still
to be played, at another table or in another rotation, a card of that deal set on a projector could reach a bot
that has yet to play it. So :class:`Watch` shows a deal set only once every game the plan gives it is recorded
whole (the records and the manifest of the results folder say which), and from then on replays each of its games
trick by trick, a card every :attr:`WatchOptions.delay_s` seconds from the moment it saw the deal set complete: the
delay is per deal set, not per game. The organiser chooses whether the four hands are shown
(:attr:`WatchOptions.hands`) or only what every seat sees (the calls and the cards played).

The pages are ``/watch`` (the deal sets: shown, or still in play with how many of their games are over) and
``/watch/GAME`` (one game, where its replay has reached), added to the live page's server by
:func:`watch_routes`; each page reloads itself every few seconds by a small script of its own, under a
Content-Security-Policy that lets no other script run and fetches nothing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from arena.core.cards import Card
from arena.core.scoring import format_score
from arena.core.turns import call_order, seat_after
from arena.errors import ArenaError
from arena.event.plan.manifest import Manifest
from arena.event.setup.defaults import WATCH_DELAY_S
from arena.records.format import GameRecords, TornLine, group_games, iter_records
from arena.records.store import ResultsStore
from arena.web.faces import STYLE, SUITS, TEMPLATES, face
from arena.web.guard import TEXT, fields
from arena.web.security import page_headers

__all__ = ["Shown", "Watch", "WatchOptions", "render_watch", "watch_routes"]

_SCRIPT = TEMPLATES.script("watch.js")
_SECURITY = page_headers(_SCRIPT)


@dataclasses.dataclass(frozen=True)
class WatchOptions:
    """The organiser's choices for spectators."""

    delay_s: float = WATCH_DELAY_S
    """Seconds between two cards of a replay (a round's calls take one step too)."""
    hands: bool = False
    """Show the four hands as they are held (else only what every seat sees: the calls and the cards played)."""

    def __post_init__(self) -> None:
        if not self.delay_s > 0:
            raise ValueError(f"the spectators' delay must be more than 0 seconds, not {self.delay_s}")


@dataclasses.dataclass(frozen=True)
class Shown:
    """The deal sets of a folder as a spectator may see them."""

    shown: dict[int, float]
    """Deal set -> when (on the watch's clock) it was first seen complete."""
    playing: dict[int, tuple[int, int]]
    """Deal set still in play -> (games over, games planned)."""
    games: dict[str, GameRecords]
    """The games of the deal sets shown, by id."""


class Watch:
    """What spectators may see of a results folder being played (read again when the records grow)."""

    def __init__(self, folder: Path, options: WatchOptions = WatchOptions(),
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.folder = folder
        self.options = options
        self.clock = clock
        self._store = ResultsStore(folder)
        self._lock = threading.Lock()
        self._stamp: object = None
        self._planned: dict[int, frozenset[str]] = {}
        self._manifest_stamp: object = None
        self._since: dict[int, float] = {}
        self._shown = Shown({}, {}, {})

    def _plan(self) -> dict[int, frozenset[str]]:
        stamp = _stamp(self._store.manifest_path)
        if stamp != self._manifest_stamp:
            raw = self._store.manifest()
            planned: dict[int, set[str]] = {}
            if raw is not None:
                for game in Manifest.from_dict(raw, str(self._store.manifest_path)).plan.games():
                    planned.setdefault(game.deal_set, set()).add(game.id)
            self._planned = {deal_set: frozenset(ids) for deal_set, ids in planned.items()}
            self._manifest_stamp = stamp
        return self._planned

    def read(self) -> Shown:
        """The deal sets as they stand now."""
        with self._lock:
            planned = self._plan()
            stamp = (_stamp(self._store.records_path), self._manifest_stamp)
            if stamp == self._stamp:
                return self._shown
            records = list(iter_records(self._store.records_path, TornLine.SKIP))
            complete = {game.game: game for game in group_games(records)}
            now = self.clock()
            playing: dict[int, tuple[int, int]] = {}
            for deal_set, ids in sorted(planned.items()):
                over = sum(1 for game in ids if game in complete)
                if over == len(ids):
                    self._since.setdefault(deal_set, now)
                elif over or any(r.deal_set == deal_set for r in records):
                    playing[deal_set] = (over, len(ids))
            games = {game: record for game, record in complete.items() if record.first.deal_set in self._since}
            self._shown = Shown(dict(self._since), playing, games)
            self._stamp = stamp
            return self._shown

    def steps(self, deal_set: int) -> int:
        """How far the replays of a deal set shown have come: a step is a round's calls or one card."""
        since = self.read().shown.get(deal_set)
        return -1 if since is None else int((self.clock() - since) / self.options.delay_s) + 1


def _stamp(path: Path) -> object:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def _game_context(watch: Watch, game: GameRecords) -> dict[str, Any]:
    """A game as far as its replay has come: the rounds over, and the round being replayed step by step."""
    steps = watch.steps(game.first.deal_set)
    rounds: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for record in game.rounds:
        if steps <= 0:
            break
        cards = [card for trick in record.tricks for card in trick.cards]
        if steps >= 1 + len(cards):
            steps -= 1 + len(cards)
            rules = record.rules
            rounds.append({"number": record.round, "calls": record.calls, "won": record.tricks_won,
                           "scores": [format_score(rules, score) for score in record.scores],
                           "totals": [format_score(rules, total) for total in record.totals]})
            continue
        shown = steps - 1  # the calls are the first step
        played: list[Card] = cards[:shown]
        tricks = []
        for trick in record.tricks:
            part = [(seat_after(trick.leader, k), card) for k, card in enumerate(trick.cards)][:max(0, shown)]
            shown -= len(trick.cards)
            if not part:
                break
            whole = len(part) == len(trick.cards)
            tricks.append({"cards": [{"who": game.seats[seat], **face(card),
                                      "win": whole and seat == trick.winner} for seat, card in part],
                           "winner": game.seats[trick.winner] if whole else ""})
        won = [0, 0, 0, 0]
        for trick in record.tricks[:len(cards[:steps - 1]) // 4]:
            won[trick.winner] += 1
        gone = set(map(str, played))
        hands = [[{"suit": suit.noun.lower(), "symbol": suit.symbol,
                   "cards": [face(c) for c in record.hands[seat] if c.suit is suit and str(c) not in gone]}
                  for suit in SUITS] for seat in range(4)] if watch.options.hands else []
        current = {"number": record.round, "dealer": game.seats[record.dealer], "trump": record.trump.noun,
                   "trump_symbol": record.trump.symbol,
                   "calls": [(game.seats[seat], record.calls[seat]) for seat in call_order(record.dealer)],
                   "tricks": tricks, "won": won, "hands": hands}
        break
    over = len(rounds) == len(game.rounds)
    return {"game": game.game, "deal_set": game.first.deal_set, "rotation": game.first.rotation,
            "seats": list(game.seats), "rounds": rounds, "current": current, "over": over,
            "places": game.final.places if over else (), "hands_shown": watch.options.hands,
            "delay": watch.options.delay_s}


def render_watch(watch: Watch, game_id: str | None) -> tuple[int, str]:
    """The status and the page of ``/watch`` (``game_id`` ``None``) or ``/watch/GAME``."""
    shown = watch.read()
    refresh = max(1, round(watch.options.delay_s))
    if game_id is None:
        deal_sets = [{"deal_set": d, "games": sorted((g for g in shown.games.values() if g.first.deal_set == d),
                                                     key=lambda g: g.first.rotation)} for d in sorted(shown.shown)]
        return 200, TEMPLATES.render(
            "watch.html", style=STYLE, script=_SCRIPT, refresh=refresh, deal_sets=deal_sets, game=None,
            playing=sorted(shown.playing.items()), delay=watch.options.delay_s, hands=watch.options.hands)
    game = shown.games.get(game_id)
    if game is None:
        return 404, TEMPLATES.render(
            "watch.html", style=STYLE, script=_SCRIPT, refresh=refresh, deal_sets=[], game=None, missing=game_id,
            playing=sorted(shown.playing.items()), delay=watch.options.delay_s, hands=watch.options.hands)
    return 200, TEMPLATES.render(
        "watch_game.html", style=STYLE, script=_SCRIPT, refresh=refresh, **_game_context(watch, game))


class _Answer(Response):
    def init_headers(self, headers: object = None) -> None:
        self.raw_headers = fields(self.media_type or TEXT, len(self.body), _SECURITY)


def _make(watch: Watch, game_id: str | None) -> tuple[int, bytes]:
    try:
        code, text = render_watch(watch, game_id)
    except (ArenaError, OSError) as err:  # the page says it failed; the arena plays on
        return 500, f"the spectators' page cannot be made: {err}\n".encode()
    return code, text.encode("utf-8")


def watch_routes(watch: Watch, makers: concurrent.futures.Executor) -> Sequence[Route]:
    """``/watch`` and ``/watch/GAME`` for a server of the folder (the live page's); the answers are made by
    ``makers`` (each may read the records), never on the event loop."""

    async def answer(request: Request) -> Response:
        game_id = request.path_params.get("game")
        code, data = await asyncio.get_running_loop().run_in_executor(makers, _make, watch, game_id)
        return _Answer(data, code, media_type="text/html; charset=utf-8" if code != 500 else TEXT)

    return [Route("/watch", answer), Route("/watch/{game}", answer)]
