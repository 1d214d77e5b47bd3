"""What a server cannot do to us: the bounds on everything read from it (DESIGN.md,
"Untrusted input").

- An error body is read up to `ERROR_BODY_LIMIT` bytes, within the idle deadline; the rest
  is never waited for (`read_at_most`, `read_within`).
- A whole (unstreamed) body, a stream line and a stream event hold at most
  ``max_event_size`` characters (`read_whole` here, the readers in `sse`); past it
  `sse.EventTooLarge`.
- A body that arrives a byte at a time cannot hold a request for ever: httpx's read timeout
  bounds each read, not the body, so the whole read has a deadline (`BodyTooSlow`).
- A stream must bring a model event at least every ``idle_timeout`` seconds, comments and
  pings not counting (`DEFAULT_IDLE_TIMEOUT`; `HTTPModel.stream` holds the deadline).
- At most `_errors.QUOTE_LIMIT` characters of a server's words are quoted to a person, and a
  stop value is stored at most `_step.STOP_VALUE_LIMIT` long.

The readers raise signals (`EventTooLarge`, `BodyTooSlow`), never sentences: the adapter's
error mapping (`_errors.ErrorWording.transport`) words them, as it words httpx's failures.
"""

from __future__ import annotations

import asyncio

import httpx

from .sse import EventTooLarge, close_body

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "ERROR_BODY_LIMIT",
    "WHOLE_ANSWER_FACTOR",
    "BodyTooSlow",
    "read_at_most",
    "read_whole",
    "read_within",
]

#: seconds a stream may go without a model event (comments and pings are not events),
#: when neither ``idle_timeout`` nor a read timeout is given
DEFAULT_IDLE_TIMEOUT = 120.0

#: bytes of an error response read; the rest is not waited for
ERROR_BODY_LIMIT = 64 * 1024

#: an unstreamed answer (asked for again after an empty stream) must be whole within this
#: many idle deadlines: the wait while it is made, then its body
WHOLE_ANSWER_FACTOR = 2


class BodyTooSlow(Exception):  # noqa: N818 (a signal between a reader and the error mapping)
    """A body was still arriving after ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"a response body took longer than {seconds:g} s")


async def read_at_most(response: httpx.Response, limit: int) -> bytes:
    """Read at most ``limit`` bytes of a body; the rest is never waited for.

    An error status whose body never ends (or is huge) cannot hold the request or fill
    memory: the response is closed once this much is read.
    """
    body = bytearray()
    chunks = response.aiter_bytes()
    try:
        async for chunk in chunks:
            body += chunk[: limit - len(body)]
            if len(body) >= limit:
                break
    finally:
        await close_body(response, chunks)
    return bytes(body)


async def read_within(response: httpx.Response, limit: int, seconds: float | None) -> bytes:
    """`read_at_most`, all of it within ``seconds`` (None: no overall limit).

    Raises:
        BodyTooSlow: the body was not read within ``seconds``.
    """
    if seconds is None:
        return await read_at_most(response, limit)
    try:
        async with asyncio.timeout(seconds) as deadline:
            return await read_at_most(response, limit)
    except TimeoutError:
        if deadline.expired():
            raise BodyTooSlow(seconds) from None
        raise


async def read_whole(
    response: httpx.Response, max_size: int, seconds: float | None = None
) -> bytes:
    """A whole (not streamed) answer body, up to ``max_size`` bytes.

    Raises:
        EventTooLarge: the body is larger.
        BodyTooSlow: it took longer than ``seconds`` (None: no overall limit; the caller
            has one).
    """
    content = await read_within(response, max_size + 1, seconds)
    if len(content) > max_size:
        raise EventTooLarge(max_size)
    return content
