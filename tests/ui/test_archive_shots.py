"""`make screenshots` keeps rendering the archive and search states of issue 20
(`devtools.archive_shots`), on the real window, in English and Chinese."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from devtools.archive_shots import run_archive_states

pytestmark = pytest.mark.timeout(180)


async def test_the_archive_and_search_states_render(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    await run_archive_states(tmp_path, out)
    names = ["export-file-dialog"] + [
        f"{state}{suffix}"
        for state in ("export-format-followed", "restore-not-a-backup", "search-long-title")
        for suffix in ("", "-zh")
    ]
    for name in names:
        image = QImage(str(out / f"{name}.png"))
        assert not image.isNull(), name
        assert image.width() >= 600 and image.height() >= 400, (name, image.size())
