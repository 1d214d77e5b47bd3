"""Faults during a request: what is stored, what is reported, and that resume then works.

A stream that fails after output began keeps the partial (stop interrupted, tool calls
withheld); cancelling keeps it too (raw ``cancelled``) and answers cut tools; the lease is
released in every case so the next request can run.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from engine import (
    AgentEventType,
    AssistantMessage,
    ProviderResponseError,
    ResumeKind,
    StepLimitError,
    StopInfo,
    StopReason,
    ToolCall,
    ToolMessage,
    ToolOutcome,
    UserMessage,
    tool,
)
from tests.engine.conftest import types_of
from tests.support.scripted import ScriptedModel, Turn

# What the model reads for a call Stop or a crash cut, pinned word for word (the first is the
# seed's exact sentence); not imported from the code under test.
INTERRUPTED_TOOL_TEXT = (
    "The process stopped while this tool was running, so it may or may not have completed, "
    "and whatever it changes may or may not have happened. Check the current state before "
    "running it again."
)
CANCELLED_TOOL_TEXT = (
    "The user stopped the request while this tool was running, so it may or may not have "
    "completed. Check the current state before running it again."
)
NOT_RUN_TOOL_TEXT = "The user stopped the request before this tool ran, so it did not run."

E = AgentEventType
RESET = httpx.ReadError("connection reset")


async def collect(stream, into):
    async for event in stream:
        into.append(event)


async def test_failure_after_output_keeps_the_partial_and_withholds_calls(store):
    model = ScriptedModel(
        [
            Turn(
                text="Here is the first half",
                chunks=4,
                tool_calls=[ToolCall("t", "lookup", {})],
                fail_after=99,
                error=httpx.ReadError("connection reset"),
            ),
            Turn(text="Here is the whole answer."),
        ]
    )
    agent = await store.agent(model)
    events = []
    with pytest.raises(httpx.ReadError):
        await collect(agent.stream("Explain"), events)
    assert types_of(events)[-2:] == ["message_appended", "model_stopped"]
    partial = events[-2].message
    assert partial.content == "Here is the first half"
    assert partial.tool_calls == ()
    assert partial.stop.reason is StopReason.INTERRUPTED and partial.stop.raw == "network_error"
    assert partial.stop.details["withheld_tool_calls"] == ["lookup"]
    assert events[-1].stop == partial.stop
    agent = await store.agent(model)
    point = await agent.resume_point()
    assert point.kind is ResumeKind.RETRY_RESPONSE
    final = await agent.resume()
    assert final.content == "Here is the whole answer."
    history = await store.history()
    assert history[1] == partial


async def test_provider_error_mid_stream_is_a_provider_error_partial(store):
    model = ScriptedModel(
        [Turn(text="abcdef", chunks=3, fail_after=1, error=ProviderResponseError("bad event"))]
    )
    agent = await store.agent(model)
    with pytest.raises(ProviderResponseError):
        await agent.run("x")
    stored = (await store.history())[-1]
    assert stored.stop.raw == "provider_error" and stored.content == "ab"
    assert stored.stop.message == "bad event"


@pytest.mark.parametrize(
    ("turn", "content", "reasoning", "withheld"),
    [
        (
            Turn(reasoning="Let me think about Oslo", fail_after=99, error=RESET),
            "",
            "Let me think about Oslo",
            [],
        ),
        (
            Turn(tool_calls=[ToolCall("t", "lookup", {})], fail_after=99, error=RESET),
            "",
            "",
            ["lookup"],
        ),
    ],
    ids=["reasoning_only", "tool_call_fragments_only"],
)
async def test_a_partial_without_text_is_kept(store, turn, content, reasoning, withheld):
    """Output is output: thinking or a half-sent call was on screen, so it is stored too."""
    model = ScriptedModel([turn, Turn(text="Here is the whole answer.")])
    agent = await store.agent(model)
    events = []
    with pytest.raises(httpx.ReadError):
        await collect(agent.stream("Weather in Oslo?"), events)
    assert types_of(events)[-2:] == ["message_appended", "model_stopped"]
    history = await store.history()
    assert [type(m) for m in history] == [UserMessage, AssistantMessage]
    partial = history[1]
    assert partial == events[-2].message
    assert (partial.content, partial.reasoning, partial.tool_calls) == (content, reasoning, ())
    assert partial.stop.reason is StopReason.INTERRUPTED and partial.stop.raw == "network_error"
    assert partial.stop.details.get("withheld_tool_calls", []) == withheld
    agent = await store.agent(model)
    assert (await agent.resume_point()).kind is ResumeKind.RETRY_RESPONSE
    assert (await agent.resume()).content == "Here is the whole answer."


async def test_failure_before_output_stores_nothing_but_the_user_message(store):
    model = ScriptedModel([Turn(fail_after=0, error=httpx.ConnectError("refused"))])
    agent = await store.agent(model)
    events = []
    with pytest.raises(httpx.ConnectError):
        await collect(agent.stream("Hello"), events)
    assert types_of(events) == ["message_appended", "model_started", "model_stopped"]
    assert events[-1].stop.raw == "network_error"
    history = await store.history()
    assert [type(m) for m in history] == [UserMessage]
    assert (await agent.resume_point()).kind is ResumeKind.CALL_MODEL


async def test_a_completed_step_with_stop_interrupted_is_stored_then_raised(store):
    stop = StopInfo(StopReason.INTERRUPTED, raw="server_error", message="The server failed.")
    model = ScriptedModel([Turn(text="partial", stop=stop)])
    agent = await store.agent(model)
    events = []
    with pytest.raises(ProviderResponseError, match="The server failed."):
        await collect(agent.stream("x"), events)
    assert types_of(events)[-3:] == ["message_appended", "model_completed", "model_stopped"]
    assert (await agent.resume_point()).kind is ResumeKind.RETRY_RESPONSE


async def test_stream_without_completion_is_a_fault(store):
    agent = await store.agent(ScriptedModel([Turn(text="dangling", no_completion=True)]))
    with pytest.raises(ProviderResponseError, match="without a final response"):
        await agent.run("x")
    assert (await store.history())[-1].stop.raw == "provider_error"


async def test_cancel_mid_stream_keeps_the_partial_and_releases_the_lease(store):
    gate, started = asyncio.Event(), asyncio.Event()
    model = ScriptedModel([Turn(text="Partial answer", chunks=2, gate=gate, started=started)])
    agent = await store.agent(model)
    got_text = asyncio.Event()

    async def consume():
        async for event in agent.stream("Tell me"):
            if event.type is E.TEXT_DELTA:
                got_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_text.wait(), 5)
    assert started.is_set()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stored = (await store.history())[-1]
    assert isinstance(stored, AssistantMessage)
    assert stored.content == "Partial"
    assert stored.stop.raw == "cancelled" and stored.stop.reason is StopReason.INTERRUPTED
    model.turns.append(Turn(text="Full answer"))
    assert (await agent.resume()).content == "Full answer", "the lease was released"


async def test_leaving_the_stream_early_keeps_the_partial(store):
    gate = asyncio.Event()
    model = ScriptedModel([Turn(text="one two", chunks=2, gate=gate)])
    agent = await store.agent(model)
    stream = agent.stream("go")
    async for event in stream:
        if event.type is E.TEXT_DELTA:
            break
    await stream.aclose()
    stored = (await store.history())[-1]
    assert stored.stop.raw == "cancelled" and stored.content == "one "


async def test_cancel_mid_tool_answers_the_cut_call_and_the_unstarted_one(store):
    entered, release = asyncio.Event(), asyncio.Event()
    ran = []

    @tool
    async def slow(name: str) -> str:
        """A slow tool."""
        ran.append(name)
        entered.set()
        await release.wait()
        return "finished"

    calls = [ToolCall("1", "slow", {"name": "first"}), ToolCall("2", "slow", {"name": "second"})]
    model = ScriptedModel([Turn(tool_calls=calls), Turn(text="ok")])
    agent = await store.agent(model, tools=[slow])
    task = asyncio.create_task(agent.run("go"))
    await asyncio.wait_for(entered.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    history = await store.history()
    results = [m for m in history if isinstance(m, ToolMessage)]
    assert [(r.tool_call_id, r.success, r.content) for r in results] == [
        ("1", False, CANCELLED_TOOL_TEXT),
        ("2", False, NOT_RUN_TOOL_TEXT),
    ]
    # Hosts read how each ended from a machine-readable field, not from these words.
    assert [r.outcome for r in results] == [ToolOutcome.INTERRUPTED, ToolOutcome.NOT_RUN]
    assert ran == ["first"]
    point = await agent.resume_point()
    assert point.kind is ResumeKind.CALL_MODEL, "already answered as cancelled"


async def test_new_message_closes_unanswered_calls_first(store):
    calls = (ToolCall("a", "write", {}), ToolCall("b", "write", {}))
    await store.seed(
        "s",
        [
            UserMessage(content="do"),
            AssistantMessage(tool_calls=calls),
            ToolMessage(tool_call_id="a", name="write", content="done"),
        ],
    )
    model = ScriptedModel([Turn(text="OK")])
    agent = await store.agent(model)
    events = []
    await collect(agent.stream("Never mind"), events)
    appended = [e.message for e in events if e.type is E.MESSAGE_APPENDED]
    assert isinstance(appended[0], ToolMessage) and appended[0].tool_call_id == "b"
    assert appended[0].content == INTERRUPTED_TOOL_TEXT and not appended[0].success
    assert isinstance(appended[1], UserMessage)
    sent = model.requests[0].messages
    assert [type(m).__name__ for m in sent] == [
        "UserMessage",
        "AssistantMessage",
        "ToolMessage",
        "ToolMessage",
        "UserMessage",
    ]


async def test_step_limit_is_a_clear_error_and_resumable(store):
    call = ToolCall("c", "noop", {})

    @tool
    def noop() -> str:
        """Do nothing."""
        return "nothing"

    model = ScriptedModel([Turn(tool_calls=[call])])
    agent = await store.agent(model, tools=[noop], max_steps=3)
    with pytest.raises(StepLimitError, match="3 model steps"):
        await agent.run("loop")
    assert len(model.requests) == 3
    assert (await agent.resume_point()).kind is ResumeKind.CALL_MODEL


async def test_pauses_continue_by_themselves_until_the_limit(store):
    paused = StopInfo(StopReason.PAUSED, raw="pause_turn")
    model = ScriptedModel([Turn(text="p1", stop=paused), Turn(text="p2", stop=paused)])
    agent = await store.agent(model, max_pauses=2)
    events = []
    await collect(agent.stream("search"), events)
    final = events[-1].message
    assert final.content == "p2" and final.stop.reason is StopReason.PAUSED
    assert types_of(events).count("model_stopped") == 1, "only the step at the limit"
    history = await store.history()
    assert history[1].stop is None and history[2].stop.reason is StopReason.PAUSED
    assert (await agent.resume_point()).kind is ResumeKind.CALL_MODEL


@pytest.mark.parametrize(
    ("stop", "reason"),
    [
        ("max_output", StopReason.MAX_OUTPUT),
        ("refusal", StopReason.REFUSAL),
        ("context_full", StopReason.CONTEXT_FULL),
    ],
)
async def test_abnormal_stops_return_with_stop_set(store, stop, reason):
    model = ScriptedModel([Turn(text="t", stop=stop, tool_calls=[ToolCall("x", "t", {})])])
    agent = await store.agent(model)
    events = []
    await collect(agent.stream("q"), events)
    final = events[-1].message
    assert events[-1].type is E.RUN_COMPLETED
    assert final.stop.reason is reason and final.tool_calls == ()
    assert final.stop.details["withheld_tool_calls"] == ["t"]
    assert types_of(events)[-3:] == ["model_completed", "model_stopped", "run_completed"]
