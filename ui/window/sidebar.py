"""The sidebar (objectName ``sidebar``): New chat, the search field, the conversation list and,
under it, the messages the search found.

The field filters the list by title as it is typed (`ui.conversation.sessions.SessionFilterModel`)
without opening another conversation: the open one stays selected while it is shown, and is
selected again once the filter is cleared. A row the person picks is announced
(`openRequested`); a row the window or the filter selects is not. The search of every message
is `ui.search.window_search.WindowSearch`'s, given these widgets by the window.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QModelIndex, Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from ..conversation.session_list import SessionFilterField, SessionListView
from ..conversation.sessions import SESSION_ID_ROLE, SessionFilterModel
from ..search.results import SearchResultsView

if TYPE_CHECKING:
    from ..conversation.sessions import SessionListModel
    from ..conversation.transcript_view import TranscriptView
    from ..search.find_bar import FindBar
    from ..search.window_search import SearchWidgets

__all__ = ["Sidebar"]


class Sidebar(QWidget):
    """The conversations, filtered by what is typed (see the module docstring).

    Args:
        current: the open conversation's id ("" or None: none).
    """

    #: the person picked a conversation in the list: (its id)
    openRequested = Signal(str)  # noqa: N815

    def __init__(self, current: Callable[[], str | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self._current = current
        self._filtering = False  # the filter, not the person, is moving the selection
        self._listed = False  # the conversations were read (an empty list is really empty)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 4, 8)
        self.new_chat_button = QPushButton(self)
        self.new_chat_button.setObjectName("newChatButton")
        self.session_filter = SessionFilterField(self)
        self.filter_model = SessionFilterModel(None, self)
        self.session_list = SessionListView(self)
        self.session_list.setModel(self.filter_model)
        self.session_list.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.search_label = QLabel(self)
        self.search_label.setObjectName("searchLabel")
        self.search_label.setVisible(False)
        self.search_results = SearchResultsView(self)
        self.search_results.setVisible(False)
        for widget, stretch in (
            (self.new_chat_button, 0),
            (self.session_filter, 0),
            (self.session_list, 1),
            (self.search_label, 0),
            (self.search_results, 1),
        ):
            layout.addWidget(widget, stretch)
        self.session_filter.textChanged.connect(self._on_filter_text)
        self.session_list.selectionModel().currentChanged.connect(self._on_list_current)
        self.retranslate()

    def search_widgets(
        self,
        find_bar: FindBar,
        transcript: TranscriptView,
        composer: QWidget,
        say: Callable[[str, int], None],
    ) -> SearchWidgets:
        """What `ui.search.window_search.WindowSearch` works with: this sidebar's field, titles and hits,
        and the window's find bar, transcript, composer and status bar."""
        from ..search.window_search import SearchWidgets

        return SearchWidgets(
            field=self.session_filter,
            titles=self.session_list,
            titles_shown=self.filter_model,
            results=self.search_results,
            label=self.search_label,
            find_bar=find_bar,
            transcript=transcript,
            composer=composer,
            say=say,
        )

    def set_sessions(self, sessions: SessionListModel) -> None:
        """List these conversations (the controller's model)."""
        self.filter_model.setSourceModel(sessions)

    def select(self, session_id: str) -> None:
        """Select ``session_id``'s row if it is shown (no row when it is not), quietly."""
        self.session_list.select_quietly(self.filter_model.index_of(session_id))

    def focus_filter(self) -> None:
        self.session_filter.setFocus()
        self.session_filter.selectAll()

    def _on_filter_text(self, text: str) -> None:
        self._filtering = True
        try:
            self.filter_model.set_query(text)
            self.select(self._current() or "")
        finally:
            self._filtering = False
        self.session_list.set_empty_text(self._empty_words(text))

    def set_listed(self, listed: bool) -> None:
        """The conversations were read (True) or could not be (False): an empty list then
        says how to start one; before, and when the file cannot be used, it says nothing."""
        self._listed = listed
        self.session_list.set_empty_text(self._empty_words(self.session_filter.text()))

    def _empty_words(self, query: str) -> str:
        """What the list says when it shows no row: why, and on a first start what to do."""
        from PySide6.QtGui import QKeySequence

        if query:
            return self.tr("No matches")
        if not self._listed:
            return ""
        keys = QKeySequence(QKeySequence.StandardKey.New).toString(
            QKeySequence.SequenceFormat.NativeText
        )
        return self.tr(
            "Your conversations will appear here — press {keys} or write a message below to "
            "start one."
        ).format(keys=keys or "Ctrl+N")

    def _on_list_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid() or self._filtering:
            return
        sid = current.data(SESSION_ID_ROLE)
        if sid and sid != self._current():
            self.openRequested.emit(sid)

    def retranslate(self) -> None:
        self.new_chat_button.setText(self.tr("New chat"))
        self.new_chat_button.setAccessibleName(self.tr("New chat"))
        self.new_chat_button.setToolTip(self.tr("Start a new conversation (Ctrl+N)"))
        self.session_filter.setPlaceholderText(self.tr("Search conversations"))
        self.session_filter.setAccessibleName(self.tr("Search conversation titles and messages"))
        self.search_results.setAccessibleName(self.tr("Messages found"))
        self.session_list.setAccessibleName(self.tr("Conversations"))
        self._on_filter_text(self.session_filter.text())

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
