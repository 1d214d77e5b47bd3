"""Waiting in tests: until a condition holds, or a child process prints its next line.

Tests never sleep to synchronise: they wait on an event, a signal or a condition, always with
a timeout so a bug fails the test with a message instead of hanging the suite. These are the
two waits that have no event to wait on. `until` polls a condition every few milliseconds (the
short sleep inside it is the poll, not the synchronisation); `read_line` reads a subprocess's
next line in a thread, so the event loop keeps running while it waits (`read_line_sync` is the
same for a test without a loop). Qt tests that wait
without an event loop use ``qtbot.waitUntil`` instead.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import IO

#: seconds between two looks at a condition
POLL = 0.005


async def until(
    condition: Callable[[], object | Awaitable[object]],
    what: str | Callable[[], str] = "",
    *,
    seconds: float = 10.0,
) -> None:
    """Wait until ``condition()`` is truthy, looking every `POLL` seconds.

    Args:
        condition: called on each look; it may return an awaitable (an async check such as
            reading a file through the store), which is awaited.
        what: what is awaited, for the failure message; a callable is called only on failure
            (to report the state at that moment).
        seconds: how long to wait before failing.

    Raises:
        AssertionError: the condition did not hold within ``seconds``.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        result = condition()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            described = what() if callable(what) else what
            raise AssertionError(f"timed out after {seconds}s waiting for {described or condition}")
        await asyncio.sleep(POLL)


async def read_line(stream: IO[str] | None, what: str = "a line", *, seconds: float = 60.0) -> str:
    """Read the next line of a child's output (in a thread); ``""`` means it was closed.

    Args:
        stream: the child's ``stdout`` (opened with ``text=True``).
        what: what the line says, for the failure message.
        seconds: how long to wait before failing.

    Raises:
        AssertionError: no line arrived within ``seconds``.
    """
    assert stream is not None, "the child's output is not a pipe"
    try:
        return await asyncio.wait_for(asyncio.to_thread(stream.readline), seconds)
    except TimeoutError:
        raise AssertionError(f"timed out after {seconds}s waiting for {what}") from None


def read_line_sync(stream: IO[str] | None, what: str = "a line", *, seconds: float = 60.0) -> str:
    """`read_line` for a test without an event loop.

    The read runs in a daemon thread: on a timeout it stays blocked until the test kills the
    child (which closes the pipe), and never keeps the test process alive.

    Raises:
        AssertionError: no line arrived within ``seconds``.
    """
    assert stream is not None, "the child's output is not a pipe"
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    if not lines:
        raise AssertionError(f"timed out after {seconds}s waiting for {what}")
    return lines[0]
