"""pyproject.toml says what a build needs without a deprecation warning.

setuptools (since 77) warns on every build that ``project.license`` as a table
(``{ text = "MIT" }``) is deprecated; an SPDX string needs setuptools 77 or later, so the
build requirement says so. Checked by reading the file: a build in a test would download
setuptools.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_license_is_an_spdx_string_and_setuptools_can_read_it() -> None:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    assert data["project"]["license"] == "MIT"
    (setuptools,) = [r for r in data["build-system"]["requires"] if r.startswith("setuptools")]
    found = re.fullmatch(r"setuptools>=(\d+)(\.\d+)*", setuptools)
    assert found is not None and int(found.group(1)) >= 77, setuptools
