"""Tool call ids a provider repeats: one answer, one conversation, one file of versions.

A hostile (or careless) server sends two calls of one answer under the same id, or numbers
calls ``call_0``, ``call_1``… afresh in every answer. The engine renames repeats where it
normalises the step (``dup``, ``dup_2``…), before anything is stored or asked, so each call
is asked about, run, answered and recorded as started on its own — over the real wire of each
protocol, into a real SQLite file.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import (
    AssistantMessage,
    Extension,
    ResumeKind,
    ToolCall,
    ToolDenial,
    ToolMessage,
    UserMessage,
)
from engine.calls import unique_calls
from tests.support.provider_server import RecordedRequest, ScriptedCall, Turn


def _noted(ran: list[str]) -> Any:
    async def note(text: str) -> str:
        """Write the text down."""
        ran.append(text)
        return f"Noted: {text}"

    return note


class _Asked(Extension):
    """The person's answers: every call is seen (id and arguments), EVIL is denied."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def before_tool(self, ctx: Any, call: ToolCall) -> ToolDenial | None:
        self.asked.append((call.id, dict(call.arguments)))
        return ToolDenial("no") if call.arguments.get("text") == "EVIL" else None


class _DiesAtTheCard(Extension):
    """Stands for the app dying while a card waits: the call is left without a result."""

    async def before_tool(self, ctx: Any, call: ToolCall) -> ToolDenial | None:
        raise RuntimeError("the app died while the card waited")


def _wire_ids(request: RecordedRequest) -> tuple[list[str], list[str]]:
    """(the ids of the calls in the history sent, the ids its results answer)."""
    calls: list[str] = []
    results: list[str] = []
    for message in request.messages():
        for call in message.get("tool_calls") or ():
            calls.append(call.get("id"))
        if message.get("role") == "tool":
            results.append(message.get("tool_call_id"))
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use":
                calls.append(block["id"])
            elif block.get("type") == "tool_result":
                results.append(block["tool_use_id"])
    return calls, results


@pytest.mark.parametrize("protocol", ["openai", "anthropic", "ollama"])
async def test_two_calls_with_one_id_are_two_calls_each_with_its_own_arguments(
    server, make_adapter, store, protocol
) -> None:
    server.script(
        Turn(
            tool_calls=[
                ScriptedCall("note", {"text": "harmless"}, id="dup"),
                ScriptedCall("note", {"text": "EVIL"}, id="dup"),
            ]
        ),
        Turn(text="One noted, one refused."),
    )
    ran: list[str] = []
    person = _Asked()
    agent = await store.agent(make_adapter(protocol), tools=[_noted(ran)], extensions=[person])
    await agent.run("Note two things.")

    # Each call was asked about under its own id, with its own arguments; only the one
    # allowed ran.
    assert person.asked == [("dup", {"text": "harmless"}), ("dup_2", {"text": "EVIL"})]
    assert ran == ["harmless"]
    history = await store.history()
    asker = next(m for m in history if isinstance(m, AssistantMessage) and m.tool_calls)
    assert [(c.id, c.arguments["text"]) for c in asker.tool_calls] == [
        ("dup", "harmless"),
        ("dup_2", "EVIL"),
    ]
    results = {m.tool_call_id: m for m in history if isinstance(m, ToolMessage)}
    assert results["dup"].content == "Noted: harmless" and results["dup"].success
    assert results["dup_2"].content == "The person declined: no" and not results["dup_2"].success
    if protocol != "ollama":  # Ollama's wire has no ids: results go back in order
        calls, answered = _wire_ids(server.chat_requests()[-1])
        assert calls == ["dup", "dup_2"] and answered == ["dup", "dup_2"]


async def test_calls_numbered_afresh_each_answer_keep_their_own_start_records(
    server, make_adapter, store
) -> None:
    """``call_0`` in every answer: the second answer's call is its own call. Its start is
    not the first one's, so when the app dies at its card, Resume says it did not run."""
    server.script(
        Turn(tool_calls=[ScriptedCall("note", {"text": "first"})], numbered_ids=True),
        Turn(text="Noted."),
        Turn(tool_calls=[ScriptedCall("note", {"text": "second"})], numbered_ids=True),
    )
    ran: list[str] = []
    agent = await store.agent(make_adapter("openai"), tools=[_noted(ran)])
    await agent.run("Note the first.")
    assert ran == ["first"]

    dying = await store.agent(
        make_adapter("openai"), tools=[_noted(ran)], extensions=[_DiesAtTheCard()]
    )
    with pytest.raises(RuntimeError):
        await dying.run("Note the second.")
    assert ran == ["first"]

    history = await store.history()
    ids = [c.id for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert ids == ["call_0", "call_0_2"]
    point = await (await store.agent(make_adapter("openai"))).resume_point()
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
    assert [c.id for c in point.not_started] == ["call_0_2"], point.description
    assert "did not run" in point.description

    # Resumed: the model reads each result under its own call, ids all distinct.
    server.script(Turn(text="It did not run."))
    await (await store.agent(make_adapter("openai"))).resume()
    calls, answered = _wire_ids(server.chat_requests()[-1])
    assert calls == ["call_0", "call_0_2"] and answered == ["call_0", "call_0_2"]


async def test_a_new_version_reusing_an_id_that_ran_on_the_old_one_is_renamed(
    server, make_adapter, store
) -> None:
    """A regenerated answer is not on the old answer's path; the start record of the old
    answer's call still keeps the new call from taking its id."""
    server.script(
        Turn(tool_calls=[ScriptedCall("note", {"text": "old"})], numbered_ids=True),
        Turn(text="Noted."),
        Turn(tool_calls=[ScriptedCall("note", {"text": "new"})], numbered_ids=True),
    )
    ran: list[str] = []
    agent = await store.agent(make_adapter("openai"), tools=[_noted(ran)])
    await agent.run("Note it.")
    dying = await store.agent(
        make_adapter("openai"), tools=[_noted(ran)], extensions=[_DiesAtTheCard()]
    )
    with pytest.raises(RuntimeError):
        await dying.regenerate()
    assert ran == ["old"]
    history = await store.history()
    assert [c.id for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls] == [
        "call_0_2"
    ]
    point = await (await store.agent(make_adapter("openai"))).resume_point()
    assert point is not None and [c.id for c in point.not_started] == ["call_0_2"]


def test_renaming_is_deterministic_and_within_what_every_provider_takes() -> None:
    long_id = "x" * 60
    calls = [
        ToolCall("dup", "a"),
        ToolCall("dup", "b"),
        ToolCall("dup_2", "c"),  # a provider's own "dup_2" after a renamed one
        ToolCall("", "d"),
        ToolCall("", "e"),
        ToolCall("call:0/é", "f"),
        ToolCall(long_id, "g"),
        ToolCall(long_id, "h"),
        ToolCall("taken", "i"),
    ]
    first = unique_calls(calls, {"taken"})
    assert [c.id for c in first] == [
        "dup",
        "dup_2",
        "dup_2_2",
        "call",
        "call_2",
        "call_0__",
        "x" * 40,
        "x" * 38 + "_2",
        "taken_2",
    ]
    assert [c.name for c in first] == list("abcdefghi")
    assert unique_calls(calls, {"taken"}) == first
    assert len({c.id for c in first}) == len(first)
    # 10,000 repeats cost no rescan per call (this would take minutes if it did).
    many = unique_calls([ToolCall("dup", "a")] * 10_000, set())
    assert len({c.id for c in many}) == 10_000 and many[-1].id == "dup_10000"


@pytest.mark.parametrize("protocol", ["openai", "anthropic", "ollama"])
async def test_a_history_of_thousands_of_messages_is_sent_whole(
    server, make_adapter, store, protocol
) -> None:
    """A history past `LARGE_BODY` is encoded a message at a time (turns for the loop): the
    server still reads one JSON body holding every message, as httpx would have sent it."""
    from engine.providers.base import LARGE_BODY

    history: list[Any] = [UserMessage(content="Count.")]
    for n in range(LARGE_BODY // 2):
        history.append(AssistantMessage(content=f"{n} é"))
        history.append(UserMessage(content=f"more {n}"))
    await store.seed("s", history)
    server.script(Turn(text="Done."))
    agent = await store.agent(make_adapter(protocol))
    await agent.resume()
    body = server.chat_requests()[-1].body
    texts = [m.get("content") for m in body["messages"]]
    assert len(texts) == len(history)
    assert f"more {LARGE_BODY // 2 - 1}" in str(texts[-1]) and "0 é" in str(texts[1])


async def test_ollama_reads_the_answers_in_the_order_of_the_calls(
    server, make_adapter, store
) -> None:
    """Ollama pairs results with calls by order: the answers to the calls past the cap,
    stored first, go to the wire in the calls' order."""
    from engine.calls import MAX_TOOL_CALLS_PER_ANSWER, TOO_MANY_TOOL_TEXT

    count = MAX_TOOL_CALLS_PER_ANSWER + 6
    server.script(
        Turn(tool_calls=[ScriptedCall("note", {"text": str(n)}) for n in range(count)]),
        Turn(text="Done."),
    )
    ran: list[str] = []
    agent = await store.agent(make_adapter("ollama"), tools=[_noted(ran)])
    await agent.run("Note them all.")
    told = [m for m in server.chat_requests()[-1].messages() if m.get("role") == "tool"]
    assert [m["content"] for m in told] == [
        *(f"Noted: {n}" for n in range(MAX_TOOL_CALLS_PER_ANSWER)),
        *[TOO_MANY_TOOL_TEXT] * 6,
    ]
