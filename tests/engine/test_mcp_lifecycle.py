"""`MCPToolset` servers' lives at their edges: a start whose caller goes away, a crash reported
after the server was started again, and the module's public names.

Real stdio servers (`tests/support/mcp_server.py`); a start that hangs is a real process that
never speaks (``--hold-start``), and its end is checked on the process itself.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import types

import engine.mcp
import engine.tools
from engine.errors import MCPServerCrashedError
from engine.mcp import MCPServerConfig, MCPServerState, MCPToolset, call_result_text
from tests.engine.test_mcp import SERVER, running, stdio
from tests.support.wait import until


@pytest.fixture
async def open_toolset(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    opened: list[MCPToolset] = []

    async def make(*configs: MCPServerConfig, **kwargs: Any) -> MCPToolset:
        toolset = MCPToolset(configs, log_dir=tmp_path / "logs", **kwargs)
        await toolset.__aenter__()
        opened.append(toolset)
        return toolset

    yield make
    for toolset in opened:
        await toolset.aclose()


def never_retrieved(records: list[logging.LogRecord]) -> list[str]:
    return [r.getMessage() for r in records if "never retrieved" in r.getMessage()]


async def test_a_start_cancelled_midway_ends_and_the_next_need_starts_afresh(
    open_toolset, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hold = tmp_path / "hold.pid"
    toolset = await open_toolset(
        stdio(args=[SERVER, "--name", "srv", "--hold-start", str(hold)]), start_timeout=60
    )
    listing = asyncio.create_task(toolset.list_tools())
    await until(lambda: hold.exists() and hold.read_text(), "the server's held start")
    pid = int(hold.read_text())
    assert running(pid) and toolset.state("srv") is MCPServerState.NOT_STARTED
    listing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await listing
    # The start is ended with its process (not left to its 60 s start timeout), and the server
    # is not said to run.
    await until(lambda: not running(pid), "the cancelled start's process to end", seconds=15)
    assert toolset.state("srv") in (MCPServerState.NOT_STARTED, MCPServerState.STOPPED)
    # The next need starts it afresh (the hold file exists now: this start speaks).
    tools = await toolset.list_tools()
    assert toolset.failures == {} and toolset.state("srv") is MCPServerState.RUNNING
    assert {t.remote_name for t in tools} >= {"echo", "pid"}
    assert await toolset.call("srv", "pid", {}) != pid
    log = toolset.log_path("srv")
    assert log is not None and log.read_text().count(" starting ") == 2
    gc.collect()
    assert never_retrieved(caplog.records) == []


async def test_the_caller_cancelled_as_the_start_fails_leaves_nothing_unretrieved(
    open_toolset, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A start that fails at once (no such program), cancelled while it fails: several rounds
    # so the cancellation lands before, during and after the failure.
    toolset = await open_toolset(stdio(command=str(tmp_path / "missing")))
    for _ in range(20):
        listing = asyncio.create_task(toolset.list_tools())
        await asyncio.sleep(0)  # let it reach the MCP loop; then cancel it mid-way
        listing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await listing
    await toolset.list_tools()
    assert "srv" in toolset.failures
    assert toolset.state("srv") is MCPServerState.FAILED
    await toolset.aclose()
    gc.collect()
    assert never_retrieved(caplog.records) == []


async def test_a_crash_reported_late_leaves_the_next_start_alone(open_toolset) -> None:
    toolset = await open_toolset(stdio())
    first_pid = await toolset.call("srv", "pid", {})
    server = toolset._servers["srv"]
    first = server.current
    with pytest.raises(MCPServerCrashedError) as crashed:
        await toolset.call("srv", "crash", {})
    assert crashed.value.status == 3
    second_pid = await toolset.call("srv", "pid", {})
    assert second_pid != first_pid and server.current is not first
    # A crash of the first start, noticed only now (a call of it that wakes late): it speaks
    # of that start and does not touch the one running.
    late = await toolset._run(server._crashed("pid", first))
    assert late.status == 3
    assert toolset.state("srv") is MCPServerState.RUNNING
    assert await toolset.call("srv", "pid", {}) == second_pid


def test_the_mcp_result_reader_is_named_apart_from_the_tools_one() -> None:
    assert "call_result_text" in engine.mcp.__all__ and "result_text" not in engine.mcp.__all__
    assert not hasattr(engine.mcp, "result_text")
    assert call_result_text is not engine.tools.result_text
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="it is noon")], structuredContent={"h": 12}
    )
    assert call_result_text(result) == "it is noon"


async def test_listing_some_servers_starts_only_those_and_keeps_the_others_tools(
    open_toolset, tmp_path: Path
) -> None:
    hold = tmp_path / "never.pid"
    toolset = await open_toolset(
        stdio("a"),
        stdio("b"),
        # it would write the hold file if it were started
        stdio("c", args=[SERVER, "--name", "c", "--hold-start", str(hold)]),
        start_timeout=60,
    )
    tools = await toolset.list_tools(["a"])
    assert {t.server for t in tools} == {"a"}
    assert toolset.state("a") is MCPServerState.RUNNING
    assert toolset.state("b") is MCPServerState.NOT_STARTED
    assert toolset.state("c") is MCPServerState.NOT_STARTED and not hold.exists()
    tools = await toolset.list_tools(["b"])
    # a's tools are kept from its last listing, b's are added
    assert {t.server for t in tools} == {"a", "b"}
    assert toolset.state("c") is MCPServerState.NOT_STARTED and not hold.exists()
    with pytest.raises(ValueError, match="no such MCP servers"):
        await toolset.list_tools(["nope"])
