"""The processes of the machine a test looks for by their command line (a launched bot and the steps that start it)."""

from __future__ import annotations

from pathlib import Path


def gone(pid: int) -> bool:
    """True when the process has ended (a zombie waiting for a reaper counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def running(script: Path) -> dict[int, list[str]]:
    """The live processes whose command line names ``script`` (the bot, and the steps that start it)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
            if str(script) in argv and not gone(int(entry.name)):
                found[int(entry.name)] = argv
    return found
