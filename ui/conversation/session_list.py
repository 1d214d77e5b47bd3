"""The conversation list's widgets: the list with its date headers and Resume marks, and the
filter field above it.

`SessionListView` (objectName ``sessionList``) draws the header a row carries in
`SECTION_ROLE` above that row (the proxy decides which rows start a section), and a mark on
conversations waiting for Resume (`WAITING_ROLE`). A row's height depends on whether it starts
a section, which depends on the row above it, so any change to the rows lays them all out again.
When the filter leaves no row, the list says "No matches" instead of going blank.

`SessionFilterField` (objectName ``sessionFilter``) clears itself on Esc, as a search field does.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
)
from PySide6.QtGui import QFont, QKeyEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QLineEdit,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from .sessions import SECTION_ROLE, WAITING_ROLE

__all__ = ["WAITING_MARK", "SessionDelegate", "SessionFilterField", "SessionListView"]

# drawn at the right of a conversation waiting for Resume
WAITING_MARK = "↻"

_Index = QModelIndex | QPersistentModelIndex


class SessionDelegate(QStyledItemDelegate):
    """Draws a row, with its section header above it and its Resume mark at its right."""

    def _header_font(self, option: QStyleOptionViewItem) -> QFont:
        font = QFont(option.font)
        font.setBold(True)
        font.setPointSizeF(max(font.pointSizeF() * 0.85, 6.0))
        return font

    def _header_height(self, option: QStyleOptionViewItem) -> int:
        from PySide6.QtGui import QFontMetrics

        return QFontMetrics(self._header_font(option)).height() + 10

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802
        size = super().sizeHint(option, index)
        if index.data(SECTION_ROLE):
            size.setHeight(size.height() + self._header_height(option))
        return size

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        header = index.data(SECTION_ROLE)
        row = QStyleOptionViewItem(option)
        rect = QRect(option.rect)
        painter.save()
        if header:
            height = self._header_height(option)
            header_rect = QRect(rect.left() + 6, rect.top() + 4, rect.width() - 12, height - 6)
            painter.setFont(self._header_font(option))
            painter.setPen(option.palette.color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(
                header_rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom), header
            )
            rect.setTop(rect.top() + height)
        mark_width = 0
        if index.data(WAITING_ROLE):
            mark_width = option.fontMetrics.horizontalAdvance(WAITING_MARK) + 10
        painter.restore()
        row.rect = QRect(rect.left(), rect.top(), rect.width() - mark_width, rect.height())
        # The selection fills the row and the mark's place alike.
        if mark_width and option.state & QStyle.StateFlag.State_Selected:
            fill = QStyleOptionViewItem(option)
            fill.rect = rect
            style = option.widget.style() if option.widget is not None else None
            if style is not None:
                style.drawPrimitive(
                    QStyle.PrimitiveElement.PE_PanelItemViewItem, fill, painter, option.widget
                )
        super().paint(painter, row, index)
        if mark_width:
            painter.save()
            selected = bool(option.state & QStyle.StateFlag.State_Selected)
            role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Highlight
            painter.setPen(option.palette.color(role))
            mark_rect = QRect(rect.right() - mark_width, rect.top(), mark_width - 4, rect.height())
            painter.drawText(
                mark_rect,
                int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                WAITING_MARK,
            )
            painter.restore()


class SessionListView(QListView):
    """The conversation list (objectName ``sessionList``); says so when no row is shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sessionList")
        self.setItemDelegate(SessionDelegate(self))
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setUniformItemSizes(False)  # rows that start a section are taller
        # Rows are laid out a batch at a time, painting in between: a long list shows its
        # first screen without waiting for every row's height (`make bench`: 200 rows).
        self.setLayoutMode(QListView.LayoutMode.Batched)
        self.setBatchSize(40)
        self.empty_label = QLabel(self.viewport())
        self.empty_label.setObjectName("sessionListEmpty")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        self.empty_label.setStyleSheet("color: palette(placeholder-text); padding: 16px;")
        self.empty_label.setVisible(False)
        self._empty_text = ""

    def setModel(self, model: Any) -> None:  # noqa: N802
        super().setModel(model)
        if model is None:
            return
        for signal in (
            model.rowsInserted,
            model.rowsRemoved,
            model.rowsMoved,
            model.layoutChanged,
            model.modelReset,
            model.dataChanged,
        ):
            signal.connect(self._rows_changed)
        self._rows_changed()

    def select_quietly(self, index: QModelIndex) -> None:
        """Make ``index`` the current row without announcing it (the filter or the window is
        moving the selection, not the person); an invalid index leaves no row current, so
        clicking any row opens it."""
        selection = self.selectionModel()
        if selection is None:
            return
        if index.isValid() and selection.currentIndex() == index:
            return
        selection.blockSignals(True)
        if index.isValid():
            selection.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        else:
            selection.clearCurrentIndex()
            selection.clearSelection()
        selection.blockSignals(False)
        self.viewport().update()

    def set_empty_text(self, text: str) -> None:
        """What the list says when it shows no row ("" says nothing)."""
        self._empty_text = text
        self._show_empty()

    def _rows_changed(self, *_args: Any) -> None:
        # A header belongs to whichever row now starts its section: lay every row out again.
        self.scheduleDelayedItemsLayout()
        self.viewport().update()
        self._show_empty()

    def _show_empty(self) -> None:
        model = self.model()
        empty = bool(self._empty_text) and (model is None or model.rowCount() == 0)
        self.empty_label.setText(self._empty_text)
        self.empty_label.setGeometry(self.viewport().rect())
        self.empty_label.setVisible(empty)
        # A screen reader hears why the list is empty.
        self.setAccessibleDescription(self._empty_text if empty else "")

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.empty_label.setGeometry(self.viewport().rect())


class SessionFilterField(QLineEdit):
    """The filter field (objectName ``sessionFilter``): Esc clears it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sessionFilter")
        self.setClearButtonEnabled(True)

    def event(self, event: QEvent) -> bool:
        # Esc must reach this field before a window shortcut on Esc (Stop) takes it.
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
            and self.text()
        ):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Escape and self.text():
            self.clear()
            event.accept()
            return
        super().keyPressEvent(event)
