"""The conversation list as a Qt list model over `SessionInfo` rows, newest first.

The rows mirror `storage.list_sessions()`; the controller keeps them in step as it creates,
renames, updates and deletes conversations (`upsert` moves a conversation that changed to the
top, as storage's ``updated_at`` order would). Filtering by title is a
`QSortFilterProxyModel` on top (`SessionFilterModel`), so the source rows stay whole.

An untitled conversation shows a translated placeholder ("New conversation"). On
``QEvent.LanguageChange`` the list model reports every row changed, so views ask again and the
filter re-runs. The proxy, a child of the window, receives that event with the widgets and
passes it to the list model (which belongs to the controller, outside the widget tree).

Rows fall into date sections (Today, Yesterday, Previous 7 days, then one per month): the
proxy gives the first visible row of each section its header (`SECTION_ROLE`), so a filtered
list keeps its headers right; `ui.conversation.session_list` draws them. A conversation whose
history ends where Resume can carry on is marked waiting (`WAITING_ROLE`); the window tells
the list which are (`SessionListModel.set_waiting`), the list does not read storage itself.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import (
    QCoreApplication,
    QDate,
    QEvent,
    QLocale,
    QModelIndex,
    QObject,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QGuiApplication, QPalette

from ..common.list_model import Index, RowsModel
from ..common.markdown import tooltip_text

if TYPE_CHECKING:  # the list is built before the engine loads
    from engine import SessionInfo, TitleQuery

__all__ = [
    "SECTION_ROLE",
    "SESSION_ID_ROLE",
    "WAITING_ROLE",
    "SessionFilterModel",
    "SessionListModel",
    "section_of",
    "session_title",
]

SESSION_ID_ROLE = Qt.ItemDataRole.UserRole + 1
UPDATED_ROLE = Qt.ItemDataRole.UserRole + 2
# True when the conversation waits for Resume (its answer was cut off or never came)
WAITING_ROLE = Qt.ItemDataRole.UserRole + 3
# the date section's header on the first visible row of each section, else ""
SECTION_ROLE = Qt.ItemDataRole.UserRole + 4

def session_title(info: SessionInfo | None) -> str:
    """The title to show: the stored one, or a translated placeholder."""
    title = info.title if info is not None else None
    if title:
        return title
    return QCoreApplication.translate("SessionListModel", "New conversation")


def local_today() -> dt.date:
    """Today's date where the person is (sections follow the local calendar)."""
    return dt.datetime.now(dt.UTC).astimezone().date()


def section_of(updated_at: float, today: dt.date | None = None) -> tuple[int, str]:
    """The date section of a conversation last changed at ``updated_at`` (local time).

    Returns ``(key, header)``: keys grow older (0 today, 1 yesterday, 2 the previous 7 days,
    then one per month), the header is in the current language.
    """
    today = today or local_today()
    day = dt.datetime.fromtimestamp(float(updated_at), dt.UTC).astimezone().date()
    age = (today - day).days

    if age <= 0:  # today, or a clock that went back: still the newest
        return 0, QCoreApplication.translate("SessionListModel", "Today")
    if age == 1:
        return 1, QCoreApplication.translate("SessionListModel", "Yesterday")
    if age <= 7:
        return 2, QCoreApplication.translate("SessionListModel", "Previous 7 days")
    key = 3 + (today.year - day.year) * 12 + (today.month - day.month)
    # A Qt date format, translated: "MMMM yyyy" is "November 2026", Chinese "yyyy年M月".
    month_format = QCoreApplication.translate("SessionListModel", "MMMM yyyy")
    return key, QLocale().toString(QDate(day.year, day.month, 1), month_format)


class SessionListModel(RowsModel["SessionInfo"]):
    """Conversations, newest first; `SESSION_ID_ROLE` gives a row's session id."""

    ROLES: ClassVar[dict[int, bytes]] = {
        SESSION_ID_ROLE: b"sessionId",
        UPDATED_ROLE: b"updatedAt",
        WAITING_ROLE: b"waiting",
        SECTION_ROLE: b"section",
    }

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._waiting: set[str] = set()  # ids of conversations waiting for Resume

    def row_data(self, info: SessionInfo, role: int) -> Any:
        damaged = info.unreadable  # why the stored row cannot be read, or None
        if role == Qt.ItemDataRole.DisplayRole and damaged:
            return QCoreApplication.translate("SessionListModel", "{title} (unreadable)").format(
                title=session_title(info)
            )
        if role == Qt.ItemDataRole.ForegroundRole and damaged:
            return QGuiApplication.palette().brush(
                QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text
            )
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return session_title(info)
        if role == SESSION_ID_ROLE:
            return info.id
        if role == UPDATED_ROLE:
            return float(info.updated_at)
        if role == WAITING_ROLE:
            return info.id in self._waiting
        if role == Qt.ItemDataRole.ToolTipRole:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(info.updated_at)))
            if damaged:
                return tooltip_text(f"{session_title(info)}\n{damaged}")
            lines = [session_title(info), when]
            if info.id in self._waiting:
                lines.append(self.waiting_text())
            # A title is outside text (the first message): escaped, as tooltips are HTML.
            return tooltip_text("\n".join(lines))
        if role == Qt.ItemDataRole.AccessibleTextRole:
            if info.id in self._waiting:
                return f"{session_title(info)}, {self.waiting_text()}"
            return session_title(info)
        return None

    def waiting_text(self) -> str:
        """What the mark on a conversation waiting for Resume means."""
        return self.tr("Waiting for Resume")

    def set_waiting(self, session_id: str, waiting: bool) -> None:
        """Mark (or unmark) a conversation as waiting for Resume."""
        if (session_id in self._waiting) == waiting:
            return
        if waiting:
            self._waiting.add(session_id)
        else:
            self._waiting.discard(session_id)
        row = self.row_of(session_id)
        if row >= 0:
            index = self.index(row, 0)
            self.dataChanged.emit(index, index)

    def is_waiting(self, session_id: str) -> bool:
        return session_id in self._waiting

    def session_ids(self) -> Iterable[str]:
        """The listed conversations' ids, newest first."""
        return [info.id for info in self._rows]

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
            return True
        return super().event(event)

    def retranslate(self) -> None:
        """Tell views every row changed: untitled rows' placeholder is in a new language."""
        if self._rows:
            roles = [
                Qt.ItemDataRole.DisplayRole,
                Qt.ItemDataRole.ToolTipRole,
                Qt.ItemDataRole.AccessibleTextRole,
            ]
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, 0), roles)

    def set_sessions(self, sessions: Sequence[SessionInfo]) -> None:
        self.beginResetModel()
        self._rows = list(sessions)
        self.endResetModel()

    def row_of(self, session_id: str) -> int:
        for row, info in enumerate(self._rows):
            if info.id == session_id:
                return row
        return -1

    def info(self, session_id: str) -> SessionInfo | None:
        row = self.row_of(session_id)
        return self._rows[row] if row >= 0 else None

    def upsert(self, info: SessionInfo, *, move: bool = True) -> None:
        """Add or replace a conversation; with ``move``, put it on top (it is the newest)."""
        row = self.row_of(info.id)
        if row < 0:
            self.beginInsertRows(QModelIndex(), 0, 0)
            self._rows.insert(0, info)
            self.endInsertRows()
            return
        self._rows[row] = info
        if row > 0 and move:
            self.beginMoveRows(QModelIndex(), row, row, QModelIndex(), 0)
            self._rows.insert(0, self._rows.pop(row))
            self.endMoveRows()
            row = 0
        index = self.index(row, 0)
        self.dataChanged.emit(index, index)

    def remove(self, session_id: str) -> None:
        row = self.row_of(session_id)
        if row >= 0:
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._rows[row]
            self.endRemoveRows()
        self._waiting.discard(session_id)


class SessionFilterModel(QSortFilterProxyModel):
    """Shows the conversations whose shown title holds every word of the filter text, by the
    engine's rule of a title search (`engine.TitleQuery`: Python's full case folding, so
    "STRASSE" finds "Straße"); gives the first visible row of each date section its header
    (`SECTION_ROLE`)."""

    def __init__(self, source: SessionListModel | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        if source is not None:
            self.setSourceModel(source)
        self._query: TitleQuery | None = None  # None: no filter
        # the day sections are counted from (None: today); tests and screenshots pin it
        self.today: dt.date | None = None

    def set_query(self, text: str) -> None:
        """Filter by ``text`` ("" shows every conversation)."""
        query = None
        if text.strip():
            from engine import TitleQuery  # typed only once the engine is loaded

            query = TitleQuery.parse(text)
        if hasattr(self, "beginFilterChange"):  # Qt 6.10 and later
            self.beginFilterChange()
            self._query = query
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # Qt 6.8 and 6.9 (deprecated since)
            self._query = query
            self.invalidateRowsFilter()

    def index_of(self, session_id: str) -> QModelIndex:
        """The row of a conversation as shown (invalid: not listed, or filtered out)."""
        source = self.sourceModel()
        if not session_id or not isinstance(source, SessionListModel):
            return QModelIndex()
        row = source.row_of(session_id)
        return self.mapFromSource(source.index(row, 0)) if row >= 0 else QModelIndex()

    def info(self, session_id: str) -> SessionInfo | None:
        """A listed conversation's entry (None: not listed, or no list yet)."""
        source = self.sourceModel()
        return source.info(session_id) if isinstance(source, SessionListModel) else None

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:  # noqa: N802
        if self._query is None:
            return True
        source = self.sourceModel()
        if source is None:
            return False
        title = source.index(source_row, 0, source_parent).data(Qt.ItemDataRole.DisplayRole)
        return self._query.matches(title if isinstance(title, str) else None)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != SECTION_ROLE:
            return super().data(index, role)
        if not index.isValid():
            return ""
        today = self.today or local_today()
        key, header = section_of(super().data(index, UPDATED_ROLE) or 0.0, today)
        row = index.row()
        if row > 0:
            above = super().data(self.index(row - 1, 0), UPDATED_ROLE) or 0.0
            if section_of(above, today)[0] == key:
                return ""
        return header

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LanguageChange:
            source = self.sourceModel()
            if source is not None:
                QCoreApplication.sendEvent(source, event)
            return True
        return super().event(event)
