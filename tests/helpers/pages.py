"""The standard library's HTML parser made into a small tree, to read the arena's pages back in tests."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    """An element of the parsed page."""

    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None) -> None:
        self.tag = tag
        self.attrs = attrs
        self.parent = parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def walk(self) -> Iterator[Node]:
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.walk()

    def all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        return [n for n in self.walk() if (tag is None or n.tag == tag) and (cls is None or cls in n.classes)]

    def by_id(self, ident: str) -> Node:
        found = [n for n in self.walk() if n.attrs.get("id") == ident]
        assert len(found) == 1, ident
        return found[0]

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)


class Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.current.children.append(Node(tag, dict(attrs), self.current))

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(text: str) -> Node:
    tree = Tree()
    tree.feed(text)
    tree.close()
    return tree.root


def cells(row: Node) -> list[str]:
    return [" ".join(cell.text().split()) for cell in row.all() if cell.tag in ("td", "th") and cell.parent is row]


def body_rows(table: Node) -> list[Node]:
    return [row for body in table.all("tbody") for row in body.all("tr")]


def asked(html: str) -> str:
    """What a seat's table (``GET /table``) asks of the person: ``call``, ``play``, or nothing."""
    found = re.search(r'data-asked="(\w*)"', html)
    assert found is not None, html[:300]
    return found.group(1)


def version(html: str) -> int:
    """The version of a seat's table, for ``GET /table?since=``."""
    found = re.search(r'data-version="(\d+)"', html)
    assert found is not None
    return int(found.group(1))
