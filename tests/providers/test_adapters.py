"""The adapters against the loopback server: streaming, wire format, options, stops, models.

Each test that takes ``protocol`` / ``adapter`` runs once per wire protocol (OpenAI Chat
Completions, Anthropic Messages, Ollama).
"""

from __future__ import annotations

import json

import pytest

from engine.errors import ErrorAction, ProviderResponseError
from engine.messages import (
    AssistantMessage,
    InternalMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from engine.model import ModelEvent, ModelEventKind, ModelOptions, ModelRequest, ToolSpec
from engine.providers import ModelInfo
from engine.providers.base import HTTPModel
from engine.stop import StopReason
from tests.support.provider_server import ProviderServer, ScriptedCall, Turn

WEATHER = ToolSpec(
    "get_weather",
    "Look up the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


async def collect(model: HTTPModel, request: ModelRequest) -> list[ModelEvent]:
    return [event async for event in model.stream(request)]


def ask(text: str = "hi", **kwargs) -> ModelRequest:
    return ModelRequest([UserMessage(content=text)], **kwargs)


async def test_streams_reasoning_text_and_tool_calls_in_order(server, adapter) -> None:
    server.script(
        Turn(
            reasoning="Think first.",
            text="Checking the weather.",
            tool_calls=[ScriptedCall("get_weather", {"city": "Paris"}, id="call_1")],
            chunk_size=4,
        )
    )
    events = await collect(adapter, ask(tools=[WEATHER]))
    kinds = [e.kind for e in events]
    first_text = kinds.index(ModelEventKind.TEXT)
    assert kinds.index(ModelEventKind.REASONING) < first_text
    assert first_text < kinds.index(ModelEventKind.TOOL_CALL_DELTA)
    assert kinds[-1] is ModelEventKind.COMPLETED
    assert len([k for k in kinds if k is ModelEventKind.TEXT]) == 6  # 21 characters by 4
    message = events[-1].response.message
    assert message.content == "Checking the weather."
    assert message.reasoning == "Think first."
    (call,) = message.tool_calls
    assert call.name == "get_weather" and call.arguments == {"city": "Paris"}
    assert events[-1].response.stop.reason is StopReason.TOOL_USE
    assert message.model == "loopback-echo"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (12, 34)


async def test_u2028_inside_deltas_is_not_a_line_break(server, adapter) -> None:
    # Models emit U+2028 inside JSON text; only CR/LF end an SSE line, only LF an NDJSON one.
    tricky = "one\u2028two\u2029three\x85four\x1cfive\x0bsix\x0cseven"
    server.script(
        Turn(
            text=tricky,
            reasoning=f"r{tricky}",
            tool_calls=[ScriptedCall("get_weather", {"city": f"c{tricky}"})],
            chunk_size=3,
        )
    )
    events = await collect(adapter, ask(tools=[WEATHER]))
    message = events[-1].response.message
    assert message.content == tricky
    assert message.reasoning == f"r{tricky}"
    assert message.tool_calls[0].arguments == {"city": f"c{tricky}"}


async def test_keepalives_between_events_are_ignored(server, adapter) -> None:
    server.script(Turn(text="kept alive", keepalive=True, chunk_size=2))
    events = await collect(adapter, ask())
    assert events[-1].response.message.content == "kept alive"


async def test_slow_drip_arrives_whole(server, make_adapter, protocol) -> None:
    # The server paces each event; the read timeout is per read, so a drip never times out.
    server.script(Turn(text="drip drip drip", chunk_size=3, delay=0.02))
    model = make_adapter(protocol, timeout=0.5)
    events = await collect(model, ask())
    assert events[-1].response.message.content == "drip drip drip"


async def test_auth_and_extra_headers(server, make_adapter, protocol) -> None:
    model = make_adapter(protocol, api_key="sk-abc", headers={"X-Trace": "t1"})
    await collect(model, ask())
    headers = server.chat_requests()[-1].headers
    assert headers["x-trace"] == "t1"
    if protocol == "anthropic":
        assert headers["x-api-key"] == "sk-abc"
        assert headers["anthropic-version"] == "2023-06-01"
        assert "authorization" not in headers
    else:
        assert headers["authorization"] == "Bearer sk-abc"


async def test_a_query_in_the_base_url_stays_after_the_path(server, make_adapter, protocol):
    # Appended as text, the path went inside the query ("…?api-version=1/chat/completions").
    from tests.providers.conftest import base_url

    model = make_adapter(protocol, base_url=base_url(server, protocol) + "?api-version=1")
    events = await collect(model, ask())
    assert "".join(e.delta for e in events) == "Hello from the loopback server."
    await model.list_models()
    chat, listing = server.requests[-2:]
    chat_path = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
    assert chat.path == chat_path.get(protocol, "/api/chat") + "?api-version=1"
    assert listing.path.split("?")[0] == {
        "openai": "/v1/models", "anthropic": "/v1/models", "ollama": "/api/tags"
    }[protocol]
    assert "api-version=1" in listing.path


async def test_no_key_sends_no_auth_header(server, make_adapter, protocol) -> None:
    model = make_adapter(protocol, api_key=None)
    await collect(model, ask())
    headers = server.chat_requests()[-1].headers
    assert "authorization" not in headers and "x-api-key" not in headers


async def test_request_options_override_the_constructor(server, make_adapter, protocol) -> None:
    model = make_adapter(protocol, max_tokens=100, temperature=0.5)
    await collect(model, ask())
    await collect(model, ask(options=ModelOptions(max_tokens=7, temperature=0.0)))
    first, second = (r.body for r in server.chat_requests())
    if protocol == "ollama":
        assert first["options"] == {"num_predict": 100, "temperature": 0.5}
        assert second["options"] == {"num_predict": 7, "temperature": 0.0}
    else:
        assert (first["max_tokens"], first["temperature"]) == (100, 0.5)
        assert (second["max_tokens"], second["temperature"]) == (7, 0.0)
    assert first["stream"] is True and first["model"] == "loopback-echo"


async def test_reasoning_effort_per_protocol(server, make_adapter, protocol) -> None:
    model = make_adapter(protocol, reasoning_effort="high", temperature=0.3)
    await collect(model, ask())
    body = server.chat_requests()[-1].body
    if protocol == "openai":
        assert body["reasoning_effort"] == "high"
    elif protocol == "anthropic":
        # Thinking: a budget under max_tokens, and no temperature (the API forbids it).
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 16384}
        assert body["max_tokens"] > 16384 and "temperature" not in body
    else:
        assert body["think"] is True


async def test_openai_asks_for_usage_and_official_api_uses_max_completion_tokens() -> None:
    from engine.providers import OpenAIChatModel

    official = OpenAIChatModel("gpt-4o", max_tokens=10)
    local = OpenAIChatModel("qwen", base_url="http://127.0.0.1:1/v1", max_tokens=10)
    try:
        assert official._body(ask())["max_completion_tokens"] == 10
        assert "max_tokens" not in official._body(ask())
        assert local._body(ask())["max_tokens"] == 10
        assert official._body(ask())["stream_options"] == {"include_usage": True}
        assert official.base_url == "https://api.openai.com/v1"
    finally:
        await official.aclose()
        await local.aclose()


def test_default_base_urls_follow_the_sdks() -> None:
    from engine.providers import AnthropicModel, OllamaModel, OpenAIChatModel

    assert OpenAIChatModel.default_base_url == "https://api.openai.com/v1"
    assert AnthropicModel.default_base_url == "https://api.anthropic.com"
    assert OllamaModel.default_base_url == "http://localhost:11434"


# ---------------------------------------------------------------------------- history


def history() -> list:
    call = ToolCall("call_1", "get_weather", {"city": "Oslo"})
    return [
        SystemMessage(content="Be brief."),
        UserMessage(content="Weather in Oslo?"),
        AssistantMessage(content="Let me look.", tool_calls=(call,)),
        ToolMessage(tool_call_id="call_1", name="get_weather", content="boom", success=False),
        InternalMessage(content="You were cut off; redo it.", tag="resume:retry_response"),
    ]


async def test_openai_history_on_the_wire(server, make_adapter) -> None:
    model = make_adapter("openai")
    await collect(model, ModelRequest(history(), tools=[WEATHER]))
    body = server.chat_requests()[-1].body
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "boom"},
        {"role": "user", "content": "You were cut off; redo it."},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Look up the weather.",
                "parameters": dict(WEATHER.parameters),
            },
        }
    ]


async def test_openai_tool_call_without_text_sends_empty_content(server, make_adapter) -> None:
    # llama.cpp's Python server answers 500 to "content": null (compat/llamacpp-tool-history-
    # null.*, test_wire_samples); "" is what it and OpenAI accept.
    call = ToolCall("call_1", "get_weather", {"city": "Oslo"})
    model = make_adapter("openai")
    messages = [
        UserMessage(content="Weather in Oslo?"),
        AssistantMessage(content="", tool_calls=(call,)),
        ToolMessage(tool_call_id="call_1", name="get_weather", content="Sunny."),
    ]
    await collect(model, ModelRequest(messages, tools=[WEATHER]))
    assistant = server.chat_requests()[-1].body["messages"][1]
    assert assistant["role"] == "assistant" and assistant["content"] == ""
    assert assistant["tool_calls"][0]["function"]["name"] == "get_weather"


async def test_anthropic_history_merges_user_turns(server, make_adapter) -> None:
    model = make_adapter("anthropic")
    await collect(model, ModelRequest(history(), tools=[WEATHER]))
    body = server.chat_requests()[-1].body
    assert body["system"] == "Be brief."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "get_weather",
                    "input": {"city": "Oslo"},
                },
            ],
        },
        {
            # The tool result and the internal message go out as ONE user turn, result first.
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": "boom",
                    "is_error": True,
                },
                {"type": "text", "text": "You were cut off; redo it."},
            ],
        },
    ]
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Look up the weather.",
            "input_schema": dict(WEATHER.parameters),
        }
    ]


async def test_anthropic_thinking_goes_back_signed_and_unsigned_is_dropped(
    server, make_adapter
) -> None:
    server.script(Turn(reasoning="Quietly.", text="Answer."))
    model = make_adapter("anthropic")
    events = await collect(model, ask())
    signed = events[-1].response.message
    unsigned = AssistantMessage(content="", reasoning="from another provider")
    await collect(
        model,
        ModelRequest(
            [
                UserMessage(content="one"),
                signed,
                UserMessage(content="two"),
                unsigned,  # no signature, empty text: nothing to send, so the turn drops out
                UserMessage(content="three"),
            ]
        ),
    )
    messages = server.chat_requests()[-1].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    thinking, text = messages[1]["content"]
    assert thinking["type"] == "thinking" and thinking["thinking"] == "Quietly."
    assert thinking["signature"] == signed.provider_data["anthropic"]["thinking"][0]["signature"]
    assert text == {"type": "text", "text": "Answer."}
    assert messages[2]["content"] == [
        {"type": "text", "text": "two"},
        {"type": "text", "text": "three"},
    ]


async def test_ollama_history_on_the_wire(server, make_adapter) -> None:
    model = make_adapter("ollama")
    await collect(model, ModelRequest(history(), tools=[WEATHER]))
    body = server.chat_requests()[-1].body
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}],
        },
        {"role": "tool", "content": "boom", "tool_name": "get_weather"},
        {"role": "user", "content": "You were cut off; redo it."},
    ]
    assert body["tools"][0]["function"]["name"] == "get_weather"


# ---------------------------------------------------------------------------- stops

STOPS = [
    ("openai", "stop", StopReason.END_TURN),
    ("openai", "length", StopReason.MAX_OUTPUT),
    ("openai", "content_filter", StopReason.REFUSAL),
    ("openai", "something_new", StopReason.OTHER),
    ("anthropic", "end_turn", StopReason.END_TURN),
    ("anthropic", "stop_sequence", StopReason.END_TURN),
    ("anthropic", "max_tokens", StopReason.MAX_OUTPUT),
    ("anthropic", "pause_turn", StopReason.PAUSED),
    ("anthropic", "refusal", StopReason.REFUSAL),
    ("anthropic", "model_context_window_exceeded", StopReason.CONTEXT_FULL),
    ("anthropic", "something_new", StopReason.OTHER),
    ("ollama", "stop", StopReason.END_TURN),
    ("ollama", "length", StopReason.MAX_OUTPUT),
    ("ollama", "unload", StopReason.OTHER),
]


@pytest.mark.parametrize(("protocol", "raw", "reason"), STOPS)
async def test_stop_values_map_and_keep_the_raw_value(
    server, make_adapter, protocol, raw, reason
) -> None:
    server.script(Turn(text="Some text", raw_stop=raw))
    events = await collect(make_adapter(protocol), ask())
    response = events[-1].response
    assert response.stop.reason is reason
    assert response.stop.raw == raw
    assert response.message.content == "Some text"
    if reason in (StopReason.END_TURN, StopReason.TOOL_USE):
        assert response.message.stop is None
    else:
        assert response.message.stop == response.stop
        assert response.stop.message  # a sentence for a person


@pytest.mark.parametrize(
    ("protocol", "raw"), [("openai", "length"), ("anthropic", "max_tokens"), ("ollama", "length")]
)
async def test_abnormal_stop_withholds_tool_calls(server, make_adapter, protocol, raw) -> None:
    server.script(
        Turn(
            text="Partial", tool_calls=[ScriptedCall("get_weather", {"city": "Rome"})], raw_stop=raw
        )
    )
    events = await collect(make_adapter(protocol), ask(tools=[WEATHER]))
    message = events[-1].response.message
    assert message.tool_calls == ()
    assert message.stop.reason is StopReason.MAX_OUTPUT
    assert message.stop.details["withheld_tool_calls"] == ["get_weather"]


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_tool_arguments_cut_under_a_normal_stop_name_the_output_limit(
    server, make_adapter, protocol
) -> None:
    # llama.cpp cuts a forced call at max_tokens and still says "tool_calls" with `{"c`
    # (the recorded compat/llamacpp-forced-tool-cut.sse, test_wire_samples).
    server.script(Turn(tool_calls=[ScriptedCall("get_weather", '{"c')]))
    with pytest.raises(
        ProviderResponseError, match="most likely because the answer reached the output limit"
    ) as info:
        await collect(make_adapter(protocol, max_attempts=1), ask(tools=[WEATHER]))
    assert "'get_weather'" in str(info.value) and info.value.action is ErrorAction.CHECK_MODEL


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_tool_arguments_with_a_raw_newline_in_a_string_are_read(
    server, make_adapter, protocol
) -> None:
    # llama.cpp's JSON grammar lets a model write control characters unescaped in a string.
    server.script(Turn(tool_calls=[ScriptedCall("get_weather", '{"city":"Oslo\n\tNorway"}')]))
    events = await collect(make_adapter(protocol, max_attempts=1), ask(tools=[WEATHER]))
    (call,) = events[-1].response.message.tool_calls
    assert call.arguments == {"city": "Oslo\n\tNorway"}


async def test_tool_arguments_that_are_not_an_object_say_so(server, make_adapter) -> None:
    server.script(Turn(tool_calls=[ScriptedCall("get_weather", '["Rome"]')]))
    with pytest.raises(ProviderResponseError, match="not a whole JSON object") as info:
        await collect(make_adapter("openai", max_attempts=1), ask(tools=[WEATHER]))
    assert "output limit" not in str(info.value)


async def test_openai_refusal_delta_is_a_refusal(server, make_adapter) -> None:
    server.script(Turn(text="I can't help with that.", stop="refusal"))
    events = await collect(make_adapter("openai"), ask())
    message = events[-1].response.message
    assert message.content == "I can't help with that."
    assert message.stop.reason is StopReason.REFUSAL and message.stop.raw == "refusal"


async def test_context_length_error_becomes_a_context_full_step(server, adapter) -> None:
    # DESIGN: a recognised context-length response is stored as a message, not raised.
    server.script(Turn(stop="context_full"))
    events = await collect(adapter, ask())
    assert [e.kind for e in events] == [ModelEventKind.COMPLETED]
    message = events[0].response.message
    assert message.content == ""
    assert message.stop.reason is StopReason.CONTEXT_FULL
    assert "context window" in message.stop.message
    assert len(server.chat_requests()) == 1  # never retried


async def test_model_returns_the_tool_call_ids_it_was_given(server, make_adapter) -> None:
    server.script(Turn(tool_calls=[ScriptedCall("get_weather", {"city": "Lima"}, id="call_xyz")]))
    events = await collect(make_adapter("openai"), ask(tools=[WEATHER]))
    assert events[-1].response.message.tool_calls[0].id == "call_xyz"


async def test_ollama_makes_up_distinct_tool_call_ids(server, make_adapter) -> None:
    server.script(Turn(tool_calls=[("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})]))
    events = await collect(make_adapter("ollama"), ask(tools=[WEATHER]))
    calls = events[-1].response.message.tool_calls
    assert [c.arguments["city"] for c in calls] == ["A", "B"]
    assert len({c.id for c in calls}) == 2 and all(c.id for c in calls)


# ---------------------------------------------------------------------------- model lists


async def test_list_models(server: ProviderServer, adapter, protocol) -> None:
    models = await adapter.list_models()
    assert all(isinstance(m, ModelInfo) for m in models)
    ids = [m.id for m in models]
    if protocol == "ollama":
        assert ids == ["loopback-echo:latest", "loopback-think:latest"]
        assert server.requests[-1].path == "/api/tags"
    elif protocol == "anthropic":
        assert ids == ["loopback-echo", "loopback-think"]
        assert models[0].display_name == "Loopback Echo"
        assert server.requests[-1].path.startswith("/v1/models")
    else:
        assert ids == ["loopback-echo", "loopback-think"]
        assert server.requests[-1].path == "/v1/models"


async def test_name_and_repr(adapter) -> None:
    assert adapter.name == "loopback-echo"
    assert repr(adapter).startswith(type(adapter).__name__ + "(model='loopback-echo'")


async def test_aclose_twice_is_safe(make_adapter, protocol) -> None:
    model = make_adapter(protocol)
    await model.aclose()
    await model.aclose()


async def test_openai_server_that_ignores_stream_answers_whole(server, make_adapter) -> None:
    # Some compatible servers answer "stream": true with one chat.completion JSON body.
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Whole at once.",
                    "tool_calls": [
                        {
                            "id": "call_9",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Kyiv"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    server.script(Turn(body=json.dumps(completion).encode(), content_type="application/json"))
    events = await collect(make_adapter("openai"), ask(tools=[WEATHER]))
    message = events[-1].response.message
    assert message.content == "Whole at once."
    assert [(c.id, c.arguments) for c in message.tool_calls] == [("call_9", {"city": "Kyiv"})]
    assert events[-1].response.stop.reason is StopReason.TOOL_USE
    assert message.usage.output_tokens == 4


async def test_wrong_content_type_is_a_clear_error(server, make_adapter) -> None:
    server.script(Turn(body=b"<html>login</html>", content_type="text/html"), Turn(text="x"))
    from engine.errors import ErrorAction, ProviderError

    with pytest.raises(ProviderError) as info:
        await collect(make_adapter("anthropic", max_attempts=1), ask())
    assert str(info.value).startswith("Anthropic answered with a web page")
    assert "Check the base URL" in str(info.value)
    assert "Settings" not in str(info.value), "the engine names no part of a host"
    assert info.value.action is ErrorAction.CHECK_CONNECTION
