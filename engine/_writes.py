"""`RequestWriter`: a request's writes to its store, each finished even if the request is
cancelled, and ``ctx.messages`` kept equal to what the store has.

Every write goes through the store contract (`engine.store.SessionStore`) and
`engine._finish.finish`: a write that started runs to its end when the request is cancelled
meanwhile, and its failure is the news the request raises (`StorageError`), never a silent
drop. ``ctx.messages`` gets a message exactly when the store has it, also when the
cancellation is raised afterwards, so clean-up (answering cut tool calls) knows what is
stored. While a new version's first message is pending (``ctx.branch_at``), the next append
goes there and moves the path in the same write.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from ._finish import finish
from .errors import ContinuoError, StorageError
from .extensions import RunContext
from .messages import AssistantMessage, Message, ToolCall, ToolMessage, ToolOutcome
from .resume import CANCELLED_TOOL_TEXT, NOT_RUN_TOOL_TEXT, interrupted_tool_result
from .store import SessionStore

__all__ = ["RequestWriter"]

_T = TypeVar("_T")


class RequestWriter:
    """The writes of one request (``ctx``) to ``store``."""

    def __init__(self, store: SessionStore, ctx: RunContext) -> None:
        self.store = store
        self.ctx = ctx

    async def append(self, message: Message) -> None:
        """Store ``message`` (see the module: finished on cancel, ``ctx.messages`` kept).

        Raises:
            StorageError: it was not stored.
            LeaseLostError: another process took the lease over.
        """
        await finish(self._append(message))

    async def _append(self, message: Message) -> None:
        ctx = self.ctx
        if ctx.branch_at is None:
            await _await_write(self.store.append(ctx, message))
        else:
            await _await_write(self.store.append(ctx, message, parent=ctx.branch_at))
        ctx.messages.append(message)
        ctx.branch_at = None  # stored there, it is the active leaf: the rest follows it

    async def append_many(self, messages: Sequence[Message]) -> None:
        """Store ``messages`` one under the other in one write (all or none); like `append`,
        a started write finishes and ``ctx.messages`` gets exactly what the store has."""
        if messages and self.ctx.branch_at is not None:
            # A new version's first message moves the path with it (never expected for a
            # batch, which follows the answer asking for the calls; kept whole if it comes).
            await self.append(messages[0])
            messages = messages[1:]
        if messages:
            await finish(self._append_many(list(messages)))

    async def _append_many(self, messages: list[Message]) -> None:
        await _await_write(self.store.append_many(self.ctx, messages))
        self.ctx.messages.extend(messages)

    async def save_draft(self, draft: AssistantMessage) -> None:
        """Keep the streaming step's draft; a new version's first answer settles at its
        branch point."""
        ctx = self.ctx
        if ctx.branch_at is None:
            await self.store.save_draft(ctx, draft)
        else:
            await self.store.save_draft(ctx, draft, parent=ctx.branch_at)

    async def record_tool_start(self, call: ToolCall) -> None:
        """Record durably that ``call`` is about to run; if this raises, it must not run."""
        await finish(_await_write(self.store.record_tool_start(self.ctx, call)))

    async def close_cut_calls(self, calls: Sequence[ToolCall], running: str | None) -> None:
        """After a Stop, answer each of ``calls`` that has no stored result yet: the one
        ``running`` as cancelled, the others as not run.

        The results stored so far are the trailing tool messages of ``ctx.messages`` (a
        result whose write the Stop interrupted is among them: `append` finishes it).
        """
        answered: set[str] = set()
        for message in reversed(self.ctx.messages):
            if not isinstance(message, ToolMessage):
                break
            answered.add(message.tool_call_id)
        results = [
            interrupted_tool_result(call, CANCELLED_TOOL_TEXT)
            if call.id == running
            else interrupted_tool_result(call, NOT_RUN_TOOL_TEXT, ToolOutcome.NOT_RUN)
            for call in calls
            if call.id not in answered
        ]
        if results:
            # One write for them all (an answer may have asked for many calls).
            with contextlib.suppress(asyncio.CancelledError):
                await self.append_many(results)  # cancelled again: the write finished


async def _await_write(write: Awaitable[_T]) -> _T:
    """Await a store's write; any failure to store becomes a `StorageError`.

    A host's store may raise anything: whatever it raises, the message was not stored, and
    the host must hear it as such (never a silent drop). The engine's own errors (a lost
    lease) pass unchanged.
    """
    try:
        return await write
    except ContinuoError:
        raise
    except Exception as exc:
        raise StorageError(
            key="storage.append_failed", params={"detail": f"{type(exc).__name__}: {exc}"}
        ) from exc
