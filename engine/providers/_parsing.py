"""What every adapter's stream parser shares: events per network read, and one event's JSON.

A parser is the adapter's own (its wire's events, in `feed`); around it `events_per_read`
runs the loop each of them used to write out:

- one list of events per network read (`sse` hands over a batch per read), so the host's
  loop makes one hop per read, not per token;
- when `feed` fails midway (an error event, malformed JSON, a line past the cap), the events
  it made before the fault are yielded first, then the error is raised: what arrived still
  reaches the caller, which keeps it;
- a connection that breaks once the stop has arrived (``finished``) loses at most the usage
  chunk or ``[DONE]`` after it: the answer is whole and kept as complete, not cut off;
- the reader is closed here, in the task that read it, on every way out.

`json_object` is the parse of one event: the C scanner's fast path for the common case, the
slow path for bytes and leading whitespace, and the adapter's malformed-stream error for the
rest.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any, TypeVar

import httpx

from ..model import ModelEvent
from ._errors import ErrorWording

__all__ = ["EmptyBody", "events_per_read", "json_object", "loads"]

log = logging.getLogger("engine.providers")

T = TypeVar("T")

#: the C scanner without `json.loads`'s wrappers: half the cost per event (bench_providers)
_raw_decode = json.JSONDecoder().raw_decode


class EmptyBody(Exception):  # noqa: N818 (a signal between the parser and its caller)
    """Raised by a parser whose ``200 OK`` stream had no bytes at all (see
    `HTTPModel._answer_empty_stream`)."""


async def events_per_read(
    batches: AsyncGenerator[list[T], None],
    feed: Callable[[list[T], list[ModelEvent]], bool],
    end: Callable[[], list[ModelEvent]],
    *,
    finished: Callable[[], bool] | None = None,
) -> AsyncGenerator[list[ModelEvent], None]:
    """Yield the model events of each read of ``batches``, then what ``end`` returns.

    Args:
        batches: the stream's items (SSE events, NDJSON lines), a list per network read;
            closed here on every way out.
        feed: turns one read's items into model events, appended to the list it is given,
            and returns True when the stream is done (what follows is not read).
        end: called once the stream is done or its body ended: the last events (the
            completed step), or [] when ``feed`` made them; raises when the stream ended
            without its stop.
        finished: whether the stop has arrived; a connection that breaks after it is an
            end, not a failure. None: every broken connection is a failure.
    """
    async with contextlib.aclosing(batches):  # closed here, not by the collector
        try:
            async for batch in batches:
                out: list[ModelEvent] = []
                try:
                    done = feed(batch, out)
                except Exception:
                    if out:
                        yield out  # what arrived before the fault still reaches the caller
                    raise
                if out:
                    yield out
                if done:
                    break
        except httpx.TransportError:
            if finished is None or not finished():
                raise
            log.info("the connection closed after the answer finished; the usage may be missing")
    last = end()
    if last:
        yield last


def json_object(data: str | bytes, words: ErrorWording) -> dict[str, Any]:
    """Parse one event's JSON object, or raise the adapter's malformed-stream error."""
    try:
        value, end = _raw_decode(data)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        value = _loads_slowly(data, words)
    else:
        if end != len(data) and not data[end:].isspace():
            raise words.bad_json()
    if not isinstance(value, dict):
        raise words.bad_json()
    return value


def loads(data: str | bytes, words: ErrorWording) -> Any:
    """Parse one body's or event's JSON, whatever it holds, or raise the malformed error."""
    try:
        value, end = _raw_decode(data)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return _loads_slowly(data, words)
    if end != len(data) and not data[end:].isspace():
        raise words.bad_json()
    return value


def _loads_slowly(data: str | bytes, words: ErrorWording) -> Any:
    """Bytes, leading whitespace, or a real error to report."""
    try:
        return json.loads(data)
    except ValueError as exc:
        raise words.bad_json() from exc
