"""The error banner under the last message (objectName ``errorBanner``).

It shows a request's failure: the engine's sentence, whether what arrived of a cut-off answer
was kept, and what helps, with a link to the settings when they are what helps. Its words are
`ui.common.errors.banner_words`' (the one place the window words a failure); the banner only shows
them, hides itself when they say nothing, and says them again when the language changes.

It imports nothing of the engine until it has a failure to show, so it is built with the
window's first widgets.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QLabel, QWidget

if TYPE_CHECKING:
    from ..common.errors import AnyAction, Kept

__all__ = ["ErrorBanner"]

#: the link's address: the banner emits `settingsWanted` when it is activated
_SETTINGS_LINK = "settings"


class ErrorBanner(QLabel):
    """A failure of the shown conversation's request, in the window's words."""

    #: the person followed the link to the settings
    settingsWanted = Signal()  # noqa: N815

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorBanner")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setOpenExternalLinks(False)
        self.setVisible(False)
        self._error: tuple[str, AnyAction, Kept] | None = None
        self.linkActivated.connect(self._on_link)
        self.retranslate()

    def show_error(self, message: str, action: AnyAction, kept: Kept) -> None:
        """Show a failure (``message`` "" hides the banner)."""
        self._error = (message, action, kept) if message else None
        self._draw()

    def hide_error(self) -> None:
        """Show no failure (no conversation is shown)."""
        self._error = None
        self._draw()

    def _draw(self) -> None:
        words = None
        if self._error is not None:
            from ..common.errors import banner_words

            words = banner_words(*self._error)
        if words is None:
            self.setVisible(False)
            self.clear()
            return
        from ..common.markdown import tooltip_text

        text = html.escape(words.text)
        if words.link:
            text += f' &nbsp;<a href="{_SETTINGS_LINK}">{html.escape(words.link)}</a>'
        self.setText(text)
        self.setToolTip(tooltip_text(words.text))  # the provider's words: escaped
        self.setVisible(True)

    def _on_link(self, link: str) -> None:
        if link == _SETTINGS_LINK:
            self.settingsWanted.emit()

    def retranslate(self) -> None:
        self.setAccessibleName(self.tr("Error"))
        self._draw()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
