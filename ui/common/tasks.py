"""Owned tasks: every piece of background work the window starts is a task someone owns.

`OwnedTasks` keeps each task it starts until the task finishes (so none is dropped by the
garbage collector or left dangling at close), names it, and logs the failure of any task that
raised with its traceback, then hands the exception to the owner's ``on_error`` (to show it).
The controller and the settings dialog each own one; closing waits for (or cancels) what is
left. Tasks marked ``keep`` (a settings save) are not cancelled by `cancel`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["OwnedTasks", "Spawn"]

log = logging.getLogger(__name__)

#: runs a coroutine as an owned task, named (what a part is given instead of its owner)
Spawn = Callable[[Coroutine[Any, Any, Any], str], "asyncio.Task[Any]"]


class OwnedTasks:
    """The tasks one owner (a controller, a dialog) started and has not seen finish."""

    def __init__(
        self,
        owner: str,
        on_error: Callable[[BaseException], None] | None = None,
        on_done: Callable[[asyncio.Task[Any]], None] | None = None,
    ) -> None:
        self._owner = owner
        self._on_error = on_error
        self._on_done = on_done
        self._tasks: set[asyncio.Task[Any]] = set()
        self._kept: set[asyncio.Task[Any]] = set()

    def spawn(
        self, coro: Coroutine[Any, Any, Any], name: str = "", *, keep: bool = False
    ) -> asyncio.Task[Any]:
        """Run ``coro`` as an owned task named ``name``; ``keep`` ones survive `cancel`."""
        task = asyncio.ensure_future(coro)
        task.set_name(name or self._owner)
        self._tasks.add(task)
        if keep:
            self._kept.add(task)
        task.add_done_callback(self._done)
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Any:
        return iter(set(self._tasks))

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        self._kept.discard(task)
        if self._on_done is not None:
            self._on_done(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("task %r failed: %s", task.get_name(), exc, exc_info=exc)
            if self._on_error is not None:
                self._on_error(exc)

    def cancel(self) -> None:
        """Cancel every task not marked ``keep``."""
        for task in self._tasks - self._kept:
            task.cancel()

    async def wait_idle(self) -> None:
        """Wait until every owned task (and any they start meanwhile) has finished."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def finish(self, grace: float = 3, cancel_wait: float = 5) -> None:
        """Give the other tasks ``grace`` seconds to finish, then cancel what is left."""
        others = {t for t in self._tasks if t is not asyncio.current_task()}
        if not others:
            return
        _, late = await asyncio.wait(others, timeout=grace)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late, timeout=cancel_wait)
