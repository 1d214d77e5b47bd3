"""The conversation list as a Qt list model over `SessionInfo` rows, newest first.

The rows mirror `storage.list_sessions()`; the controller keeps them in step as it creates,
renames, updates and deletes conversations (`upsert` moves a conversation that changed to the
top, as storage's ``updated_at`` order would). Filtering by title is a
`QSortFilterProxyModel` on top (`SessionFilterModel`), so the source rows stay whole.

An untitled conversation shows a translated placeholder ("New conversation"). On
``QEvent.LanguageChange`` the list model reports every row changed, so views ask again and the
filter re-runs. The proxy, a child of the window, receives that event with the widgets and
passes it to the list model (which belongs to the controller, outside the widget tree).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QCoreApplication,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QGuiApplication, QPalette

__all__ = ["SESSION_ID_ROLE", "SessionFilterModel", "SessionListModel", "session_title"]

SESSION_ID_ROLE = Qt.ItemDataRole.UserRole + 1
UPDATED_ROLE = Qt.ItemDataRole.UserRole + 2

_Index = QModelIndex | QPersistentModelIndex


def session_title(info: Any) -> str:
    """The title to show: the stored one, or a translated placeholder."""
    title = getattr(info, "title", None)
    if title:
        return str(title)
    return QCoreApplication.translate("SessionListModel", "New conversation")


class SessionListModel(QAbstractListModel):
    """Conversations, newest first; `SESSION_ID_ROLE` gives a row's session id."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[Any] = []  # SessionInfo values

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        info = self._rows[index.row()]
        damaged = getattr(info, "unreadable", None)  # SessionInfo.unreadable: why, or None
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
        if role == Qt.ItemDataRole.ToolTipRole:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(info.updated_at)))
            if damaged:
                return f"{session_title(info)}\n{damaged}"
            return f"{session_title(info)}\n{when}"
        return None

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
            return True
        return super().event(event)

    def retranslate(self) -> None:
        """Tell views every row changed: untitled rows' placeholder is in a new language."""
        if self._rows:
            roles = [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole]
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, 0), roles)

    def roleNames(self) -> dict[int, bytes]:  # noqa: N802
        names = dict(super().roleNames())
        names.update({SESSION_ID_ROLE: b"sessionId", UPDATED_ROLE: b"updatedAt"})
        return names

    def set_sessions(self, sessions: Sequence[Any]) -> None:
        self.beginResetModel()
        self._rows = list(sessions)
        self.endResetModel()

    def row_of(self, session_id: str) -> int:
        for row, info in enumerate(self._rows):
            if info.id == session_id:
                return row
        return -1

    def info(self, session_id: str) -> Any | None:
        row = self.row_of(session_id)
        return self._rows[row] if row >= 0 else None

    def upsert(self, info: Any, *, move: bool = True) -> None:
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


class SessionFilterModel(QSortFilterProxyModel):
    """Shows the conversations whose title contains the filter text, any case."""

    def __init__(self, source: SessionListModel | None, parent: Any = None) -> None:
        super().__init__(parent)
        self.setSourceModel(source)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterRole(Qt.ItemDataRole.DisplayRole)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LanguageChange:
            source = self.sourceModel()
            if source is not None:
                QCoreApplication.sendEvent(source, event)
            return True
        return super().event(event)
