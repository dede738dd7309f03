"""Tournament configuration: every wrong key is refused before anything runs, naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main
from arena.errors import ConfigError
from arena.event.plan.schedule import Schedule
from arena.event.setup.config import load_config, parse_config
from arena.event.setup.kinds import Format
from arena.transports.grpc.tokens import token_sha256

RANDOM = "sample_bots.random_bot:RandomBot"


def bots(*names: str, kind: str = f'python = "{RANDOM}"') -> str:
    """``[[bots]]`` tables for ``names`` (default: four in-process random bots)."""
    return "".join(f'\n[[bots]]\nname = "{name}"\n{kind}\n' for name in names or ("a", "b", "c", "d"))


FOUR = bots()
FIVE = bots("a", "b", "c", "d", "e")

BAD = [
    # (id, configuration text, words the message must hold)
    ("invalid toml", "[tournament\nname = 1\n" + FOUR, ["not valid TOML"]),
    ("unknown top-level table", "[tournement]\nseed = 1\n" + FOUR, ["unknown key", "'tournement'", "tournament"]),
    ("unknown tournament key", "[tournament]\nseeds = 1\n" + FOUR,
     ["unknown key tournament.'seeds'", "deal_sets", "seed"]),
    ("unknown time key", "[time]\ndeadline = 5\n" + FOUR, ["time.'deadline'", "deadline_ms", "time_bank_ms"]),
    ("unknown faults key", "[faults]\nretries = 5\n" + FOUR, ["faults.'retries'", "max_retries", "disqualify_after"]),
    ("unknown server key", "[server]\naddress = 'x'\n" + FOUR, ["server.'address'", "host", "port", "tls_cert"]),
    ("unknown bot key", FOUR + 'colour = "red"\n', ["bots[4].'colour'", "command", "python", "remote"]),
    ("a kind's key misspelt", bots("a", "b", "c") + '\n[[bots]]\nname = "d"\nstdoi = "./bot"\n',
     ["bots[4].'stdoi'", "did you mean 'stdio'?"]),
    ("unknown gauntlet key", '[tournament]\nformat = "gauntlet"\n[gauntlet]\nchampion = "a"\nking = "b"\n' + FOUR,
     ["gauntlet.'king'", "champion"]),
    ("seed not a number", '[tournament]\nseed = "one"\n' + FOUR, ["tournament.seed", "whole number", "'one'"]),
    ("seed a float", "[tournament]\nseed = 1.5\n" + FOUR, ["tournament.seed", "whole number", "1.5"]),
    ("seed a boolean", "[tournament]\nseed = true\n" + FOUR, ["tournament.seed", "whole number", "True"]),
    ("negative seed", "[tournament]\nseed = -1\n" + FOUR, ["tournament.seed", "from 0", "-1"]),
    ("no deal sets", "[tournament]\ndeal_sets = 0\n" + FOUR, ["tournament.deal_sets", "from 1", "not 0"]),
    ("concurrency 0", "[tournament]\nconcurrency = 0\n" + FOUR, ["tournament.concurrency", "from 1 to 1024"]),
    ("concurrency too high", "[tournament]\nconcurrency = 5000\n" + FOUR, ["tournament.concurrency", "5000"]),
    ("fresh_process not a boolean", '[tournament]\nfresh_process = "yes"\n' + FOUR,
     ["tournament.fresh_process", "true or false"]),
    ("negative deadline", "[time]\ndeadline_ms = -5\n" + FOUR, ["time.deadline_ms", "from 0"]),
    ("the old connect timeout", "[time]\nconnect_timeout_s = 9\n" + FOUR,
     ["time.connect_timeout_s is now time.absent_after_s"]),
    ("negative absence", "[time]\nabsent_after_s = -1\n" + FOUR, ["time.absent_after_s", "from 0"]),
    ("unknown forfeit", '[tournament]\nforfeit = "kick"\n' + FOUR,
     ["tournament.forfeit", "wait, fallback, withdraw", "'kick'"]),
    ("negative grace", "[time]\nreconnect_grace_s = -1\n" + FOUR, ["time.reconnect_grace_s", "from 0"]),
    ("negative restarts", "[faults]\nrestarts = -1\n" + FOUR, ["faults.restarts", "from 0"]),
    ("negative retries", "[faults]\nmax_retries = -1\n" + FOUR, ["faults.max_retries", "from 0 to 100"]),
    ("fallback share over 100", "[faults]\nunranked_above_fallback_pct = 150\n" + FOUR,
     ["faults.unranked_above_fallback_pct", "a number from 0 to 100", "150"]),
    ("port out of range", "[server]\nport = 70000\n" + FOUR, ["server.port", "65535", "70000"]),
    ("bad tournament name", '[tournament]\nname = "a/b"\n' + FOUR, ["tournament.name", "'a/b'"]),
    ("missing bots", '[tournament]\nname = "x"\n', ["missing key 'bots'", "[[bots]]"]),
    ("bots not a list", '[bots]\nname = "x"\n', ["bots must be a list of [[bots]] tables"]),
    ("one bot", bots("solo"), ["at least 2 bots", "found 1"]),
    ("bot without a name", FOUR + '\n[[bots]]\npython = "m:C"\n', ["missing key bots[5].'name'"]),
    ("bot with a bad name", bots("a", "b", "c", "d/e"), ["bots[4].name", "'d/e'"]),
    ("duplicate names", bots("a", "b", "c", "a"), ["bots[4].name", "'a'", "used twice"]),
    ("bot of two kinds", FOUR + 'command = "x --arena {address}"\n',
     ["bot 'd'", "exactly one of", "found command, python"]),
    ("bot of no kind", bots("a", "b", "c") + '\n[[bots]]\nname = "d"\nseed = 3\n',
     ["bot 'd'", "exactly one of", "found none"]),
    ("remote without token", bots("a", "b", "c") + '\n[[bots]]\nname = "d"\nremote = true\n',
     ["bot 'd' is remote", "token_sha256", "callbreak-arena token", "token = "]),
    ("python without a class", bots("a", "b", "c") + '\n[[bots]]\nname = "d"\npython = "sample_bots"\n',
     ["bots[4].python", "module:Class"]),
    ("command list of numbers", bots("a", "b", "c") + '\n[[bots]]\nname = "d"\ncommand = ["x", 1]\n',
     ["bots[4].command", "strings"]),
    ("options not a table", FOUR + "options = 3\n", ["bots[4].options", "table of keyword arguments"]),
    ("unknown rules profile", '[rules]\nprofile = "klondike"\n' + FOUR,
     ["[rules]", "'klondike'", "nepali", "master", "bhoos", "pagat", "strict", "dy"]),
    ("unknown rules switch", "[rules]\nmust_ruff = true\n" + FOUR,
     ["[rules]", "'must_ruff'", "must_beat", "must_trump", "lower_trump"]),
    ("bad rules switch value", "[rules]\nrounds = 0\n" + FOUR, ["[rules]", "rounds"]),
    ("unknown format", '[tournament]\nformat = "knockout"\n' + FOUR,
     ["tournament.format", "round-robin", "gauntlet", "head-to-head", "swiss", "'knockout'"]),
    ("unknown rotation", '[tournament]\nrotation = "random"\n' + FOUR,
     ["tournament.rotation", "cyclic", "full", "'random'"]),
    ("round-robin of three", bots("a", "b", "c"), ["round-robin needs at least 4 bots", "found 3"]),
    ("gauntlet without champion", '[tournament]\nformat = "gauntlet"\n' + FOUR, ["gauntlet.'champion'", "required"]),
    ("gauntlet champion not a bot", '[tournament]\nformat = "gauntlet"\n[gauntlet]\nchampion = "zed"\n' + FOUR,
     ["gauntlet.champion", "'zed'", "not a bot", "a, b, c, d"]),
    ("gauntlet too small", '[tournament]\nformat = "gauntlet"\n[gauntlet]\nchampion = "a"\n' + bots("a", "b", "c"),
     ["gauntlet needs", "3 other bots"]),
    ("head-to-head a == b", '[tournament]\nformat = "head-to-head"\n[head-to-head]\na = "a"\nb = "a"\n' + FOUR,
     ["head-to-head.a and head-to-head.b", "two different bots"]),
    ("head-to-head b not a bot", '[tournament]\nformat = "head-to-head"\n[head-to-head]\na = "a"\nb = "z"\n' + FOUR,
     ["head-to-head.b", "'z'", "not a bot"]),
    ("head-to-head one opponent",
     '[tournament]\nformat = "head-to-head"\n[head-to-head]\na = "a"\nb = "b"\nopponents = ["c"]\n' + FOUR,
     ["head-to-head.opponents", "at least two"]),
    ("head-to-head opponent is a",
     '[tournament]\nformat = "head-to-head"\n[head-to-head]\na = "a"\nb = "b"\nopponents = ["a", "c"]\n' + FOUR,
     ["head-to-head.opponents", "must not include a or b"]),
    ("head-to-head opponent twice",
     '[tournament]\nformat = "head-to-head"\n[head-to-head]\na = "a"\nb = "b"\nopponents = ["c", "c"]\n' + FOUR,
     ["head-to-head.opponents", "'c'", "twice"]),
    ("head-to-head copies of a remote bot",
     '[tournament]\nformat = "head-to-head"\n[head-to-head]\na = "a"\nb = "r"\n' + bots("a")
     + '\n[[bots]]\nname = "r"\nremote = true\ntoken = "t"\n', ["'r' is remote", "cannot be copied", "opponents"]),
    ("format table of another format", '[tournament]\nformat = "swiss"\n[gauntlet]\nchampion = "a"\n' + FOUR,
     ["[gauntlet] is given", "'swiss'"]),
    ("swiss opening rounds 0", '[tournament]\nformat = "swiss"\n[swiss]\nopening_rounds = 0\n' + FOUR,
     ["swiss.opening_rounds", "from 1"]),
    ("deal_sets and deal_file", '[tournament]\ndeal_sets = 3\ndeal_file = "x.deals"\n' + FOUR,
     ["tournament.deal_sets or tournament.deal_file, not both"]),
    ("tls_cert without tls_key", '[server]\ntls_cert = "cert.pem"\n' + FOUR, ["tls_cert and server.tls_key", "both"]),
    ("tls_key without tls_cert", '[server]\ntls_key = "key.pem"\n' + FOUR, ["tls_cert and server.tls_key"]),
    ("tls_client_ca without tls", '[server]\ntls_client_ca = "ca.pem"\n' + FOUR,
     ["server.tls_client_ca needs server.tls_cert and server.tls_key"]),
    ("sessions_per_bot 0", "[server]\nsessions_per_bot = 0\n" + FOUR, ["server.sessions_per_bot", "from 1 to 64"]),
    # Tokens: never on a command line, hashed if you like, one per bot, and only for remote bots.
    ("{token} in a command", bots("a", "b", "c") + '\n[[bots]]\nname = "d"\n'
     'command = "{python} bot.py --arena {address} --token {token}"\n',
     ["bot 'd'", "{token} is no longer a placeholder", "CALLBREAK_TOKEN", "remove --token {token}"]),
    ("{token} in a command list", bots("a", "b", "c") + '\n[[bots]]\nname = "d"\n'
     'command = ["bot", "--token={token}"]\n', ["bot 'd'", "{token} is no longer a placeholder"]),
    ("token_sha256 not hex", bots("a", "b", "c") + '\n[[bots]]\nname = "d"\nremote = true\ntoken_sha256 = "abc"\n',
     ["bots[4].token_sha256", "64 hexadecimal digits", "callbreak-arena token", "'abc'"]),
    ("token and token_sha256", bots("a", "b", "c") + '\n[[bots]]\nname = "d"\nremote = true\ntoken = "t"\n'
     f'token_sha256 = "{"0" * 64}"\n', ["bot 'd'", "token or token_sha256, not both"]),
    ("token for a launched bot", bots("a", "b", "c") + '\n[[bots]]\nname = "d"\ncommand = "x --arena {address}"\n'
     'token = "t"\n', ["bot 'd' is not remote", "fresh token", "remove the key"]),
    ("token_sha256 for an in-process bot", bots("a", "b", "c") + f'token_sha256 = "{"0" * 64}"\n',
     ["bot 'c' is not remote and needs no token_sha256"]),
    ("two bots with one token", bots("a", "b") + '\n[[bots]]\nname = "c"\nremote = true\ntoken = "same"\n'
     f'\n[[bots]]\nname = "d"\nremote = true\ntoken_sha256 = "{token_sha256("same")}"\n',
     ["bots 'c' and 'd' have the same token", "every bot needs its own"]),
    # A table given as a plain value must be refused in words, not with a Python traceback.
    ("tournament not a table", "tournament = 5\n" + FOUR, ["tournament", "table"]),
    ("rules not a table", 'rules = "nepali"\n' + FOUR, ["rules", "table"]),
    ("time not a table", "time = 5\n" + FOUR, ["time", "table"]),
    ("swiss not a table", 'swiss = 5\n[tournament]\nformat = "swiss"\n' + FOUR, ["swiss", "table"]),
]


@pytest.mark.parametrize(("text", "words"), [(text, words) for _, text, words in BAD], ids=[i for i, _, _ in BAD])
def test_bad_configuration_is_refused_naming_the_key(text: str, words: list[str]) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    message = str(caught.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    assert "\n" not in message.strip() or "TOML" in message


GOOD = {
    "round-robin": FIVE,
    "gauntlet": '[tournament]\nformat = "gauntlet"\n[gauntlet]\nchampion = "a"\n' + FIVE,
    "head-to-head with a pool":
        '[tournament]\nformat = "head-to-head"\n[head-to-head]\na = "a"\nb = "b"\nopponents = ["c", "d", "e"]\n'
        + FIVE,
    "head-to-head with copies": '[tournament]\nformat = "head-to-head"\n[head-to-head]\na = "a"\nb = "b"\n'
                                + bots("a", "b"),
    "swiss": '[tournament]\nformat = "swiss"\n[swiss]\nopening_rounds = 3\n' + FIVE,
}


@pytest.mark.parametrize("fmt", list(GOOD))
def test_good_configuration_of_each_format_parses(fmt: str) -> None:
    config = parse_config(GOOD[fmt])
    assert config.format == fmt.split(" ")[0]
    assert config.bots[0].name == "a"
    assert config.bots[0].kind == "python"
    assert config.to_dict()["format"] == config.format


def test_format_options_are_read() -> None:
    assert parse_config(GOOD["gauntlet"]).format_options.to_dict() == {"champion": "a"}
    assert parse_config(GOOD["head-to-head with a pool"]).format_options.to_dict() == {
        "a": "a", "b": "b", "opponents": ["c", "d", "e"]}
    copies = parse_config(GOOD["head-to-head with copies"]).format_options
    assert copies.to_dict() == {"a": "a", "b": "b", "opponents": []}
    assert parse_config(GOOD["swiss"]).format_options.to_dict() == {"opening_rounds": 3}


EVERY_FORMAT = {
    **{fmt: GOOD[fmt] for fmt in ("round-robin", "gauntlet", "swiss")},
    "head-to-head": GOOD["head-to-head with a pool"],
    "sprt": '[tournament]\nformat = "sprt"\n[sprt]\na = "a"\nb = "b"\ndelta1 = 1.0\n' + bots("a", "b"),
}


@pytest.mark.parametrize("rotation", ["cyclic", "full"])
def test_every_format_replays_its_deal_sets_so_launched_bots_get_a_new_process_for_every_game(rotation: str) -> None:
    assert set(EVERY_FORMAT) == set(Format)  # a new format is looked at here
    for fmt, text in EVERY_FORMAT.items():
        config = parse_config(text.replace("[tournament]\n", f'[tournament]\nrotation = "{rotation}"\n'))
        assert config.fresh_process, fmt
        schedule = Schedule(bots=[b.name for b in config.bots], format=fmt, rotation=rotation, deal_sets=range(1, 3),
                            seed=1, options=config.format_options)
        games = schedule.round_assignments(1)
        tables = {(game.group, game.deal_set) for game in games}
        assert tables and all(sum((g.group, g.deal_set) == table for g in games) >= 4 for table in tables), fmt


def test_defaults() -> None:
    config = parse_config(FOUR)
    assert (config.name, config.seed, config.deal_sets, config.format, config.rotation) == (
        "tournament", 1, 8, "round-robin", "cyclic")
    assert config.concurrency == 4 and config.fresh_process  # every format replays its deal sets
    assert config.rules.profile_name == "nepali"
    assert config.table.deadline_ms == 2000 and config.table.max_retries == 3
    assert config.deal_file is None and config.tls_cert is None


def test_every_key_is_read() -> None:
    text = """
[tournament]
name = "league 1"
seed = 42
deal_sets = 3
format = "round-robin"
rotation = "full"
concurrency = 2
fresh_process = true
results = "out"

[rules]
profile = "bhoos"
redeal_below = 10

[time]
deadline_ms = 500
time_bank_ms = 3000
absent_after_s = 9
reconnect_grace_s = 2.5

[faults]
max_retries = 1
disqualify_after = 7
unresponsive_after = 5
restarts = 1
unranked_above_fallback_pct = 75

[server]
host = "0.0.0.0"
port = 5555
tls_cert = "c.pem"
tls_key = "k.pem"
tls_client_ca = "clients.pem"
sessions_per_bot = 3

[[bots]]
name = "cmd"
command = ["{python}", "-m", "sample_bots.random_bot", "--arena", "{address}"]
seed = 5

[[bots]]
name = "inproc"
python = "sample_bots.random_bot:RandomBot"
options = { }

[[bots]]
name = "far"
remote = true
token = "secret-token"

[[bots]]
name = "cmd2"
command = "{python} -m sample_bots.random_bot --arena {address}"

[[bots]]
name = "hashed"
remote = true
token_sha256 = "5E884898DA28047151D0E56F8DC6292773603D0D6AABBDD62A11EF721D1542D8"
"""
    config = parse_config(text, Path("/srv/league/league.toml"))
    assert config.name == "league 1" and config.seed == 42 and config.deal_sets == 3
    assert config.rotation == "full" and config.concurrency == 2 and config.fresh_process
    assert config.results == Path("/srv/league/out")
    assert config.rules.profile_name == "bhoos" and config.rules.redeal_below == 10
    assert (config.table.deadline_ms, config.table.time_bank_ms, config.absent_after) == (500, 3000, 9.0)
    assert (config.table.max_retries, config.disqualify_after) == (1, 7)
    assert (config.reconnect_grace, config.unresponsive_after, config.restarts, config.forfeit) == (2.5, 5, 1, "wait")
    assert config.unranked_above_fallback_pct == 75.0 and parse_config(FOUR).unranked_above_fallback_pct == 50.0
    # The standings alone read it: another share on a resumed folder plays the same games.
    assert config.to_dict()["operations"]["unranked_above_fallback_pct"] == 75.0 and "unranked" not in str(
        config.identity())
    assert (config.host, config.port) == ("0.0.0.0", 5555)
    assert config.tls_cert == Path("/srv/league/c.pem") and config.tls_key == Path("/srv/league/k.pem")
    assert config.tls_client_ca == Path("/srv/league/clients.pem") and config.sessions_per_bot == 3
    assert parse_config(FOUR).sessions_per_bot == 1 and parse_config(FOUR).tls_client_ca is None
    assert [b.kind for b in config.bots] == ["command", "python", "remote", "command", "remote"]
    assert config.bots[0].setup.argv[0] == "{python}" and config.bots[0].seed == 5
    assert config.bots[3].setup.argv == ("{python}", "-m", "sample_bots.random_bot", "--arena", "{address}")
    assert config.bot("far").setup.token == "secret-token"
    assert config.bot("hashed").setup.token_sha256 == token_sha256("password")  # read in lower case
    assert config.bot("hashed").setup.token == ""
    # The manifest must not leak a remote bot's token, nor its digest.
    assert "secret-token" not in str(config.to_dict()) and token_sha256("password") not in str(config.to_dict())


def test_name_defaults_to_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "spring-cup.toml"
    path.write_text(FOUR, encoding="utf-8")
    config = load_config(path)
    assert config.name == "spring-cup"
    assert config.source == path


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the configuration"):
        load_config(tmp_path / "nothing.toml")


def test_deal_file_is_relative_to_the_configuration(tmp_path: Path) -> None:
    config = parse_config('[tournament]\ndeal_file = "contest.deals"\n' + FOUR, tmp_path / "c.toml")
    assert config.deal_file == tmp_path / "contest.deals"


def test_to_dict_and_digest_are_stable() -> None:
    one, two = parse_config(GOOD["swiss"]), parse_config(GOOD["swiss"])
    assert one.to_dict() == two.to_dict()
    assert one.digest() == two.digest()
    assert len(one.digest()) == 64


@pytest.mark.parametrize(("before", "after"), [
    ("seed = 1\n", "seed = 2\n"),
    ('rotation = "cyclic"', 'rotation = "full"'),
    ("deadline_ms = 100", "deadline_ms = 101"),
    ("disqualify_after = 0", "disqualify_after = 9"),
    ('profile = "nepali"', 'profile = "pagat"'),
])
def test_digest_changes_with_any_key_of_the_identity(before: str, after: str) -> None:
    text = """
[tournament]
seed = 1
deal_sets = 4
rotation = "cyclic"
concurrency = 4
[rules]
profile = "nepali"
[time]
deadline_ms = 100
[faults]
disqualify_after = 0
[[bots]]
name = "a"
python = "sample_bots.random_bot:RandomBot"
seed = 11
options = { }
[[bots]]
name = "b"
python = "sample_bots.random_bot:RandomBot"
[[bots]]
name = "c"
python = "sample_bots.random_bot:RandomBot"
[[bots]]
name = "d"
python = "sample_bots.random_bot:RandomBot"
"""
    assert text.count(before) == 1
    changed = text.replace(before, after)
    assert parse_config(text).digest() != parse_config(changed).digest()


def test_digest_ignores_what_does_not_change_the_records() -> None:
    # Concurrency, the server, the absence policy, the deal sets and the bots change how much and how,
    # not what a recorded game means: a results folder may be resumed and amended with other values.
    base = parse_config("[tournament]\nconcurrency = 1\ndeal_sets = 3\n" + FOUR)
    other = parse_config('[tournament]\nconcurrency = 8\ndeal_sets = 9\nforfeit = "fallback"\n[server]\nport = 4000\n'
                         '[time]\nabsent_after_s = 5\nreconnect_grace_s = 1\n[faults]\nrestarts = 0\n'
                         + FOUR + '\n[[bots]]\nname = "late"\npython = "sample_bots.random_bot:RandomBot"\n')
    assert base.digest() == other.digest()


def test_cli_refuses_a_bad_configuration_with_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[tournament]\nseeds = 3\n" + FOUR, encoding="utf-8")
    assert main(["run", str(path), "--results", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("callbreak-arena: error: unknown key tournament.'seeds'")
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_cli_refuses_a_missing_configuration_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(tmp_path / "absent.toml"), "--results", str(tmp_path / "out")]) == 2
    assert "cannot read the configuration" in capsys.readouterr().err


def test_paths_are_absolute_even_from_a_relative_configuration_path() -> None:
    # The manifest must locate the deal file from any folder (verify, resume), so paths are resolved.
    config = parse_config('[tournament]\ndeal_file = "contest.deals"\nresults = "out"\n' + FOUR, Path("league.toml"))
    assert config.deal_file == Path.cwd() / "contest.deals"
    assert config.results == Path.cwd() / "out"
