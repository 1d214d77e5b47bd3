"""Stream framing (engine/providers/sse.py) at every possible split between network reads.

The body is fed to a real ``httpx.Response`` through an async byte stream cut at each offset
in turn, so a line end, a multi-byte character or the bare ``error:`` line of llama-box can
fall across two reads; the events must come out the same every time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from engine.providers.sse import aiter_ndjson_lines, aiter_sse

SSE_BODY = (
    ": keep-alive\r\n\r\n"
    'data: {"a":"one\u2028two"}\r\n\r\n'
    "event: ping\n"
    'data: {"type": "ping"}\n\n'
    'data: {"b":"é\u2029ü"}\r\r'
    'data: {"c":1}\n\n'
    'error: {"error":{"message":"failed to decode"}}\n'
).encode()

NDJSON_BODY = (
    '{"message":{"content":"a\u2028b"}}\n\n{"message":{"content":"ü\r"}}\n{"done":true}'
).encode()


class Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


def response(body: bytes, cut: int, kind: str) -> httpx.Response:
    pieces = [p for p in (body[:cut], body[cut:]) if p]
    return httpx.Response(200, headers={"content-type": kind}, stream=Pieces(pieces))


async def sse_events(body: bytes, cut: int) -> list[tuple[str, str]]:
    events = []
    async for batch in aiter_sse(response(body, cut, "text/event-stream; charset=utf-8")):
        events += [(e.event, e.data) for e in batch]
    return events


async def test_sse_events_are_the_same_at_every_split() -> None:
    expected = [
        ("message", '{"a":"one\u2028two"}'),
        ("ping", '{"type": "ping"}'),
        ("message", '{"b":"é\u2029ü"}'),
        ("message", '{"c":1}'),
        ("error", '{"error":{"message":"failed to decode"}}'),
    ]
    assert await sse_events(SSE_BODY, 0) == expected
    for cut in range(1, len(SSE_BODY)):
        assert await sse_events(SSE_BODY, cut) == expected, f"split at byte {cut}"


async def test_ndjson_lines_are_the_same_at_every_split() -> None:
    expected = [
        '{"message":{"content":"a\u2028b"}}',
        '{"message":{"content":"ü\r"}}',
        '{"done":true}',
    ]
    for cut in range(len(NDJSON_BODY)):
        lines = []
        async for batch in aiter_ndjson_lines(response(NDJSON_BODY, cut, "application/x-ndjson")):
            lines += batch
        assert lines == expected, f"split at byte {cut}"


async def test_event_names_can_be_dropped_when_the_data_repeats_them() -> None:
    for cut in range(len(SSE_BODY)):
        events = []
        body = response(SSE_BODY, cut, "text/event-stream")
        async for batch in aiter_sse(body, event_names=False):
            events += [(e.event, e.data) for e in batch]
        assert [name for name, _ in events] == ["message"] * 4 + ["error"], cut
        assert events[1] == ("message", '{"type": "ping"}')
