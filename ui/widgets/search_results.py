"""The list of message hits under the conversation list (objectName ``searchResults``).

Each row is drawn as two lines: the conversation's title and the message's date, then the
snippet with each match marked (bold on the highlight colour), and "(on another version)"
on the first line when the message is on a branch the conversation does not show. Enter or a click chooses a
hit (`hitChosen`). Text is laid out as plain text: a snippet is a message's words, never markup.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QFont,
    QFontMetrics,
    QKeyEvent,
    QPainter,
    QPalette,
    QTextCharFormat,
    QTextLayout,
)
from PySide6.QtWidgets import QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ..models.search_hits import (
    HIDDEN_BRANCH_ROLE,
    HIT_ROLE,
    MARKS_ROLE,
    SNIPPET_ROLE,
    hidden_branch_text,
)

__all__ = ["SearchResultsView"]

_Index = QModelIndex | QPersistentModelIndex
_PAD = 6


class _HitDelegate(QStyledItemDelegate):
    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802
        line = QFontMetrics(option.font).lineSpacing()
        return QSize(option.rect.width(), 3 * line + 2 * _PAD)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        style = option.widget.style() if option.widget is not None else None
        if style is not None:
            opt = QStyleOptionViewItem(option)
            self.initStyleOption(opt, index)
            opt.text = ""
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, option.widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette = option.palette
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        rect = option.rect.adjusted(_PAD, _PAD // 2, -_PAD, -_PAD // 2)
        metrics = QFontMetrics(option.font)
        line = metrics.lineSpacing()
        painter.save()
        bold = QFont(option.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(palette.color(text_role))
        head_text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        if index.data(HIDDEN_BRANCH_ROLE):  # said first: the snippet may be cut
            head_text = f"{head_text} {hidden_branch_text()}"
        head = QFontMetrics(bold).elidedText(head_text, Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(QRect(rect.left(), rect.top(), rect.width(), line), Qt.AlignmentFlag.AlignLeft, head)
        painter.setFont(option.font)
        snippet = str(index.data(SNIPPET_ROLE) or "")
        layout = QTextLayout(snippet, option.font)
        mark = QTextCharFormat()
        mark.setFontWeight(QFont.Weight.Bold)
        if not selected:
            mark.setBackground(palette.color(QPalette.ColorRole.Highlight).lighter(160))
        formats = []
        for start, end in index.data(MARKS_ROLE) or ():
            span = QTextLayout.FormatRange()
            span.start, span.length, span.format = start, end - start, mark
            formats.append(span)
        layout.setFormats(formats)
        layout.beginLayout()
        y = rect.top() + line
        for _ in range(2):  # two lines of snippet at most
            text_line = layout.createLine()
            if not text_line.isValid():
                break
            text_line.setLineWidth(rect.width())
            text_line.setPosition(QRect(0, y - rect.top(), 0, 0).topLeft())
            y += line
        layout.endLayout()
        painter.setPen(palette.color(text_role))
        painter.setClipRect(rect)
        layout.draw(painter, rect.topLeft())
        painter.restore()


class SearchResultsView(QListView):
    """Shows a `SearchHitsModel`; `hitChosen` carries the chosen `SearchHit`."""

    hitChosen = Signal(object)  # noqa: N815

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("searchResults")
        self.setItemDelegate(_HitDelegate(self))
        self.setUniformItemSizes(True)
        self.setWordWrap(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.activated.connect(self._choose)
        self.clicked.connect(self._choose)

    def _choose(self, index: QModelIndex) -> None:
        hit = index.data(HIT_ROLE) if index.isValid() else None
        if hit is not None:
            self.hitChosen.emit(hit)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self._choose(self.currentIndex())
            event.accept()
            return
        super().keyPressEvent(event)

    def choose_row(self, row: int) -> Any:
        """Choose the hit in ``row`` (as a click would); returns it."""
        index = self.model().index(row, 0)
        self.setCurrentIndex(index)
        self._choose(index)
        return index.data(HIT_ROLE)
