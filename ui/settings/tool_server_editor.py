"""The small dialogs of Settings › Tools: the form that adds or edits one MCP server, and the
box an ``mcpServers`` JSON is pasted into.

Owns `ServerEditor` (objectName ``toolServerEditor``) and `ImportDialog` (``toolImportDialog``).
Both are opened with ``open()`` and check what they hold with the engine's own reader before
they accept, so a bad entry is refused with the engine's sentence naming the server and the
field and changes nothing. The editor works on a copy of a `ServerEntry`: keys it does not
know stay in the entry as they were; a value marked "keep in keychain" is taken out of the
entry's JSON and handed to the store as pending, never shown again once saved.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from engine import MCPConfigError
from engine.mcp import DEFAULT_CALL_TIMEOUT

from ..common.dialog_buttons import Standard, button_row, named_button
from ..common.file_dialogs import remember, start_folder
from ..common.i18n import engine_language
from .mcp_file import KEYCHAIN_KEY, ServerEntry, parse_servers

__all__ = ["ImportDialog", "PairsTable", "ServerEditor"]

_HTTP_TYPES = {"http", "streamable-http", "streamable_http", "streamablehttp"}


class PairsTable(QWidget):
    """Names and values (environment variables or headers), each with "keep in keychain".

    Rows are line edits (``pairName``, ``pairValue``) and a check box (``pairKeychain``). A
    value already in the keychain is never shown: its field stays empty ("leave empty to keep
    it") and its name cannot be changed.
    """

    def __init__(self, keychain: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._keychain = keychain
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.table = QTableWidget(0, 3, self)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setVisible(False)
        layout.addWidget(self.table)
        buttons = QHBoxLayout()
        self.addButton = named_button(self, "addPairButton", self.add_row)
        self.removeButton = named_button(self, "removePairButton", self._remove_current)
        buttons.addWidget(self.addButton)
        buttons.addWidget(self.removeButton)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self._held: list[bool] = []
        self.retranslate()

    def retranslate(self) -> None:
        self.table.setHorizontalHeaderLabels(
            [self.tr("Name"), self.tr("Value"), self.tr("Keychain")]
        )
        self.addButton.setText(self.tr("Add"))
        self.removeButton.setText(self.tr("Remove"))
        for row, held in enumerate(self._held):
            value = self._value(row)
            if held:
                value.setPlaceholderText(self.tr("Kept in the keychain; leave empty to keep it"))
            box = self._box(row)
            box.setAccessibleName(self.tr("Keep in keychain"))
            box.setToolTip(
                self.tr("Keep this value in the system keychain instead of mcp.json")
                if self._keychain
                else self.tr(
                    "No system keychain was found: values are kept in mcp.json, a file "
                    "only your user account can read."
                )
            )

    def add_row(self, name: str = "", value: str = "", held: bool = False) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        name_edit = QLineEdit(name, self.table)
        name_edit.setObjectName("pairName")
        name_edit.setReadOnly(held)
        value_edit = QLineEdit("" if held else value, self.table)
        value_edit.setObjectName("pairValue")
        box = QCheckBox(self.table)
        box.setObjectName("pairKeychain")
        box.setChecked(held)
        box.setEnabled(self._keychain)
        box.toggled.connect(
            lambda on, edit=value_edit: edit.setEchoMode(
                QLineEdit.EchoMode.Password if on else QLineEdit.EchoMode.Normal
            )
        )
        value_edit.setEchoMode(QLineEdit.EchoMode.Password if held else QLineEdit.EchoMode.Normal)
        self.table.setCellWidget(row, 0, name_edit)
        self.table.setCellWidget(row, 1, value_edit)
        self.table.setCellWidget(row, 2, box)
        self._held.append(held)
        self.retranslate()
        return row

    def _value(self, row: int) -> QLineEdit:
        widget = self.table.cellWidget(row, 1)
        assert isinstance(widget, QLineEdit)
        return widget

    def _box(self, row: int) -> QCheckBox:
        widget = self.table.cellWidget(row, 2)
        assert isinstance(widget, QCheckBox)
        return widget

    def _remove_current(self) -> None:
        row = self.table.currentRow()
        if row < 0:
            row = self.table.rowCount() - 1
        if row >= 0:
            self.table.removeRow(row)
            del self._held[row]

    def rows(self) -> list[tuple[str, str, bool, bool]]:
        """Each row as (name, value typed, keep in keychain, its value is already there)."""
        out = []
        for row in range(self.table.rowCount()):
            name = self.table.cellWidget(row, 0)
            assert isinstance(name, QLineEdit)
            out.append(
                (
                    name.text().strip(),
                    self._value(row).text(),
                    self._box(row).isChecked(),
                    self._held[row],
                )
            )
        return out


class ServerEditor(QDialog):
    """Add or edit one server: name, kind (stdio or HTTP), how to start or reach it, timeout.

    Args:
        entry: the server to edit (a copy is made), or None for a new one.
        taken: the names of the other servers.
        keychain: whether values can be kept in the OS keychain.
        parent: the Tools page.

    After ``accepted``, `edited` is the edited entry.
    """

    def __init__(
        self,
        entry: ServerEntry | None,
        taken: Sequence[str],
        keychain: bool,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("toolServerEditor")
        self.setModal(True)
        self.resize(560, 540)
        self._entry = entry.copy() if entry is not None else ServerEntry("", {})
        self._taken = set(taken)
        self._keychain = keychain
        self.edited: ServerEntry | None = None
        self._build()
        self._fill()
        self.retranslate()

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        form = QFormLayout()
        self.serverName = QLineEdit(self)
        self.serverName.setObjectName("serverName")
        self.serverKind = QComboBox(self)
        self.serverKind.setObjectName("serverKind")
        self.serverKind.addItem("", "stdio")
        self.serverKind.addItem("", "http")
        self._labels: dict[str, QLabel] = {}

        def row(key: str, field: QWidget | QHBoxLayout, into: QFormLayout) -> None:
            label = QLabel(self)
            if isinstance(field, QWidget):
                label.setBuddy(field)
            self._labels[key] = label
            into.addRow(label, field)

        row("name", self.serverName, form)
        row("kind", self.serverKind, form)
        outer.addLayout(form)

        self.kindPages = QStackedWidget(self)
        stdio = QWidget(self.kindPages)
        stdio_form = QFormLayout(stdio)
        self.serverCommand = QLineEdit(stdio)
        self.serverCommand.setObjectName("serverCommand")
        self.serverArgs = QPlainTextEdit(stdio)
        self.serverArgs.setObjectName("serverArgs")
        self.serverArgs.setMaximumHeight(90)
        self.serverCwd = QLineEdit(stdio)
        self.serverCwd.setObjectName("serverCwd")
        self.browseCwdButton = QPushButton(stdio)
        self.browseCwdButton.setObjectName("browseCwdButton")
        self.browseCwdButton.clicked.connect(self._on_browse_cwd)
        cwd_row = QHBoxLayout()
        cwd_row.addWidget(self.serverCwd, 1)
        cwd_row.addWidget(self.browseCwdButton)
        self.envTable = PairsTable(self._keychain, stdio)
        self.envTable.setObjectName("envTable")
        row("command", self.serverCommand, stdio_form)
        row("args", self.serverArgs, stdio_form)
        row("cwd", cwd_row, stdio_form)
        self._labels["cwd"].setBuddy(self.serverCwd)
        row("env", self.envTable, stdio_form)
        http = QWidget(self.kindPages)
        http_form = QFormLayout(http)
        self.serverUrl = QLineEdit(http)
        self.serverUrl.setObjectName("serverUrl")
        self.headersTable = PairsTable(self._keychain, http)
        self.headersTable.setObjectName("headersTable")
        row("url", self.serverUrl, http_form)
        row("headers", self.headersTable, http_form)
        self.kindPages.addWidget(stdio)
        self.kindPages.addWidget(http)
        outer.addWidget(self.kindPages, 1)
        self.serverKind.currentIndexChanged.connect(self.kindPages.setCurrentIndex)

        bottom = QFormLayout()
        self.serverTimeout = QDoubleSpinBox(self)
        self.serverTimeout.setObjectName("serverTimeout")
        self.serverTimeout.setRange(1, 24 * 3600)
        self.serverTimeout.setDecimals(0)
        row("timeout", self.serverTimeout, bottom)
        outer.addLayout(bottom)

        self.editorError = QLabel(self)
        self.editorError.setObjectName("editorError")
        self.editorError.setTextFormat(Qt.TextFormat.PlainText)
        self.editorError.setWordWrap(True)
        self.editorError.setVisible(False)
        outer.addWidget(self.editorError)
        self.buttonBox = button_row(
            self, {Standard.Ok: "editorOkButton", Standard.Cancel: ""}, accepted=self._on_ok
        )
        self.okButton = self.buttonBox.button(Standard.Ok)
        outer.addWidget(self.buttonBox)
        self.folderDialog: QFileDialog | None = None

    def _fill(self) -> None:
        data = self._entry.data
        self.serverName.setText(self._entry.name)
        self.serverKind.setCurrentIndex(1 if self._entry.is_http else 0)
        self.kindPages.setCurrentIndex(self.serverKind.currentIndex())
        self.serverCommand.setText(str(data.get("command") or ""))
        args = data.get("args") or []
        self.serverArgs.setPlainText("\n".join(str(a) for a in args))
        self.serverCwd.setText(str(data.get("cwd") or ""))
        self.serverUrl.setText(str(data.get("url") or ""))
        timeout = data.get("timeout", DEFAULT_CALL_TIMEOUT)
        self.serverTimeout.setValue(float(timeout) if isinstance(timeout, int | float) else 300)
        self._shown_timeout = self.serverTimeout.value()  # rounded: written only if changed
        held = set(self._entry.held)
        for section, table in (("env", self.envTable), ("headers", self.headersTable)):
            values = data.get(section)
            if isinstance(values, dict):
                for name, value in values.items():
                    table.add_row(str(name), str(value), f"{section}.{name}" in held)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.setWindowTitle(
            self.tr("Edit MCP server") if self._entry.name else self.tr("Add an MCP server")
        )
        texts = {
            "name": self.tr("Name"),
            "kind": self.tr("Kind"),
            "command": self.tr("Command"),
            "args": self.tr("Arguments (one a line)"),
            "cwd": self.tr("Working folder"),
            "env": self.tr("Environment variables"),
            "url": self.tr("URL"),
            "headers": self.tr("Headers"),
            "timeout": self.tr("Timeout of a call (seconds)"),
        }
        for key, text in texts.items():
            self._labels[key].setText(text)
        self.serverKind.setItemText(0, self.tr("Program on this computer (stdio)"))
        self.serverKind.setItemText(1, self.tr("Server at a URL (HTTP)"))
        self.browseCwdButton.setText(self.tr("Choose…"))
        self.serverCommand.setPlaceholderText(self.tr("e.g. uvx or npx"))
        self.serverUrl.setPlaceholderText("https://")
        self.envTable.retranslate()
        self.headersTable.retranslate()

    def _on_browse_cwd(self) -> None:
        typed = self.serverCwd.text().strip()
        where = typed if typed and Path(typed).expanduser().is_dir() else str(start_folder())
        dialog = QFileDialog(self, self.tr("Working folder"), where)
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda path: remember(path, folder=True))
        dialog.fileSelected.connect(self.serverCwd.setText)
        self.folderDialog = dialog
        dialog.open()

    def build(self) -> ServerEntry:
        """The entry the form describes (not checked)."""
        data: dict[str, Any] = copy.deepcopy(self._entry.data)
        http = self.serverKind.currentData() == "http"
        gone = ("command", "args", "cwd", "env") if http else ("url", "headers")
        for key in gone:
            data.pop(key, None)
        kind = data.get("type")
        if isinstance(kind, str):
            if http and kind.lower() not in _HTTP_TYPES:
                data["type"] = "http"
            elif not http and kind.lower() != "stdio":
                data["type"] = "stdio"
        if http:
            data["url"] = self.serverUrl.text().strip()
        else:
            data["command"] = self.serverCommand.text().strip()
            args = [a for a in self.serverArgs.toPlainText().splitlines() if a.strip()]
            if args or "args" in self._entry.data:
                data["args"] = args
            cwd = self.serverCwd.text().strip()
            if cwd:
                data["cwd"] = cwd
        timeout = self.serverTimeout.value()
        if timeout != self._shown_timeout:
            data["timeout"] = int(timeout)
        held: list[str] = []
        pending: dict[str, str] = {}
        section, table = ("headers", self.headersTable) if http else ("env", self.envTable)
        values: dict[str, str] = {}
        for name, value, keep, was_held in table.rows():
            if not name:
                continue
            ref = f"{section}.{name}"
            if keep and (value or was_held):
                values[name] = ""
                held.append(ref)
                if value:
                    pending[ref] = value
            else:
                values[name] = value
        if values or section in self._entry.data:
            data[section] = values
        if held:
            data[KEYCHAIN_KEY] = held
        else:
            data.pop(KEYCHAIN_KEY, None)
        return ServerEntry(self.serverName.text().strip(), data, pending, self._entry.origin)

    def _on_ok(self) -> None:
        entry = self.build()
        problem = None
        if not entry.name:
            problem = self.tr("Give the server a name.")
        elif entry.name in self._taken:
            problem = self.tr("There is already a server named {name}.").format(name=entry.name)
        else:
            try:
                entry.check()
            except MCPConfigError as exc:
                problem = exc.sentence(engine_language())
        if problem is not None:
            self.editorError.setText(problem)
            self.editorError.setVisible(True)
            return
        self.edited = entry
        self.accept()


class ImportDialog(QDialog):
    """A box to paste an ``mcpServers`` (or VS Code ``servers``) JSON into.

    ``on_entries`` is called with the servers read when OK is pressed and they are all good;
    otherwise the engine's sentence is shown and nothing changes.
    """

    def __init__(self, on_entries: Callable[[list[ServerEntry]], None], parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("toolImportDialog")
        self.setModal(True)
        self._on_entries = on_entries
        layout = QVBoxLayout(self)
        self._intro = QLabel(self)
        self._intro.setWordWrap(True)
        layout.addWidget(self._intro)
        self.importText = QPlainTextEdit(self)
        self.importText.setObjectName("importText")
        layout.addWidget(self.importText, 1)
        self.importError = QLabel(self)
        self.importError.setObjectName("importError")
        self.importError.setTextFormat(Qt.TextFormat.PlainText)
        self.importError.setWordWrap(True)
        self.importError.setVisible(False)
        layout.addWidget(self.importError)
        self.buttonBox = button_row(
            self, {Standard.Ok: "importOkButton", Standard.Cancel: ""}, accepted=self._on_ok
        )
        self.okButton = self.buttonBox.button(Standard.Ok)
        layout.addWidget(self.buttonBox)
        self.retranslate()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Import MCP servers"))
        self._intro.setText(
            self.tr(
                'Paste a JSON object with "mcpServers" (Claude desktop, Cursor, LM Studio) '
                'or "servers" (VS Code).'
            )
        )

    def _on_ok(self) -> None:
        text = self.importText.toPlainText().strip()
        try:
            if not text.startswith("{"):
                raise MCPConfigError("the pasted configuration", "it is not a JSON object")
            entries = parse_servers(text)  # pasted text: no file is read
        except MCPConfigError as exc:
            self.importError.setText(exc.sentence(engine_language()))
            self.importError.setVisible(True)
            return
        self._on_entries(entries)
        self.accept()
