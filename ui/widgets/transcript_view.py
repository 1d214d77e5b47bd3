"""The transcript: a scrolling column of row widgets that follows a `TranscriptModel`.

Only the rows the model holds get widgets, and the model holds the latest page of a long
conversation; scrolling to the top asks for the page before it (`olderWanted`), which arrives
as rows inserted at the top while the view keeps the person's place.

Redrawing is throttled: a change to a streaming answer marks its row and a timer redraws the
marked rows at most every `REFRESH_MS` milliseconds, so a burst of deltas costs one render.
Other changes (a finished answer, a tool card's state) are drawn at once. While the view is
scrolled to the bottom it stays there as text arrives; scrolled up, it stays put.

Below the rows sits the footer (the window's error banner and Resume row), so an error reads
as what happened under whatever was streamed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget

from ..markdown import warm_up
from ..models.items import ItemState
from .message_views import view_for

if TYPE_CHECKING:
    from ..models.transcript import TranscriptModel

__all__ = ["REFRESH_MS", "TranscriptView"]

REFRESH_MS = 50
_BOTTOM_SLACK = 24  #: pixels from the bottom that still count as "at the bottom"


class TranscriptView(QScrollArea):
    """Shows a `TranscriptModel`; objectName ``transcript``."""

    olderWanted = Signal()  # noqa: N815 (Qt naming): scrolled to the top and more exists

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setAccessibleName(self.tr("Conversation"))
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._column = QWidget()
        self._column.setObjectName("transcriptColumn")
        self._layout = QVBoxLayout(self._column)
        self._layout.setContentsMargins(16, 12, 16, 12)
        self._layout.setSpacing(10)
        self._footer = QWidget(self._column)
        footer_layout = QVBoxLayout(self._footer)
        footer_layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addWidget(self._footer)
        self._layout.addStretch(1)
        self.setWidget(self._column)
        self._model: TranscriptModel | None = None
        self._views: list[Any] = []
        self._dirty: set[int] = set()  #: id()s of items waiting for the throttled redraw
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._flush)
        self._stick = True  #: follow the bottom as content grows
        self._keep_from_bottom: int | None = None  #: distance to keep after rows go on top
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._scrolled)
        bar.rangeChanged.connect(self._range_changed)

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

    def views(self) -> list[Any]:
        """The row widgets, in row order."""
        return list(self._views)

    def _rebuild(self) -> None:
        self._timer.stop()
        self._dirty.clear()
        for view in self._views:
            self._layout.removeWidget(view)
            view.deleteLater()
        self._views = []
        if self._model is not None and self._model.rowCount():
            self._inserted(QModelIndex(), 0, self._model.rowCount() - 1)
        self._stick = True
        self.scroll_to_bottom()

    def _inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        assert self._model is not None
        warm_up()  # Markdown rendering will be wanted soon: load it off the event loop
        bar = self.verticalScrollBar()
        if first == 0 and self._views:
            # Older rows go on top: keep what the person is reading where it is.
            self._keep_from_bottom = bar.maximum() - bar.value()
        self._column.setUpdatesEnabled(False)
        try:
            for row in range(first, last + 1):
                item = self._model.item(row)
                view = view_for(item, self._column)
                view.refresh(item)
                self._layout.insertWidget(row, view)
                self._views.insert(row, view)
        finally:
            self._column.setUpdatesEnabled(True)

    def _removed(self, parent: QModelIndex, first: int, last: int) -> None:
        for _ in range(first, last + 1):
            view = self._views.pop(first)
            self._layout.removeWidget(view)
            view.deleteLater()

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
        """Draw pending changes now (tests and screenshots)."""
        self._timer.stop()
        self._flush()

    # Scrolling ----------------------------------------------------------------------

    def scroll_to_bottom(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._stick = value >= bar.maximum() - _BOTTOM_SLACK
        model = self._model
        if value == bar.minimum() and bar.maximum() > 0 and model is not None and model.has_more:
            self.olderWanted.emit()

    def _range_changed(self, minimum: int, maximum: int) -> None:
        bar = self.verticalScrollBar()
        if self._keep_from_bottom is not None:
            bar.setValue(maximum - self._keep_from_bottom)
            self._keep_from_bottom = None
        elif self._stick:
            bar.setValue(maximum)
