"""A kit bot that remembers every deal it sees, as a bot kept from one rotation to the next could, and says
on stderr, at the call of each round, which process it is and whether it has seen the deal before.

It plays as a student's first bot does (the lowest call, the lowest legal card) and only remembers: at its
last card of a round it has watched every seat play twelve or thirteen cards, and it keeps those cards by
seat for as long as its process lives. At a later call, a hand that holds every card some seat was seen to
play is a deal seen before: the bot then knows the other three hands. A line on stderr per round::

    {"pid": 12, "process": "3f2a...", "recognised": true}

``process`` is drawn when the process starts: in the sandbox every bot has a PID namespace of its own, so
two processes may have the same ``pid``. With ``--option log=PATH`` (unsandboxed) each line is also appended
to that file, for a run whose folder is gone when it ends (check-bot's).
"""

import json
import os
import sys
import uuid

from arena.botkit import Bot, run
from arena.core.cards import Card
from arena.core.views import View

PROCESS = uuid.uuid4().hex
SEEN: list[frozenset[str]] = []
"""The cards each seat was seen to play in every round this process has played."""


class Memory(Bot):
    name = "memory"

    def __init__(self, seed: int = 0, log: str = "") -> None:
        self.seed = seed
        self.log = log

    def call(self, view: View) -> int:
        hand = {str(card) for card in view.hand}
        line = json.dumps({"pid": os.getpid(), "process": PROCESS, "recognised": any(cards <= hand for cards in SEEN)})
        print(line, file=sys.stderr, flush=True)
        if self.log:
            with open(self.log, "a", encoding="utf-8") as out:
                out.write(line + "\n")
        return view.legal_calls[0]

    def play(self, view: View) -> Card:
        if len(view.hand) == 1:
            played: dict[int, set[str]] = {seat: set() for seat in range(4)}
            for trick in (*view.tricks, (view.leader, view.trick)):
                leader, cards = trick[0], trick[1]
                for position, card in enumerate(cards):
                    played[(leader + position) % 4].add(str(card))
            played[view.seat] |= {str(card) for card in view.hand}
            SEEN.extend(frozenset(cards) for cards in played.values())
        return min(view.legal, key=lambda card: card.rank)


if __name__ == "__main__":
    raise SystemExit(run(Memory))
