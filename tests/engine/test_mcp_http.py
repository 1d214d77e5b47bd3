"""`MCPToolset` over Streamable HTTP, against the FastMCP test server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from engine.errors import MCPServerCrashedError, MCPServerStartError, MCPToolError
from engine.mcp import MCPServerState, MCPToolset, MCPTransport, load_mcp_config
from tests.support.mcp_server import PNG
from tests.support.wait import until

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def start_server(port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, SERVER, "--name", "web", "--http", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@pytest.fixture
async def http_url() -> AsyncIterator[str]:
    port = free_port()
    process = start_server(port)
    try:
        await until(lambda: accepts(port), "the HTTP server to listen", seconds=20)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(10)


async def test_lists_and_calls_tools_over_streamable_http(http_url: str) -> None:
    (config,) = load_mcp_config(
        {"mcpServers": {"web": {"url": http_url, "headers": {"X-Token": "SECRET-123"}}}}
    )
    assert config.transport is MCPTransport.HTTP and "SECRET" not in repr(config)
    async with MCPToolset([config]) as toolset:
        assert toolset.state("web") is MCPServerState.NOT_STARTED
        tools = {t.remote_name: t for t in await toolset.list_tools()}
        assert tools["echo"].name == "web__echo" and tools["echo"].annotations.is_read_only
        assert await tools["echo"].invoke({"text": "over http"}) == "over http"
        assert json.loads(await tools["add"].invoke({"a": 1, "b": 41})) == {"sum": 42}
        assert await tools["picture"].invoke({}) == f"[image: image/png, {len(PNG)} bytes]"
        assert await tools["header"].invoke({"name": "x-token"}) == "SECRET-123"
        with pytest.raises(MCPToolError, match="no good"):
            await tools["fail"].invoke({"message": "no good"})
    assert toolset.state("web") is MCPServerState.STOPPED


async def test_an_http_server_that_went_away_fails_the_call_at_once_then_comes_back() -> None:
    """Without watching the session's end, the call waited for its whole timeout (20 s here)."""
    port = free_port()
    process = start_server(port)
    try:
        await until(lambda: accepts(port), "the HTTP server to listen", seconds=20)
        url = f"http://127.0.0.1:{port}/mcp"
        (config,) = load_mcp_config({"mcpServers": {"web": {"url": url, "timeout": 20}}})
        async with MCPToolset([config]) as toolset:
            echo = next(t for t in await toolset.list_tools() if t.remote_name == "echo")
            assert await echo.invoke({"text": "one"}) == "one"
            process.send_signal(signal.SIGKILL)
            process.wait(10)
            with pytest.raises(MCPServerCrashedError, match="may or may not have completed"):
                await asyncio.wait_for(echo.invoke({"text": "two"}), 10)
            with pytest.raises(MCPServerStartError, match="could not be started"):
                await echo.invoke({"text": "three"})
            process = start_server(port)
            await until(lambda: accepts(port), "the HTTP server to listen again", seconds=20)
            assert await echo.invoke({"text": "four"}) == "four"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(10)
