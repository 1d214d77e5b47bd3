"""Streams of many small events cost linear work (DESIGN.md, "Untrusted input").

A hostile server can send many small events that each once cost work in proportion to all
before them: Anthropic signature deltas (the signature was re-copied per delta, 243 s of CPU
for 8,000 of 16 KB), tool_use blocks (counted over all blocks per start) and Ollama tool calls
(sorted per call). The work itself is measured by bench/bench_providers.py (a timing has no
place here); these tests pin the behaviour: the total signature is capped like one event, and
many blocks or calls are numbered in order.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from engine import AssistantMessage, ProviderResponseError, StopReason
from engine.messages import UserMessage
from engine.model import ModelRequest
from tests.support.provider_server import Turn

KB = 1024


def _sse(data: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(data).encode() + b"\n\n"


START = _sse({"type": "message_start", "message": {"usage": {"input_tokens": 1}}})
END = _sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}) + _sse(
    {"type": "message_stop"}
)


def _signed_stream(deltas: int, size: int) -> bytes:
    """Text, then a thinking block whose signature comes in ``deltas`` pieces of ``size``."""
    text = _sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text"}})
    text += _sse(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}
    )
    thinking = {"type": "thinking", "thinking": "", "signature": ""}
    head = _sse({"type": "content_block_start", "index": 1, "content_block": thinking})
    head += _sse(
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "thinking_delta", "thinking": "hmm"},
        }
    )
    delta = _sse(
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "signature_delta", "signature": "A" * size},
        }
    )
    return START + text + head + delta * deltas + END


def _ask() -> ModelRequest:
    return ModelRequest([UserMessage(content="hi")])


async def test_a_signature_in_many_pieces_is_joined_whole(server, make_adapter) -> None:
    server.script(Turn(body=_signed_stream(40, 100)))
    model = make_adapter("anthropic", max_attempts=1)
    events = [event async for event in model.stream(_ask())]
    message = events[-1].response.message
    (block,) = message.provider_data["anthropic"]["thinking"]
    assert block == {"type": "thinking", "thinking": "hmm", "signature": "A" * 4000}


async def test_an_oversized_signature_ends_the_request_and_keeps_the_partial(
    server, make_adapter, store
) -> None:
    # Before: the signature grew without a bound (and with quadratic copying) and the
    # request completed; now its total is capped like one event, 64 KB here.
    server.script(Turn(body=_signed_stream(200, 1 * KB)))
    model = make_adapter("anthropic", max_attempts=1, max_event_size=64 * KB)
    agent = await store.agent(model)
    async with asyncio.timeout(20):
        with pytest.raises(ProviderResponseError) as info:
            await agent.run("hi")
    assert "larger than 64 KB" in str(info.value)
    last = (await store.history())[-1]
    assert isinstance(last, AssistantMessage) and last.content == "Hi"
    assert last.stop is not None and last.stop.reason is StopReason.INTERRUPTED


async def test_many_tool_blocks_are_numbered_in_order(server, make_adapter) -> None:
    count = 2000
    blocks = b"".join(
        _sse(
            {
                "type": "content_block_start",
                "index": i,
                "content_block": {"type": "tool_use", "id": f"t{i}", "name": f"tool{i}"},
            }
        )
        + _sse(
            {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps({"n": i})},
            }
        )
        for i in range(count)
    )
    server.script(Turn(body=START + blocks + END))
    model = make_adapter("anthropic", max_attempts=1)
    events = [event async for event in model.stream(_ask())]
    calls = events[-1].response.message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        (f"t{i}", f"tool{i}", {"n": i}) for i in range(count)
    ]


async def test_many_ollama_tool_calls_are_numbered_in_order(server, make_adapter) -> None:
    count = 2000
    lines = b"".join(
        json.dumps(
            {"message": {"tool_calls": [{"function": {"name": f"tool{i}", "arguments": {"n": i}}}]}}
        ).encode()
        + b"\n"
        for i in range(count)
    )
    end = json.dumps({"done": True, "done_reason": "stop", "message": {}}).encode() + b"\n"
    server.script(Turn(body=lines + end))
    model = make_adapter("ollama", max_attempts=1)
    events = [event async for event in model.stream(_ask())]
    calls = events[-1].response.message.tool_calls
    assert [(c.name, c.arguments) for c in calls] == [(f"tool{i}", {"n": i}) for i in range(count)]
