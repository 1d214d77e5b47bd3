"""The imported system prompt: shown on its conversation, marked as imported, until accepted.

A conversation imported from a file may come with a system prompt — instructions every request
would carry, which the person never wrote and the model follows. The import keeps it aside
(``imported_system_prompt``, `engine.archive.IMPORTED_SYSTEM_PROMPT`), never as the
conversation's prompt, so no request is sent with it unseen. This bar (objectName
``importedPrompt``) sits under the conversation's own prompt while one waits: it says that it
came with the import and is not used, shows it whole (read-only, selectable), and offers
*Use this prompt* (it becomes the conversation's prompt) and *Discard*. Requests meanwhile go
without it.

The prompt is plain text: whatever the file holds is shown, never rendered.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

__all__ = ["ImportedPromptBar"]


class ImportedPromptBar(QFrame):
    """The imported system prompt waiting for the person's word; objectName ``importedPrompt``."""

    accepted = Signal()  # "Use this prompt"
    discarded = Signal()  # "Discard"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("importedPrompt")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#importedPrompt { border: 1px solid #b26a00; border-radius: 6px; "
            "background: palette(base); }"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.setSpacing(6)
        self.title = QLabel(self)
        self.title.setObjectName("importedPromptTitle")
        self.title.setWordWrap(True)
        bold = QFont(self.title.font())
        bold.setBold(True)
        self.title.setFont(bold)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("importedPromptText")
        self.text.setReadOnly(True)
        self.text.setTabChangesFocus(True)
        self.text.setMaximumHeight(110)
        self.accept_button = QPushButton(self)
        self.accept_button.setObjectName("acceptImportedPrompt")
        self.accept_button.clicked.connect(self.accepted.emit)
        self.discard_button = QPushButton(self)
        self.discard_button.setObjectName("discardImportedPrompt")
        self.discard_button.clicked.connect(self.discarded.emit)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.discard_button)
        row.addWidget(self.accept_button)
        layout.addWidget(self.title)
        layout.addWidget(self.text)
        layout.addLayout(row)
        self.setVisible(False)
        self.retranslate()

    def show_prompt(self, text: str) -> None:
        """Show ``text`` as the imported prompt waiting; an empty text hides the bar."""
        self.text.setPlainText(text)
        self.setVisible(bool(text))

    @property
    def prompt(self) -> str:
        """The imported prompt shown ("" when none waits)."""
        parent = self.parentWidget()
        shown = parent is not None and self.isVisibleTo(parent)
        return self.text.toPlainText() if shown else ""

    def retranslate(self) -> None:
        self.title.setText(
            self.tr(
                "Imported with this conversation: a system prompt. It is not used until you "
                "accept it."
            )
        )
        self.text.setAccessibleName(self.tr("Imported system prompt, not used"))
        self.accept_button.setText(self.tr("Use this prompt"))
        self.accept_button.setToolTip(
            self.tr("Every message of this conversation will be sent with these instructions.")
        )
        self.discard_button.setText(self.tr("Discard"))
        self.setAccessibleName(self.tr("Imported system prompt"))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
