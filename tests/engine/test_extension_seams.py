"""Where a host's objects plug into the agent: its store, and its hooks.

A store is the first extension that is one (`engine.store.find_store`): an object with every
method of `SessionStore` is used as it is, one with only ``restore`` and ``append`` (DESIGN.md's
smallest store) through `BasicStoreAdapter`, and one in between is refused, naming what it
lacks. Hooks are checked by name when the agent is built: a misspelt hook, or one that is not
``async``, is refused rather than silently never run.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import pytest

from engine import (
    Agent,
    AgentBusyError,
    AgentRunConfig,
    AssistantMessage,
    Extension,
    InMemoryHistory,
    Message,
    RunContext,
    StoredMessage,
    ToolCall,
    ToolDenial,
    tool,
)
from engine.store import BasicStoreAdapter, Root, StoreLease
from tests.support.scripted import ScriptedModel, Turn


@tool
def clock() -> str:
    """Tell the time."""
    return "noon"


class OwnStore:
    """A host's store that implements the whole contract without subclassing it (here by
    keeping its history in an `InMemoryHistory` and its own start records)."""

    def __init__(self) -> None:
        self.history = InMemoryHistory()
        self.started: set[str] = set()
        self.calls: list[str] = []

    async def restore(self, ctx: RunContext, *, leaf: str | Root | None = None) -> list[Message]:
        self.calls.append("restore")
        return await self.history.restore(ctx, leaf=leaf)

    async def restore_tail(
        self, ctx: RunContext, limit: int, before_seq: int | None = None
    ) -> Sequence[StoredMessage]:
        return await self.history.restore_tail(ctx, limit, before_seq)

    async def append(
        self, ctx: RunContext, message: Message, *, parent: str | Root | None = None
    ) -> None:
        self.calls.append("append")
        await self.history.append(ctx, message, parent=parent)

    async def append_many(self, ctx: RunContext, messages: Sequence[Message]) -> None:
        await self.history.append_many(ctx, messages)

    async def acquire(self, ctx: RunContext) -> StoreLease | None:
        self.calls.append("acquire")
        return await self.history.acquire(ctx)

    async def release(self, ctx: RunContext) -> None:
        self.calls.append("release")
        await self.history.release(ctx)

    async def save_draft(
        self, ctx: RunContext, message: AssistantMessage, *, parent: str | Root | None = None
    ) -> None:
        return None

    async def restore_draft(self, ctx: RunContext) -> StoredMessage | None:
        return None

    async def record_tool_start(self, ctx: RunContext, call: ToolCall) -> None:
        self.calls.append("record_tool_start")
        self.started.add(call.id)

    async def started_tool_calls(
        self, ctx: RunContext, asker: AssistantMessage
    ) -> AbstractSet[str] | None:
        return {c.id for c in asker.tool_calls} & self.started

    async def switch_to(self, ctx: RunContext, message_id: str) -> str:
        return await self.history.switch_to(ctx, message_id)

    async def parent_of(self, ctx: RunContext, message_id: str) -> tuple[str | None, str]:
        return await self.history.parent_of(ctx, message_id)

    async def branch(self, ctx: RunContext, message_id: str | None) -> None:
        await self.history.branch(ctx, message_id)


def ask_clock() -> ScriptedModel:
    return ScriptedModel([Turn(tool_calls=[ToolCall("c1", "clock", {})]), Turn(text="Noon.")])


async def test_a_whole_store_of_the_host_is_used_as_it_is() -> None:
    store = OwnStore()
    agent = Agent(ask_clock(), AgentRunConfig("s"), tools=[clock], extensions=[store])
    assert agent.store is store
    assert (await agent.run("What time is it?")).content == "Noon."
    assert store.calls[0] == "acquire" and store.calls[-1] == "release"
    assert "record_tool_start" in store.calls
    assert store.started == {"c1"}


async def test_a_basic_store_keeps_a_line_of_history() -> None:
    class Lines:
        def __init__(self) -> None:
            self.messages: list[Message] = []

        async def restore(self, ctx: RunContext) -> list[Message]:
            return list(self.messages)

        async def append(self, ctx: RunContext, message: Message) -> None:
            self.messages.append(message)

    lines = Lines()
    agent = Agent(ask_clock(), AgentRunConfig("s"), tools=[clock], extensions=[lines])
    assert isinstance(agent.store, BasicStoreAdapter) and agent.store.store is lines
    assert (await agent.run("What time is it?")).content == "Noon."
    assert [m.type_name for m in lines.messages] == ["user", "assistant", "tool", "assistant"]
    # Its leases hold within this process.
    ctx = RunContext("s", "other", None)
    await agent.store.acquire(ctx)
    with pytest.raises(AgentBusyError):
        await agent.run("again")
    await agent.store.release(ctx)
    # It keeps no versions, and says so before anything is stored.
    with pytest.raises(TypeError, match="keeps no versions"):
        await agent.regenerate()
    assert len(lines.messages) == 4


async def test_a_store_missing_part_of_the_contract_is_refused() -> None:
    class Misspelt(OwnStore):
        record_tool_start = None  # type: ignore[assignment]

        async def record_tool_starts(self, ctx: RunContext, call: ToolCall) -> None:
            self.started.add(call.id)

    with pytest.raises(TypeError, match=r"not a whole store.*not record_tool_start"):
        Agent(ask_clock(), AgentRunConfig("s"), extensions=[Misspelt()])


async def test_a_misspelt_hook_is_refused() -> None:
    class Approver(Extension):
        async def before_tools(self, ctx: RunContext, call: ToolCall) -> ToolDenial:
            return ToolDenial("no")

    with pytest.raises(TypeError, match=r"Approver\.before_tools is not a hook"):
        Agent(ask_clock(), AgentRunConfig("s"), extensions=[Approver()])


async def test_a_hook_that_is_not_async_is_refused() -> None:
    class Plain:
        def before_tool(self, ctx: RunContext, call: ToolCall) -> Any:
            return ToolDenial("no")

    with pytest.raises(TypeError, match=r"Plain\.before_tool must be a coroutine function"):
        Agent(ask_clock(), AgentRunConfig("s"), extensions=[Plain()])


async def test_a_plain_object_with_async_hooks_is_called() -> None:
    seen: list[str] = []

    class Plain:
        async def before_tool(self, ctx: RunContext, call: ToolCall) -> ToolDenial:
            seen.append(call.id)
            return ToolDenial("not now")

        async def after_run(self, ctx: RunContext, result: AssistantMessage) -> None:
            seen.append(result.content)

    agent = Agent(ask_clock(), AgentRunConfig("s"), tools=[clock], extensions=[Plain()])
    await agent.run("What time is it?")
    assert seen == ["c1", "Noon."]
    history = await agent.store.restore(RunContext("s", "", None))
    assert history[2].content == "The person declined: not now"  # type: ignore[union-attr]
