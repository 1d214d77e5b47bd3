"""A whole JSON body that is not the object its API sends, through each adapter's whole-body
path: the answer of a server that ignores ``stream`` (every adapter), the unstreamed repeat
after an empty stream (OpenAI-compatible servers) and the model list (every adapter).

Every API answers with a JSON object. A server (or a proxy in between) that answers with a
list, a number or a string, or with an object whose parts are not the objects they must be,
gets the bad-JSON error for a body (`ProviderResponseError`, ``provider.bad_json.body``), in
English and Chinese. Before, the OpenAI adapter raised ``AttributeError`` from its parser,
the Anthropic adapter read the body as an empty stream and said the connection ended early
(and retried it), Ollama's called the body a stream event, and every model list raised
``AttributeError`` on an entry that is not an object.
"""

from __future__ import annotations

import json

import pytest

from engine.errors import ProviderResponseError
from engine.messages import UserMessage
from engine.model import ModelEvent, ModelRequest, ToolSpec
from engine.providers.base import HTTPModel
from engine.stop import StopReason
from tests.support.language import english_words
from tests.support.provider_server import Turn

NOT_OBJECTS = [b"[1, 2]", b"42", b'"an answer"', b"null", b"true"]
JSON = "application/json"

#: chat.completion bodies whose parts are the wrong kind of JSON
OPENAI_BAD_PARTS = [
    {"choices": "x"},
    {"choices": [1]},
    {"choices": [{"message": "hi"}]},
    {"choices": [{"message": {"content": ["a", "list"]}}]},
    {"choices": [{"message": {"tool_calls": {"id": "call_1"}}}]},
    {"choices": [{"message": {"tool_calls": ["call_1"]}}]},
    {"choices": [{"message": {"tool_calls": [{"id": "c", "function": "f"}]}}]},
    {"choices": [{"message": {"content": "hi"}}], "usage": [3, 4]},
]

#: Messages API bodies whose parts are the wrong kind of JSON, or that are no message
ANTHROPIC_BAD_PARTS = [
    {"type": "message", "content": "hi", "stop_reason": "end_turn"},
    {"type": "message", "content": ["hi"], "stop_reason": "end_turn"},
    {"type": "message", "content": [{"type": "text", "text": 5}], "stop_reason": "end_turn"},
    {"type": "message", "content": [], "usage": "many", "stop_reason": "end_turn"},
    {"type": "completion", "completion": "hi"},
]

WEATHER = ToolSpec(
    "get_weather",
    "Look up the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def _ask(**kwargs) -> ModelRequest:
    return ModelRequest([UserMessage(content="hi")], **kwargs)


async def _collect(model: HTTPModel, request: ModelRequest | None = None) -> list[ModelEvent]:
    return [event async for event in model.stream(request or _ask())]


def _is_the_bad_body_error(error: ProviderResponseError, provider: str) -> None:
    assert error.key == "provider.bad_json.body", error.key
    assert "sent an answer that is not the JSON its API sends" in str(error), str(error)
    assert not error.retryable
    chinese = error.sentence("zh_CN")
    assert "不是其 API 应有的 JSON" in chinese, chinese
    assert english_words(chinese, provider, "JSON", "API") == [], chinese


# ---------------------------------------------------------------------------- answers


@pytest.mark.parametrize("body", NOT_OBJECTS)
async def test_a_whole_answer_that_is_not_an_object_is_a_bad_body(
    server, make_adapter, protocol, body
) -> None:
    server.script(Turn(body=body, content_type=JSON), Turn(text="never asked"))
    model = make_adapter(protocol, max_attempts=2)
    with pytest.raises(ProviderResponseError) as info:
        await _collect(model)
    _is_the_bad_body_error(info.value, model.provider_name)
    assert len(server.chat_requests()) == 1, "a body that is not the API's is not asked again"


@pytest.mark.parametrize("body", OPENAI_BAD_PARTS, ids=json.dumps)
async def test_an_openai_whole_answer_with_parts_of_the_wrong_kind_is_a_bad_body(
    server, make_adapter, body
) -> None:
    server.script(Turn(body=json.dumps(body).encode(), content_type=JSON))
    model = make_adapter("openai", max_attempts=1)
    with pytest.raises(ProviderResponseError) as info:
        await _collect(model, _ask(tools=[WEATHER]))
    _is_the_bad_body_error(info.value, model.provider_name)


@pytest.mark.parametrize("body", NOT_OBJECTS[:3])
async def test_an_unstreamed_repeat_that_is_not_an_object_is_a_bad_body(
    server, make_adapter, body
) -> None:
    # After an empty stream, the same request is sent again with stream=false.
    server.script(Turn(body=b""), Turn(body=body, content_type=JSON))
    model = make_adapter("openai", max_attempts=1)
    with pytest.raises(ProviderResponseError) as info:
        await _collect(model)
    _is_the_bad_body_error(info.value, model.provider_name)
    assert [r.body["stream"] for r in server.chat_requests()] == [True, False]


@pytest.mark.parametrize("body", ANTHROPIC_BAD_PARTS, ids=json.dumps)
async def test_an_anthropic_whole_answer_that_is_no_message_is_a_bad_body(
    server, make_adapter, body
) -> None:
    server.script(Turn(body=json.dumps(body).encode(), content_type=JSON))
    model = make_adapter("anthropic", max_attempts=1)
    with pytest.raises(ProviderResponseError) as info:
        await _collect(model)
    _is_the_bad_body_error(info.value, model.provider_name)


async def test_an_anthropic_server_that_ignores_stream_answers_whole(server, make_adapter) -> None:
    # The Messages API's unstreamed answer, where a stream was asked for.
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "loopback-echo",
        "content": [
            {"type": "thinking", "thinking": "Weather, then.", "signature": "sig-1"},
            {"type": "text", "text": "Whole at once."},
            {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Kyiv"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    server.script(Turn(body=json.dumps(message).encode(), content_type=JSON))
    events = await _collect(make_adapter("anthropic"), _ask(tools=[WEATHER]))
    response = events[-1].response
    assert response.message.content == "Whole at once."
    assert response.message.reasoning == "Weather, then."
    assert [(c.id, c.name, c.arguments) for c in response.message.tool_calls] == [
        ("toolu_9", "get_weather", {"city": "Kyiv"})
    ]
    assert response.stop.reason is StopReason.TOOL_USE
    assert response.message.usage.input_tokens == 3 and response.message.usage.output_tokens == 4
    thinking = response.message.provider_data["anthropic"]["thinking"]
    assert thinking == [{"type": "thinking", "thinking": "Weather, then.", "signature": "sig-1"}]


async def test_an_anthropic_whole_error_is_the_servers_error(server, make_adapter) -> None:
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "No way."}}
    server.script(Turn(body=json.dumps(error).encode(), content_type=JSON))
    with pytest.raises(ProviderResponseError) as info:
        await _collect(make_adapter("anthropic", max_attempts=1))
    assert info.value.key == "provider.error_in_stream" and "No way" in str(info.value)


async def test_an_ollama_server_that_ignores_stream_answers_whole(server, make_adapter) -> None:
    # /api/chat's unstreamed answer: one object, the stream's last line with all the text.
    answer = {
        "model": "loopback-echo",
        "message": {"role": "assistant", "content": "Whole at once."},
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 3,
        "eval_count": 4,
    }
    server.script(Turn(body=json.dumps(answer).encode(), content_type=JSON))
    events = await _collect(make_adapter("ollama"))
    assert events[-1].response.message.content == "Whole at once."
    assert events[-1].response.message.usage.output_tokens == 4


# ---------------------------------------------------------------------------- model lists


@pytest.mark.parametrize("body", NOT_OBJECTS[:3])
async def test_a_model_list_that_is_not_an_object_is_a_bad_body(
    server, make_adapter, protocol, body
) -> None:
    server.models_turn = Turn(body=body, content_type=JSON)
    model = make_adapter(protocol, max_attempts=1)
    with pytest.raises(ProviderResponseError) as info:
        await model.list_models()
    _is_the_bad_body_error(info.value, model.provider_name)


async def test_entries_of_a_model_list_that_are_not_objects_are_skipped(
    server, make_adapter, protocol
) -> None:
    field = "models" if protocol == "ollama" else "data"
    entry = {"name": "good:latest"} if protocol == "ollama" else {"id": "good"}
    body = {field: [1, "x", None, ["id"], entry]}
    server.models_turn = Turn(body=json.dumps(body).encode(), content_type=JSON)
    models = await make_adapter(protocol).list_models()
    assert [m.id for m in models] == ["good:latest" if protocol == "ollama" else "good"]


async def test_a_model_list_whose_entries_are_not_a_list_is_empty(
    server, make_adapter, protocol
) -> None:
    field = "models" if protocol == "ollama" else "data"
    server.models_turn = Turn(body=json.dumps({field: "many"}).encode(), content_type=JSON)
    assert await make_adapter(protocol).list_models() == []
