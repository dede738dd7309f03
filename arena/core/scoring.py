"""Round scores in integer tenths of a point, and their display per profile.

Floats never hold a score. Standard and pagat scores are points kept in tenths (4.1 points is
41); the DY scheme counts its own points, which are already whole numbers (a call of 3 made
with 5 tricks is 32 points), so there the tenths value *is* the displayed number.
"""

from __future__ import annotations

from arena.core.rules import Penalty, Rules, Scoring

__all__ = ["format_score", "round_score", "score_table", "tenths_per_point"]


def round_score(rules: Rules, call: int, tricks: int) -> int:
    """The round score, in tenths, of a seat that called ``call`` and took ``tricks``."""
    if rules.scoring is Scoring.STANDARD:
        if tricks >= call:
            return 10 * call + (tricks - call) * rules.overtrick
        if rules.penalty is Penalty.SHORTFALL:
            return -10 * (call - tricks)
        return -10 * call
    if rules.scoring is Scoring.PAGAT:
        # The call succeeds with exactly the call or one trick more.
        if call <= tricks <= call + 1:
            return 10 * rules.pagat_bonus if call >= 8 else 10 * call
        return -10 * call
    # DY: exact scores 10 per called trick, overtricks add 1 each until double the call, which fails.
    if tricks == call:
        return 10 * call
    if call < tricks < 2 * call:
        return 10 * call + (tricks - call)
    return -10 * call


_TABLES: dict[int, tuple[Rules, tuple[tuple[int, ...], ...]]] = {}


def score_table(rules: Rules) -> tuple[tuple[int, ...], ...]:
    """Every :func:`round_score` of ``rules``: ``table[call][tricks]`` for calls and tricks 0-13.

    Made once per rules object (every round of a run shares a handful) and looked up by identity:
    hashing the rules would cost more than scoring the round.
    """
    entry = _TABLES.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_TABLES) >= 64:  # rules made one by one (tests, tools): keep the memo small
            _TABLES.clear()
        entry = _TABLES[id(rules)] = (
            rules, tuple(tuple(round_score(rules, call, tricks) for tricks in range(14)) for call in range(14))
        )
    return entry[1]


def tenths_per_point(rules: Rules) -> int:
    """How many score units make one displayed point: 10 (tenths), or 1 for DY points."""
    return 1 if rules.scoring is Scoring.DY else 10


def format_score(rules: Rules, tenths: int) -> str:
    """The score as people read it: ``4.1``, ``-4``, ``3`` (points), or ``32`` (DY points)."""
    if rules.scoring is Scoring.DY:
        return str(tenths)
    sign = "-" if tenths < 0 else ""
    whole, tenth = divmod(abs(tenths), 10)
    return f"{sign}{whole}.{tenth}" if tenth else f"{sign}{whole}"
