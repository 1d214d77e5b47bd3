"""What every adapter's stream parser shares: the loop around it, what an answer gathers,
and one event's JSON.

An adapter's parser is a `StreamParser` for its wire: `StreamParser.feed` turns one read's
items (SSE events, NDJSON lines) into model events, `StreamParser.end` gives the last ones.
Around it `events_per_read` runs the loop each adapter used to write out:

- one list of events per network read (`sse` hands over a batch per read), so the host's
  loop makes one hop per read, not per token;
- when `feed` fails midway (an error event, malformed JSON, a line past the cap), the events
  it made before the fault are yielded first, then the error is raised: what arrived still
  reaches the caller, which keeps it;
- a connection that breaks once the stop has arrived (`StreamParser.finished`) loses at most
  the usage chunk or ``[DONE]`` after it: the answer is whole and kept as complete;
- the reader is closed here, in the task that read it, on every way out.

What every answer gathers (its text, its reasoning, its tool calls) is kept by the parser,
and `StreamParser.completed` assembles the step from it (`_step`). `json_object` is the parse
of one event: the C scanner's fast path for the common case, the slow path for bytes and
leading whitespace, and the adapter's malformed-stream error for the rest.

A whole body (an answer sent where a stream was asked for, the unstreamed repeat after an
empty stream, a model list) is parsed by `json_body`, and each part of it the adapter
reads by `shaped`: every API answers with an object whose parts are objects, lists and
strings, and a server that sends a list, a number or a string where one of those belongs
gets the bad-body sentence (``provider.bad_json.body``), never an ``AttributeError`` from
the middle of a parser.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, Generic, TypeVar

import httpx

from ..errors import ProviderError
from ..messages import Usage
from ..model import ModelEvent
from ..stop import StopInfo
from ._errors import ErrorWording
from ._step import completed
from ._tool_calls import ToolCallAccumulator

__all__ = [
    "EmptyBody",
    "StreamParser",
    "events_per_read",
    "json_body",
    "json_object",
    "listed_objects",
    "shaped",
]

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
    finished: Callable[[], bool],
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
            end, not a failure.
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
            if not finished():
                raise
            log.info("the connection closed after the answer finished; the usage may be missing")
    last = end()
    if last:
        yield last


class StreamParser(Generic[T]):
    """The parser of one response: its wire's items in, the step's events out.

    An adapter subclasses it with `feed` and `end`, and `finished` when its stop may arrive
    before its stream ends; the subclass adds the state its wire needs.

    Args:
        words: the adapter's error wording.
        model: the model id, stored with the answer.
        response: the response parsed (whether any byte arrived tells an empty stream).
    """

    def __init__(self, words: ErrorWording, model: str, response: httpx.Response) -> None:
        self.words = words
        self.model = model
        self.response = response
        self.text: list[str] = []  #: the answer's text, in pieces joined once at the end
        self.reasoning: list[str] = []  #: likewise its reasoning
        self.tools = ToolCallAccumulator(words.provider)

    def events(
        self, items: AsyncGenerator[list[T], None]
    ) -> AsyncGenerator[list[ModelEvent], None]:
        """The model events of ``items``, a list per read (`events_per_read`)."""
        return events_per_read(items, self.feed, self.end, self.finished)

    def feed(self, batch: list[T], out: list[ModelEvent]) -> bool:
        """Turn one read's items into model events, appended to ``out``; True when the
        stream is done (what follows is not read)."""
        raise NotImplementedError

    def end(self) -> list[ModelEvent]:
        """The last events once the stream is done or its body ended ([] when `feed` made
        them); raises when it ended without its stop."""
        raise NotImplementedError

    def finished(self) -> bool:
        """Whether the stop has arrived; by default it never does before the stream's end."""
        return False

    def completed(
        self,
        stop: StopInfo,
        usage: Usage | None,
        provider_data: Mapping[str, Any] | None = None,
    ) -> ModelEvent:
        """The step's last event, assembled from what the stream brought (`_step.completed`)."""
        return completed(
            self.words,
            self.model,
            text="".join(self.text),
            reasoning="".join(self.reasoning),
            tools=self.tools,
            stop=stop,
            usage=usage,
            provider_data=provider_data,
        )


def json_object(data: str | bytes, words: ErrorWording, *, body: bool = False) -> dict[str, Any]:
    """Parse one event's JSON object, or raise the adapter's malformed-stream error (its
    bad-body error when ``body``: the line is a whole body sent as ``application/json``)."""
    try:
        value, end = _raw_decode(data)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        value = _loads_slowly(data, words, body)
    else:
        if end != len(data) and not data[end:].isspace():
            raise words.bad_body() if body else words.bad_json()
    if not isinstance(value, dict):
        raise words.bad_body() if body else words.bad_json()
    return value


def json_body(data: str | bytes, words: ErrorWording) -> dict[str, Any]:
    """Parse a whole body's JSON object, or raise the adapter's bad-body error."""
    return json_object(data, words, body=True)


def shaped(value: Any, kind: type[T], bad: Callable[[], ProviderError]) -> T | None:
    """A part of a body that must be a ``kind`` when it is there: None when it is absent
    (or null), ``bad()`` raised when it is anything else."""
    if value is None or isinstance(value, kind):
        return value
    raise bad()


def listed_objects(data: Mapping[str, Any], field: str) -> list[dict[str, Any]]:
    """The objects listed under ``field`` of a model list: none when it holds no list, and
    an entry that is not an object is skipped (the good ones are still offered)."""
    items = data.get(field)
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, dict)]


def _loads_slowly(data: str | bytes, words: ErrorWording, body: bool) -> Any:
    """Bytes, leading whitespace, or a real error to report."""
    try:
        return json.loads(data)
    except ValueError as exc:
        raise (words.bad_body() if body else words.bad_json()) from exc
