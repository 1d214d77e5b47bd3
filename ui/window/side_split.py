"""How the conversation list and the conversation share the window's width.

The conversation keeps a readable width (`CONVERSATION_CHARS` characters of the window's
font, or what its header needs if that is more): as the window narrows, the list gives way
first, down to a width that still shows the start of a dozen-character title. Below that the
list folds away, and a button at the left of the conversation's header (objectName
``sidebarButton``) brings it back over part of the conversation's width, and folds it again.
A 640-pixel-wide window kept a 260-pixel list and cut the conversation's rows off at the right.

The width the person gives the list by dragging the handle is `preferred`: kept while the
window has room for it, saved with the window's size at close (``sidebar_width`` in
settings.json) and restored at the next start.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtWidgets import QSplitter, QStyle, QToolButton, QWidget

__all__ = ["CONVERSATION_CHARS", "SIDEBAR_WIDTH", "SideSplitter"]

# the list's width at the first start, in pixels
SIDEBAR_WIDTH = 260
# the conversation's width, in average characters, before the list gives way
CONVERSATION_CHARS = 64
# the list's narrowest width before it folds away, in average characters
SIDEBAR_CHARS = 20


class SideSplitter(QSplitter):
    """The window's central splitter: the list at the left, the conversation at the right."""

    # the list was shown or folded away: (whether it is shown)
    sidebarShown = Signal(bool)  # noqa: N815

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mainSplitter")
        self.setChildrenCollapsible(False)
        self.preferred = SIDEBAR_WIDTH  # the list's width the person chose
        self.opened_by_hand = False  # shown with the button although the window is narrow
        self._fitting = False  # the sizes are being set here, not dragged
        self.button = QToolButton()
        self.button.setObjectName("sidebarButton")
        self.button.setCheckable(True)
        # An icon, not a word: the narrow header has no room to spare (its name says it).
        self.button.setIcon(
            self.button.style().standardIcon(QStyle.StandardPixmap.SP_FileDialogListView)
        )
        self.button.setVisible(False)
        self.button.toggled.connect(self._button_toggled)
        self.splitterMoved.connect(self._moved)
        self.retranslate()

    def sidebar(self) -> QWidget | None:
        return self.widget(0)

    def conversation(self) -> QWidget | None:
        return self.widget(1)

    # ------------------------------------------------------------------ widths

    def sidebar_minimum(self) -> int:
        """The list's narrowest width before it folds away."""
        sidebar = self.sidebar()
        own = sidebar.minimumSizeHint().width() if sidebar is not None else 0
        return max(own, self.fontMetrics().averageCharWidth() * SIDEBAR_CHARS + 24)

    def conversation_minimum(self) -> int:
        """The conversation's width before the list gives way."""
        right = self.conversation()
        own = right.minimumSizeHint().width() if right is not None else 0
        return max(own, self.fontMetrics().averageCharWidth() * CONVERSATION_CHARS + 40)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        """The conversation's own minimum: the list folds away rather than hold the window
        wider (so the window's smallest size does not depend on whether it is shown)."""
        size = super().minimumSizeHint()
        right = self.conversation()
        if right is not None:
            size.setWidth(right.minimumSizeHint().width())
        return size

    def is_narrow(self) -> bool:
        """Too narrow for the list beside a readable conversation: the list folds away."""
        room = self.width() - self.handleWidth() - self.conversation_minimum()
        return room < self.sidebar_minimum()

    def set_preferred(self, width: int | None) -> None:
        """The list's width saved at the last close (None or nonsense: the first start's)."""
        if isinstance(width, int) and 0 < width < 10_000:
            self.preferred = width
            self.fit()

    def fit(self) -> None:
        """Share the width: the conversation keeps its readable width, the list gives way,
        and folds away when it would be narrower than its narrowest."""
        sidebar = self.sidebar()
        if sidebar is None or self.count() < 2:
            return
        total = self.width() - self.handleWidth()
        narrow = self.is_narrow()
        self.button.setVisible(narrow)
        if not narrow:
            self.opened_by_hand = False
        shown = not narrow or self.opened_by_hand
        if sidebar.isHidden() == shown:
            sidebar.setVisible(shown)
            self.sidebarShown.emit(shown)
        self._set_checked(shown)
        if not shown:
            return
        if narrow:  # brought back by hand: as wide as it may be, the conversation narrower
            width = self.sidebar_minimum()
        else:
            width = min(self.preferred, total - self.conversation_minimum())
        width = max(width, self.sidebar_minimum())
        self._fitting = True
        try:
            self.setSizes([width, max(total - width, 0)])
        finally:
            self._fitting = False

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.fit()

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        self.fit()

    def _moved(self, _pos: int, _index: int) -> None:
        if not self._fitting and not self.is_narrow():
            self.preferred = self.sizes()[0]

    def fold_if_narrow(self) -> None:
        """A conversation was picked in the list brought back by hand: fold it again."""
        if self.opened_by_hand and self.is_narrow():
            self.opened_by_hand = False
            self.fit()

    # ------------------------------------------------------------------ the button

    def _set_checked(self, checked: bool) -> None:
        self.button.blockSignals(True)
        self.button.setChecked(checked)
        self.button.blockSignals(False)

    def _button_toggled(self, checked: bool) -> None:
        self.opened_by_hand = checked
        self.fit()
        sidebar = self.sidebar()
        if checked and sidebar is not None:
            target = getattr(sidebar, "session_list", sidebar)  # the list, to pick one
            target.setFocus(Qt.FocusReason.OtherFocusReason)

    def retranslate(self) -> None:
        self.button.setAccessibleName(self.tr("Conversations"))
        self.button.setToolTip(
            self.tr("Show or hide the conversations (folded away while the window is narrow)")
        )

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
