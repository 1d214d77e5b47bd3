"""Text that UTF-8 cannot encode, from a real provider stream into a real SQLite file.

Servers that escape non-ASCII as ``\\uXXXX`` may split an emoji's surrogate pair across two
stream events (``"\\ud83d"`` then ``"\\ude00"``) or send a lone half. Stored as is, SQLite's
UTF-8 encoding raised `UnicodeEncodeError` and nothing was stored. Each adapter here streams
such text (answer, reasoning, tool arguments) from the loopback server (``escape_non_ascii``)
through an `Agent` into a real database: the emoji is stored whole, a lone half as U+FFFD.
Then: text a person or host gives (input, titles, metadata) is stored the same way, and a
write that cannot happen is a `StorageError` — and no sentence says "saved" for it.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from engine import (
    Agent,
    AgentEventType,
    AgentRunConfig,
    AssistantMessage,
    ErrorAction,
    ProviderConnectionError,
    ResumeKind,
    StorageError,
    ToolMessage,
    UserMessage,
    tool,
)
from engine.storage import SQLiteSessionExtension, SQLiteSessionStorage
from tests.support.provider_server import Fault, ScriptedCall, Turn
from tests.support.provider_wire import _pieces
from tests.support.scripted import ScriptedModel
from tests.support.scripted import Turn as ScriptedTurn

# With chunk_size 8 each string puts an emoji's high half last in one event and its low
# half first in the next; "\udc00" / "\ud800" are lone halves no character can be made of.
CHUNK = 8
TEXT = "Smile! \ud83d\ude00 then \udc00 end \ud800"
REASONING = "Think: \ud83d\ude00 ok"
ARGUMENT = "\ud83d\ude00 y\udc00"
STORED_TEXT = "Smile! \U0001f600 then \ufffd end \ufffd"
STORED_REASONING = "Think: \U0001f600 ok"
STORED_ARGUMENT = "\U0001f600 y\ufffd"


@tool
def echo(q: str) -> str:
    """Say it back.

    Args:
        q: the words.
    """
    return q


def test_the_scripted_strings_really_split_a_pair_across_events() -> None:
    """The premise of this file: each string's first emoji is cut between two events."""
    arguments = ScriptedCall("echo", {"q": ARGUMENT}).arguments_text()
    for text in (TEXT, REASONING, arguments):
        first = _pieces(text, CHUNK)[0]
        assert "\ud800" <= first[-1] <= "\udbff", text
        # and json.dumps with ensure_ascii (escape_non_ascii) sends it as an escape
        assert json.dumps(first).endswith('\\ud83d"')


async def test_split_and_lone_surrogates_are_stored_through_each_adapter(
    server, make_adapter, protocol, store
) -> None:
    server.script(
        Turn(
            text=TEXT,
            reasoning=REASONING,
            tool_calls=[ScriptedCall("echo", {"q": ARGUMENT})],
            chunk_size=CHUNK,
            escape_non_ascii=True,
        ),
        Turn(text="Done \ud83d\ude00", chunk_size=6, escape_non_ascii=True),
    )
    agent = await store.agent(make_adapter(protocol), tools=[echo])
    deltas: list[str] = []
    async for event in agent.stream("hi"):
        if event.type is AgentEventType.TEXT_DELTA:
            deltas.append(event.delta or "")
    for delta in deltas:
        delta.encode("utf-8")  # every delta a window receives is storable text
    assert "".join(deltas) == STORED_TEXT + "Done \U0001f600"

    history = await store.history()  # a fresh connection to the same file
    asked, result, final = history[1], history[2], history[3]
    assert isinstance(asked, AssistantMessage) and isinstance(result, ToolMessage)
    assert asked.content == STORED_TEXT
    assert asked.reasoning == STORED_REASONING
    assert [dict(c.arguments) for c in asked.tool_calls] == [{"q": STORED_ARGUMENT}]
    assert result.content == STORED_ARGUMENT
    assert final.content == "Done \U0001f600"


async def test_a_partial_ending_in_half_an_emoji_is_stored(server, make_adapter, store) -> None:
    # The connection drops right after the event carrying the emoji's high half: the half
    # that never got its partner is stored as U+FFFD with the rest of the partial.
    server.script(
        Turn(
            text="Half \ud83d\ude00 gone",
            chunk_size=6,
            escape_non_ascii=True,
            fault=Fault.RESET,
            fault_after=2,  # the role chunk, then "Half \ud83d"
        )
    )
    agent = await store.agent(make_adapter("openai", max_attempts=1))
    with pytest.raises(ProviderConnectionError):
        await agent.run("hi")
    partial = (await store.history())[-1]
    assert isinstance(partial, AssistantMessage)
    assert partial.content == "Half \ufffd"
    assert partial.stop is not None and partial.stop.raw == "network_error"


async def test_input_titles_and_metadata_with_lone_surrogates_are_stored(tmp_path) -> None:
    path = tmp_path / "continuo.sqlite3"
    storage = SQLiteSessionStorage(path)
    try:
        await storage.create_session(
            session_id="a", title="Title \ud800", metadata={"note\udc00": ["x\ud83d\ude00"]}
        )
        await storage.append("b", "r", UserMessage(content="First line \udfff\nsecond"))
        await storage.rename_session("a", "Renamed \ud83d\ude00 \udbff")
        await storage.update_metadata("b", {"last_error": {"message": "bad \ud800"}})
    finally:
        await storage.close()
    reopened = SQLiteSessionStorage(path)
    try:
        a, b = await reopened.get_session("a"), await reopened.get_session("b")
        assert a is not None and b is not None
        assert a.title == "Renamed \U0001f600 \ufffd"
        assert a.metadata == {"note\ufffd": ["x\U0001f600"]}
        assert b.title == "First line \ufffd"  # taken from the first user message
        assert b.metadata == {"last_error": {"message": "bad \ufffd"}}
        assert [m.content for m in await reopened.load("b")] == ["First line \ufffd\nsecond"]
    finally:
        await reopened.close()


async def test_a_value_sqlite_cannot_take_is_a_storage_error(tmp_path) -> None:
    storage = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    try:
        # A session id is the host's, not cleaned: writing it fails, and says so.
        with pytest.raises(StorageError, match="Could not write to the conversation file"):
            await storage.append("s\ud800", "r", UserMessage(content="hi"))
        assert await storage.list_sessions() == []
    finally:
        await storage.close()


class _PartialsFail(SQLiteSessionExtension):
    """Stores everything but a partial answer: that write fails as a full disk's would."""

    async def append(self, ctx, message):  # type: ignore[no-untyped-def]
        if isinstance(message, AssistantMessage) and message.stop is not None:
            raise StorageError("database or disk is full", action=ErrorAction.FREE_SPACE)
        await super().append(ctx, message)


async def test_a_partial_that_could_not_be_stored_is_a_storage_error(
    server, make_adapter, store
) -> None:
    server.script(Turn(text="A partial answer that is lost", fault=Fault.RESET, fault_after=3))
    failing = _PartialsFail(store.path)
    agent = await Agent.create(
        make_adapter("openai", max_attempts=1), config=AgentRunConfig("s"), extensions=[failing]
    )
    events = []
    with pytest.raises(StorageError) as info:
        async for event in agent.stream("hi"):
            events.append(event)
    await failing.close()
    assert isinstance(info.value.__cause__, ProviderConnectionError)
    assert info.value.action is ErrorAction.FREE_SPACE
    assert AgentEventType.TEXT_DELTA in [e.type for e in events]
    stopped = events[-1]
    assert stopped.type is AgentEventType.MODEL_STOPPED
    assert stopped.message is None, "the event carries a partial only when it was stored"
    appended = [e.message for e in events if e.type is AgentEventType.MESSAGE_APPENDED]
    assert all(not isinstance(m, AssistantMessage) for m in appended)
    assert [type(m) for m in await store.history()] == [UserMessage]
    point = await (await store.agent(make_adapter("openai"))).resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL


async def test_a_stop_whose_partial_could_not_be_stored_raises_storage_error(store) -> None:
    never = asyncio.Event()  # the model waits on it after its first delta: Stop comes first
    model = ScriptedModel([ScriptedTurn(text="Streaming, then stopped", chunks=3, gate=never)])
    failing = _PartialsFail(store.path)
    agent = await Agent.create(model, config=AgentRunConfig("s"), extensions=[failing])
    arrived = asyncio.Event()

    async def consume() -> None:
        async for event in agent.stream("hi"):
            if event.type is AgentEventType.TEXT_DELTA:
                arrived.set()

    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(arrived.wait(), 10)
    task.cancel()
    with pytest.raises(StorageError) as info:
        await task
    await failing.close()
    # Not CancelledError: the host must not report a Stop whose partial is kept.
    assert isinstance(info.value.__cause__, asyncio.CancelledError)
    assert [type(m) for m in await store.history()] == [UserMessage]


async def test_any_failure_of_a_store_to_append_is_a_storage_error(store) -> None:
    class Broken:
        async def restore(self, ctx):  # type: ignore[no-untyped-def]
            return []

        async def append(self, ctx, message):  # type: ignore[no-untyped-def]
            raise OSError(28, "No space left on device")

    agent = await Agent.create(
        ScriptedModel([ScriptedTurn(text="never")]),
        config=AgentRunConfig("s"),
        extensions=[Broken()],
    )
    with pytest.raises(StorageError, match="No space left on device") as info:
        await agent.run("hi")
    assert isinstance(info.value.__cause__, OSError)
    assert info.value.sentence("zh_CN").startswith("消息没能保存")
