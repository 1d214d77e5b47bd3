"""Render the app icon's PNG sizes from its SVG with Qt's own SVG renderer.

The SVG (`resources/icons/continuo.svg`) is the source; the PNGs beside it are committed so
that neither the bundle build nor `make install-desktop` needs an SVG toolchain. Run this
after changing the SVG:

    .venv/bin/python packaging/render_icons.py
"""

from __future__ import annotations

import os
import struct
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
    written.append(write_ico(folder / "continuo.ico", [png_path(s, folder) for s in ICO_SIZES]))
    written.append(write_icns(folder / "continuo.icns", folder))
    return written


#: Windows shows 16-48 in lists and 256 in large views; Explorer reads PNG-compressed entries.
ICO_SIZES: tuple[int, ...] = (16, 24, 32, 48, 64, 128, 256)

#: macOS icon element types that hold PNG data, by pixel size (Apple's icns format).
ICNS_TYPES: tuple[tuple[bytes, int], ...] = (
    (b"icp4", 16), (b"icp5", 32), (b"icp6", 64), (b"ic07", 128), (b"ic08", 256), (b"ic09", 512),
)


def write_ico(path: Path, pngs: list[Path]) -> Path:
    """Pack PNG files into one multi-size Windows .ico (PNG entries, Vista and later).

    Written by hand so that the Windows build needs neither Pillow nor an icon tool.
    """
    blobs = [p.read_bytes() for p in pngs]
    header = struct.pack("<HHH", 0, 1, len(blobs))
    offset = len(header) + 16 * len(blobs)
    entries = b""
    for p, blob in zip(pngs, blobs, strict=True):
        size = int(p.stem.rsplit("-", 1)[1])
        # Width and height are one byte each; 0 means 256.
        side = 0 if size >= 256 else size
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(blob), offset)
        offset += len(blob)
    path.write_bytes(header + entries + b"".join(blobs))
    return path


def write_icns(path: Path, folder: Path = ICONS) -> Path:
    """Pack the PNG sizes into a macOS .icns so the macOS build needs no iconutil or Pillow."""
    body = b""
    for kind, size in ICNS_TYPES:
        blob = png_path(size, folder).read_bytes()
        body += kind + struct.pack(">I", 8 + len(blob)) + blob
    path.write_bytes(b"icns" + struct.pack(">I", 8 + len(body)) + body)
    return path


if __name__ == "__main__":
    for p in render():
        print(p.relative_to(Path.cwd()) if p.is_relative_to(Path.cwd()) else p)
    sys.exit(0)
