"""The ``ladder`` commands: ``init`` makes a standing ladder, ``serve`` runs it (its player and its site),
``add`` and ``import`` make entrants, ``submit`` sends a version to a running ladder's site, and ``check``
proves the database and the records agree."""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from arena.cli.usage import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, Parser, UsageError, say
from arena.ladder import DATABASE_FILE, SETTINGS_FILE

if TYPE_CHECKING:
    from arena.ladder.control import Ladder

TOKEN_VARIABLE = "CALLBREAK_TOKEN"
"""Where ``ladder submit`` finds the token when ``--token`` is not given (a command line is visible to others)."""
UPLOAD_TIMEOUT_S = 120.0


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """Adds ``ladder`` and its ``init``."""
    ladder = sub.add_parser(
        "ladder", help="a standing ladder: bots submitted at any time, played in duplicate blocks and rated",
        description="A standing ladder keeps running: entrants submit versions of their bot whenever they like, "
        "and each version is checked, plays duplicate blocks and is rated. Its folder holds its settings "
        f"({SETTINGS_FILE}) and, unless you choose another database, its SQLite database ({DATABASE_FILE}). "
        "See docs/ladder.md.",
    )
    what = ladder.add_subparsers(dest="ladder_command", required=True, metavar="WHAT", parser_class=Parser)
    init = what.add_parser(
        "init", help="make a new ladder: its folder, settings, database and the organiser's token",
        description=f"Make a new ladder in the folder DIR (created if it is not there): write {SETTINGS_FILE} "
        "with every setting at its default and a comment on each (edit it afterwards), create the database "
        "with every table, and print the organiser's token. Keep the token secret: it is what lets you run "
        "the ladder, and it is shown only this once (the database keeps only its SHA-256 digest). A folder "
        f"that already holds a {SETTINGS_FILE} is refused and left as it is.",
    )
    init.add_argument("folder", type=Path, metavar="DIR", help="the ladder's folder")
    init.add_argument("--database", default=None, metavar="URL",
                      help=f"where the database is, as a URL, e.g. postgresql+psycopg://USER:PASSWORD@HOST/NAME "
                      f"(default: the SQLite file {DATABASE_FILE} in DIR)")
    init.set_defaults(func=_cmd_init)

    serve = what.add_parser(
        "serve", help="run the ladder: check new versions, play and rate blocks, and serve its web site",
        description="Run the ladder in DIR until stopped (Ctrl-C or SIGTERM): check each new version in the "
        "sandbox, choose and play duplicate blocks, rate them, and serve the web site and its JSON API (/api/). "
        "The site listens on loopback unless --host says otherwise; remote entrants' bots connect to the gRPC "
        "address printed ([remote] in ladder.toml). Stopped at any moment, even by kill -9, it loses nothing: "
        "run it again and the blocks in play resume. Put it behind a reverse proxy for TLS (docs/ladder.md).",
    )
    serve.add_argument("folder", type=Path, metavar="DIR", help="the ladder's folder")
    serve.add_argument("--host", default="127.0.0.1", metavar="H",
                       help="the address the site listens on (default: 127.0.0.1, this machine only; 0.0.0.0: all)")
    serve.add_argument("--port", type=int, default=8080, metavar="P",
                       help="the site's port (default: 8080; 0: a free one, printed)")
    serve.add_argument("--tls-cert", type=Path, metavar="FILE",
                       help="serve HTTPS with this certificate chain (PEM; with --tls-key)")
    serve.add_argument("--tls-key", type=Path, metavar="FILE", help="the certificate's private key (PEM)")
    serve.add_argument("--proxy", default="", metavar="ADDRESS",
                       help="the address of a reverse proxy in front of the site (e.g. 127.0.0.1): the client "
                       "address and scheme it forwards (X-Forwarded-For, X-Forwarded-Proto) are believed from it")
    serve.set_defaults(func=_cmd_serve)

    add = what.add_parser(
        "add", help="add an entrant and print their token",
        description="Add an entrant to the ladder in DIR and print their token, once (the database keeps its "
        "digest only): hand it to them alone. They log in to the site with it and submit versions. With "
        "--python their only version is that class, playing in the ladder's own process (a house bot, or a "
        "reference); with --remote their version is their own bot, connecting to the ladder's gRPC port with a bot "
        "token of its own, printed after the site's token (it opens nothing on the site; the entrant's page makes a "
        "new one).",
    )
    add.add_argument("folder", type=Path, metavar="DIR", help="the ladder's folder")
    add.add_argument("name", metavar="NAME", help="the entrant's name: 1-34 letters, digits, spaces or ._+#-")
    add.add_argument("--display", default="", metavar="TEXT", help="the name the site shows (default: NAME)")
    kind = add.add_mutually_exclusive_group()
    kind.add_argument("--python", default="", metavar="MODULE:CLASS",
                      help="the entrant's version is this in-process class (MODULE importable here), "
                      "e.g. mybots.strong:StrongBot")
    kind.add_argument("--remote", action="store_true",
                      help="the entrant's bot connects by itself, with the bot token printed after the site's token")
    add.set_defaults(func=_cmd_add)

    imports = what.add_parser(
        "import", help="make every student of a classroom roster an entrant, with the token they hold",
        description="Make each student of the roster file (roster.toml, docs/classroom.md) an entrant of the "
        "ladder in DIR, with the token they already hold; students already entrants are left as they are. Their "
        "versions are the files they submit; a bot that connects by itself needs a bot token, which an entrant "
        "makes on their own page of the site.",
    )
    imports.add_argument("folder", type=Path, metavar="DIR", help="the ladder's folder")
    imports.add_argument("roster", type=Path, metavar="ROSTER", help="the roster file")
    imports.set_defaults(func=_cmd_import)

    submit = what.add_parser(
        "submit", help="send a version of your bot to a running ladder",
        description="Send PATH to the ladder whose site is at URL, as the entrant whose token is given: a .py file "
        "(a Python bot with the bot kit) or a folder (with bot.json for a stdio or command bot, as `roster submit` "
        f"takes). The token comes from --token or, better (a command line is visible to others), from "
        f"{TOKEN_VARIABLE}. The version is checked before it plays: the site's entrant page shows the check.",
    )
    submit.add_argument("path", type=Path, metavar="PATH", help="your bot.py, or your bot's folder")
    submit.add_argument("--url", required=True, metavar="URL", help="the ladder site's address, e.g. http://host:8080")
    submit.add_argument("--token", default=None, metavar="TOKEN", help=f"your token (default: ${TOKEN_VARIABLE})")
    submit.set_defaults(func=_cmd_submit)

    check = what.add_parser(
        "check", help="prove the ladder's database and its records agree",
        description="Check the ladder in DIR: every done block's records verify (as `callbreak-arena verify`) and "
        "hold its games; every block's stored results, every rating and its history, and every test's LLR are "
        "what the records give. Exit status 0 when all agree, 1 with a line for each disagreement.",
    )
    check.add_argument("folder", type=Path, metavar="DIR", help="the ladder's folder")
    check.set_defaults(func=_cmd_check)


def _cmd_init(args: argparse.Namespace) -> int:
    settings_file = args.folder / SETTINGS_FILE
    if settings_file.exists():
        raise UsageError(f"{args.folder} already holds a ladder ({settings_file} exists): nothing was changed; "
                         "choose a new folder")
    from arena.ladder.founding import ORGANISER, found_ladder

    try:
        founded = found_ladder(args.folder, args.database)
    except FileExistsError:  # made between the check above and the write
        raise UsageError(f"{args.folder} already holds a ladder ({settings_file} exists): nothing was changed; "
                         "choose a new folder") from None
    print(f"# the token of the ladder's {ORGANISER}: keep it secret; it is not shown again")
    print(founded.token)
    say(f"made the ladder {founded.settings.name!r} in {args.folder}: settings in {settings_file}, database at "
        f"schema {founded.revision}")
    return EXIT_OK


def _open(folder: Path) -> Ladder:
    if not (folder / SETTINGS_FILE).is_file():
        raise UsageError(f"{folder} holds no ladder (no {SETTINGS_FILE}): `callbreak-arena ladder init {folder}` makes "
                         "one")
    from arena.ladder.control import Ladder

    return Ladder.open(folder)


def _cmd_serve(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be a port from 0 to 65535, not {args.port}")
    if (args.tls_cert is None) != (args.tls_key is None):
        raise UsageError("--tls-cert and --tls-key go together: give both, or neither")
    tls = (args.tls_cert, args.tls_key) if args.tls_cert is not None else None
    ladder = _open(args.folder)  # refuses a folder without a ladder before the ladder's modules are imported
    import asyncio

    from arena.ladder.founding import open_to_others
    from arena.ladder.schema import upgrade
    from arena.ladder.service import LadderService
    from arena.web.ladder import LadderSite

    try:
        warnings = _check_limits(ladder)
    except UsageError:
        ladder.close()
        raise
    exposed = open_to_others(ladder.folder)
    warnings += [exposed] if exposed else []
    upgrade(ladder.engine)
    stopped_by: list[str] = []

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def stopping(name: str) -> None:
            stopped_by.append(name)
            stop.set()

        for number, name in ((signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM")):
            loop.add_signal_handler(number, stopping, name)
        service = LadderService(ladder, log=say)
        site = LadderSite(ladder)
        address = await site.start(args.host, args.port, tls=tls, proxy=args.proxy)
        secure = " over TLS" if ladder.settings.remote.tls_cert is not None else ""
        print(f"ladder {ladder.settings.name!r}: site at http{'s' if tls else ''}://{address}/, remote bots connect to "
              f"{service.remote_address}{secure}", flush=True)
        if ladder.settings.remote.tls_cert is None and ladder.settings.remote.host not in ("127.0.0.1", "::1",
                                                                                            "localhost"):
            warnings.append(f"remote bots connect to {service.remote_address} in plaintext, their bot tokens "
                            "readable on the network: give [remote] tls_cert and tls_key in ladder.toml")
        for warning in warnings:
            say(f"warning: {warning}")
        try:
            await service.run(stop)
        finally:
            await site.stop()

    try:
        asyncio.run(serve())
    finally:
        ladder.close()
    if stopped_by:
        say(f"stopped by {stopped_by[0]}; the blocks in play resume when the ladder is served again")
        return EXIT_INTERRUPTED if stopped_by[0] == "Ctrl-C" else EXIT_TERMINATED
    return EXIT_OK


def _check_limits(ladder: Ladder) -> list[str]:
    """What limits of ``[sandbox]`` this machine cannot give the uploads, a sentence each; refuses, under ``limits =
    "require"`` (the ladder's default), to serve a ladder whose uploads would run without a cap on their processes
    or their ``/tmp``."""
    from arena.event.launch.sandbox import bwrap_problem, shortfalls

    sandbox = ladder.settings.sandbox
    short = shortfalls(sandbox, sandbox.mode != "off" and bwrap_problem() is None)
    required = [s for s in short if s.required]
    if required and sandbox.limits == "require":
        raise UsageError(f"this machine cannot limit {required[0].text}, and [sandbox] limits = \"require\" in "
                         f"{SETTINGS_FILE} runs no upload without it: serve the ladder where it can "
                         "(docs/security.md), or set limits = \"warn\" to run uploads anyway")
    return [f"uploads run without a limit on {shortfall.text}" for shortfall in short]


def _cmd_add(args: argparse.Namespace) -> int:
    ladder = _open(args.folder)
    try:
        ladder.require_schema()
        token = ladder.add_entrant(args.name, args.display, python=args.python, remote=args.remote)
        bot_token = ladder.bot_token(args.name) if args.remote else ""
    finally:
        ladder.close()
    print(f"# the token of {args.name}: hand it to them alone; it is not shown again")
    print(token)
    if bot_token:
        print(f"# the bot token of {args.name}: their bot connects with it (in CALLBREAK_TOKEN); it opens nothing on "
              "the site, and their page makes a new one")
        print(bot_token)
    return EXIT_OK


def _cmd_import(args: argparse.Namespace) -> int:
    ladder = _open(args.folder)
    from arena.ladder.accounts import import_roster

    try:
        ladder.require_schema()
        with ladder.session() as session:
            done = import_roster(session, args.roster)
    finally:
        ladder.close()
    added = [name for name, new in done if new]
    kept = [name for name, new in done if not new]
    say(f"{len(added)} entrants added from {args.roster}" + (f"; {len(kept)} left as they were (already entrants, "
        "or revoked)" if kept else ""))
    return EXIT_OK


def _packed(path: Path) -> tuple[str, bytes]:
    """The upload of ``path``: a .py file as it is, a folder as a gzipped tar of its files."""
    import tarfile

    from arena.event.setup.submissions import walk

    if not path.exists():
        raise UsageError(f"{path} does not exist: give your bot.py, or your bot's folder")
    if path.is_file():
        if path.suffix != ".py":
            raise UsageError(f"{path} is not a .py file: a bot in another language is submitted as a folder with its "
                             "bot.json (docs/classroom.md)")
        return path.name, path.read_bytes()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for entry in walk(path):  # refuses devices, pipes and links out before anything is sent
            if entry.link:
                raise UsageError(f"{path / entry.relative} is a link: a ladder takes files and folders only; put the "
                                 "file itself there")
            archive.add(path / entry.relative, arcname=entry.relative.as_posix(),
                        recursive=not stat.S_ISDIR(entry.stat.st_mode))
    return f"{path.resolve().name or 'bot'}.tar.gz", buffer.getvalue()


def _cmd_submit(args: argparse.Namespace) -> int:
    import urllib.error
    import urllib.parse
    import urllib.request
    import uuid

    token = (args.token if args.token is not None else os.environ.get(TOKEN_VARIABLE, "")).strip()
    if not token:
        raise UsageError(f"give your token in {TOKEN_VARIABLE} (or --token)")
    url = args.url.rstrip("/")
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise UsageError(f"--url must be the site's address, http://HOST:PORT or https://..., not {args.url!r}")
    filename, data = _packed(args.path)
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(f"{url}/api/submit", data=body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(request, timeout=UPLOAD_TIMEOUT_S) as answer:
            reply = json.loads(answer.read(1 << 20) or b"{}")
    except urllib.error.HTTPError as err:
        try:
            reply = json.loads(err.read(1 << 20) or b"{}")
        except ValueError:
            reply = {}
        say(f"refused ({err.code}): {reply.get('error') or err.reason}")
        return EXIT_FAILURE
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        say(f"cannot reach the ladder at {url}: {reason}")
        return EXIT_FAILURE
    print(f"submitted {reply.get('version')}: {reply.get('state')}; its check and games: {url}{reply.get('page', '')}")
    return EXIT_OK


def _cmd_check(args: argparse.Namespace) -> int:
    ladder = _open(args.folder)
    from arena.ladder.consistency import check_ladder

    try:
        ladder.require_schema()
        found = check_ladder(ladder)
    finally:
        ladder.close()
    for problem in found.problems:
        print(f"disagreement: {problem}")
    if found.ok:
        print(f"ok: {found.blocks} blocks ({found.games} games) verify and agree with the database; "
              f"{found.versions_rated} ratings and {found.tests} tests recomputed from the records")
        return EXIT_OK
    print(f"{len(found.problems)} disagreement{'s' if len(found.problems) != 1 else ''}", file=sys.stderr)
    return EXIT_FAILURE
