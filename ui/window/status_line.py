"""The window's status bar: what the controller reports in passing, said for a while.

A problem the person must see (a refused settings file, a failed task), the search index of
an older file being built, conversations put back on their newest messages when the file
opened, the conversation file's check, and "Copied". `StatusLine` only words and shows them;
lasting failures have their own places (the error banner, the storage notice).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from engine import MendedPath, StorageError

__all__ = ["StatusLine"]


class StatusLine(QObject):
    """Says the controller's passing news in one status bar."""

    def __init__(self, bar: QStatusBar, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bar = bar

    def say(self, text: str, msecs: int = 0) -> None:
        self._bar.showMessage(text, msecs)

    def problem(self, message: str) -> None:
        """A start-up or storage problem the person must see (plain words)."""
        self._bar.showMessage(message, 15000)

    def copied(self) -> None:
        self._bar.showMessage(self.tr("Copied"), 2000)

    def migration_progress(self, done: float) -> None:
        if done >= 1.0:
            self._bar.showMessage(self.tr("The conversations can now be searched."), 5000)
        else:
            self._bar.showMessage(
                self.tr("Preparing the conversations for search: {percent}%…").format(
                    percent=int(done * 100)
                )
            )

    def paths_mended(self, mended: Sequence[MendedPath]) -> None:
        """Say which conversations opening the file put back on their newest messages."""
        if len(mended) == 1 and mended[0].title:
            text = self.tr(
                "Restored the conversation “{title}” to its newest messages (the app had "
                "stopped while changing it)."
            ).format(title=mended[0].title)
        elif len(mended) == 1:
            text = self.tr(
                "Restored a conversation to its newest messages (the app had stopped while "
                "changing it)."
            )
        else:
            text = self.tr(
                "Restored {count} conversations to their newest messages (the app had stopped "
                "while changing them)."
            ).format(count=len(mended))
        self._bar.showMessage(text, 30000)

    def check_started(self, asked: bool) -> None:
        if asked:
            self._bar.showMessage(self._checking())

    def check_finished(self, asked: bool, damage: StorageError | None) -> None:
        if asked and damage is None:
            self._bar.showMessage(
                self.tr("The conversation file was checked: no damage found."), 8000
            )
        elif self._bar.currentMessage() == self._checking():
            self._bar.clearMessage()  # the storage notice says what was found

    def _checking(self) -> str:
        return self.tr("Checking the conversation file…")
