"""Streaming drafts: saving what a step has shown so far, paced so that streaming never waits.

A ``kill -9`` mid-answer writes nothing, so without drafts every word a person watched arrive
would be lost (DESIGN.md, "Beyond the seed"). A `DraftWriter` belongs to one model step. The
step calls `DraftWriter.changed` for each text or reasoning delta — no I/O, no copy — and an
owned task saves a snapshot through the store's ``save_draft`` (`engine.store.SessionStore`)::

    first delta ─► (interval) ─► save ─► (interval, if more arrived) ─► save … ─► close()

So a store sees at most one draft write per `interval` seconds, never one per token, and the
first comes one interval after the step's first output (an answer shorter than that writes
none). A delta is durable at most about `interval` plus one write after it arrived. `close()`
stops the task before the step's message is appended (a write in progress finishes first);
that append deletes the draft in its own transaction. A failed draft write is logged and
does not end the request: the answer still streams and is stored when its step ends.

The snapshot is the assistant message the draft becomes if the process dies: the text and
reasoning so far, stop `interrupted` with raw ``app_stopped``, and never a tool call (a call
half streamed cannot be trusted; its name is kept in ``stop.details`` like any withheld call).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from .messages import AssistantMessage
from .sentences import sentence
from .stop import StopInfo, StopReason

__all__ = ["APP_STOPPED_TEXT", "DRAFT_INTERVAL", "DraftWriter", "app_stopped_stop"]

_log = logging.getLogger(__name__)

#: Seconds between draft writes while a step streams: under a second, so that what arrived
#: a second before a kill is on disk even counting the write itself.
DRAFT_INTERVAL = 0.8

#: The stop message of an answer recovered from a draft (English, as stored; a host shows
#: `describe_stop` in its own language).
APP_STOPPED_TEXT = sentence("stop.app_stopped")


def app_stopped_stop(withheld_tool_calls: Sequence[str] = ()) -> StopInfo:
    """The stop of an answer whose process died while it streamed (raw ``app_stopped``)."""
    details = {"withheld_tool_calls": list(withheld_tool_calls)} if withheld_tool_calls else {}
    return StopInfo(
        StopReason.INTERRUPTED, raw="app_stopped", message=APP_STOPPED_TEXT, details=details
    )


class DraftWriter:
    """Saves a streaming step's snapshot at most once per `interval` seconds.

    Args:
        save: stores one snapshot (the store's ``save_draft`` bound to the request).
        snapshot: returns the message so far, or None while there is nothing to show.
        interval: seconds between writes; the first write comes one interval after the
            first `changed`.
    """

    def __init__(
        self,
        save: Callable[[AssistantMessage], Awaitable[object]],
        snapshot: Callable[[], AssistantMessage | None],
        interval: float = DRAFT_INTERVAL,
    ) -> None:
        if interval <= 0:
            raise ValueError("the draft interval must be a positive number of seconds")
        self._save = save
        self._snapshot = snapshot
        self._interval = interval
        self._dirty = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.writes = 0  #: drafts saved so far

    def changed(self) -> None:
        """Note that the step has more to show; a save follows within `interval` seconds."""
        if self._closed:
            return
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="streaming draft")
        self._dirty.set()

    async def close(self) -> None:
        """Stop saving; a write in progress finishes before this returns. Safe to call twice."""
        self._closed = True
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        # wait() rather than awaiting the task: its own CancelledError is expected, while a
        # cancellation of the caller must still propagate.
        await asyncio.wait({task})

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            await self._dirty.wait()
            # A timer, not synchronisation: the pace of draft writes.
            await asyncio.sleep(max(0.0, last + self._interval - loop.time()))
            self._dirty.clear()
            last = loop.time()
            message = self._snapshot()
            if message is None:
                continue
            try:
                await self._save(message)
            except asyncio.CancelledError:
                raise
            except Exception:
                _log.warning("Could not save the streaming draft", exc_info=True)
                continue
            self.writes += 1
