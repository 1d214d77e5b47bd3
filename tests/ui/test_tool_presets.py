"""Settings › Tools' presets find an installed server first (issue 20, item 21).

The time server is installed with the app: with neither uv nor Node.js on PATH, the Time
preset is offered, says it runs the copy installed with Continuo, adds ``<python> -m
mcp_server_time``, and after Apply, Check starts it and lists its tools, on the real window.
The bundle, which has no Python to run ``-m`` with, runs it as ``continuo --mcp-server
mcp_server_time``: the same `ui.app.main` is run here as a real stdio MCP server.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from engine.mcp import MCPServerConfig, MCPServerState, MCPToolset, MCPTransport
from tests.support.wait import until
from tests.ui.conftest import close_window, next_signal
from tests.ui.test_tool_servers import ROOT, _window
from tests.ui.test_tools_page import presets_checked
from ui.settings.tool_presets import PRESETS, LaunchKind, find_launch

pytestmark = pytest.mark.timeout(120)


async def test_the_time_preset_runs_the_installed_server_without_uv(
    tmp_path, provider_server, monkeypatch
):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no uvx, no npx, no mcp-server-time command
    window = await _window(tmp_path, provider_server)
    servers = window.controller.tool_servers
    dialog = window.open_tool_settings()
    assert dialog is not None
    page = dialog.toolsPage
    await until(lambda: page.is_loaded, what="the Tools page to load")
    await presets_checked(dialog)

    time = page.presetButtons["time"]
    assert time.isEnabled()
    assert page.presetSources["time"].text() == "installed with Continuo"
    assert time.toolTip() == f"Runs: {sys.executable} -m mcp_server_time"
    # Fetch and Git are not installed here: they say what they need.
    for key in ("fetch", "git"):
        assert not page.presetButtons[key].isEnabled()
        assert page.presetSources[key].text() == "needs uv"
    assert page.presetSources["memory"].text() == "needs Node.js"

    time.click()
    assert [e.name for e in page.entries] == ["time"]
    assert page.entries[0].data == {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    dialog.applyButton.click()
    await until(lambda: servers.names() == ["time"], what="the time server applied", seconds=30)
    shown = asyncio.ensure_future(next_signal(page.detailsShown, 60))
    page.checkServerButton.click()
    await shown
    await until(lambda: servers.state("time") is MCPServerState.RUNNING, seconds=60)
    await until(lambda: page.toolServerState.text() == "Running", what="the page to say so")
    tools = [page.toolServerTools.item(i).text() for i in range(page.toolServerTools.count())]
    assert any("get_current_time" in t for t in tools), tools
    dialog.reject()
    await close_window(window)


async def test_the_bundle_runs_the_time_server_as_its_own_command(tmp_path):
    # `continuo --mcp-server mcp_server_time` is what the bundle's preset writes; a source
    # run reaches the same main() as `python -m ui`.
    config = MCPServerConfig(
        name="time",
        transport=MCPTransport.STDIO,
        command=sys.executable,
        args=("-m", "ui", "--mcp-server", "mcp_server_time", "--local-timezone", "UTC"),
        cwd=str(ROOT),
    )
    async with MCPToolset([config], log_dir=tmp_path / "logs", start_timeout=60) as toolset:
        tools = await toolset.list_tools()
        assert not toolset.failures
        names = {t.remote_name for t in tools}
        assert {"get_current_time", "convert_time"} <= names
        now = next(t for t in tools if t.remote_name == "get_current_time")
        assert '"timezone": "UTC"' in await now.invoke({"timezone": "UTC"})


def test_a_server_not_installed_with_the_app_is_refused_in_words():
    done = subprocess.run(
        [sys.executable, "-m", "ui", "--mcp-server", "os"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert "--mcp-server takes one of mcp_server_time" in done.stderr


def test_in_the_bundle_the_preset_runs_the_app_itself(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    time = next(p for p in PRESETS if p.key == "time")
    launch = find_launch(time)
    assert launch is not None and launch.kind is LaunchKind.APP
    assert (launch.command, launch.args) == (sys.executable, ("--mcp-server", "mcp_server_time"))
    git = next(p for p in PRESETS if p.key == "git")
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing there: no mcp-server-git, no uvx
    assert find_launch(git) is None  # not installed with the app: not run as the app
