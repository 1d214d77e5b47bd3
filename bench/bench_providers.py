"""Provider stream consumption: each adapter against plain httpx ``aiter_lines()``.

A 20,000-chunk stream is rendered once per wire protocol and served by the loopback server
(tests/support/provider_server.py) in one piece, so the server costs the same for everyone.
For each protocol the same bytes are read twice over the same HTTP path:

- baseline: plain ``httpx`` with ``aiter_lines()``, parsing each ``data:`` line (or NDJSON
  line) with ``json.loads`` (the least any consumer must do to get at the text);
- adapter: ``model.stream(request)`` to the final assembled message.

Also printed, for information: reading the lines alone, parsing nothing.

A line that never ends (DESIGN.md, "Untrusted input"): one SSE line and one NDJSON line of
64 MB, 64 KB a read, with the cap lifted. Printed: the CPU time, and the work per read at the
end of the line against the start (the median CPU time between two reads, last 64 against
first 64). A linear reader does the same work per read however long the line already is
(about 1x); a quadratic one does work in proportion to it (hundreds of times more at the
end). Target: at most 3x. Before the fix, SSE took 24.5 s for 64 MB (1.7 s for 16 MB).

Many small events that once cost work in proportion to what came before (the same measure,
per event): 4,000 Anthropic signature deltas of 16 KB (the signature was re-copied per
delta), 20,000 Anthropic tool_use blocks (counted over all blocks per start) and 20,000
Ollama tool calls (the calls sorted per call). Target: at most 3x.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
from typing import Any

import httpx

from engine.messages import UserMessage
from engine.model import ModelRequest
from engine.providers import AnthropicModel, OllamaModel, OpenAIChatModel
from tests.support.provider_server import ProviderServer, Turn, render

CHUNKS = 20_000
ROUNDS = 21
TARGET = 1.5

PROTOCOLS: dict[str, tuple[type, str]] = {
    "openai": (OpenAIChatModel, "/v1/chat/completions"),
    "anthropic": (AnthropicModel, "/v1/messages"),
    "ollama": (OllamaModel, "/api/chat"),
}


def _stream_bytes(protocol: str) -> bytes:
    # Short, varied deltas like a real model's (3-6 characters), one event each.
    words = ("The ", "quick ", "brown ", "fox ", "jumps ", "over ", "lazy ", "dog. ")
    text = "".join(words[i % len(words)] for i in range(CHUNKS))
    turn = Turn(text=text, chunk_size=1)
    # chunk_size=1 would split by character; build one event per word instead.
    turn.chunk_size = 10**9
    events = render(turn, protocol, {"stream_options": {"include_usage": True}})
    head, tail = _split_text_event(events, protocol)
    pieces = [_text_event(protocol, words[i % len(words)]) for i in range(CHUNKS)]
    return b"".join([*head, *pieces, *tail])


def _split_text_event(events: list[bytes], protocol: str) -> tuple[list[bytes], list[bytes]]:
    """Split a rendered one-text-event stream around that event (to replace it)."""
    marker = {"openai": b'"content":"The ', "anthropic": b'"text_delta"', "ollama": b'"The '}
    index = next(i for i, e in enumerate(events) if marker[protocol] in e)
    return events[:index], events[index + 1 :]


def _text_event(protocol: str, piece: str) -> bytes:
    data: dict[str, Any]
    if protocol == "openai":
        data = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "bench",
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
        }
        return b"data: " + json.dumps(data).encode() + b"\n\n"
    if protocol == "anthropic":
        data = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": piece},
        }
        return b"event: content_block_delta\ndata: " + json.dumps(data).encode() + b"\n\n"
    data = {
        "model": "bench",
        "created_at": "2026-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": piece},
        "done": False,
    }
    return json.dumps(data).encode() + b"\n"


async def _baseline(client: httpx.AsyncClient, url: str) -> int:
    count = 0
    async with client.stream("POST", url, json={"stream": True}) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                line = line[6:]
                if line == "[DONE]":
                    continue
            elif not line.startswith("{"):
                continue
            json.loads(line)
            count += 1
    return count


async def _lines_only(client: httpx.AsyncClient, url: str) -> int:
    count = 0
    async with client.stream("POST", url, json={"stream": True}) as response:
        async for _line in response.aiter_lines():
            count += 1
    return count


async def _adapter(model: Any) -> int:
    request = ModelRequest([UserMessage(content="bench")])
    count = 0
    async for event in model.stream(request):
        count += 1
        last = event
    assert last.response is not None and last.response.message.content
    return count


async def _timed(read: Any) -> tuple[float, int]:
    gc.collect()  # each read starts from the same heap, not from the last one's garbage
    started = time.process_time()
    count = await read
    return time.process_time() - started, count


async def _measure(server: ProviderServer, protocol: str) -> dict[str, float]:
    """Per round: baseline, lines alone, adapter, back to back; the ratio is per round."""
    cls, path = PROTOCOLS[protocol]
    body = _stream_bytes(protocol)
    url = server.url + path
    base_url = server.openai_url if protocol == "openai" else server.url
    model = cls("bench", base_url=base_url, timeout=60)
    bases, lines, adapters, ratios = [], [], [], []
    async with httpx.AsyncClient(timeout=60) as client:
        for _ in range(ROUNDS):
            server.script(Turn(body=body), Turn(body=body), Turn(body=body))
            base, parsed = await _timed(_baseline(client, url))
            alone, _ = await _timed(_lines_only(client, url))
            adapter, events = await _timed(_adapter(model))
            assert parsed >= CHUNKS and events >= CHUNKS, (protocol, parsed, events)
            bases.append(base)
            lines.append(alone)
            adapters.append(adapter)
            ratios.append(adapter / base)
    await model.aclose()
    return {
        "base": min(bases),
        "lines": min(lines),
        "adapter": min(adapters),
        "ratio": statistics.median(ratios),
        "best": min(adapters) / min(bases),
    }


LINE_TARGET = 3.0  #: work per read at the end of a 64 MB line against the start
LINE_SIZE = 64 * 1024 * 1024


class _Reads(httpx.AsyncByteStream):
    """A body: ``head``, then one line that never ends, 64 KB a read; notes when each is asked."""

    def __init__(self, head: bytes, size: int) -> None:
        self.head, self.size = head, size
        self.asked: list[float] = []  #: process_time() as each read was asked for

    async def __aiter__(self) -> Any:
        yield self.head
        block = b"x" * 65536
        for _ in range(self.size // len(block)):
            self.asked.append(time.process_time())
            yield block


async def _long_line(kind: str) -> tuple[float, float]:
    """CPU seconds for one 64 MB line, and the work per read at its end against its start."""
    from engine.providers.sse import aiter_ndjson_lines, aiter_sse

    head = b"data: " if kind == "sse" else b'{"message":{"content":"'
    body = _Reads(head, LINE_SIZE)
    response = httpx.Response(200, stream=body)
    read = aiter_sse if kind == "sse" else aiter_ndjson_lines
    gc.collect()
    started = time.process_time()
    async for _ in read(response, max_size=2 * LINE_SIZE):
        pass
    total = time.process_time() - started
    gaps = [b - a for a, b in zip(body.asked, body.asked[1:], strict=False)]
    first = statistics.median(gaps[16:80])
    last = statistics.median(gaps[-64:])
    return total, last / max(first, 1e-6)


async def _long_lines() -> list[str]:
    missed = []
    for kind in ("sse", "ndjson"):
        runs = [await _long_line(kind) for _ in range(3)]
        total = min(t for t, _ in runs)
        ratio = statistics.median(r for _, r in runs)
        print(
            f"{kind:>9}: one 64 MB line without newline  {total * 1000:6.1f} ms  work per read "
            f"at its end {ratio:.1f}x its start (1x linear; target <= {LINE_TARGET:g}x)",
            flush=True,
        )
        if ratio > LINE_TARGET:
            missed.append(f"a {kind} line: a read at 64 MB costs {ratio:.1f}x one at the start")
    return missed


MANY_TARGET = 3.0  #: work per event at the end of a many-event stream against the start


class _Events(httpx.AsyncByteStream):
    """A body: ``head``, ``count`` events one a read, ``tail``; notes when each read is asked."""

    def __init__(self, head: bytes, event: Any, count: int, tail: bytes) -> None:
        self.head, self.event, self.count, self.tail = head, event, count, tail
        self.asked: list[float] = []

    async def __aiter__(self) -> Any:
        yield self.head
        for number in range(self.count):
            self.asked.append(time.process_time())
            yield self.event(number)
        yield self.tail


def _many_events(kind: str) -> tuple[type, _Events]:
    """A hostile stream of many small events that once cost work in proportion to the past."""
    sse = lambda data: b"data: " + json.dumps(data).encode() + b"\n\n"  # noqa: E731
    if kind == "ollama tool calls":
        call = json.dumps({"message": {"tool_calls": [{"function": {"name": "x"}}]}}) + "\n"
        end = json.dumps({"done": True, "done_reason": "stop", "message": {}}) + "\n"
        return OllamaModel, _Events(b"", lambda _: call.encode(), 20_000, end.encode())
    start = sse({"type": "message_start", "message": {"usage": {"input_tokens": 1}}})
    end = sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}) + sse(
        {"type": "message_stop"}
    )
    if kind == "anthropic tool blocks":
        block = lambda i: sse(  # noqa: E731
            {
                "type": "content_block_start",
                "index": i,
                "content_block": {"type": "tool_use", "id": f"t{i}", "name": "x"},
            }
        )
        return AnthropicModel, _Events(start, block, 20_000, end)
    thinking = {"type": "thinking", "thinking": "", "signature": ""}
    head = start + sse({"type": "content_block_start", "index": 0, "content_block": thinking})
    delta = sse(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "A" * 16384},
        }
    )
    return AnthropicModel, _Events(head, lambda _: delta, 4_000, end)


async def _many(kind: str) -> tuple[float, float]:
    """CPU seconds for the stream, and the work per event at its end against its start."""
    cls, body = _many_events(kind)
    transport = httpx.MockTransport(lambda _: httpx.Response(200, stream=body))
    model = cls("bench", api_key="k", transport=transport, max_event_size=2**31)
    gc.collect()
    started = time.process_time()
    async for _ in model.stream(ModelRequest(messages=[UserMessage(content="hi")])):
        pass
    total = time.process_time() - started
    await model.aclose()
    gaps = [b - a for a, b in zip(body.asked, body.asked[1:], strict=False)]
    first = statistics.median(gaps[16:400])
    last = statistics.median(gaps[-384:])
    return total, last / max(first, 1e-6)


async def _many_streams() -> list[str]:
    missed = []
    for kind in ("anthropic signature", "anthropic tool blocks", "ollama tool calls"):
        runs = [await _many(kind) for _ in range(3)]
        total = min(t for t, _ in runs)
        ratio = statistics.median(r for _, r in runs)
        print(
            f"{kind:>22}: {total * 1000:7.1f} ms  work per event at the end {ratio:.1f}x the "
            f"start (1x linear; target <= {MANY_TARGET:g}x)",
            flush=True,
        )
        if ratio > MANY_TARGET:
            missed.append(f"{kind}: an event at the end costs {ratio:.1f}x one at the start")
    return missed


async def _main() -> list[str]:
    missed = await _long_lines()
    missed += await _many_streams()
    with ProviderServer() as server:
        for protocol in PROTOCOLS:
            m = await _measure(server, protocol)
            print(
                f"{protocol:>9}: {CHUNKS} chunks  baseline {m['base'] * 1000:6.1f} ms  "
                f"adapter {m['adapter'] * 1000:6.1f} ms  ratio {m['ratio']:.2f}x "
                f"(target <= {TARGET}x; best against best {m['best']:.2f}x)  [lines alone, "
                f"no JSON: {m['lines'] * 1000:.1f} ms, adapter {m['adapter'] / m['lines']:.2f}x]",
                flush=True,
            )
            if m["ratio"] > TARGET:
                missed.append(
                    f"{protocol} adapter is {m['ratio']:.2f}x plain aiter_lines (> {TARGET}x)"
                )
    return missed


def main() -> list[str]:
    """Run the benchmark; return the missed targets."""
    return asyncio.run(_main())
