"""`Leases`: the SQLite store's part that takes, keeps and gives back session leases.

What a lease is, who holds one and when a holder is gone: `engine.storage.lease`. Here are
the writes: taking a lease (one ``BEGIN IMMEDIATE`` transaction that also turns a draft left
by a gone holder into the message it was, `engine.storage.drafts`), the heartbeat's refresh
and the release, each only while the row's token is the lease's own. The leases this store
holds are released when it closes (`release_all`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable

import aiosqlite

from .._finish import finish
from ..errors import AgentBusyError, StorageError
from .core import StorageCore
from .drafts import settle_draft
from .lease import Lease, LeaseHolder, LeasePolicy
from .rows import HOLDER_COLUMNS

__all__ = ["Leases"]

_log = logging.getLogger(__name__)


class Leases:
    """Session leases on the core's file, judged and kept by `policy`."""

    def __init__(self, core: StorageCore, policy: LeasePolicy) -> None:
        self._core = core
        self._policy = policy
        self._held: set[Lease] = set()

    async def lease_holder(self, session_id: str) -> LeaseHolder | None:
        """Return who holds the session's lease, or None when an acquirer would get it."""
        rows = await self._core.read(
            f"SELECT {HOLDER_COLUMNS} FROM leases WHERE session_id = ?", (session_id,)
        )
        if not rows:
            return None
        holder = LeaseHolder(*rows[0])
        return None if self._policy.is_gone(holder) else holder

    async def acquire_lease(self, session_id: str) -> Lease:
        """Take the session's lease for one request; `Lease.release()` gives it back.

        A draft left by a holder that is gone becomes the assistant message it was, in the
        same transaction (see `engine.storage.drafts`).

        Raises:
            AgentBusyError: a live holder (another process, or another request of this
                one) has it; ``.holder`` is its `LeaseHolder`.
        """
        token = secrets.token_hex(16)
        here = self._policy.here()

        async def body(db: aiosqlite.Connection) -> LeaseHolder:
            now = time.time()
            rows = list(
                await db.execute_fetchall(
                    f"SELECT {HOLDER_COLUMNS} FROM leases WHERE session_id = ?", (session_id,)
                )
            )
            if rows:
                current = LeaseHolder(*rows[0])
                if not self._policy.is_gone(current):
                    raise AgentBusyError(session_id, current)
            await db.execute(
                "INSERT OR REPLACE INTO leases (session_id, host, boot_id, pid, "
                "process_started, token, acquired_at, heartbeat_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    here.host,
                    here.boot_id,
                    here.pid,
                    here.process_started,
                    token,
                    now,
                    now,
                ),
            )
            await settle_draft(db, session_id)
            return LeaseHolder(here.host, here.boot_id, here.pid, here.process_started, now, now)

        task = self._core.start_write(body)
        try:
            holder = await finish(task)
        except asyncio.CancelledError:
            # The row may be written by now; nobody would ever release it, and it names
            # this live process, so it would block the session until we exit. Undo it.
            if not task.cancelled() and task.exception() is None:
                await self._undo(session_id, token)
            raise
        lease = Lease(self, session_id, token, holder, self._policy.heartbeat_interval)
        self._held.add(lease)
        return lease

    async def _undo(self, session_id: str, token: str) -> None:
        """Delete a lease row taken for a caller that was cancelled meanwhile. A failure is
        logged, not raised: the caller's cancellation is what it hears (the row then names
        this process and is taken over once it exits)."""
        try:
            await self._core.write(_delete_row(session_id, token))
        except StorageError:
            _log.warning("A lease taken for a cancelled caller was not undone", exc_info=True)

    async def refresh_lease(self, session_id: str, token: str) -> bool:
        """The heartbeat: bump the row's time; False when the row is no longer `token`'s."""

        async def body(db: aiosqlite.Connection) -> bool:
            cursor = await db.execute(
                "UPDATE leases SET heartbeat_at = ? WHERE session_id = ? AND token = ?",
                (time.time(), session_id, token),
            )
            return cursor.rowcount > 0

        return await self._core.write(body)

    async def delete_lease(self, lease: Lease) -> None:
        """Delete the lease's row if it is still its own (`Lease.release`)."""
        self._held.discard(lease)
        await self._core.write(_delete_row(lease.session_id, lease.token))

    async def release_all(self) -> None:
        """Release every lease still held (the store closes)."""
        for lease in list(self._held):
            with contextlib.suppress(StorageError):
                await lease.release()


def _delete_row(session_id: str, token: str) -> Callable[[aiosqlite.Connection], Awaitable[None]]:
    async def body(db: aiosqlite.Connection) -> None:
        await db.execute(
            "DELETE FROM leases WHERE session_id = ? AND token = ?", (session_id, token)
        )

    return body
