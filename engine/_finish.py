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

Two options cover work whose outcome a cancelled caller throws away (a file being exported
is deleted on cancel; an import stops reading): ``on_cancel`` is called once, when the caller
is first cancelled, to ask the work to stop early (it sets a `threading.Event` the work looks
at); with ``discard_on_cancel``, a cancelled caller gets `CancelledError` whatever the work
did, its failure included (often the very stop it was asked for).

Bookkeeping that must happen exactly when the work succeeds ("this message is stored")
belongs inside the awaited coroutine, so it runs even when the caller was cancelled. A caller
that must undo finished work after a cancel (a lease taken for nobody) passes a task it made
and looks at it afterwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["finish"]

_T = TypeVar("_T")


async def finish(
    work: Awaitable[_T],
    *,
    on_cancel: Callable[[], object] | None = None,
    discard_on_cancel: bool = False,
) -> _T:
    """Await ``work`` to its end, even if this task is cancelled meanwhile (see the module).

    Args:
        work: the work; a coroutine is run as a task of its own.
        on_cancel: called once, when this task is first cancelled, before waiting.
        discard_on_cancel: once this task is cancelled, raise `CancelledError` even if
            ``work`` failed.

    Raises:
        CancelledError: this task was cancelled (after ``work`` completed), or ``work`` was.
        Exception: whatever ``work`` raised, also when this task was cancelled meanwhile
            (unless ``discard_on_cancel``).
    """
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if on_cancel is not None and not task.done():
            on_cancel()
        while not task.done():
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError:
                continue  # cancelled again: what was started still finishes
        if not task.cancelled() and (error := task.exception()) is not None:
            if not discard_on_cancel:
                raise error from None
        raise
