"""Bots built on the bot kit for its tests: ``python tests/helpers/kit_bots.py CLASS --arena ADDRESS ...``
(with the project on ``PYTHONPATH``).

Each prints one JSON line on stdout per decision or event it handles (flushed at once, so a test
can read it while the bot runs), with the serial number of the instance that handled it (instances
are numbered from 1 in the order they are made) and the name of the thread it ran on.

- ``Sleepy``: calls the lowest legal call and plays the first legal card; a request at table
  ``slow`` first sleeps ``delay`` seconds (default 1.5).
- ``Recorder``: counts the decisions and events each instance sees and calls
  ``legal_calls[count - 1]``: a shared instance would call higher. It overrides ``on_event``, so
  the kit asks the arena for events.
- ``Crashy``: raises at table ``bad``, answers elsewhere.
- ``Picky``: rejects any ``--option`` (its constructor takes none).
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from typing import Any

from arena.botkit import Bot, run
from arena.core.views import View
from protocol import callbreak_pb2 as pb

_serials = itertools.count(1)
_stdout = threading.Lock()


def say(**fields: Any) -> None:
    """One JSON line on stdout, whole even when several threads print at once."""
    with _stdout:
        print(json.dumps(fields, sort_keys=True), flush=True)


class Sleepy(Bot):
    """Sleeps at table ``slow``, answers at once elsewhere."""

    name = "sleepy"
    version = "7"

    def __init__(self, seed: int = 0, delay: float = 1.5) -> None:
        self.serial = next(_serials)
        self.delay = delay

    def call(self, view: View) -> int:
        self._decide(view)
        return view.legal_calls[0]

    def play(self, view: View) -> str:
        self._decide(view)
        return str(view.legal.cards()[0])

    def _decide(self, view: View) -> None:
        table = getattr(view, "table_id", "")
        say(decide=table, game=getattr(view, "game_id", ""), instance=self.serial,
            thread=threading.current_thread().name)
        if table == "slow":
            time.sleep(self.delay)


class Recorder(Bot):
    """Counts what each instance sees; its call says how many decisions this instance has made."""

    name = "recorder"

    def __init__(self, seed: int = 0) -> None:
        self.serial = next(_serials)
        self.seed = seed
        self.count = 0

    def call(self, view: View) -> int:
        self.count += 1
        say(decide=getattr(view, "table_id", ""), game=getattr(view, "game_id", ""), instance=self.serial,
            count=self.count, seed=self.seed, thread=threading.current_thread().name)
        return view.legal_calls[self.count - 1]

    def on_event(self, event: pb.Event) -> None:
        self.count += 1
        say(event=event.WhichOneof("kind"), game=event.game_id, instance=self.serial, count=self.count,
            thread=threading.current_thread().name)

    def on_notice(self, notice: pb.Notice) -> None:
        say(notice=notice.detail, instance=self.serial, thread=threading.current_thread().name)


class Crashy(Bot):
    """Raises at table ``bad``."""

    name = "crashy"

    def call(self, view: View) -> int:
        if getattr(view, "table_id", "") == "bad":
            raise RuntimeError("crashy crashes at table bad")
        return view.legal_calls[0]

    def play(self, view: View) -> str:
        return str(view.legal.cards()[0])


class Picky(Bot):
    """Takes no options at all."""

    name = "picky"

    def __init__(self) -> None:
        self.serial = next(_serials)

    def call(self, view: View) -> int:
        return view.legal_calls[0]

    def play(self, view: View) -> str:
        return str(view.legal.cards()[0])


if __name__ == "__main__":
    raise SystemExit(run(globals()[sys.argv.pop(1)]))
