"""Settings › Tools, driven as a person would: the servers list, the editor, import, presets,
and what a running server shows — with real files, a real keyring backend (`DictKeyring`),
real executables on PATH and a real MCP server (tests/support/mcp_server.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import stat
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QCheckBox, QLineEdit

from engine.mcp import MCPServerState, MCPToolset
from tests.support.wait import until
from tests.ui.conftest import next_signal
from tests.ui.test_settings_dialog import click, file_mode, open_dialog, restore_look, save
from ui.settings.dialog import SettingsDialog
from ui.settings.mcp_file import KEYCHAIN_KEY, KEYRING_SERVICE, MCPFile, ServerEntry
from ui.settings.store import SettingsStore
from ui.settings.tool_server_editor import PairsTable, ServerEditor

__all__ = ["restore_look"]  # a fixture these tests use

SECRET = "sk-tool-0123456789abcdef-NEVER-SHOWN"
SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


def servers(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "mcp.json"
    return json.loads(path.read_text())["mcpServers"] if path.exists() else {}


async def tools_dialog(qtbot: Any, tmp_path: Path, **kw: Any) -> SettingsDialog:
    dialog = await open_dialog(qtbot, SettingsStore(tmp_path), **kw)
    dialog.tabs.setCurrentWidget(dialog.toolsPage)
    return dialog


def editor_of(dialog: SettingsDialog) -> ServerEditor:
    editor = dialog.toolsPage.editor
    assert editor is not None and editor.isVisible()
    return editor


def type_into(qtbot: Any, edit: QLineEdit, text: str) -> None:
    edit.clear()
    qtbot.keyClicks(edit, text)


def pair(table: PairsTable, row: int) -> tuple[QLineEdit, QLineEdit, QCheckBox]:
    name, value, box = (table.table.cellWidget(row, c) for c in range(3))
    assert isinstance(name, QLineEdit) and isinstance(value, QLineEdit)
    assert isinstance(box, QCheckBox)
    return name, value, box


def list_texts(dialog: SettingsDialog) -> list[tuple[str, bool]]:
    widget = dialog.toolsPage.toolServerList
    return [
        (
            widget.item(i).text().split(" — ")[0],
            widget.item(i).checkState() == Qt.CheckState.Checked,
        )
        for i in range(widget.count())
    ]


async def test_add_edit_disable_remove_each_saved_and_reopened(
    qtbot, tmp_path, dict_keyring, caplog, restore_look
) -> None:
    caplog.set_level(logging.DEBUG)
    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage
    assert page.objectName() == "toolsPage" and page.toolServerList.objectName() == "toolServerList"
    assert dialog.tabs.tabText(dialog.tabs.indexOf(page)) == "Tools"
    assert not page.toolsKeychainWarning.isVisible()

    # Add a stdio server with a secret in the keychain and a plain variable.
    click(qtbot, page.addServerButton)
    editor = editor_of(dialog)
    type_into(qtbot, editor.serverName, "weather")
    type_into(qtbot, editor.serverCommand, "uvx")
    editor.serverArgs.setPlainText("mcp-weather\n--units\nmetric")
    click(qtbot, editor.envTable.addButton)
    name, value, box = pair(editor.envTable, 0)
    qtbot.keyClicks(name, "WEATHER_KEY")
    qtbot.keyClicks(value, SECRET)
    box.setChecked(True)
    assert value.echoMode() == QLineEdit.EchoMode.Password
    click(qtbot, editor.envTable.addButton)
    name, value, _box = pair(editor.envTable, 1)
    qtbot.keyClicks(name, "UNITS")
    qtbot.keyClicks(value, "metric")
    # A bad form says the engine's sentence and stays open.
    editor.serverCommand.clear()
    click(qtbot, editor.okButton)
    assert editor.isVisible() and editor.editorError.isVisible()
    assert "'weather'" in editor.editorError.text() and '"command"' in editor.editorError.text()
    type_into(qtbot, editor.serverCommand, "uvx")
    click(qtbot, editor.okButton)
    assert not editor.isVisible()
    assert list_texts(dialog) == [("weather", True)]
    await save(qtbot, dialog)

    written = servers(tmp_path)
    assert written == {
        "weather": {
            "command": "uvx",
            "args": ["mcp-weather", "--units", "metric"],
            "env": {"WEATHER_KEY": "", "UNITS": "metric"},
            KEYCHAIN_KEY: ["env.WEATHER_KEY"],
        }
    }
    assert file_mode(tmp_path / "mcp.json") == 0o600
    assert dict_keyring.secrets[(KEYRING_SERVICE, "weather:env:WEATHER_KEY")] == SECRET

    # Open again: edit it (the kept secret is not shown; left empty it stays) and add an HTTP one.
    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage
    assert list_texts(dialog) == [("weather", True)]
    click(qtbot, page.editServerButton)
    editor = editor_of(dialog)
    _name, value, box = pair(editor.envTable, 0)
    assert value.text() == "" and box.isChecked()
    assert "keychain" in value.placeholderText()
    editor.serverTimeout.setValue(60)
    click(qtbot, editor.okButton)
    click(qtbot, page.addServerButton)
    editor = editor_of(dialog)
    type_into(qtbot, editor.serverName, "remote")
    editor.serverKind.setCurrentIndex(editor.serverKind.findData("http"))
    type_into(qtbot, editor.serverUrl, "https://mcp.example.com/mcp")
    click(qtbot, editor.headersTable.addButton)
    name, value, box = pair(editor.headersTable, 0)
    qtbot.keyClicks(name, "Authorization")
    qtbot.keyClicks(value, "Bearer " + SECRET)
    box.setChecked(True)
    click(qtbot, editor.okButton)
    changed = asyncio.ensure_future(next_signal(dialog.settingsChanged))
    click(qtbot, dialog.applyButton)
    await changed
    assert dialog.isVisible()  # Apply stays open
    written = servers(tmp_path)
    assert written["weather"]["timeout"] == 60
    assert written["remote"] == {
        "url": "https://mcp.example.com/mcp",
        "headers": {"Authorization": ""},
        KEYCHAIN_KEY: ["headers.Authorization"],
    }
    configs = await MCPFile(tmp_path).load_configs()
    assert configs[0].env["WEATHER_KEY"] == SECRET
    assert configs[1].headers["Authorization"] == "Bearer " + SECRET
    dialog.reject()

    # Open again: switch one off.
    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage
    page.toolServerList.item(0).setCheckState(Qt.CheckState.Unchecked)
    await save(qtbot, dialog)
    assert servers(tmp_path)["weather"]["disabled"] is True
    assert [c.name for c in await MCPFile(tmp_path).load_configs()] == ["remote"]

    # Open again: it shows switched off; switch it on, remove the other.
    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage
    assert list_texts(dialog) == [("weather", False), ("remote", True)]
    page.toolServerList.item(0).setCheckState(Qt.CheckState.Checked)
    page.toolServerList.setCurrentRow(1)
    click(qtbot, page.removeServerButton)
    await save(qtbot, dialog)
    assert list(servers(tmp_path)) == ["weather"]
    assert "disabled" not in servers(tmp_path)["weather"]
    assert (KEYRING_SERVICE, "remote:headers:Authorization") not in dict_keyring.secrets

    # And the last one.
    dialog = await tools_dialog(qtbot, tmp_path)
    click(qtbot, dialog.toolsPage.removeServerButton)
    await save(qtbot, dialog)
    assert servers(tmp_path) == {}
    assert dict_keyring.secrets == {}
    assert SECRET not in caplog.text
    assert SECRET not in (tmp_path / "mcp.json").read_text()


async def test_a_kept_value_is_replaced_then_moved_out_of_the_keychain(
    qtbot, tmp_path, dict_keyring, caplog, restore_look
) -> None:
    caplog.set_level(logging.DEBUG)
    store = MCPFile(tmp_path)
    await store.save_entries(
        [
            ServerEntry(
                "gh",
                {"command": "npx", "env": {"TOKEN": ""}, KEYCHAIN_KEY: ["env.TOKEN"]},
                pending={"env.TOKEN": "old-" + SECRET},
            )
        ]
    )
    dialog = await tools_dialog(qtbot, tmp_path)
    click(qtbot, dialog.toolsPage.editServerButton)
    editor = editor_of(dialog)
    name, value, box = pair(editor.envTable, 0)
    assert name.isReadOnly() and box.isChecked() and value.text() == ""
    qtbot.keyClicks(value, SECRET)
    click(qtbot, editor.okButton)
    await save(qtbot, dialog)
    assert dict_keyring.secrets == {(KEYRING_SERVICE, "gh:env:TOKEN"): SECRET}
    assert servers(tmp_path)["gh"]["env"] == {"TOKEN": ""}

    dialog = await tools_dialog(qtbot, tmp_path)
    click(qtbot, dialog.toolsPage.editServerButton)
    editor = editor_of(dialog)
    _name, value, box = pair(editor.envTable, 0)
    box.setChecked(False)
    assert value.echoMode() == QLineEdit.EchoMode.Normal
    qtbot.keyClicks(value, "now-in-the-file")
    click(qtbot, editor.okButton)
    await save(qtbot, dialog)
    assert servers(tmp_path)["gh"] == {"command": "npx", "env": {"TOKEN": "now-in-the-file"}}
    assert dict_keyring.secrets == {}
    assert SECRET not in caplog.text


async def test_other_routes_double_click_space_and_cancel(
    qtbot, tmp_path, no_keyring, restore_look
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "uvx"}, "b": {"command": "npx"}}}))
    before = path.read_bytes()
    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage
    view = page.toolServerList
    # Double-click edits; Cancel in the editor changes nothing.
    rect = view.visualItemRect(view.item(1))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    editor = editor_of(dialog)
    assert editor.serverName.text() == "b"
    type_into(qtbot, editor.serverCommand, "changed")
    click(qtbot, editor.browseCwdButton)
    assert editor.folderDialog is not None and editor.folderDialog.isVisible()
    editor.folderDialog.selectFile(str(tmp_path))
    editor.folderDialog.accept()
    assert editor.serverCwd.text() == str(tmp_path)
    editor.buttonBox.rejected.emit()
    assert not editor.isVisible()
    assert page.entries[1].data == {"command": "npx"}
    # Space switches the chosen server off.
    view.setFocus()
    view.setCurrentRow(0)
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert list_texts(dialog) == [("a", False), ("b", True)]
    # Cancel on the dialog: nothing written.
    click(qtbot, dialog.buttonBox.button(dialog.buttonBox.StandardButton.Cancel))
    assert path.read_bytes() == before

    # Open again: the same, saved this time.
    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage
    assert list_texts(dialog) == [("a", True), ("b", True)]
    page.toolServerList.setFocus()
    page.toolServerList.setCurrentRow(0)
    qtbot.keyClick(page.toolServerList, Qt.Key.Key_Space)
    await save(qtbot, dialog)
    assert servers(tmp_path) == {"a": {"command": "uvx", "disabled": True}, "b": {"command": "npx"}}


async def test_without_a_keychain_the_page_warns_and_values_stay_in_the_file(
    qtbot, tmp_path, no_keyring, caplog, restore_look
) -> None:
    caplog.set_level(logging.DEBUG)
    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage
    assert page.toolsKeychainWarning.isVisible()
    assert str(tmp_path / "mcp.json") in page.toolsKeychainWarning.text()
    click(qtbot, page.addServerButton)
    editor = editor_of(dialog)
    type_into(qtbot, editor.serverName, "gh")
    type_into(qtbot, editor.serverCommand, "npx")
    click(qtbot, editor.envTable.addButton)
    name, value, box = pair(editor.envTable, 0)
    assert not box.isEnabled()
    qtbot.keyClicks(name, "TOKEN")
    qtbot.keyClicks(value, SECRET)
    click(qtbot, editor.okButton)
    await save(qtbot, dialog)
    assert servers(tmp_path) == {"gh": {"command": "npx", "env": {"TOKEN": SECRET}}}
    assert file_mode(tmp_path / "mcp.json") == 0o600
    dialog = await tools_dialog(qtbot, tmp_path)  # read back: still never logged
    assert list_texts(dialog) == [("gh", True)]
    assert SECRET not in caplog.text


async def test_import_by_pasting_and_from_a_file(qtbot, tmp_path, no_keyring, restore_look) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"time": {"command": "uvx"}}}))
    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage

    # A bad paste says which server and field, and changes nothing.
    click(qtbot, page.importPasteButton)
    box = page.importDialog
    assert box is not None and box.isVisible()
    box.importText.setPlainText(
        json.dumps({"mcpServers": {"fine": {"command": "x"}, "weather": {"command": 3}}})
    )
    click(qtbot, box.okButton)
    assert box.isVisible() and box.importError.isVisible()
    assert "'weather'" in box.importError.text() and '"command"' in box.importError.text()
    assert list_texts(dialog) == [("time", True)]
    box.importText.setPlainText("not json at all")
    click(qtbot, box.okButton)
    assert box.isVisible() and box.importError.text()
    # A good paste (Claude desktop's shape); the taken name is renamed.
    pasted = {
        "mcpServers": {
            "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=UTC"]},
            "memory": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-memory"],
                "autoApprove": ["read_graph"],
            },
        }
    }
    box.importText.setPlainText(json.dumps(pasted))
    click(qtbot, box.okButton)
    assert not box.isVisible()
    assert list_texts(dialog) == [("time", True), ("time-2", True), ("memory", True)]
    assert "time-2" in page.toolsMessage.text()

    # A file in VS Code's shape.
    vs_code = tmp_path / "vscode-mcp.json"
    vs_code.write_text(
        json.dumps({"servers": {"web": {"type": "http", "url": "https://example.com/mcp"}}})
    )
    click(qtbot, page.importFileButton)
    assert page.fileDialog is not None and page.fileDialog.isVisible()
    finished = asyncio.ensure_future(next_signal(page.importFinished))
    page.fileDialog.selectFile(str(vs_code))
    page.fileDialog.accept()
    assert (await finished)[0] is True
    assert [n for n, _ in list_texts(dialog)] == ["time", "time-2", "memory", "web"]

    # A bad file: the engine's sentence, nothing changed.
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mcpServers": {"far": {"url": "ftp://example.com"}}}))
    click(qtbot, page.importFileButton)
    finished = asyncio.ensure_future(next_signal(page.importFinished))
    page.fileDialog.selectFile(str(bad))
    page.fileDialog.accept()
    ok, text = await finished
    assert not ok and "'far'" in text and '"url"' in text
    assert page.toolsError.isVisible() and page.toolsError.text() == text
    assert len(list_texts(dialog)) == 4

    await save(qtbot, dialog)
    written = servers(tmp_path)
    assert list(written) == ["time", "time-2", "memory", "web"]
    assert written["time-2"] == pasted["mcpServers"]["time"]
    assert written["memory"] == pasted["mcpServers"]["memory"]
    assert written["web"] == {"type": "http", "url": "https://example.com/mcp"}


async def test_a_damaged_file_is_shown_and_left_alone(
    qtbot, tmp_path, no_keyring, restore_look
) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(b'{"mcpServers": {"x": ')
    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage
    assert page.toolsError.isVisible() and str(path) in page.toolsError.text()
    assert not page.addServerButton.isEnabled() and not page.importPasteButton.isEnabled()
    dialog.languageCombo.setCurrentIndex(dialog.languageCombo.findData("en"))
    await save(qtbot, dialog)  # the rest of the settings still save
    assert path.read_bytes() == b'{"mcpServers": {"x": '
    assert (await SettingsStore(tmp_path).load()).language == "en"

    # Only when the person agrees is it moved aside; then the page works again.
    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage
    loaded = asyncio.ensure_future(next_signal(page.loaded))
    click(qtbot, page.toolsMoveAsideButton)
    await loaded
    assert not path.exists()
    (aside,) = tmp_path.glob("mcp.json.broken-*")
    assert aside.read_bytes() == b'{"mcpServers": {"x": '
    assert not page.toolsError.isVisible() and page.addServerButton.isEnabled()


async def test_editing_keeps_what_continuo_does_not_know_and_untouched_means_unwritten(
    qtbot, tmp_path, no_keyring, restore_look
) -> None:
    path = tmp_path / "mcp.json"
    original = {
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {
            "filesystem": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"],
                "autoApprove": ["read_file"],
                "timeout": 0.5,
            },
            "remote": {"url": "https://x.example/mcp", "type": "http", "note": {"a": [1]}},
        },
    }
    path.write_text(json.dumps(original))
    dialog = await tools_dialog(qtbot, tmp_path)
    # Saving other settings leaves mcp.json alone, even if it changed meanwhile by hand.
    changed_by_hand = dict(original, globalShortcut="Alt+Space")
    path.write_text(json.dumps(changed_by_hand))
    await save(qtbot, dialog)
    assert json.loads(path.read_text()) == changed_by_hand

    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage
    click(qtbot, page.editServerButton)
    editor = editor_of(dialog)
    editor.serverArgs.setPlainText("-y\n@modelcontextprotocol/server-filesystem\n/home/me/notes")
    click(qtbot, editor.okButton)
    page.toolServerList.setCurrentRow(1)
    click(qtbot, page.editServerButton)
    click(qtbot, editor_of(dialog).okButton)  # unchanged
    await save(qtbot, dialog)
    expected = json.loads(json.dumps(changed_by_hand))
    expected["mcpServers"]["filesystem"]["args"][-1] = "/home/me/notes"
    assert json.loads(path.read_text()) == expected


def fake_program(folder: Path, name: str) -> None:
    """A real executable named ``name`` in ``folder`` (what shutil.which looks for)."""
    folder.mkdir(exist_ok=True)
    program = folder / name
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


async def presets_checked(dialog: SettingsDialog) -> None:
    await until(lambda: dialog.toolsPage.found is not None, "uvx/npx looked for")


async def test_presets_say_what_they_need_when_uvx_and_npx_are_missing(
    qtbot, tmp_path, no_keyring, monkeypatch, restore_look
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    dialog = await tools_dialog(qtbot, tmp_path / "data")
    await presets_checked(dialog)
    page = dialog.toolsPage
    for key, button in page.presetButtons.items():
        # The time server is installed with the app (issue 20, item 21): it needs neither.
        assert button.isVisible() and button.isEnabled() == (key == "time"), key
    uv = "Needs uv (uvx) — install it from https://docs.astral.sh/uv/"
    assert uv in page.presetNeeds.text() and "Needs Node.js (npx)" in page.presetNeeds.text()
    assert page.presetButtons["fetch"].toolTip() == uv
    assert not (tmp_path / "data" / "mcp.json").exists()
    assert "Needs Node.js (npx)" in page.presetButtons["memory"].toolTip()


async def test_a_preset_adds_the_right_entry_when_its_program_is_found(
    qtbot, tmp_path, no_keyring, monkeypatch, restore_look
) -> None:
    bin_dir = tmp_path / "bin"
    fake_program(bin_dir, "uvx")
    monkeypatch.setenv("PATH", str(bin_dir))
    repo = tmp_path / "repo"
    repo.mkdir()
    data = tmp_path / "data"
    dialog = await tools_dialog(qtbot, data)
    await presets_checked(dialog)
    page = dialog.toolsPage
    assert page.presetButtons["fetch"].isEnabled() and page.presetButtons["git"].isEnabled()
    assert not page.presetButtons["memory"].isEnabled()
    assert not page.presetButtons["filesystem"].isEnabled()
    assert "Needs Node.js (npx)" in page.presetNeeds.text()
    assert "uvx" not in page.presetNeeds.text()
    assert page.presetButtons["fetch"].toolTip() == "Runs: uvx mcp-server-fetch"
    assert page.presetSources["fetch"].text() == "with uvx"

    click(qtbot, page.presetButtons["fetch"])
    click(qtbot, page.presetButtons["fetch"])  # twice: the second is renamed
    click(qtbot, page.presetButtons["git"])
    assert page.folderDialog is not None and page.folderDialog.isVisible()
    page.folderDialog.selectFile(str(repo))
    page.folderDialog.accept()
    await until(lambda: len(page.entries) == 3, "the git server added")
    await save(qtbot, dialog)
    assert servers(data) == {
        "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
        "fetch-2": {"command": "uvx", "args": ["mcp-server-fetch"]},
        "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", str(repo)]},
    }


async def test_a_filesystem_preset_with_npx_found(
    qtbot, tmp_path, no_keyring, monkeypatch, restore_look
) -> None:
    bin_dir = tmp_path / "bin"
    fake_program(bin_dir, "npx")
    monkeypatch.setenv("PATH", str(bin_dir))
    folder = tmp_path / "notes"
    folder.mkdir()
    data = tmp_path / "data"
    dialog = await tools_dialog(qtbot, data)
    await presets_checked(dialog)
    page = dialog.toolsPage
    assert not page.presetButtons["fetch"].isEnabled()
    click(qtbot, page.presetButtons["memory"])
    click(qtbot, page.presetButtons["filesystem"])
    assert page.folderDialog is not None
    page.folderDialog.selectFile(str(folder))
    page.folderDialog.accept()
    await until(lambda: len(page.entries) == 2, "the filesystem server added")
    await save(qtbot, dialog)
    assert servers(data) == {
        "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", str(folder)],
        },
    }


class ToolsetServers(QObject):
    """The controller's ``tool_servers`` API, over a real `MCPToolset` (for the page's tests)."""

    changed = Signal()

    def __init__(self, toolset: MCPToolset) -> None:
        super().__init__()
        self.toolset = toolset

    def names(self) -> list[str]:
        return [c.name for c in self.toolset.configs]

    def state(self, name: str) -> MCPServerState:
        return self.toolset.state(name)

    def failure(self, name: str) -> str | None:
        error = self.toolset.failures.get(name)
        return error.sentence() if error is not None else None

    async def log_tail(self, name: str, lines: int = 20) -> str:
        path = self.toolset.log_path(name)
        if path is None:
            return ""
        text = await asyncio.to_thread(path.read_text, errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def tools_of(self, name: str) -> list[Any]:
        return [t for t in self.toolset.tools if t.server == name]

    async def check(self, name: str) -> None:
        await self.toolset.list_tools()
        self.changed.emit()


async def test_state_and_tools_of_real_servers(qtbot, tmp_path, no_keyring, restore_look) -> None:
    crash = "import sys; print('boom: no such thing', file=sys.stderr); sys.exit(3)"
    (tmp_path / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "good": {"command": sys.executable, "args": [SERVER, "--name", "good"]},
                    "broken": {"command": sys.executable, "args": ["-c", crash]},
                }
            }
        )
    )
    configs = await MCPFile(tmp_path).load_configs()
    async with MCPToolset(configs, log_dir=tmp_path / "logs", start_timeout=30) as toolset:
        runtime = ToolsetServers(toolset)
        dialog = await tools_dialog(qtbot, tmp_path, tool_servers=runtime)
        page = dialog.toolsPage
        assert page.current_name() == "good"
        assert page.toolServerState.text() == "Not started"
        assert page.toolServerTools.count() == 0

        shown = asyncio.ensure_future(next_signal(page.detailsShown, 60))
        click(qtbot, page.checkServerButton)
        assert await shown == ("good",)
        assert page.toolServerState.text() == "Running"
        tools = [page.toolServerTools.item(i).text() for i in range(page.toolServerTools.count())]
        assert "Echo a text (echo) — read-only" in tools
        assert "add — destructive" in tools
        assert page.toolServerList.item(0).text().endswith(" · Running")

        shown = asyncio.ensure_future(next_signal(page.detailsShown, 30))
        page.toolServerList.setCurrentRow(1)
        assert await shown == ("broken",)
        assert page.toolServerState.text().startswith("Failed\n")
        assert "broken" in page.toolServerState.text()
        assert page.toolServerLog.isVisible()
        assert "boom: no such thing" in page.toolServerLog.toPlainText()
        assert page.toolServerTools.count() == 0
        assert page.toolServerList.item(1).text().endswith(" · Failed")
        dialog.reject()


async def test_without_running_servers_every_server_is_not_started(
    qtbot, tmp_path, no_keyring, restore_look
) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"t": {"command": "uvx"}}}))
    dialog = await tools_dialog(qtbot, tmp_path)
    page = dialog.toolsPage
    assert page.toolServerState.text() == "Not started"
    assert not page.checkServerButton.isEnabled()
