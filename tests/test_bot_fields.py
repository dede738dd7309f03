"""Every field a bot receives is listed, with why it reveals nothing beyond what its seat may know, in
docs/security.md ("Every field a bot receives"), and the list is read from there: the fields of every message
the arena sends over gRPC (walked in the protocol's descriptors), the keys of the stdio lines and the Bhoos
requests a real game sends real bot processes, and the attributes of the bot kit's view and of the in-process
view. A field sent and not listed fails, and so does one listed and no longer sent."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor

from arena.core.dealing import seeded_deals
from arena.core.game import Game
from arena.core.rules import Rules
from arena.event.setup.config import GUESSABLE_SEED, TournamentConfig, parse_config
from arena.kit.view import view_from_proto
from arena.transports.grpc.encoder import RequestEncoder
from arena.transports.grpc.wire import rules_to_proto
from protocol import callbreak_pb2 as pb
from tests.helpers.bhoos import BHOOS_BOT, serving
from tests.helpers.messages import encoded_view
from tests.helpers.runs import RANDOM, ROOT, cli, kinds_text, run, write

SECURITY = ROOT / "docs" / "security.md"
SECTION = "## Every field a bot receives"
TRANSPORTS = {"grpc": "### Over gRPC", "stdio": "### Over stdio", "bhoos": "### Over Bhoos HTTP",
              "kit": "### The bot kit's view", "in-process": "### The in-process view"}
"""Each transport's subsection, by the start of its heading."""

STDIO_SPY = '''
import json, sys
for line in sys.stdin:
    print("SEEN " + line.strip(), file=sys.stderr, flush=True)
    request = json.loads(line)
    if request["type"] == "call":
        print(json.dumps({"call": min(request["legal_calls"])}), flush=True)
    elif request["type"] == "play":
        print(json.dumps({"card": request["legal_cards"][0]}), flush=True)
'''
"""A stdio bot that writes every line it is sent to its log, and plays the first legal card."""


def documented() -> dict[str, set[str]]:
    """The fields docs/security.md lists, by transport: the names in backticks in the first cell of each row."""
    text = SECURITY.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/security.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    out: dict[str, set[str]] = {}
    current = None
    for line in section.splitlines():
        if line.startswith("### "):
            current = next((key for key, heading in TRANSPORTS.items() if line.startswith(heading)), None)
            assert current is not None, f"a subsection no transport owns: {line}"
            out[current] = set()
        elif current is not None and line.startswith("|") and not re.match(r"\|\s*(field|-)", line):
            first = line.split("|")[1]
            names = re.findall(r"`([^`]+)`", first)
            assert names, f"a row that names no field: {line}"
            out[current].update(names)
    assert set(out) == set(TRANSPORTS), "docs/security.md lists fields for every transport"
    return out


def leaves(values: list[Any]) -> set[str]:
    """The keys of JSON values as paths (:func:`paths`), but for those that only hold others."""
    found = set().union(*(paths(value) for value in values))
    return {p for p in found if not any(other.startswith((p + ".", p + "[].")) for other in found)}


def paths(value: Any, prefix: str = "") -> set[str]:
    """The keys of a JSON value as paths: ``a.b`` inside objects, ``a[].b`` inside lists of objects, and
    ``<id>`` for the players' ids the Bhoos body keys an object by."""
    out: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            name = "<id>" if re.fullmatch(r"P[0-3]", key) else key
            path = f"{prefix}.{name}" if prefix else name
            out.add(path)
            out |= paths(inner, path)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                out |= paths(item, f"{prefix}[]")
    return out


def test_every_field_of_every_message_the_arena_sends_over_grpc_is_listed() -> None:
    fields: set[str] = set()
    seen: set[str] = set()

    def walk(message: Descriptor) -> None:
        if message.full_name in seen:
            return
        seen.add(message.full_name)
        for field in message.fields:
            fields.add(f"{message.name}.{field.name}")
            if field.message_type is not None:
                walk(field.message_type)

    walk(pb.ConnectResponse.DESCRIPTOR)  # what the arena sends: welcome, refusal, requests, events, notices
    assert {"Welcome", "Refusal", "CallRequest", "PlayRequest", "SeatView", "Event", "Notice", "Redeal"} <= \
        {name.rsplit(".", 1)[1] for name in seen}
    assert fields == documented()["grpc"]


def test_every_key_of_the_stdio_lines_of_a_real_game_is_listed(tmp_path: Path) -> None:
    (tmp_path / "spy").mkdir()
    spy = write(tmp_path / "spy" / "spy.py", STDIO_SPY)
    text = kinds_text([("spy", "stdio", f"{{python}} {spy}"), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                       ("r3", "python", RANDOM)], name="fields", seed=11, rules="rounds = 2")
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.faults) == (4, 0)
    lines = [json.loads(line.split("SEEN ", 1)[1]) for line in (results / "logs" / "spy.log").read_text().splitlines()
             if "SEEN " in line]
    assert {line["type"] for line in lines} == {"call", "play", "game_over"}
    assert leaves(lines) == documented()["stdio"]


@pytest.fixture
def bhoos_bot(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The contest-style bot of the Bhoos tests, started by the test and writing every request's headers and
    body to its log: its URL and its log."""
    script = BHOOS_BOT.replace(
        '    def do_GET(self):\n', '    def do_GET(self):\n'
        '        print("HEAD " + json.dumps(dict(self.headers)), file=sys.stderr, flush=True)\n').replace(
        '        body = json.loads(', '        print("HEAD " + json.dumps(dict(self.headers)), file=sys.stderr, '
        'flush=True)\n        body = json.loads(')
    assert script.count("HEAD ") == 2
    bot = write(tmp_path / "bot.py", script)
    log = tmp_path / "bot.log"
    with serving(bot, "modern", log) as url:
        yield url, log


def test_every_header_and_key_of_the_bhoos_requests_of_a_real_game_is_listed(
    tmp_path: Path, bhoos_bot: tuple[str, Path],
) -> None:
    url, log = bhoos_bot
    text = kinds_text([("url", "bhoos_url", url), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                       ("r3", "python", RANDOM)], name="fields", seed=11, rules='profile = "bhoos"\nrounds = 2')
    summary = run(write(tmp_path / "t.toml", text), tmp_path / "results")
    assert (summary.played, summary.faults) == (4, 0)
    lines = log.read_text().splitlines()
    headers = {key for line in lines if line.startswith("HEAD ") for key in json.loads(line[5:])}
    bodies = [json.loads(line.split(" ", 2)[2]) for line in lines if line.startswith("BODY ")]
    assert {line.split(" ", 2)[1] for line in lines if line.startswith("BODY ")} == {"/bid", "/play"}
    assert headers | leaves(bodies) == documented()["bhoos"]


def _view_names(view: object) -> set[str]:
    return {name for name in dir(view) if not name.startswith("__")}


def test_every_attribute_of_the_bot_kits_view_is_listed() -> None:
    rules = Rules.profile("nepali")
    game = Game(rules, seeded_deals(3, 1), seat_key=bytes(32))
    view = game.view(game.current_seat)
    msg = encoded_view(RequestEncoder(rules_to_proto(rules)), view, ("a", "b", "c", "d"), "r1-g1-d1-p0", "t1")
    remote = view_from_proto(msg, "t1", legal_calls=list(view.legal_calls))
    assert _view_names(remote) == documented()["kit"]


def test_every_attribute_of_the_in_process_view_is_listed() -> None:
    game = Game(Rules.profile("nepali"), seeded_deals(3, 1), seat_key=bytes(32))
    view = game.view(game.current_seat)
    names = _view_names(view) | {f"public.{name}" for name in _view_names(view.public)}
    assert names == documented()["in-process"]


def test_a_guessable_seed_is_named_when_a_bot_plays_outside_the_arenas_process() -> None:
    """The deal-set number a bot is told gives it every deal once it knows the seed, and a small seed it finds by
    trying them: the configuration says so of a seed below 2**32 when any bot plays outside the arena's process."""
    others = "".join(f'[[bots]]\nname = "p{n}"\npython = "{RANDOM}"\n' for n in range(3))

    def config(seed: int, table: str = 'stdio = "{python} bot.py"', deal_file: bool = False) -> TournamentConfig:
        deals = 'deal_file = "x.deals"\n' if deal_file else f"seed = {seed}\n"
        return parse_config(f'[tournament]\n{deals}[[bots]]\nname = "a"\n{table}\n{others}')

    assert config(7).guessable_seed() and config(GUESSABLE_SEED - 1).guessable_seed()
    assert not config(GUESSABLE_SEED).guessable_seed()
    assert not config(7, f'python = "{RANDOM}"').guessable_seed()  # every bot in the organiser's process
    assert not config(7, deal_file=True).guessable_seed()  # the deals are the file's (which must stay secret)
    for table in ('command = "{python} bot.py --arena {address}"', 'bhoos_url = "http://127.0.0.1:7000"',
                  f'remote = true\ntoken = "{"t" * 32}"'):
        assert config(7, table).guessable_seed()


def test_run_warns_of_a_guessable_seed_in_one_sentence_that_names_the_fix(tmp_path: Path) -> None:
    (tmp_path / "spy").mkdir()
    spy = write(tmp_path / "spy" / "spy.py", STDIO_SPY)
    text = kinds_text([("spy", "stdio", f"{{python}} {spy}"), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                       ("r3", "python", RANDOM)], name="guess", seed=7, rules="rounds = 1")
    done = cli("run", write(tmp_path / "t.toml", text), "--results", tmp_path / "results", "--no-progress")
    assert done.returncode == 0, done.stderr
    lines = done.stderr[done.stderr.index("callbreak-arena: warning: tournament.seed = 7 "):].splitlines()[:3]
    assert all(len(line) <= 120 for line in lines)
    sentence = " ".join(line.removeprefix("callbreak-arena:").strip() for line in lines)
    assert sentence.endswith("instead (docs/security.md).") and ". " not in sentence  # one sentence
    suggested = int(re.search(r"use seed = (\d+) instead", sentence).group(1))  # type: ignore[union-attr]
    assert GUESSABLE_SEED <= suggested < 2**63 and not parse_config(
        text.replace("seed = 7", f"seed = {suggested}")).guessable_seed()
