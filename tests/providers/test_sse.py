"""Stream framing (engine/providers/sse.py) at every possible split between network reads.

The body is fed to a real ``httpx.Response`` through an async byte stream cut at each offset
in turn, so a line end, a multi-byte character or the bare ``error:`` line of llama-box can
fall across two reads; the events must come out the same every time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from engine.providers.sse import EventTooLarge, aiter_ndjson_lines, aiter_sse

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


# ---------------------------------------------------------------------------- size caps


async def _drain_sse(pieces: list[bytes], max_size: int) -> tuple[list[str], Exception | None]:
    body = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Pieces(pieces))
    data: list[str] = []
    try:
        async for batch in aiter_sse(body, max_size=max_size):
            data += [event.data for event in batch]
    except EventTooLarge as exc:
        return data, exc
    return data, None


async def test_a_line_growing_over_many_reads_stops_at_the_cap() -> None:
    pieces = [b"data: first\n\ndata: ", *[b"x" * 1000] * 50]
    data, error = await _drain_sse(pieces, max_size=10_000)
    assert data == ["first"]
    assert isinstance(error, EventTooLarge) and error.max_size == 10_000


async def test_an_event_of_many_short_data_lines_stops_at_the_cap() -> None:
    pieces = [b"data: first\n\n", *[b"data: " + b"y" * 994 + b"\n"] * 50, b"\n"]
    data, error = await _drain_sse(pieces, max_size=10_000)
    assert data == ["first"] and isinstance(error, EventTooLarge)


async def test_an_oversized_line_arriving_in_one_read_stops_after_what_came_before() -> None:
    body = b'data: {"a":1}\n\n' + b"data: " + b"z" * 20_000 + b'\n\ndata: {"b":2}\n\n'
    data, error = await _drain_sse([body], max_size=10_000)
    assert data == ['{"a":1}'] and isinstance(error, EventTooLarge)


async def test_events_up_to_the_cap_pass() -> None:
    body = b"data: " + b"w" * 9_000 + b"\n\n"
    for pieces in ([body], [body[:100], body[100:5000], body[5000:]]):
        data, error = await _drain_sse(pieces, max_size=10_000)
        assert data == ["w" * 9_000] and error is None


async def test_an_ndjson_line_that_never_ends_stops_at_the_cap() -> None:
    for pieces in (
        [b'{"n":1}\n{"n":', *[b"9" * 1000] * 50],  # grows over many reads
        [b'{"n":1}\n' + b"9" * 20_000 + b'\n{"n":3}\n'],  # arrives whole in one read
    ):
        body = httpx.Response(200, stream=Pieces(pieces))
        lines: list[str] = []
        with pytest.raises(EventTooLarge):
            async for batch in aiter_ndjson_lines(body, max_size=10_000):
                lines += batch
        assert lines == ['{"n":1}']
