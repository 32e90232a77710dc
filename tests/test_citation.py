"""``CITATION.cff`` keeps the shape that CFF 1.2 requires (checked in full once with ``cffconvert
--validate``, which is not a dependency of the project): the required keys, known reference
types with their venue keys, and the version of ``pyproject.toml``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]

#: The reference types of the CFF 1.2.0 schema that this file uses or may reasonably use.
REFERENCE_TYPES = {"article", "book", "conference-paper", "generic", "proceedings", "report",
                   "software", "thesis", "unpublished"}


@pytest.fixture(scope="module")
def cff() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text())


def test_required_keys_and_version(cff):
    assert cff["cff-version"] == "1.2.0"
    assert {"message", "title", "authors", "type", "license"} <= set(cff)
    (version,) = re.findall(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(),
                            flags=re.M)
    assert str(cff["version"]) == version


def test_every_reference_has_a_known_type_and_the_keys_of_its_venue(cff):
    refs = cff["references"]
    assert len(refs) == 5                       # the papers the project implements
    for ref in refs:
        assert ref["type"] in REFERENCE_TYPES, ref["title"]
        assert ref["title"] and ref["authors"], ref
        assert all({"family-names", "given-names"} <= set(a) for a in ref["authors"]), ref
        if ref["type"] == "article":
            assert {"journal", "year"} <= set(ref), ref["title"]
        if ref["type"] == "conference-paper":
            assert {"collection-title", "year", "start", "end"} <= set(ref), ref["title"]
        if "date-published" in ref:
            assert isinstance(ref["date-published"], str)        # a quoted ISO date
            assert str(ref["year"]) == ref["date-published"][:4]
