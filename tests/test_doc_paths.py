"""Every file of the project that the README, docs/ and the .proto name by its path is there: a module
moved or a benchmark renamed without its documents fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import docs
from tests.helpers.docs import ROOT

PATH = re.compile(r"\b(?:arena|benchmarks|tests|sample_bots|scripts|protocol)/[\w/.-]*\w\.(?:py|proto|md|toml)\b")
DOCUMENTS = [*docs.DOCUMENTS, *sorted((ROOT / "protocol").glob("*.proto"))]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_a_document_names_exists(document: Path) -> None:
    named = set(PATH.findall(document.read_text(encoding="utf-8")))
    assert sorted(path for path in named if not (ROOT / path).exists()) == []


def test_the_pattern_finds_paths() -> None:
    found = PATH.findall("see `arena/core/rules.py`, benchmarks/engine.py and tests/helpers/runs.py.")
    assert found == ["arena/core/rules.py", "benchmarks/engine.py", "tests/helpers/runs.py"]
