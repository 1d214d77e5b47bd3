"""Find in the open conversation (objectName ``findBar``): a field, "3 of 12", previous, next.

Ctrl+F shows it and puts the cursor in the field; typing asks for the hits (`queryChanged`,
after a pause of `DEBOUNCE_MS`, so a fast typist costs one search); Enter or F3 goes to the
next hit, Shift+Enter or Shift+F3 to the previous one (`stepped`); Esc or its × closes it
(`closed`). The window does the finding and tells the bar what it found (`show_count`).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

__all__ = ["DEBOUNCE_MS", "FindBar"]

DEBOUNCE_MS = 150


class FindBar(QWidget):
    """The find bar above the composer; hidden until asked for."""

    queryChanged = Signal(str)  # noqa: N815
    stepped = Signal(int)  # +1 next, -1 previous
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        self.field = QLineEdit(self)
        self.field.setObjectName("findField")
        self.field.setClearButtonEnabled(True)
        self.count = QLabel(self)
        self.count.setObjectName("findCount")
        self.previous_button = QToolButton(self)
        self.previous_button.setObjectName("findPrevious")
        self.previous_button.setText("↑")
        self.next_button = QToolButton(self)
        self.next_button.setObjectName("findNext")
        self.next_button.setText("↓")
        self.close_button = QToolButton(self)
        self.close_button.setObjectName("findClose")
        self.close_button.setText("×")
        for widget in (self.field, self.count, self.previous_button, self.next_button):
            layout.addWidget(widget)
        layout.addWidget(self.close_button)
        layout.setStretch(0, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(lambda: self.queryChanged.emit(self.field.text()))
        self.field.textChanged.connect(lambda _text: self._timer.start())
        self.field.installEventFilter(self)
        self.previous_button.clicked.connect(lambda: self.stepped.emit(-1))
        self.next_button.clicked.connect(lambda: self.stepped.emit(1))
        self.close_button.clicked.connect(self.close_bar)
        self.retranslate()
        self.hide()

    def retranslate(self) -> None:
        self.field.setPlaceholderText(self.tr("Find in this conversation"))
        self.field.setAccessibleName(self.tr("Find in this conversation"))
        self.previous_button.setToolTip(self.tr("Previous match (Shift+Enter)"))
        self.previous_button.setAccessibleName(self.tr("Previous match"))
        self.next_button.setToolTip(self.tr("Next match (Enter)"))
        self.next_button.setAccessibleName(self.tr("Next match"))
        self.close_button.setToolTip(self.tr("Close (Esc)"))
        self.close_button.setAccessibleName(self.tr("Close find"))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def open_bar(self) -> None:
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()
        if self.field.text():
            self._timer.stop()
            self.queryChanged.emit(self.field.text())  # the conversation may have changed

    def close_bar(self) -> None:
        self._timer.stop()
        self.hide()
        self.closed.emit()

    def flush(self) -> None:
        """Search now for what is typed (instead of after the pause)."""
        if self._timer.isActive():
            self._timer.stop()
            self.queryChanged.emit(self.field.text())

    def show_count(self, current: int, total: int) -> None:
        """Say where the shown hit is: "3 of 12", "No matches", or nothing for no query."""
        if not self.field.text().strip():
            self.count.setText("")
        elif total == 0:
            self.count.setText(self.tr("No matches"))
        else:
            self.count.setText(self.tr("{current} of {total}").format(current=current, total=total))
        self.previous_button.setEnabled(total > 1)
        self.next_button.setEnabled(total > 1)

    def event(self, event: QEvent) -> bool:
        # Esc must reach the bar before the window's Esc (Stop) takes it.
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            if event.key() in (Qt.Key.Key_Escape, Qt.Key.Key_F3):
                event.accept()
                return True
        return super().event(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.field and isinstance(event, QKeyEvent):
            if event.type() == QEvent.Type.ShortcutOverride and event.key() in (
                Qt.Key.Key_Escape,
                Qt.Key.Key_F3,
            ):
                event.accept()
                return True
            if event.type() == QEvent.Type.KeyPress:
                back = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
                if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_F3):
                    self.flush()
                    self.stepped.emit(-1 if back else 1)
                    return True
                if event.key() == Qt.Key.Key_Escape:
                    self.close_bar()
                    return True
        return super().eventFilter(watched, event)
