"""An answer asking for more tool calls than one answer may make, and storing many at once.

The first `MAX_TOOL_CALLS_PER_ANSWER` calls run as usual; the rest are answered "not run: too
many calls in one answer" (outcome TOO_MANY), all in one write before the first call runs.
`append_many` stores several messages in one transaction, all or none, in the SQLite file and
the same way in memory.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine import (
    Agent,
    AgentRunConfig,
    InMemoryHistory,
    RunContext,
    StorageError,
    ToolCall,
    ToolMessage,
    ToolOutcome,
    UserMessage,
)
from engine.calls import MAX_TOOL_CALLS_PER_ANSWER, TOO_MANY_TOOL_TEXT
from engine.storage import SQLiteSessionExtension, SQLiteSessionStorage
from tests.support.scripted import ScriptedModel, Turn


class _CountingStore(SQLiteSessionExtension):
    """The real SQLite store, noting how it was asked to write."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.batches: list[int] = []

    async def append_many(self, ctx: RunContext, messages: Any) -> None:
        self.batches.append(len(messages))
        await super().append_many(ctx, messages)


async def test_past_the_cap_calls_are_answered_at_once_and_never_run(tmp_path: Path) -> None:
    count = MAX_TOOL_CALLS_PER_ANSWER + 36
    ran: list[str] = []

    async def note(text: str) -> str:
        """Write the text down."""
        ran.append(text)
        return "ok"

    calls = [ToolCall(f"c{i}", "note", {"text": str(i)}) for i in range(count)]
    model = ScriptedModel([Turn(tool_calls=calls), Turn(text="Done.")])
    store = _CountingStore(tmp_path / "continuo.sqlite3")
    try:
        agent = Agent(model, AgentRunConfig("s"), tools=[note], extensions=[store])
        await agent.run("Note a hundred things.")
        history = await store.storage.load("s")
    finally:
        await store.close()

    assert ran == [str(i) for i in range(MAX_TOOL_CALLS_PER_ANSWER)]
    assert store.batches == [count - MAX_TOOL_CALLS_PER_ANSWER], "stored once, in bulk"
    results = {m.tool_call_id: m for m in history if isinstance(m, ToolMessage)}
    assert len(results) == count
    for i in range(count):
        result = results[f"c{i}"]
        if i < MAX_TOOL_CALLS_PER_ANSWER:
            assert result.outcome is ToolOutcome.OK
        else:
            assert result.outcome is ToolOutcome.TOO_MANY and not result.success
            assert result.content == TOO_MANY_TOOL_TEXT
    # The model is told about every call: the next request answers all of them.
    told = [m for m in model.requests[-1].messages if isinstance(m, ToolMessage)]
    assert len(told) == count
    assert "too many calls in one answer" in TOO_MANY_TOOL_TEXT


async def test_stop_before_the_tools_answers_every_call_in_one_write(tmp_path: Path) -> None:
    """Stop right after the step asking for many calls was stored: each call is answered
    "did not run", all in one write."""
    calls = [ToolCall(f"c{i}", "note", {}) for i in range(40)]
    model = ScriptedModel([Turn(tool_calls=calls)])
    store = _CountingStore(tmp_path / "continuo.sqlite3")

    class StopAtTheFirstCall:
        async def before_tool(self, ctx: RunContext, call: ToolCall) -> None:
            raise asyncio.CancelledError  # Stop, while the first card waits

    try:
        agent = Agent(
            model, AgentRunConfig("s"), tools=[], extensions=[store, StopAtTheFirstCall()]
        )
        with pytest.raises(asyncio.CancelledError):
            await agent.run("Do forty things.")
        history = await store.storage.load("s")
    finally:
        await store.close()
    results = [m for m in history if isinstance(m, ToolMessage)]
    assert [m.outcome for m in results] == [ToolOutcome.NOT_RUN] * 40
    assert store.batches == [40]


def _messages(*texts: str) -> list[UserMessage]:
    return [UserMessage(id=text, content=text) for text in texts]


async def test_append_many_stores_all_or_nothing_in_one_transaction(tmp_path: Path) -> None:
    path = tmp_path / "continuo.sqlite3"
    storage = SQLiteSessionStorage(path)
    try:
        await storage.append("s", "r", UserMessage(id="first", content="first"))
        seqs = await storage.append_many("s", "r", _messages("a", "b", "c"))
        assert seqs == [2, 3, 4]
        tail = await storage.load_tail("s", 10)
        assert [r.message.id for r in tail] == ["first", "a", "b", "c"]
        assert await storage.parent_of("s", "a") == ("first", "user")
        assert await storage.parent_of("s", "c") == ("b", "user")
        # A refusal mid-batch (a real SQLite abort, from a trigger): none of it is stored.
        with sqlite3.connect(path) as raw:
            raw.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN new.id = 'poison' "
                "BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
        raw.close()
        with pytest.raises(StorageError):
            await storage.append_many("s", "r", _messages("x", "poison", "y"))
        assert [r.message.id for r in await storage.load_tail("s", 10)] == [
            "first",
            "a",
            "b",
            "c",
        ]
        assert await storage.count_all_messages("s") == 4
        assert await storage.append_many("s", "r", []) == []
    finally:
        await storage.close()


async def test_append_many_in_memory_puts_them_one_under_the_other() -> None:
    store = InMemoryHistory()
    ctx = RunContext("s", "r", None)
    await store.append(ctx, UserMessage(id="first", content="first"))
    await store.append_many(ctx, _messages("a", "b", "c"))
    tail = await store.restore_tail(ctx, 10)
    assert [r.message.id for r in tail] == ["first", "a", "b", "c"]
    assert await store.parent_of(ctx, "a") == ("first", "user")
    assert await store.parent_of(ctx, "c") == ("b", "user")
