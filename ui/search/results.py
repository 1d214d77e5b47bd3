"""The list of message hits under the conversation list (objectName ``searchResults``).

Each row is drawn as two lines: the conversation's title and the message's date, then the
snippet with each match marked (bold on the highlight colour), and "(on another version)"
on the first line when the message is on a branch the conversation does not show. Enter or a
click chooses a hit (`hitChosen`). Text is laid out as plain text: a snippet is a message's
words, never markup.

On a narrow list the title gives way, never the date or the note (`_HitDelegate.head`): the
title is elided to what the date and the note leave; when that would leave less than a few
words of it, the note moves to the second line, and on a list narrower still the date too.
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

from .hits import (
    DATE_ROLE,
    HIDDEN_BRANCH_ROLE,
    HIT_ROLE,
    MARKS_ROLE,
    SNIPPET_ROLE,
    TITLE_ROLE,
    hidden_branch_text,
)

__all__ = ["SearchResultsView"]

_Index = QModelIndex | QPersistentModelIndex
_PAD = 6
_TITLE_CHARS = 12  # the title's least width beside the date, in average characters


class _HitDelegate(QStyledItemDelegate):
    def head(self, font: QFont, width: int, index: _Index) -> tuple[str, str, str]:
        """The first line as drawn in ``width`` with ``font``: the title as shown (bold,
        elided), what follows it on that line, and a second line ("" when none) for what did
        not fit beside it. The date and the note are always whole; the title gives way first,
        then the note moves to the second line, then the date with it."""
        bold = QFontMetrics(_bold(font))
        plain = QFontMetrics(font)
        title = str(index.data(TITLE_ROLE) or "")
        date = str(index.data(DATE_ROLE) or "")
        note = hidden_branch_text() if index.data(HIDDEN_BRANCH_ROLE) else ""
        # enough of the title to tell conversations apart, unless the title is shorter
        least = min(bold.horizontalAdvance(title), bold.averageCharWidth() * _TITLE_CHARS)
        ways = [(f" · {date} {note}" if note else f" · {date}", "")]
        if note:
            ways.append((f" · {date}", note))
        for tail, second in ways:
            room = width - plain.horizontalAdvance(tail)
            if room >= least:
                shown = bold.elidedText(title, Qt.TextElideMode.ElideRight, room)
                return shown, tail, second
        shown = bold.elidedText(title, Qt.TextElideMode.ElideRight, width)
        return shown, "", f"{date} {note}".strip()

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
        bold = _bold(option.font)
        painter.setFont(bold)
        painter.setPen(palette.color(text_role))
        title, tail, second = self.head(option.font, rect.width(), index)
        left = Qt.AlignmentFlag.AlignLeft
        painter.drawText(QRect(rect.left(), rect.top(), rect.width(), line), left, title)
        painter.setFont(option.font)
        after = rect.left() + QFontMetrics(bold).horizontalAdvance(title)
        painter.drawText(QRect(after, rect.top(), rect.right() - after + 1, line), left, tail)
        if second:
            below = QRect(rect.left(), rect.top() + line, rect.width(), line)
            painter.drawText(below, left, second)
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
        y = rect.top() + line * (2 if second else 1)
        for _ in range(1 if second else 2):  # two lines of snippet at most
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


def _bold(font: QFont) -> QFont:
    bold = QFont(font)
    bold.setBold(True)
    return bold


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
