"""Two ways to drive an `Agent` without iterating its stream by hand.

- `AgentClient(agent, on_event=...)`: async; every event of a request is handed to a callback
  (sync or async) while ``run``/``resume`` return the final message.
- `SyncAgent(model, config=..., tools=..., extensions=...)`: blocking, for scripts. It owns an
  event loop on a background thread, where the agent, its storage and its model's connections
  live; ``close()`` (or leaving the ``with`` block) closes extensions that have ``close``,
  then the model (``aclose``), and stops the loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import aclosing
from typing import Any, TypeVar

from .agent import Agent, AgentRunConfig
from .events import AgentEvent, AgentEventType
from .goal import Goal
from .messages import AssistantMessage
from .resume import ResumePoint

__all__ = ["AgentClient", "SyncAgent"]

T = TypeVar("T")


class AgentClient:
    """Callbacks around an agent: ``on_event(event)`` sees every event of each request."""

    def __init__(self, agent: Agent, on_event: Callable[[AgentEvent], Any] | None = None) -> None:
        self.agent = agent
        self.on_event = on_event

    async def _drive(self, events: AsyncIterator[AgentEvent]) -> AssistantMessage:
        final: AssistantMessage | None = None
        async for event in self._observe(events):
            if event.type is AgentEventType.RUN_COMPLETED:
                final = event.message  # type: ignore[assignment]
        assert final is not None
        return final

    async def _observe(self, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        # Close the agent's stream as soon as this one ends (closed early, or a callback
        # raised): that stores the partial and releases the lease now, not at garbage
        # collection.
        async with aclosing(events):  # type: ignore[type-var]
            async for event in events:
                if self.on_event is not None:
                    result = self.on_event(event)
                    if inspect.isawaitable(result):
                        await result
                yield event

    async def run(self, text: str, **kwargs: Any) -> AssistantMessage:
        return await self._drive(self.agent.stream(text, **kwargs))

    def stream(self, text: str, **kwargs: Any) -> AsyncIterator[AgentEvent]:
        return self._observe(self.agent.stream(text, **kwargs))

    async def resume(self, **kwargs: Any) -> AssistantMessage:
        return await self._drive(self.agent.stream_resume(**kwargs))

    def stream_resume(self, **kwargs: Any) -> AsyncIterator[AgentEvent]:
        return self._observe(self.agent.stream_resume(**kwargs))

    async def resume_point(self, **kwargs: Any) -> ResumePoint | None:
        return await self.agent.resume_point(**kwargs)


class SyncAgent:
    """A blocking agent: the same requests, answered synchronously."""

    def __init__(
        self,
        model: Any,
        config: AgentRunConfig | None = None,
        tools: Iterable[Any] = (),
        extensions: Iterable[Any] = (),
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="continuo-sync-agent", daemon=True
        )
        self._thread.start()
        self._closed = False
        self.agent: Agent = self._call(Agent.create(model, config, tools, extensions))

    def _call(self, coro: Awaitable[T]) -> T:
        if self._closed:
            if inspect.iscoroutine(coro):
                coro.close()
            raise RuntimeError("This SyncAgent is closed.")
        started: concurrent.futures.Future[asyncio.Future[T]] = concurrent.futures.Future()
        finished = threading.Event()

        def start() -> None:
            task = asyncio.ensure_future(coro)
            task.add_done_callback(lambda _: finished.set())
            started.set_result(task)

        self._loop.call_soon_threadsafe(start)
        task = started.result()
        try:
            finished.wait()
        except BaseException:
            # This thread was interrupted (Ctrl-C is a script's Stop): stop the request on
            # the loop too, and wait until it has stored its partial and released its lease.
            self._loop.call_soon_threadsafe(task.cancel)
            finished.wait()
            raise
        return task.result()

    def _iterate(self, events: AsyncIterator[AgentEvent]) -> Iterator[AgentEvent]:
        try:
            while True:
                try:
                    yield self._call(events.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            if not self._closed:
                self._call(events.aclose())  # type: ignore[attr-defined]

    def run(self, text: str, *, goal: Goal | None = None, **kwargs: Any) -> AssistantMessage:
        return self._call(self.agent.run(text, goal=goal, **kwargs))

    def stream(self, text: str, **kwargs: Any) -> Iterator[AgentEvent]:
        return self._iterate(self.agent.stream(text, **kwargs))

    def resume(self, **kwargs: Any) -> AssistantMessage:
        return self._call(self.agent.resume(**kwargs))

    def stream_resume(self, **kwargs: Any) -> Iterator[AgentEvent]:
        return self._iterate(self.agent.stream_resume(**kwargs))

    def resume_point(self, **kwargs: Any) -> ResumePoint | None:
        return self._call(self.agent.resume_point(**kwargs))

    def close(self) -> None:
        """Close extensions that have ``close``, then the model, and stop the loop.

        The model is closed here, on the loop that used it: an adapter's pooled connections
        belong to that loop, and a script has no other loop to close them on. Safe to call
        twice.
        """
        if self._closed:
            return

        async def close_all() -> None:
            for ext in self.agent.extensions:
                close = getattr(ext, "close", None)
                if close is not None:
                    result = close()
                    if inspect.isawaitable(result):
                        await result
            aclose = getattr(self.agent.model, "aclose", None)
            if aclose is not None:
                await aclose()

        self._call(close_all())
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> SyncAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
