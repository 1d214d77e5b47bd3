"""Stop while a tool runs: that call may have run, the ones after it did not, fast.

The request is a real `Agent` on a real SQLite file; Stop is the window's (the request's task
cancelled) at a moment chosen by an event the tool sets, never by a sleep. The call that was
running is answered "may or may not have completed" (outcome interrupted) with its start
record kept; the calls before it keep their results; the calls after it, and a call whose
approval was still waiting, did not run. Recording a running call as "did not run" was
caught only by slow tests (issue 18); every case here fails on it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from engine import (
    Extension,
    ResumeKind,
    ToolCall,
    ToolMessage,
    ToolOutcome,
    tool,
)
from tests.support.scripted import ScriptedModel, Turn

# What the model reads, pinned word for word (not imported from the code under test).
CANCELLED = (
    "The user stopped the request while this tool was running, so it may or may not have "
    "completed. Check the current state before running it again."
)
NOT_RUN = "The user stopped the request before this tool ran, so it did not run."

CALLS = [ToolCall(i, name, {}) for i, name in (("1", "first"), ("2", "second"), ("3", "third"))]


class Tools:
    """Three tools; ``second`` blocks (async, or a plain function in a worker thread) until
    released, saying when it has begun."""

    def __init__(self, *, sync_second: bool) -> None:
        self.ran: list[str] = []
        self.entered = asyncio.Event()
        self.release = threading.Event()
        loop = asyncio.get_running_loop()

        @tool
        async def first() -> str:
            """The first."""
            self.ran.append("first")
            return "first done"

        if sync_second:

            @tool
            def second() -> str:
                """The second, a plain function (it runs in a worker thread)."""
                self.ran.append("second")
                loop.call_soon_threadsafe(self.entered.set)
                self.release.wait(60)
                return "second done"

        else:

            @tool
            async def second() -> str:
                """The second."""
                self.ran.append("second")
                self.entered.set()
                await asyncio.get_running_loop().run_in_executor(None, self.release.wait, 60)
                return "second done"

        @tool
        async def third() -> str:
            """The third."""
            self.ran.append("third")
            return "third done"

        self.tools = [first, second, third]


async def stop_when(store, tools: list[Any], ready: Callable[[], Any], **agent: Any):
    """Run a request asking for the three calls; Stop it once ``ready()`` is set."""
    model = ScriptedModel([Turn(tool_calls=CALLS), Turn(text="ok")])
    runner = await store.agent(model, tools=tools, **agent)
    task = asyncio.create_task(runner.run("go"))
    waiting = asyncio.ensure_future(ready())
    await asyncio.wait({task, waiting}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    assert waiting.done() and not task.done(), "the request never reached the moment to stop"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    results = [m for m in await store.history() if isinstance(m, ToolMessage)]
    return runner, [(r.tool_call_id, r.content, r.outcome) for r in results]


@pytest.mark.parametrize("sync_second", [False, True], ids=["async", "in a thread"])
async def test_stop_while_the_second_of_three_runs(store, sync_second: bool) -> None:
    tools = Tools(sync_second=sync_second)
    try:
        agent, results = await stop_when(store, tools.tools, tools.entered.wait)
    finally:
        tools.release.set()  # let the abandoned call's thread end
    assert results == [
        ("1", "first done", ToolOutcome.OK),
        ("2", CANCELLED, ToolOutcome.INTERRUPTED),
        ("3", NOT_RUN, ToolOutcome.NOT_RUN),
    ]
    assert tools.ran == ["first", "second"]
    started = await store.extension().storage.started_tool_calls("s", ["1", "2", "3"])
    assert started == {"1", "2"}, "the running call was recorded as started, the next was not"
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL, "already answered"


async def test_stop_while_the_first_runs_leaves_the_others_not_run(store) -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    @tool
    async def first() -> str:
        """The first."""
        entered.set()
        await release.wait()
        return "first done"

    tools = Tools(sync_second=False)
    try:
        _, results = await stop_when(store, [first, *tools.tools[1:]], entered.wait)
    finally:
        tools.release.set()
    assert results == [
        ("1", CANCELLED, ToolOutcome.INTERRUPTED),
        ("2", NOT_RUN, ToolOutcome.NOT_RUN),
        ("3", NOT_RUN, ToolOutcome.NOT_RUN),
    ]
    assert tools.ran == []


async def test_stop_while_an_approval_waits_is_not_a_running_call(store) -> None:
    asked = asyncio.Event()

    class Approval(Extension):
        async def before_tool(self, ctx, call):
            if call.id == "2":
                asked.set()
                await asyncio.Event().wait()  # the person never answers
            return None

    tools = Tools(sync_second=False)
    _, results = await stop_when(store, tools.tools, asked.wait, extensions=[Approval()])
    assert results == [
        ("1", "first done", ToolOutcome.OK),
        ("2", NOT_RUN, ToolOutcome.NOT_RUN),
        ("3", NOT_RUN, ToolOutcome.NOT_RUN),
    ]
    assert tools.ran == ["first"]
