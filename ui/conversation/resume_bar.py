"""The Resume row under the last message (objectName ``resumeRow``): a line saying what Resume
does, and the Resume button.

It shows the engine's `ResumePoint` of the shown conversation (the button's tooltip is the
point's whole description, in the window's language), or, when another window holds the
conversation, that sentence instead of a button. ``resumeButton`` and ``resumeLabel`` keep
their object names (DESIGN.md); both are permanent children shown and hidden with
``setVisible``.

It imports nothing of the engine until it has a point to show, so it is built with the
window's first widgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

if TYPE_CHECKING:
    from engine import ResumePoint

__all__ = ["ResumeBar"]


class ResumeBar(QWidget):
    """Whether and how the shown conversation can carry on, and the button that does it."""

    #: the person pressed Resume
    resumeRequested = Signal()  # noqa: N815

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resumeRow")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel(self)
        self.label.setObjectName("resumeLabel")
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # it can name the model's tools
        self.label.setWordWrap(True)
        self.label.setVisible(False)
        self.button = QPushButton(self)
        self.button.setObjectName("resumeButton")
        self.button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.button.setVisible(False)
        self.button.clicked.connect(self.resumeRequested)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.button)
        #: the point shown (None: nothing to resume, or held elsewhere)
        self.point: ResumePoint | None = None
        self._busy_text = ""  # "open in another window" instead of Resume, else ""
        self.retranslate()

    def show_point(self, point: ResumePoint | None, busy_text: str = "") -> None:
        """Show the conversation's resume point, or ``busy_text`` (held by another window)."""
        self.point, self._busy_text = point, busy_text
        self._draw()

    def resuming(self) -> None:
        """Resume began: the button goes until the next point is shown."""
        self.button.setVisible(False)

    def _draw(self) -> None:
        point, busy_text = self.point, self._busy_text
        if busy_text:  # the controller's sentence: it stays in the language it was made in
            self.button.setVisible(False)
            self.label.setText(busy_text)
            self.label.setVisible(True)
            return
        if point is None:
            self.button.setVisible(False)
            self.label.setVisible(False)
            self.button.setToolTip("")
            return
        from ..common.markdown import tooltip_text

        self.label.setText(self.resume_text(point))
        self.label.setToolTip(tooltip_text(point.description))
        self.button.setToolTip(tooltip_text(point.description))
        self.button.setAccessibleDescription(point.description)
        self.label.setVisible(True)
        self.button.setVisible(True)

    def resume_text(self, point: ResumePoint) -> str:
        """A short line beside the Resume button saying what happened."""
        from engine import ResumeKind

        # What happened to an answer is said once, by its row: this line says what Resume
        # does (the tooltip has the engine's whole sentence, in the window's language).
        texts = {
            ResumeKind.CALL_MODEL: self.tr("The model has not answered yet."),
            ResumeKind.RECOVER_TOOLS: self.tr("The app stopped while a tool was running."),
            ResumeKind.RETRY_RESPONSE: self.tr("Resume writes the answer again."),
            ResumeKind.CONTINUE_RESPONSE: self.tr("Resume continues the answer."),
        }
        if (
            point.kind is ResumeKind.RECOVER_TOOLS
            and point.not_started == point.unanswered_tool_calls
        ):
            # The store recorded no start for any of them: nothing ran.
            return self.tr("The app stopped before the tool started, so it did not run.")
        return texts.get(point.kind, point.description)

    def retranslate(self) -> None:
        self.button.setText(self.tr("Resume"))
        self.button.setAccessibleName(self.tr("Resume"))
        self.label.setAccessibleName(self.tr("Why the conversation can be resumed"))
        self._draw()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
