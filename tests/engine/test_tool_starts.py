"""Tool start records: written only for a call let through, fenced, invisible to history.

The agent records, in the real SQLite file, that a call is about to run once its
``before_tool`` hooks let it through; a declined call has no record, a request whose lease
another process took over cannot write one (and the tool does not run), and no history
reader ever returns a record. The crash cases are in test_tool_start_crash.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from engine import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    Extension,
    ToolCall,
    ToolDenial,
    ToolOutcome,
    UserMessage,
)
from engine.errors import LeaseLostError
from engine.storage import SQLiteSessionExtension, SQLiteSessionStorage
from tests.engine.test_lease import write_row
from tests.support.scripted import ScriptedModel, Turn

CALLS = [ToolCall("call_time", "get_time", {}), ToolCall("call_mail", "send_mail", {})]


def tools(ran: list[str]) -> list:
    async def get_time() -> str:
        """The time now."""
        ran.append("get_time")
        return "12:00"

    async def send_mail() -> str:
        """Send the time by mail."""
        ran.append("send_mail")
        return "sent"

    return [get_time, send_mail]


def start_rows(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as raw:
        rows = raw.execute(
            "SELECT session_id, tool_call_id FROM tool_starts ORDER BY tool_call_id"
        ).fetchall()
    raw.close()
    return rows


async def test_a_declined_call_leaves_no_start_record(tmp_path: Path) -> None:
    path = tmp_path / "continuo.sqlite3"

    class DenyMail(Extension):
        async def before_tool(self, ctx, call):
            return ToolDenial("Not now.") if call.name == "send_mail" else None

    ran: list[str] = []
    ext = SQLiteSessionExtension(path)
    model = ScriptedModel([Turn(tool_calls=CALLS), Turn(text="Done.")])
    agent = await Agent.create(
        model, AgentRunConfig("s"), tools=tools(ran), extensions=[ext, DenyMail()]
    )
    try:
        await agent.run("What time is it? Mail it.")
        assert ran == ["get_time"]
        assert await ext.storage.started_tool_calls("s", [c.id for c in CALLS]) == {"call_time"}
        outcomes = [m.outcome for m in await ext.storage.load("s") if m.type_name == "tool"]
        assert outcomes == [ToolOutcome.OK, ToolOutcome.DECLINED]
    finally:
        await ext.close()
    assert start_rows(path) == [("s", "call_time")]


async def test_recording_a_start_is_fenced_by_the_lease(tmp_path: Path) -> None:
    path = tmp_path / "continuo.sqlite3"
    mine = SQLiteSessionStorage(path, lease_stale_after=3600, heartbeat_interval=3600)
    try:
        lease = await mine.acquire_lease("s")
        await mine.append("s", "r", AssistantMessage(tool_calls=tuple(CALLS)), lease=lease)
        await mine.record_tool_start("s", "call_time", lease=lease)
        write_row(path, "s", host="elsewhere", boot_id="b", pid=7, process_started=None, token="n")
        with pytest.raises(LeaseLostError):
            await mine.record_tool_start("s", "call_mail", lease=lease)
        assert lease.lost
        assert await mine.started_tool_calls("s", ["call_time", "call_mail"]) == {"call_time"}
        with pytest.raises(ValueError):
            await mine.record_tool_start("t", "call_mail", lease=lease)
    finally:
        await mine.close()


async def test_a_tool_whose_start_cannot_be_recorded_does_not_run(tmp_path: Path) -> None:
    """The lease is taken over while the call waits for approval: the start is refused by
    the fence, the tool never runs, and the next holder reads "did not run"."""
    path = tmp_path / "continuo.sqlite3"
    storage = SQLiteSessionStorage(path, lease_stale_after=3600, heartbeat_interval=3600)

    class TakenOverDuringApproval(Extension):
        async def before_tool(self, ctx, call):
            await asyncio.to_thread(
                write_row, path, "s", host="elsewhere", boot_id="b", pid=7,
                process_started=None, token="n",
            )
            return None

    ran: list[str] = []
    ext = SQLiteSessionExtension(storage)
    model = ScriptedModel([Turn(tool_calls=CALLS[:1]), Turn(text="Done.")])
    agent = await Agent.create(
        model, AgentRunConfig("s"), tools=tools(ran), extensions=[ext, TakenOverDuringApproval()]
    )
    try:
        with pytest.raises(LeaseLostError):
            await agent.run("What time is it?")
        assert ran == []
        assert start_rows(path) == []
        with sqlite3.connect(path) as raw:
            raw.execute("DELETE FROM leases")  # the other holder finished and released it
        raw.close()
        point = await Agent(None, AgentRunConfig("s"), extensions=[ext]).resume_point()
        assert point is not None and [c.name for c in point.not_started] == ["get_time"]
    finally:
        await ext.close()
        await storage.close()


async def test_history_readers_never_see_start_records(tmp_path: Path) -> None:
    path = tmp_path / "continuo.sqlite3"
    ran: list[str] = []
    ext = SQLiteSessionExtension(path)
    model = ScriptedModel([Turn(tool_calls=CALLS), Turn(text="Done.")])
    agent = await Agent.create(model, AgentRunConfig("s"), tools=tools(ran), extensions=[ext])
    storage = ext.storage
    try:
        await agent.run("What time is it? Mail it.")
        assert len(start_rows(path)) == 2
        history = await storage.load("s")
        assert [m.type_name for m in history] == ["user", "assistant", "tool", "tool", "assistant"]
        assert [r.message for r in await storage.load_tail("s", 100)] == history
        assert await storage.count_messages("s") == 5
        assert [s.id for s in await storage.list_sessions()] == ["s"]
        assert await Agent(None, AgentRunConfig("s"), extensions=[ext]).resume_point() is None
        await storage.delete_session("s")
        assert start_rows(path) == []
        assert await storage.started_tool_calls("s", ["call_time", "call_mail"]) == set()
    finally:
        await ext.close()


async def test_without_start_records_every_unanswered_call_may_have_run() -> None:
    """A store that keeps no start records (in memory) never claims a call did not run."""
    from engine import InMemoryHistory

    history = InMemoryHistory()
    agent = Agent(None, AgentRunConfig("s"), extensions=[history])
    for message in (UserMessage(content="Q"), AssistantMessage(tool_calls=tuple(CALLS))):
        await history.append(_ctx("s"), message)
    point = await agent.resume_point()
    assert point is not None and point.not_started == ()
    assert "may or may not" in point.description


def _ctx(session_id: str):
    from engine import RunContext

    return RunContext(session_id, "r", None)


async def test_a_started_record_finishes_when_its_caller_is_cancelled(tmp_path: Path) -> None:
    storage = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    try:
        await storage.append("s", "r", AssistantMessage(tool_calls=tuple(CALLS)))
        writing = asyncio.ensure_future(storage.record_tool_start("s", "call_time"))
        await asyncio.sleep(0)  # one turn of the loop: the write has started (not a timing wait)
        writing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await writing
        assert await storage.started_tool_calls("s", ["call_time"]) == {"call_time"}
        # Any number of ids is read in one query (no limit on parameters).
        many = [f"call_{n}" for n in range(40000)] + ["call_time", "不存在"]
        assert await storage.started_tool_calls("s", many) == {"call_time"}
    finally:
        await storage.close()
