"""The committed protocol stubs match the .proto, the pinned generator and the pyproject floors."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = ROOT / "protocol"
PROTO = PROTOCOL / "callbreak.proto"
GEN_SCRIPT = ROOT / "scripts" / "gen_protos.py"
GENERATED = ("callbreak_pb2.py", "callbreak_pb2.pyi", "callbreak_pb2_grpc.py")


# --- (a) the committed stubs are exactly what the pinned generator makes -------------------------


@pytest.mark.skipif(
    importlib.util.find_spec("grpc_tools") is None,
    reason="grpcio-tools is not installed (it is a dev dependency); cannot regenerate the stubs",
)
def test_committed_stubs_match_regenerated(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, str(GEN_SCRIPT), "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stderr
    for name in GENERATED:
        fresh = (tmp_path / "protocol" / name).read_bytes()
        committed = (PROTOCOL / name).read_bytes()
        assert fresh == committed, (
            f"protocol/{name} is out of date with protocol/callbreak.proto: "
            "run `python scripts/gen_protos.py` and commit the result"
        )


def test_the_node_sample_carries_the_proto_unchanged() -> None:
    """The Node sample reads the copy beside bot.js (a copied bot sees only its own folder): it is the .proto."""
    copy = ROOT / "sample_bots" / "node" / "callbreak.proto"
    assert copy.read_bytes() == PROTO.read_bytes(), (
        "sample_bots/node/callbreak.proto differs from protocol/callbreak.proto: "
        "run `cp protocol/callbreak.proto sample_bots/node/` and commit the result"
    )


def test_grpc_stub_imports_the_protocol_package() -> None:
    stub = (PROTOCOL / "callbreak_pb2_grpc.py").read_text(encoding="utf-8")
    assert "from protocol import callbreak_pb2 as protocol_dot_callbreak__pb2" in stub


# --- (b) the pyproject floors are the versions the stubs demand ----------------------------------


def generated_grpc_version() -> str:
    """The grpcio version the gRPC stub refuses to run below."""
    text = (PROTOCOL / "callbreak_pb2_grpc.py").read_text(encoding="utf-8")
    match = re.search(r"^GRPC_GENERATED_VERSION = ['\"]([^'\"]+)['\"]", text, re.MULTILINE)
    assert match, "GRPC_GENERATED_VERSION not found in protocol/callbreak_pb2_grpc.py"
    return match.group(1)


def generated_protobuf_version() -> str:
    """The protobuf runtime version the message stub validates at import time."""
    text = (PROTOCOL / "callbreak_pb2.py").read_text(encoding="utf-8")
    match = re.search(
        r"ValidateProtobufRuntimeVersion\(\s*_runtime_version\.Domain\.PUBLIC,"
        r"\s*(\d+),\s*(\d+),\s*(\d+),\s*['\"]([^'\"]*)['\"]",
        text,
    )
    assert match, "ValidateProtobufRuntimeVersion(...) not found in protocol/callbreak_pb2.py"
    major, minor, patch, suffix = match.groups()
    return f"{major}.{minor}.{patch}{suffix}"


def normalise(name: str) -> str:
    """PEP 503 name normalisation: case and runs of -_. do not matter."""
    return re.sub(r"[-_.]+", "-", name).lower()


def dependency_floors(dependencies: list[str]) -> dict[str, list[str]]:
    """Map each normalised project name to the versions in its `>=` specifiers."""
    floors: dict[str, list[str]] = {}
    for requirement in dependencies:
        head = requirement.split(";", 1)[0]  # drop any environment marker
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)", head)
        assert match, f"cannot parse dependency {requirement!r}"
        name, specifiers = match.groups()
        versions = re.findall(r">=\s*([^\s,]+)", specifiers)
        floors.setdefault(normalise(name), []).extend(versions)
    return floors


def test_dependency_floor_parser() -> None:
    floors = dependency_floors(
        [
            "grpcio>=1.85.1",
            "Protobuf >= 7.35.1, <8",
            "grpcio_tools[x]>=1.2; python_version>'3'",
            "tabulate",
        ]
    )
    assert floors == {
        "grpcio": ["1.85.1"],
        "protobuf": ["7.35.1"],
        "grpcio-tools": ["1.2"],
        "tabulate": [],
    }


def test_pyproject_floors_match_the_stubs() -> None:
    pyproject = ROOT / "pyproject.toml"
    assert pyproject.is_file(), "pyproject.toml is missing at the repository root"
    with pyproject.open("rb") as handle:
        project = tomllib.load(handle).get("project", {})
    floors = dependency_floors(project.get("dependencies", []))
    expected = {"grpcio": generated_grpc_version(), "protobuf": generated_protobuf_version()}
    for name, version in expected.items():
        assert floors.get(name) == [version], (
            f"[project].dependencies must contain {name}>={version} (the version the committed "
            f"stubs require); found {name} floors {floors.get(name)}"
        )


# --- (c) the generated messages work ------------------------------------------------------------


def test_play_request_round_trips() -> None:
    from protocol import callbreak_pb2 as pb

    rules = pb.Rules(
        profile="nepali",
        min_call=1,
        max_call=13,
        must_beat=True,
        must_trump=True,
        lower_trump=pb.LOWER_TRUMP_ANY,
        scoring=pb.SCORING_STANDARD,
        penalty=pb.PENALTY_WHOLE,
        overtrick_tenths=1,
        rounds=5,
        trump_mode=pb.TRUMP_MODE_FIXED,
        trump_suit=pb.SUIT_SPADES,
    )
    view = pb.SeatView(
        game_id="g12",
        game_number=12,
        round_number=2,
        rounds_in_game=5,
        seat=2,
        dealer=1,
        trump=pb.SUIT_SPADES,
        hand=["AS", "TH", "2C"],
        calls=[
            pb.Call(seat=2, value=4),
            pb.Call(seat=3, value=3),
            pb.Call(seat=0, value=2),
            pb.Call(seat=1, value=4),
        ],
        current_trick=pb.Trick(leader=0, cards=["7H", "9H"]),
        finished_tricks=[pb.Trick(leader=2, cards=["KD", "2D", "5D", "AD"], winner=0)],
        tricks_won=[1, 0, 0, 0],
        total_tenths=[41, 30, 20, -40],
        past_rounds=[
            pb.RoundResult(
                round_number=1,
                calls=[4, 3, 2, 4],
                tricks=[5, 3, 2, 3],
                score_tenths=[41, 30, 20, -40],
            )
        ],
        player_names=["alpha", "beta", "gamma", "delta"],
        rules=rules,
        seat_seed=2**64 - 5,
    )
    request = pb.PlayRequest(
        request_id=2**40 + 7,
        table_id="t3",
        seat=2,
        deadline_ms=1000,
        time_bank_ms=0,
        legal_cards=["TH"],
        view=view,
        retry_reason="7H was led and you hold TH, which beats the winning 7H: you must play TH",
    )
    envelope = pb.ConnectResponse(play_request=request)

    parsed = pb.ConnectResponse.FromString(envelope.SerializeToString())

    assert parsed == envelope
    assert parsed.WhichOneof("kind") == "play_request"
    assert parsed.play_request.view.total_tenths[3] == -40
    # Presence of `winner` tells a finished trick from one in progress, even when seat 0 won it.
    assert parsed.play_request.view.finished_tricks[0].HasField("winner")
    assert parsed.play_request.view.finished_tricks[0].winner == 0
    assert not parsed.play_request.view.current_trick.HasField("winner")


# --- (d) the .proto, the document bot authors read first, comments every declaration ------------

DECLARATION = re.compile(
    r"""^(?:
        (?:message|enum|service|oneof)\s+\w+\s*\{     # a block: message, enum, service, oneof
      | rpc\s+\w+\s*\(.*                              # an rpc
      | (?:optional\s+|repeated\s+)?[\w.]+\s+\w+\s*=\s*\d+\s*;   # a field
      | [A-Z][A-Z0-9_]*\s*=\s*-?\d+\s*;               # an enum value
    )""",
    re.VERBOSE,
)
NOT_A_DECLARATION = re.compile(
    r'^(?:\}|syntax\s*=\s*"proto3"\s*;|package\s+[\w.]+\s*;|option\s+\w+\s*=.*;)'
)


def uncommented_declarations(text: str) -> tuple[int, list[str]]:
    """Return how many declarations the text has and which of them lack a comment."""
    count = 0
    missing: list[str] = []
    previous = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        code, _, trailing = line.partition("//")
        code = code.strip()
        if code and DECLARATION.match(code):
            count += 1
            if not (trailing.strip() or (previous.startswith("//") and previous[2:].strip())):
                missing.append(f"line {number}: {line}")
        elif code:
            # Anything else must be known boilerplate, so that no declaration escapes the check.
            assert NOT_A_DECLARATION.match(code), (
                f"line {number} not understood by this test: {line}"
            )
        previous = line
    return count, missing


def test_comment_checker_catches_a_bare_field() -> None:
    text = "// A thing.\nmessage Thing {\n  // Good.\n  uint32 good = 1;\n\n  uint32 bare = 2;\n}\n"
    assert uncommented_declarations(text) == (3, ["line 6: uint32 bare = 2;"])


def test_every_declaration_in_the_proto_has_a_comment() -> None:
    count, missing = uncommented_declarations(PROTO.read_text(encoding="utf-8"))
    assert count > 100, f"only {count} declarations found: the parser is missing some"
    assert not missing, "declarations without a comment:\n" + "\n".join(missing)
