"""TLS: the arena with a certificate from a test CA; a bot that trusts the CA plays, a plaintext one cannot;
under mutual TLS only bots with a certificate the client CA signed get in. Certificates are made in the test."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
import trustme

from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.event.run.tournament import Tournament
from arena.event.setup.config import load_config
from arena.records.format import GameRecord
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc
from tests.conftest import Bots, arena, check_record, run, token
from tests.helpers.runs import UNSANDBOXED, tournament_text, write
from tests.helpers.seating import seat_and_play

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



async def hello_status(port: int, credentials: grpc.ChannelCredentials) -> grpc.StatusCode:
    """The status a raw client gets for a Hello over a TLS channel made with ``credentials``."""
    async with grpc.aio.secure_channel(f"127.0.0.1:{port}", credentials) as channel:
        stream = pb_grpc.ArenaStub(channel).Connect(timeout=5)
        try:
            await stream.write(pb.ConnectRequest(hello=pb.Hello(token=token("tls0"), protocol_version=1)))
            await stream.read()
        except grpc.aio.AioRpcError as err:
            return err.code()
        return await stream.code()

def test_bots_that_trust_the_ca_play_a_game_over_tls(bots: Bots, pki: dict[str, Path]) -> None:
    async def scenario() -> GameRecord:
        async with arena(NAMES, tls_cert=pki["cert"], tls_key=pki["key"]) as (server, port):
            for seed, name in enumerate(NAMES):
                bots.random(port, name, "--tls-ca", str(pki["ca"]), seed=seed)
            return await seat_and_play(server, NAMES, seeded_deals(1, 1), timeout=20)

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
                await seat_and_play(server, NAMES, seeded_deals(1, 1), timeout=1.0)
            assert server.lobby.live("tls0") == []
            return await plain.wait_async(10)

    assert run(scenario()) == 2  # a configuration error: retrying cannot mend it
    assert "speaks TLS: run the bot with --tls-ca FILE" in bots.processes[0].stderr()


def test_a_tls_client_that_does_not_trust_the_ca_is_turned_away(pki: dict[str, Path]) -> None:
    other_ca = trustme.CA()

    async def scenario() -> grpc.StatusCode:
        async with arena(NAMES, tls_cert=pki["cert"], tls_key=pki["key"]) as (_, port):
            credentials = grpc.ssl_channel_credentials(root_certificates=other_ca.cert_pem.bytes())
            return await hello_status(port, credentials)

    assert run(scenario()) == grpc.StatusCode.UNAVAILABLE


# --- mutual TLS: bots show a certificate the organiser's client CA signed ------------------------------


@pytest.fixture
def clients(tmp_path: Path) -> dict[str, Path]:
    """A CA for bots' client certificates, a certificate it signed, and one another CA signed."""
    ca = trustme.CA()
    paths = {"ca": tmp_path / "clients-ca.pem"}
    ca.cert_pem.write_to_path(str(paths["ca"]))
    for name, issuer in (("bot", ca), ("rogue", trustme.CA())):
        issued = issuer.issue_cert(f"{name}.bots.example")
        paths[name] = tmp_path / f"{name}.pem"
        paths[f"{name}-key"] = tmp_path / f"{name}.key"
        paths[name].write_bytes(b"".join(blob.bytes() for blob in issued.cert_chain_pems))
        issued.private_key_pem.write_to_path(str(paths[f"{name}-key"]))
    return paths


def mutual(pki: dict[str, Path], clients: dict[str, Path]) -> dict[str, Path]:
    return {"tls_cert": pki["cert"], "tls_key": pki["key"], "tls_client_ca": clients["ca"]}


def test_bots_with_a_client_certificate_play_over_mutual_tls(
    bots: Bots, pki: dict[str, Path], clients: dict[str, Path],
) -> None:
    async def scenario() -> GameRecord:
        async with arena(NAMES, **mutual(pki, clients)) as (server, port):
            for seed, name in enumerate(NAMES):
                bots.random(port, name, "--tls-ca", str(pki["ca"]), "--tls-cert", str(clients["bot"]),
                            "--tls-key", str(clients["bot-key"]), seed=seed)
            return await seat_and_play(server, NAMES, seeded_deals(1, 1), timeout=20)

    record = run(scenario())
    assert record.faults == []
    for proc in bots.processes:
        assert proc.wait(10) == 0, proc.stderr()


@pytest.mark.parametrize(("certificate", "line"), [
    pytest.param(None, "asks for a client certificate (mutual TLS): run the bot with --tls-cert FILE --tls-key FILE "
                       "(the certificate and key from the organiser)", id="none"),
    pytest.param("rogue", "did not accept the client certificate {cert}: it is not signed by the CA the arena "
                          "trusts; ask the organiser for the right certificate", id="another-ca"),
])
def test_mutual_tls_turns_away_a_bot_without_a_certificate_its_ca_signed(
    bots: Bots, pki: dict[str, Path], clients: dict[str, Path], certificate: str | None, line: str,
) -> None:
    extra = [] if certificate is None else ["--tls-cert", str(clients[certificate]),
                                            "--tls-key", str(clients[f"{certificate}-key"])]

    async def scenario() -> tuple[int, grpc.StatusCode, int]:
        async with arena(NAMES, **mutual(pki, clients)) as (server, port):
            kit = bots.random(port, "tls0", "--tls-ca", str(pki["ca"]), *extra)
            status = await kit.wait_async(15)
            assert server.lobby.live("tls0") == []
            # A client of any language fails the same way: the handshake is refused before any Hello.
            credentials = grpc.ssl_channel_credentials(root_certificates=pki["ca"].read_bytes())
            return status, await hello_status(port, credentials), port

    status, code, port = run(scenario())
    assert status == 2  # a configuration error: retrying cannot mend it
    assert code is grpc.StatusCode.UNAVAILABLE
    expected = line.format(cert=clients[certificate]) if certificate else line
    assert bots.processes[0].stderr().splitlines() == [f"[random] the arena at 127.0.0.1:{port} {expected}"]


def test_a_tournament_with_mutual_tls_launches_bots_that_show_their_certificates(
    tmp_path: Path, pki: dict[str, Path], clients: dict[str, Path],
) -> None:
    tls = (f"--tls-ca {pki['ca']} --tls-cert {clients['bot']} --tls-key {clients['bot-key']}")
    command = f"{{python}} -m sample_bots.random_bot --arena {{address}} --seed {{seed}} {tls}"
    text = tournament_text(NAMES, kind="command", spec=command, deal_sets=1, extra=UNSANDBOXED + (
        f'[server]\ntls_cert = "{pki["cert"]}"\ntls_key = "{pki["key"]}"\ntls_client_ca = "{clients["ca"]}"\n'))
    logged: list[str] = []
    config = load_config(write(tmp_path / "t.toml", text))
    summary = asyncio.run(asyncio.wait_for(Tournament(config, tmp_path / "out", log=logged.append).run(), 120))
    assert summary.played == 4 and summary.faults == 0
    assert any(line.endswith("(mutual TLS)") for line in logged), logged


def test_with_client_names_a_token_needs_the_certificate_made_out_to_its_bot(pki: dict[str, Path]) -> None:
    """``tls_client_names``: a token stolen from tls1 is no use to the holder of tls0's certificate."""
    ca = trustme.CA()
    issued = ca.issue_cert("tls0")
    ca_pem = pki["ca"].parent / "names-ca.pem"
    ca.cert_pem.write_to_path(str(ca_pem))
    credentials = grpc.ssl_channel_credentials(
        root_certificates=pki["ca"].read_bytes(), private_key=issued.private_key_pem.bytes(),
        certificate_chain=b"".join(blob.bytes() for blob in issued.cert_chain_pems))

    async def first_answer(port: int, name: str) -> str:
        async with grpc.aio.secure_channel(f"127.0.0.1:{port}", credentials) as channel:
            stream = pb_grpc.ArenaStub(channel).Connect(timeout=5)
            await stream.write(pb.ConnectRequest(hello=pb.Hello(token=token(name), protocol_version=1)))
            answer = await stream.read()
            if answer.WhichOneof("kind") == "welcome":
                return "welcome"
            return f"{pb.RefusalReason.Name(answer.refusal.reason)}: {answer.refusal.detail}"

    async def scenario() -> tuple[str, str]:
        settings = {"tls_cert": pki["cert"], "tls_key": pki["key"], "tls_client_ca": ca_pem}
        async with arena(NAMES, tls_client_names=True, **settings) as (_, port):
            return await first_answer(port, "tls0"), await first_answer(port, "tls1")

    own, stolen = run(scenario())
    assert own == "welcome"
    assert stolen == ("REFUSAL_REASON_BAD_TOKEN: this token belongs to the bot 'tls1', but your client certificate "
                      "is made out to 'tls0': connect with the certificate the organiser made for your bot")
