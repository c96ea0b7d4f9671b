"""The files around the code that a newcomer checks first: the licence matches the one
declared, the changelog opens with an Unreleased section, the version has one source (the
package metadata), ``dir(kernelmaps)`` shows the API and nothing else."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
import types
from pathlib import Path

import kernelmaps

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_licence_file_is_the_declared_bsd_3_clause():
    assert PYPROJECT["project"]["license"] == "BSD-3-Clause"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert re.search(r"Copyright \(c\) \d{4}, kernelmaps developers", text)
    # the three clauses and the disclaimer
    assert text.count("\n1. ") == text.count("\n2. ") == text.count("\n3. ") == 1
    assert "Neither the name of the copyright holder" in text
    assert "IS\" AND ANY EXPRESS OR IMPLIED WARRANTIES" in " ".join(text.split())


def test_changelog_opens_with_unreleased_then_versions():
    headings = re.findall(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(), flags=re.M)
    assert headings[0] == "Unreleased"
    assert headings[1] == f"{PYPROJECT['project']['version']} - 2026-11-23"


def test_one_version_everywhere():
    version = importlib.metadata.version("kernelmaps")
    assert version == PYPROJECT["project"]["version"] == kernelmaps.__version__


def test_no_invented_project_urls():
    # There is no public home page, repository or issue tracker yet: no URL is declared
    # until one exists (a dead link on a package index is worse than none).
    assert "urls" not in PYPROJECT["project"]


def test_dir_shows_the_public_api_only():
    names = dir(kernelmaps)
    public_modules = {name for name in names
                      if isinstance(getattr(kernelmaps, name), types.ModuleType)}
    assert set(names) == set(kernelmaps.__all__) | public_modules
    assert not {"Any", "TYPE_CHECKING", "annotations"} & set(names)
    assert not [name for name in names if name.startswith("_") and name != "__version__"]
    assert {"kernels", "maps", "landmarks"} <= public_modules
    for name in kernelmaps.__all__:  # everything listed is there (lazy names included)
        getattr(kernelmaps, name)
