"""Remote entrants that do not stay, as a ladder's hostile entrant writes them: real processes that connect to the
ladder's gRPC port with their entrant's token (``CALLBREAK_TOKEN``) and then leave, come late or answer nothing.

``python -m tests.helpers.remote_bots --arena HOST:PORT`` runs the bot kit with :class:`Leaver` (the random bot),
whose behaviour the environment says:

- ``CALLBREAK_LEAVE=after:N``: the process ends when game N+1 asks it its first call, without answering: it
  played N games and left (a block plays its games one at a time, in an order drawn from its seed: game N is the
  N-th game it is asked to play);
- ``CALLBREAK_LEAVE=during:N``: the process ends when game N asks it its call of round 2, without answering;
- ``CALLBREAK_GATE=PATH``: it connects only once the file ``PATH`` exists (a bot that comes late);
- ``CALLBREAK_MUTE=1``: no kit at all: a client that says hello and answers nothing, reconnecting while it is
  asked nothing (the ladder's waiting room sends it on), and ending once a stream on which it was asked to play
  has ended (the arena drops a stream that leaves its requests unanswered).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc

from arena.botkit import run
from arena.core.views import View
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc
from sample_bots.random_bot import RandomBot

ASKED: list[str] = []
"""The ids of the games this process was asked to play, in the order asked (the kit makes a bot for each game)."""


class Leaver(RandomBot):
    """The random bot, which leaves as ``CALLBREAK_LEAVE`` says."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        how, _, game = os.environ.get("CALLBREAK_LEAVE", "").partition(":")
        self.how, self.game = how, int(game or 0)

    def call(self, view: View) -> int:
        game_id = str(getattr(view, "game_id", ""))
        if game_id not in ASKED:
            ASKED.append(game_id)
        number = len(ASKED)  # the block game this request belongs to, numbered as played
        leaves = (self.how == "after" and number == self.game + 1 and view.round_number == 1) or (
            self.how == "during" and number == self.game and view.round_number == 2)
        if leaves:
            os._exit(0)
        return super().call(view)


def _requests(token: str, done: threading.Event) -> Iterator[pb.ConnectRequest]:
    """A stream of one hello, held open until ``done``."""
    yield pb.ConnectRequest(hello=pb.Hello(token=token, protocol_version=1))
    done.wait()


def mute(address: str, token: str) -> None:
    """Says hello and answers nothing (see the module's docstring)."""
    while True:
        asked = False
        channel = grpc.insecure_channel(address)
        done = threading.Event()
        try:
            for message in pb_grpc.ArenaStub(channel).Connect(_requests(token, done)):
                asked = asked or message.WhichOneof("kind") in ("call_request", "play_request")
        except grpc.RpcError:
            pass
        finally:
            done.set()
            channel.close()
        if asked:
            return
        time.sleep(0.2)


def main() -> int:
    gate = os.environ.get("CALLBREAK_GATE")
    while gate and not Path(gate).exists():
        time.sleep(0.02)
    if os.environ.get("CALLBREAK_MUTE") == "1":
        mute(sys.argv[sys.argv.index("--arena") + 1], os.environ["CALLBREAK_TOKEN"])
        return 0
    return run(Leaver)


if __name__ == "__main__":
    raise SystemExit(main())
