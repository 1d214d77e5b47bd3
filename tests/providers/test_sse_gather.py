"""Reads are gathered (engine/providers/sse.py): a stream that trickles in one small packet
per token, as the loopback server sends it, is read from the socket in a few large reads
instead of one network read per token — and every event still arrives, in order.

The reads are counted on the real connection: httpcore's own network backend, wrapped to
count the reads it makes on the socket (tests/support/counting.py).
"""

from __future__ import annotations

import json

import httpx

from engine.messages import UserMessage
from engine.model import ModelRequest
from engine.providers import OpenAIChatModel
from engine.providers.sse import aiter_sse
from tests.support.counting import CountingBackend, counting_transport
from tests.support.provider_server import ProviderServer, Turn

EVENTS = 1000


def counting_client(backend: CountingBackend) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=counting_transport(backend))


async def test_a_trickling_stream_arrives_in_a_few_large_batches() -> None:
    text = "".join(f"w{n} " for n in range(EVENTS))
    with ProviderServer() as server:
        # One event per 4-character token, each in its own write, 0.5 ms apart (2,000/s).
        server.script(Turn(text=text, chunk_size=len("w00 "), delay=0.0005))
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}
        backend = CountingBackend()
        async with (
            counting_client(backend) as client,
            client.stream("POST", f"{server.openai_url}/chat/completions", json=body) as response,
        ):
            batches = [batch async for batch in aiter_sse(response)]
    events = [event for batch in batches for event in batch]
    pieces = [
        json.loads(e.data)["choices"][0]["delta"].get("content", "")
        for e in events
        if e.data != "[DONE]" and json.loads(e.data)["choices"]
    ]
    assert "".join(pieces) == text
    # Without gathering each token is its own socket read (about as many reads as events);
    # with it, ten milliseconds of a 2,000-a-second stream come in one read.
    assert backend.reads < len(events) / 4, (backend.reads, len(events), len(batches))


async def test_the_adapter_gets_the_whole_trickled_answer() -> None:
    text = "".join(f"t{n} " for n in range(EVENTS))
    with ProviderServer() as server:
        server.script(Turn(text=text, chunk_size=len("t00 "), delay=0.0005))
        model = OpenAIChatModel("m", base_url=server.openai_url)
        try:
            deltas = [
                event.delta
                async for event in model.stream(ModelRequest([UserMessage(content="go")]))
                if event.delta
            ]
        finally:
            await model.aclose()
    assert "".join(deltas) == text
