"""The reading column: a scroll area's text is kept to about 90 characters wide and centred.

Lines much longer than that are hard to follow on a wide window. The cap is applied through the
scroll area's viewport margins only (what the area shows is not touched): the margins grow on
both sides once the area is wider than the column, so the scroll bar stays at the window's
edge and the wheel scrolls anywhere over the area.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QAbstractScrollArea

__all__ = ["READING_CHARACTERS", "ReadingColumn"]

# the column's width in average characters of the area's font
READING_CHARACTERS = 90
_PADDING = 32  # the column's own side margins (the transcript's 16 + 16)


class ReadingColumn(QObject):
    """Keeps ``area``'s column at most `READING_CHARACTERS` wide, centred (a child of it)."""

    def __init__(self, area: QAbstractScrollArea, characters: int = READING_CHARACTERS) -> None:
        super().__init__(area)
        self._area = area
        self.characters = characters
        area.installEventFilter(self)
        self.apply()

    def width(self) -> int:
        """The column's widest, in pixels, for the area's font."""
        return self._area.fontMetrics().averageCharWidth() * self.characters + _PADDING

    def apply(self) -> None:
        area = self._area
        side = max(0, (area.width() - self.width()) // 2)
        if area.viewportMargins().left() != side:
            area.setViewportMargins(side, 0, side, 0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self._area and event.type() in (
            QEvent.Type.Resize,
            QEvent.Type.FontChange,
        ):
            self.apply()
        return False
