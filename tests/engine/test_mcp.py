"""`MCPToolset` against a real stdio MCP server (`tests/support/mcp_server.py`, FastMCP).

Every server here is a real subprocess; crashes are real exits, the orphan check looks at a
real grandchild process, and waits are on conditions (a file's content) with timeouts.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from engine.errors import (
    MCPServerCrashedError,
    MCPServerStartError,
    MCPTimeoutError,
    MCPToolError,
)
from engine.mcp import (
    MCPServerConfig,
    MCPServerState,
    MCPTool,
    MCPToolset,
    MCPTransport,
    load_mcp_config,
)
from engine.tools import Tool
from tests.support.mcp_server import PNG
from tests.support.wait import until

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


def stdio(name: str = "srv", *, env: dict[str, str] | None = None, **entry: Any) -> MCPServerConfig:
    """A config entry for the test server, read through `load_mcp_config` like a file."""
    body: dict[str, Any] = {"command": sys.executable, "args": [SERVER, "--name", name], **entry}
    if env is not None:
        body["env"] = env
    (config,) = load_mcp_config({"mcpServers": {name: body}})
    return config


def by_remote(tools: tuple[MCPTool, ...], server: str = "srv") -> dict[str, MCPTool]:
    return {t.remote_name: t for t in tools if t.server == server}


def running(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan's zombie may wait for init)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


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


async def test_lists_tools_with_description_schema_and_annotations(open_toolset, tmp_path) -> None:
    toolset = await open_toolset(stdio())
    assert toolset.state("srv") is MCPServerState.NOT_STARTED, "a server started before use"
    assert not (tmp_path / "logs").exists()
    tools = await toolset.list_tools()
    assert toolset.tools == tools and toolset.state("srv") is MCPServerState.RUNNING
    assert all(isinstance(t, Tool) for t in tools)
    echo, add = by_remote(tools)["echo"], by_remote(tools)["add"]
    assert echo.name == "srv__echo" and echo.description == "Say the text back."
    assert echo.spec.parameters["properties"]["text"]["type"] == "string"
    assert echo.spec.parameters["required"] == ["text"]
    assert echo.annotations.title == "Echo a text" == echo.title
    assert echo.annotations.is_read_only and not echo.annotations.may_destroy
    assert add.annotations.destructive is True and add.annotations.idempotent is False
    assert add.annotations.read_only is None and add.annotations.may_destroy
    assert by_remote(tools)["get.weather/now"].name == "srv__get_weather_now"
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", t.name) for t in tools)


async def test_results_text_structured_image_and_resources(open_toolset) -> None:
    tools = by_remote(await (await open_toolset(stdio())).list_tools())
    assert await tools["echo"].invoke({"text": "héllo"}) == "héllo"
    assert json.loads(await tools["add"].invoke({"a": 2, "b": 3})) == {"sum": 5}
    assert json.loads(await tools["structured_only"].invoke({})) == {"city": "Tokyo", "temp": 21}
    assert await tools["picture"].invoke({}) == f"[image: image/png, {len(PNG)} bytes]"
    assert await tools["mixed"].invoke({}) == (
        f"Here it is.\n[image: image/png, {len(PNG)} bytes]\n"
        "[resource: file:///notes.txt, text/plain, 12 characters]"
    )


async def test_an_error_result_is_an_error_with_the_servers_text_capped(open_toolset) -> None:
    tools = by_remote(await (await open_toolset(stdio())).list_tools())
    with pytest.raises(MCPToolError) as caught:
        await tools["fail"].invoke({"message": "the disk is on fire " * 100})
    error = caught.value
    assert error.server == "srv" and error.tool == "fail"
    assert "the disk is on fire" in error.text and len(error.text) <= 300
    assert str(error).startswith("The tool 'fail' of the MCP server 'srv' reported an error")
    # A call the server refuses at the protocol level (wrong arguments) is the same kind.
    with pytest.raises(MCPToolError):
        await tools["add"].invoke({"a": "two"})


async def test_same_names_from_two_servers_get_distinct_names(open_toolset) -> None:
    toolset = await open_toolset(stdio("my.server"), stdio("my_server"))
    tools = await toolset.list_tools()
    names = [t.name for t in tools if t.remote_name == "echo"]
    assert names == ["my_server__echo", "my_server__echo_2"]
    second = next(t for t in tools if t.name == "my_server__echo_2")
    assert second.server == "my_server"
    assert await second.invoke({"text": "two"}) == "two"


async def test_a_server_that_cannot_start_is_reported_and_the_others_work(open_toolset) -> None:
    broken = MCPServerConfig(name="broken", transport=MCPTransport.STDIO, command="/no/such/cmd")
    toolset = await open_toolset(broken, stdio())
    tools = await toolset.list_tools()
    assert {t.server for t in tools} == {"srv"}
    error = toolset.failures["broken"]
    assert isinstance(error, MCPServerStartError) and error.server == "broken"
    assert "could not be started" in str(error) and "/no/such/cmd" in str(error)
    assert toolset.state("broken") is MCPServerState.FAILED
    with pytest.raises(MCPServerStartError):
        await toolset.call("broken", "echo", {"text": "x"})


async def test_a_crash_mid_call_is_clear_and_the_next_call_restarts(open_toolset) -> None:
    toolset = await open_toolset(stdio())
    tools = by_remote(await toolset.list_tools())
    first = int(await tools["pid"].invoke({}))
    with pytest.raises(MCPServerCrashedError) as caught:
        await tools["crash"].invoke({})
    error = caught.value
    assert error.status == 3 and error.tool == "crash"
    assert "may or may not have completed" in str(error) and "starts again" in str(error)
    assert str(toolset.log_path("srv")) in str(error)
    assert toolset.state("srv") is MCPServerState.STOPPED
    assert not running(first)
    assert await tools["echo"].invoke({"text": "back"}) == "back"
    assert int(await tools["pid"].invoke({})) != first
    assert toolset.state("srv") is MCPServerState.RUNNING


async def test_a_call_that_never_answers_times_out_and_is_cancelled_on_the_server(
    open_toolset, tmp_path
) -> None:
    marker = tmp_path / "marker"
    toolset = await open_toolset(stdio(env={"MCP_MARKER": str(marker)}, timeout=0.5))
    tools = by_remote(await toolset.list_tools())
    with pytest.raises(MCPTimeoutError) as caught:
        await tools["hang"].invoke({})
    assert caught.value.seconds == 0.5
    assert "within 0.5 seconds" in str(caught.value)
    assert "may or may not have completed" in str(caught.value)
    await until(lambda: marker.read_text() == "cancelled", "the server's cancellation")
    assert await tools["echo"].invoke({"text": "still here"}) == "still here"


async def test_cancelling_a_call_sends_the_protocols_cancellation(open_toolset, tmp_path) -> None:
    marker = tmp_path / "marker"
    toolset = await open_toolset(stdio(env={"MCP_MARKER": str(marker)}))
    tools = by_remote(await toolset.list_tools())
    call = asyncio.create_task(tools["hang"].invoke({}))
    await until(lambda: marker.exists() and marker.read_text() == "started", "the call to run")
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await until(lambda: marker.read_text() == "cancelled", "notifications/cancelled to arrive")
    assert await tools["echo"].invoke({"text": "next"}) == "next"


async def test_cancelling_one_of_two_calls_cancels_only_that_one(open_toolset, tmp_path) -> None:
    # Both calls once read the same request id before either was sent: stopping the second
    # cancelled the first on the server and never reached the second.
    marker = tmp_path / "marker"
    toolset = await open_toolset(stdio(env={"MCP_MARKER": str(marker)}))
    hang = by_remote(await toolset.list_tools())["hang"]
    first = asyncio.create_task(hang.invoke({"label": "-a"}))
    second = asyncio.create_task(hang.invoke({"label": "-b"}))
    a, b = tmp_path / "marker-a", tmp_path / "marker-b"
    await until(lambda: a.exists() and b.exists(), "both calls to run")
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    await until(lambda: b.read_text() == "cancelled", "the second call's cancellation")
    assert a.read_text() == "started" and not first.done(), "the first call was cancelled"
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    await until(lambda: a.read_text() == "cancelled", "the first call's cancellation")


async def test_a_cancelled_close_still_ends_the_servers_process_group(tmp_path) -> None:
    toolset = MCPToolset([stdio()], log_dir=tmp_path)
    await toolset.__aenter__()
    tools = by_remote(await toolset.list_tools())
    server = int(await tools["pid"].invoke({}))
    child = int(await tools["spawn_child"].invoke({}))
    closing = asyncio.create_task(toolset.aclose())
    await asyncio.sleep(0)  # let the close begin: the point is to cancel it midway
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert not running(server), "the server outlived a cancelled close"
    assert not running(child), "the server's child outlived a cancelled close"


async def test_close_ends_the_servers_whole_process_group(tmp_path) -> None:
    async with MCPToolset([stdio()], log_dir=tmp_path) as toolset:
        tools = by_remote(await toolset.list_tools())
        server = int(await tools["pid"].invoke({}))
        child = int(await tools["spawn_child"].invoke({}))
        assert running(server) and running(child)
        assert os.getpgid(child) == os.getpgid(server) == server
    assert toolset.state("srv") is MCPServerState.STOPPED
    assert not running(server), "the server outlived the toolset"
    assert not running(child), "the server's child is an orphan after close"


async def test_a_server_gets_a_minimal_environment(open_toolset, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ours-SECRET")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-ours-SECRET")
    monkeypatch.setenv("CONTINUO_PRIVATE", "private")
    monkeypatch.setenv("LC_TIME", "en_GB.UTF-8")
    toolset = await open_toolset(
        stdio(env={"MY_SETTING": "on"}),
        stdio("keyed", env={"OPENAI_API_KEY": "sk-configured"}),
    )
    tools = await toolset.list_tools()
    env = json.loads(await by_remote(tools)["environment"].invoke({}))
    assert "OPENAI_API_KEY" not in env and "ANTHROPIC_API_KEY" not in env
    assert "CONTINUO_PRIVATE" not in env
    assert env["MY_SETTING"] == "on" and env["PATH"] == os.environ["PATH"]
    assert env["HOME"] == os.environ["HOME"] and env["LC_TIME"] == "en_GB.UTF-8"
    keyed = json.loads(await by_remote(tools, "keyed")["environment"].invoke({}))
    assert keyed["OPENAI_API_KEY"] == "sk-configured", "a configured key is passed on"
    assert "ANTHROPIC_API_KEY" not in keyed


async def test_stderr_goes_to_a_log_file_per_server(open_toolset, tmp_path, capfd) -> None:
    toolset = await open_toolset(stdio("one"), stdio("two"))
    tools = await toolset.list_tools()
    with pytest.raises(MCPServerCrashedError):
        await by_remote(tools, "two")["crash"].invoke({})
    one, two = toolset.log_path("one"), toolset.log_path("two")
    assert one == tmp_path / "logs" / "mcp-one.log" and two == tmp_path / "logs" / "mcp-two.log"
    await until(lambda: "crashing now" in two.read_text(), "the crash's words in the log")
    assert "hello from one on stderr" in one.read_text()
    assert "hello from two on stderr" in two.read_text() and "hello from two" not in one.read_text()
    assert "hello from" not in capfd.readouterr().err, "a server's stderr reached ours"


async def test_a_toolset_outside_async_with_refuses_calls() -> None:
    toolset = MCPToolset([stdio()])
    with pytest.raises(RuntimeError, match="async with"):
        await toolset.list_tools()


async def test_a_server_that_never_finishes_start_up_is_stopped(open_toolset, tmp_path) -> None:
    """A command that is no MCP server (it never answers ``initialize``) fails in time."""
    pid_file = tmp_path / "pid"
    script = f"import os, pathlib, time; pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid())); time.sleep(60)"
    silent = MCPServerConfig(
        name="silent", transport=MCPTransport.STDIO, command=sys.executable, args=("-c", script)
    )
    # 2 s: time for the command to write its pid on two busy cores before it is stopped
    toolset = await open_toolset(silent, start_timeout=2)
    assert await toolset.list_tools() == ()
    error = toolset.failures["silent"]
    assert isinstance(error, MCPServerStartError)
    assert "did not answer within 2 seconds" in str(error)
    assert toolset.state("silent") is MCPServerState.FAILED
    assert not running(int(pid_file.read_text())), "the silent server was left running"


async def test_a_servers_words_never_quote_a_secret_of_its_entry(open_toolset) -> None:
    # A tool's error text is the server's own words; one that echoes a credential from the
    # entry's env (or headers) must not carry it into the error, the model or a log.
    toolset = await open_toolset(stdio(env={"SERVICE_TOKEN": "tok-SECRET-9876543210", "MODE": "on"}))
    tools = by_remote(await toolset.list_tools())
    with pytest.raises(MCPToolError) as caught:
        await tools["fail"].invoke({"message": "token tok-SECRET-9876543210 refused; mode on"})
    text = str(caught.value)
    assert "tok-SECRET-9876543210" not in text and "[redacted]" in text
    assert "mode on" in text, "a value not named like a credential is not hidden"
