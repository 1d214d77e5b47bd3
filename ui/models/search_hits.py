"""The message hits of the conversation list's search, as a Qt list model over `SearchHit`.

One row per message that holds every term (`engine.storage.search`): the conversation's title
and the message's date (`DisplayRole`, one line), the snippet and where the terms are in it
(`SNIPPET_ROLE`, `MARKS_ROLE`), and whether the message is on a version the conversation does
not show (`HIDDEN_BRANCH_ROLE`), so the list can say so before it is chosen. The window fills
it (`set_hits`) from the storage's answer; the model never reads storage itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractListModel,
    QDateTime,
    QLocale,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)

from ..markdown import tooltip_text

if TYPE_CHECKING:
    from engine.storage.search import SearchHit

__all__ = [
    "HIDDEN_BRANCH_ROLE",
    "HIT_ROLE",
    "MARKS_ROLE",
    "SNIPPET_ROLE",
    "SearchHitsModel",
]

_Index = QModelIndex | QPersistentModelIndex

HIT_ROLE = int(Qt.ItemDataRole.UserRole) + 40  # the SearchHit itself
SNIPPET_ROLE = HIT_ROLE + 1
MARKS_ROLE = HIT_ROLE + 2
HIDDEN_BRANCH_ROLE = HIT_ROLE + 3
_TITLE_ROLE = HIT_ROLE + 4
_DATE_ROLE = HIT_ROLE + 5


class SearchHitsModel(QAbstractListModel):
    """The hits of the last search, newest first. ``title_of`` names a conversation."""

    def __init__(self, title_of: Callable[[str], str], parent: Any = None) -> None:
        super().__init__(parent)
        self._title_of = title_of
        self._hits: list[SearchHit] = []
        self.query = ""

    def set_hits(self, query: str, hits: Sequence[SearchHit]) -> None:
        self.beginResetModel()
        self.query = query
        self._hits = list(hits)
        self.endResetModel()

    def clear(self) -> None:
        self.set_hits("", [])

    def hit(self, row: int) -> SearchHit:
        return self._hits[row]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._hits)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._hits):
            return None
        hit = self._hits[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{self._title_of(hit.session_id)} · {_date(hit.created_at)}"
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleTextRole):
            note = "" if hit.on_active_path else " " + hidden_branch_text()
            text = f"{self._title_of(hit.session_id)}, {_date(hit.created_at)}: {hit.snippet}{note}"
            # A snippet is a message's words (a tool's HTML, say): a tooltip shows it as text,
            # never as rich text that would load its images.
            return tooltip_text(text) if role == Qt.ItemDataRole.ToolTipRole else text
        if role == HIT_ROLE:
            return hit
        if role == SNIPPET_ROLE:
            return hit.snippet
        if role == MARKS_ROLE:
            return hit.marks
        if role == HIDDEN_BRANCH_ROLE:
            return not hit.on_active_path
        if role == _TITLE_ROLE:
            return self._title_of(hit.session_id)
        if role == _DATE_ROLE:
            return _date(hit.created_at)
        return None

    def roleNames(self) -> dict[int, bytes]:  # noqa: N802
        names = dict(super().roleNames())
        names.update({HIT_ROLE: b"hit", SNIPPET_ROLE: b"snippet", MARKS_ROLE: b"marks"})
        names.update({HIDDEN_BRANCH_ROLE: b"hiddenBranch", _TITLE_ROLE: b"title"})
        names[_DATE_ROLE] = b"date"
        return names


def hidden_branch_text() -> str:
    from PySide6.QtCore import QCoreApplication

    return QCoreApplication.translate("SearchHitsModel", "(on another version)")


def _date(created_at: float) -> str:
    when = QDateTime.fromSecsSinceEpoch(int(created_at))
    return QLocale().toString(when.date(), QLocale.FormatType.ShortFormat)
