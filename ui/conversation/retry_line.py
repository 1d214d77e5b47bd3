"""The retry line under the last message (objectName ``retryStatus``): "Retrying in 0.4 s, 2 of 4…"
while the provider is tried again, with the failure that caused it in its tooltip.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

if TYPE_CHECKING:
    from engine import RetryInfo

__all__ = ["RetryLine"]


class RetryLine(QLabel):
    """The engine's `RetryInfo` of the shown conversation's request, in the window's words."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("retryStatus")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setVisible(False)

    def show_retry(self, retry: RetryInfo | None, language: str) -> None:
        """Say the retry (the failure's sentence in ``language``), or hide (None)."""
        if retry is None:
            self.setVisible(False)
            self.clear()
            return
        from engine import ContinuoError

        error = retry.error
        self.setText(self.retry_text(retry))
        self.setToolTip(error.sentence(language) if isinstance(error, ContinuoError) else "")
        self.setVisible(True)

    def retry_text(self, retry: RetryInfo) -> str:
        """The line "Retrying in 0.4 s, 2 of 4…"."""
        return self.tr("Retrying in {delay} s, {attempt} of {attempts}…").format(
            delay=self.locale().toString(float(retry.delay), "f", 1),
            attempt=retry.attempt,
            attempts=retry.attempts,
        )
