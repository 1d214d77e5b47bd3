"""`MCPToolset` against a published third-party server: ``mcp-server-time`` from PyPI.

Our own test server (`tests/support/mcp_server.py`) is written with FastMCP; this one is the
reference time server, written on the SDK's low-level ``Server`` by other people, installed by
the ``test`` extra. It runs live over stdio through the same path a person's config takes: its
console script next to our interpreter, started with an argument, in the minimal environment.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from engine.errors import MCPToolError
from engine.mcp import MCPServerState, MCPToolset, load_mcp_config

#: the zone the server is told is local (its tools' descriptions name it)
LOCAL = "Europe/Paris"


def time_command() -> list[str]:
    """The server's console script next to our interpreter (where pip put it), else ``-m``."""
    script = Path(sys.executable).with_name("mcp-server-time")
    if script.exists():
        return [str(script)]
    # Not a skip: the test extra installs it, so its absence fails (the start error says so).
    return [sys.executable, "-m", "mcp_server_time"]


@pytest.fixture
async def toolset(tmp_path: Path) -> AsyncIterator[MCPToolset]:
    command, *args = time_command()
    (config,) = load_mcp_config(
        {"mcpServers": {"time": {"command": command, "args": [*args, "--local-timezone", LOCAL]}}}
    )
    async with MCPToolset([config], log_dir=tmp_path / "logs") as opened:
        yield opened


async def test_lists_its_tools_with_the_annotations_it_reports(toolset: MCPToolset) -> None:
    assert toolset.state("time") is MCPServerState.NOT_STARTED
    tools = {t.name: t for t in await toolset.list_tools()}
    assert toolset.failures == {}, toolset.failures
    assert set(tools) == {"time__get_current_time", "time__convert_time"}
    for tool in tools.values():
        assert tool.server == "time"
        # It says all four hints, and no title (so the title is the tool's own name).
        hints = tool.annotations
        assert (hints.read_only, hints.destructive, hints.idempotent, hints.open_world) == (
            True,
            False,
            True,
            False,
        )
        assert hints.title is None and tool.title == tool.remote_name
        assert hints.is_read_only and not hints.may_destroy
    current = tools["time__get_current_time"]
    assert current.description == "Get current time in a specific timezone"
    assert current.spec.parameters["required"] == ["timezone"]
    # The argument we gave it reached it: its schema names the local zone we set.
    assert LOCAL in current.spec.parameters["properties"]["timezone"]["description"]
    convert = tools["time__convert_time"].spec.parameters
    assert convert["required"] == ["source_timezone", "time", "target_timezone"]
    assert toolset.state("time") is MCPServerState.RUNNING


async def test_get_current_time_answers_json_for_the_zone(toolset: MCPToolset) -> None:
    tools = {t.name: t for t in await toolset.list_tools()}
    before = datetime.now(ZoneInfo("Asia/Tokyo")).replace(microsecond=0)
    text = await tools["time__get_current_time"].invoke({"timezone": "Asia/Tokyo"})
    after = datetime.now(ZoneInfo("Asia/Tokyo"))
    answer = json.loads(text)
    assert answer["timezone"] == "Asia/Tokyo" and answer["is_dst"] is False
    when = datetime.fromisoformat(answer["datetime"])
    assert when.utcoffset() is not None and when.utcoffset().total_seconds() == 9 * 3600
    assert before <= when <= after, (before, when, after)
    assert answer["day_of_week"] == when.strftime("%A")


async def test_convert_time_between_zones(toolset: MCPToolset) -> None:
    text = await toolset.call(
        "time",
        "convert_time",
        {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kolkata"},
    )
    answer = json.loads(text)
    assert answer["source"]["datetime"].endswith("T12:00:00+00:00")
    assert answer["target"]["datetime"].endswith("T17:30:00+05:30")
    assert answer["time_difference"] == "+5.5h"


async def test_an_unknown_zone_is_a_tool_error_with_the_servers_words(
    toolset: MCPToolset,
) -> None:
    await toolset.list_tools()
    with pytest.raises(MCPToolError) as caught:
        await toolset.call("time", "get_current_time", {"timezone": "Mars/Olympus_Mons"})
    error = caught.value
    assert error.server == "time" and error.tool == "get_current_time"
    assert "Invalid timezone" in error.text and "Mars/Olympus_Mons" in error.text, error.text
    # A failed call leaves the server up: the next one is answered by the same process.
    assert toolset.state("time") is MCPServerState.RUNNING
    again = json.loads(await toolset.call("time", "get_current_time", {"timezone": "UTC"}))
    assert again["timezone"] == "UTC"
    log = toolset.log_path("time")
    assert log is not None and log.read_text().count(" starting ") == 1
