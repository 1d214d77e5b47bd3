"""The storage notice: what the window shows when the conversation file cannot be used.

A store that fails to open at start-up (damaged, written by a newer Continuo, a read-only or
forbidden folder) leaves nothing to list, so the notice takes the transcript's place as a
page; a store that fails later (a disk that filled up, a folder made read-only while the app
ran) puts the same notice above the conversation as a banner. Either way it stays until the
store works again: it names the file, says what happened (the engine's sentence, in the
window's language) and what helps, in the window's words for the error's `ErrorAction`, and
offers Try again. Only a damaged file is told to be restored from a backup or moved aside.

Every text is plain text: the engine's sentence quotes paths and the operating system's words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from ..common.errors import AnyAction

__all__ = ["StorageNotice"]


class StorageNotice(QFrame):
    """A persistent notice about the conversation file; objectName ``storageNotice``."""

    retryRequested = Signal()  # noqa: N815 (Qt naming): the person pressed Try again
    restoreRequested = Signal()  # noqa: N815 — "Restore from a backup…" (a page, or damage)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("storageNotice")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#storageNotice { border: 1px solid #c62828; border-radius: 6px; "
            "background: palette(base); }"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(6)
        self.title = QLabel(self)
        self.title.setObjectName("storageNoticeTitle")
        bold = QFont(self.title.font())
        bold.setBold(True)
        bold.setPointSizeF(bold.pointSizeF() * 1.15)
        self.title.setFont(bold)
        self.message = self._label("storageNoticeMessage")
        self.advice = self._label("storageNoticeAdvice")
        self.file = self._label("storageNoticeFile")
        self.file.setStyleSheet("color: palette(placeholder-text);")
        self.retry_button = QPushButton(self)
        self.retry_button.setObjectName("storageRetryButton")
        self.retry_button.clicked.connect(self.retryRequested.emit)
        # A file that cannot be used at start-up: a backup can take its place (`ui.archive`).
        self.restore_button = QPushButton(self)
        self.restore_button.setObjectName("storageRestoreButton")
        self.restore_button.clicked.connect(self.restoreRequested.emit)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.restore_button)
        row.addWidget(self.retry_button)
        for widget in (self.title, self.message, self.advice, self.file):
            layout.addWidget(widget)
        layout.addLayout(row)
        self._page = False
        self._stretch = QWidget(self)  # a page sits at the top of the space it fills
        layout.addWidget(self._stretch, 1)
        # (the engine's sentence, what helps, the file) while the notice shows, else None
        self._state: tuple[str, AnyAction, str] | None = None
        self.setVisible(False)
        self.retranslate()

    def _label(self, name: str) -> QLabel:
        label = QLabel(self)
        label.setObjectName(name)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    @property
    def is_page(self) -> bool:
        """Whether the notice stands in for the conversation (start-up) or sits above it."""
        return self._page

    def show_problem(self, message: str, action: AnyAction, path: str, *, page: bool) -> None:
        """Say ``message`` (the engine's sentence) about ``path``; an empty message hides it."""
        self._state = (message, action, path) if message else None
        self._page = page and bool(message)
        self._stretch.setVisible(self._page)
        self._draw()

    def _draw(self) -> None:
        self.setVisible(self._state is not None)
        if self._state is None:
            self.restore_button.setVisible(False)
            return
        from engine import ErrorAction, join_sentences

        message, action, path = self._state
        # A damaged file can be replaced by a backup, whether found at start or later.
        self.restore_button.setVisible(self._page or action is ErrorAction.RESTORE_BACKUP)
        self.title.setText(self.title_text(action))
        self.message.setText(message)
        advice = self.advice_text(action)
        self.advice.setText(advice)
        self.advice.setVisible(bool(advice))
        self.file.setText(self.tr("File: {path}").format(path=path) if path else "")
        self.file.setVisible(bool(path))
        self.setAccessibleDescription(join_sentences(message, advice))

    def title_text(self, action: AnyAction) -> str:
        """A headline for what helps."""
        from engine import ErrorAction

        titles: dict[AnyAction, str] = {
            ErrorAction.FREE_SPACE: self.tr("The disk is full"),
            ErrorAction.CHECK_FOLDER: self.tr("The conversation file cannot be used"),
            ErrorAction.RESTORE_BACKUP: self.tr("The conversation file is damaged"),
            ErrorAction.UPDATE_APP: self.tr("The conversation file is from a newer Continuo"),
        }
        return titles.get(action, self.tr("The conversations cannot be saved"))

    def advice_text(self, action: AnyAction) -> str:
        """What helps, in the window's words."""
        from engine import ErrorAction

        texts: dict[AnyAction, str] = {
            ErrorAction.FREE_SPACE: self.tr(
                "Free some disk space, then press Try again. Nothing already saved is lost."
            ),
            ErrorAction.CHECK_FOLDER: self.tr(
                "Check the data folder's permissions: your user must be able to read and "
                "write it and the file. Or start Continuo with another folder (--data-dir). "
                "Then press Try again."
            ),
            ErrorAction.RESTORE_BACKUP: self.tr(
                "Restore the file from a backup, or move it aside to start with an empty "
                "list, then press Try again. Continuo has not changed it."
            ),
            ErrorAction.UPDATE_APP: self.tr(
                "Install a newer Continuo to open it. This version has not changed it."
            ),
        }
        return texts.get(action, self.tr("Press Try again once the problem is fixed."))

    def retranslate(self) -> None:
        self.setAccessibleName(self.tr("Problem with the conversation file"))
        self.retry_button.setText(self.tr("Try again"))
        self.restore_button.setText(self.tr("Restore from a backup…"))
        self._draw()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
