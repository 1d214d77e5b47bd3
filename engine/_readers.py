"""Tail readers (`engine.resume.TailReader`) for deciding a resume point.

`find_resume_point` reads a history's tail page by page, newest last; these give it the
store's tail, a list's (a request's own ``ctx.messages``), and a store's tail with a dead
process's draft seen as its last record.
"""

from __future__ import annotations

from collections.abc import Sequence

from .extensions import RunContext
from .messages import Message
from .resume import TailReader
from .store import SessionStore, StoredMessage

__all__ = ["list_reader", "store_reader", "with_draft"]


def store_reader(store: SessionStore, ctx: RunContext) -> TailReader:
    """The tail of the session's active path, as the store keeps it."""

    async def read(limit: int, before: int | None) -> Sequence[StoredMessage]:
        return await store.restore_tail(ctx, limit, before)

    return read


def list_reader(messages: Sequence[Message]) -> TailReader:
    """The tail of ``messages`` (numbered 1, 2, 3… as a store would)."""
    records = [StoredMessage(i + 1, "", m) for i, m in enumerate(messages)]

    async def read(limit: int, before: int | None) -> Sequence[StoredMessage]:
        end = len(records) if before is None else before - 1
        return records[max(0, end - limit) : end]

    return read


def with_draft(read_tail: TailReader, draft: StoredMessage) -> TailReader:
    """A tail reader that sees `draft` as the last stored record (its seq is the next one),
    on the branch it settles on: its ancestors are read as those of its seq."""

    async def read(limit: int, before: int | None) -> Sequence[StoredMessage]:
        if before is not None and before <= draft.seq:
            return await read_tail(limit, before)
        records = list(await read_tail(limit, draft.seq))
        return [*records, draft][-limit:]

    return read
