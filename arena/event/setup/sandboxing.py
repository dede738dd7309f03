"""The ``[sandbox]`` table of a configuration: whether launched bots run in the sandbox, and the limits every
launched bot runs under (:mod:`arena.event.launch.sandbox` applies them)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

__all__ = ["DEFAULT_SANDBOX", "LIMITS", "MODES", "UNCONFINED", "SandboxSettings", "sandbox_table"]

MODES = ("auto", "bwrap", "off")
"""``auto``: sandbox where bwrap runs, else warn; ``bwrap``: sandbox or refuse to run; ``off``: never."""
LIMITS = ("require", "warn")
"""``require``: refuse to run launched bots where the machine cannot cap their processes or their ``/tmp``;
``warn``: say which it cannot, and run them."""


@dataclasses.dataclass(frozen=True)
class SandboxSettings:
    """The ``[sandbox]`` table of a configuration."""

    mode: str = "auto"
    """One of :data:`MODES`."""
    cpus: int = 1
    """CPUs each launched bot may run on (0: any)."""
    memory_mb: int = 2048
    """Address space of each process of a launched bot, in MiB (0: no limit)."""
    read_only: tuple[Path, ...] = ()
    """More folders every sandboxed bot sees read-only (a language runtime installed outside /usr)."""
    processes: int = 64
    """Processes and threads one launched bot process may have at once, itself included (0: no limit)."""
    tmp_mb: int = 64
    """MiB a sandboxed bot's ``/tmp`` may hold, and its ``/dev/shm`` as much (0: no limit)."""
    limits: str = "warn"
    """One of :data:`LIMITS`: what to do where the machine cannot give the limits of processes and ``/tmp``."""

    def to_dict(self) -> dict[str, object]:
        return {"mode": self.mode, "cpus": self.cpus, "memory_mb": self.memory_mb,
                "read_only": [str(p) for p in self.read_only], "processes": self.processes, "tmp_mb": self.tmp_mb,
                "limits": self.limits}


def sandbox_table(sandbox: str | SandboxSettings) -> str:
    """The lines of a ``[sandbox]`` table, for a configuration made in code: ``sandbox`` is its ``mode`` alone, or
    the whole table."""
    data = {"mode": sandbox} if isinstance(sandbox, str) else sandbox.to_dict()
    return "".join(f"{key} = {json.dumps(value)}\n" for key, value in data.items())


DEFAULT_SANDBOX = SandboxSettings()
"""A configuration without a ``[sandbox]`` table."""
UNCONFINED = SandboxSettings(mode="off", cpus=0, memory_mb=0, processes=0, tmp_mb=0)
"""No sandbox and no limits."""
