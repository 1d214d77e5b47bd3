"""A request whose tool runs on a real stdio MCP server, in a child the parent SIGKILLs.

Usage: ``python -m tests.engine.mcp_kill_child DB SESSION PROVIDER_URL``.

The model is the loopback provider at PROVIDER_URL (OpenAI protocol), scripted by the parent
to call ``srv__append_then_sleep``; the tool is the test server's (`tests/support/mcp_server`),
started over stdio through `MCPToolset`: it appends a line to the parent's file, then sleeps.
An approval hook allows the call (as a person would) and prints ``approved NAME``. Before the
request the child prints ``server PID`` (the server's process, whose group the parent ends
after the kill). Nothing here prints at the instant to kill: the parent kills once the file
has its line, that is while the tool runs.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from engine import Agent, AgentRunConfig, Extension
from engine.mcp import MCPToolset, load_mcp_config
from engine.providers import OpenAIChatModel
from engine.storage import SQLiteSessionExtension

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")
QUESTION = "Note that I was here."


def server_config() -> dict[str, object]:
    return {"mcpServers": {"srv": {"command": sys.executable, "args": [SERVER]}}}


class Approval(Extension):
    """Allows every call, saying which (an approval card a person clicked)."""

    async def before_tool(self, ctx, call):
        print(f"approved {call.name}", flush=True)
        return None


async def run(db: str, session: str, url: str) -> None:
    model = OpenAIChatModel("loopback", base_url=url, api_key="sk-test")
    async with MCPToolset(load_mcp_config(server_config())) as toolset:
        tools = await toolset.list_tools()
        print(f"server {await toolset.call('srv', 'pid', {})}", flush=True)
        agent = await Agent.create(
            model,
            config=AgentRunConfig(session),
            tools=tools,
            extensions=[SQLiteSessionExtension(db), Approval()],
        )
        await agent.run(QUESTION)
    print("finished", flush=True)  # never reached: killed before


def main() -> None:
    db, session, url = sys.argv[1:4]
    asyncio.run(run(db, session, url))


if __name__ == "__main__":
    main()
