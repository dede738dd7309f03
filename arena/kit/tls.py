"""TLS for a bot: the channel's credentials from its command line, and probes that say why a handshake failed.

A mistake in the files given (unreadable, not PEM, a certificate without its key) raises ``ValueError``
with one line saying what to fix; the runner prints it and exits with status 2.
"""

from __future__ import annotations

import socket
import ssl
from pathlib import Path

import grpc

__all__ = ["channel_credentials", "host_port", "refuses_client", "speaks_tls"]

def _read_file(option: str, path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise ValueError(f"cannot read {option} {path}: {err.strerror or err}") from None


def channel_credentials(
    path: Path | None, cert: Path | None = None, key: Path | None = None,
) -> grpc.ChannelCredentials | None:
    """TLS credentials from ``--tls-ca`` (and the client certificate ``--tls-cert``/``--tls-key``), or ``None``."""
    if (cert is None) != (key is None):
        raise ValueError("--tls-cert and --tls-key go together: the client certificate and its private key")
    if cert is not None and path is None:
        raise ValueError("--tls-cert needs --tls-ca too: the organiser's CA certificate, to check the arena's")
    if path is None:
        return None
    pem = _read_file("--tls-ca", path)
    try:
        ssl.create_default_context(cadata=pem.decode("ascii"))
    except (ssl.SSLError, UnicodeDecodeError, ValueError):
        raise ValueError(f"--tls-ca {path} holds no PEM certificate (a file starting with "
                           "-----BEGIN CERTIFICATE-----)") from None
    if cert is None or key is None:
        return grpc.ssl_channel_credentials(root_certificates=pem)
    chain, private_key = _read_file("--tls-cert", cert), _read_file("--tls-key", key)
    try:
        ssl.create_default_context().load_cert_chain(cert, key)
    except (ssl.SSLError, ValueError):
        raise ValueError(f"--tls-cert {cert} and --tls-key {key} are not a PEM certificate and its private "
                           "key") from None
    return grpc.ssl_channel_credentials(root_certificates=pem, private_key=private_key, certificate_chain=chain)



def host_port(address: str) -> tuple[str, int]:
    """The host and port of a gRPC target such as ``host:port``, ``[::1]:port`` or ``dns:///host:port``."""
    target = address.removeprefix("dns:///").removeprefix("ipv4:").removeprefix("ipv6:")
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        host, sep, port = target.rpartition(":")
        if not sep:
            host, port = target, ""
    try:
        return host, int(port) if port else 443  # gRPC's default port
    except ValueError:
        return host, 0


def speaks_tls(address: str, timeout: float = 2.0) -> bool:
    """True when a TLS handshake (certificate unchecked) succeeds at ``address``."""
    host, port = host_port(address)
    if not host or not port:
        return False
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw, context.wrap_socket(
            raw, server_hostname=host
        ):
            return True
    except (OSError, ValueError):
        return False


def refuses_client(
    address: str, ca: Path | None, cert: Path | None, key: Path | None, timeout: float = 2.0,
) -> bool:
    """True when the arena completes a TLS handshake with this bot's CA and client certificate (if any)
    and then closes the connection at once: it turned the client certificate (or its absence) down.
    An arena that accepts the client sends its HTTP/2 settings first."""
    host, port = host_port(address)
    if not host or not port:
        return False
    try:
        context = ssl.create_default_context(cafile=str(ca))
        context.check_hostname = False  # a wrong host name fails the gRPC handshake itself, with its own line
        context.set_alpn_protocols(["h2"])
        if cert is not None:
            context.load_cert_chain(cert, key)
        with socket.create_connection((host, port), timeout=timeout) as raw, context.wrap_socket(
            raw, server_hostname=host
        ) as tls:
            try:
                return tls.recv(1) == b""
            except ssl.SSLError as err:  # a TLS 1.3 server may say why, in an alert, after the handshake
                return "ALERT" in str(err.reason or "").upper()
    except (OSError, ValueError):  # ssl.SSLError is an OSError: the handshake failed for another reason
        return False

