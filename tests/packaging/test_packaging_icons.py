"""The app icon: the committed PNG, .ico and .icns files are current renders of the SVG.

Rendering goes through packaging/render_icons.py and Qt's own SVG renderer, as the committed
files were made; a changed SVG without re-rendered PNGs fails here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from PySide6.QtGui import QColor, QImage, QImageReader

REPO = Path(__file__).resolve().parents[2]
ICONS = REPO / "resources" / "icons"


@pytest.fixture(scope="module")
def render_icons() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "render_icons", REPO / "packaging" / "render_icons.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _max_difference(a: QImage, b: QImage) -> int:
    worst = 0
    for y in range(a.height()):
        for x in range(a.width()):
            pa, pb = a.pixelColor(x, y), b.pixelColor(x, y)
            worst = max(
                worst,
                abs(pa.red() - pb.red()),
                abs(pa.green() - pb.green()),
                abs(pa.blue() - pb.blue()),
                abs(pa.alpha() - pb.alpha()),
            )
    return worst


def test_committed_pngs_are_current_renders_of_the_svg(
    qapp: object, render_icons: ModuleType, tmp_path: Path
) -> None:
    written = render_icons.render(ICONS / "continuo.svg", tmp_path)
    assert {p.name for p in written} >= {f"continuo-{s}.png" for s in render_icons.SIZES}
    for size in (16, 48, 128):  # every size is rendered alike; these keep the test quick
        fresh = QImage(str(tmp_path / f"continuo-{size}.png"))
        committed = QImage(str(ICONS / f"continuo-{size}.png"))
        assert committed.size() == fresh.size()
        # A small tolerance: antialiasing may differ by a step between Qt versions.
        assert _max_difference(committed, fresh) <= 8, f"continuo-{size}.png is stale"


def test_each_png_is_square_transparent_at_the_corners_and_solid_inside(qapp: object) -> None:
    for size in (16, 24, 32, 48, 64, 128, 256, 512):
        image = QImage(str(ICONS / f"continuo-{size}.png"))
        assert (image.width(), image.height()) == (size, size)
        assert image.hasAlphaChannel()
        assert image.pixelColor(size - 1, 0).alpha() == 0  # the bubble is rounded
        centre_left = image.pixelColor(size // 6, size // 3)  # on the bubble, off the loop
        assert centre_left.alpha() == 255
        assert centre_left != QColor("white")


def test_windows_and_macos_icons_hold_every_size(qapp: object) -> None:
    ico = QImageReader(str(ICONS / "continuo.ico"))
    assert ico.imageCount() == 7
    sizes = set()
    for _ in range(ico.imageCount()):
        sizes.add(ico.read().width())
        ico.jumpToNextImage()
    assert sizes == {16, 24, 32, 48, 64, 128, 256}
    icns = QImageReader(str(ICONS / "continuo.icns"))
    assert icns.canRead() and icns.imageCount() == 6
