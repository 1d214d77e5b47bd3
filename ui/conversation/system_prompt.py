"""The conversation's system prompt (objectName ``systemPrompt``) and the header's button that
shows it (``systemPromptToggle``).

The prompt is saved after a pause in typing (`PAUSE_MS`): `edited` carries the text, stripped.
The button's dot says the conversation has a prompt even while the editor is hidden.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtWidgets import QPlainTextEdit, QToolButton, QWidget

__all__ = ["PAUSE_MS", "SystemPromptEditor"]

PAUSE_MS = 600  # the pause in typing after which the prompt is saved


class SystemPromptEditor(QPlainTextEdit):
    """The system prompt of the shown conversation, hidden until its button is checked."""

    #: the person changed the prompt and paused: (the text, stripped)
    edited = Signal(str)

    def __init__(self, toggle: QToolButton, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("systemPrompt")
        self.setTabChangesFocus(True)
        self.setMaximumHeight(90)
        self.hide()
        #: the header's button that shows and hides the editor (made by the window, in the
        #: header's place in the Tab order)
        self.toggle = toggle
        self.toggle.setObjectName("systemPromptToggle")
        self.toggle.setCheckable(True)
        self.toggle.toggled.connect(self.setVisible)
        self._has_prompt = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(PAUSE_MS)
        self._timer.timeout.connect(self.save_now)
        self.textChanged.connect(self._timer.start)
        self.retranslate()

    def show_prompt(self, text: str) -> None:
        """Show a conversation's prompt (not announced as an edit)."""
        self.blockSignals(True)
        self.setPlainText(text)
        self.blockSignals(False)
        self._has_prompt = bool(text)
        self._show_toggle()

    def save_now(self) -> None:
        """Announce the prompt as it is now (`edited`)."""
        text = self.toPlainText().strip()
        self._has_prompt = bool(text)
        self._show_toggle()
        self.edited.emit(text)

    def _show_toggle(self) -> None:
        self.toggle.setText(
            self.tr("System prompt ●") if self._has_prompt else self.tr("System prompt")
        )

    def retranslate(self) -> None:
        self.toggle.setAccessibleName(self.tr("Show the system prompt"))
        self._show_toggle()
        self.setAccessibleName(self.tr("System prompt for this conversation"))
        self.setPlaceholderText(
            self.tr(
                "Instructions the model gets with every message of this conversation (optional)"
            )
        )

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
