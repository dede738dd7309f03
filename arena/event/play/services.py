"""The services a run starts for its bots: the arena server, the launcher, and the sandbox choice.

The arena server runs when any bot plays over gRPC; the launcher (:mod:`arena.event.launch.launcher`)
when the configuration names bots by command (or a Bhoos bot by its address, which it checks
answers). Launched bots run in the bubblewrap sandbox when it can run, as ``sandbox.mode`` asks;
sandboxed gRPC bots reach the arena by a Unix socket in a private folder. A worker that plays the tables
of launched bots runs services of its own, with no workers of their own (:mod:`arena.event.play.branch`).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

from arena.errors import ConfigError
from arena.event.launch.launcher import Launcher
from arena.event.launch.sandbox import bwrap_problem, shortfalls
from arena.event.launch.scratch import remove_leftovers, scratch_folder
from arena.event.plan.manifest import BotStatus
from arena.event.plan.status import BotCondition
from arena.event.play.kinds import Kind, kind_of
from arena.event.play.seats import Seating
from arena.event.setup.botconfig import BotConfig
from arena.event.setup.bots import try_instantiate
from arena.event.setup.config import TournamentConfig
from arena.transports.grpc.server import ArenaServer, ServerSettings, check_address

__all__ = ["Services"]


class Services:
    """The arena server and the launcher of one run (kept by the seating, which seats bots through them).

    ``bots`` is the run's own table of bots (a launched gRPC bot gets its token there); ``log`` takes a line
    for the organiser; ``changed`` is called when a bot comes or goes; ``guests`` (SHA-256 digest of a token ->
    name) are bots the server admits too and seats nowhere.
    """

    def __init__(
        self, config: TournamentConfig, folder: Path, bots: dict[str, BotConfig], seating: Seating, *,
        log: Callable[[str], None], changed: Callable[[], None], guests: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.folder = folder
        self.bots = bots
        self.seating = seating
        self._log, self._changed = log, changed
        self.guests = dict(guests or {})
        self.sandboxing = False
        """Launched bots run in the sandbox (decided when the run starts)."""
        self._socket_folder: Path | None = None
        """The private folder of the Unix socket that sandboxed bots reach the arena by."""
        self._unix_socket: Path | None = None
        """That socket (``None`` when sandboxed bots need none)."""

    @property
    def address(self) -> str:
        """``host:port`` of the arena server, once it listens."""
        return self.seating.server.address if self.seating.server is not None else ""

    def having(self, trait: Callable[[Kind], bool]) -> list[BotConfig]:
        """The bots of the tournament whose kind has ``trait`` (:mod:`arena.event.play.kinds`)."""
        return [b for b in self.bots.values() if trait(kind_of(b))]

    def check(self) -> None:
        """Refuses, before anything runs, an in-process bot that cannot be made, an address the server could not
        listen on and a sandbox that cannot be had; decides whether launched bots run sandboxed."""
        for bot in self.having(lambda kind: kind.in_process):
            try_instantiate(self.seating.factory(bot.name), bot.seed, bot.options, bot.name)
        if self.having(lambda kind: kind.served):
            check_address(self.config.host, self.config.port)
        self.sandboxing = self.choose_sandbox()
        if self.having(lambda kind: kind.launched):
            self.check_limits()

    def check_limits(self) -> None:
        """Says which limits of ``[sandbox]`` this machine cannot give the launched bots; refuses, under
        ``limits = "require"``, to run them without a cap on their processes and their ``/tmp``."""
        settings = self.config.sandbox
        short = shortfalls(settings, self.sandboxing)
        required = [s for s in short if s.required]
        if required and settings.limits == "require":
            raise ConfigError(f"sandbox.limits is \"require\" but this machine cannot limit {required[0].text}; run "
                              "the bots where it can (docs/security.md), or set sandbox.limits = \"warn\" to run "
                              "them without it")
        for shortfall in short:
            self._log(f"warning: launched bots run without a limit on {shortfall.text}")

    def choose_sandbox(self) -> bool:
        """Whether launched bots run in the sandbox; refuses ``mode = "bwrap"`` where it cannot run, and
        ``bhoos`` bots without it; warns when ``auto`` finds it cannot."""
        mode = self.config.sandbox.mode
        launched = len(self.having(lambda kind: kind.launched))
        problem = bwrap_problem() if launched and mode != "off" else None
        if mode == "off" or problem is not None:
            fix = ('sandbox.mode is "off": remove that line' if mode == "off" else
                   f"{problem}: install bubblewrap where it can run")
            for bot in self.bots.values():
                refusal = kind_of(bot).sandbox_refusal(bot, fix)
                if refusal:
                    raise ConfigError(refusal)
        if not launched or mode == "off":
            return False
        if problem is None:
            return True
        if mode == "bwrap":
            raise ConfigError(f"sandbox.mode is \"bwrap\" but {problem}; install it, or set sandbox.mode = \"auto\" "
                              "to run the bots unsandboxed")
        self._log(f"warning: the {launched} launched bot{'s' if launched > 1 else ''} run unsandboxed:")
        self._log(f"  {problem}.")
        self._log("  They run with your user's rights and could read your files, this run's records included.")
        self._log("  For bots you did not write, install bubblewrap, or have them connect from another machine.")
        return False

    async def start(self, statuses: Mapping[str, BotStatus], excluded: Collection[str]) -> None:
        """Starts the server and the launcher the bots need; the server bars the bots in ``statuses`` taken out,
        and the launched gRPC bots not in ``excluded`` are started (unless each game starts its own). When the
        workers launch the bots (:mod:`arena.event.play.placement`) and play every table, only the launcher runs
        here: it checks their commands, and keeps the bots the workers gave up on."""
        if self.seating.elsewhere and not self.seating.shared:
            self._start_launcher()
            return
        if self.having(lambda kind: kind.served):
            await self._start_server(statuses, excluded)
        if self.having(lambda kind: kind.looked_after):
            self._start_launcher()

    async def _start_server(self, statuses: Mapping[str, BotStatus], excluded: Collection[str]) -> None:
        config = self.config
        digests = dict(self.guests)  # the server keeps digests only
        for bot in list(self.bots.values()):
            admitted, digest = kind_of(bot).admitted(bot, config.fresh_process)
            self.bots[bot.name] = admitted
            if digest:
                digests[digest] = bot.name
        server = ArenaServer(ServerSettings(
            rules=config.rules, tokens=digests, table=config.table, max_tables=config.concurrency,
            max_sessions=config.sessions_per_bot, reconnect_grace_s=config.reconnect_grace,
            unresponsive_after=config.unresponsive_after, tls_cert=config.tls_cert, tls_key=config.tls_key,
            tls_client_ca=config.tls_client_ca, tls_client_names=config.tls_client_names,
        ))
        unix_socket = None
        if self.sandboxing:  # a folder only the arena's user can enter; the socket is bound into each sandbox
            remove_leftovers("sock")
            self._socket_folder = scratch_folder("sock", socket_path=len("/arena.sock"))
            unix_socket = self._socket_folder / "arena.sock"
        try:
            await server.start(f"{config.host}:{config.port}", unix_socket=unix_socket)
        except RuntimeError as err:  # grpc: the address cannot be bound
            raise ConfigError(f"cannot listen on {config.host}:{config.port}: {err}") from None
        except BaseException:  # cancelled as it started (a ladder stopped as a block begins): nothing keeps listening
            await server.stop(0)
            raise
        self.seating.server = server
        for name, status in statuses.items():
            self.bar(name, status.status, status.reason)
        server.lobby.watch(self._lobby_changed)
        security = "plaintext" if not server.tls else "TLS" if config.tls_client_ca is None else "mutual TLS"
        self._log(f"arena listening on {self.address} ({security})")
        self._unix_socket = unix_socket
        launched = self.having(lambda kind: kind.served and kind.launched)
        if launched:
            launcher = self._start_launcher()
            if not config.fresh_process:
                for bot in launched:
                    if bot.name not in excluded:
                        await launcher.start(self.bots[bot.name])

    def _start_launcher(self) -> Launcher:
        """The launcher of the bots the arena starts (made once), with every command checked first."""
        seating, server, config = self.seating, self.seating.server, self.config
        if seating.launcher is not None:
            return seating.launcher
        if self.having(lambda kind: kind.launched):
            with contextlib.suppress(OSError):  # the records are the arena's alone (docs/security.md)
                self.folder.chmod(0o700)
        if server is None:  # stdio and Bhoos bots only: no tokens, no lobby
            launcher = Launcher(self.folder, self.address, restarts=config.restarts, changed=self._changed,
                                sandbox=config.sandbox, confined=self.sandboxing)
        else:  # a launched gRPC bot is admitted by its token, and seen in the lobby
            launcher = Launcher(
                self.folder, self.address, restarts=config.restarts, register=server.add_token,
                unregister=server.remove_token, present=server.lobby.present, changed=self._changed,
                sandbox=config.sandbox, socket=self._unix_socket, confined=self.sandboxing,
            )
        seating.launcher = launcher
        for bot in self.having(lambda kind: kind.launched):
            launcher.check(bot)
        return launcher

    def bar(self, bot: str, status: str, reason: str) -> None:
        """Has the server turn away a bot taken out (disqualified, or else withdrawn): its sessions end."""
        server = self.seating.server
        if server is not None:
            if status == BotCondition.DISQUALIFIED:
                server.disqualify(bot, reason)
            else:
                server.withdraw(bot, reason)

    def _lobby_changed(self) -> None:
        server, launcher = self.seating.server, self.seating.launcher
        if server is not None and launcher is not None:
            for bot in self.bots:
                if server.lobby.present(bot):
                    launcher.connected(bot)
        self._changed()

    async def close(self, finished: bool, continued: bool) -> None:
        """Stops the launched bots and the server (``finished``: the tournament is over; ``continued``: another
        run follows at the same address, and the connected bots are told to reconnect)."""
        seating = self.seating
        if seating.launcher is not None:
            await seating.launcher.close()
            seating.launcher = None
        if seating.server is not None:
            await seating.server.stop(0.5, over=finished and not continued, why=(
                "this part is over and the next follows at the same address: reconnect"
                if finished and continued else ""))
        if self._socket_folder is not None:
            shutil.rmtree(self._socket_folder, ignore_errors=True)
            self._socket_folder = None

