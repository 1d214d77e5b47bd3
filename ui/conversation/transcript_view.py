"""The transcript: a scrolling column of row widgets that follows a `TranscriptModel`.

Only the rows the model holds get widgets, and the model holds the latest page of a long
conversation; scrolling to the top asks for the page before it (`olderWanted`), which arrives
as rows inserted at the top while the view keeps the person's place. A page that does not fill
the view (short messages in a tall window) leaves nothing to scroll, so then the view asks by
itself, one page at a time, until it can scroll or the history is all there. It never asks
twice for the same page: the controller loads asynchronously, and the next request waits
until the page asked for has arrived (the model's ``first_seq`` moved).

Redrawing is throttled: a change to a streaming answer marks its row and a timer redraws the
marked rows at most every `REFRESH_MS` milliseconds, so a burst of deltas costs one render.
Rows that arrive many at once while the conversation is shown (an answer's dozens of tool
cards, an older page) get their widgets `ROWS_PER_TURN` at a time, the lowest first, the
rest standing as light placeholders until the next turns of the loop; asking for the widgets
(`views`) builds them all. A page opened is drawn whole, at once.
Other changes (a finished answer, a tool card's state) are drawn at once. While the view is
scrolled to the bottom it stays there as text arrives; scrolled up, it stays put.

Below the rows sits the footer (the window's error banner and Resume row), so an error reads
as what happened under whatever was streamed.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QTextCursor
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QFrame,
    QLabel,
    QScrollArea,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from ..common.markdown import warm_up
from .items import ItemKind, ItemState
from .message_views import AnswerView, NoticeView, UserView

if TYPE_CHECKING:
    from PySide6.QtGui import QResizeEvent, QShowEvent

    from .items import TranscriptItem
    from .message_views import _RowView
    from .transcript import TranscriptModel

__all__ = ["REFRESH_MS", "TranscriptView", "view_for"]

REFRESH_MS = 50
_BOTTOM_SLACK = 24  # pixels from the bottom that still count as "at the bottom"
#: rows whose widgets are built in one turn of the event loop when many arrive at once (an
#: answer's many tool cards: a card takes a few milliseconds to build); the others wait
#: as light placeholders, built over the next turns, so the window keeps painting
ROWS_PER_TURN = 4


class TranscriptView(QScrollArea):
    """Shows a `TranscriptModel`; objectName ``transcript``."""

    olderWanted = Signal()  # noqa: N815 (Qt naming): scrolled to the top and more exists
    # an action on a message (its row's `MessageActions`): (action, item, an edit's text)
    messageAction = Signal(str, object, str)  # noqa: N815
    # the models "Regenerate with" offers, by label (the window points it at its picker)
    model_labels: Any = staticmethod(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._column = QWidget()
        self._column.setObjectName("transcriptColumn")
        # Never wider than the view: a row whose content cannot shrink more overflows on its
        # own, instead of widening the column and pushing every row past the right edge.
        self._column.setMinimumWidth(1)
        self._layout = QVBoxLayout(self._column)
        self._layout.setContentsMargins(16, 12, 16, 12)
        self._layout.setSpacing(10)
        self._footer = QWidget(self._column)
        footer_layout = QVBoxLayout(self._footer)
        footer_layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addWidget(self._footer)
        # What an empty conversation shows: how to begin, and what the app promises.
        self._empty_hint = QLabel(self._footer)
        self._empty_hint.setObjectName("emptyHint")
        self._empty_hint.setWordWrap(True)
        self._empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._empty_hint.setStyleSheet("color: palette(placeholder-text); padding: 48px 24px;")
        footer_layout.addWidget(self._empty_hint)
        self.retranslate()
        self._layout.addStretch(1)
        self.setWidget(self._column)
        self._column.installEventFilter(self)
        self._model: TranscriptModel | None = None
        self._views: list[Any] = []
        self._dirty: set[int] = set()  # rows of streaming answers waiting for the redraw
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._flush)
        self._stick = True  # follow the bottom as content grows
        # The row the person was reading when older rows went on top, and its distance from
        # the top of the viewport: kept while the new rows take their heights, until the
        # person scrolls.
        self._anchor: tuple[QWidget, int] | None = None
        self._adjusting = False  # the view, not the person, is moving the scroll bar
        # ``first_seq`` of the model when the page before it was asked for: that page is on
        # its way until ``first_seq`` changes (or the model is reset or replaced).
        self._asked_before: int | None = None
        self.older_requests = 0  # times `olderWanted` was emitted (tests, benchmarks)
        # Whether the rows fill the view is known only once the layout has settled: new rows
        # are shown by a queued call, and a row's height follows its text's layout, which
        # follows its width. So the check runs from the event loop, again after each layout
        # of the column (see `eventFilter`), and lays the rows out itself (`_rows_fill`).
        self._fill_timer = QTimer(self)
        self._fill_timer.setSingleShot(True)
        self._fill_timer.setInterval(0)
        self._fill_timer.timeout.connect(self._fill)
        # Rows still shown as placeholders (many arrived at once): built a batch per turn.
        self._unbuilt = 0
        self._build_timer = QTimer(self)
        self._build_timer.setSingleShot(True)
        self._build_timer.setInterval(0)
        self._build_timer.timeout.connect(self._build_more)
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._scrolled)
        bar.rangeChanged.connect(self._range_changed)
        # By keyboard, messages are reached from the transcript: Alt+Up / Alt+Down move the
        # focus from message to message, and the Menu key or Shift+F10 opens the focused
        # message's actions (`MessageActions`), so they need no Tab stop each.
        from PySide6.QtGui import QKeySequence, QShortcut

        within = Qt.ShortcutContext.WidgetWithChildrenShortcut
        for keys, slot in (
            ("Alt+Up", lambda: self.focus_message(-1)),
            ("Alt+Down", lambda: self.focus_message(1)),
            ("Shift+F10", self.open_message_menu),
        ):
            shortcut = QShortcut(QKeySequence(keys), self, context=within)
            shortcut.activated.connect(slot)
        self._below: QWidget | None = None  # where Alt+Down from the last message goes

    def take_keys_from(self, composer: QWidget) -> None:
        """Let the message keys work from ``composer``, where the focus usually is: Alt+Up
        (or Alt+Down) enters the transcript at the last message, Shift+F10 opens that
        message's menu; Alt+Down from the last message comes back to ``composer``."""
        from PySide6.QtGui import QKeySequence, QShortcut

        self._below = composer
        only = Qt.ShortcutContext.WidgetShortcut
        for keys, slot in (
            ("Alt+Up", lambda: self.focus_message(-1)),
            ("Alt+Down", lambda: self.focus_message(-1)),
            ("Shift+F10", self._open_last_menu),
        ):
            shortcut = QShortcut(QKeySequence(keys), composer, context=only)
            shortcut.activated.connect(slot)

    def _open_last_menu(self) -> Any:
        if self.focus_message(-1) is None:
            return None
        return self.open_message_menu()

    def retranslate(self) -> None:
        """Set the view's own strings in the current language."""
        self.setAccessibleName(self.tr("Conversation"))
        self._empty_hint.setText(
            self.tr(
                "Write a message below to begin. Every message is saved the moment it is "
                "complete; if an answer is cut off, Resume carries on from there."
            )
        )

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # Footer -------------------------------------------------------------------------

    def add_footer_widget(self, widget: QWidget) -> None:
        """Put a widget under the rows (it moves with the end of the conversation)."""
        widget.setParent(self._footer)
        layout = self._footer.layout()
        assert layout is not None
        layout.addWidget(widget)

    # Model --------------------------------------------------------------------------

    def model(self) -> TranscriptModel | None:
        return self._model

    def setModel(self, model: TranscriptModel | None) -> None:  # noqa: N802
        if self._model is model:
            return
        if self._model is not None:
            for signal, slot in self._connections():
                signal.disconnect(slot)
        self._model = model
        if model is not None:
            for signal, slot in self._connections():
                signal.connect(slot)
        self._stick = True
        self._rebuild()

    def _connections(self) -> list[tuple[Any, Any]]:
        assert self._model is not None
        m = self._model
        return [
            (m.rowsInserted, self._inserted),
            (m.rowsRemoved, self._removed),
            (m.modelReset, self._rebuild),
            (m.dataChanged, self._changed),
        ]

    def message_views(self) -> list[Any]:
        """The rows that are messages (the person's and answers), in order."""
        self._build_more(None)
        return [v for v in self._views if getattr(v, "actions_bar", None) is not None]

    def focused_message(self) -> Any:
        """The message row holding the keyboard focus, or None."""
        focus = QApplication.focusWidget()
        for view in self.message_views():
            if focus is not None and (focus is view or view.isAncestorOf(focus)):
                return view
        return None

    def focus_message(self, step: int) -> Any:
        """Move the focus ``step`` messages on (-1: the one above); from outside a message,
        to the last one; on from the last one, to the composer (`take_keys_from`). Returns
        the row focused, or None when no message is."""
        views = self.message_views()
        if not views:
            return None
        current = self.focused_message()
        if current is not None and getattr(current, "editing", False):
            return None  # in the editor, Alt+arrows are the editor's
        if current is None:
            target = views[-1]
        elif step > 0 and current is views[-1] and self._below is not None:
            self._below.setFocus(Qt.FocusReason.ShortcutFocusReason)  # past the last one
            return None
        else:
            index = max(0, min(len(views) - 1, views.index(current) + step))
            target = views[index]
        target.focus_message()
        self.ensureWidgetVisible(target, 0, 40)
        self._stick = False if target is not views[-1] else self._stick
        return target

    def open_message_menu(self) -> Any:
        """Open the focused message's context menu (Shift+F10); returns it, or None."""
        view = self.focused_message()
        if view is None or getattr(view, "editing", False):
            return None
        return view.open_menu()

    def views(self) -> list[Any]:
        """The row widgets, in row order (rows not built yet are built first)."""
        self._build_more(None)
        return list(self._views)

    # Search hits --------------------------------------------------------------------

    def mark_hit(self, seq: int, message_id: str, terms: list[str]) -> Any:
        """Scroll to the row of stored message ``seq`` and mark ``terms`` in its text (a
        search hit). A tool's result has no row of its own: its call's card is the row.
        Returns the row, or None when it is not loaded."""
        self.clear_marks()
        model = self._model
        if model is None:
            return None
        row = model.row_of(message_id)
        if row < 0:  # the last row at or before the message: a tool result's card
            candidates = [r for r, i in enumerate(model.items()) if i.seq is not None and i.seq <= seq]
            row = candidates[-1] if candidates else -1
        if not 0 <= row < len(self._views):
            return None
        view = self._build_row(row)
        text = view.message_text() if hasattr(view, "message_text") else None
        if text is not None:
            selections = _term_selections(text, terms)
            if not selections and hasattr(view, "unfold_for") and view.unfold_for(terms):
                selections = _term_selections(text, terms)  # it was in a folded part
            text.setExtraSelections(selections)
            self._marked = text
        self._marked_view = view
        self._stick = False
        self._reveal(view)
        # The layout of rows just built settles over the next turns of the event loop.
        # (the view as the timers' context: a closed window cancels them)
        QTimer.singleShot(0, self, lambda: self._reveal(view))
        QTimer.singleShot(50, self, lambda: self._reveal(view))
        return view

    def _reveal(self, view: QWidget) -> None:
        if view not in self._views:
            return
        # The match itself, not the row's top: in a tall row (a long code block above the
        # words) the top is all that showing the row would show.
        text = getattr(self, "_marked", None)
        marks = text.extraSelections() if text is not None and view.isAncestorOf(text) else []
        if text is None or not marks:
            self.ensureWidgetVisible(view, 0, 80)
            return
        start = QTextCursor(marks[0].cursor)
        start.setPosition(marks[0].cursor.selectionStart())
        spot = text.cursorRect(start)
        centre = text.viewport().mapTo(self._column, spot.center())
        margin = min(self.viewport().height() // 3, 120)  # some lines of context around it
        self.ensureVisible(centre.x(), centre.y(), 0, max(margin, spot.height()))

    def marked_view(self) -> Any:
        """The row the last `mark_hit` marked, while it is shown."""
        view = getattr(self, "_marked_view", None)
        return view if view in self._views else None

    def clear_marks(self) -> None:
        text = getattr(self, "_marked", None)
        self._marked = self._marked_view = None
        if text is not None:
            with contextlib.suppress(RuntimeError):  # its row was deleted meanwhile
                text.setExtraSelections([])

    def _rebuild(self) -> None:
        self.clear_marks()
        self._timer.stop()
        self._build_timer.stop()
        self._unbuilt = 0
        self._dirty.clear()
        for view in self._views:
            self._layout.removeWidget(view)
            view.deleteLater()
        self._views = []
        self._anchor = None
        self._asked_before = None  # a new or reloaded history: no page is on its way
        if self._model is not None and self._model.rowCount():
            # A page opened is drawn whole at once: its first screen is what the person
            # waits for, and a page is at most a page (placeholders would only add work).
            self._inserted(QModelIndex(), 0, self._model.rowCount() - 1, batched=False)
        self._stick = True
        self._empty_hint.setVisible(not self._views)
        self.scroll_to_bottom()
        self._fill_timer.start()

    def _inserted(
        self, parent: QModelIndex, first: int, last: int, *, batched: bool = True
    ) -> None:
        assert self._model is not None
        warm_up()  # Markdown rendering will be wanted soon: load it off the event loop
        bar = self.verticalScrollBar()
        if first == 0 and self._views and not self._stick:
            # Older rows go on top: keep what the person is reading where it is. (At the
            # bottom, following the bottom already does.)
            top = self._views[0]
            self._anchor = (top, top.y() - bar.value())
        self._column.setUpdatesEnabled(False)
        try:
            for row in range(first, last + 1):
                # The last rows first: the view follows the bottom, where they are shown.
                if batched and last - row >= ROWS_PER_TURN:
                    view: Any = _Placeholder(self._column)
                    self._unbuilt += 1
                else:
                    view = self._make_view(self._model.item(row))
                self._layout.insertWidget(row, view)
                self._views.insert(row, view)
        finally:
            self._column.setUpdatesEnabled(True)
        self._empty_hint.setVisible(False)
        self._order_focus(first, last)
        self._lay_out_now()
        self._fill_timer.start()
        if self._unbuilt:
            self._build_timer.start()

    def _make_view(self, item: Any) -> Any:
        view = view_for(item, self._column)
        view.messageAction.connect(self.messageAction)
        bar = getattr(view, "actions_bar", None)
        if bar is not None:
            bar.choices_source = lambda: list(self.model_labels())
        view.refresh(item)
        return view

    def _build_more(self, limit: int | None = ROWS_PER_TURN) -> None:
        """Build the widgets of up to ``limit`` placeholder rows, the lowest first (None:
        all of them)."""
        if self._model is None or not self._unbuilt:
            return
        built = 0
        self._column.setUpdatesEnabled(False)
        try:
            for row in range(len(self._views) - 1, -1, -1):
                if limit is not None and built >= limit:
                    break
                if isinstance(self._views[row], _Placeholder):
                    self._build_row(row)
                    built += 1
        finally:
            self._column.setUpdatesEnabled(True)
        self._lay_out_now()
        if self._unbuilt:
            self._build_timer.start()

    def _lay_out_now(self) -> None:
        """Show new rows and lay them out before anything is painted.

        A widget put in a layout is shown by a queued call, and a text learns its height only
        once it has its width: the rows were painted first, squashed on one another, and took
        their heights a turn of the loop later (under load, seconds later). Here they are
        shown at once and laid out until their heights stop changing (a text's height follows
        its width, the rows' places follow the heights): a couple of passes.
        """
        if not self._column.isVisible():
            return  # shown later: `showEvent` lays them out then
        for view in self._views:
            if _waiting_to_show(view):
                view.show()
        for _ in range(4):
            before = [view.height() for view in self._views]
            for view in self._views:
                layout = view.layout()
                if layout is not None:
                    layout.activate()
            self._layout.activate()
            if [view.height() for view in self._views] == before:
                break

    def _build_row(self, row: int) -> Any:
        """The widget of row ``row``, built now if it was a placeholder."""
        view = self._views[row]
        if isinstance(view, _Placeholder) and self._model is not None:
            real = self._make_view(self._model.item(row))
            self._layout.replaceWidget(view, real)
            self._views[row] = real
            view.deleteLater()
            self._unbuilt -= 1
            self._order_focus(row, row)
            return real
        return view

    def _order_focus(self, first: int, last: int) -> None:
        # By keyboard the transcript is one stop (arrows and Page Up/Down scroll it), not one
        # per message: a message's text takes focus on a click, to select and copy. Its
        # buttons (a tool card's result, an answer's reasoning) stay Tab stops, in reading
        # order right after the transcript, so Tab from Send reaches New chat directly.
        previous: QWidget = self
        for row in range(first - 1, -1, -1):
            stops = _tab_stops(self._views[row])
            if stops:
                previous = stops[-1]
                break
        for row in range(first, last + 1):
            for text in self._views[row].findChildren(QTextEdit):
                text.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
            for stop in _tab_stops(self._views[row]):
                QWidget.setTabOrder(previous, stop)
                previous = stop

    def _removed(self, parent: QModelIndex, first: int, last: int) -> None:
        for _ in range(first, last + 1):
            view = self._views.pop(first)
            if isinstance(view, _Placeholder):
                self._unbuilt -= 1
            self._layout.removeWidget(view)
            view.deleteLater()
        self._empty_hint.setVisible(not self._views)
        self._fill_timer.start()

    def _changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles: Any = ()) -> None:
        assert self._model is not None
        for row in range(top_left.row(), bottom_right.row() + 1):
            item = self._model.item(row)
            if item.state is ItemState.STREAMING:
                self._dirty.add(row)
                if not self._timer.isActive():
                    self._timer.start()
            elif 0 <= row < len(self._views):
                self._dirty.discard(row)
                self._views[row].refresh(item)

    def _flush(self) -> None:
        if self._model is None:
            return
        rows, self._dirty = self._dirty, set()
        for row in sorted(rows):
            if 0 <= row < len(self._views) and row < self._model.rowCount():
                self._views[row].refresh(self._model.item(row))

    def flush(self) -> None:
        """Draw pending changes now, every row built (tests and screenshots)."""
        self._timer.stop()
        self._build_more(None)
        self._flush()

    # Scrolling ----------------------------------------------------------------------

    def scroll_to_bottom(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        if not self._adjusting:
            self._anchor = None  # the person moved: their place is wherever they are now
        self._stick = value >= bar.maximum() - _BOTTOM_SLACK
        if value == bar.minimum() and bar.maximum() > 0:
            self._ask_older()

    def _range_changed(self, minimum: int, maximum: int) -> None:
        bar = self.verticalScrollBar()
        if self._anchor is not None and self._anchor[0] in self._views:
            view, offset = self._anchor
            self._adjusting = True
            try:
                bar.setValue(view.y() - offset)
            finally:
                self._adjusting = False
        elif self._stick:
            self._anchor = None
            bar.setValue(maximum)
        if maximum == 0:
            self._fill_timer.start()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        # The column is about to lay out again: heights are still changing.
        if (
            event.type() == QEvent.Type.LayoutRequest
            and self._model is not None
            and self._model.has_more
        ):
            self._fill_timer.start()
        return super().eventFilter(watched, event)

    def _fill(self) -> None:
        model = self._model
        if model is None or not model.has_more or self.older_pending():
            return
        if not self.isVisible() or self.verticalScrollBar().maximum() > 0:
            return
        if any(_waiting_to_show(view) for view in self._views):
            self._fill_timer.start()  # rows not shown yet: their heights are not known
            return
        if self._rows_fill():
            return  # the scroll bar has not caught up; the layout on its way checks again
        # Nothing to scroll: the person cannot reach the top to ask, so ask for them.
        self._ask_older()

    def _rows_fill(self) -> bool:
        """Whether the rows, laid out now, are taller than the viewport."""
        # A row lays out after its text has; a timer can run in between. Lay out now.
        for view in self._views:
            layout = view.layout()
            if layout is not None:
                layout.activate()
        self._layout.activate()
        needed = self._column.minimumSizeHint().height()
        if self._column.hasHeightForWidth():
            needed = max(needed, self._column.heightForWidth(self.viewport().width()))
        return needed > self.viewport().height()

    def _ask_older(self) -> None:
        model = self._model
        if model is None or not model.has_more or self.older_pending():
            return
        self._asked_before = model.first_seq
        self.older_requests += 1
        self.olderWanted.emit()

    def older_pending(self) -> bool:
        """Whether an older page was asked for and has not arrived yet."""
        model = self._model
        return (
            model is not None
            and model.has_more
            and self._asked_before is not None
            and self._asked_before == model.first_seq
        )

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        self._lay_out_now()
        self._fill_timer.start()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fill_timer.start()  # taller: the rows may no longer fill it


class _Placeholder(QWidget):
    """A row whose widget is not built yet (`TranscriptView._build_more` replaces it)."""

    messageAction = Signal(str, object, str)  # noqa: N815 (a row's signal; never emitted)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFixedHeight(32)  # about a folded card: the scroll bar stays near the truth

    def refresh(self, item: Any) -> None:
        pass  # drawn when it is built, as the item is then


def _term_selections(text: QTextEdit, terms: list[str]) -> list[QTextEdit.ExtraSelection]:
    """Highlight each occurrence of each term (case-insensitively, as search matched)."""
    dark_text = text.palette().text().color().lightness() < 128  # a light theme
    colour = QColor("#ffe08a") if dark_text else QColor("#7a5c00")
    document = text.document()
    selections: list[QTextEdit.ExtraSelection] = []
    for term in terms:
        cursor = document.find(term, 0)
        while not cursor.isNull() and len(selections) < 500:
            selection = QTextEdit.ExtraSelection()
            selection.cursor = cursor
            selection.format.setBackground(colour)
            selections.append(selection)
            cursor = document.find(term, cursor)
    return selections


def _tab_stops(view: QWidget) -> list[QWidget]:
    # A row's Tab stops are its buttons (its texts are click-focus, see `_order_focus`), or
    # what the row lists itself (a tool card: its buttons and its reason box, in order).
    tab = Qt.FocusPolicy.TabFocus
    listed = getattr(view, "tab_stops", None)
    stops = listed() if callable(listed) else view.findChildren(QAbstractButton)
    return [b for b in stops if b.focusPolicy() & tab]


def _waiting_to_show(widget: QWidget) -> bool:
    # A widget put in a layout is shown by a queued call; one hidden on purpose is not.
    return not widget.isVisible() and not widget.testAttribute(
        Qt.WidgetAttribute.WA_WState_ExplicitShowHide
    )


def view_for(item: TranscriptItem, parent: QWidget | None = None) -> _RowView:
    """A new widget for this kind of row."""
    from .tool_card import FoldedCallsView, ToolCardView  # built on `ui.conversation.message_views`

    kinds: dict[ItemKind, type[_RowView]] = {
        ItemKind.USER: UserView,
        ItemKind.ASSISTANT: AnswerView,
        ItemKind.TOOL: ToolCardView,
        ItemKind.NOTICE: NoticeView,
        ItemKind.FOLDED_CALLS: FoldedCallsView,
    }
    return kinds[item.kind](parent)
