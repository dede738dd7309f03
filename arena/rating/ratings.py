"""Standings, head-to-head comparisons and the seat report, recomputed from records alone.

Anyone with a results folder gets the same tables: nothing here reads anything but the records.
``docs/standings.md`` explains every column. In short, for each bot:

- ``dup/game``: the duplicate score per game (primary sort). For every hand it played (one deal,
  one seat) its round score minus the mean score of the *other* bots that played the same hand,
  summed and divided by its games. Card luck cancels: a bot is compared only with bots that held
  the same cards. Its 95 % interval comes from *block* means (a block is one deal set played in all
  its rotations at one table), never from single rounds, whose luck is correlated within a block.
- ``mean round``, ``mean total``: raw means per round and per game.
- ``place pts``: 3/2/1/0 points for places 1-4, exact ties sharing the points; ``MP%``: the share
  of the other results on the same hand that it beat (ties half), as bridge matchpoints.
- ``mu``, ``sigma``, ``ordinal``: an OpenSkill Plackett-Luce rating fed with each game's places
  (ties allowed), with no skill drift (tau = 0) because bots do not change during a tournament;
  ``ordinal = mu - 3 sigma``.
- calling: ``made%`` (rounds with tricks >= call), ``|err|`` (mean |tricks - call|), ``over``
  (overtricks per round), ``high%``/``low%`` (rounds called too high / too low).
- ``fallback%``: the share of its decisions the arena made for it (fallback calls and cards,
  including whole games the fallback player sat in for it); ``faults``, by kind.
- ``status``: ``playing``, ``absent`` (a run stopped waiting for it), ``withdrawn`` or
  ``disqualified``, with the reason. Withdrawn and disqualified bots get no rank: they are listed
  after the ranking, apart. House bots (fillers) are listed last in the ranking, unranked.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from openskill.models import PlackettLuce
from tabulate import tabulate

from arena.core.rules import Rules
from arena.core.scoring import tenths_per_point
from arena.event.plan import BotStatus
from arena.event.records import GameRecords, RoundRecord, group_games
from arena.rating.sequential import Method, SprtResult, sprt
from arena.rating.stats import MeanCI, los, matchpoints, mean_ci, pentanomial_elo

__all__ = [
    "NOT_RANKED",
    "NOT_RANKED_TITLE",
    "BlockDifferences",
    "Comparison",
    "Results",
    "SeatRow",
    "Standing",
    "compare",
    "compare_games",
    "compute_standings",
    "head_to_head",
    "render_comparison",
    "render_head_to_head",
    "render_seat_report",
    "render_standings",
    "seat_report",
    "sorted_games",
]

PLACE_POINTS = (3.0, 2.0, 1.0, 0.0)
NOT_RANKED = ("withdrawn", "disqualified")
"""The statuses that take a bot out of the ranking (it is listed apart)."""
NOT_RANKED_TITLE = "Not ranked: withdrawn, disqualified, or no game played"

Results = Iterable[RoundRecord] | Iterable[GameRecords]
"""What the functions here read: the rounds of a results folder (games not finished are left
out), or its complete games."""


@dataclasses.dataclass
class Standing:
    """One bot's line of the standings (scores in tenths, or DY points)."""

    bot: str
    rank: int | None = None
    """Its place in the ranking; none for house bots, withdrawn or disqualified bots, and bots without a game."""
    house: bool = False
    status: str = "playing"
    """``playing``, ``absent``, ``withdrawn`` or ``disqualified`` (the manifest's word for the bot)."""
    reason: str = ""
    """Why the bot is absent, withdrawn or disqualified, in words."""
    games: int = 0
    rounds: int = 0
    dup_per_game: float = 0.0
    dup_low: float = math.nan
    dup_high: float = math.nan
    blocks: int = 0
    mean_round: float = 0.0
    mean_total: float = 0.0
    place_points: float = 0.0
    matchpoint_pct: float = 0.0
    mu: float = 25.0
    sigma: float = 25.0 / 3
    ordinal: float = 0.0
    made_pct: float = 0.0
    abs_error: float = 0.0
    overtricks: float = 0.0
    too_high_pct: float = 0.0
    too_low_pct: float = 0.0
    decisions: int = 0
    """Decisions its seats had to make: a call per deal and 13 cards per round."""
    fallbacks: int = 0
    """Of those, the decisions the arena made for it by fallback."""
    fallback_pct: float = 0.0
    faults: int = 0
    faults_by_kind: dict[str, int] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (nan and ±inf, which JSON lacks, become null)."""
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in dataclasses.asdict(self).items()}


def sorted_games(results: Results) -> list[GameRecords]:
    """The complete games of ``results``, sorted by game id parts (a stable order for ratings,
    whatever order the games finished in)."""
    items: list[RoundRecord | GameRecords] = list(results)
    games = [item for item in items if isinstance(item, GameRecords)]
    games += group_games([item for item in items if isinstance(item, RoundRecord)])
    games.sort(key=lambda g: (g.first.schedule_round, g.first.group, g.first.deal_set, g.first.rotation))
    return games


def _place_points(places: Sequence[int], seat: int) -> float:
    # Seats sharing a place share the points of the places they span.
    place = places[seat]
    tied = sum(1 for p in places if p == place)
    return sum(PLACE_POINTS[place - 1: place - 1 + tied]) / tied


def _hands(games: Sequence[GameRecords]) -> dict[tuple[str, int], list[tuple[str, str, int]]]:
    """Every result on every hand: (deal, seat) -> [(bot, block, score)]."""
    hands: dict[tuple[str, int], list[tuple[str, str, int]]] = {}
    for game in games:
        for record in game.rounds:
            for seat, bot in enumerate(record.seats):
                hands.setdefault((record.deal, seat), []).append((bot, record.block, record.scores[seat]))
    return hands


def _without_games(bot: str, house: bool) -> Standing:
    """The line of a bot that has no complete game (shown when the manifest gives it a status)."""
    nan = math.nan
    return Standing(
        bot, house=house, dup_per_game=nan, mean_round=nan, mean_total=nan, place_points=nan, matchpoint_pct=nan,
        mu=nan, sigma=nan, ordinal=nan, made_pct=nan, abs_error=nan, overtricks=nan, too_high_pct=nan,
        too_low_pct=nan, fallback_pct=nan,
    )


def compute_standings(
    records: Results, house: Iterable[str] = (), statuses: Mapping[str, BotStatus] | None = None,
) -> list[Standing]:
    """The standings of the complete games in ``records``: the ranked bots best first, then the house
    bots, then the withdrawn and disqualified bots (``statuses``, from the manifest), unranked."""
    house_bots = set(house)
    statuses = statuses or {}
    games = sorted_games(records)
    rows: dict[str, Standing] = {}
    model = PlackettLuce(tau=0.0)
    ratings: dict[str, Any] = {}
    block_dup: dict[str, dict[str, list[float]]] = {}
    block_games: dict[str, dict[str, int]] = {}
    for game in games:
        final = game.final
        seats = final.seats
        for seat, bot in enumerate(seats):
            row = rows.setdefault(bot, Standing(bot, house=bot in house_bots))
            row.games += 1
            row.rounds += len(game.rounds)
            row.mean_total += final.totals[seat]
            row.place_points += _place_points(final.places, seat)
            block_games.setdefault(bot, {})[final.block] = block_games.get(bot, {}).get(final.block, 0) + 1
            for record in game.rounds:
                call, won = record.calls[seat], record.tricks_won[seat]
                row.mean_round += record.scores[seat]
                row.made_pct += won >= call
                row.abs_error += abs(won - call)
                row.overtricks += max(0, won - call)
                row.too_high_pct += won < call
                row.too_low_pct += won > call
                row.decisions += record.decisions
                row.fallbacks += record.fallbacks[seat]
        for record in game.rounds:
            for fault in record.faults:
                row = rows[seats[fault.seat]]
                row.faults += 1
                row.faults_by_kind[fault.kind.value] = row.faults_by_kind.get(fault.kind.value, 0) + 1
        teams = [[ratings.setdefault(bot, model.rating(name=bot))] for bot in seats]
        rated = model.rate(teams, ranks=list(final.places))
        for seat, bot in enumerate(seats):
            ratings[bot] = rated[seat][0]
    for results in _hands(games).values():
        scores = [score for _, _, score in results]
        # A lone result (a hand no other bot has played yet) is neutral: 0 duplicate, half a matchpoint.
        points = matchpoints(scores)
        for (bot, block, score), mp in zip(results, points, strict=True):
            row = rows[bot]
            row.matchpoint_pct += mp
            if len(scores) > 1:
                datum = (sum(scores) - score) / (len(scores) - 1)
                row.dup_per_game += score - datum
                block_dup.setdefault(bot, {}).setdefault(block, []).append(score - datum)
    for bot, row in rows.items():
        rounds_played = row.rounds
        row.matchpoint_pct = 100.0 * row.matchpoint_pct / rounds_played
        row.dup_per_game /= row.games
        row.mean_total /= row.games
        row.place_points /= row.games
        row.mean_round /= rounds_played
        row.made_pct = 100.0 * row.made_pct / rounds_played
        row.abs_error /= rounds_played
        row.overtricks /= rounds_played
        row.too_high_pct = 100.0 * row.too_high_pct / rounds_played
        row.too_low_pct = 100.0 * row.too_low_pct / rounds_played
        row.fallback_pct = 100.0 * row.fallbacks / row.decisions
        per_block = [sum(diffs) / block_games[bot][block] for block, diffs in block_dup.get(bot, {}).items()]
        ci = mean_ci(per_block)
        row.dup_low, row.dup_high, row.blocks = ci.low, ci.high, ci.n
        rating = ratings[bot]
        row.mu, row.sigma, row.ordinal = rating.mu, rating.sigma, rating.ordinal()
    for bot, status in statuses.items():
        # A bot taken out before it finished a game still gets its line: the reason is news.
        if bot not in rows:
            rows[bot] = _without_games(bot, bot in house_bots)
        if bot in rows:
            rows[bot].status, rows[bot].reason = status.status, status.reason

    def order(row: Standing) -> tuple[int, bool, float, float, str]:
        section = 2 if _apart(row) else 1 if row.house else 0
        if not row.games:
            return section, True, 0.0, 0.0, row.bot
        return section, False, -row.dup_per_game, -row.mean_total, row.bot

    ordered = sorted(rows.values(), key=order)
    for rank, row in enumerate((r for r in ordered if not r.house and not _apart(r)), start=1):
        row.rank = rank
    return ordered


def _apart(row: Standing) -> bool:
    """True for a bot listed apart from the ranking: withdrawn, disqualified, or without a game."""
    return row.status in NOT_RANKED or not row.games


# -- head to head ------------------------------------------------------------------------------


@dataclasses.dataclass
class Comparison:
    """Bot A against bot B over the blocks where both played at the same table."""

    a: str
    b: str
    blocks: int
    diff: MeanCI
    """Per block: (A's total - B's total) per game, in tenths; the mean and its interval."""
    los: float
    """Likelihood that A is stronger than B."""
    elo: tuple[float, float, float]
    """Pentanomial head-to-head Elo and its 95 % interval."""
    pairs: int
    sprt: SprtResult | None = None
    """The sequential test, when one was asked for."""


class BlockDifferences:
    """A's game total minus B's, game by game, gathered by block: what the sequential test reads.

    The test takes the blocks in plan order, complete ones only, up to the first block that is not
    complete, so its verdict does not depend on which games happened to finish first.
    """

    def __init__(self, a: str, b: str) -> None:
        self.a = a
        self.b = b
        self._blocks: dict[str, dict[str, int]] = {}
        """Block id -> game id -> A's total minus B's (keyed by game, so a game counts once)."""

    def add(self, block: str, game: str, seats: Sequence[str], totals: Sequence[int]) -> None:
        """One finished game (ignored unless A and B both sat at it)."""
        if self.a in seats and self.b in seats:
            self._blocks.setdefault(block, {})[game] = totals[seats.index(self.a)] - totals[seats.index(self.b)]

    def add_game(self, game: GameRecords) -> None:
        """One recorded game."""
        self.add(game.block, game.game, game.seats, game.final.totals)

    def complete_prefix(self, order: Sequence[str], rotations: int) -> list[float]:
        """Per block of ``order``, A's total minus B's per game (tenths), up to the first block that
        does not yet hold all its ``rotations`` games."""
        out: list[float] = []
        for block in order:
            games = self._blocks.get(block, {})
            if len(games) < rotations:
                break
            out.append(sum(games.values()) / len(games))
        return out


def _block_differences(games: Sequence[GameRecords], a: str, b: str) -> tuple[list[float], list[float]]:
    """Per block where A and B met: A's total minus B's, per game (tenths); and the scores of game
    pairs, two games of a block in which A and B hold each other's hands (1 per game A finished
    ahead of B, 1/2 for an exact tie), as chess testing pairs games with colours reversed."""
    blocks: dict[str, list[tuple[tuple[str, ...], int, float]]] = {}
    for game in games:
        final = game.final
        seats = final.seats
        if a in seats and b in seats:
            diff = final.totals[seats.index(a)] - final.totals[seats.index(b)]
            blocks.setdefault(final.block, []).append((seats, diff, 1.0 if diff > 0 else 0.5 if diff == 0 else 0.0))
    diffs: list[float] = []
    pairs: list[float] = []
    for entries in blocks.values():
        diffs.append(sum(diff for _, diff, _ in entries) / len(entries))
        paired: set[int] = set()
        for i, (seats, _, outcome) in enumerate(entries):
            if i in paired:
                continue
            swapped = tuple(b if s == a else a if s == b else s for s in seats)
            ia, ib = seats.index(a), seats.index(b)
            for j in range(i + 1, len(entries)):
                other = entries[j][0]
                if j not in paired and (other == swapped or (other[ia] == b and other[ib] == a)):
                    paired.update((i, j))
                    pairs.append(outcome + entries[j][2])
                    break
    return diffs, pairs


def compare(
    records: Results, a: str, b: str, *, delta0: float | None = None, delta1: float | None = None,
    alpha: float = 0.05, beta: float = 0.05, burn_in: int = 30, cap: int | None = None, method: Method = "alt2",
    order: Sequence[str] | None = None, rotations: int = 4,
) -> Comparison:
    """A against B: mean duplicate difference per game with its interval, LOS, Elo, and the SPRT
    (when ``delta1`` is given; deltas in tenths per game).

    The SPRT reads every block where A and B met, in schedule order; given ``order`` (the block ids
    in plan order) and ``rotations`` (games per block), it reads them as a run does: the complete
    blocks of the plan, up to the first that is not complete (:class:`BlockDifferences`).
    """
    games = sorted_games(records)
    result = compare_games(games, a, b)
    if delta1 is not None:
        if order is None:
            diffs, _ = _block_differences(games, a, b)
        else:
            gathered = BlockDifferences(a, b)
            for game in games:
                gathered.add_game(game)
            diffs = gathered.complete_prefix(order, rotations)
        result.sprt = sprt(diffs, delta0 or 0.0, delta1, alpha=alpha, beta=beta, burn_in=burn_in, cap=cap,
                           method=method)
    return result


def head_to_head(records: Results, bots: Sequence[str]) -> dict[tuple[str, str], Comparison]:
    """Every ordered pair of ``bots`` that met at a table."""
    games = sorted_games(records)
    out: dict[tuple[str, str], Comparison] = {}
    for a in bots:
        for b in bots:
            if a != b:
                comparison = compare_games(games, a, b)
                if comparison.blocks:
                    out[(a, b)] = comparison
    return out


def compare_games(games: Sequence[GameRecords], a: str, b: str) -> Comparison:
    """:func:`compare` on complete games already sorted (:func:`sorted_games`), without the SPRT."""
    diffs, pairs = _block_differences(games, a, b)
    ci = mean_ci(diffs)
    return Comparison(
        a=a, b=b, blocks=ci.n, diff=ci, los=los(ci.mean, ci.se) if ci.n > 1 else math.nan,
        elo=pentanomial_elo(pairs) if pairs else (math.nan, math.nan, math.nan), pairs=len(pairs),
    )


# -- seats -------------------------------------------------------------------------------------


@dataclasses.dataclass
class SeatRow:
    """Mean round score of one seat position, across all bots."""

    position: str
    rounds: int
    mean: MeanCI


def seat_report(records: Results) -> list[SeatRow]:
    """Mean round score by seat and by distance from the dealer, with intervals over blocks."""
    games = sorted_games(records)
    by_key: dict[str, dict[str, list[int]]] = {}
    for game in games:
        for record in game.rounds:
            for seat in range(4):
                distance = (seat - record.dealer) % 4
                for key in (f"seat {seat}", f"dealer +{distance}" if distance else "dealer"):
                    by_key.setdefault(key, {}).setdefault(record.block, []).append(record.scores[seat])
    out = []
    order = [f"seat {s}" for s in range(4)] + ["dealer +1", "dealer +2", "dealer +3", "dealer"]
    for key in order:
        blocks = by_key.get(key, {})
        out.append(SeatRow(key, sum(len(v) for v in blocks.values()),
                           mean_ci([sum(v) / len(v) for v in blocks.values()])))
    return out


# -- rendering -------------------------------------------------------------------------------


def _points(rules: Rules, tenths: float, sign: bool = True) -> str:
    if math.isnan(tenths):
        return "-"
    if math.isinf(tenths):
        return "inf" if tenths > 0 else "-inf"
    value = tenths / tenths_per_point(rules)
    return f"{value:+.2f}" if sign else f"{value:.2f}"


def _interval(rules: Rules, low: float, high: float) -> str:
    return f"[{_points(rules, low)}, {_points(rules, high)}]"


def _faults_text(kinds: Mapping[str, int]) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) or "0"


def _number(value: float, spec: str) -> str:
    return "-" if math.isnan(value) else format(value, spec)


STANDINGS_HEADERS = ["#", "bot", "dup/game", "95% CI", "mean round", "mean total", "place pts", "MP%", "mu",
                     "sigma", "ordinal", "made%", "|err|", "over", "high/low%", "games", "fallback%", "faults",
                     "status"]


def _standings_table(rows: Sequence[Standing], rules: Rules, fmt: str) -> str:
    table = []
    for row in rows:
        table.append([
            row.rank if row.rank is not None else "-", row.bot + (" (house)" if row.house else ""),
            _points(rules, row.dup_per_game), _interval(rules, row.dup_low, row.dup_high),
            _points(rules, row.mean_round), _points(rules, row.mean_total), _number(row.place_points, ".2f"),
            _number(row.matchpoint_pct, ".1f"), _number(row.mu, ".1f"), _number(row.sigma, ".2f"),
            _number(row.ordinal, ".1f"), _number(row.made_pct, ".0f"), _number(row.abs_error, ".2f"),
            _number(row.overtricks, ".2f"),
            f"{row.too_high_pct:.0f}/{row.too_low_pct:.0f}" if row.games else "-", row.games,
            _number(row.fallback_pct, ".1f"), _faults_text(row.faults_by_kind),
            f"{row.status}: {row.reason}" if row.reason else row.status,
        ])
    return tabulate(table, headers=STANDINGS_HEADERS, tablefmt="github" if fmt == "markdown" else "simple",
                    disable_numparse=True) + "\n"


def render_standings(rows: Sequence[Standing], rules: Rules, fmt: str = "table") -> str:
    """The standings as text (``table``, ``markdown``), ``json`` or ``csv``. In text, withdrawn and
    disqualified bots follow the ranking in a section of their own."""
    if fmt == "json":
        return json.dumps([r.to_dict() for r in rows], indent=2) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        fields = [f for f in Standing.__dataclass_fields__ if f != "faults_by_kind"]
        writer = csv.DictWriter(out, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            data = row.to_dict()
            data.pop("faults_by_kind")
            writer.writerow(data)
        return out.getvalue()
    apart = [row for row in rows if _apart(row)]
    text = _standings_table([row for row in rows if not _apart(row)], rules, fmt)
    if apart:
        gap = "\n" if fmt == "markdown" else ""
        text += f"\n{NOT_RANKED_TITLE}\n{gap}" + _standings_table(apart, rules, fmt)
    return text


def render_head_to_head(matrix: Mapping[tuple[str, str], Comparison], bots: Sequence[str], rules: Rules,
                        fmt: str = "table") -> str:
    """The head-to-head matrix: row bot against column bot, mean difference per game and LOS."""
    if fmt == "json":
        return json.dumps([
            {"a": c.a, "b": c.b, "blocks": c.blocks, "diff": c.diff.mean, "low": c.diff.low, "high": c.diff.high,
             "los": c.los} for c in matrix.values()
        ], indent=2, default=lambda x: None) + "\n"
    table = []
    for a in bots:
        cells: list[str] = [a]
        for b in bots:
            c = matrix.get((a, b))
            cells.append("" if c is None else f"{_points(rules, c.diff.mean)} ({100 * c.los:.0f}%)"
                         if not math.isnan(c.los) else f"{_points(rules, c.diff.mean)}")
        table.append(cells)
    return tabulate(table, headers=["vs", *bots], tablefmt="github" if fmt == "markdown" else "simple",
                    disable_numparse=True) + "\n"


def render_seat_report(rows: Sequence[SeatRow], rules: Rules, fmt: str = "table") -> str:
    """Mean round score by seat and by dealer distance, with 95 % intervals."""
    table = [[r.position, r.rounds, _points(rules, r.mean.mean), _interval(rules, r.mean.low, r.mean.high)]
             for r in rows]
    return tabulate(table, headers=["position", "rounds", "mean round", "95% CI"],
                    tablefmt="github" if fmt == "markdown" else "simple", disable_numparse=True) + "\n"


def render_comparison(c: Comparison, rules: Rules) -> str:
    """A against B in words and numbers: difference, LOS, Elo, and the SPRT verdict."""
    lines = [
        f"{c.a} vs {c.b}: {c.blocks} blocks",
        f"  duplicate difference per game: {_points(rules, c.diff.mean)} "
        f"(95% CI {_interval(rules, c.diff.low, c.diff.high)})",
        f"  likelihood of superiority: {100 * c.los:.1f}%" if not math.isnan(c.los) else "  LOS: -",
        f"  head-to-head Elo (pentanomial, {c.pairs} game pairs): {c.elo[0]:+.1f} "
        f"[{c.elo[1]:+.1f}, {c.elo[2]:+.1f}]",
    ]
    if c.sprt is not None:
        s = c.sprt
        lines.append(f"  SPRT: LLR {s.llr:+.3f} (bounds [{s.lower:+.3f}, {s.upper:+.3f}]), verdict: {s.verdict}")
    return "\n".join(lines) + "\n"
