"""The composer: where the person types. Enter sends, Shift+Enter starts a new line, Esc stops;
beside it Send, or Stop while an answer streams (`ComposerBar`).

It grows with its text from one line up to `MAX_LINES`, then scrolls. Input methods (CJK
composition) are left alone: a key press while text is being composed is not a send. Its
placeholder follows a language change at once (`retranslate`).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFontMetrics, QKeyEvent
from PySide6.QtWidgets import QPlainTextEdit, QSizePolicy, QWidget

__all__ = ["Composer", "ComposerBar"]

MAX_LINES = 8


class Composer(QPlainTextEdit):
    """The message box; objectName ``composer``."""

    submitted = Signal(str)  # Enter: the text to send
    stopRequested = Signal()  # noqa: N815 (Qt naming): Esc

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self.retranslate()
        self.setTabChangesFocus(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self._fit()

    def retranslate(self) -> None:
        """Set the accessible name and placeholder in the current language."""
        self.setAccessibleName(self.tr("Message"))
        self.setPlaceholderText(
            self.tr("Write a message… (Enter sends, Shift+Enter for a new line)")
        )

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def _fit(self, *_: Any) -> None:
        metrics = QFontMetrics(self.font())
        lines = max(1, min(MAX_LINES, int(self.document().size().height())))
        # Everything around the viewport: frame, and the padding a style sheet adds (which
        # contentsMargins() does not report), measured from the laid-out widget.
        chrome = max(self.height() - self.viewport().height(), 2 * self.frameWidth())
        height = lines * metrics.lineSpacing() + int(2 * self.document().documentMargin()) + chrome
        if height != self.height():
            self.setFixedHeight(height)

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        # The style sheet's padding and font arrive on polish: measure again then.
        if event.type() in (QEvent.Type.Polish, QEvent.Type.StyleChange, QEvent.Type.FontChange):
            self._fit()
        return handled

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
                return
            if not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
                text = self.toPlainText()
                if text.strip():
                    self.submitted.emit(text)
                return
        if key == Qt.Key.Key_Escape:
            self.stopRequested.emit()
            return
        super().keyPressEvent(event)


class ComposerBar(QWidget):
    """The composer with its Send button, or Stop while an answer streams (objectNames
    ``sendButton`` and ``stopButton``)."""

    #: Enter or Send: the text to send
    sendRequested = Signal(str)  # noqa: N815
    #: Esc in the composer, or Stop
    stopRequested = Signal()  # noqa: N815

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from PySide6.QtWidgets import QHBoxLayout, QPushButton

        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.composer = Composer(self)
        self.send_button = QPushButton(self)
        self.send_button.setObjectName("sendButton")
        self.stop_button = QPushButton(self)
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setVisible(False)
        layout.addWidget(self.composer, 1)
        layout.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        layout.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignBottom)
        self.setTabOrder(self.composer, self.send_button)
        self.composer.submitted.connect(self.sendRequested)
        self.composer.stopRequested.connect(self.stopRequested)
        self.send_button.clicked.connect(
            lambda: self.sendRequested.emit(self.composer.toPlainText())
        )
        self.stop_button.clicked.connect(self.stopRequested)
        self.retranslate()

    def set_busy(self, busy: bool) -> None:
        """An answer streams: Stop instead of Send."""
        self.stop_button.setVisible(busy)
        self.send_button.setVisible(not busy)
        self.send_button.setEnabled(not busy)

    def retranslate(self) -> None:
        self.send_button.setText(self.tr("Send"))
        self.send_button.setAccessibleName(self.tr("Send"))
        self.send_button.setToolTip(self.tr("Send (Enter)"))
        self.stop_button.setText(self.tr("Stop"))
        self.stop_button.setAccessibleName(self.tr("Stop"))
        # No promise that what arrived is kept: that is said after the write, when it was.
        self.stop_button.setToolTip(self.tr("Stop the answer (Esc)"))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
