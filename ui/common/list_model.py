"""What every list model of the window shares: rows in a Python list, and their role names.

`RowsModel` owns the part of `QAbstractListModel` each model used to write again: the row
count (none under a valid parent: a list has no children), an index checked before its row is
read (a view may ask with a stale one), and the role names (Qt's own plus the model's
`RowsModel.ROLES`). A model keeps its rows in ``self._rows``, announces its changes itself
(begin/end reset, insert, remove, ``dataChanged``) and says what a row holds for a role in
`RowsModel.row_data`. Every subclass must pass Qt's model tester (pytest-qt's
``qtmodeltester``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

__all__ = ["Index", "RowsModel"]

Index = QModelIndex | QPersistentModelIndex
Row = TypeVar("Row")


class RowsModel(QAbstractListModel, Generic[Row]):
    """A list model over ``self._rows``; subclasses give `row_data` and `ROLES`."""

    #: the model's own roles and their names (for QML and accessibility tools)
    ROLES: ClassVar[dict[int, bytes]] = {}

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Row] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        return self.row_data(self._rows[index.row()], role)

    def row_data(self, row: Row, role: int) -> Any:
        """What ``row`` holds for ``role``; None when nothing."""
        return None

    def roleNames(self) -> dict[int, QByteArray]:  # noqa: N802
        names = dict(super().roleNames())
        names.update({role: QByteArray(name) for role, name in self.ROLES.items()})
        return names
