"""A ladder made for a test: its folder, its settings edited, entrants added, and its service run until a
condition holds."""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.core.cards import Card
from arena.core.views import View
from arena.ladder.control import Ladder
from arena.ladder.db import Block, BlockState
from arena.ladder.founding import found_ladder
from arena.ladder.service import LadderService
from arena.web.ladder import LadderSite, SiteLimits
from sample_bots.random_bot import RandomBot
from tests.helpers.runs import ROOT

SANDBOX = "bwrap" if shutil.which("bwrap") else "off"
"""The sandbox the tests' ladders ask for: the real one where it is installed."""

GOOD_BOT = '''\
"""The lowest legal card, the lowest call: a student's first bot."""
from arena.botkit import Bot, run


class Lowest(Bot):
    name = "lowest"

    def call(self, view):
        return view.legal_calls[0]

    def play(self, view):
        return min(view.legal, key=lambda card: card.rank)


if __name__ == "__main__":
    raise SystemExit(run(Lowest))
'''
"""A kit bot that passes its check."""

BROKEN_BOT = '''\
"""Plays the first card of its hand, legal or not, and says so on stderr."""
import sys

from arena.botkit import Bot, run


class First(Bot):
    name = "first"

    def call(self, view):
        return view.legal_calls[0]

    def play(self, view):
        print("playing my first card, whatever the suit", file=sys.stderr, flush=True)
        return sorted(view.hand)[0]


if __name__ == "__main__":
    raise SystemExit(run(First))
'''
"""A kit bot that fails its check: it plays cards the rules refuse."""


def make_ladder(folder: Path, **changes: str) -> Ladder:
    """A new ladder in ``folder``, its ``ladder.toml`` lines ``key = default`` replaced by ``changes``
    (``{"tables": "1"}``), the sandbox as :data:`SANDBOX`."""
    found_ladder(folder)
    path = folder / "ladder.toml"
    text = path.read_text(encoding="utf-8").replace('mode = "bwrap"', f'mode = "{SANDBOX}"')
    lines = []
    for line in text.splitlines():
        key = line.split("=")[0].strip()
        if key in changes and "=" in line:
            line = f"{key} = {changes.pop(key)}"
        lines.append(line)
    assert not changes, f"ladder.toml has no keys {sorted(changes)}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Ladder.open(folder)


def copy_with_first_rated_block(played: Path, into: Path) -> tuple[Ladder, Block]:
    """A copy of the ladder in ``played``, opened from ``into``, and its first rated block: a ladder to plant a
    disagreement in."""
    shutil.copytree(played, into)
    ladder = Ladder.open(into)
    with ladder.session() as session:
        block = session.scalars(select(Block).where(Block.rated).order_by(Block.id)).first()
        assert block is not None
    return ladder, block


def done_blocks(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Block).where(Block.state == BlockState.DONE)) or 0


def serve_until(ladder: Ladder, condition: Callable[[Session], bool], timeout: float = 60.0,
                between: Callable[[Ladder], None] = lambda ladder: None,
                service: LadderService | None = None) -> LadderService:
    """Runs the ladder's service (a new one unless ``service`` is given) until ``condition`` holds of the
    database (checked twice a second; ``between`` is called at each look), then stops it; fails past ``timeout``
    seconds."""
    service = service or LadderService(ladder)

    async def play() -> None:
        stop = asyncio.Event()
        task = asyncio.ensure_future(service.run(stop))
        began = time.monotonic()
        try:
            while True:
                await asyncio.sleep(0.5)
                if task.done():
                    task.result()
                    raise AssertionError("the service stopped by itself")
                between(ladder)
                with ladder.session() as session:
                    if condition(session):
                        return
                if time.monotonic() - began > timeout:
                    raise AssertionError(f"the condition did not hold within {timeout} s")
        finally:
            stop.set()
            await task

    asyncio.run(play())
    return service


@contextlib.contextmanager
def serving(ladder: Ladder, limits: SiteLimits | None = None, *, tls: tuple[Path, Path] | None = None,
            proxy: str = "") -> Iterator[str]:
    """The site on port 0, served on an event loop of a thread of the test's (the loop a ladder's program runs)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    site = LadderSite(ladder, limits or SiteLimits())
    try:
        address = asyncio.run_coroutine_threadsafe(site.start("127.0.0.1", 0, tls=tls, proxy=proxy),
                                                   loop).result(10)
        yield f"{'https' if tls else 'http'}://{address}"
    finally:
        asyncio.run_coroutine_threadsafe(site.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


class Crasher(RandomBot):
    """The random bot that raises at its fifth card of every game: its games are played by the fallback."""

    fast_call = None  # type: ignore[assignment]
    fast_card = None  # type: ignore[assignment]

    def play(self, view: View) -> Card:
        if len(view.hand) == 9:
            raise RuntimeError("my search ran out of memory")
        return super().play(view)


class Served:
    """``ladder serve DIR --port 0`` as a process of its own; its site and remote addresses."""

    def __init__(self, folder: Path) -> None:
        self.log = open(folder / "serve.log", "ab")  # noqa: SIM115 - closed when the process ends
        self.process = subprocess.Popen(
            [sys.executable, "-m", "arena", "ladder", "serve", str(folder), "--port", "0"], cwd=ROOT,
            stdout=subprocess.PIPE, stderr=self.log, text=True, start_new_session=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        found = re.search(r"site at (http://\S+)/, remote bots connect to (\S+)", line)
        assert found, f"ladder serve said {line!r}; its log: {(folder / 'serve.log').read_text()}"
        self.url, self.remote = found.group(1), found.group(2)

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: nothing of the ladder's own runs after it
        self.process.wait(30)
        self._close()

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(60)
        self._close()
        return status

    def _close(self) -> None:
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.log.close()
