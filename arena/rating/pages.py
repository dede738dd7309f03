"""The one way every page of the arena is rendered: the Jinja2 environment (:func:`environment`, held by
:class:`Templates`), the Content-Security-Policy that lets a page's own script run and nothing else
(:func:`policy`), and what report.html and the live page render with (:func:`render`, :func:`script`,
:func:`style`).

It sits in ``rating/``, the lowest layer with a page (report.html), so that every page may use it: the report and
the live board here, the seat's, the spectators' and the ladder's pages in ``web/``. Each :class:`Templates` reads
the ``templates`` folders of the packages it is given, the first that has a name winning:
``arena/rating/templates`` holds ``report.html`` (:mod:`arena.rating.html`; its sections in ``report_*.html``,
the pieces they share in ``report_macros.html``), ``live.html`` and ``board.html``
(:mod:`arena.rating.leaderboard`), their scripts (``*.js``) and styles (``*.css``; ``base.css`` is the shared
part, each page's own comes after it); ``arena/web/templates`` holds the web layer's own.

Autoescaping is on for every template, and a name a template does not define is an error, never an empty cell: a
value a template prints is escaped unless it is :class:`~markupsafe.Markup` already, so a name a bot chose can
never become markup. Templates come in two layouts (:class:`Layout`), each the one its pages were written in:

- :attr:`Layout.JOINED` (report.html, the live page, the ladder's site): in an ``.html`` or ``.js`` template a line
  break and the indentation after it are the template's layout, not the page's: they are removed when the
  template is read, so the page holds no whitespace between its tags (and a script is the one line its hash is
  taken of); a space the page needs is written inside a line. A quote in a value is written as
  :func:`html.escape` writes it (``&quot;``, ``&#x27;``).
- :attr:`Layout.LINES` (the seat's and the spectators' pages): the lines are the page's, but for the line of a
  block tag (``{% if %}``), which goes with its indentation; a quote in a value is written ``&#34;``, ``&#39;``.
"""

from __future__ import annotations

import base64
import enum
import functools
import hashlib
import html
import re
from typing import Any

import jinja2
import jinja2.ext
from markupsafe import Markup

__all__ = ["Layout", "Markup", "Templates", "environment", "policy", "render", "script", "style"]

_LAYOUT = re.compile(r"\n[ \t]*")


class Layout(enum.Enum):
    """How a template's lines become the page's (see the module docstring)."""

    JOINED = "joined"
    LINES = "lines"


class _Joined(jinja2.ext.Extension):
    """Removes the line breaks and indentation of ``.html`` and ``.js`` templates (:attr:`Layout.JOINED`)."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        if name is not None and name.endswith((".html", ".js")):
            return _LAYOUT.sub("", source)
        return source


def _escaped(value: object) -> object:
    """A value as a :attr:`Layout.JOINED` page prints it: escaped as :func:`html.escape` does (``&quot;``,
    ``&#x27;``, the entities those pages have always held), unless it is markup already; autoescaping then leaves
    it as it is."""
    if hasattr(value, "__html__"):
        return value
    return Markup(html.escape(str(value), quote=True))


def environment(*packages: str, layout: Layout = Layout.JOINED) -> jinja2.Environment:
    """The Jinja2 environment of the ``templates`` folders of ``packages`` (``"arena.rating"``), the first that has
    a name winning, in ``layout``: autoescaped, and strict about names a template does not define."""
    loaders = [jinja2.PackageLoader(package, "templates") for package in packages]
    loader = loaders[0] if len(loaders) == 1 else jinja2.ChoiceLoader(loaders)
    if layout is Layout.JOINED:
        return jinja2.Environment(
            loader=loader,
            autoescape=True,  # bots choose their names, versions and fault details: every value printed is escaped
            undefined=jinja2.StrictUndefined,  # a name a template misspells is an error, not an empty cell
            finalize=_escaped,
            extensions=[_Joined],
            keep_trailing_newline=True,
        )
    return jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                              lstrip_blocks=True)


class Templates:
    """The templates of ``packages`` as one :func:`environment` renders them."""

    def __init__(self, *packages: str, layout: Layout = Layout.JOINED) -> None:
        self.environment = environment(*packages, layout=layout)

    def render(self, template: str, **context: Any) -> str:
        """The template named ``template`` rendered with ``context``, every value escaped unless it is Markup."""
        return self.environment.get_template(template).render(**context)

    def script(self, template: str, **context: Any) -> Markup:
        """A page's script, rendered once: the text its ``<script>`` holds, which :func:`policy` takes the hash
        of."""
        return Markup(self.render(template, **context).strip())

    def style(self, *names: str) -> Markup:
        """A page's style: the files ``names`` as they are, one after the other (a style is text, not a
        template)."""
        return Markup("".join(self.text(name) for name in names))

    @functools.cache  # noqa: B019 (a few instances, each for the life of the program)
    def text(self, name: str) -> str:
        """A template's file as it is."""
        assert self.environment.loader is not None
        return self.environment.loader.get_source(self.environment, name)[0]


_TEMPLATES = Templates("arena.rating")


def render(template: str, **context: Any) -> str:
    """The template of ``rating/templates`` named ``template`` rendered with ``context`` (:meth:`Templates.render`)."""
    return _TEMPLATES.render(template, **context)


def script(template: str, **context: Any) -> Markup:
    """A script of ``rating/templates``, rendered once (:meth:`Templates.script`)."""
    return _TEMPLATES.script(template, **context)


def style(own: str) -> Markup:
    """A page's style: the part report.html and the live page share (``base.css``), then the page's own from the
    file ``own``."""
    return _TEMPLATES.style("base.css", own)


def policy(own_script: str, *more: str) -> str:
    """A Content-Security-Policy that fetches nothing, allows inline style, and runs no script but
    ``own_script`` (by its SHA-256 hash); ``more`` directives follow."""
    digest = base64.b64encode(hashlib.sha256(own_script.encode()).digest()).decode()
    return "; ".join(("default-src 'none'", "style-src 'unsafe-inline'", f"script-src 'sha256-{digest}'", *more))
