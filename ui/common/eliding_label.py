"""`ElidingLabel`: a one-line label that gives up width first, its text cut with "…".

A plain `QLabel` asks for its whole text as its minimum width, so one long name (a tool's,
a model's) made its row, then the whole transcript column, wider than a narrow window: what
stood right of it ("Branch", a tool card's state) was drawn past the right edge. This one
asks for a few characters, draws what fits, and says the whole text in its tooltip when it
is cut. `text()` is still the whole text.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

__all__ = ["ElidingLabel"]

_SHORTEST = 4  # characters (and "…") it can shrink to


class ElidingLabel(QLabel):
    """A one-line label cut with "…" where it has less room than its text needs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._own_tip = ""  # a tooltip set from outside, kept when the text is whole

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        size = super().minimumSizeHint()
        margins = self.contentsMargins()
        shortest = self.fontMetrics().horizontalAdvance("M" * _SHORTEST + "…")
        size.setWidth(min(size.width(), shortest + margins.left() + margins.right()))
        return size

    def setToolTip(self, text: str) -> None:  # noqa: N802
        self._own_tip = text
        super().setToolTip(text)

    def is_cut(self) -> bool:
        """Whether the text is drawn cut short (it does not fit)."""
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        # The whole text in the tooltip while it is cut, the tooltip set from outside else.
        super().setToolTip(self._own_tip or (self.text() if self.is_cut() else ""))

    def setText(self, text: str) -> None:  # noqa: N802
        super().setText(text)
        super().setToolTip(self._own_tip or (self.text() if self.is_cut() else ""))

    def paintEvent(self, event: Any) -> None:  # noqa: N802
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        painter = QPainter(self)
        self.style().drawItemText(
            painter,
            rect,
            int(self.alignment()) | int(Qt.TextFlag.TextSingleLine),
            self.palette(),
            self.isEnabled(),
            shown,
            self.foregroundRole(),
        )
        painter.end()
