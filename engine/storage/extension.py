"""`SQLiteSessionExtension`: the store contract (`engine.store.SessionStore`) on one SQLite file.

It implements every method of the contract with `SQLiteSessionStorage`: drafts are kept (a
draft is written with the request's lease token, so only the lease's holder can write it),
tool starts are recorded, versions are kept, and ``acquire`` returns the storage's `Lease`,
whose ``wait_lost()`` the agent watches. The lease a request takes is kept here keyed by its
request id, so two requests of one extension on different sessions (or a refused second
one) never mix up their leases, and every write of a request is fenced by its own lease
(`LeaseLostError` once another process took it over). `fork` copies a conversation's path
into a new one, settling a dead process's draft first.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from .._session_ops import settle_draft
from ..attachments import Blob
from ..extensions import Extension, RunContext
from ..messages import AssistantMessage, Message, ToolCall
from ..store import BlobStore, Root, SessionStore, StoredMessage
from .lease import Lease
from .sqlite import SQLiteSessionStorage

__all__ = ["SQLiteSessionExtension"]


class SQLiteSessionExtension(Extension, SessionStore, BlobStore):
    """Durable history for an agent in one SQLite file.

    Args:
        path_or_storage: the database file, or an existing `SQLiteSessionStorage` to share
            (for instance with the window's conversation list). A storage passed in is not
            closed by `close()`; one this extension opened is.
        **storage_kwargs: passed to `SQLiteSessionStorage` when a path is given.
    """

    def __init__(
        self, path_or_storage: str | os.PathLike[str] | SQLiteSessionStorage, **storage_kwargs: Any
    ) -> None:
        if isinstance(path_or_storage, SQLiteSessionStorage):
            if storage_kwargs:
                raise TypeError("storage settings go to the SQLiteSessionStorage, not here")
            self.storage = path_or_storage
            self._owns_storage = False
        else:
            self.storage = SQLiteSessionStorage(path_or_storage, **storage_kwargs)
            self._owns_storage = True
        self._leases: dict[str, Lease] = {}

    def __repr__(self) -> str:
        return f"<SQLiteSessionExtension {str(self.storage.path)!r}>"

    async def close(self) -> None:
        """Release leases still held and close the storage if this extension opened it."""
        leases, self._leases = list(self._leases.values()), {}
        for lease in leases:
            await lease.release()
        if self._owns_storage:
            await self.storage.close()

    async def fork(self, session_id: str, message_id: str, *, title: str | None = None) -> str:
        """A new conversation holding the path from the root to ``message_id``; its id.

        A draft a dead process left is first settled under the session's lease
        (`settle_draft`), so the copy holds the answer that process was streaming.

        Raises:
            MessageNotFoundError: no such message in the conversation.
            AgentBusyError: a request took the session while its draft was settled.
        """
        await settle_draft(self, session_id)
        return await self.storage.fork_session(session_id, message_id, title=title)

    async def restore(self, ctx: RunContext, *, leaf: str | Root | None = None) -> list[Message]:
        """Return the session's whole history, oldest first (the path to ``leaf`` if given:
        ``[]`` for `ROOT`)."""
        return await self.storage.load(ctx.session_id, leaf=leaf)

    async def restore_tail(
        self, ctx: RunContext, limit: int, before_seq: int | None = None
    ) -> list[StoredMessage]:
        """Return the session's last `limit` stored messages, oldest first."""
        return await self.storage.load_tail(ctx.session_id, limit, before_seq)

    async def append(
        self,
        ctx: RunContext,
        message: Message,
        *,
        parent: str | Root | None = None,
        blobs: Sequence[Blob] = (),
    ) -> None:
        """Store one completed message, and the bytes its attachments refer to, in its own
        transaction, fenced by the request's lease, under the active leaf or under
        ``parent`` (`ROOT`: as a root); it becomes the leaf.

        Raises:
            LeaseLostError: another process took this request's lease over.
            MessageNotFoundError: there is no message ``parent``.
            StorageError: ``storage.missing_blob``: an attachment's bytes are neither given
                nor stored.
        """
        lease = self._leases.get(ctx.request_id)
        await self.storage.append(
            ctx.session_id, ctx.request_id, message, lease=lease, parent=parent, blobs=blobs
        )

    async def append_many(
        self, ctx: RunContext, messages: Sequence[Message], *, blobs: Sequence[Blob] = ()
    ) -> None:
        """Store several completed messages (and their attachments' bytes) in one
        transaction (all or none), fenced by the request's lease.

        Raises:
            LeaseLostError: another process took this request's lease over.
        """
        lease = self._leases.get(ctx.request_id)
        await self.storage.append_many(
            ctx.session_id, ctx.request_id, messages, lease=lease, blobs=blobs
        )

    async def read_blob(self, sha256: str) -> Blob | None:
        """An attachment's stored bytes, or None (`engine.store.BlobStore`)."""
        return await self.storage.read_blob(sha256)

    async def branch(self, ctx: RunContext, message_id: str | None) -> None:
        """Make ``message_id`` the active leaf (None: before the first message), fenced by
        the request's lease: the request's next append starts a branch under it.

        Raises:
            MessageNotFoundError: no such message.
            LeaseLostError: another process took this request's lease over.
        """
        lease = self._leases.get(ctx.request_id)
        await self.storage.branch_from(ctx.session_id, message_id, lease=lease)

    async def switch_to(self, ctx: RunContext, message_id: str) -> str:
        """Make the newest leaf under ``message_id`` active, fenced by the request's lease;
        return its id."""
        lease = self._leases.get(ctx.request_id)
        return await self.storage.switch_to(ctx.session_id, message_id, lease=lease)

    async def parent_of(self, ctx: RunContext, message_id: str) -> tuple[str | None, str]:
        """The message's parent id (None for a root) and its type name."""
        return await self.storage.parent_of(ctx.session_id, message_id)

    async def save_draft(
        self, ctx: RunContext, message: AssistantMessage, *, parent: str | Root | None = None
    ) -> None:
        """Keep what the request's streaming step has shown so far, in its own transaction;
        it settles under the active leaf, or under ``parent``."""
        lease = self._leases.get(ctx.request_id)
        await self.storage.save_draft(
            ctx.session_id,
            ctx.request_id,
            message,
            None if lease is None else lease.token,
            parent=parent,
        )

    async def restore_draft(self, ctx: RunContext) -> StoredMessage | None:
        """Return the draft a gone holder left, as the message it will become (reads only)."""
        return await self.storage.load_draft(ctx.session_id)

    async def record_tool_start(self, ctx: RunContext, call: ToolCall) -> None:
        """Record that ``call`` is about to run, fenced by the request's lease.

        Raises:
            LeaseLostError: another process took this request's lease over (the tool must
                not run).
        """
        lease = self._leases.get(ctx.request_id)
        await self.storage.record_tool_start(ctx.session_id, call.id, lease=lease)

    async def started_tool_calls(self, ctx: RunContext, asker: AssistantMessage) -> set[str] | None:
        """Return the ids of ``asker``'s tool calls that started, or None when unknown.

        Unknown: ``asker`` was created before this file recorded tool starts (an older
        version wrote it), so a call without a record may still have run.
        """
        if asker.created_at <= await self.storage.tool_starts_recorded_since():
            return None
        return await self.storage.started_tool_calls(
            ctx.session_id, (call.id for call in asker.tool_calls)
        )

    async def acquire(self, ctx: RunContext) -> Lease:
        """Take the session's lease for this request and return it.

        Raises:
            AgentBusyError: another request (here or in another process) holds it.
        """
        lease = await self.storage.acquire_lease(ctx.session_id)
        self._leases[ctx.request_id] = lease
        return lease

    async def release(self, ctx: RunContext) -> None:
        """Give back the lease this request took (nothing happens if it took none)."""
        lease = self._leases.pop(ctx.request_id, None)
        if lease is not None:
            await lease.release()
