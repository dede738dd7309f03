"""Generate the committed Python stubs for protocol/callbreak.proto with the pinned grpcio-tools.

This script is the only way the stubs are produced. It runs, from the repository root,

    python -m grpc_tools.protoc -I . --python_out=OUT --pyi_out=OUT --grpc_python_out=OUT \
        protocol/callbreak.proto

so that the files land in OUT/protocol/ (OUT defaults to the repository root) and the gRPC stub
imports ``from protocol import callbreak_pb2``. The include root is chosen so that this import is
the real package path: no post-processing of the generated code.

The grpcio-tools version is pinned because it decides the generated code, byte for byte, and the
minimum ``grpcio`` and ``protobuf`` versions that code accepts at import time (the floors in
pyproject.toml). tests/test_protocol_sync.py regenerates into a temporary folder and compares bytes.

Usage:
    python scripts/gen_protos.py            # regenerate protocol/callbreak_pb2*.py* in place
    python scripts/gen_protos.py --out DIR  # write DIR/protocol/callbreak_pb2*.py* instead
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib import metadata
from pathlib import Path

GRPCIO_TOOLS_VERSION = "1.85.1"
"""The grpcio-tools version the committed stubs come from; changing it moves the floors."""

REPO_ROOT = Path(__file__).resolve().parent.parent
PROTO = Path("protocol") / "callbreak.proto"
GENERATED = ("callbreak_pb2.py", "callbreak_pb2.pyi", "callbreak_pb2_grpc.py")
"""The files written into OUT/protocol/, all committed."""

EXPECTED_GRPC_IMPORT = "from protocol import callbreak_pb2 as protocol_dot_callbreak__pb2"


def installed_tools_version() -> str | None:
    """Return the installed grpcio-tools version, or None when it is not installed."""
    try:
        return metadata.version("grpcio-tools")
    except metadata.PackageNotFoundError:
        return None


def generate(out: Path) -> list[Path]:
    """Run protoc on the proto into ``out``; return the generated files; raise on failure."""
    out = out.resolve()
    (out / "protocol").mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        "-I",
        ".",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        PROTO.as_posix(),
    ]
    # cwd is the repository root so that "-I ." makes the stub import "protocol.callbreak_pb2".
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"protoc failed ({completed.returncode}):\n{completed.stderr}")
    files = [out / "protocol" / name for name in GENERATED]
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        raise RuntimeError(f"protoc did not write: {', '.join(missing)}")
    grpc_stub = (out / "protocol" / "callbreak_pb2_grpc.py").read_text(encoding="utf-8")
    if EXPECTED_GRPC_IMPORT not in grpc_stub:
        raise RuntimeError(
            f"callbreak_pb2_grpc.py lacks the expected import {EXPECTED_GRPC_IMPORT!r}"
        )
    return files


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, check the grpcio-tools pin and generate; return the exit status."""
    parser = argparse.ArgumentParser(
        description=(
            "Generate protocol/callbreak_pb2.py, callbreak_pb2.pyi and callbreak_pb2_grpc.py from "
            f"protocol/callbreak.proto with grpcio-tools=={GRPCIO_TOOLS_VERSION}."
        )
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO_ROOT,
        metavar="DIR",
        help="output root; files are written to DIR/protocol/ (default: the repository root)",
    )
    args = parser.parse_args(argv)

    version = installed_tools_version()
    if version != GRPCIO_TOOLS_VERSION:
        found = "not installed" if version is None else f"{version} is installed"
        print(
            f"gen_protos: grpcio-tools=={GRPCIO_TOOLS_VERSION} is required, but {found}.\n"
            f"Install it: {sys.executable} -m pip install grpcio-tools=={GRPCIO_TOOLS_VERSION}\n"
            "(To move to another version, change GRPCIO_TOOLS_VERSION here, regenerate, and "
            "raise the grpcio and protobuf floors in pyproject.toml to match the new stubs.)",
            file=sys.stderr,
        )
        return 2

    try:
        files = generate(args.out)
    except RuntimeError as error:
        print(f"gen_protos: {error}", file=sys.stderr)
        return 1
    for path in files:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
