"""The approval policy decides who asks, fast: `ui.tools.approvals.Approvals.before_tool` on its own.

Under the default policy ("ask") every MCP call asks, read-only or not; under "Allow
read-only tools without asking" only a tool whose hints say read-only and nothing against it
runs unasked. The window's other tests prove the same through a real server; these take
milliseconds, so the policy's mutations are caught in every run.

The controller here is a plain QObject offering the four things `Approvals` asks of the
window's (its settings, a conversation's transcript, a tool by name, a task spawner); the
transcript, the settings and the MCP tools are the real classes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest
from PySide6.QtCore import QObject

from engine import AssistantMessage, RunContext, ToolCall, ToolDenial
from engine.mcp import MCPTool, MCPToolAnnotations
from ui.conversation.items import ApprovalChoice, ItemKind, ItemState
from ui.conversation.transcript import TranscriptModel
from ui.settings.store import Settings
from ui.tools.approvals import Approvals


class _Controller(QObject):
    def __init__(self, policy: str) -> None:
        super().__init__()
        self.settings = Settings(tool_approval=policy)
        self.rows = TranscriptModel("s")
        self.tasks: list[asyncio.Task[Any]] = []

    def transcript(self, session_id: str) -> TranscriptModel:
        return self.rows

    def find_tool(self, name: str) -> Any:
        return None

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self.tasks.append(task)
        return task

    async def save_settings(self) -> None:
        return None


def _tool(**hints: Any) -> MCPTool:
    return MCPTool(
        None,  # type: ignore[arg-type] (never invoked here)
        name="srv__get_time",
        server="srv",
        remote_name="get_time",
        description="The time.",
        parameters={"type": "object", "properties": {}},
        annotations=MCPToolAnnotations(**hints),
    )


async def _ask(policy: str, tool: MCPTool) -> tuple[asyncio.Task[Any], _Controller, Approvals]:
    """Start ``before_tool`` for one call of ``tool``, its card shown; let it take its steps."""
    controller = _Controller(policy)
    approvals = Approvals(controller)  # type: ignore[arg-type]
    approvals.offer("s", {tool.name: tool})
    call = ToolCall("c1", tool.name, {}, tool.info)
    controller.rows.add_message(AssistantMessage(tool_calls=(call,)))
    task = asyncio.ensure_future(approvals.before_tool(RunContext("s", "r", None), call))
    for _ in range(5):
        await asyncio.sleep(0)
    return task, controller, approvals


def _card(controller: _Controller) -> Any:
    return next(i for i in controller.rows.items() if i.kind is ItemKind.TOOL)


@pytest.mark.parametrize(
    "hints",
    [
        {"read_only": True},
        {"read_only": True, "destructive": False, "idempotent": True},
        {},
        {"read_only": True, "destructive": True},
    ],
    ids=["read-only", "read-only-consistent", "silent", "contradictory"],
)
async def test_the_default_policy_asks_before_every_tool(hints: dict[str, Any]) -> None:
    task, controller, approvals = await _ask("ask", _tool(**hints))
    assert not task.done(), "the tool was let through without asking"
    [question] = approvals.pending()
    assert _card(controller).state is ItemState.AWAITING_APPROVAL
    question.answer(ApprovalChoice.DENY, "no")
    assert await task == ToolDenial("no")
    assert _card(controller).state is ItemState.DENIED


async def test_the_read_only_policy_lets_through_only_a_tool_that_says_read_only() -> None:
    task, controller, approvals = await _ask("read_only", _tool(read_only=True))
    assert task.done() and await task is None and approvals.pending() == []

    for hints in ({"read_only": True, "destructive": True}, {}, {"destructive": False}):
        task, controller, approvals = await _ask("read_only", _tool(**hints))
        assert not task.done(), f"{hints} ran without asking"
        [question] = approvals.pending()
        question.answer(ApprovalChoice.ALLOW_ONCE)
        assert await task is None
        assert _card(controller).state is ItemState.RUNNING


async def test_always_allowed_runs_without_asking_under_the_default_policy() -> None:
    controller = _Controller("ask")
    controller.settings.always_allowed.append(("srv", "get_time"))
    tool = _tool()
    approvals = Approvals(controller)  # type: ignore[arg-type]
    approvals.offer("s", {tool.name: tool})
    call = ToolCall("c1", tool.name, {}, tool.info)
    controller.rows.add_message(AssistantMessage(tool_calls=(call,)))
    assert await approvals.before_tool(RunContext("s", "r", None), call) is None
    assert approvals.pending() == []
