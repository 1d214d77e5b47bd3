"""Stream framing: server-sent events (through httpx-sse) and Ollama's newline-delimited JSON.

Why not ``response.aiter_lines()``: httpx splits lines with ``str.splitlines()``, which also
breaks on U+2028, U+2029, U+0085 and other characters the SSE spec does not treat as line
ends, and models do emit U+2028 inside JSON strings. httpx-sse (>= 0.4.3) splits on CR, LF and
CRLF only, as the spec says; this module is a thin wrapper over its line and event decoders.

One addition to the spec: llama.cpp-derived servers (llama-box) end a failing stream with a
bare ``error: {...}`` line, a field name the spec says to ignore. It is surfaced as an event
named ``error`` so the adapter can tell a person what the server said
(tests/wire_samples/compat/llamabox-error-line-midstream.sse).

NDJSON is split on ``\\n`` only, so a U+2028 inside a line is never a boundary.

Reads are gathered: after a read that brought little (under `GATHER_BELOW` characters), the
reader waits `GATHER_PAUSE` seconds before the next one, so what arrives meanwhile comes in
one read. A server that sends every token in its own packet otherwise costs one trip through
the event loop, httpcore and h11 per token: at 2,000 tokens a second that was most of a core
on the event loop a window also paints from, and the window stalled. Ten milliseconds is
below what a reader notices; a stream arriving faster than it is read (large reads) is read
without pausing.
"""

from __future__ import annotations

import asyncio
import codecs
import time
from collections.abc import AsyncIterator, Callable, Iterable

import httpx
from httpx_sse import ServerSentEvent

# The decoders are httpx-sse's own (the ones `EventSource.aiter_sse` uses); they are imported
# directly so that the non-standard ``error:`` line above can be seen before it is dropped.
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

__all__ = ["GATHER_BELOW", "GATHER_PAUSE", "ServerSentEvent", "aiter_ndjson_lines", "aiter_sse"]

GATHER_PAUSE = 0.01  #: seconds to let a trickling stream gather before the next read
GATHER_BELOW = 16_384  #: a read shorter than this (characters or bytes) is a trickle


class _Gather:
    """Tells a read that waited for the network from one served from what was buffered.

    httpcore hands over one HTTP chunk per iteration, and a chunk already received comes
    back without waiting (well under `_WAITED`); one that had to wait for the network took
    longer. Pausing only after a wait lets the buffered chunks be drained at full speed and
    then gathers what arrives next.
    """

    __slots__ = ("_since",)

    def __init__(self) -> None:
        self._since = time.perf_counter()

    def reading(self) -> None:
        """Call just before asking for the next chunk."""
        self._since = time.perf_counter()

    def waited(self) -> bool:
        """Whether the chunk in hand had to wait for the network."""
        return time.perf_counter() - self._since >= _WAITED


_WAITED = 0.0003  #: seconds: longer than a buffered chunk takes to come through httpcore


async def aiter_sse(
    response: httpx.Response, *, event_names: bool = True
) -> AsyncIterator[list[ServerSentEvent]]:
    """Yield the events of an SSE response body, in order, a batch per network read.

    ``event_names=False`` drops the ``event:`` lines before decoding, for a protocol that
    repeats the name inside each event's data (Anthropic's ``"type"``): a third fewer lines
    to decode on the hot path; every event's ``event`` is then ``"message"``.

    Batches, not single events: a stream of 20,000 small events is read in a few dozen
    reads, and every async-generator hop per event costs time (bench_providers).
    Comments (``: keep-alive``) are skipped. An event not closed by a blank line when the
    body ends is discarded, as the spec requires; the adapter then sees that no final event
    came.
    """
    lines = SSELineDecoder()
    decode = SSEDecoder().decode
    gather = _Gather()
    async for text in response.aiter_text():
        batch = []
        # Look at each line only when one may start with "error:" (rare): here, or in the
        # line begun by an earlier read and still waiting for its end.
        pending = "".join(lines.buffer)[:6] if lines.buffer else ""
        if "error:" in text or (pending and (pending + text[:6]).startswith("error:")):
            batch = _decode_watching_errors(lines.decode(text), decode, event_names)
        elif event_names:
            for line in lines.decode(text):
                event = decode(line)
                if event is not None:
                    batch.append(event)
        else:
            for line in lines.decode(text):
                if line.startswith("event:"):
                    continue
                event = decode(line)
                if event is not None:
                    batch.append(event)
        if batch:
            yield batch
        if len(text) < GATHER_BELOW and gather.waited():
            await asyncio.sleep(GATHER_PAUSE)
        gather.reading()
    batch = _decode_watching_errors(lines.flush(), decode, event_names)
    if batch:
        yield batch


def _decode_watching_errors(
    lines: Iterable[str], decode: Callable[[str], ServerSentEvent | None], event_names: bool
) -> list[ServerSentEvent]:
    """Decode lines the careful way: a bare ``error:`` line becomes an ``error`` event."""
    batch = []
    for line in lines:
        if line.startswith("error:"):
            batch.append(ServerSentEvent(event="error", data=line[6:].strip()))
            continue
        if not event_names and line.startswith("event:"):
            continue
        event = decode(line)
        if event is not None:
            batch.append(event)
    return batch


async def aiter_ndjson_lines(response: httpx.Response) -> AsyncIterator[list[str]]:
    """Yield the non-blank lines of an NDJSON body (without their ``\\n``), a batch per read.

    Bytes are decoded incrementally as UTF-8 (a character split between two reads is
    joined), then split on ``\\n`` alone. A last line without a trailing newline is yielded
    too; the caller's JSON parser decides whether it is whole.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    buffer = ""
    gather = _Gather()
    async for chunk in response.aiter_bytes():
        buffer += decoder.decode(chunk)
        if "\n" in buffer:
            *complete, buffer = buffer.split("\n")
            batch = [line for line in complete if line and not line.isspace()]
            if batch:
                yield batch
        if len(chunk) < GATHER_BELOW and gather.waited():
            await asyncio.sleep(GATHER_PAUSE)
        gather.reading()
    buffer += decoder.decode(b"", final=True)
    if buffer.strip():
        yield [buffer]
