"""The tool-approval settings: when the window asks before a tool runs, and what it never asks.

`ApprovalSettings` (objectName ``approvalSettings``) edits two settings (`ui.settings.store`):
``tool_approval`` — "Ask before every tool" (`ToolApproval.ASK`, the default) or "Allow
read-only tools without asking" (`ToolApproval.READ_ONLY`) — and ``always_allowed``, the (server, tool) pairs the
person chose "Always allow this tool" for, each listed with a Revoke button. It edits only
its own copy: the dialog that holds it saves (`policy`, `revoked`), so Cancel keeps the file
as it was. It is self-contained, so it can move to another page of the settings.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from .store import ToolApproval

__all__ = ["ApprovalSettings"]


class ApprovalSettings(QWidget):
    """Ask before every tool, or let read-only ones run; the always-allowed tools."""

    changed = Signal()  # the person changed the policy or revoked a tool

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalSettings")
        layout = QVBoxLayout(self)
        self.ask_every = QRadioButton(self)
        self.ask_every.setObjectName("askEveryTool")
        self.allow_read_only = QRadioButton(self)
        self.allow_read_only.setObjectName("allowReadOnlyTools")
        self._group = QButtonGroup(self)
        self._group.addButton(self.ask_every)
        self._group.addButton(self.allow_read_only)
        self.ask_every.setChecked(True)
        self._group.buttonToggled.connect(lambda *_: self.changed.emit())
        self._read_only_note = QLabel(self)
        self._read_only_note.setObjectName("readOnlyTrustNote")
        self._read_only_note.setWordWrap(True)
        self._read_only_note.setStyleSheet("color: palette(placeholder-text);")
        self._list_title = QLabel(self)
        self._list_title.setObjectName("alwaysAllowedTitle")
        self.allowed_list = QWidget(self)
        self.allowed_list.setObjectName("alwaysAllowedList")
        self._rows = QVBoxLayout(self.allowed_list)
        self._rows.setContentsMargins(0, 0, 0, 0)
        self.empty = QLabel(self)
        self.empty.setObjectName("alwaysAllowedEmpty")
        self.empty.setStyleSheet("color: palette(placeholder-text);")
        for widget in (
            self.ask_every,
            self.allow_read_only,
            self._read_only_note,
            self._list_title,
            self.allowed_list,
            self.empty,
        ):
            layout.addWidget(widget)
        layout.addStretch(1)
        self._allowed: list[tuple[str, str]] = []  # as loaded
        self._revoked: list[tuple[str, str]] = []
        self._buttons: dict[tuple[str, str], QPushButton] = {}
        self.retranslate()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.ask_every.setText(self.tr("Ask before every tool"))
        self.allow_read_only.setText(self.tr("Allow read-only tools without asking"))
        self._read_only_note.setText(
            self.tr(
                "With this, the server is trusted to tell the truth: a tool runs without "
                "asking when its server says it only reads. Nothing checks that it does. A "
                "tool that says nothing, or also says it may destroy things, still asks. "
                "Choose this only for servers you trust."
            )
        )
        self._list_title.setText(self.tr("Tools that run without asking"))
        self.empty.setText(self.tr("None. Choose “Always allow this tool” on a tool's card."))
        for pair, button in self._buttons.items():
            button.setText(self.tr("Revoke"))
            button.setAccessibleName(
                self.tr("Revoke {tool} of {server}").format(server=pair[0], tool=pair[1])
            )

    # ------------------------------------------------------------------ loading

    def load(self, policy: ToolApproval, always_allowed: Sequence[tuple[str, str]]) -> None:
        """Show these settings (the dialog's copy; nothing is saved here)."""
        self._group.blockSignals(True)
        read_only = policy == ToolApproval.READ_ONLY
        (self.allow_read_only if read_only else self.ask_every).setChecked(True)
        self._group.blockSignals(False)
        self._allowed = [tuple(pair) for pair in always_allowed]  # type: ignore[misc]
        self._revoked = []
        while self._rows.count():
            item = self._rows.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self._buttons = {}
        for pair in self._allowed:
            self._rows.addWidget(self._row(pair))
        self._show_empty()

    def _row(self, pair: tuple[str, str]) -> QWidget:
        server, tool = pair
        row = QWidget(self.allowed_list)
        row.setObjectName("alwaysAllowedRow")
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        label = QLabel(f"{server} · {tool}", row)
        label.setObjectName("alwaysAllowedTool")
        label.setTextFormat(Qt.TextFormat.PlainText)  # names a server and its tool chose
        button = QPushButton(row)
        button.setObjectName("revokeButton")
        button.setAutoDefault(False)
        button.clicked.connect(lambda _=False, pair=pair, row=row: self.revoke(pair, row))
        self._buttons[pair] = button
        line.addWidget(label, 1)
        line.addWidget(button)
        self.retranslate()
        return row

    def revoke(self, pair: tuple[str, str], row: QWidget | None = None) -> None:
        """Take this tool off the list (saved with the dialog)."""
        if pair in self._revoked or pair not in self._allowed:
            return
        self._revoked.append(pair)
        self._buttons.pop(pair, None)
        if row is not None:
            row.hide()
            row.deleteLater()
        self._show_empty()
        self.changed.emit()

    def _show_empty(self) -> None:
        self.empty.setVisible(len(self._allowed) == len(self._revoked))

    # ------------------------------------------------------------------ reading

    def policy(self) -> ToolApproval:
        """The policy chosen."""
        return ToolApproval.READ_ONLY if self.allow_read_only.isChecked() else ToolApproval.ASK

    def revoked(self) -> list[tuple[str, str]]:
        """The tools the person revoked since `load`."""
        return list(self._revoked)

    def always_allowed(self) -> list[tuple[str, str]]:
        """The list as shown: loaded, less what was revoked."""
        return [pair for pair in self._allowed if pair not in self._revoked]
