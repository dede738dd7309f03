"""What the two web pages share: the Jinja2 environment that renders them, the Content-Security-Policy that
lets a page's own script run and nothing else, and the style both pages start from.

The templates are package data in ``arena/rating/templates``: ``report.html`` (:mod:`arena.rating.html`; its
sections in ``report_*.html``, the pieces they share in ``report_macros.html``), ``live.html`` and
``board.html`` (:mod:`arena.rating.leaderboard`), their scripts (``*.js``) and styles
(``*.css``; ``base.css`` is the shared part, each page's own comes after it). Autoescaping is on for every
template: a value a template prints is escaped unless it is :class:`~markupsafe.Markup` already, so a name a
bot chose can never become markup.

In an ``.html`` or ``.js`` template a line break and the indentation after it are the template's layout, not
the page's: they are removed when the template is read, so the page holds no whitespace between its tags (and
a script is the one line its hash is taken of). A space the page needs is written inside a line.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import re
from typing import Any

import jinja2
import jinja2.ext
from markupsafe import Markup

__all__ = ["Markup", "policy", "render", "script", "style"]

_LAYOUT = re.compile(r"\n[ \t]*")


class _Layout(jinja2.ext.Extension):
    """Removes the line breaks and indentation of ``.html`` and ``.js`` templates (see the module docstring)."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        if name is not None and name.endswith((".html", ".js")):
            return _LAYOUT.sub("", source)
        return source


def _escaped(value: object) -> object:
    """A value as the page prints it: escaped as :func:`html.escape` does (``&quot;``, ``&#x27;``, the entities
    the pages have always held), unless it is markup already; autoescaping then leaves it as it is."""
    if hasattr(value, "__html__"):
        return value
    return Markup(html.escape(str(value), quote=True))


_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.PackageLoader("arena.rating", "templates"),
    autoescape=True,  # bots choose their names, versions and fault details: every value printed is escaped
    undefined=jinja2.StrictUndefined,  # a name a template misspells is an error, not an empty cell
    finalize=_escaped,
    extensions=[_Layout],
    keep_trailing_newline=True,
)


def render(template: str, **context: Any) -> str:
    """The template named ``template`` rendered with ``context``, every value escaped unless it is Markup."""
    return _ENVIRONMENT.get_template(template).render(**context)


def script(template: str, **context: Any) -> Markup:
    """A page's script, rendered once: the text its ``<script>`` holds and :func:`policy` takes the hash of."""
    return Markup(render(template, **context))


def policy(own_script: str, *more: str) -> str:
    """A Content-Security-Policy that fetches nothing, allows inline style, and runs no script but
    ``own_script`` (by its SHA-256 hash); ``more`` directives follow."""
    digest = base64.b64encode(hashlib.sha256(own_script.encode()).digest()).decode()
    return "; ".join(("default-src 'none'", "style-src 'unsafe-inline'", f"script-src 'sha256-{digest}'", *more))


def style(own: str) -> Markup:
    """A page's style: the part both pages share (``base.css``), then the page's own from the file ``own``."""
    return Markup(_text("base.css") + _text(own))


@functools.cache
def _text(name: str) -> str:
    """A template's file as it is (a style is text, not a template)."""
    assert _ENVIRONMENT.loader is not None
    return _ENVIRONMENT.loader.get_source(_ENVIRONMENT, name)[0]
