"""Render the app icon's PNG sizes from its SVG with Qt's own SVG renderer.

The SVG (`resources/icons/continuo.svg`) is the source; the PNGs beside it are committed so
that neither the bundle build nor `make install-desktop` needs an SVG toolchain. Run this
after changing the SVG:

    .venv/bin/python packaging/render_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The freedesktop hicolor sizes launchers and window managers ask for, plus 512 for HiDPI.
SIZES: tuple[int, ...] = (16, 24, 32, 48, 64, 128, 256, 512)

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"


def png_path(size: int, folder: Path = ICONS) -> Path:
    """Return where the PNG of one size lives."""
    return folder / f"continuo-{size}.png"


def render(svg: Path = ICONS / "continuo.svg", folder: Path = ICONS) -> list[Path]:
    """Render `svg` to one square PNG per size in `folder` and return their paths.

    Raises:
        ValueError: the SVG could not be parsed.
    """
    # A QGuiApplication is needed for QPainter on images; offscreen keeps it headless.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not a valid SVG; fix it and run this script again.")
    written = []
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter)
        painter.end()
        path = png_path(size, folder)
        if not image.save(str(path), "PNG"):
            raise OSError(f"Could not write {path}; check that the folder is writable.")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in render():
        print(p.relative_to(Path.cwd()) if p.is_relative_to(Path.cwd()) else p)
    sys.exit(0)
