"""`LeaseWatch`: ends a request whose lease another process took over.

A process stopped past the lease's staleness limit (a laptop lid closed, a debugger) may find
its conversation taken over when it wakes. The storage's fence already refuses every append
it still tries; the watch ends the request itself as soon as the lease's heartbeat notices,
instead of at its next write (a model call can stream for minutes).
"""

from __future__ import annotations

import asyncio
from typing import Any

from .errors import LeaseLostError
from .store import StoreLease

__all__ = ["LeaseWatch"]


class LeaseWatch:
    """Ends a request whose lease was lost: cancels the body while it runs, then says why.

    The lease is what the store's ``acquire`` returned (a `StoreLease`, or None for a store
    whose leases cannot be lost). `running` is the task driving the request's body at this
    moment (None while an event is with the consumer), so the cancel never lands in the
    consumer's own code.
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.running: asyncio.Task[Any] | None = None
        self.lost = False
        self._cancelled: asyncio.Task[Any] | None = None
        self._task: asyncio.Task[None] | None = None

    def watch(self, lease: StoreLease | None) -> None:
        """Start watching ``lease`` (nothing to watch for None)."""
        if lease is not None:
            self._task = asyncio.get_running_loop().create_task(
                self._wait(lease), name=f"lease watch {self.session_id}"
            )

    async def _wait(self, lease: StoreLease) -> None:
        await lease.wait_lost()
        self.lost = True
        if self.running is not None:
            self._cancelled = self.running
            self.running.cancel()

    def check(self, error: BaseException | None = None) -> None:
        """Raise `LeaseLostError` if the lease was lost, taking back the cancel it caused.

        `error` is what the body raised, if it did: the storage's own `LeaseLostError`
        (which names the new holder) is kept.
        """
        if not self.lost:
            return
        if self._cancelled is not None:
            task, self._cancelled = self._cancelled, None
            task.uncancel()  # our cancel is answered by this error, not a CancelledError
        if isinstance(error, LeaseLostError):
            raise error
        raise LeaseLostError(self.session_id) from None

    async def stop(self) -> None:
        """Stop watching (the request ended)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})
