"""A stream is closed by the task that read it, on every way out, never by the collector.

qasync (the window's event loop) installs no async-generator hooks, so a generator dropped
half-way is closed by the garbage collector on the spot, wherever that happens. httpcore's
response generator then awaits a lock while it closes: "async generator ignored
GeneratorExit", then "Attempted to exit cancel scope in a different task". These tests run
each adapter with the hooks removed, as under qasync, along every way a stream ends, and
fail on any exception the collector reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from collections.abc import Iterator

import pytest

from engine.errors import ProviderError
from engine.messages import UserMessage
from engine.model import ModelRequest
from tests.support.provider_server import Fault, Turn

TEXT = "Several words of an answer, sent a few characters at a time."


@contextlib.contextmanager
def no_asyncgen_hooks() -> Iterator[list[str]]:
    """Remove the loop's async-generator hooks (qasync has none); collect unraisables.

    Entered inside the test's coroutine: the loop installs its hooks each time it starts
    running, so a fixture's setting would not last.
    """
    reported: list[str] = []
    old_hook, old_hooks = sys.unraisablehook, sys.get_asyncgen_hooks()

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        reported.append(f"{unraisable.exc_type.__name__}: {unraisable.exc_value}")

    sys.unraisablehook = hook
    sys.set_asyncgen_hooks(firstiter=None, finalizer=None)
    try:
        yield reported
    finally:
        gc.collect()
        sys.set_asyncgen_hooks(*old_hooks)
        sys.unraisablehook = old_hook


def ask() -> ModelRequest:
    return ModelRequest([UserMessage(content="hi")])


WAYS_OUT = {
    "completed": Turn(text=TEXT, chunk_size=4),
    "consumer_left": Turn(text=TEXT, chunk_size=4, delay=0.005),
    "malformed": Turn(text=TEXT, chunk_size=4, fault=Fault.MALFORMED, fault_after=4),
    "error_event": Turn(text=TEXT, chunk_size=4, fault=Fault.ERROR_EVENT, fault_after=4),
    "dropped": Turn(text=TEXT, chunk_size=4, fault=Fault.RESET, fault_after=4),
    "error_status": Turn(status=400, error="no"),
    "idle": Turn(text=TEXT, chunk_size=4, fault=Fault.PINGS, fault_after=4, delay=0.02),
    "cancelled": Turn(text=TEXT, chunk_size=4, fault=Fault.STALL_MIDSTREAM, fault_after=4),
}


@pytest.mark.parametrize("way", WAYS_OUT, ids=str)
async def test_every_way_out_closes_the_stream_in_its_own_task(
    server, make_adapter, protocol, way
) -> None:
    model = make_adapter(protocol, max_attempts=1, idle_timeout=0.3)
    with no_asyncgen_hooks() as reported:
        for _ in range(3):  # a collection may come late; three rounds make one likely
            server.script(WAYS_OUT[way])
            started = asyncio.Event()
            task = asyncio.create_task(_read(model, way, started))
            if way == "cancelled":
                await asyncio.wait_for(started.wait(), 5)
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            del task
            gc.collect()
    assert reported == []


async def _read(model: object, way: str, started: asyncio.Event) -> None:
    """Read a stream the way the agent does: leave early, or fail, then close it."""
    stream = model.stream(ask())  # type: ignore[attr-defined]
    try:
        async for _event in stream:
            started.set()
            if way == "consumer_left":
                break
    except ProviderError:
        pass
    finally:
        await stream.aclose()
