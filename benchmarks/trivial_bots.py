"""Bots with no thought, for the benchmarks: the first legal call or card, at once.

Two of them in Python, so that what is measured is the transport: one written straight against the protocol's
generated stubs (:func:`raw_bot`), one made with the Python bot kit (:class:`TrivialBot`), which reads every
request into a view first. ``benchmarks/grpc_table.py`` connects them to a bare table and to the arena;
``benchmarks/transports.py`` has the arena launch them in tournaments, as a user's bots are launched:

    python benchmarks/trivial_bots.py protocol ADDRESS      # the token in $CALLBREAK_TOKEN
    python benchmarks/trivial_bots.py kit --arena ADDRESS   # the kit's command line (run())

And two native ones, for what a compiled entry costs: ``benchmarks/native/trivial_bot.cc`` over gRPC and
``benchmarks/native/trivial_stdio.c`` over stdio, built by :func:`native_bots` (or by hand: ``python
benchmarks/trivial_bots.py native`` prints the folder they are built in).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grpc

from arena.botkit import Bot, run
from arena.core.views import View
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc

__all__ = ["TrivialBot", "native_bots", "raw_bot", "trivial_answer"]

ROOT = Path(__file__).resolve().parent.parent
NATIVE = ROOT / "benchmarks" / "native"
NATIVE_BUILD = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "callbreak-arena" / "native-bots"
"""Where :func:`native_bots` builds them: outside the repository, which the benchmarks leave as it is."""
NATIVE_TOOLS = {"cc": "a C compiler", "c++": "a C++ compiler", "protoc": "protoc (Debian: protobuf-compiler)",
                "grpc_cpp_plugin": "grpc_cpp_plugin (Debian: protobuf-compiler-grpc)",
                "pkg-config": "pkg-config"}


class TrivialBot(Bot):
    """The lowest legal call and the first legal card: all transport, no thought."""

    name = "trivial"

    def call(self, view: View) -> int:
        return view.legal_calls[0]

    def play(self, view: View) -> str:
        return str(view.legal.cards()[0])


def trivial_answer(msg: pb.ConnectResponse) -> pb.ConnectRequest | None:
    """The first legal call or card, for a request; ``None`` for anything else."""
    kind = msg.WhichOneof("kind")
    if kind == "play_request":
        request = msg.play_request
        return pb.ConnectRequest(play=pb.PlayAnswer(request_id=request.request_id, card=request.legal_cards[0]))
    if kind == "call_request":
        call = msg.call_request
        return pb.ConnectRequest(call=pb.CallAnswer(request_id=call.request_id, call=call.legal_calls[0]))
    return None


async def raw_bot(address: str, token: str = "x") -> None:
    """A trivial bot written straight against the protocol: the first legal call or card, at once."""
    async with grpc.aio.insecure_channel(address) as channel:
        stream = pb_grpc.ArenaStub(channel).Connect()
        await stream.write(pb.ConnectRequest(hello=pb.Hello(token=token, protocol_version=1)))
        while True:
            msg = await stream.read()
            if msg is grpc.aio.EOF:
                return
            answer = trivial_answer(msg)
            if answer is not None:
                await stream.write(answer)


def native_bots() -> Path:
    """:data:`NATIVE_BUILD`, holding ``trivial_bot`` (gRPC, C++) and ``trivial_stdio`` (stdio, C), built there
    from ``benchmarks/native/`` and the protocol's ``.proto`` unless they are newer than their sources.

    Raises ``RuntimeError`` saying which tool or library is missing."""
    missing = [what for tool, what in NATIVE_TOOLS.items() if shutil.which(tool) is None]
    if not missing and subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"]).returncode != 0:
        missing = ["the gRPC C++ library (Debian: libgrpc++-dev)"]
    if missing:
        raise RuntimeError(f"the native trivial bots need {', '.join(missing)}")
    build = NATIVE_BUILD
    build.mkdir(parents=True, exist_ok=True)
    proto = ROOT / "protocol" / "callbreak.proto"
    steps = {
        build / "trivial_stdio": ([NATIVE / "trivial_stdio.c"],
                                  ["cc", "-O2", "-o", build / "trivial_stdio", NATIVE / "trivial_stdio.c"]),
        build / "callbreak.pb.cc": ([proto], ["protoc", "-I", proto.parent, f"--cpp_out={build}", f"--grpc_out={build}",
                                              f"--plugin=protoc-gen-grpc={shutil.which('grpc_cpp_plugin')}", proto]),
        build / "trivial_bot": ([NATIVE / "trivial_bot.cc", proto], [
            "c++", "-O2", "-std=c++17", "-I", build, "-o", build / "trivial_bot", NATIVE / "trivial_bot.cc",
            build / "callbreak.pb.cc", build / "callbreak.grpc.pb.cc",
            *subprocess.run(["pkg-config", "--cflags", "--libs", "grpc++", "protobuf"], capture_output=True,
                            text=True, check=True).stdout.split()]),
    }
    for target, (sources, command) in steps.items():
        if not target.exists() or any(source.stat().st_mtime > target.stat().st_mtime for source in sources):
            done = subprocess.run([str(part) for part in command], capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"building {target.name} failed:\n{done.stderr}")
    return build


def main(argv: list[str]) -> int:
    if argv[:1] == ["protocol"] and len(argv) == 2:
        asyncio.run(raw_bot(argv[1], os.environ.get("CALLBREAK_TOKEN", "").strip()))
        return 0
    if argv[:1] == ["kit"]:
        return run(TrivialBot, argv[1:])
    if argv == ["native"]:
        try:
            print(native_bots())
        except RuntimeError as error:
            print(error, file=sys.stderr)
            return 2
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
