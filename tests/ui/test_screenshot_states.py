"""`make screenshots` keeps working: its list states render on the real window.

The whole run is ``make screenshots``; this renders the part that once failed on an import
(``devtools/screenshots.py`` imported the window's modules relatively, which only fails when the
state is drawn), and checks the pictures are real images of the window's size.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QImage

from devtools.screenshots import _run_list_states


async def test_the_list_states_render(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    await _run_list_states(data, tmp_path)
    for name in ("session-groups", "filter-no-matches", "about"):
        image = QImage(str(tmp_path / f"{name}.png"))
        assert not image.isNull(), name
        assert image.width() >= 300 and image.height() >= 200, (name, image.size())
