"""TLS: the arena with a certificate from a test CA; a bot that trusts the CA plays, a plaintext one cannot."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
import trustme

from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.players.table import GameRecord
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc
from tests.conftest import Bots, arena, check_record, run, token

NAMES = ["tls0", "tls1", "tls2", "tls3"]


@pytest.fixture
def pki(tmp_path: Path) -> dict[str, Path]:
    """A CA and a server certificate for 127.0.0.1 and localhost, as PEM files."""
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    paths = {"ca": tmp_path / "ca.pem", "cert": tmp_path / "server.pem", "key": tmp_path / "server.key"}
    ca.cert_pem.write_to_path(str(paths["ca"]))
    paths["cert"].write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
    cert.private_key_pem.write_to_path(str(paths["key"]))
    return paths


def test_bots_that_trust_the_ca_play_a_game_over_tls(bots: Bots, pki: dict[str, Path]) -> None:
    async def scenario() -> GameRecord:
        async with arena(NAMES, tls_cert=pki["cert"], tls_key=pki["key"]) as (server, port):
            for seed, name in enumerate(NAMES):
                bots.random(port, name, "--tls-ca", str(pki["ca"]), seed=seed)
            return await server.play(NAMES, seeded_deals(1, 1), timeout=20)

    record = run(scenario())
    assert record.faults == []
    check_record(record, Rules.profile())
    for proc in bots.processes:
        assert proc.wait(10) == 0, proc.stderr()


def test_a_plaintext_bot_cannot_connect_to_a_tls_arena(bots: Bots, pki: dict[str, Path]) -> None:
    async def scenario() -> int:
        async with arena(NAMES, tls_cert=pki["cert"], tls_key=pki["key"]) as (server, port):
            plain = bots.random(port, "tls0", "--once")
            with pytest.raises(TimeoutError):
                await server.play(NAMES, seeded_deals(1, 1), timeout=1.0)
            assert server.lobby.live("tls0") == []
            return await plain.wait_async(10)

    assert run(scenario()) == 2  # a configuration error: retrying cannot mend it
    assert "speaks TLS: run the bot with --tls-ca FILE" in bots.processes[0].stderr()


def test_a_tls_client_that_does_not_trust_the_ca_is_turned_away(pki: dict[str, Path]) -> None:
    other_ca = trustme.CA()

    async def scenario() -> grpc.StatusCode:
        async with arena(NAMES, tls_cert=pki["cert"], tls_key=pki["key"]) as (_, port):
            credentials = grpc.ssl_channel_credentials(root_certificates=other_ca.cert_pem.bytes())
            async with grpc.aio.secure_channel(f"127.0.0.1:{port}", credentials) as channel:
                stream = pb_grpc.ArenaStub(channel).Connect(timeout=5)
                try:
                    await stream.write(pb.ConnectRequest(hello=pb.Hello(token=token("tls0"), protocol_version=1)))
                    await stream.read()
                except grpc.aio.AioRpcError as err:
                    return err.code()
                return await stream.code()

    assert run(scenario()) == grpc.StatusCode.UNAVAILABLE
