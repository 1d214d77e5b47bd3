"""A tool server that cannot start is said in words, on the real window (issue 20, item 15).

The command in ``mcp.json`` does not exist: the status bar and Settings › Tools say "the
command … was not found" (never Python's ``FileNotFoundError: [Errno 2] …``), keep the path of
the server's log, and the status bar's message goes away once the server is removed.
"""

from __future__ import annotations

import asyncio

import pytest

from engine.mcp import MCPServerState
from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import close_window, next_signal
from tests.ui.test_tool_servers import _answered, _send, _window, _write_mcp_json

pytestmark = pytest.mark.timeout(120)

MISSING = "/nonexistent/mcp-thing"


async def test_a_missing_command_is_said_in_words_and_the_message_goes_when_it_is_removed(
    tmp_path, provider_server
):
    _write_mcp_json(tmp_path, {"thing": {"command": MISSING}})
    provider_server.script(Turn(text="Answered without it."))
    window = await _window(tmp_path, provider_server)
    servers = window.controller.tool_servers
    _send(window, "Hello.")
    await _answered(window, "Answered without it.")
    assert servers.state("thing") is MCPServerState.FAILED

    bar = window.statusBar()
    message = bar.currentMessage()
    log_path = str(tmp_path / "logs" / "mcp-thing.log")
    assert message == (
        f"The tool server thing could not start: the command {MISSING} was not found. "
        f"Its log: {log_path}"
    )

    # Settings › Tools says the same words beside the server.
    dialog = window.open_tool_settings()
    assert dialog is not None
    page = dialog.toolsPage
    await until(lambda: page.is_loaded, what="the Tools page to load")
    shown = asyncio.ensure_future(next_signal(page.detailsShown, 30))
    page.toolServerList.setCurrentRow(0)
    page._show_details()
    assert await shown == ("thing",)
    state = page.toolServerState.text()
    assert f"the command {MISSING} was not found" in state and "Errno" not in state
    assert log_path in state

    # Removed and saved: the status bar no longer speaks of it.
    page.removeServerButton.click()
    assert page.entries == []
    dialog.saveButton.click()
    await until(lambda: servers.names() == [], what="the server to be removed", seconds=30)
    await until(lambda: window.settings_dialog is None, what="the dialog to close")
    assert bar.currentMessage() == ""
    await close_window(window)
