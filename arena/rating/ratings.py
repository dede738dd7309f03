"""Standings, head-to-head comparisons and the seat report, recomputed from records alone in one pass.

Anyone with a results folder gets the same tables: nothing here reads anything but the records (and
the plan, to know when a round is complete). ``docs/standings.md`` explains every column and
``docs/statistics.md`` every formula. In short, for each bot:

- ``dup/game``: the duplicate score per game (primary sort). For every hand it played (one deal,
  one seat) its round score minus the mean score of the results of the *other* bots on the same
  hand (never its own results at its other tables), summed and divided by the games those hands
  came from. A hand no other bot has played yet is not counted at all. Its 95 % interval is a
  Student t interval clustered by deal set: every table of a schedule round plays the same deal
  set, so a bot's games of one round are one cluster (a ratio estimator: the round's duplicate
  points over the round's games), and the degrees of freedom come from the number of rounds.
- ``mean round``, ``mean total``: raw means per round and per game.
- ``place pts``: 3/2/1/0 points for places 1-4, exact ties sharing the points; ``MP%``: the share
  of the other bots' results on the same hand that it beat (ties half), as bridge matchpoints,
  with the same clustered interval.
- ``mu``, ``sigma``, ``ordinal``: an OpenSkill Plackett-Luce rating fed with each game's places
  (ties allowed), with no skill drift (tau = 0) because bots do not change during a tournament;
  ``ordinal = mu - 3 sigma``. Games are rated in schedule order whatever order they were recorded in.
- calling: ``made%`` (rounds with tricks >= call), ``|err|`` (mean |tricks - call|), ``over``
  (overtricks per round), ``high%``/``low%`` (rounds called too high / too low).
- ``fallback%``: the share of its decisions the arena made for it (fallback calls and cards,
  including whole games the fallback player sat in for it); ``faults``, by kind.
- ``status``: ``playing``, ``absent`` (a run stopped waiting for it), ``withdrawn`` or
  ``disqualified``, with the reason. Withdrawn and disqualified bots get no rank: they are listed
  after the ranking, apart. House bots (fillers) are listed last in the ranking, unranked.

The pass (:class:`Tally`). Records are read one at a time, in the order the run wrote them (games
finish in any order). The rounds of a game wait until its last round; then its counts (games,
scores, calls, faults, fallbacks: sums, which do not depend on order) are added, and what compares
results (the datum of each hand, matchpoints, the head-to-head differences, game pairs, the seat
means, the ratings) is kept, compactly, with its schedule round. A round is scored when all its
games are in: with a plan, when every game its blocks plan has been read, and rounds are scored in
order (a round waits for the rounds before it, since the ratings depend on order); without a plan,
or for games the plan does not know, at the end. Then its hands are compared, each bot's cluster is
added to running sums, its games are rated in schedule order, and the round is forgotten. Memory is
bounded by the bots (and pairs of bots), the plan's blocks and the rounds in flight, not by the
number of rounds read. At the end, rounds still open (a run still playing, or stopped) are scored
with what they have.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from openskill.models import PlackettLuce

from arena.core.rules import Rules
from arena.core.scoring import tenths_per_point
from arena.event.plan.manifest import BotStatus
from arena.event.plan.plan import Plan
from arena.event.setup.config import UNRANKED_ABOVE_FALLBACK_PCT
from arena.event.setup.kinds import Rotation
from arena.rating.pairs import PAIRED_BOTS, PairReport
from arena.rating.ranks import RankRange, pair_quantile, rank_ranges
from arena.rating.rounds import KeptGame, OpenRound, game_pairs, same_hands
from arena.rating.sequential import DEFAULT_METHOD, Method, sprt
from arena.rating.standing import (
    PLACE_POINTS,
    SEAT_POSITIONS,
    BlockDifferences,
    Comparison,
    MemoryTest,
    PairEffect,
    RoundMark,
    SeatRow,
    Standing,
    listed_apart,
    not_ranked_because,
)
from arena.rating.stats import (
    ClusteredMean,
    ClusteredPair,
    PairTally,
    field_datum_diffs,
    field_matchpoints,
    one_sided_difference,
)
from arena.records.format import GameRecords, RoundRecord

__all__ = [
    "Results",
    "Tally",
    "compare",
    "head_to_head",
    "tally",
]

Results = Iterable[RoundRecord] | Iterable[GameRecords]
"""What the functions here read: the rounds of a results folder (games not finished are left
out), or its complete games."""


def _place_points(places: Sequence[int], seat: int) -> float:
    # Seats sharing a place share the points of the places they span.
    place = places[seat]
    tied = sum(1 for p in places if p == place)
    return sum(PLACE_POINTS[place - 1: place - 1 + tied]) / tied


class _Row:
    """One bot's running sums."""

    __slots__ = ("dup", "faults", "first", "later", "matchpoints", "memory", "rating", "standing")

    def __init__(self, bot: str, rating: Any) -> None:
        self.standing = Standing(bot)
        """Counts and sums (divided only when the standings are asked for)."""
        self.dup = ClusteredMean()
        self.matchpoints = ClusteredMean()
        self.first = ClusteredMean()
        """Its duplicate points in its first game of each deal set, and the games (the memory test)."""
        self.later = ClusteredMean()
        """Its duplicate points in its other games of each deal set."""
        self.memory = ClusteredPair()
        """What :attr:`later` and :attr:`first` share, deal set by deal set."""
        self.faults: dict[str, int] = {}
        self.rating = rating


class _Pair:
    """Bot A against bot B: running sums over the rounds where both played."""

    __slots__ = ("blocks", "diff", "games", "pairs")

    def __init__(self) -> None:
        self.diff = ClusteredMean()
        self.pairs = PairTally()
        self.games = 0
        self.blocks = 0


class Tally:
    """Every statistic of the standings, folded in record by record (see the module's docstring).

    ``plan`` (the manifest's) says which games each round has, so that a complete round is scored
    and forgotten at once; ``on_game`` hears of every finished game, in the order they are read, and
    ``on_round`` of where the bots stand after each round is scored, in the order rounds are scored.
    Call :meth:`finish` after the last record, then ask for the standings, comparisons and seats.
    """

    def __init__(self, plan: Plan | None = None, on_game: Callable[[GameRecords], object] | None = None,
                 on_round: Callable[[RoundMark], object] | None = None, once: bool = False, *,
                 ordered: bool = True) -> None:
        self.rules: Rules | None = None
        self._once = once or (plan is not None and plan.rotation == Rotation.ONCE)
        """Under ``rotation = "once"`` bots meet only the house trio: two bots are compared where they held the same
        hands, game against game (:func:`same_hands`), not at a table."""
        """The rules of the first record read (the unit of its scores)."""
        self.clusters = 0
        """Deal sets scored."""
        self._on_game = on_game
        self._on_round = on_round
        self._open: dict[str, list[RoundRecord]] = {}
        self._rounds: dict[int, OpenRound] = {}
        self._late: dict[int, OpenRound] = {}
        """Games of a round already scored (records the plan did not announce), scored at the end."""
        self._scored: set[int] = set()
        self._rows: dict[str, _Row] = {}
        self._pairs: dict[tuple[str, str], _Pair] = {}
        self._seats: dict[str, ClusteredMean] = {}
        self._shared: dict[tuple[str, str], ClusteredPair] | None = {}
        """What each pair of bots shares, for the rank ranges; ``None`` past :data:`PAIRED_BOTS` bots."""
        self._pair_report: PairReport | None = PairReport()
        """The pair report's sums; ``None`` past :data:`PAIRED_BOTS` bots."""
        self._ordered = ordered
        """The records hold each bot's games on a deal set in the order it played them (the memory test)."""
        self._read = 0
        self._model = PlackettLuce(tau=0.0)
        self._blocks: set[str] = set()
        self._expected: dict[int, int] = {}
        if plan is not None:
            for rnd in plan.walk():
                for block in rnd.blocks:
                    self._blocks.add(block.id)
                if rnd.blocks:
                    self._expected[rnd.number] = self._expected.get(rnd.number, 0) + plan.rotations * len(rnd.blocks)
        self._order = sorted(self._expected)
        self._next = 0

    # -- reading ------------------------------------------------------------------------------

    def add(self, record: RoundRecord) -> None:
        """One record, in file order: a game counts once its last round is read."""
        rounds = self._open.setdefault(record.game, [])
        rounds.append(record)
        if record.final:
            del self._open[record.game]
            self.add_game(GameRecords(tuple(rounds)))

    def add_game(self, game: GameRecords) -> None:
        """One complete game."""
        if self.rules is None:
            self.rules = game.first.rules
        final = game.final
        for seat, bot in enumerate(final.seats):
            row = self._row(bot)
            standing = row.standing
            standing.games += 1
            standing.rounds += len(game.rounds)
            standing.mean_total += final.totals[seat]
            standing.place_points += _place_points(final.places, seat)
            for record in game.rounds:
                call, won = record.calls[seat], record.tricks_won[seat]
                standing.mean_round += record.scores[seat]
                standing.made_pct += won >= call
                standing.abs_error += abs(won - call)
                standing.overtricks += max(0, won - call)
                standing.too_high_pct += won < call
                standing.too_low_pct += won > call
                standing.decisions += record.decisions
                standing.fallbacks += record.fallbacks[seat]
        for record in game.rounds:
            for fault in record.faults:
                row = self._rows[final.seats[fault.seat]]
                row.standing.faults += 1
                row.faults[fault.kind.value] = row.faults.get(fault.kind.value, 0) + 1
        number = game.first.schedule_round
        self._read += 1
        if number in self._scored:
            self._late.setdefault(number, OpenRound()).add(game, self._read)
        else:
            unit = self._rounds.setdefault(number, OpenRound())
            unit.add(game, self._read)
            if game.block in self._blocks:
                unit.planned.add(game.game)
            self._score_complete()
        if self._on_game is not None:
            self._on_game(game)

    def finish(self) -> None:
        """Scores the rounds still open, in order, with the games they have (games not finished are left out)."""
        for number in sorted(self._rounds):
            self._score(number, self._rounds.pop(number))
        for number in sorted(self._late):
            self._score(number, self._late.pop(number), late=True)
        self._next = len(self._order)
        self._open.clear()

    def _row(self, bot: str) -> _Row:
        row = self._rows.get(bot)
        if row is None:
            row = self._rows[bot] = _Row(bot, self._model.rating(name=bot))
        return row

    def _score_complete(self) -> None:
        """Scores the planned rounds that are complete, in order, up to the first that is not."""
        while self._next < len(self._order):
            number = self._order[self._next]
            unit = self._rounds.get(number)
            if unit is None or len(unit.planned) < self._expected[number]:
                return
            self._score(number, self._rounds.pop(number))
            self._next += 1

    def _score(self, number: int, unit: OpenRound, late: bool = False) -> None:
        """Compares the results of one round, adds its clusters, rates its games; then it is gone.

        Games of a round already scored (the plan did not announce them) come here again at the end, ``late``:
        they are compared among themselves and add a cluster of their own to the bots' sums (their
        deal set is counted once in :attr:`clusters`), but not to the memory test (the first game of each
        bot on the deal set was scored with the round)."""
        if number not in self._scored:
            self.clusters += 1
        self._scored.add(number)
        games = sorted(unit.games, key=lambda g: g.key)
        # The duplicate score and matchpoints: each bot's results of the round are one cluster.
        sums: dict[str, list[float]] = {}
        per_game: dict[tuple[str, int], list[float]] = {}
        """(bot, game index) -> its duplicate points in that game and the share of the game they cover."""
        # Hands and results in a fixed order, so that the sums come out the same to the last bit
        # whatever order the games were recorded in.
        for hand in sorted(unit.hands):
            results = sorted(unit.hands[hand])
            scores = [score for _, score, _, _ in results]
            owners = [bot for bot, _, _, _ in results]
            for (bot, _, share, index), diff, points in zip(
                results, field_datum_diffs(scores, owners), field_matchpoints(scores, owners), strict=True
            ):
                if diff is None or points is None:
                    continue  # nobody else has played this hand yet: not compared at all
                acc = sums.setdefault(bot, [0.0, 0.0, 0.0, 0.0])
                acc[0] += diff
                acc[1] += share
                acc[2] += points
                acc[3] += 1
                game_acc = per_game.setdefault((bot, index), [0.0, 0.0])
                game_acc[0] += diff
                game_acc[1] += share
        for bot, (dup, weight, points, hands) in sums.items():
            row = self._rows[bot]
            row.dup.add(dup, weight)
            row.matchpoints.add(points, hands)
        self._add_shared(sums)
        if not late:
            self._add_memory(unit, per_game)
        # Blocks, head-to-head differences and game pairs, per ordered pair of bots.
        blocks: dict[str, list[KeptGame]] = {}
        for game in games:
            blocks.setdefault(game.block, []).append(game)
        differences: dict[tuple[str, str], list[int]] = {}
        paired: dict[tuple[str, str], list[float]] = {}
        for block_games in blocks.values():
            bots = sorted({bot for game in block_games for bot in game.seats})
            for bot in bots:
                self._rows[bot].standing.blocks += 1
            if self._once:
                continue  # a bot and the house trio, each on other cards: nothing compared at the table
            for a, b in itertools.combinations(bots, 2):
                met = [g for g in block_games if a in g.seats and b in g.seats]
                diff = sum(g.totals[g.seats.index(a)] - g.totals[g.seats.index(b)] for g in met)
                for key, sign in (((a, b), 1), ((b, a), -1)):
                    counts = differences.setdefault(key, [0, 0, 0])
                    counts[0] += sign * diff
                    counts[1] += len(met)
                    counts[2] += 1
                pair_scores = game_pairs(met, a, b)
                paired.setdefault((a, b), []).extend(pair_scores)
                paired.setdefault((b, a), []).extend(2.0 - s for s in pair_scores)
        if self._once:
            same_hands(games, differences, paired)
        for key, (diff, count, met_blocks) in differences.items():
            pair = self._pairs.get(key)
            if pair is None:
                pair = self._pairs[key] = _Pair()
            pair.diff.add(diff, count)
            pair.games += count
            pair.blocks += met_blocks
            pair.pairs.add_cluster(paired[key])
        self._add_effects(blocks)
        for position, (total, count) in unit.seats.items():
            self._seats.setdefault(position, ClusteredMean()).add(total, count)
        # The ratings, in schedule order.
        for game in games:
            teams = [[self._rows[bot].rating] for bot in game.seats]
            rated = self._model.rate(teams, ranks=list(game.places))
            for seat, bot in enumerate(game.seats):
                self._rows[bot].rating = rated[seat][0]
        if self._on_round is not None:
            self._on_round(RoundMark(number, {bot: row.dup.mean for bot, row in self._rows.items()},
                                     {bot: row.rating.ordinal() for bot, row in self._rows.items()}))

    def _add_memory(self, unit: OpenRound, per_game: Mapping[tuple[str, int], list[float]]) -> None:
        """Adds a round's cluster to each bot's memory test: its duplicate points in its first game on the deal set
        (the first of its games read: the records hold a bot's games on a deal set in the order it played them) and
        in its other games."""
        firsts: dict[str, int] = {}
        for index, game in enumerate(unit.games):
            for bot in game.seats:
                if bot not in firsts or game.read < unit.games[firsts[bot]].read:
                    firsts[bot] = index
        split: dict[str, list[float]] = {}
        for (bot, index), (dup, weight) in per_game.items():
            acc = split.setdefault(bot, [0.0, 0.0, 0.0, 0.0])
            at = 0 if index == firsts[bot] else 2
            acc[at] += dup
            acc[at + 1] += weight
        for bot in sorted(split):
            first, first_weight, later, later_weight = split[bot]
            row = self._rows[bot]
            row.first.add(first, first_weight)
            row.later.add(later, later_weight)
            row.memory.add(later, later_weight, first, first_weight)

    def _add_effects(self, blocks: Mapping[str, Sequence[KeptGame]]) -> None:
        """Adds a round to the pair report; past :data:`PAIRED_BOTS` bots, the report is given up for good (memory
        stays bounded)."""
        if self._pair_report is None:
            return
        if len(self._rows) > PAIRED_BOTS:
            self._pair_report = None
            return
        self._pair_report.add_round(blocks.values(), self._rows)

    def _add_shared(self, sums: Mapping[str, list[float]]) -> None:
        """Adds a round's clusters to what each pair of its bots shares (:class:`ClusteredPair`), while the
        field is at most :data:`PAIRED_BOTS` bots; past that, forgets them all for good."""
        if self._shared is None:
            return
        if len(self._rows) > PAIRED_BOTS:
            self._shared = None
            return
        bots = sorted(sums)
        for i, a in enumerate(bots):
            a_dup, a_weight = sums[a][0], sums[a][1]
            for b in bots[i + 1:]:
                pair = self._shared.get((a, b))
                if pair is None:
                    pair = self._shared[a, b] = ClusteredPair()
                pair.add(a_dup, a_weight, sums[b][0], sums[b][1])

    def _ahead(self, upper: Standing, lower: Standing, field: int) -> bool:
        """Whether ``upper`` (above ``lower`` in the standings) scores significantly more per game, in a field of
        ``field`` ranked bots (2 for a lone comparison at 95 %, one-sided): their 95 % intervals do not overlap,
        or the difference of their duplicate scores, clustered by deal set, passes
        :func:`~arena.rating.ranks.pair_quantile`."""
        if upper.dup_low > lower.dup_high:
            return True  # the intervals shown beside the ranks never contradict them
        a, b = self._rows[upper.bot].dup, self._rows[lower.bot].dup
        if not a.clusters or not b.clusters:
            return False
        if self._shared is None:
            # Too many bots to keep what each pair shares: the sum of the two standard errors bounds the
            # difference's (Minkowski), and each one's t is at least the pair's, so this never says more.
            ua, ub = a.interval(), b.interval()
            if ua.n < 2 or ub.n < 2:
                return False
            return (a.mean - pair_quantile(field, ua.df) * ua.se
                    > b.mean + pair_quantile(field, ub.df) * ub.se)
        if upper.bot < lower.bot:  # the pair's sums are kept in the order of the names
            diff, se, clusters = (self._shared.get((upper.bot, lower.bot)) or ClusteredPair()).difference(a, b)
        else:
            diff, se, clusters = (self._shared.get((lower.bot, upper.bot)) or ClusteredPair()).difference(b, a)
            diff = -diff
        return clusters >= 2 and diff > pair_quantile(field, clusters - 1) * se

    def rank_ranges(self, ranked: Sequence[Standing], adjusted: bool = True) -> list[RankRange]:
        """The rank ranges of the ranked bots (in the standings' order); ``adjusted=False`` judges each pair by its
        own two-sided 95 % test (one-sided 97.5 %), as if it were the only comparison: the benchmark's foil."""
        field = len(ranked)
        judged = field if adjusted else 3  # pair_quantile(3) is the one-sided 97.5 % quantile
        return rank_ranges(field, lambda i, j: self._ahead(ranked[i], ranked[j], judged))

    # -- results ------------------------------------------------------------------------------

    def standings(self, house: Iterable[str] = (), statuses: Mapping[str, BotStatus] | None = None,
                  ended: bool = False, fallback_limit: float = UNRANKED_ABOVE_FALLBACK_PCT) -> list[Standing]:
        """The ranked bots best first, then the bots listed apart (:func:`not_ranked_because`: house bots, withdrawn
        and disqualified bots from the manifest's ``statuses``, bots the fallback played more than
        ``fallback_limit`` % for), unranked; a bot with a status but no game gets its line too. ``house`` may map each
        house bot to why it fills tables (its line's reason). ``ended``: the event is over, so a bot still
        ``playing`` is ``finished``."""
        house_bots = set(house)
        house_reasons = house if isinstance(house, Mapping) else {}
        statuses = statuses or {}
        rows: dict[str, Standing] = {}
        for bot, sums in self._rows.items():
            row = dataclasses.replace(sums.standing, house=bot in house_bots, faults_by_kind=dict(sums.faults))
            games, rounds = row.games, row.rounds
            dup = sums.dup.interval()
            row.dup_per_game, row.dup_low, row.dup_high = dup.mean, dup.low, dup.high
            row.dup_games, row.clusters = round(sums.dup.weight, 9), dup.n  # shares of 1/rounds: no float dust
            points = sums.matchpoints.interval()
            row.matchpoint_pct, row.matchpoint_low, row.matchpoint_high = (100.0 * points.mean, 100.0 * points.low,
                                                                         100.0 * points.high)
            row.mean_total /= games
            row.place_points /= games
            row.mean_round /= rounds
            row.made_pct = 100.0 * row.made_pct / rounds
            row.abs_error /= rounds
            row.overtricks /= rounds
            row.too_high_pct = 100.0 * row.too_high_pct / rounds
            row.too_low_pct = 100.0 * row.too_low_pct / rounds
            row.fallback_pct = 100.0 * row.fallbacks / row.decisions
            rating = sums.rating
            row.mu, row.sigma, row.ordinal = rating.mu, rating.sigma, rating.ordinal()
            row.memory_test = self._memory_test(sums)
            rows[bot] = row
        for bot, status in statuses.items():
            # A bot taken out before it finished a game still gets its line: the reason is news.
            if bot not in rows:
                rows[bot] = _without_games(bot, bot in house_bots)
            rows[bot].status, rows[bot].reason = status.status, status.reason
        for row in rows.values():
            row.reason = house_reasons.get(row.bot) or row.reason
            if ended and row.status == "playing":
                row.status = "finished"
            row.not_ranked = not_ranked_because(row, fallback_limit)

        def order(row: Standing) -> tuple[int, bool, bool, float, float, str]:
            section = 0 if not listed_apart(row) else 1 if row.house else 2
            if not row.games:
                return section, True, True, 0.0, 0.0, row.bot
            compared = not math.isnan(row.dup_per_game)
            return section, False, not compared, -row.dup_per_game if compared else 0.0, -row.mean_total, row.bot

        ordered = sorted(rows.values(), key=order)
        ranked = [row for row in ordered if not listed_apart(row)]
        for rank, row in enumerate(ranked, start=1):
            row.rank = rank
        for row, span in zip(ranked, self.rank_ranges(ranked), strict=True):
            row.rank_range = span.pair()
        return ordered

    def _memory_test(self, row: _Row) -> MemoryTest:
        """The bot's memory test (:class:`~arena.rating.standing.MemoryTest`)."""
        if not self._ordered:
            return MemoryTest(ordered=False)
        diff, low, high, p, clusters = one_sided_difference(row.memory, row.later, row.first)
        return MemoryTest(row.first.mean, row.later.mean, diff, low, high, p, clusters, round(row.first.weight, 9),
                          round(row.later.weight, 9))

    def memory_sums(self) -> dict[str, tuple[float, float, float, float]]:
        """Each bot's duplicate points and games on its first games and on its later ones, summed over the deal
        sets (of a ladder's block, its one deal set: what a version's memory test pools over its blocks)."""
        return {bot: (row.first.total, row.first.weight, row.later.total, row.later.weight)
                for bot, row in self._rows.items()}

    def pairs(self, bots: Iterable[str] | None = None) -> list[PairEffect]:
        """The pair report (:meth:`PairReport.report`) of ``bots`` (every bot by default); empty past
        :data:`PAIRED_BOTS` bots."""
        if self._pair_report is None:
            return []
        return self._pair_report.report(set(self._rows if bots is None else bots))

    @property
    def bots(self) -> list[str]:
        """Every bot that has a complete game, in the order first seen."""
        return list(self._rows)

    def comparison(self, a: str, b: str) -> Comparison:
        """A against B (no sequential test: see :func:`compare`)."""
        pair = self._pairs.get((a, b)) or _Pair()
        diff = pair.diff.interval()
        return Comparison(a=a, b=b, blocks=pair.blocks, games=pair.games, diff=diff, los=diff.los,
                          elo=pair.pairs.elo())

    def matrix(self, bots: Sequence[str]) -> dict[tuple[str, str], Comparison]:
        """Every ordered pair of ``bots`` that met at a table."""
        return {(a, b): self.comparison(a, b) for a in bots for b in bots if a != b and (a, b) in self._pairs}

    def seats(self) -> list[SeatRow]:
        """Mean round score by seat and by distance from the dealer, with intervals over deal sets."""
        out = []
        for position in SEAT_POSITIONS:
            sums = self._seats.get(position) or ClusteredMean()
            out.append(SeatRow(position, round(sums.weight), sums.interval()))
        return out


def _without_games(bot: str, house: bool) -> Standing:
    """The line of a bot that has no complete game (shown when the manifest gives it a status)."""
    nan = math.nan
    return Standing(
        bot, house=house, dup_per_game=nan, mean_round=nan, mean_total=nan, place_points=nan, matchpoint_pct=nan,
        mu=nan, sigma=nan, ordinal=nan, made_pct=nan, abs_error=nan, overtricks=nan, too_high_pct=nan,
        too_low_pct=nan, fallback_pct=nan,
    )


def tally(records: Results, plan: Plan | None = None, on_game: Callable[[GameRecords], object] | None = None,
          once: bool = False, *, ordered: bool = True) -> Tally:
    """A finished :class:`Tally` of ``records`` (rounds in file order, or complete games; ``once``: played under
    ``rotation = "once"``, as a ``plan`` may say); ``ordered``: they hold each bot's games on a deal set in the order
    it played them (the memory test)."""
    result = Tally(plan, on_game, once=once, ordered=ordered)
    for item in records:
        if isinstance(item, GameRecords):
            result.add_game(item)
        else:
            result.add(item)
    result.finish()
    return result


def compare(
    records: Results, a: str, b: str, *, delta0: float | None = None, delta1: float | None = None,
    alpha: float = 0.05, beta: float = 0.05, burn_in: int = 30, cap: int | None = None,
    method: Method = DEFAULT_METHOD, order: Sequence[str] | None = None, rotations: int = 4, once: bool = False,
) -> Comparison:
    """A against B: mean difference per game with its interval, LOS, Elo, and the SPRT (when
    ``delta1`` is given; deltas in tenths per game).

    The SPRT reads every block where A and B met, in schedule order; given ``order`` (the block ids
    in plan order) and ``rotations`` (games per block), it reads them as a run does: the complete
    blocks of the plan, up to the first that is not complete (:class:`BlockDifferences`). ``once``: the records were
    played under ``rotation = "once"``, where A and B are compared on the same cards, game against game.
    """
    gathered = BlockDifferences(a, b, once)
    folded = tally(records, on_game=gathered.add_game, once=once)
    result = folded.comparison(a, b)
    if delta1 is not None:
        diffs = gathered.in_schedule_order() if order is None else gathered.complete_prefix(order, rotations)
        per_point = tenths_per_point(folded.rules) if folded.rules is not None else 10
        result.sprt = sprt(diffs, delta0 or 0.0, delta1, alpha=alpha, beta=beta, burn_in=burn_in, cap=cap,
                           method=method, per_point=per_point, a=a, b=b)
    return result


def head_to_head(records: Results, bots: Sequence[str]) -> dict[tuple[str, str], Comparison]:
    """Every ordered pair of ``bots`` that met at a table."""
    return tally(records).matrix(bots)
