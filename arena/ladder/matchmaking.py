"""Who plays whom on a ladder: the rule that picks each block's four versions from the field.

The rule, in order (``docs/ladder.md`` says it in words):

1. The field is every active version not at a table now; of the remote ones, the one whose last block is the
   oldest, while no block with a remote version is in play and unless it is set aside for missing blocks (the
   service makes the field). A block needs four versions of four different entrants; with fewer, nothing is
   played.
2. The *anchor* is the version that needs a block most: a new version still in placement (fewer than
   ``placement_blocks`` blocks), the one with fewest blocks first; otherwise the version whose last block is
   the oldest (every active version keeps playing), then fewest blocks, then the oldest version.
3. A placement block draws the anchor's three opponents at random from the whole field, so a new version
   meets strong and weak alike. A rated block draws them from the anchor's *window*: the versions whose
   rating is within ``spread`` combined sigmas of the anchor's, and never fewer than the five closest (so
   there is always some spread).
4. The same four do not meet again within ``no_rematch_blocks`` blocks of the anchor, if another draw
   avoids it (20 draws are tried).
5. The seat order of the first rotation is drawn too; the rotations seat each version in every seat.

Every draw comes from a random generator the caller seeds, so a ladder replays its choices.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Collection, Sequence

from arena.ladder.db import BlockKind
from arena.ladder.settings import Matchmaking

__all__ = ["DRAWS", "WINDOW_AT_LEAST", "Candidate", "Proposal", "choose", "fill"]

DRAWS = 20
"""Draws tried to avoid a recent rematch before one is accepted."""
WINDOW_AT_LEAST = 5
"""The fewest versions in a rated block's window, however close the ratings."""


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A version of the field, as the rule sees it."""

    id: int
    entrant: int
    mu: float
    sigma: float
    blocks: int
    """Blocks it played (rated or placement)."""
    last: int = 0
    """The number of its last block (0: none)."""


@dataclasses.dataclass(frozen=True)
class Proposal:
    """A block to play: the versions by seat of the first rotation, and why."""

    seats: tuple[int, int, int, int]
    kind: BlockKind


def _distance(a: Candidate, b: Candidate) -> float:
    return abs(a.mu - b.mu) / math.sqrt(a.sigma ** 2 + b.sigma ** 2)


def _one_per_entrant(field: Sequence[Candidate], anchor: Candidate) -> list[Candidate]:
    """The field without the anchor, one version per entrant (the closest in rating), none of the anchor's."""
    best: dict[int, Candidate] = {}
    for candidate in field:
        if candidate.entrant == anchor.entrant:
            continue
        kept = best.get(candidate.entrant)
        if kept is None or _distance(candidate, anchor) < _distance(kept, anchor):
            best[candidate.entrant] = candidate
    return sorted(best.values(), key=lambda c: c.id)


def choose(field: Sequence[Candidate], recent: Callable[[int], Collection[frozenset[int]]], settings: Matchmaking,
           rng: random.Random) -> Proposal | None:
    """The next block of the field, or ``None`` when four entrants' versions are not free; ``recent(anchor)``
    gives the groups of four that met in the anchor's last ``no_rematch_blocks`` blocks."""
    if len({c.entrant for c in field}) < 4:
        return None
    placing = [c for c in field if c.blocks < settings.placement_blocks]
    if placing:
        anchor = min(placing, key=lambda c: (c.blocks, c.id))
        kind = BlockKind.PLACEMENT
    else:
        anchor = min(field, key=lambda c: (c.last, c.blocks, c.id))
        kind = BlockKind.RATED
    others = _one_per_entrant(field, anchor)
    if kind == BlockKind.RATED:
        by_distance = sorted(others, key=lambda c: (_distance(c, anchor), c.id))
        within = [c for c in by_distance if _distance(c, anchor) <= settings.spread]
        others = by_distance[:max(len(within), WINDOW_AT_LEAST)]
    return fill(anchor.id, [c.id for c in others], kind, recent(anchor.id), rng)


def fill(anchor: int, pool: Sequence[int], kind: BlockKind, recent: Collection[frozenset[int]],
         rng: random.Random, seated: Sequence[int] = ()) -> Proposal | None:
    """A block of ``anchor``, the versions ``seated`` with it, and as many of ``pool`` drawn at random as make
    four, avoiding the groups in ``recent`` if a draw can; seats in a random order."""
    need = 4 - 1 - len(seated)
    pool = [v for v in pool if v != anchor and v not in seated]
    if len(pool) < need:
        return None
    group: list[int] = []
    for _ in range(DRAWS):
        group = [anchor, *seated, *rng.sample(pool, need)]
        if frozenset(group) not in recent:
            break
    rng.shuffle(group)
    return Proposal((group[0], group[1], group[2], group[3]), kind)
