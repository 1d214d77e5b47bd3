"""Search in the window: the conversation list's search of every message, and Ctrl+F's find in
the open conversation.

`WindowSearch` owns the behaviour. It is given the window's widgets it works with
(`SearchWidgets`: the list's field and titles, `ui.search.results`, `ui.search.find_bar`,
the transcript, the status bar) and, once it arrives, the controller as a `SearchHost` (the
store, owned tasks, the open conversation and its pages): never the whole window.

* Typing in the list's search field still filters the list by title at once; after a pause
  (`DEBOUNCE_MS`) the messages of every conversation, on every branch, are searched
  (`SQLiteSessionStorage.search_messages`) and the hits listed under the titles, each with its
  conversation's title, its date and a snippet with the match marked. The list of titles gives
  way to the hits when no title matches. Choosing a hit opens its conversation with the page
  around the message loaded, switching to its version if it is on a branch not shown, scrolls
  to it and marks the terms in it.
* Ctrl+F opens the find bar: the hits on the shown path, oldest first; Enter / Shift+Enter
  (F3 / Shift+F3) go to the next / previous one, loading older pages as needed.

A query holds at most `MAX_QUERY_CHARS` characters (the engine searches no more): what is typed
or pasted past them is cut in the field, and the status bar says so. A search SQLite cannot run
(`QueryError`) is said as what it is, never as a fault of the file.

A newer query makes an older one's answer moot: each search carries a generation number and an
answer that arrives late is dropped. Searches run as controller tasks (storage does the work on
its own thread): the GUI thread never waits on the file. The engine is imported when a search
first runs, not with the window's first frame.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from PySide6.QtCore import QEvent, QObject, QTimer

from .hits import SearchHitsModel

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtCore import QAbstractItemModel
    from PySide6.QtWidgets import QLabel, QLineEdit, QListView, QWidget

    from engine import SearchHit, SQLiteSessionStorage

    from ..conversation.sessions import SessionListModel
    from ..conversation.transcript import TranscriptModel
    from ..conversation.transcript_view import TranscriptView
    from .find_bar import FindBar
    from .results import SearchResultsView

__all__ = ["DEBOUNCE_MS", "MAX_QUERY_CHARS", "SearchHost", "SearchWidgets", "WindowSearch"]

log = logging.getLogger(__name__)

DEBOUNCE_MS = 150  # the pause in typing after which the messages are searched
_LIST_HITS = 50  # hits listed under the conversation list
# The characters a query holds: `engine.storage.search.MAX_QUERY_CHARS` (the engine is not
# imported with the first frame; a test holds the two equal).
MAX_QUERY_CHARS = 1000

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SearchWidgets:
    """The window's widgets the search works with (built by the window)."""

    field: QLineEdit  # the conversation list's search field (``sessionFilter``)
    titles: QListView  # the list of titles
    titles_shown: QAbstractItemModel  # the titles the field's text leaves shown
    results: SearchResultsView  # the message hits, under the titles
    label: QLabel  # above them: how many
    find_bar: FindBar  # Ctrl+F's bar over the open conversation
    transcript: TranscriptView
    composer: QWidget  # where the focus goes when the find bar closes
    say: Callable[[str, int], None]  # a line in the status bar, for milliseconds


class _Pages(Protocol):
    async def open_at(self, session_id: str, seq: int) -> bool: ...

    async def show_latest(self, sid: str) -> None: ...


class SearchHost(Protocol):
    """What the search needs of the window's controller (`ui.controller.Controller` is one)."""

    @property
    def storage(self) -> SQLiteSessionStorage: ...

    @property
    def language(self) -> str: ...

    @property
    def current(self) -> str | None: ...

    @property
    def sessions(self) -> SessionListModel: ...

    @property
    def conversations(self) -> _Pages: ...

    def spawn(self, coro: Coroutine[Any, Any, T], name: str = "") -> asyncio.Task[T]: ...

    def is_running(self, session_id: str) -> bool: ...

    async def show_message(self, sid: str, message_id: str, seq: int, on_path: bool) -> bool: ...


class WindowSearch(QObject):
    """The window's search of all conversations and its find in the open one.

    Built with the window's widgets; searches once the controller is given (`attach`).
    """

    def __init__(self, widgets: SearchWidgets, parent: QObject | None = None) -> None:
        from PySide6.QtWidgets import QPushButton

        super().__init__(parent)
        self._w = widgets
        self._host: SearchHost | None = None
        self.hits = SearchHitsModel(self._title_of, self)
        widgets.results.setModel(self.hits)
        self._generation = 0
        self.searched = ""  # the query whose hits are listed (tests wait on it)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._search_now)
        # One more than a query holds: a longer paste is cut by the field at once (a megabyte
        # never sits in it), and the extra character tells that it was cut.
        find_field = widgets.find_bar.field
        for field in (widgets.field, find_field):
            field.setMaxLength(MAX_QUERY_CHARS + 1)
        find_field.textChanged.connect(lambda text: self._cut(find_field, text))
        widgets.field.textChanged.connect(self._typed)
        widgets.field.installEventFilter(self)  # Down: into the hits
        widgets.results.hitChosen.connect(self.choose)
        # find in the open conversation
        self.found: list[SearchHit] = []
        self.position = -1
        self._find_generation = 0
        self._find_query = ""
        self._find_sid: str | None = None
        widgets.find_bar.queryChanged.connect(self._find)
        widgets.find_bar.stepped.connect(self.step)
        widgets.find_bar.closed.connect(self._find_closed)
        # Under a page shown around a hit, the way back to the end of the conversation.
        self.latest_button = QPushButton(widgets.transcript)
        self.latest_button.setObjectName("showLatestButton")
        self.latest_button.setVisible(False)
        self.latest_button.clicked.connect(self.show_latest)
        widgets.transcript.add_footer_widget(self.latest_button)
        self._watched: TranscriptModel | None = None  # whose resets move the button
        self._show_results()

    def attach(self, host: SearchHost) -> None:
        """The window's controller arrived: searches can run."""
        self._host = host

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QKeyEvent

        # Down from the field goes into the message hits when the titles are not shown
        # (the list of titles takes Down itself when it is).
        w = self._w
        if (
            watched is w.field
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() == Qt.Key.Key_Down
            and w.results.isVisible()
            and not w.titles.isVisible()
        ):
            w.results.setFocus(Qt.FocusReason.OtherFocusReason)
            if not w.results.currentIndex().isValid():
                w.results.setCurrentIndex(self.hits.index(0, 0))
            return True
        return super().eventFilter(watched, event)

    def _title_of(self, sid: str) -> str:
        from ..conversation.sessions import session_title

        info = self._host.sessions.info(sid) if self._host is not None else None
        return session_title(info) if info is not None else sid

    # ------------------------------------------------------------------ every conversation

    def _cut(self, field: QLineEdit, text: str) -> bool:
        """Cut what `field` holds to `MAX_QUERY_CHARS`, saying so; True when it was cut."""
        if len(text) <= MAX_QUERY_CHARS:
            return False
        field.setText(text[:MAX_QUERY_CHARS])  # (which searches for what is left)
        self._w.say(
            self.tr(
                "Only the first {count} characters are searched; the rest was left out."
            ).format(count=f"{MAX_QUERY_CHARS:,}"),
            8000,
        )
        return True

    def _typed(self, text: str) -> None:
        if self._cut(self._w.field, text):
            return
        self._generation += 1
        self.searched = ""
        if not text.strip():
            self._timer.stop()
            self.hits.clear()
            self._show_results()
            return
        self._show_results()  # the titles just filtered: the list may show again
        self._timer.start()

    def flush(self) -> None:
        """Search now for what is typed (instead of after the pause)."""
        if self._timer.isActive():
            self._timer.stop()
            self._search_now()

    def refresh(self) -> None:
        """Search again for what is typed (the conversations changed: an import, a restore,
        a version switched to), and find again in the open conversation."""
        self._generation += 1
        if self._w.field.text().strip():
            self._search_now()
        bar = self._w.find_bar
        if bar.isVisible() and bar.field.text().strip():
            self._find(bar.field.text())

    def _search_now(self) -> None:
        host = self._host
        if host is None:
            return
        self._generation += 1
        host.spawn(self._search(host, self._w.field.text(), self._generation), "search")

    async def _search(self, host: SearchHost, query: str, generation: int) -> None:
        from engine import QueryError, StorageError

        try:
            hits = await host.storage.search_messages(query, limit=_LIST_HITS)
        except (StorageError, QueryError) as exc:  # said in the status bar; titles still filter
            if generation == self._generation:
                self._say_failed(host, exc)
            return
        if generation != self._generation:
            return  # a newer query is on its way
        self.hits.set_hits(query, hits)
        self._show_results()
        self.searched = query

    def _say_failed(self, host: SearchHost, exc: BaseException) -> None:
        """A search that failed: the engine's sentence, in the window's language (a query
        SQLite could not run says so; only the disk's or the file's faults speak of them)."""
        from ..common.errors import describe_error

        log.warning("search failed: %s", exc)
        message, _action = describe_error(exc, host.language)
        self._w.say(message, 8000)

    def _show_results(self) -> None:
        w = self._w
        has_text = bool(w.field.text().strip())
        count = self.hits.rowCount()
        w.results.setVisible(has_text and count > 0)
        w.label.setVisible(has_text and count > 0)
        w.label.setText(
            self.tr("In messages: {count} found").format(count=count)
            if count < _LIST_HITS
            else self.tr("In messages: the newest {count}").format(count=count)
        )
        # No title matches but messages do: the hits take the list's place.
        titles = w.titles_shown.rowCount()
        w.titles.setVisible(not (has_text and titles == 0 and count > 0))

    def retranslate(self) -> None:
        self._show_results()
        self.latest_button.setText(self.tr("Later messages are not shown: show the latest"))
        self.latest_button.setAccessibleName(self.tr("Show the latest messages"))

    # ------------------------------------------------------------------ a page around a hit

    def _watch(self, model: TranscriptModel | None) -> None:
        if model is self._watched:
            return
        if self._watched is not None:
            with contextlib.suppress(RuntimeError, TypeError):
                self._watched.modelReset.disconnect(self._show_latest_button)
        self._watched = model
        if model is not None:
            model.modelReset.connect(self._show_latest_button)
        self._show_latest_button()

    def _show_latest_button(self) -> None:
        model = self._watched
        self.latest_button.setVisible(bool(model is not None and model.newer))

    def show_latest(self) -> None:
        """Show the end of the conversation again (after a page around a hit)."""
        host = self._host
        sid = host.current if host is not None else None
        if host is not None and sid:
            host.spawn(self._latest(host, sid), "show the latest")

    async def _latest(self, host: SearchHost, sid: str) -> None:
        await host.conversations.show_latest(sid)
        self._w.transcript.scroll_to_bottom()

    def choose(self, hit: SearchHit) -> None:
        """Open the hit's conversation at its message (a click, Enter)."""
        from engine import search_terms

        if self._host is not None:
            terms = search_terms(self.hits.query)
            self._host.spawn(self._open(self._host, hit, terms), "open a search hit")

    async def _open(self, host: SearchHost, hit: SearchHit, terms: list[str]) -> None:
        shown = await host.show_message(hit.session_id, hit.message_id, hit.seq, hit.on_active_path)
        if not shown:
            self._w.say(
                self.tr(
                    "That message is on another version, which cannot be shown while the "
                    "conversation is answering."
                )
                if host.is_running(hit.session_id)
                else self.tr("That message is no longer there."),
                8000,
            )
            return
        self._w.transcript.mark_hit(hit.seq, hit.message_id, terms)
        if not hit.on_active_path:
            self._w.say(self.tr("Switched to the version holding the match."), 5000)
            # The list's notes "(on another version)" changed with the switch.
            self._search_now()

    # ------------------------------------------------------------------ the open conversation

    def open_find(self) -> None:
        """Ctrl+F: show the find bar (again) over the open conversation."""
        self._w.find_bar.open_bar()

    def _find(self, query: str) -> None:
        host = self._host
        self._find_generation += 1
        self._find_query = query
        # The hits of the last query (or conversation) are moot: Enter must not go to them.
        self.found, self.position = [], -1
        sid = host.current if host is not None else None
        if host is None or not query.strip() or not sid:
            self._w.find_bar.show_count(0, 0)
            self._w.transcript.clear_marks()
            return
        host.spawn(self._find_in(host, sid, query, self._find_generation), "find")

    async def _find_in(self, host: SearchHost, sid: str, query: str, generation: int) -> None:
        from engine import QueryError, StorageError

        try:
            found = await host.storage.find_on_path(sid, query)
        except (StorageError, QueryError) as exc:
            if generation == self._find_generation:
                self._say_failed(host, exc)
            return
        if generation != self._find_generation or sid != host.current:
            return
        self.found = found
        # Start at the newest hit: the end of the conversation is what is on screen.
        self.position = len(found) - 1 if found else -1
        await self._show_found(host)

    def step(self, delta: int) -> None:
        """Go to the next (+1) or previous (-1) hit, round the ends."""
        if not self.found or self._host is None:
            return
        self.position = (self.position + delta) % len(self.found)
        self._host.spawn(self._show_found(self._host), "find: go to")

    async def _show_found(self, host: SearchHost) -> None:
        self._w.find_bar.show_count(self.position + 1, len(self.found))
        if not self.found:
            self._w.transcript.clear_marks()
            return
        hit = self.found[self.position]
        if hit.session_id != host.current:  # found in a conversation no longer shown
            return
        from engine import search_terms

        generation, position = self._find_generation, self.position
        shown = await host.conversations.open_at(hit.session_id, hit.seq)
        # Closed, searched again or stepped on meanwhile: this hit is no longer wanted.
        if shown and generation == self._find_generation and position == self.position:
            self._w.transcript.mark_hit(hit.seq, hit.message_id, search_terms(self._find_query))

    def _find_closed(self) -> None:
        self._find_generation += 1
        self.found, self.position = [], -1
        self._w.transcript.clear_marks()
        self._w.composer.setFocus()

    def conversation_changed(self, sid: str) -> None:
        """Another conversation is shown: find again in it, if the bar is open. (Reopening
        the same one, as loading the page of a hit does, keeps the place.)"""
        model = self._w.transcript.model()
        self._watch(model)
        if sid == self._find_sid:
            return
        self._find_sid = sid
        bar = self._w.find_bar
        if bar.isVisible() and bar.field.text().strip():
            self._find(bar.field.text())
        else:
            self.found, self.position = [], -1
