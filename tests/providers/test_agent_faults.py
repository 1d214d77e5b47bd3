"""Every fault a network produces, through each adapter, an Agent and a real SQLite file.

For each fault: what the request raises, what is stored, what `resume_point()` then says
after a restart (a fresh connection to the same file), and that `resume()` completes against
the loopback server. Adapters run with ``max_attempts=1`` here, so faults before any output
reach the agent instead of being retried away (retries are tested in test_retries.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from engine import (
    AgentEventType,
    AgentResumeError,
    AssistantMessage,
    InternalMessage,
    ProviderConnectionError,
    ProviderEmptyStreamError,
    ProviderRateLimitError,
    ProviderResponseError,
    ProviderStatusError,
    ProviderTimeoutError,
    ResumeKind,
    StopReason,
    ToolMessage,
    UserMessage,
    tool,
)
from tests.support.provider_server import Fault, ScriptedCall, Turn

LONG = "The first part of a long answer, cut off somewhere in the middle."
RESUMED = "Hello from the loopback server."  # the server's default turn in these tests


@tool
def get_weather(city: str) -> str:
    """Look up the weather.

    Args:
        city: where.
    """
    return f"Sunny in {city}."


@dataclass(frozen=True)
class Case:
    turn: Turn
    raised: type[Exception] | tuple[type[Exception], ...]
    partial_raw: str | None  #: the stored partial's stop.raw, or None when nothing is stored
    kind: ResumeKind


CASES = {
    "refuse": Case(Turn(fault=Fault.REFUSE), ProviderConnectionError, None, ResumeKind.CALL_MODEL),
    "stall_headers": Case(
        Turn(fault=Fault.STALL_HEADERS), ProviderTimeoutError, None, ResumeKind.CALL_MODEL
    ),
    "429_retry_after": Case(
        Turn(status=429, retry_after="3600"), ProviderRateLimitError, None, ResumeKind.CALL_MODEL
    ),
    "5xx": Case(Turn(status=502), ProviderStatusError, None, ResumeKind.CALL_MODEL),
    "stall_midstream": Case(
        Turn(text=LONG, chunk_size=4, fault=Fault.STALL_MIDSTREAM, fault_after=8),
        ProviderTimeoutError,
        "network_error",
        ResumeKind.RETRY_RESPONSE,
    ),
    "reset": Case(
        Turn(text=LONG, chunk_size=4, fault=Fault.RESET, fault_after=8),
        ProviderConnectionError,
        "network_error",
        ResumeKind.RETRY_RESPONSE,
    ),
    "error_event": Case(
        Turn(text=LONG, chunk_size=4, fault=Fault.ERROR_EVENT, fault_after=8),
        ProviderResponseError,
        "provider_error",
        ResumeKind.RETRY_RESPONSE,
    ),
    "malformed": Case(
        Turn(text=LONG, chunk_size=4, fault=Fault.MALFORMED, fault_after=8),
        ProviderResponseError,
        "provider_error",
        ResumeKind.RETRY_RESPONSE,
    ),
    "cut_tool_args": Case(
        Turn(
            text="Looking it up.",
            tool_calls=[ScriptedCall("get_weather", {"city": "Valparaíso"})],
            fault=Fault.CUT_TOOL_ARGS,
        ),
        (ProviderConnectionError, ProviderResponseError),
        "any",
        ResumeKind.RETRY_RESPONSE,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_fault_is_stored_and_resumes(server, make_adapter, store, protocol, name) -> None:
    case = CASES[name]
    server.script(case.turn)
    model = make_adapter(protocol, max_attempts=1, timeout=0.5)
    agent = await store.agent(model, tools=[get_weather])
    with pytest.raises(case.raised):
        await agent.run("Tell me about the weather.")

    history = await store.history()
    assert isinstance(history[0], UserMessage)
    if case.partial_raw is None:
        assert len(history) == 1  # nothing arrived, nothing but the question is stored
    else:
        (partial,) = history[1:]
        assert isinstance(partial, AssistantMessage)
        assert partial.stop.reason is StopReason.INTERRUPTED
        if case.partial_raw != "any":
            assert partial.stop.raw == case.partial_raw
        assert partial.tool_calls == ()
        assert partial.content  # what the person saw on screen is kept
        assert LONG.startswith(partial.content) or partial.content == "Looking it up."

    # A restart: a new connection to the same file, a new adapter.
    restarted = await store.agent(make_adapter(protocol), tools=[get_weather])
    point = await restarted.resume_point()
    assert point is not None and point.kind is case.kind
    assert point.description
    final = await restarted.resume()
    assert final.content == RESUMED and final.stop is None

    after = await store.history()
    assert after[: len(history)] == history  # nothing stored was changed
    resume_request = server.chat_requests()[-1]
    if case.kind is ResumeKind.RETRY_RESPONSE:
        notice = after[len(history)]
        assert isinstance(notice, InternalMessage) and notice.tag == "resume:retry_response"
        # The notice goes to the provider as user-role text, after the kept partial.
        assert notice.content in str(resume_request.messages()[-1])
        assert resume_request.messages()[-1]["role"] == "user"
    assert after[-1].content == RESUMED
    assert await restarted.resume_point() is None


async def test_cut_tool_arguments_withhold_the_call(server, make_adapter, store) -> None:
    server.script(CASES["cut_tool_args"].turn)
    agent = await store.agent(make_adapter("openai", max_attempts=1), tools=[get_weather])
    with pytest.raises(ProviderConnectionError):
        await agent.run("Weather?")
    partial = (await store.history())[-1]
    assert partial.stop.details["withheld_tool_calls"] == ["get_weather"]


async def test_slow_drip_with_keepalives_completes(server, make_adapter, store, protocol) -> None:
    server.script(Turn(text="Slowly but surely.", chunk_size=3, delay=0.02, keepalive=True))
    agent = await store.agent(make_adapter(protocol, timeout=0.5))
    final = await agent.run("Go slowly.")
    assert final.content == "Slowly but surely."
    assert await agent.resume_point() is None


async def test_max_output_then_continue(server, make_adapter, store, protocol) -> None:
    server.script(Turn(text="Half an ans", stop="max_output"))
    agent = await store.agent(make_adapter(protocol))
    cut = await agent.run("Write a lot.")
    assert cut.stop.reason is StopReason.MAX_OUTPUT
    restarted = await store.agent(make_adapter(protocol))
    point = await restarted.resume_point()
    assert point.kind is ResumeKind.CONTINUE_RESPONSE
    final = await restarted.resume()
    assert final.content == RESUMED
    sent = server.chat_requests()[-1].messages()
    assert "Half an ans" in str(sent[-2])  # the cut answer goes back as the assistant's
    assert sent[-1]["role"] == "user"


async def test_context_full_is_stored_not_raised(server, make_adapter, store, protocol) -> None:
    server.script(Turn(stop="context_full"))
    agent = await store.agent(make_adapter(protocol))
    final = await agent.run("A very long question.")
    assert final.stop.reason is StopReason.CONTEXT_FULL
    stored = (await store.history())[-1]
    assert stored.stop.reason is StopReason.CONTEXT_FULL
    assert await agent.resume_point() is None
    with pytest.raises(AgentResumeError) as info:
        await agent.resume()
    assert info.value.reason == "context_full"


async def test_empty_stream_is_its_own_error_and_not_retried(
    server, make_adapter, store, protocol
) -> None:
    # llama.cpp's Python server answers some failures with 200 and an empty body. OpenAI's
    # adapter then asks once without streaming; here that answer is empty too.
    server.script(Turn(body=b""), Turn(body=b""))
    agent = await store.agent(make_adapter(protocol))  # 4 attempts allowed
    with pytest.raises(ProviderEmptyStreamError) as info:
        await agent.run("Hello?")
    message = str(info.value)
    assert "empty stream, so nothing arrived" in message
    assert "What arrived is kept" not in message and "connection" not in message
    requests = server.chat_requests()
    assert len(requests) == (2 if protocol == "openai" else 1)
    if protocol == "openai":
        assert requests[1].body["stream"] is False and "stream_options" not in requests[1].body
        assert requests[1].body["messages"] == requests[0].body["messages"]
    assert [type(m) for m in await store.history()] == [UserMessage]  # nothing else arrived


async def test_empty_stream_with_a_reason_is_said_wholly_in_chinese(
    server, make_adapter, store
) -> None:
    # Before: the server's reason was rendered in English first and put into the Chinese
    # sentence ("...它说明了原因：OpenAI rejected the request (400): ...").
    from tests.support.language import english_words

    server.script(Turn(body=b""), Turn(status=400, error="请求无效"))
    agent = await store.agent(make_adapter("openai"))
    with pytest.raises(ProviderEmptyStreamError) as info:
        await agent.run("Hello?")
    assert "rejected the request (400): 请求无效" in str(info.value)
    chinese = info.value.sentence("zh_CN")
    assert "请求无效" in chinese
    assert not english_words(chinese, "OpenAI"), chinese


async def test_empty_stream_then_context_error_is_stored_as_context_full(
    server, make_adapter, store
) -> None:
    server.script(Turn(body=b""), Turn(stop="context_full"))
    agent = await store.agent(make_adapter("openai"))
    final = await agent.run("A question longer than the context window.")
    assert final.stop.reason is StopReason.CONTEXT_FULL
    assert "context window" in final.stop.message
    stored = (await store.history())[-1]
    assert isinstance(stored, AssistantMessage) and stored.stop.reason is StopReason.CONTEXT_FULL
    first, again = server.chat_requests()
    assert first.body["stream"] is True and again.body["stream"] is False  # asked, not retried
    with pytest.raises(AgentResumeError) as info:
        await agent.resume()
    assert info.value.reason == "context_full"


async def test_empty_stream_then_a_dropped_connection_asks_on_a_fresh_one(
    server, make_adapter, store
) -> None:
    # Live, llama-cpp-python's server closes the connection the empty stream came on just
    # after it, and the pool handed that connection to the repeat: it read nothing back.
    # REFUSE drops the repeat's connection on arrival the same way.
    server.script(Turn(body=b""), Turn(fault=Fault.REFUSE), Turn(stop="context_full"))
    agent = await store.agent(make_adapter("openai"))
    final = await agent.run("A question longer than the context window.")
    assert final.stop.reason is StopReason.CONTEXT_FULL
    assert [r.body["stream"] for r in server.chat_requests()] == [True, False, False]


async def test_empty_stream_then_a_timeout_is_not_asked_again(server, make_adapter, store) -> None:
    # An unstreamed answer may take longer than the read timeout; generating it twice
    # would not help.
    server.script(Turn(body=b""), Turn(fault=Fault.STALL_HEADERS))
    agent = await store.agent(make_adapter("openai", timeout=0.3))
    with pytest.raises(ProviderEmptyStreamError, match="gave no reason"):
        await agent.run("Hello?")
    assert len(server.chat_requests()) == 2


async def test_empty_stream_then_an_error_status_gives_its_reason(
    server, make_adapter, store
) -> None:
    server.script(Turn(body=b""), Turn(status=400, error="Automatic streaming tool choice"))
    agent = await store.agent(make_adapter("openai"))
    with pytest.raises(ProviderEmptyStreamError, match="Automatic streaming tool choice") as info:
        await agent.run("Hello?")
    assert "Asked again without streaming" in str(info.value)
    assert len(server.chat_requests()) == 2


async def test_empty_stream_then_a_whole_answer_is_the_answer(server, make_adapter, store) -> None:
    whole = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Answered unstreamed."},
                "finish_reason": "stop",
            }
        ],
    }
    server.script(
        Turn(body=b""), Turn(body=json.dumps(whole).encode(), content_type="application/json")
    )
    agent = await store.agent(make_adapter("openai"))
    final = await agent.run("Hello?")
    assert final.content == "Answered unstreamed." and final.stop is None
    assert (await store.history())[-1].content == "Answered unstreamed."
    assert [r.body["stream"] for r in server.chat_requests()] == [True, False]


async def test_refusal_is_stored_and_not_resumable(server, make_adapter, store) -> None:
    server.script(Turn(text="I can't help with that.", stop="refusal"))
    agent = await store.agent(make_adapter("anthropic"))
    final = await agent.run("Something bad.")
    assert final.stop.reason is StopReason.REFUSAL
    assert await agent.resume_point() is None


async def test_tool_round_trip_through_the_server(server, make_adapter, store, protocol) -> None:
    server.script(
        Turn(tool_calls=[ScriptedCall("get_weather", {"city": "Oslo"})]), Turn(text="Sunny.")
    )
    agent = await store.agent(make_adapter(protocol), tools=[get_weather])
    final = await agent.run("Weather in Oslo?")
    assert final.content == "Sunny."
    history = await store.history()
    result = next(m for m in history if isinstance(m, ToolMessage))
    assert result.content == "Sunny in Oslo." and result.success
    second = server.chat_requests()[-1]
    assert "Sunny in Oslo." in str(second.messages())
    assert second.body["tools"]


async def test_stop_mid_stream_keeps_the_partial(server, make_adapter, store, protocol) -> None:
    # Stop (the consumer closing the stream) while the server is still dripping text.
    server.script(Turn(text=LONG, chunk_size=4, delay=0.02))
    model = make_adapter(protocol)
    agent = await store.agent(model)
    stream = agent.stream("Tell me a long story.")
    async for event in stream:
        if event.type is AgentEventType.TEXT_DELTA:
            break
    await stream.aclose()
    partial = (await store.history())[-1]
    assert partial.stop.reason is StopReason.INTERRUPTED and partial.stop.raw == "cancelled"
    assert LONG.startswith(partial.content) and partial.content
    point = await agent.resume_point()
    assert point.kind is ResumeKind.RETRY_RESPONSE
    final = await agent.resume()  # the same adapter: its pool survived the abandoned stream
    assert final.content == RESUMED


async def test_anthropic_pause_turn_is_continued_by_the_agent(server, make_adapter, store) -> None:
    # Below the pause limit the runtime carries on by itself; the paused step goes back.
    server.script(Turn(text="Searching the web", raw_stop="pause_turn"), Turn(text="Found it."))
    agent = await store.agent(make_adapter("anthropic"))
    final = await agent.run("Look it up.")
    assert final.content == "Found it."
    first, second = server.chat_requests()
    assert second.messages()[-1]["role"] == "assistant"
    assert second.messages()[-1]["content"] == [{"type": "text", "text": "Searching the web"}]
    assert await agent.resume_point() is None


THINKING = "The person asks about the weather; first I should find the city."


async def test_a_reasoning_only_partial_is_kept(server, make_adapter, store, protocol) -> None:
    """The connection breaks while the model is still thinking: the thinking is stored."""
    server.script(Turn(reasoning=THINKING, chunk_size=4, fault=Fault.RESET, fault_after=6))
    agent = await store.agent(make_adapter(protocol, max_attempts=1))
    with pytest.raises(ProviderConnectionError):
        await agent.run("Tell me about the weather.")
    (question, partial) = await store.history()
    assert isinstance(question, UserMessage) and isinstance(partial, AssistantMessage)
    assert partial.content == "" and partial.tool_calls == ()
    assert partial.reasoning and THINKING.startswith(partial.reasoning)
    assert partial.stop.reason is StopReason.INTERRUPTED and partial.stop.raw == "network_error"
    restarted = await store.agent(make_adapter(protocol))
    assert (await restarted.resume_point()).kind is ResumeKind.RETRY_RESPONSE


@pytest.mark.parametrize("wire", ["openai", "anthropic"])  # Ollama sends a call whole
async def test_a_tool_call_fragments_only_partial_is_kept(
    server, make_adapter, store, wire
) -> None:
    """Only a half-sent call arrived: the partial names it as withheld and is stored."""
    server.script(
        Turn(tool_calls=[ScriptedCall("get_weather", {"city": "Oslo"})], fault=Fault.CUT_TOOL_ARGS)
    )
    agent = await store.agent(make_adapter(wire, max_attempts=1), tools=[get_weather])
    with pytest.raises((ProviderConnectionError, ProviderResponseError)):
        await agent.run("Weather?")
    (question, partial) = await store.history()
    assert isinstance(question, UserMessage) and isinstance(partial, AssistantMessage)
    assert (partial.content, partial.reasoning, partial.tool_calls) == ("", "", ())
    assert partial.stop.reason is StopReason.INTERRUPTED
    assert partial.stop.details["withheld_tool_calls"] == ["get_weather"]
    restarted = await store.agent(make_adapter(wire), tools=[get_weather])
    assert (await restarted.resume_point()).kind is ResumeKind.RETRY_RESPONSE
