"""Blocking work (file writes, parsing) off the event loop, safe to cancel.

The window runs exports and imports on its GUI thread's loop, so every read, write and parse
of a file runs in a worker thread. A caller cancelled while such a call runs must not go on
(close the file, delete it) while the thread still uses it: `in_thread` waits for the call
to finish, then lets the cancellation through (`engine._finish.finish`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from .._finish import finish

__all__ = ["in_thread"]

_T = TypeVar("_T")


async def in_thread(
    func: Callable[..., _T], *args: Any, stop: threading.Event | None = None
) -> _T:
    """``await asyncio.to_thread(func, *args)``, but a cancellation waits for `func` to end.

    With `stop`, a cancellation sets it first: `func` is expected to look at it often (an
    import reads its file in small steps) and end soon.

    Raises:
        asyncio.CancelledError: the caller was cancelled (after `func` ended, whatever it
            returned or raised).
    """
    return await finish(
        asyncio.to_thread(func, *args),
        on_cancel=None if stop is None else stop.set,
        # Cancelled, the caller throws the outcome away (the export deletes its file, the
        # import stops): even a failure (often the stop itself) is not news.
        discard_on_cancel=True,
    )
