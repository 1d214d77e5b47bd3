"""When a failed request is tried again, and after how long.

A request is retried only before the first event reached the caller (`HTTPModel.stream`
runs the loop); once anything arrived the agent keeps it and Resume goes on from there::

    attempt ─► error before any event? ─ no ─► raise (the agent keeps the partial)
                     │ yes
               retryable (connection, timeout, 408/409/429/5xx/529) and attempts,
               Retry-After cap and total time allow? ─ no ─► raise
                     │ yes
               yield ModelEvent.retrying(...) ─► wait (Retry-After, else exponential
               backoff with jitter) ─► next attempt

An error event saying the server is in trouble (overloaded, server error) counts as
retryable too. Whether an error is retryable is said where it is built (`_errors`, its
``retryable`` and ``retry_after``); this module holds the statuses, the reading of
``Retry-After`` and the wait.
"""

from __future__ import annotations

import contextlib
import email.utils
import random
import time
from collections.abc import Mapping
from datetime import UTC

from ..errors import ProviderError

__all__ = ["parse_retry_after", "retry_wait", "retryable_status"]

#: statuses worth another attempt besides every 5xx (incl. 529): timeouts, conflicts, rate limits
_RETRY_STATUSES = frozenset({408, 409, 429})

#: the longest backoff between two attempts, in seconds
_MAX_BACKOFF = 8.0


def retryable_status(status: int) -> bool:
    """Whether an HTTP error status is worth another attempt (a 401 or a quota is not,
    decided by the caller, which knows the code)."""
    return status in _RETRY_STATUSES or status >= 500


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Return the wait a response asks for, in seconds, or None.

    Reads ``retry-after-ms`` (OpenAI), then ``Retry-After`` as seconds or as an HTTP date.
    """
    value = headers.get("retry-after-ms")
    if value:
        with contextlib.suppress(ValueError):
            return max(0.0, float(value) / 1000.0)
    value = headers.get("retry-after")
    if not value:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_wait(exc: ProviderError, attempt: int, max_attempts: int, backoff: float) -> float | None:
    """The seconds to wait before the next attempt after ``exc``, or None: do not retry.

    Args:
        exc: the failure of attempt number ``attempt`` (the first is 1).
        max_attempts: requests in all for one call.
        backoff: the first backoff in seconds; it doubles per attempt, capped at 8 s, less up
            to a quarter of jitter. A ``retry_after`` the error carries is waited instead.
    """
    if not exc.retryable or attempt >= max_attempts:
        return None
    if exc.retry_after is not None:
        return float(exc.retry_after)
    wait = min(backoff * 2 ** (attempt - 1), _MAX_BACKOFF)
    return float(wait * (1.0 - 0.25 * random.random()))
