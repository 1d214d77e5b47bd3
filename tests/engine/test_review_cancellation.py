"""Review findings: Stop at the edges of a tool batch, closing a finished stream, AgentClient.

- A Stop that lands while a tool's result is being written must not answer that call twice.
- A Stop after the step asking for tools is stored, before any tool starts, answers each call
  as not run (CALL_MODEL), instead of leaving them unanswered as if the app had crashed.
- Leaving the stream after ``RUN_COMPLETED`` is not a failure: no ``on_error``, one JSONL line.
- `AgentClient.stream` closed early (or an ``on_event`` callback that raises) closes the agent's
  stream at once: the partial is stored and the lease released before control returns.
- The event order of ``stream()`` through a tool batch, as DESIGN.md lists it.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

from engine import (
    Agent,
    AgentClient,
    AgentEventType,
    AgentRunConfig,
    AssistantMessage,
    Extension,
    JSONLExtension,
    ResumeKind,
    StorageError,
    ToolCall,
    ToolMessage,
    UserMessage,
    tool,
)
from engine.resume import NOT_RUN_TOOL_TEXT
from engine.storage import SQLiteSessionExtension, SQLiteSessionStorage
from tests.engine.conftest import types_of
from tests.support.scripted import ScriptedModel, Turn

E = AgentEventType


class GatedStore(SQLiteSessionExtension):
    """Real SQLite storage that reports when a chosen message's write begins.

    The test cancels the request the moment ``entered`` is set: the cancellation then lands
    inside the storage's own write, which finishes it and re-raises ``CancelledError``.
    """

    def __init__(self, path, when) -> None:
        super().__init__(path)
        self.when = when
        self.entered = asyncio.Event()

    async def append(self, ctx, message) -> None:
        if not self.entered.is_set() and self.when(message):
            self.entered.set()
        await super().append(ctx, message)


async def history_of(path, session_id="s"):
    ext = SQLiteSessionExtension(path)
    try:
        return await ext.storage.load(session_id)
    finally:
        await ext.close()


def calls_two():
    return [ToolCall("1", "work", {"name": "first"}), ToolCall("2", "work", {"name": "second"})]


async def test_stop_while_a_tool_result_is_written_answers_that_call_once(tmp_path):
    ran = []

    @tool
    def work(name: str) -> str:
        """Do some work."""
        ran.append(name)
        return f"did {name}"

    path = tmp_path / "c.sqlite3"
    store = GatedStore(path, lambda m: isinstance(m, ToolMessage))
    model = ScriptedModel([Turn(tool_calls=calls_two()), Turn(text="ok")])
    agent = await Agent.create(model, AgentRunConfig("s"), tools=[work], extensions=[store])
    task = asyncio.create_task(agent.run("go"))
    await asyncio.wait_for(store.entered.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await store.close()
    results = [m for m in await history_of(path) if isinstance(m, ToolMessage)]
    assert [(r.tool_call_id, r.success, r.content) for r in results] == [
        ("1", True, "did first"),
        ("2", False, NOT_RUN_TOOL_TEXT),
    ], "each call answered exactly once, the finished one with its real result"
    assert ran == ["first"]


async def test_stop_while_the_tool_step_is_written_answers_every_call_as_not_run(tmp_path):
    ran = []

    @tool
    def work(name: str) -> str:
        """Do some work."""
        ran.append(name)
        return "done"

    path = tmp_path / "c.sqlite3"
    store = GatedStore(path, lambda m: isinstance(m, AssistantMessage) and bool(m.tool_calls))
    model = ScriptedModel([Turn(tool_calls=calls_two()), Turn(text="ok")])
    agent = await Agent.create(model, AgentRunConfig("s"), tools=[work], extensions=[store])
    task = asyncio.create_task(agent.run("go"))
    await asyncio.wait_for(store.entered.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    history = await history_of(path)
    results = [m for m in history if isinstance(m, ToolMessage)]
    assert [(r.tool_call_id, r.success, r.content) for r in results] == [
        ("1", False, NOT_RUN_TOOL_TEXT),
        ("2", False, NOT_RUN_TOOL_TEXT),
    ]
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL, "not a crash"
    assert ran == []
    await store.close()


async def test_leaving_the_stream_after_the_tool_step_answers_every_call_as_not_run(store):
    ran = []

    @tool
    def work(name: str) -> str:
        """Do some work."""
        ran.append(name)
        return "done"

    model = ScriptedModel([Turn(tool_calls=calls_two()), Turn(text="ok")])
    agent = await store.agent(model, tools=[work])
    stream = agent.stream("go")
    async for event in stream:
        if event.type is E.MESSAGE_APPENDED and isinstance(event.message, AssistantMessage):
            break
    await stream.aclose()
    results = [m for m in await store.history() if isinstance(m, ToolMessage)]
    assert [(r.tool_call_id, r.content) for r in results] == [
        ("1", NOT_RUN_TOOL_TEXT),
        ("2", NOT_RUN_TOOL_TEXT),
    ]
    assert (await agent.resume_point()).kind is ResumeKind.CALL_MODEL
    assert ran == []
    assert (await agent.resume()).content == "ok", "the lease was released"


async def test_leaving_the_stream_after_run_completed_is_not_an_error(store, tmp_path):
    errors = []

    class Errors(Extension):
        async def on_error(self, ctx, error):
            errors.append(error)

    jsonl = tmp_path / "r.jsonl"
    model = ScriptedModel([Turn(text="Done.")])
    agent = await store.agent(model, extensions=[Errors(), JSONLExtension(jsonl)])
    stream = agent.stream("hi")
    async for event in stream:
        if event.type is E.RUN_COMPLETED:
            break
    await stream.aclose()
    assert errors == [], "the request succeeded; after_run already ran"
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [line["outcome"]["status"] for line in lines] == ["completed"], "one line a request"


async def test_agent_client_stream_closed_early_closes_the_agents_stream_at_once():
    gate = asyncio.Event()
    model = ScriptedModel([Turn(text="one two", chunks=2, gate=gate), Turn(text="again")])
    agent = await Agent.create(model, AgentRunConfig("s"))  # the in-memory history
    client = AgentClient(agent)
    stream = client.stream("go")
    try:
        async for event in stream:
            if event.type is E.TEXT_DELTA:
                break
        await stream.aclose()
    finally:
        gate.set()  # never leave the scripted model waiting, whatever happened above
    history = await agent.store.restore(_ctx("s"))
    assert history[-1].stop is not None and history[-1].stop.cancelled
    assert (await client.run("next")).content == "again", "the lease is free right away"


async def test_agent_client_callback_that_raises_closes_the_agents_stream():
    model = ScriptedModel([Turn(text="abc", chunks=3), Turn(text="fine")])
    agent = await Agent.create(model, AgentRunConfig("s"))

    def on_event(event):
        if event.type is E.TEXT_DELTA:
            raise RuntimeError("the window went away")

    with pytest.raises(RuntimeError):
        await AgentClient(agent, on_event=on_event).run("go")
    history = await agent.store.restore(_ctx("s"))
    assert history[-1].stop is not None and history[-1].stop.cancelled
    assert (await agent.run("next")).content == "fine", "the lease is free right away"


def _ctx(session_id):
    from engine.extensions import RunContext

    return RunContext(session_id, "", None)


async def test_stream_event_order_through_a_tool_batch(store):
    @tool
    def ok() -> str:
        """Works."""
        return "fine"

    @tool
    def bad() -> str:
        """Fails."""
        raise ValueError("nope")

    calls = [ToolCall("1", "ok", {}), ToolCall("2", "bad", {})]
    model = ScriptedModel([Turn(text="Let me", tool_calls=calls), Turn(text="Done")])
    agent = await store.agent(model, tools=[ok, bad])
    events = [e async for e in agent.stream("go")]
    assert types_of(events) == [
        "message_appended",  # the user message
        "model_started",
        "text_delta",
        "tool_call_delta",
        "tool_call_delta",
        "message_appended",
        "model_completed",
        "tool_started",
        "tool_completed",
        "message_appended",
        "tool_started",
        "tool_failed",
        "message_appended",
        "model_started",
        "text_delta",
        "message_appended",
        "model_completed",
        "run_completed",
    ]
    assert events[7].tool_call.id == "1" and events[9].message.tool_call_id == "1"
    assert events[10].tool_call.id == "2" and events[12].message.success is False
    assert events[-1].message.content == "Done"


async def test_a_write_that_fails_after_its_caller_was_cancelled_says_so(tmp_path):
    """A cancelled caller of a storage write hears the write's own failure, not only its
    cancellation: a message that was not stored is never reported as kept. (The storage's
    writes go through engine._finish.finish; before, the failure was logged and the caller
    got CancelledError.)"""
    path = tmp_path / "c.sqlite3"
    storage = SQLiteSessionStorage(path)
    try:
        await storage.append("s", "r", UserMessage(id="first", content="first"))  # file open
        with sqlite3.connect(path) as raw:
            raw.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN new.id = 'poison' "
                "BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
        raw.close()
        message = UserMessage(id="poison", content="not stored")
        writing = asyncio.ensure_future(storage.append("s", "r", message))
        await asyncio.sleep(0)  # one turn of the loop: the write has begun (not a timing wait)
        writing.cancel()
        with pytest.raises(StorageError):
            await writing
        assert [m.id for m in await storage.load("s")] == ["first"]
    finally:
        await storage.close()
