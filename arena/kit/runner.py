"""The bot's runner and its command line: ``run(factory)`` keeps a bot connected until the tournament is over.

``run(factory)`` reads the command line (``--help`` lists it all; the token comes from
``$CALLBREAK_TOKEN`` unless ``--token`` is given), then plays sessions (:mod:`arena.kit.session`) until
the arena ends the tournament. ``factory`` (usually the bot's class) is called with ``seed=`` (when it
takes a seed) and the ``--option`` values. The hello names the bot only when ``--name`` says how the
organiser calls it: the arena refuses a token that belongs to a bot of another name. Spaces and line
ends around the token are dropped (a token read from a file often ends with a newline); no token
holds them.

Connecting and stopping. Every connection and every failure prints one line to stderr, starting
with ``[name]``. ``run()`` returns the exit status:

- 0: the arena ended the stream with status OK (the tournament is over); or the bot was launched
  by an arena (below) that has ended.
- 1: the arena refused the bot (bad or missing token, disqualified, unsupported protocol), or ended
  the stream with UNAUTHENTICATED, PERMISSION_DENIED, FAILED_PRECONDITION or INVALID_ARGUMENT;
  with ``--once``, any failure to connect or lost connection; Ctrl-C.
- 2: a configuration error that retrying cannot mend: a bad command line or ``--option``, a factory
  that rejects the options, a ``--tls-ca`` file that cannot be read or holds no PEM certificate,
  a ``--tls-cert``/``--tls-key`` pair that is not a certificate and its key, a plaintext bot
  against an arena that speaks TLS, a failed TLS handshake (the arena does not speak TLS, or the
  CA file did not sign its certificate, or the certificate does not name the host), an arena that
  asks for a client certificate (mutual TLS) and got none, or one its CA did not sign.

Anything else (the arena unreachable, the connection broken, the arena restarting, a refusal for
ARENA_FULL or DUPLICATE_SESSION, any other status) means: reconnect, after 0.5 s, then twice as
long each time up to ``--max-backoff`` seconds, for ever; the wait starts again from 0.5 s after a
session the arena welcomed. Before the Welcome a failure reads ``cannot reach the arena at
HOST:PORT: <reason>; retrying in 0.5 s``, after it ``connection to the arena lost (<reason>);
reconnecting in 0.5 s``. The channel sends keepalive pings every 30 s, so that NAT boxes keep an
idle stream open; an arena accepts them no more often than every 10 s, and if it closes the
connection for too many pings the line says so, and the kit reconnects.

Launched by an arena. An arena that starts a bot process sets ``CALLBREAK_LAUNCHED=1`` and connects
the bot's standard input to a pipe it holds open for as long as it runs. With that variable set,
``run()`` reads its standard input in a daemon thread, discarding what it reads, and stops (status
0, one line: "the arena that launched this bot has ended; stopping") when it reaches end of file,
even while disconnected and waiting to retry. Without it, the kit never reads standard input.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import os
import re
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc

from arena.kit.bot import Bot, Refused
from arena.kit.session import BotSession
from arena.kit.tls import channel_credentials, host_port, refuses_client, speaks_tls
from protocol import callbreak_pb2 as pb

__all__ = ["FIRST_BACKOFF", "parse_args", "run"]

FIRST_BACKOFF = 0.5
"""Seconds before the first reconnection attempt; it doubles with each failure, up to ``--max-backoff``."""

# Statuses that end the session for a reason a retry cannot mend: the bot stops.
_FINAL = {
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.INVALID_ARGUMENT,
}

# Refusals that say "not now" rather than "never": the bot tries again later.
_PASSING_REFUSALS = {pb.REFUSAL_REASON_ARENA_FULL, pb.REFUSAL_REASON_DUPLICATE_SESSION}


# --- the command line ------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None, description: str = "A Callbreak bot.") -> argparse.Namespace:
    """The bot command line: ``--arena``, ``--token`` and friends."""
    parser = argparse.ArgumentParser(
        description=description,
        epilog="Exit status: 0 when the tournament is over (or the arena that launched the bot has ended), "
               "1 when the arena refuses the bot for good, 2 on a configuration error (bad options, "
               "TLS mismatch). Other failures are retried for ever, unless --once.",
    )
    parser.add_argument("--arena", required=True, metavar="HOST:PORT", help="the arena's address")
    parser.add_argument(
        "--token", default=os.environ.get("CALLBREAK_TOKEN", ""),
        help="the token the organiser gave this bot; on a standing ladder, your bot token (from `ladder add "
             "--remote` or your page of the site), not the one you log in with (default: $CALLBREAK_TOKEN, the "
             "better place: a command line is visible to every user of the machine)",
    )
    parser.add_argument("--name", default=None,
                        help="the name the organiser gave this bot, sent in the hello: the arena then refuses a "
                             "token of another bot (default: no name is sent; the logs use the bot's own)")
    parser.add_argument("--seed", type=int, default=0, help="seed for bots that use randomness (default: 0)")
    parser.add_argument("--tls-ca", type=Path, default=None, metavar="FILE",
                        help="connect with TLS, trusting this PEM root certificate (the organiser's CA; on a ladder, "
                             "the ca.pem its organiser hands out)")
    parser.add_argument("--tls-cert", type=Path, default=None, metavar="FILE",
                        help="this bot's client certificate (PEM), for an arena that asks for one (mutual TLS); "
                             "with --tls-key and --tls-ca")
    parser.add_argument("--tls-key", type=Path, default=None, metavar="FILE",
                        help="the private key (PEM) of --tls-cert")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option for the bot's class (repeatable); numbers and true/false are converted")
    parser.add_argument("--once", action="store_true",
                        help="stop (status 1) instead of reconnecting when the connection fails or drops")
    parser.add_argument("--max-backoff", type=float, default=10.0, metavar="S",
                        help="longest wait between reconnection attempts, in seconds (default: 10)")
    return parser.parse_args(argv)


class _ConfigError(Exception):
    """A mistake in how the bot was started: one line, exit status 2."""


def _options(items: Sequence[str]) -> dict[str, object]:
    options: dict[str, object] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise _ConfigError(f"--option {item!r}: write KEY=VALUE, like aggression=0.5")
        value: object = text
        if text.lower() in ("true", "false"):
            value = text.lower() == "true"
        else:
            for kind in (int, float):
                try:
                    value = kind(text)
                    break
                except ValueError:
                    pass
        options[key] = value
    return options


def _maker(factory: Callable[..., Bot], seed: int, options: dict[str, object], name: str | None) -> Callable[[], Bot]:
    """A zero-argument factory: ``factory`` with the seed (when it takes one), the options and the name."""
    try:
        params = inspect.signature(factory).parameters.values()
        takes_seed = any(p.name == "seed" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    except (TypeError, ValueError):  # no signature to read (a builtin): try the seed
        takes_seed = True
    kwargs = {"seed": seed, **options} if takes_seed else dict(options)

    def make() -> Bot:
        bot = factory(**kwargs)
        if name:
            bot.name = name
        return bot

    return make


def _say(name: str, line: str) -> None:
    print(f"[{name}] {line}", file=sys.stderr, flush=True)


def run(factory: Callable[..., Bot], argv: Sequence[str] | None = None) -> int:
    """Runs a bot from the command line until the arena ends the tournament; returns the exit status."""
    args = parse_args(argv, (factory.__doc__ or "A Callbreak bot.").strip().splitlines()[0])
    label = args.name or str(getattr(factory, "name", "bot"))
    try:
        make = _maker(factory, args.seed, _options(args.option), args.name)
        try:
            first = make()
        except Exception as err:
            raise _ConfigError(f"cannot make the bot: {type(err).__name__}: {err}") from None
        label = first.name
        try:
            credentials = channel_credentials(args.tls_ca, args.tls_cert, args.tls_key)
        except ValueError as err:
            raise _ConfigError(str(err)) from None
    except _ConfigError as err:
        _say(label, str(err))
        return 2
    try:
        return asyncio.run(_Runner(first, make, args, credentials).keep_playing())
    except KeyboardInterrupt:
        return 1


# --- staying connected -----------------------------------------------------------------------


class _Stop(Exception):
    """The bot must stop now with ``status``; the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Runner:
    """Connects, plays, and decides after each session whether to stop or to try again."""

    def __init__(
        self, first: Bot, make: Callable[[], Bot], args: argparse.Namespace,
        credentials: grpc.ChannelCredentials | None,
    ) -> None:
        self.first = first
        self.make = make
        self.args = args
        self.credentials = credentials
        self.name = first.name
        self.address: str = args.arena

    async def keep_playing(self) -> int:
        launched = asyncio.Event()
        if os.environ.get("CALLBREAK_LAUNCHED") == "1":
            _watch_stdin(asyncio.get_running_loop(), launched)
        stopper = asyncio.ensure_future(launched.wait())
        backoff = FIRST_BACKOFF
        try:
            while True:
                session = BotSession(self.first, self.make, self._welcomed, name=self.args.name or "")
                attempt = asyncio.ensure_future(session.run(self.args.arena, self.args.token, self.credentials))
                await asyncio.wait({attempt, stopper}, return_when=asyncio.FIRST_COMPLETED)
                if not attempt.done():
                    attempt.cancel()
                    await asyncio.wait({attempt})
                    _say(self.name, "the arena that launched this bot has ended; stopping")
                    return 0
                if session.welcome is not None:
                    backoff = FIRST_BACKOFF
                try:
                    what = await self._outcome(session, attempt)
                except _Stop as stop:
                    _say(self.name, str(stop))
                    return stop.status
                if self.args.once:
                    _say(self.name, f"{what}; not {'reconnecting' if session.welcome else 'retrying'} (--once)")
                    return 1
                _say(self.name, f"{what}; {'reconnecting' if session.welcome else 'retrying'} in {backoff:.1f} s")
                await asyncio.wait({stopper}, timeout=backoff)
                if stopper.done():
                    _say(self.name, "the arena that launched this bot has ended; stopping")
                    return 0
                backoff = min(self.args.max_backoff, backoff * 2)
        finally:
            stopper.cancel()

    def _welcomed(self, welcome: pb.Welcome) -> None:
        _say(self.name, f"connected to the arena at {self.address} (session {welcome.session_id}, "
                        f"up to {welcome.max_tables} tables at once)")

    async def _outcome(self, session: BotSession, attempt: asyncio.Future[None]) -> str:
        """What happened, in words, when it is worth another try; raises :class:`_Stop` otherwise."""
        err = attempt.exception()
        if err is None:
            raise _Stop(0, "the arena ended the stream: the tournament is over; stopping")
        if isinstance(err, Refused):
            if err.reason in _PASSING_REFUSALS:
                return f"refused by the arena for now: {err}"
            raise _Stop(1, f"refused by the arena: {err}; stopping")
        if not isinstance(err, grpc.aio.AioRpcError):
            raise err
        code, details = err.code(), err.details() or ""
        if code in _FINAL:
            raise _Stop(1, f"the arena ended the session with {code.name}: {details}; stopping")
        if "too many pings" in details.lower() or "too_many_pings" in details.lower():
            return ("the arena closed the connection because this bot sent keepalive pings too often: "
                    "ping at most every 10 s")
        self._check_tls(details)
        if (session.welcome is None and self.credentials is None and _closed_at_once(details)
                and await _in_daemon_thread(lambda: speaks_tls(self.address))):
            raise _Stop(2, f"the arena at {self.address} speaks TLS: run the bot with --tls-ca FILE "
                           "(the organiser's CA certificate)")
        if (session.welcome is None and self.credentials is not None and _closed_at_once(details)
                and await _in_daemon_thread(lambda: refuses_client(self.address, *self._tls_files()))):
            cert = self.args.tls_cert
            if cert is None:
                raise _Stop(2, f"the arena at {self.address} asks for a client certificate (mutual TLS): run the "
                               "bot with --tls-cert FILE --tls-key FILE (the certificate and key from the organiser)")
            raise _Stop(2, f"the arena at {self.address} did not accept the client certificate {cert}: it is not "
                           "signed by the CA the arena trusts; ask the organiser for the right certificate")
        reason = _reason(code, details)
        if session.welcome is None:
            return f"cannot reach the arena at {self.address}: {reason}"
        return f"connection to the arena lost ({reason})"

    def _tls_files(self) -> tuple[Path | None, Path | None, Path | None]:
        """``--tls-ca``, ``--tls-cert`` and ``--tls-key``."""
        return self.args.tls_ca, self.args.tls_cert, self.args.tls_key

    def _check_tls(self, details: str) -> None:
        """Raises :class:`_Stop` (status 2) when the TLS handshake failed: only the operator can fix that."""
        lower = details.lower()
        if "handshake failed" not in lower and "hostname verification" not in lower:
            return
        ca, where = self.args.tls_ca, f"the arena at {self.address}"
        if "wrong_version_number" in lower:
            raise _Stop(2, f"the TLS handshake failed: {where} does not speak TLS: run the bot without --tls-ca")
        if "certificate_verify_failed" in lower:
            raise _Stop(2, f"the TLS handshake failed: {ca} is not the CA that signed the certificate of {where}: "
                           "ask the organiser for the right CA certificate")
        if "hostname verification" in lower:
            raise _Stop(2, f"the TLS handshake failed: the certificate of {where} does not name "
                           f"{host_port(self.address)[0]}: use the host name the organiser gave")
        raise _Stop(2, f"the TLS handshake failed: {where} does not speak TLS (drop --tls-ca), or {ca} is not "
                       f"the CA that signed its certificate ({_reason(grpc.StatusCode.UNAVAILABLE, details)})")


def _closed_at_once(details: str) -> bool:
    """The connection was closed before any HTTP/2 frame: what a TLS server does to a plaintext client."""
    return _reason(grpc.StatusCode.UNAVAILABLE, details) == "the connection was closed"


def _reason(code: grpc.StatusCode, details: str) -> str:
    """grpc's account of a failure, in a few words."""
    text = details.rpartition("last error: ")[2]
    text = re.sub(r"^[A-Z_]+: ", "", text)  # the status of the last attempt
    text = re.sub(r"^(ipv4|ipv6|unix|unix-abstract):\S+: ", "", text)  # the address the user already knows
    lower = text.lower()
    if "connection refused" in lower:
        text = "connection refused"
    elif "server shutdown" in lower or lower == "cancelling all calls":
        text = "the arena shut down"
    elif lower == "socket closed":
        text = "the connection was closed"
    elif lower.startswith("errors resolving"):
        text = "the host name does not resolve" + (f" ({text.rpartition(': ')[2].rstrip(']')})" if ": " in text else "")
    if not text:
        return str(code.name)
    return text if code is grpc.StatusCode.UNAVAILABLE else f"{code.name}: {text}"



async def _in_daemon_thread(work: Callable[[], bool]) -> bool:
    """``work()`` in a daemon thread, awaited: unlike the default executor, it never delays exit."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[bool] = loop.create_future()

    def settle(result: bool) -> None:
        if not done.done():
            done.set_result(result)

    def target() -> None:
        result = work()
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(settle, result)

    threading.Thread(target=target, name="callbreak-probe", daemon=True).start()
    return await done


def _watch_stdin(loop: asyncio.AbstractEventLoop, ended: asyncio.Event) -> None:
    """Sets ``ended`` when standard input reaches end of file: the launching arena has gone."""

    def wait_for_eof() -> None:
        try:
            fd = sys.stdin.fileno()
            while os.read(fd, 65536):
                pass
        except (OSError, ValueError, AttributeError):  # no standard input at all: nobody holds it open
            pass
        with contextlib.suppress(RuntimeError):  # a closed loop: the bot is stopping anyway
            loop.call_soon_threadsafe(ended.set)

    threading.Thread(target=wait_for_eof, name="callbreak-stdin", daemon=True).start()
