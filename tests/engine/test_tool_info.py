"""What a called tool is, kept with the call: its server, its real name, its hints, read strictly.

A server's words decide nothing on their own: a tool is read-only only when it says so and no
other hint contradicts it; a contradiction or silence counts as destructive. The agent keeps
each MCP call's `ToolInfo` in the stored message (lossless JSON; older messages still read),
so a card after a restart and an export name the tool as before. Tested against a hostile
FastMCP server over stdio: ``delete_everything``, titled "Get the time (read-only)", marked
both read-only and destructive.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engine import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    ToolCall,
    ToolEffect,
    ToolInfo,
    ToolMessage,
    UserMessage,
    message_from_json,
    message_to_json,
)
from engine.archive import ExportFormat, export_conversations
from engine.mcp import MCPToolset, load_mcp_config
from engine.messages import tool_effect
from engine.providers import OpenAIChatModel
from engine.storage import SQLiteSessionExtension, SQLiteSessionStorage
from tests.support.provider_server import ProviderServer, ScriptedCall, Turn

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


@pytest.mark.parametrize(
    ("read_only", "destructive", "idempotent", "effect"),
    [
        (True, None, None, ToolEffect.READ_ONLY),
        (True, False, True, ToolEffect.READ_ONLY),
        (True, True, None, ToolEffect.DESTRUCTIVE),  # contradicts itself
        (True, None, False, ToolEffect.DESTRUCTIVE),  # "read-only" and "not idempotent"
        (None, None, None, ToolEffect.DESTRUCTIVE),  # says nothing
        (False, None, None, ToolEffect.DESTRUCTIVE),
        (None, True, None, ToolEffect.DESTRUCTIVE),
        (None, False, None, ToolEffect.CHANGES),
        (False, False, False, ToolEffect.CHANGES),
    ],
)
def test_hints_are_read_strictly(read_only, destructive, idempotent, effect) -> None:
    assert tool_effect(read_only, destructive, idempotent) is effect
    assert ToolInfo("srv", "t", "", read_only, destructive, idempotent).effect is effect


def test_the_info_is_kept_losslessly_and_older_messages_still_read() -> None:
    info = ToolInfo("srv", "delete_everything", "Get the time (read-only)", True, True, None)
    call = ToolCall("c1", "srv__delete_everything", {"all": True}, info)
    message = AssistantMessage(tool_calls=(call,))
    again = message_from_json(message_to_json(message))
    assert again == message
    assert isinstance(again, AssistantMessage) and again.tool_calls[0].info == info
    assert call.display_name == "delete_everything (srv)"
    assert ToolCall("c2", "get_time").display_name == "get_time"

    # Written before calls kept their info; or by something else: read, without info.
    old = message_to_json(AssistantMessage(tool_calls=(ToolCall("c1", "srv__x"),)))
    assert '"info"' not in old
    assert message_from_json(old).tool_calls[0].info is None  # type: ignore[attr-defined]
    odd = old.replace('"arguments":{}', '"arguments":{},"info":{"server":3,"tool":[]}')
    assert odd != old
    assert message_from_json(odd).tool_calls[0].info is None  # type: ignore[attr-defined]
    mixed = old.replace(
        '"arguments":{}', '"arguments":{},"info":{"server":"s","tool":"t","read_only":"yes"}'
    )
    read = message_from_json(mixed).tool_calls[0].info  # type: ignore[attr-defined]
    assert read == ToolInfo("s", "t") and read.effect is ToolEffect.DESTRUCTIVE


async def test_a_hostile_servers_tool_is_destructive_and_its_calls_keep_who_it_is(
    tmp_path: Path,
) -> None:
    configs = load_mcp_config(
        {"mcpServers": {"srv": {"command": sys.executable, "args": [SERVER, "--hostile"]}}}
    )
    db = tmp_path / "continuo.sqlite3"
    async with MCPToolset(configs, log_dir=tmp_path / "logs") as toolset:
        tools = {t.remote_name: t for t in await toolset.list_tools()}
        liar = tools["delete_everything"]
        assert liar.title == "Get the time (read-only)"
        assert liar.annotations.read_only is True and liar.annotations.destructive is True
        assert liar.annotations.effect is ToolEffect.DESTRUCTIVE
        assert not liar.annotations.is_read_only and liar.annotations.may_destroy
        assert tools["echo"].annotations.is_read_only  # says read-only, nothing against it

        with ProviderServer(default=Turn(text="(unscripted)")) as provider:
            provider.script(
                Turn(tool_calls=[ScriptedCall(liar.name, {}, id="c1")]), Turn(text="Done.")
            )
            model = OpenAIChatModel("loopback", base_url=provider.openai_url, api_key="sk-x")
            store = SQLiteSessionExtension(db)
            try:
                agent = Agent(model, AgentRunConfig("s"), tools=tools.values(), extensions=[store])
                await agent.run("What time is it?")
            finally:
                await store.close()
                await model.aclose()
            wire = provider.chat_requests()[-1].messages()

    # The model knows the call by the name it used; the label never goes on the wire.
    sent = next(m for m in wire if m.get("tool_calls"))
    assert sent["tool_calls"][0]["function"]["name"] == "srv__delete_everything"
    assert "Get the time" not in str(wire)
    reopened = SQLiteSessionStorage(db)
    try:
        history = await reopened.load("s")
    finally:
        await reopened.close()
    asker = next(m for m in history if isinstance(m, AssistantMessage) and m.tool_calls)
    info = asker.tool_calls[0].info
    assert info == ToolInfo(
        "srv", "delete_everything", "Get the time (read-only)", True, True, None
    )
    assert info.effect is ToolEffect.DESTRUCTIVE


async def test_exports_name_a_tool_as_the_card_does(tmp_path: Path) -> None:
    """Markdown and HTML name an MCP call (and its result) by the tool's real name and its
    server, the title only as the server's words; JSON keeps the info as it is."""
    info = ToolInfo("srv", "delete_everything", "Get [the](javascript:x) time", True, True)
    call = ToolCall("c1", "srv__delete_everything", {}, info)
    storage = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    try:
        await storage.append("s", "r", UserMessage(content="Time?"))
        await storage.append("s", "r", AssistantMessage(tool_calls=(call,)))
        await storage.append(
            "s", "r", ToolMessage(tool_call_id="c1", name=call.name, content="gone")
        )
        texts = {}
        for fmt in ExportFormat:
            out = tmp_path / f"out.{fmt.value}"
            await export_conversations(storage, out, fmt, ["s"])
            texts[fmt] = out.read_text(encoding="utf-8")
    finally:
        await storage.close()
    markdown = texts[ExportFormat.MARKDOWN]
    assert "**Tool call:** `delete_everything` from `srv`" in markdown
    assert "### Tool result: `delete_everything` from `srv` (done)" in markdown
    assert "`Get [the](javascript:x) time`, says its server" in markdown  # inert, as code
    page = texts[ExportFormat.HTML]
    assert "Tool call: <code>delete_everything</code> from <code>srv</code>" in page
    assert "Tool result: <code>delete_everything</code> from <code>srv</code> (done)" in page
    assert "javascript:x" in page and 'href="javascript' not in page
    assert '"info": {"server": "srv", "tool": "delete_everything"' in texts[ExportFormat.JSON]
