"""Finishing what was started: work that began (a write, a close) runs to its end even if the
task awaiting it is cancelled.

A write abandoned half-way would leave the shared connection inside an open transaction, a
message neither stored nor known to be lost, or a lease row naming a live process that nobody
will release. So the work runs as its own task and the caller waits for it through
`asyncio.shield`. If the caller is cancelled, it keeps waiting, through further cancellations,
until the work is done; then:

* the work succeeded, or was itself cancelled: `CancelledError` is raised (the caller was
  cancelled; what it started is complete);
* the work failed: its exception is raised (with the cancellation as its context), because
  what was not done is the news the caller must hear: a message that was not stored is never
  reported as kept.

Bookkeeping that must happen exactly when the work succeeds ("this message is stored")
belongs inside the awaited coroutine, so it runs even when the caller was cancelled. A caller
that must undo finished work after a cancel (a lease taken for nobody) passes a task it made
and looks at it afterwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["finish"]

_T = TypeVar("_T")


async def finish(work: Awaitable[_T]) -> _T:
    """Await ``work`` to its end, even if this task is cancelled meanwhile (see the module).

    Raises:
        CancelledError: this task was cancelled (after ``work`` completed), or ``work`` was.
        Exception: whatever ``work`` raised, also when this task was cancelled meanwhile.
    """
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        while not task.done():
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError:
                continue  # cancelled again: what was started still finishes
        if not task.cancelled() and (error := task.exception()) is not None:
            raise error from None
        raise
