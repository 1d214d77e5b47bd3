"""End to end: a model on the loopback provider calls an MCP tool; the result is in SQLite."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from engine import Agent, AgentRunConfig, AssistantMessage, ToolMessage, ToolOutcome
from engine.mcp import MCPToolset, load_mcp_config
from engine.providers import OpenAIChatModel
from engine.storage import SQLiteSessionExtension, SQLiteSessionStorage
from tests.support.provider_server import ProviderServer, ScriptedCall, Turn
from tests.support.wait import until

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


async def test_an_agent_calls_mcp_tools_and_their_results_are_stored(tmp_path: Path) -> None:
    db = tmp_path / "continuo.sqlite3"
    configs = load_mcp_config(
        {"mcpServers": {"srv": {"command": sys.executable, "args": [SERVER]}}}
    )
    with ProviderServer(default=Turn(text="(unscripted)")) as provider:
        provider.script(
            Turn(
                text="Let me ask the server.",
                tool_calls=[
                    ScriptedCall("srv__echo", {"text": "from the model"}, id="call_1"),
                    ScriptedCall("srv__fail", {"message": "not today"}, id="call_2"),
                ],
            ),
            Turn(text="The server echoed it; the other tool failed."),
        )
        model = OpenAIChatModel("loopback-echo", base_url=provider.openai_url, api_key="sk-test")
        storage = SQLiteSessionExtension(db)
        try:
            async with MCPToolset(configs, log_dir=tmp_path / "logs") as toolset:
                tools = await toolset.list_tools()
                agent = Agent(model, AgentRunConfig("s"), tools=tools, extensions=[storage])
                final = await agent.run("Please use the tools.")
        finally:
            await storage.close()
            await model.aclose()
        assert final.content == "The server echoed it; the other tool failed."
        first, second = provider.chat_requests()
        assert "srv__echo" in first.tool_names() and "srv__get_weather_now" in first.tool_names()
        assert second.last_is_tool_result()

    reopened = SQLiteSessionStorage(db)
    try:
        messages = await reopened.load("s")
    finally:
        await reopened.close()
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [(r.tool_call_id, r.name, r.success) for r in results] == [
        ("call_1", "srv__echo", True),
        ("call_2", "srv__fail", False),
    ]
    assert results[0].content == "from the model" and results[0].outcome is ToolOutcome.OK
    assert results[1].outcome is ToolOutcome.FAILED
    assert "The tool 'fail' of the MCP server 'srv' reported an error" in results[1].content
    assert "not today" in results[1].content
    assert isinstance(messages[-1], AssistantMessage)


async def test_stopping_a_request_mid_call_cancels_it_on_the_server(tmp_path: Path) -> None:
    """Stop (the request's task cancelled) during an MCP call: the server hears the protocol's
    cancellation, and the stored result says the tool may or may not have completed."""
    db = tmp_path / "continuo.sqlite3"
    marker = tmp_path / "marker"
    entry = {"command": sys.executable, "args": [SERVER], "env": {"MCP_MARKER": str(marker)}}
    configs = load_mcp_config({"mcpServers": {"srv": entry}})
    with ProviderServer(default=Turn(text="(unscripted)")) as provider:
        provider.script(Turn(tool_calls=[ScriptedCall("srv__hang", {}, id="call_1")]))
        model = OpenAIChatModel("loopback-echo", base_url=provider.openai_url, api_key="sk-test")
        storage = SQLiteSessionExtension(db)
        try:
            async with MCPToolset(configs) as toolset:
                agent = Agent(
                    model,
                    AgentRunConfig("s"),
                    tools=await toolset.list_tools(),
                    extensions=[storage],
                )
                run = asyncio.create_task(agent.run("Wait for it."))
                await until(lambda: marker.exists() and marker.read_text() == "started", "the call")
                run.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await run
                await until(lambda: marker.read_text() == "cancelled", "the server's cancellation")
        finally:
            await storage.close()
            await model.aclose()
    reopened = SQLiteSessionStorage(db)
    try:
        messages = await reopened.load("s")
    finally:
        await reopened.close()
    (result,) = [m for m in messages if isinstance(m, ToolMessage)]
    assert result.tool_call_id == "call_1" and result.outcome is ToolOutcome.INTERRUPTED
    assert "may or may not have completed" in result.content
