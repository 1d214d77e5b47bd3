"""The settings dialog's Tools page: the MCP servers, their state and tools, import, presets.

Owns `ToolsPage` (objectName ``toolsPage``), the working copy of ``mcp.json``'s servers that
the dialog saves with Save/Apply (`snapshot`, then `save`), and `ToolRuntime`, a small adapter
over the running servers (the controller's ``tool_servers``: ``names()``, ``state(name)``,
``failure(name)``, ``async log_tail(name, lines)``, ``tools_of(name)``, ``async check(name)``
and a ``changed`` signal). Without it — a dialog opened with no controller — every server
shows "not started" and Check is unavailable.

Choices: an imported server whose name is taken is renamed ``name-2`` (and the page says so)
rather than asked about; a preset adds its server to the list like Add does, written with
Save/Apply. A preset runs the server it finds first (`find_launch`): one installed in the
app's own environment (the time server is a dependency, so the Time preset works without uv
or a network: ``<python> -m mcp_server_time``, or ``continuo --mcp-server mcp_server_time``
in the bundle), then the server's own command on PATH (``mcp-server-time``), then ``uvx`` /
``npx`` by name (as other apps write them); each preset says under its button which it will
run, and its tooltip the whole command. What is installed is found off the GUI thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import shiboken6
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engine import MCPConfigError, join_sentences
from engine.mcp import MCPServerState

from ..common.dialog_buttons import named_button
from ..common.file_dialogs import remember, start_folder
from ..common.i18n import engine_language
from .mcp_file import MCPFile, MCPFileError, ServerEntry, parse_servers, unique_name
from .tool_presets import PRESETS, Launch, LaunchKind, Preset, find_launch
from .tool_server_editor import ImportDialog, ServerEditor

if TYPE_CHECKING:
    from engine.mcp import MCPTool

__all__ = ["ToolRuntime", "ToolServerSource", "ToolsPage"]

log = logging.getLogger(__name__)

Spawn = Callable[[Coroutine[Any, Any, Any]], "asyncio.Task[Any]"]


class ToolServerSource(Protocol):
    """The running servers as the page reads them (`ui.tools.tool_servers.ToolServers` is one)."""

    def names(self) -> list[str]: ...

    def state(self, name: str) -> MCPServerState: ...

    def failure(self, name: str) -> str | None: ...

    def tools_of(self, name: str) -> list[MCPTool]: ...

    async def log_tail(self, name: str, lines: int = 20) -> str: ...

    async def check(self, name: str) -> None: ...


class ToolRuntime:
    """What the page asks of the running servers; works (saying little) when there are none."""

    def __init__(self, source: ToolServerSource | None) -> None:
        self.source = source

    @property
    def available(self) -> bool:
        return self.source is not None

    def connect(self, slot: Callable[[], None]) -> None:
        signal = getattr(self.source, "changed", None)  # a Qt signal, when the source has one
        if signal is not None and hasattr(signal, "connect"):
            signal.connect(slot)

    def _running(self, name: str) -> ToolServerSource | None:
        """The source, when ``name`` is one of its servers."""
        source = self.source
        return source if source is not None and name in source.names() else None

    def known(self, name: str) -> bool:
        return self._running(name) is not None

    def state(self, name: str) -> MCPServerState:
        source = self._running(name)
        return MCPServerState.NOT_STARTED if source is None else source.state(name)

    def failure(self, name: str) -> str | None:
        source = self._running(name)
        return source.failure(name) if source is not None else None

    def tools_of(self, name: str) -> list[MCPTool]:
        source = self._running(name)
        return list(source.tools_of(name)) if source is not None else []

    async def log_tail(self, name: str, lines: int = 20) -> str:
        source = self._running(name)
        return await source.log_tail(name, lines) if source is not None else ""

    async def check(self, name: str) -> None:
        source = self._running(name)
        if source is not None:
            await source.check(name)


class ToolsPage(QWidget):
    """The Tools page (objectName ``toolsPage``); see the module docstring.

    Args:
        mcp_file: where the servers are kept.
        spawn: runs a coroutine as a task the dialog owns.
        runtime: the controller's ``tool_servers``, or None.
        parent: the dialog.
    """

    loaded = Signal()
    presetsChecked = Signal()  # noqa: N815 (Qt naming)
    detailsShown = Signal(str)  # noqa: N815 — the server whose state and tools are shown
    importFinished = Signal(bool, str)  # noqa: N815 — (it worked, what the page says)

    def __init__(
        self,
        mcp_file: MCPFile,
        spawn: Spawn,
        runtime: ToolServerSource | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("toolsPage")
        self._file = mcp_file
        self._spawn = spawn
        self.runtime = ToolRuntime(runtime)
        self.entries: list[ServerEntry] = []
        self.is_loaded = False
        self.found: dict[str, bool] | None = None  # program → found on PATH; None while looking
        self.launches: dict[str, Launch | None] = {}  # preset → how it runs (once looked)
        self.editor: ServerEditor | None = None
        self.importDialog: ImportDialog | None = None
        self.fileDialog: QFileDialog | None = None
        self.folderDialog: QFileDialog | None = None
        self._filling = False
        self._message = ""
        self._saved = ""
        self._saved_entries: dict[str, str] = {}  # name → the entry as last saved (`_as_text`)
        self._check_note: tuple[str, str] | None = None  # (why Check did not start, server)
        self._build()
        self.retranslate()
        self.runtime.connect(self._on_runtime_changed)
        self._spawn(self._check_presets())

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        self.toolsKeychainWarning = QLabel(self)
        self.toolsKeychainWarning.setObjectName("toolsKeychainWarning")
        self.toolsKeychainWarning.setTextFormat(Qt.TextFormat.PlainText)  # holds a path
        self.toolsKeychainWarning.setWordWrap(True)
        self.toolsKeychainWarning.setVisible(False)
        outer.addWidget(self.toolsKeychainWarning)
        self.toolsError = QLabel(self)
        self.toolsError.setObjectName("toolsError")
        self.toolsError.setTextFormat(Qt.TextFormat.PlainText)  # names, paths, JSON problems
        self.toolsError.setWordWrap(True)
        self.toolsError.setVisible(False)
        outer.addWidget(self.toolsError)
        self.toolsMoveAsideButton = QPushButton(self)
        self.toolsMoveAsideButton.setObjectName("toolsMoveAsideButton")
        self.toolsMoveAsideButton.setVisible(False)
        self.toolsMoveAsideButton.clicked.connect(self._on_move_aside)
        outer.addWidget(self.toolsMoveAsideButton, 0, Qt.AlignmentFlag.AlignLeft)
        self.toolsMessage = QLabel(self)
        self.toolsMessage.setObjectName("toolsMessage")
        self.toolsMessage.setTextFormat(Qt.TextFormat.PlainText)
        self.toolsMessage.setWordWrap(True)
        self.toolsMessage.setVisible(False)
        outer.addWidget(self.toolsMessage)

        row = QHBoxLayout()
        left = QVBoxLayout()
        self.toolServerList = QListWidget(self)
        self.toolServerList.setObjectName("toolServerList")
        # A long command (a venv's python, a path) wraps onto a second line rather than
        # hiding the server's state behind a horizontal scroll bar.
        self.toolServerList.setWordWrap(True)
        self.toolServerList.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.toolServerList.currentRowChanged.connect(lambda _row: self._on_row_changed())
        self.toolServerList.itemChanged.connect(self._on_item_changed)
        self.toolServerList.itemDoubleClicked.connect(lambda _item: self.edit_server())
        left.addWidget(self.toolServerList, 1)
        buttons = QGridLayout()
        self.addServerButton = named_button(self, "addServerButton", self.add_server)
        self.editServerButton = named_button(self, "editServerButton", self.edit_server)
        self.removeServerButton = named_button(self, "removeServerButton", self.remove_server)
        self.importPasteButton = named_button(self, "importPasteButton", self.import_paste)
        self.importFileButton = named_button(self, "importFileButton", self.import_file)
        buttons.addWidget(self.addServerButton, 0, 0)
        buttons.addWidget(self.editServerButton, 0, 1)
        buttons.addWidget(self.removeServerButton, 0, 2)
        buttons.addWidget(self.importPasteButton, 1, 0, 1, 2)
        buttons.addWidget(self.importFileButton, 1, 2)
        left.addLayout(buttons)
        row.addLayout(left, 2)

        right = QVBoxLayout()
        self.toolServerState = QLabel(self)
        self.toolServerState.setObjectName("toolServerState")
        self.toolServerState.setTextFormat(Qt.TextFormat.PlainText)  # a server's own failure
        self.toolServerState.setWordWrap(True)
        right.addWidget(self.toolServerState)
        self.toolServerLog = QPlainTextEdit(self)
        self.toolServerLog.setObjectName("toolServerLog")
        self.toolServerLog.setReadOnly(True)
        self.toolServerLog.setVisible(False)
        self.toolServerLog.setMaximumHeight(120)
        right.addWidget(self.toolServerLog)
        self._tools_label = QLabel(self)
        right.addWidget(self._tools_label)
        self.toolServerTools = QListWidget(self)
        self.toolServerTools.setObjectName("toolServerTools")
        right.addWidget(self.toolServerTools, 1)
        self.checkServerButton = named_button(self, "checkServerButton", self._on_check)
        check_row = QHBoxLayout()
        check_row.addWidget(self.checkServerButton, 0, Qt.AlignmentFlag.AlignTop)
        # Why Check did not start the server chosen ("Press Apply first: …").
        self.checkServerNote = QLabel(self)
        self.checkServerNote.setObjectName("checkServerNote")
        self.checkServerNote.setTextFormat(Qt.TextFormat.PlainText)  # holds a server's name
        self.checkServerNote.setWordWrap(True)
        self.checkServerNote.setVisible(False)
        check_row.addWidget(self.checkServerNote, 1)
        right.addLayout(check_row)
        row.addLayout(right, 3)
        outer.addLayout(row, 1)

        self.presetBox = QGroupBox(self)
        grid = QGridLayout(self.presetBox)
        self.presetButtons: dict[str, QPushButton] = {}
        self.presetSources: dict[str, QLabel] = {}  # under each button: what it will run
        for index, preset in enumerate(PRESETS):
            button = QPushButton(self.presetBox)
            button.setObjectName(f"preset_{preset.key}")
            button.setEnabled(False)  # until what is installed is looked for
            button.clicked.connect(lambda _=False, p=preset: self.add_preset(p))
            grid.addWidget(button, 0, index)
            self.presetButtons[preset.key] = button
            source = QLabel(self.presetBox)
            source.setObjectName(f"presetSource_{preset.key}")
            source.setTextFormat(Qt.TextFormat.PlainText)
            source.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
            source.setWordWrap(True)
            source.setEnabled(False)  # drawn quietly, as a caption
            grid.addWidget(source, 1, index)
            self.presetSources[preset.key] = source
        self.presetNeeds = QLabel(self.presetBox)
        self.presetNeeds.setObjectName("presetNeeds")
        self.presetNeeds.setTextFormat(Qt.TextFormat.PlainText)
        self.presetNeeds.setWordWrap(True)
        grid.addWidget(self.presetNeeds, 2, 0, 1, len(PRESETS))
        outer.addWidget(self.presetBox)
        self._update_buttons()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        """Set every string on the page in the current language."""
        self.toolsKeychainWarning.setText(
            self.tr(
                "No system keychain was found, so secret values of MCP servers are saved in "
                "{path}, a file only your user account can read."
            ).format(path=str(self._file.path))
        )
        self.toolServerList.setAccessibleName(self.tr("MCP servers"))
        self.toolsMoveAsideButton.setText(
            self.tr("Move the damaged MCP server file aside and start with no servers")
        )
        self.addServerButton.setText(self.tr("Add…"))
        self.editServerButton.setText(self.tr("Edit…"))
        self.removeServerButton.setText(self.tr("Remove"))
        self.importPasteButton.setText(self.tr("Import: paste JSON…"))
        self.importFileButton.setText(self.tr("Import a file…"))
        self.checkServerButton.setText(self.tr("Check"))
        self._tools_label.setText(self.tr("Tools"))
        self.presetBox.setTitle(self.tr("Add a reference server"))
        names = {
            "time": self.tr("Time"),
            "fetch": self.tr("Fetch web pages"),
            "filesystem": self.tr("Files in a folder…"),
            "git": self.tr("Git repository…"),
            "memory": self.tr("Memory"),
        }
        for key, button in self.presetButtons.items():
            button.setText(names[key])
        self._show_presets()
        self._refresh_items()
        self._show_details()
        self._show_check_note()
        self.toolsMessage.setText(self._message)

    def _needs(self, program: str) -> str:
        if program == "uvx":
            return self.tr("Needs uv (uvx) — install it from https://docs.astral.sh/uv/")
        return self.tr("Needs Node.js (npx) — install it from https://nodejs.org/")

    def _source_text(self, launch: Launch | None, program: str) -> str:
        """The caption under a preset's button: which server it will run."""
        if launch is None:
            return self.tr("needs uv") if program == "uvx" else self.tr("needs Node.js")
        if launch.kind is LaunchKind.APP:
            return self.tr("installed with Continuo")
        if launch.kind is LaunchKind.INSTALLED:
            return self.tr("installed: {command}").format(command=launch.command)
        return self.tr("with {program}").format(program=launch.command)

    def _show_presets(self) -> None:
        missing = []
        for preset in PRESETS:
            button = self.presetButtons[preset.key]
            source = self.presetSources[preset.key]
            looked = self.found is not None
            launch = self.launches.get(preset.key)
            button.setEnabled(launch is not None)
            source.setVisible(looked)
            source.setText(self._source_text(launch, preset.program) if looked else "")
            if launch is not None:
                shown = launch.shown()
                if preset.folder == "folder":
                    shown += " " + self.tr("<folder>")
                elif preset.folder == "repository":
                    shown += " " + self.tr("<repository>")
                button.setToolTip(self.tr("Runs: {command}").format(command=shown))
            else:
                button.setToolTip("" if not looked else self._needs(preset.program))
            if looked and launch is None and preset.program not in missing:
                missing.append(preset.program)
        self.presetNeeds.setText("\n".join(self._needs(p) for p in missing))
        self.presetNeeds.setVisible(bool(missing))

    # ------------------------------------------------------------------ the working copy

    async def load(self) -> None:
        """Read mcp.json into the page; an unusable file is shown and the page stays read-only."""
        try:
            entries = await self._file.load_entries()
        except MCPFileError as exc:
            entries = []
            if self._alive():
                self._show_error(str(exc))
        if not self._alive():
            return
        self.toolsKeychainWarning.setVisible(not self._file.keychain_available)
        self.entries = entries
        self.is_loaded = self._file.refused_error is None
        self.toolsMoveAsideButton.setVisible(not self.is_loaded)
        if self.is_loaded:
            self._show_error("")
        self._saved = self._state()
        self._saved_entries = {e.name: self._as_text(e) for e in entries}
        self._fill_list()
        self._update_buttons()
        self.loaded.emit()

    def snapshot(self) -> list[ServerEntry] | None:
        """What a save writes (copies), or None when there is nothing the page may write."""
        if not self.is_loaded or self._state() == self._saved:
            return None  # untouched: a file changed by hand meanwhile is not written over
        return [e.copy() for e in self.entries]

    def _state(self) -> str:
        """The working copy as text, to tell whether the person changed anything."""
        return json.dumps(
            [[e.name, e.data, sorted(e.pending.items()), e.origin] for e in self.entries],
            sort_keys=True,
            default=str,
        )

    @staticmethod
    def _as_text(entry: ServerEntry) -> str:
        return json.dumps([entry.data, sorted(entry.pending.items())], sort_keys=True, default=str)

    def _applied(self, entry: ServerEntry) -> bool:
        """Whether the running servers run this entry as it is on the page (Check starts
        what was applied, never the working copy)."""
        return (
            entry.origin == entry.name
            and self._saved_entries.get(entry.name) == self._as_text(entry)
            and self.runtime.known(entry.name)
        )

    def _on_move_aside(self) -> None:
        """The person agreed: rename the damaged file, then start from no servers."""
        self.toolsMoveAsideButton.setVisible(False)

        async def move() -> None:
            moved = await self._file.move_aside()
            log.info("MCP server file moved aside to %s", moved)
            if self._alive():
                await self.load()

        self._spawn(move())

    async def save(self, entries: list[ServerEntry]) -> None:
        """Write ``entries`` (from `snapshot`); errors go to the dialog, which shows them."""
        await self._file.save_entries(entries)
        if self._alive():
            selected = self.current_name()
            self.entries = [e.copy() for e in entries]
            self._saved = self._state()
            self._saved_entries = {e.name: self._as_text(e) for e in self.entries}
            self._set_check_note(None)
            self._fill_list(selected)

    def current_name(self) -> str | None:
        row = self.toolServerList.currentRow()
        return self.entries[row].name if 0 <= row < len(self.entries) else None

    def _fill_list(self, select: str | None = None) -> None:
        self._filling = True
        self.toolServerList.clear()
        for entry in self.entries:
            item = QListWidgetItem(self._item_text(entry))
            item.setToolTip(item.text())
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if entry.enabled else Qt.CheckState.Unchecked)
            item.setData(Qt.ItemDataRole.UserRole, entry.name)
            self.toolServerList.addItem(item)
        self._filling = False
        names = [e.name for e in self.entries]
        if select in names:
            self.toolServerList.setCurrentRow(names.index(select))
        elif names:
            self.toolServerList.setCurrentRow(0)
        self._update_buttons()
        self._show_details()

    def _item_text(self, entry: ServerEntry) -> str:
        """``name — command · state`` (the state only while the app runs its servers)."""
        text = f"{entry.name} — {entry.summary()}"
        if self.runtime.available and entry.origin == entry.name:
            text += " · " + self._state_text(self.runtime.state(entry.name))
        return text

    def _state_text(self, state: MCPServerState) -> str:
        return {
            MCPServerState.NOT_STARTED: self.tr("Not started"),
            MCPServerState.RUNNING: self.tr("Running"),
            MCPServerState.STOPPED: self.tr("Stopped; it starts again when a tool is used"),
            MCPServerState.FAILED: self.tr("Failed"),
        }[state]

    def _refresh_items(self) -> None:
        self._filling = True
        for row, entry in enumerate(self.entries):
            item = self.toolServerList.item(row)
            if item is not None:
                item.setText(self._item_text(entry))
                item.setToolTip(item.text())
        self._filling = False

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        row = self.toolServerList.row(item)
        if 0 <= row < len(self.entries):
            self.entries[row].enabled = item.checkState() == Qt.CheckState.Checked

    def _update_buttons(self) -> None:
        editable = self.is_loaded
        has = self.current_name() is not None
        for button in (self.addServerButton, self.importPasteButton, self.importFileButton):
            button.setEnabled(editable)
        self.editServerButton.setEnabled(editable and has)
        self.removeServerButton.setEnabled(editable and has)
        self.presetBox.setEnabled(editable)
        self.checkServerButton.setEnabled(has and self.runtime.available)

    def _show_error(self, text: str) -> None:
        self.toolsError.setText(text)
        self.toolsError.setVisible(bool(text))

    def _say(self, text: str) -> None:
        self._message = text
        self.toolsMessage.setText(text)
        self.toolsMessage.setVisible(bool(text))

    def _add(self, entries: Sequence[ServerEntry]) -> list[tuple[str, str]]:
        """Append ``entries``, renaming those whose name is taken; return the renames."""
        renamed = []
        for entry in entries:
            name = unique_name(entry.name, {e.name for e in self.entries})
            if name != entry.name:
                renamed.append((entry.name, name))
                entry.name = name
            entry.origin = None
            self.entries.append(entry)
        self._fill_list(entries[-1].name if entries else None)
        return renamed

    # ------------------------------------------------------------------ add, edit, remove

    def add_server(self) -> None:
        self._open_editor(None)

    def edit_server(self) -> None:
        row = self.toolServerList.currentRow()
        if self.is_loaded and 0 <= row < len(self.entries):
            self._open_editor(row)

    def _open_editor(self, row: int | None) -> None:
        entry = self.entries[row] if row is not None else None
        taken = [e.name for i, e in enumerate(self.entries) if i != row]
        editor = ServerEditor(entry, taken, self._file.keychain_available, self)
        editor.accepted.connect(lambda: self._editor_done(editor, row))
        editor.finished.connect(editor.deleteLater)
        self.editor = editor
        editor.open()

    def _editor_done(self, editor: ServerEditor, row: int | None) -> None:
        result = editor.edited
        if result is None:
            return
        if row is None:
            result.origin = None
            self.entries.append(result)
        else:
            self.entries[row] = result
        self._fill_list(result.name)

    def remove_server(self) -> None:
        row = self.toolServerList.currentRow()
        if self.is_loaded and 0 <= row < len(self.entries):
            del self.entries[row]
            self._fill_list()

    # ------------------------------------------------------------------ import

    def import_paste(self) -> None:
        dialog = ImportDialog(self._imported, self)
        dialog.finished.connect(dialog.deleteLater)
        self.importDialog = dialog
        dialog.open()

    def import_file(self) -> None:
        dialog = QFileDialog(self, self.tr("Import MCP servers"), str(start_folder()))
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setNameFilters([self.tr("JSON files (*.json)"), self.tr("All files (*)")])
        dialog.fileSelected.connect(remember)
        dialog.fileSelected.connect(lambda path: self._spawn(self._import_path(path)))
        self.fileDialog = dialog
        dialog.open()

    async def _import_path(self, path: str) -> None:
        try:
            entries = await asyncio.to_thread(parse_servers, path)
        except MCPConfigError as exc:
            if self._alive():
                text = exc.sentence(engine_language())
                self._show_error(text)
                self.importFinished.emit(False, text)
            return
        if self._alive():
            self._imported(entries)

    def _imported(self, entries: list[ServerEntry]) -> None:
        self._show_error("")
        renamed = self._add(entries)
        text = self.tr(
            "Imported %n server(s); they are saved with Save or Apply.", "", len(entries)
        )
        for old, new in renamed:
            text = join_sentences(
                text,
                self.tr("{old} was already there, so the new one is {new}.").format(
                    old=old, new=new
                ),
            )
        self._say(text)
        self.importFinished.emit(True, text)

    # ------------------------------------------------------------------ presets

    async def _check_presets(self) -> None:
        programs = sorted({p.program for p in PRESETS})

        def look() -> tuple[dict[str, bool], dict[str, Launch | None]]:
            found = {p: shutil.which(p) is not None for p in programs}
            return found, {p.key: find_launch(p) for p in PRESETS}

        found, launches = await asyncio.to_thread(look)
        if not self._alive():
            return
        self.found, self.launches = found, launches
        self._show_presets()
        self.presetsChecked.emit()

    def add_preset(self, preset: Preset) -> None:
        launch = self.launches.get(preset.key)
        if launch is None:
            return
        entry = {"command": launch.command, "args": list(launch.args)}
        if preset.folder is None:
            self._add([ServerEntry(preset.key, entry)])
            return
        title = (
            self.tr("Folder the server may read and change")
            if preset.folder == "folder"
            else self.tr("Git repository")
        )
        dialog = QFileDialog(self, title, str(start_folder()))
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda path: remember(path, folder=True))
        dialog.fileSelected.connect(
            lambda path: (
                self._add([ServerEntry(preset.key, {**entry, "args": [*entry["args"], path]})])
                if path
                else None
            )
        )
        self.folderDialog = dialog
        dialog.open()

    # ------------------------------------------------------------------ state and tools

    def _on_runtime_changed(self, *_args: Any) -> None:
        if self._alive():
            self._refresh_items()
            self._show_details()

    def _on_row_changed(self) -> None:
        self._set_check_note(None)
        self._show_details()

    def _set_check_note(self, why: str | None, name: str = "") -> None:
        self._check_note = (why, name) if why else None
        self._show_check_note()

    def _show_check_note(self) -> None:
        note = self._check_note
        if note is None:
            self.checkServerNote.setVisible(False)
            return
        why, name = note
        text = {
            "off": self.tr("{name} is switched off: switch it on and press Apply, then Check."),
            "new": self.tr(
                "Press Apply first: {name} is not applied yet, and Check starts a "
                "server as it was applied."
            ),
            "changed": self.tr(
                "Press Apply first: {name} has changes that are not applied "
                "yet, and Check starts a server as it was applied."
            ),
        }[why].format(name=name)
        self.checkServerNote.setText(text)
        self.checkServerNote.setVisible(True)

    def _on_check(self) -> None:
        name = self.current_name()
        if name is None:
            return
        entry = self.entries[self.toolServerList.currentRow()]
        if not self._applied(entry) or not entry.enabled:
            # Check starts the server the app runs; one added, edited or switched off here
            # and not applied would start as before, or not at all: say what to do instead.
            if not entry.enabled:
                why = "off"
            elif self._saved_entries.get(entry.name, "") not in ("", self._as_text(entry)):
                why = "changed"
            else:
                why = "new"  # or applied a moment ago, and the servers not read again yet
            self._set_check_note(why, name)
            return
        self._set_check_note(None)

        async def check() -> None:
            self.checkServerButton.setEnabled(False)
            try:
                await self.runtime.check(name)
            except Exception as exc:  # its failure is shown as the server's state
                log.info("Checking MCP server %s failed: %s", name, type(exc).__name__)
            if self._alive():
                self._update_buttons()
                self._refresh_items()
                self._show_details()

        self._spawn(check())

    def _show_details(self) -> None:
        name = self.current_name()
        self.toolServerTools.clear()
        self.toolServerLog.setVisible(False)
        if name is None:
            self.toolServerState.setText(self.tr("No server chosen."))
            return
        state = self.runtime.state(name)
        text = self._state_text(state)
        failure = self.runtime.failure(name) if state == MCPServerState.FAILED else None
        if failure:
            text += "\n" + failure
        self.toolServerState.setText(text)
        for tool in self.runtime.tools_of(name):
            self.toolServerTools.addItem(self._tool_text(tool))
        if state == MCPServerState.FAILED:
            self._spawn(self._show_log(name))
        else:
            self.detailsShown.emit(name)

    async def _show_log(self, name: str) -> None:
        tail = await self.runtime.log_tail(name, 20)
        if not self._alive() or self.current_name() != name:
            return
        self.toolServerLog.setPlainText(tail)
        self.toolServerLog.setVisible(bool(tail))
        self.detailsShown.emit(name)

    def _tool_text(self, tool: Any) -> str:
        notes = tool.annotations
        if notes.is_read_only:
            kind = self.tr("read-only")
        elif notes.destructive is False:
            kind = self.tr("may change things")
        else:
            kind = self.tr("destructive")
        title = tool.title
        name = tool.remote_name
        shown = name if title == name else f"{title} ({name})"
        return f"{shown} — {kind}"

    def _alive(self) -> bool:
        return shiboken6.isValid(self)
