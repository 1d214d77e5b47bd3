"""Review finding: a Stop while ``before_tool`` waits for a person's approval.

The tool never started, so the model must be told it did not run, not that it "may or may
not have completed" (that text is for a tool actually cut short).
"""

from __future__ import annotations

import asyncio

import pytest

from engine import Extension, ResumeKind, ToolCall, ToolMessage, tool
from engine.resume import NOT_RUN_TOOL_TEXT
from tests.support.scripted import ScriptedModel, Turn


async def test_stop_while_waiting_for_approval_says_the_tool_did_not_run(store):
    ran = []
    asked, answer = asyncio.Event(), asyncio.Event()

    @tool
    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return "deleted"

    class Approval(Extension):
        async def before_tool(self, ctx, call):
            asked.set()
            await answer.wait()  # the person has not decided yet when Stop is pressed
            return None

    model = ScriptedModel([Turn(tool_calls=[ToolCall("d", "delete", {"path": "x"})])])
    agent = await store.agent(model, tools=[delete], extensions=[Approval()])
    task = asyncio.create_task(agent.run("clean up"))
    try:
        await asyncio.wait_for(asked.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        answer.set()
    results = [m for m in await store.history() if isinstance(m, ToolMessage)]
    assert [(r.tool_call_id, r.success, r.content) for r in results] == [
        ("d", False, NOT_RUN_TOOL_TEXT)
    ]
    assert ran == []
    assert (await agent.resume_point()).kind is ResumeKind.CALL_MODEL
