"""Our request bodies against the ones the official SDKs sent in the recorded samples.

For each recorded ``*.request.json`` with a plain conversation, the same conversation is
sent through our adapter to the loopback server, and the body it received is compared with
the recording: the same fields with the same values, where the only differences allowed are
named here (a string content versus one text block, SDK-only defaults we do not send).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from engine.messages import UserMessage
from engine.model import ModelRequest, ToolSpec
from engine.providers.base import HTTPModel
from tests.support.provider_server import WIRE_SAMPLES, ProviderServer


def recorded(name: str) -> dict[str, Any]:
    return json.loads((WIRE_SAMPLES / name).read_text(encoding="utf-8"))


def user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


async def sent(server: ProviderServer, model: HTTPModel, request: ModelRequest) -> dict[str, Any]:
    async for _ in model.stream(request):
        pass
    return server.chat_requests()[-1].body


def as_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic accepts a string content as one text block; compare in block form."""
    return [
        {**m, "content": [{"type": "text", "text": m["content"]}]}
        if isinstance(m["content"], str)
        else m
        for m in messages
    ]


async def test_anthropic_tools_request(server, make_adapter: Callable[..., HTTPModel]) -> None:
    want = recorded("anthropic/tool-use-text-then-two-tools.request.json")
    tools = [ToolSpec(t["name"], t["description"], t["input_schema"]) for t in want["tools"]]
    model = make_adapter("anthropic", model=want["model"], max_tokens=want["max_tokens"])
    body = await sent(server, model, ModelRequest([UserMessage(content=user_text(want))], tools))
    assert body["messages"] == as_blocks(want["messages"])
    assert body == {**want, "messages": body["messages"]}


async def test_anthropic_thinking_request(server, make_adapter) -> None:
    want = recorded("anthropic/thinking.request.json")
    model = make_adapter("anthropic", model=want["model"], reasoning_effort="low")
    body = await sent(server, model, ModelRequest([UserMessage(content=user_text(want))]))
    # The SDK call set temperature 1.0, the only value thinking allows; we leave it out.
    assert body == {k: v for k, v in want.items() if k != "temperature"}


async def test_openai_tool_request(server, make_adapter) -> None:
    want = recorded("openai/tool-call-single.request.json")
    function = want["tools"][0]["function"]
    tool = ToolSpec(function["name"], function["description"], function["parameters"])
    model = make_adapter("openai", model=want["model"])
    body = await sent(server, model, ModelRequest([UserMessage(content=user_text(want))], [tool]))
    # pydantic-ai adds tool_choice "auto" (the API's default) and strict mode; we send neither.
    expected = {k: v for k, v in want.items() if k != "tool_choice"}
    expected["tools"] = [
        {"type": "function", "function": {k: v for k, v in function.items() if k != "strict"}}
    ]
    assert body == expected


async def test_openai_compatible_tool_request(server, make_adapter) -> None:
    want = recorded("compat/ollama-v1-tool-call.request.json")
    function = want["tools"][0]["function"]
    tool = ToolSpec(function["name"], function["description"], function["parameters"])
    model = make_adapter("openai", model=want["model"])
    body = await sent(server, model, ModelRequest([UserMessage(content=user_text(want))], [tool]))
    # enable_thinking is a client-specific extra, sent through ModelOptions.extra when wanted.
    assert body == {k: v for k, v in want.items() if k != "enable_thinking"}


async def test_ollama_chat_request(server, make_adapter) -> None:
    want = recorded("ollama/chat-text.request.json")
    model = make_adapter("ollama", model=want["model"])
    body = await sent(server, model, ModelRequest([UserMessage(content=user_text(want))]))
    # format "", options {} and keep_alive null are the Python client's empty defaults.
    assert body == {k: want[k] for k in ("model", "messages", "stream")}
