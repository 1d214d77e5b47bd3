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

Sizes are capped (DESIGN.md, "Untrusted input"): one line, or one SSE event's data, holds at
most ``max_size`` characters (`MAX_EVENT_SIZE`, 16 Mi, by default); past it the reader raises
`EventTooLarge`, which the adapter words for a person. What is held is measured as it grows,
never re-joined, so a line that never ends costs time in proportion to its length.

Each reader closes the response, then the body iterator it opened (`close_body`, in
``finally``, in the reading task) on every way out.

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
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from typing import Any

import httpx
from httpx_sse import ServerSentEvent

# The decoders are httpx-sse's own (the ones `EventSource.aiter_sse` uses); they are imported
# directly so that the non-standard ``error:`` line above can be seen before it is dropped.
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

__all__ = [
    "GATHER_BELOW",
    "GATHER_PAUSE",
    "MAX_EVENT_SIZE",
    "EventTooLarge",
    "ServerSentEvent",
    "aiter_ndjson_lines",
    "aiter_sse",
    "close_body",
]

MAX_EVENT_SIZE = 16 * 1024 * 1024  #: characters in one line or one event's data, by default
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


async def close_body(response: httpx.Response, chunks: AsyncIterator[Any] | None) -> None:
    """Close the response, then the iterator read from it (its body, a parser), in this task.

    In that order: httpx's body iterator is a chain of generators this code cannot reach,
    down to httpcore's, which on closing awaits a lock unless the response is already
    closed. Closed first, the response leaves them nothing to await however they are
    finalised; otherwise a loop without async-generator hooks (qasync) had the collector
    close them on the spot: "async generator ignored GeneratorExit", then "Attempted to
    exit cancel scope in a different task".
    """
    try:
        await response.aclose()
    finally:
        aclose = getattr(chunks, "aclose", None)  # httpx types its generators as iterators
        if aclose is not None:
            await aclose()


class EventTooLarge(Exception):
    """A line or an event grew past the reader's ``max_size`` (characters)."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        super().__init__(f"a stream line or event exceeded {max_size} characters")


class _Held:
    """The characters in a list of pieces that grows by appends until it is replaced.

    httpx-sse keeps an unfinished line as such a list (``SSELineDecoder.buffer``) and an
    event's data lines likewise (``SSEDecoder._data``); measuring only the new pieces keeps a
    long line's cost linear. A replaced list (the line ended, the event was sent) starts over.
    """

    __slots__ = ("_counted", "_pieces", "size")

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._counted = 0
        self.size = 0

    def measure(self, pieces: list[str]) -> int:
        if pieces is not self._pieces:
            self._pieces, self._counted, self.size = pieces, 0, 0
        if len(pieces) > self._counted:
            self.size += sum(map(len, pieces[self._counted :]))
            self._counted = len(pieces)
        return self.size


def _head(pieces: list[str], length: int) -> str:
    """The first ``length`` characters of the joined pieces, joining no more than needed."""
    head = ""
    for piece in pieces:
        head += piece[:length]
        if len(head) >= length:
            break
    return head[:length]


async def aiter_sse(
    response: httpx.Response, *, event_names: bool = True, max_size: int = MAX_EVENT_SIZE
) -> AsyncGenerator[list[ServerSentEvent], None]:
    """Yield the events of an SSE response body, in order, a batch per network read.

    ``event_names=False`` drops the ``event:`` lines before decoding, for a protocol that
    repeats the name inside each event's data (Anthropic's ``"type"``): a third fewer lines
    to decode on the hot path; every event's ``event`` is then ``"message"``.

    Batches, not single events: a stream of 20,000 small events is read in a few dozen
    reads, and every async-generator hop per event costs time (bench_providers).
    Comments (``: keep-alive``) are skipped. An event not closed by a blank line when the
    body ends is discarded, as the spec requires; the adapter then sees that no final event
    came.

    Raises:
        EventTooLarge: a line, or an event's data, passed ``max_size`` characters; the
            events before it were yielded.
    """
    lines = SSELineDecoder()
    decoder = SSEDecoder()
    decode = decoder.decode
    line_held, data_held = _Held(), _Held()
    gather = _Gather()
    chunks = response.aiter_text()
    try:
        async for text in chunks:
            # Nothing this read completes can be longer than what was held plus the read.
            over = False
            if line_held.size + data_held.size + len(text) > max_size:
                batch, over = _decode_capped(lines, decoder, text, event_names, max_size)
            # Look at each line only when one may start with "error:" (rare): here, or in
            # the line begun by an earlier read and still waiting for its end.
            elif "error:" in text or (
                lines.buffer and (_head(lines.buffer, 6) + text[:6]).startswith("error:")
            ):
                batch = _decode_watching_errors(lines.decode(text), decode, event_names)
            elif event_names:
                batch = []
                for line in lines.decode(text):
                    event = decode(line)
                    if event is not None:
                        batch.append(event)
            else:
                batch = []
                for line in lines.decode(text):
                    if line.startswith("event:"):
                        continue
                    event = decode(line)
                    if event is not None:
                        batch.append(event)
            held = line_held.measure(lines.buffer) + data_held.measure(decoder._data)
            if batch:
                yield batch
            if over or held > max_size:
                raise EventTooLarge(max_size)
            if len(text) < GATHER_BELOW and gather.waited():
                await asyncio.sleep(GATHER_PAUSE)
            gather.reading()
    finally:
        await close_body(response, chunks)
    batch = _decode_watching_errors(lines.flush(), decode, event_names)
    if batch:
        yield batch


def _decode_capped(
    lines: SSELineDecoder, decoder: SSEDecoder, text: str, event_names: bool, max_size: int
) -> tuple[list[ServerSentEvent], bool]:
    """Decode a read that may complete an oversized line or event: stop there if it does.

    Returns the events before the oversized one, and whether there was one (the caller
    yields those events, then raises).
    """
    batch: list[ServerSentEvent] = []
    for line in lines.decode(text):
        if len(line) > max_size:
            break
        events = _decode_watching_errors((line,), decoder.decode, event_names)
        if any(len(event.data) > max_size for event in events):
            break
        batch += events
    else:
        return batch, False
    return batch, True


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


async def aiter_ndjson_lines(
    response: httpx.Response, *, max_size: int = MAX_EVENT_SIZE
) -> AsyncGenerator[list[str], None]:
    """Yield the non-blank lines of an NDJSON body (without their ``\\n``), a batch per read.

    Bytes are decoded incrementally as UTF-8 (a character split between two reads is
    joined), then split on ``\\n`` alone. A last line without a trailing newline is yielded
    too; the caller's JSON parser decides whether it is whole. An unfinished line is kept as
    pieces and joined once, when it ends.

    Raises:
        EventTooLarge: a line passed ``max_size`` characters; the lines before it were
            yielded.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pieces: list[str] = []  # the unfinished line
    held = 0  # its length
    gather = _Gather()
    chunks = response.aiter_bytes()
    try:
        async for chunk in chunks:
            text = decoder.decode(chunk)
            if "\n" in text:
                complete = text.split("\n")
                if pieces:
                    complete[0] = "".join(pieces) + complete[0]
                last = complete.pop()
                pieces, held = ([last], len(last)) if last else ([], 0)
                batch = [line for line in complete if line and not line.isspace()]
                cut = None  # the index of the first line over the cap
                if len(text) > max_size or len(complete[0]) > max_size:
                    cut = next((i for i, v in enumerate(batch) if len(v) > max_size), None)
                    batch = batch[:cut]
                if batch:
                    yield batch
                if cut is not None or held > max_size:
                    raise EventTooLarge(max_size)
            elif text:
                pieces.append(text)
                held += len(text)
                if held > max_size:
                    raise EventTooLarge(max_size)
            if len(chunk) < GATHER_BELOW and gather.waited():
                await asyncio.sleep(GATHER_PAUSE)
            gather.reading()
    finally:
        await close_body(response, chunks)
    pieces.append(decoder.decode(b"", final=True))
    rest = "".join(pieces)
    if rest.strip():
        yield [rest]
