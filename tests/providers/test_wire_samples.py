"""Every recorded stream in tests/wire_samples/, served byte for byte by the loopback server.

Each test asserts what SOURCES.md says its sample shows: the assembled text, reasoning, tool
calls, stop (normalised and raw) and usage. The samples are never edited.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from engine.errors import ErrorAction, ProviderResponseError, ProviderStatusError
from engine.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from engine.model import (
    ModelEvent,
    ModelEventKind,
    ModelOptions,
    ModelRequest,
    ModelResponse,
    ToolSpec,
)
from engine.providers.base import HTTPModel
from engine.stop import StopReason
from tests.support.provider_server import WIRE_SAMPLES, ProviderServer, Turn


async def replay(
    server: ProviderServer, make_adapter: Callable[..., HTTPModel], protocol: str, sample: str
) -> tuple[list[ModelEvent], ModelResponse]:
    server.script(Turn(sample=sample))
    model = make_adapter(protocol, max_attempts=1)
    events = [e async for e in model.stream(ModelRequest([UserMessage(content="hi")]))]
    assert events[-1].kind is ModelEventKind.COMPLETED
    assert all(e.kind is not ModelEventKind.COMPLETED for e in events[:-1])
    response = events[-1].response
    assert response is not None
    # The deltas add up to the stored message.
    text = "".join(e.delta for e in events if e.kind is ModelEventKind.TEXT)
    reasoning = "".join(e.delta for e in events if e.kind is ModelEventKind.REASONING)
    assert text == response.message.content
    assert reasoning == response.message.reasoning
    return events, response


def test_every_sample_has_a_test() -> None:
    samples = {
        p.relative_to(WIRE_SAMPLES).as_posix()
        for p in WIRE_SAMPLES.rglob("*")
        if p.suffix in (".sse", ".ndjson") or p.name.endswith(".response.json")
    }
    source = Path(__file__).read_text(encoding="utf-8")
    assert samples, "no wire samples found"
    assert sorted(s for s in samples if f'"{s}"' not in source) == []


# ---------------------------------------------------------------------------- OpenAI


async def test_openai_text_without_usage(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "openai", "openai/text-no-usage.sse")
    assert response.message.content.startswith("Hi there! How can I help today?")
    assert response.stop.reason is StopReason.END_TURN and response.stop.raw == "stop"
    assert response.message.stop is None
    assert response.usage is None  # no stream_options in that recording


async def test_openai_text_with_usage_chunk(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "openai", "openai/text-with-usage.sse")
    assert response.message.content == "The capital of Mexico is Mexico City."
    assert response.stop.reason is StopReason.END_TURN
    assert (response.usage.input_tokens, response.usage.output_tokens) == (14, 8)


async def test_openai_single_tool_call_from_fragments(server, make_adapter) -> None:
    events, response = await replay(server, make_adapter, "openai", "openai/tool-call-single.sse")
    (call,) = response.message.tool_calls
    assert (call.id, call.name, call.arguments) == (
        "call_ZR5UUuTt3pf61kjwAJIYdVMj",
        "get_capital",
        {"country": "UK"},
    )
    fragments = [e for e in events if e.kind is ModelEventKind.TOOL_CALL_DELTA]
    assert len(fragments) == 6  # the header (id, name, "") and 5 argument fragments
    assert response.message.content == ""
    assert response.stop.reason is StopReason.TOOL_USE and response.stop.raw == "tool_calls"


async def test_openai_parallel_tool_calls(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "openai", "openai/tool-calls-parallel.sse")
    calls = response.message.tool_calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "Mexico City"}),
        ("get_product_name", {}),
    ]
    assert response.stop.reason is StopReason.TOOL_USE
    assert response.usage.input_tokens == 417


async def test_openai_length_with_text(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "openai", "openai/length-with-text.sse")
    assert response.message.content == "Hello! How can I"
    assert response.message.stop.reason is StopReason.MAX_OUTPUT
    assert response.message.stop.raw == "length"
    assert response.usage.output_tokens == 5


async def test_openai_length_spent_on_reasoning(server, make_adapter) -> None:
    _, response = await replay(
        server, make_adapter, "openai", "openai/length-reasoning-no-content.sse"
    )
    assert response.message.content == ""
    assert response.message.stop.reason is StopReason.MAX_OUTPUT
    assert response.usage.reasoning_tokens == 100


async def test_openai_refusal_deltas(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "openai", "openai/refusal.sse")
    assert response.message.content == "I'm very sorry, but I can't assist with that request."
    stop = response.message.stop
    assert stop.reason is StopReason.REFUSAL and stop.raw == "refusal"
    assert stop.details["finish_reason"] == "stop"


# ---------------------------------------------------------------------------- Anthropic


async def test_anthropic_text_with_ping(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "anthropic", "anthropic/text.sse")
    assert response.message.content == "Hello"
    assert response.stop.reason is StopReason.END_TURN and response.stop.raw == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 4)


async def test_anthropic_text_then_two_tools(server, make_adapter) -> None:
    _, response = await replay(
        server, make_adapter, "anthropic", "anthropic/tool-use-text-then-two-tools.sse"
    )
    assert response.message.content.startswith("Certainly! I can help you with that")
    assert [(c.name, c.arguments) for c in response.message.tool_calls] == [
        ("get_weather", {"location": "San Francisco, CA", "unit": "celsius"}),
        ("get_time", {"timezone": "America/Los_Angeles"}),
    ]
    assert response.stop.reason is StopReason.TOOL_USE and response.stop.raw == "tool_use"
    assert response.usage.output_tokens == 153


async def test_anthropic_tool_with_empty_input(server, make_adapter) -> None:
    _, response = await replay(
        server, make_adapter, "anthropic", "anthropic/tool-use-empty-input.sse"
    )
    (call,) = response.message.tool_calls
    assert call.name == "pelican_name_generator" and call.arguments == {}
    assert response.stop.reason is StopReason.TOOL_USE


async def test_anthropic_thinking_keeps_its_signature(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "anthropic", "anthropic/thinking.sse")
    message = response.message
    assert message.reasoning.startswith("The user wants two names for a pet pelican")
    assert "Pelé" in message.content  # non-ASCII text survives
    (block,) = message.provider_data["anthropic"]["thinking"]
    assert block["type"] == "thinking" and block["thinking"] == message.reasoning
    assert block["signature"].startswith("EuYDCmMIDBgCKkC05Zda4P")
    assert response.stop.reason is StopReason.END_TURN


async def test_anthropic_max_tokens(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "anthropic", "anthropic/max-tokens.sse")
    assert response.message.content.startswith("Here are all 50 U.S. states")
    assert response.message.stop.reason is StopReason.MAX_OUTPUT
    assert response.message.stop.raw == "max_tokens"
    assert response.usage.output_tokens == 50


async def test_anthropic_stop_sequence(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "anthropic", "anthropic/stop-sequence.sse")
    assert "def pelican():" in response.message.content
    assert response.stop.reason is StopReason.END_TURN and response.stop.raw == "stop_sequence"
    assert response.stop.details["stop_sequence"] == "```"
    assert response.message.stop is None


# ---------------------------------------------------------------------------- Ollama


async def test_ollama_text(server, make_adapter) -> None:
    events, response = await replay(server, make_adapter, "ollama", "ollama/chat-text.ndjson")
    assert response.message.content.startswith("Why did the OpenTelemetry agent go to therapy?")
    assert len([e for e in events if e.kind is ModelEventKind.TEXT]) == 49
    assert response.stop.reason is StopReason.END_TURN and response.stop.raw == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (17, 50)


async def test_ollama_thinking(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "ollama", "ollama/chat-thinking.ndjson")
    assert response.message.reasoning.startswith("Here's")
    assert response.message.content == "1\n2\n3\n4\n5"
    assert response.stop.reason is StopReason.END_TURN
    assert response.usage.output_tokens == 889


# ---------------------------------------------------------------------------- compatible servers


async def test_vllm_length_with_content_in_the_finish_chunk(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "openai", "compat/vllm-length.sse")
    assert response.message.content.endswith("supervisor\n<")  # "<" rides with the finish
    assert response.message.stop.reason is StopReason.MAX_OUTPUT
    assert response.usage is None


async def test_ollama_v1_whole_tool_call_after_reasoning(server, make_adapter) -> None:
    _, response = await replay(server, make_adapter, "openai", "compat/ollama-v1-tool-call.sse")
    assert response.message.reasoning  # `delta.reasoning`
    (call,) = response.message.tool_calls
    assert call.name == "weather"
    assert call.arguments == {"latitude": "52.5200", "longitude": "13.4050"}
    assert response.stop.reason is StopReason.TOOL_USE


async def test_openrouter_keepalives_and_error_after_length(server, make_adapter) -> None:
    # The error chunk only restates the finished "length"; the stop stays max_output.
    _, response = await replay(
        server, make_adapter, "openai", "compat/openrouter-keepalive-length-error.sse"
    )
    assert response.message.reasoning
    stop = response.message.stop
    assert stop.reason is StopReason.MAX_OUTPUT and stop.raw == "length"
    assert stop.details["provider_error"] == "Token limit reached"
    assert response.usage.output_tokens == 10


async def test_groq_error_event_after_reasoning(server, make_adapter) -> None:
    server.script(Turn(sample="compat/groq-error-event.sse"))
    model = make_adapter("openai", max_attempts=1)
    seen = []
    with pytest.raises(ProviderResponseError, match="Tool call validation failed") as info:
        async for event in model.stream(ModelRequest([UserMessage(content="hi")])):
            seen.append(event)
    assert seen and all(e.kind is ModelEventKind.REASONING for e in seen)
    assert info.value.action is ErrorAction.RESUME  # the host offers Resume in its words


async def test_llamabox_bare_error_line_midstream(server, make_adapter) -> None:
    server.script(Turn(sample="compat/llamabox-error-line-midstream.sse"))
    model = make_adapter("openai", max_attempts=1)
    kinds = set()
    with pytest.raises(ProviderResponseError, match="failed to decode"):
        async for event in model.stream(ModelRequest([UserMessage(content="hi")])):
            kinds.add(event.kind)
    assert kinds == {ModelEventKind.REASONING, ModelEventKind.TEXT}


# ---------------------------------------------------------------------------- llama.cpp
# Recorded from llama-cpp-python's own server (SOURCES.md). Each request body was built by
# this adapter and is checked against what the adapter sends now; a .response.json is a
# whole (non-streamed) body, served with the status it was recorded with.


def recorded_body(name: str) -> dict[str, Any]:
    return json.loads((WIRE_SAMPLES / f"compat/llamacpp-{name}.request.json").read_bytes())


def as_request(body: Mapping[str, Any]) -> ModelRequest:
    """The conversation a recorded body carries, as the engine holds it."""
    messages: list[Message] = []
    for m in body["messages"]:
        if m["role"] == "user":
            messages.append(UserMessage(content=m["content"]))
        elif m["role"] == "assistant":
            calls = tuple(
                ToolCall(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in m["tool_calls"]
            )
            messages.append(AssistantMessage(content=m["content"] or "", tool_calls=calls))
        else:
            messages.append(
                ToolMessage(
                    tool_call_id=m["tool_call_id"], name="get_weather", content=m["content"]
                )
            )
    tools = [
        ToolSpec(f["name"], f["description"], f["parameters"])
        for f in (t["function"] for t in body.get("tools") or ())
    ]
    extra = {"tool_choice": body["tool_choice"]} if "tool_choice" in body else {}
    return ModelRequest(messages, tools, ModelOptions(max_tokens=body["max_tokens"], extra=extra))


async def test_llamacpp_refuses_null_content_and_accepts_empty(server, make_adapter) -> None:
    refused = recorded_body("tool-history-null")
    accepted = recorded_body("tool-history")
    assert refused["messages"][1]["content"] is None and accepted["messages"][1]["content"] == ""
    assert {**refused, "messages": accepted["messages"]} == accepted  # the only difference

    # The server's answer to null: a 500 whose message is a validation dump.
    server.script(Turn(status=500, sample="compat/llamacpp-tool-history-null.response.json"))
    model = make_adapter("openai", model="tiny", max_attempts=1)
    with pytest.raises(ProviderStatusError) as info:
        async for _ in model.stream(as_request(accepted)):
            pass
    # The server's 1,829-byte dump is quoted short (QUOTE_LIMIT), never whole.
    assert info.value.status == 500 and "validation errors" in str(info.value)
    assert len(str(info.value)) < 500

    # What the adapter sends for that history is the body the server answered 200 to.
    server.script(Turn(sample="compat/llamacpp-tool-history.sse"))
    events = [e async for e in model.stream(as_request(accepted))]
    assert server.chat_requests()[-1].body == accepted
    response = events[-1].response
    assert response.message.content == "V\rLhm,"
    assert response.message.stop.reason is StopReason.MAX_OUTPUT  # max_tokens 8
    assert response.usage is None  # it ignores stream_options


async def test_llamacpp_context_overflow_empty_stream_is_context_full(server, make_adapter) -> None:
    server.script(
        Turn(sample="compat/llamacpp-context-stream.sse"),
        Turn(status=400, sample="compat/llamacpp-context-nostream.response.json"),
    )
    model = make_adapter("openai", model="tiny")  # retries allowed: none is made
    events = [e async for e in model.stream(as_request(recorded_body("context-stream")))]
    (event,) = events
    stop = event.response.message.stop
    assert stop.reason is StopReason.CONTEXT_FULL and stop.raw == "context_length_exceeded"
    assert "maximum context length is 256 tokens" in stop.message
    assert "Start a new conversation" in stop.message
    first, again = server.chat_requests()
    assert first.body == recorded_body("context-stream")
    assert again.body == recorded_body("context-nostream")  # stream false, no stream_options


async def test_llamacpp_auto_tool_choice_empty_stream_then_whole_answer(
    server, make_adapter
) -> None:
    # chatml-function-calling refuses tool_choice "auto" while streaming (an empty 200) but
    # answers the same request unstreamed.
    server.script(
        Turn(sample="compat/llamacpp-auto-tool-stream.sse"),
        Turn(sample="compat/llamacpp-auto-tool-nostream.response.json"),
    )
    model = make_adapter("openai", model="tiny")
    events = [e async for e in model.stream(as_request(recorded_body("auto-tool-stream")))]
    response = events[-1].response
    (call,) = response.message.tool_calls
    assert call.name == "get_weather" and call.id.startswith("call__0_get_weather_cmpl-")
    assert list(call.arguments) == ["city"] and call.arguments["city"].startswith("再lZYhn")
    assert response.stop.reason is StopReason.TOOL_USE
    assert response.usage.output_tokens == 138
    assert [r.body for r in server.chat_requests()] == [
        recorded_body("auto-tool-stream"),
        recorded_body("auto-tool-nostream"),
    ]


async def test_llamacpp_forced_tool_call_cut_by_the_output_limit(server, make_adapter) -> None:
    # tool_choice names the function and max_tokens is 4: the arguments stop at `{ "c`
    # while finish_reason still says "tool_calls".
    server.script(Turn(sample="compat/llamacpp-forced-tool-cut.sse"))
    model = make_adapter("openai", model="tiny", max_attempts=1)
    seen = []
    with pytest.raises(ProviderResponseError, match="reached the output limit") as info:
        async for event in model.stream(as_request(recorded_body("forced-tool-cut"))):
            seen.append(event)
    assert "'get_weather'" in str(info.value) and info.value.action is ErrorAction.CHECK_MODEL
    arguments = "".join(e.delta for e in seen if e.kind is ModelEventKind.TOOL_CALL_DELTA)
    assert arguments == '{ "c'
    assert server.chat_requests()[-1].body == recorded_body("forced-tool-cut")
