"""The message hits of the conversation list's search, as a Qt list model over `SearchHit`.

One row per message that holds every term (`engine.SearchHit`): the conversation's title
and the message's date in the person's locale's format (`DisplayRole`, one line; apart in
`TITLE_ROLE` and `DATE_ROLE`, so the list elides the title, never the date), the snippet and
where the terms are in it (`SNIPPET_ROLE`, `MARKS_ROLE`), and whether the message is on a
version the conversation does not show (`HIDDEN_BRANCH_ROLE`), so the list can say so before
it is chosen. The window fills
it (`set_hits`) from the storage's answer; the model never reads storage itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import QObject, Qt

from ..common.dates import short_date
from ..common.list_model import RowsModel
from ..common.markdown import tooltip_text

if TYPE_CHECKING:
    from engine import SearchHit

__all__ = [
    "DATE_ROLE",
    "HIDDEN_BRANCH_ROLE",
    "HIT_ROLE",
    "MARKS_ROLE",
    "SNIPPET_ROLE",
    "TITLE_ROLE",
    "SearchHitsModel",
]

HIT_ROLE = int(Qt.ItemDataRole.UserRole) + 40  # the SearchHit itself
SNIPPET_ROLE = HIT_ROLE + 1
MARKS_ROLE = HIT_ROLE + 2
HIDDEN_BRANCH_ROLE = HIT_ROLE + 3
TITLE_ROLE = HIT_ROLE + 4
DATE_ROLE = HIT_ROLE + 5


class SearchHitsModel(RowsModel["SearchHit"]):
    """The hits of the last search, newest first. ``title_of`` names a conversation."""

    ROLES: ClassVar[dict[int, bytes]] = {
        HIT_ROLE: b"hit",
        SNIPPET_ROLE: b"snippet",
        MARKS_ROLE: b"marks",
        HIDDEN_BRANCH_ROLE: b"hiddenBranch",
        TITLE_ROLE: b"title",
        DATE_ROLE: b"date",
    }

    def __init__(self, title_of: Callable[[str], str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._title_of = title_of
        self.query = ""

    def set_hits(self, query: str, hits: Sequence[SearchHit]) -> None:
        self.beginResetModel()
        self.query = query
        self._rows = list(hits)
        self.endResetModel()

    def clear(self) -> None:
        self.set_hits("", [])

    def hit(self, row: int) -> SearchHit:
        return self._rows[row]

    def row_data(self, hit: SearchHit, role: int) -> Any:
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
        if role == TITLE_ROLE:
            return self._title_of(hit.session_id)
        if role == DATE_ROLE:
            return _date(hit.created_at)
        return None


def hidden_branch_text() -> str:
    from PySide6.QtCore import QCoreApplication

    return QCoreApplication.translate("SearchHitsModel", "(on another version)")


def _date(created_at: float) -> str:
    return short_date(created_at)  # the person's locale's format (ui.common.dates)
