"""Settings › Tools › Check on a server that is not applied says "Apply first" (issue 20,
item 5).

Check starts a server as the app runs it (as last applied). On the real window: a server
added on the page and not applied, one edited and not applied, and one switched off each get
a sentence beside Check saying what to do, instead of nothing; after Apply, Check starts the
new server and lists its tools.
"""

from __future__ import annotations

import asyncio
import sys

import pytest
from PySide6.QtCore import Qt

from engine.mcp import MCPServerState
from tests.support.wait import until
from tests.ui.conftest import close_window, next_signal
from tests.ui.test_tool_servers import SERVER, _srv, _window, _write_mcp_json

pytestmark = pytest.mark.timeout(120)


async def test_check_on_a_server_not_applied_says_apply_first(tmp_path, provider_server, qtbot):
    _write_mcp_json(tmp_path, {"srv": _srv(tmp_path)})
    window = await _window(tmp_path, provider_server)
    servers = window.controller.tool_servers
    dialog = window.open_tool_settings()
    assert dialog is not None
    page = dialog.toolsPage
    await until(lambda: page.is_loaded, what="the Tools page to load")

    # Added on the page, not applied: Check says so and starts nothing.
    page.add_server()
    editor = page.editor
    assert editor is not None
    editor.serverName.setText("added")
    editor.serverCommand.setText(sys.executable)
    editor.serverArgs.setPlainText(f"{SERVER}\n--name\nadded")
    editor.okButton.click()
    assert page.current_name() == "added"
    assert page.checkServerButton.isEnabled()
    page.checkServerButton.click()
    note = page.checkServerNote
    assert note.isVisible()
    assert note.text() == (
        "Press Apply first: added is not applied yet, and Check starts a server as it was applied."
    )
    assert servers.state("added") is MCPServerState.NOT_STARTED
    assert page.toolServerState.text() == "Not started"

    # Another row: the sentence belonged to the other server.
    page.toolServerList.setCurrentRow(0)
    assert not note.isVisible()

    # An applied server edited here (switched off) is not checked as it was either.
    item = page.toolServerList.item(0)
    item.setCheckState(Qt.CheckState.Unchecked)
    page.checkServerButton.click()
    assert note.isVisible() and note.text().startswith("srv is switched off")
    item.setCheckState(Qt.CheckState.Checked)

    # Applied: Check starts the new server and shows its tools.
    dialog.applyButton.click()
    await until(lambda: "added" in servers.names(), what="the new server applied", seconds=30)
    assert not note.isVisible()
    page.toolServerList.setCurrentRow(1)
    assert page.current_name() == "added"
    shown = asyncio.ensure_future(next_signal(page.detailsShown, 60))
    page.checkServerButton.click()
    assert not note.isVisible()
    await shown
    await until(lambda: page.toolServerState.text() == "Running", what="the server running")
    assert page.toolServerTools.count() >= 10
    assert servers.state("added") is MCPServerState.RUNNING

    # Edited after Apply: its changes are not what Check would start.
    page.edit_server()
    editor = page.editor
    assert editor is not None
    editor.serverArgs.setPlainText(f"{SERVER}\n--name\nrenamed")
    editor.okButton.click()
    assert page.current_name() == "added"
    page.checkServerButton.click()
    assert note.text().startswith("Press Apply first: added has changes that are not applied")
    dialog.reject()
    await close_window(window)
