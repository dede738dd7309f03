"""The class roster (``arena.event.setup.roster``) and its commands: tokens issued once and kept as digests,
revoked, imported from a spreadsheet; bots submitted into ``submissions/NAME/``; a configuration that
takes its bots from the roster."""

from __future__ import annotations

import os
import re
import shlex
import stat
import sys
from pathlib import Path

import pytest
import wcwidth

from arena.cli import main
from arena.errors import ConfigError
from arena.event.setup.config import load_config, parse_config
from arena.event.setup.roster import ROSTER_FILE, Roster, read_roster
from arena.transports.grpc.server import ArenaServer, ServerSettings
from arena.transports.grpc.tokens import find_bot, token_sha256
from protocol import callbreak_pb2 as pb
from tests.conftest import hello
from tests.helpers.runs import ROOT

RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
STDIO_BOT = ROOT / "sample_bots" / "stdio" / "lowest_bot.py"


def roster_cli(roster: Path, *args: str) -> list[str]:
    """``callbreak-arena roster ARGS --roster ROSTER`` as arguments of :func:`main`."""
    return ["roster", *args, "--roster", str(roster)]


def ok(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Runs the command line; its stdout, after checking that it succeeded."""
    assert main(list(argv)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Runs the command line; its one-line error, after checking it was refused as bad input (2)."""
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith("callbreak-arena: error: ") and err.count("\n") == 1, err
    return err


def issued(out: str) -> str:
    """The token a ``roster add`` or ``roster token`` printed."""
    lines = [line for line in out.splitlines() if not line.startswith("#")]
    assert len(lines) == 1, out
    return lines[0]


def class_config(folder: Path, extra: str = "") -> Path:
    """A configuration beside the roster that takes its bots from it, with two house bots."""
    path = folder / "class.toml"
    path.write_text('[tournament]\nname = "week-1"\nroster = "roster.toml"\n\n[[bots]]\nname = "house"\n'
                    'python = "sample_bots.random_bot:RandomBot"\n' + extra, encoding="utf-8")
    return path


# -- tokens ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["", "add", "list", "revoke", "token", "import", "submit"])
def test_every_roster_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["roster", *([command] if command else []), "--help"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.startswith("usage: callbreak-arena roster")


def test_add_prints_the_token_once_and_the_roster_keeps_its_digest_only(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / ROSTER_FILE
    token = issued(ok(capsys, *roster_cli(roster, "add", "alice", "--display", "Alice Liddell")))
    text = roster.read_text(encoding="utf-8")
    assert token not in text and token_sha256(token) in text
    [student] = read_roster(roster).students
    assert (student.name, student.display, student.token_sha256) == ("alice", "Alice Liddell", token_sha256(token))
    listing = ok(capsys, *roster_cli(roster, "list"))
    assert "Alice Liddell" in listing and "connects with its token" in listing
    assert token not in listing and token_sha256(token) not in listing


@pytest.mark.parametrize("name", ["", "../x", "a/b", ".hidden", "alice\n", "x" * 41, "ünï"])
def test_names_are_checked_as_bot_names_are(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    assert "cannot be a name" in refused(capsys, *roster_cli(tmp_path / ROSTER_FILE, "add", name))
    assert not (tmp_path / ROSTER_FILE).exists()


@pytest.mark.parametrize(("display", "why"), [("two\nlines", "control characters"), ("x" * 81, "at most 80"),
                                             ("evil\u202eecila", "control characters")])
def test_display_names_are_one_short_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], display: str,
                                          why: str) -> None:
    assert why in refused(capsys, *roster_cli(tmp_path / ROSTER_FILE, "add", "alice", "--display", display))


def test_a_name_is_added_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / ROSTER_FILE
    ok(capsys, *roster_cli(roster, "add", "alice"))
    assert "already on the roster" in refused(capsys, *roster_cli(roster, "add", "alice"))


def test_a_revoked_token_admits_nothing_and_a_new_one_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / ROSTER_FILE
    for name in ("alice", "bob", "carol", "dave"):
        ok(capsys, *roster_cli(roster, "add", name))
    old = issued(ok(capsys, *roster_cli(roster, "token", "alice")))
    config = load_config(class_config(tmp_path))
    digests = {bot.setup.token_sha256: bot.name for bot in config.bots if bot.kind == "remote"}
    assert find_bot(digests, old) == "alice"

    assert "admits nothing" in ok(capsys, *roster_cli(roster, "revoke", "alice"))
    config = load_config(class_config(tmp_path))
    assert [bot.name for bot in config.bots] == ["house", "bob", "carol", "dave"]  # a revoked student plays no more
    digests = {bot.setup.token_sha256: bot.name for bot in config.bots if bot.kind == "remote"}
    assert find_bot(digests, old) is None
    assert "nothing (token revoked)" in ok(capsys, *roster_cli(roster, "list"))

    new = issued(ok(capsys, *roster_cli(roster, "token", "alice")))
    config = load_config(class_config(tmp_path))
    digests = {bot.setup.token_sha256: bot.name for bot in config.bots if bot.kind == "remote"}
    assert find_bot(digests, new) == "alice" and find_bot(digests, old) is None
    server = ArenaServer(ServerSettings(rules=config.rules, tokens=digests))  # what serve holds
    assert server.admit(hello(new, name="alice").hello) == ("alice", None)
    refusal = server.admit(hello(old, name="alice").hello)[1]
    assert refusal is not None and refusal[0] == pb.REFUSAL_REASON_BAD_TOKEN


def test_commands_on_a_student_not_on_the_roster_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / ROSTER_FILE
    assert "no roster at" in refused(capsys, *roster_cli(roster, "list"))
    ok(capsys, *roster_cli(roster, "add", "alice"))
    for command in (("revoke", "zed"), ("token", "zed"), ("submit", "zed", str(RANDOM_BOT))):
        assert "'zed' is not on the roster" in refused(capsys, *roster_cli(roster, *command))


# -- import ------------------------------------------------------------------------------------------


def test_import_adds_the_new_students_and_prints_each_token_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / ROSTER_FILE
    ok(capsys, *roster_cli(roster, "add", "alice"))
    students = tmp_path / "students.csv"
    # As a spreadsheet saves it: a byte-order mark, a header, quotes, a blank line, trailing commas.
    students.write_text('\ufeffname,display\nalice,Alice\nbob,"Bob ""the Builder"", Jr"\n\ncarol,\ndave,Dave,\n',
                        encoding="utf-8")
    out = ok(capsys, *roster_cli(roster, "import", str(students)))
    lines = out.splitlines()
    assert lines[0] == "name,display,token"
    rows = [line.rsplit(",", 1) for line in lines[1:]]
    assert [row[0] for row in rows] == ['bob,"Bob ""the Builder"", Jr"', "carol,", "dave,Dave"]
    kept = {s.name: s for s in read_roster(roster).students}
    assert list(kept) == ["alice", "bob", "carol", "dave"]
    assert kept["bob"].display == 'Bob "the Builder", Jr'
    assert kept["alice"].display == ""  # already there: left as it was
    for (who, token), name in zip(rows, ("bob", "carol", "dave"), strict=True):
        assert kept[name].token_sha256 == token_sha256(token), who
        assert token not in roster.read_text(encoding="utf-8")


def test_import_writes_the_tokens_to_a_file_only_its_owner_reads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / ROSTER_FILE
    students = tmp_path / "students.csv"
    students.write_text("ada,Ada Lovelace\nalan\n", encoding="utf-8")
    tokens = tmp_path / "tokens.csv"
    assert ok(capsys, *roster_cli(roster, "import", str(students), "--tokens-out", str(tokens))) == ""
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    lines = tokens.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "name,display,token" and [line.split(",")[:2] for line in lines[1:]] == [
        ["ada", "Ada Lovelace"], ["alan", ""]]
    digests = {s.name: s.token_sha256 for s in read_roster(roster).students}
    assert all(digests[line.split(",")[0]] == token_sha256(line.split(",")[2]) for line in lines[1:])

    students.write_text("grace\n", encoding="utf-8")
    assert "exists already" in refused(capsys, *roster_cli(roster, "import", str(students), "--tokens-out",
                                                           str(tokens)))
    assert "grace" not in read_roster(roster)  # nothing added that could not be handed out
    assert len(tokens.read_text(encoding="utf-8").splitlines()) == 3


@pytest.mark.parametrize(("text", "why"), [
    ("ada\nbad/name\n", "line 2: 'bad/name' cannot be a name"),
    ("ada\nada\n", "line 2: 'ada' is named twice"),
    ("ada,Ada,extra\n", "line 1: 3 columns"),
])
def test_import_adds_nothing_unless_every_line_is_right(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                                        why: str) -> None:
    students = tmp_path / "students.csv"
    students.write_text(text, encoding="utf-8")
    assert why in refused(capsys, *roster_cli(tmp_path / ROSTER_FILE, "import", str(students)))
    assert not (tmp_path / ROSTER_FILE).exists()


# -- submissions -------------------------------------------------------------------------------------


def test_a_python_file_is_submitted_as_bot_py_and_replaces_the_earlier_submission(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / ROSTER_FILE
    ok(capsys, *roster_cli(roster, "add", "alice"))
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "bot.json").write_text('{"kind": "stdio", "command": "python lowest_bot.py"}', encoding="utf-8")
    (earlier / "lowest_bot.py").write_text(STDIO_BOT.read_text(encoding="utf-8"), encoding="utf-8")
    # The command as it runs: the launcher starts `python` as the arena's own.
    assert f"stdio: {sys.executable} lowest_bot.py" in ok(capsys, *roster_cli(roster, "submit", "alice", str(earlier)))
    out = ok(capsys, *roster_cli(roster, "submit", "alice", str(RANDOM_BOT)))
    folder = tmp_path / "submissions" / "alice"
    runs = f"python: {shlex.join([sys.executable, str(folder / 'bot.py'), '--arena', '{address}'])}"
    assert runs in out
    assert sorted(p.name for p in folder.iterdir()) == ["bot.py"]  # the earlier files are gone
    assert (folder / "bot.py").read_bytes() == RANDOM_BOT.read_bytes()
    assert sorted(p.name for p in (tmp_path / "submissions").iterdir()) == ["alice"]
    listing = ok(capsys, *roster_cli(roster, "list"))  # shorter: from the roster's folder, the arena's Python named
    assert "its submission: python: python submissions/alice/bot.py --arena '{address}'" in listing


def test_the_listing_fits_a_terminal_with_wide_names_and_paths_from_the_roster(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Columns line up as a terminal shows them (a Chinese character takes two cells, a Devanagari vowel sign
    none), and a submission's paths are written from the roster's folder, not as 130-column absolute paths."""
    folder = tmp_path / "a class folder as deep as a teacher's home" / "term 2" / "class"
    folder.mkdir(parents=True)
    roster = folder / ROSTER_FILE
    for name, display in (("ada", "Ada Lovelace"), ("li", "李小龍"), ("sita", "सीता शर्मा"), ("zoe", "Zoë Ortiz")):
        ok(capsys, *roster_cli(roster, "add", name, "--display", display))
    ok(capsys, *roster_cli(roster, "submit", "ada", str(RANDOM_BOT)))
    stdio = tmp_path / "handed-in"
    stdio.mkdir()
    (stdio / "bot.json").write_text('{"kind": "stdio", "command": "python lowest_bot.py"}', encoding="utf-8")
    (stdio / "lowest_bot.py").write_text(STDIO_BOT.read_text(encoding="utf-8"), encoding="utf-8")
    ok(capsys, *roster_cli(roster, "submit", "li", str(stdio)))
    table, note = ok(capsys, *roster_cli(roster, "list")).split("\n\n")
    lines = table.splitlines()
    assert str(tmp_path) not in table and sys.executable not in table
    assert "python: python submissions/ada/bot.py --arena '{address}'" in table
    assert "stdio: python lowest_bot.py" in table
    assert note.strip() == f"Paths are from the roster's folder, {folder}; python is the arena's own, {sys.executable}."
    def columns(line: str) -> list[int]:
        """Where each cell of ``line`` begins, in a terminal's cells (cells are apart by two spaces or more)."""
        return [wcwidth.wcswidth(line[:at]) for at in [0, *(m.end() for m in re.finditer(r"  +", line))]]

    assert len(lines) == 6 and all(columns(row) == columns(lines[0]) for row in lines[2:]), table
    assert max(wcwidth.wcswidth(line) for line in lines) <= 120


def test_a_folder_is_copied_whole_less_caches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / ROSTER_FILE
    ok(capsys, *roster_cli(roster, "add", "bob"))
    source = tmp_path / "bob-bot"
    (source / "lib").mkdir(parents=True)
    (source / "__pycache__").mkdir()
    (source / "__pycache__" / "x.pyc").write_bytes(b"cache")
    (source / "bot.py").write_text(RANDOM_BOT.read_text(encoding="utf-8"), encoding="utf-8")
    (source / "lib" / "helper.py").write_text("X = 1\n", encoding="utf-8")
    os.symlink("lib/helper.py", source / "link.py")  # a link inside the folder is kept as a link
    ok(capsys, *roster_cli(roster, "submit", "bob", str(source)))
    folder = tmp_path / "submissions" / "bob"
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == ["bot.py", "lib", "lib/helper.py",
                                                                            "link.py"]
    assert (folder / "link.py").is_symlink()


def test_submissions_that_cannot_be_started_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / ROSTER_FILE
    ok(capsys, *roster_cli(roster, "add", "carol"))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "neither bot.py nor bot.json" in refused(capsys, *roster_cli(roster, "submit", "carol", str(empty)))
    script = tmp_path / "bot.js"
    script.write_text("//", encoding="utf-8")
    assert "not a .py file" in refused(capsys, *roster_cli(roster, "submit", "carol", str(script)))
    assert "does not exist" in refused(capsys, *roster_cli(roster, "submit", "carol", str(tmp_path / "nothing")))
    for manifest, why in [("{", "cannot be read as JSON"), ('{"kind": "java", "command": "x"}', "must be one JSON"),
                          ('{"kind": "stdio", "command": ""}', "must be a command line"),
                          ('{"kind": "stdio", "command": "x --arena {address}"}', "a stdio bot has no {address}"),
                          ('{"kind": "command", "command": "node bot.js"}', "a command bot connects to the arena")]:
        (empty / "bot.json").write_text(manifest, encoding="utf-8")
        assert why in refused(capsys, *roster_cli(roster, "submit", "carol", str(empty))), manifest
    (empty / "bot.json").unlink()
    (empty / "bot.py").write_text("", encoding="utf-8")
    os.symlink("/etc/hostname", empty / "secret")
    assert "outside the submission" in refused(capsys, *roster_cli(roster, "submit", "carol", str(empty)))
    assert not (tmp_path / "submissions" / "carol").exists()
    assert "holds the roster's submissions" in refused(capsys, *roster_cli(roster, "submit", "carol", str(tmp_path)))


# -- the roster file ---------------------------------------------------------------------------------


def test_display_names_round_trip_through_the_file(tmp_path: Path) -> None:
    roster = Roster(tmp_path / ROSTER_FILE)
    odd = 'Zoë "Z" \\ O\'Brien <b>&</b> 東京'
    roster.add("zoe", odd)
    roster.save()
    assert read_roster(tmp_path / ROSTER_FILE).student("zoe").display == odd


@pytest.mark.parametrize(("text", "why"), [
    ('[[students]]\nname = "a"\ncolour = "red"\n', "unknown key 'colour'"),
    ('[[students]]\nname = "a"\n[[students]]\nname = "a"\n', "names 'a' twice"),
    ('[[students]]\nname = "a"\ntoken_sha256 = "abc"\n', "64 hexadecimal digits"),
    ('[[students]]\nname = "a/b"\n', "cannot be a name"),
    ('[[students]]\ndisplay = "x"\n', "needs a name"),
    ('teacher = "me"\n', "unknown key 'teacher'"),
    ("[[students]\n", "not valid TOML"),
])
def test_a_damaged_roster_is_refused_in_words(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / ROSTER_FILE
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=why.replace("(", r"\(")):
        read_roster(path)


# -- a configuration that takes its bots from the roster ----------------------------------------------


def test_each_student_plays_as_their_submission_or_as_a_remote_bot(tmp_path: Path) -> None:
    roster = Roster(tmp_path / ROSTER_FILE)
    tokens = {name: roster.add(name, name.title()) for name in ("ada", "ben", "cy", "dee")}
    roster.save()
    roster.submit("ben", RANDOM_BOT)
    node = tmp_path / "node-bot"
    node.mkdir()
    (node / "bot.json").write_text('{"kind": "stdio", "command": "node lowest_bot.js"}', encoding="utf-8")
    (node / "lowest_bot.js").write_text("//", encoding="utf-8")
    roster.submit("cy", node)
    grpc_node = tmp_path / "grpc-bot"
    grpc_node.mkdir()
    (grpc_node / "bot.json").write_text('{"kind": "command", "command": "node bot.js --arena {address}"}',
                                        encoding="utf-8")
    (grpc_node / "bot.js").write_text("//", encoding="utf-8")
    roster.submit("dee", grpc_node)

    config = load_config(class_config(tmp_path))
    assert config.roster == tmp_path / ROSTER_FILE
    bots = {bot.name: bot for bot in config.bots}
    assert list(bots) == ["house", "ada", "ben", "cy", "dee"]  # the [[bots]] tables first, then the roster's order
    assert bots["ada"].kind == "remote" and bots["ada"].setup.token_sha256 == token_sha256(tokens["ada"])
    submitted = tmp_path / "submissions"
    assert bots["ben"].setup.argv == ("{python}", str(submitted / "ben" / "bot.py"), "--arena", "{address}")
    assert bots["ben"].setup.folder == submitted / "ben" and bots["ben"].kind == "command"
    assert bots["cy"].setup.argv == ("node", "lowest_bot.js") and bots["cy"].kind == "stdio"
    assert bots["cy"].setup.folder == submitted / "cy"
    # A command bot starts in the arena's folder: the files its command names are found in its own.
    assert bots["dee"].setup.argv == ("node", str(submitted / "dee" / "bot.js"), "--arena", "{address}")


def test_a_roster_that_cannot_be_used_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no roster at"):
        load_config(class_config(tmp_path))
    roster = Roster(tmp_path / ROSTER_FILE)
    roster.add("house")
    roster.add("alice")
    roster.save()
    with pytest.raises(ConfigError, match="'house' is both a \\[\\[bots\\]\\] table and a student"):
        load_config(class_config(tmp_path))
    broken = tmp_path / "submissions" / "alice"
    broken.mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"the submission of 'alice'.*neither bot\.py nor bot\.json"):
        parse_config('[tournament]\nroster = "roster.toml"\n', tmp_path / "c.toml")


def test_a_roster_alone_is_a_field(tmp_path: Path) -> None:
    roster = Roster(tmp_path / ROSTER_FILE)
    for name in ("a", "b", "c", "d"):
        roster.add(name)
    roster.save()
    config = parse_config('[tournament]\nroster = "roster.toml"\n\n[page]\nport = 9001\nhost = "0.0.0.0"\n',
                          tmp_path / "c.toml")
    assert [bot.name for bot in config.bots] == ["a", "b", "c", "d"]
    assert (config.page_port, config.page_host) == (9001, "0.0.0.0")
    assert parse_config('[tournament]\nroster = "roster.toml"\n', tmp_path / "c.toml").page_port is None
