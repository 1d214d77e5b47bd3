"""What a running request keeps in the SQLite file besides its messages: the draft of the
step streaming now, and a record of each tool call it starts (`Drafts`, a part of the store).

A ``kill -9`` writes nothing, so what a person watched arrive would die with the process.
While a step streams, the request keeps its text and reasoning so far as one row of
``drafts`` (DESIGN.md, "Beyond the seed"). Invariants:

* One row per session, written by an UPSERT in its own small transaction; the pacing (at
  most about one write a second, never one per token) is `engine.drafts.DraftWriter`'s.
* ``body`` is the JSON of the very assistant message the draft becomes if its writer dies:
  text and reasoning so far, stop ``interrupted`` (raw ``app_stopped``), never a tool call.
* The append that stores a request's message deletes that request's draft in the same
  transaction (`DELETE_REQUEST_DRAFT`), so a draft never becomes a second copy of a message
  that was completed.
* A draft written under a lease is written only while that lease's token is still the
  session's, checked in the same transaction: a holder that lost its lease cannot overwrite
  the new holder's draft.
* Whoever acquires the lease turns a draft left behind into a stored message, inside the
  acquiring transaction (`settle_draft`): the lease being free proves its writer has gone,
  or its request ended without storing its answer. A live holder's draft is never touched.
* Readers see a dead holder's draft as the message it will become (`Drafts.load_draft`),
  without writing anything.
* A draft belongs to the branch it was written on: it keeps the active leaf of that moment,
  or the parent its request named (a regenerated answer's question, while nothing of the new
  answer is stored and the path still shows the old one), as ``parent_seq``, and settles
  under it, becoming the session's active leaf (see `engine.storage.tree`). Readers walk up
  from the draft's parent (`FROM_PARENT_OF` with the draft's seq), so a dead regenerate's
  draft shows on its own branch before it settles.

Just before a tool call runs, its request records that it started (`record_tool_start`,
fenced like an append). These records are not messages: no history reader returns them;
resume reads them (`started_tool_calls`) to tell a call that never started from one that may
have run. Files older than those records say nothing about earlier calls
(`tool_starts_recorded_since`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable

import aiosqlite

from ..extensions import Root, StoredMessage
from ..messages import AssistantMessage, message_to_json
from .core import StorageCore
from .lease import Lease, LeaseHolder, LeasePolicy, fence
from .migrations import TOOL_STARTS_MIGRATION
from .rows import stored
from .tree import PARENT_SEQ, MessageTree

__all__ = [
    "DELETE_REQUEST_DRAFT",
    "READ_DRAFT",
    "Drafts",
    "settle_draft",
    "upsert_draft",
]

#: Run by every append, in its transaction: the request's own draft goes with its message.
DELETE_REQUEST_DRAFT = "DELETE FROM drafts WHERE session_id = ? AND request_id = ?"

#: The draft, its writer's token, the session's lease (if any) and the last seq, in one read.
READ_DRAFT = (
    "SELECT d.request_id, d.token, d.body, "
    "(SELECT MAX(m.seq) FROM messages m WHERE m.session_id = d.session_id), "
    "l.token, l.host, l.boot_id, l.pid, l.process_started, l.acquired_at, l.heartbeat_at "
    "FROM drafts d LEFT JOIN leases l ON l.session_id = d.session_id "
    "WHERE d.session_id = ?"
)


async def upsert_draft(
    db: aiosqlite.Connection,
    session_id: str,
    request_id: str,
    token: str | None,
    message: AssistantMessage,
    now: float,
    under: tuple[bool, int | None, str],
) -> bool:
    """Write the session's draft; return False when `token` no longer holds the lease.

    Runs inside the caller's transaction. With `token` None (no lease) it always writes.
    `under` says where the draft settles: the parameters of `PARENT_SEQ`.
    """
    cursor = await db.execute(
        "INSERT INTO drafts "
        "(session_id, request_id, token, id, created_at, updated_at, body, parent_seq) "
        f"SELECT ?, ?, ?, ?, ?, ?, ?, {PARENT_SEQ} "
        "WHERE ? IS NULL OR EXISTS "
        "(SELECT 1 FROM leases WHERE session_id = ? AND token = ?) "
        "ON CONFLICT (session_id) DO UPDATE SET request_id = excluded.request_id, "
        "token = excluded.token, id = excluded.id, created_at = excluded.created_at, "
        "updated_at = excluded.updated_at, body = excluded.body, "
        "parent_seq = excluded.parent_seq",
        (
            session_id,
            request_id,
            token,
            message.id,
            message.created_at,
            now,
            message_to_json(message),
            *under,
            token,
            session_id,
            token,
        ),
    )
    return cursor.rowcount > 0


async def settle_draft(db: aiosqlite.Connection, session_id: str) -> bool:
    """Store the session's draft as its last message and delete it; False if there was none.

    Runs inside the lease-acquiring transaction, after the lease was found free: whatever
    draft is left belongs to a writer that no longer holds the lease.
    """
    rows = list(
        await db.execute_fetchall(
            "INSERT INTO messages "
            "(session_id, seq, request_id, id, type, created_at, body, parent_seq) "
            "SELECT d.session_id, "
            "COALESCE((SELECT MAX(m.seq) FROM messages m WHERE m.session_id = d.session_id), 0)"
            " + 1, d.request_id, d.id, ?, d.created_at, d.body, d.parent_seq "
            "FROM drafts d WHERE d.session_id = ? RETURNING seq",
            (AssistantMessage.type_name, session_id),
        )
    )
    if not rows:
        return False
    # The settled answer is what its branch ends in now: the active leaf.
    await db.execute("UPDATE sessions SET active_seq = ? WHERE id = ?", (rows[0][0], session_id))
    await db.execute("DELETE FROM drafts WHERE session_id = ?", (session_id,))
    return True


class Drafts:
    """The drafts and tool start records of the SQLite store, on the core's connections."""

    def __init__(self, core: StorageCore, tree: MessageTree, policy: LeasePolicy) -> None:
        self._core = core
        self._tree = tree
        self._policy = policy
        self._tool_starts_since: float | None = None  #: read once (tool_starts_recorded_since)

    async def save_draft(
        self,
        session_id: str,
        request_id: str,
        message: AssistantMessage,
        token: str | None = None,
        *,
        parent: str | Root | None = None,
    ) -> bool:
        """Keep `message` as the session's draft (what its streaming step has shown so far).

        One UPSERT in its own transaction. `message` is stored as the message the draft
        becomes if its writer dies, under the active leaf of this moment or under `parent`
        (a regenerated answer's question). With a lease `token`, the draft is written only
        while that token still holds the session's lease.

        Returns:
            False when `token` no longer holds the lease (nothing was written).

        Raises:
            MessageNotFoundError: there is no message `parent`; nothing was written.
        """

        async def body(db: aiosqlite.Connection) -> bool:
            under = await self._tree.parent_seq(db, session_id, parent)
            return await upsert_draft(
                db, session_id, request_id, token, message, time.time(), under
            )

        return await self._core.write(body)

    async def load_draft(self, session_id: str) -> StoredMessage | None:
        """Return the draft a gone holder left, as the message it will become; or None.

        A draft whose writer still holds the session's lease (alive, same token) is that
        request's business and is not returned. The record's ``seq`` is the one the message
        will get. Reads only.

        Raises:
            CorruptDatabaseError: the draft is unreadable.
        """
        rows = await self._core.read(READ_DRAFT, (session_id,))
        if not rows:
            return None
        request_id, token, body, last_seq, lease_token, *holder_fields = rows[0]
        if lease_token is not None and lease_token == token:
            if not self._policy.is_gone(LeaseHolder(*holder_fields)):
                return None
        return stored(((last_seq or 0) + 1, request_id, body), session_id, self._core.path)

    async def record_tool_start(
        self, session_id: str, tool_call_id: str, *, lease: Lease | None = None
    ) -> None:
        """Record, durably, that the tool call `tool_call_id` is about to run.

        One transaction, fenced by `lease` like an append; once called, the write completes
        even if the caller is cancelled. Recording a call twice keeps one row. The session
        must exist (its assistant message asking for the call is stored first).

        Raises:
            LeaseLostError: `lease` was taken over by another process; nothing was written
                (and the tool must not run).
        """
        if lease is not None and lease.session_id != session_id:
            raise ValueError(f"the lease is for {lease.session_id!r}, not {session_id!r}")

        async def body(db: aiosqlite.Connection) -> None:
            if lease is not None:
                await fence(db, lease)
            await db.execute(
                "INSERT INTO tool_starts (session_id, tool_call_id, started_at) VALUES (?, ?, ?) "
                "ON CONFLICT (session_id, tool_call_id) DO UPDATE SET started_at = "
                "excluded.started_at",
                (session_id, tool_call_id, time.time()),
            )

        await self._core.write(body)

    async def started_tool_calls(self, session_id: str, ids: Iterable[str]) -> set[str]:
        """Return which of the tool call `ids` of the session have a start record."""
        # One JSON array parameter, however many ids (SQLite limits the number of parameters).
        rows = await self._core.read(
            "SELECT tool_call_id FROM tool_starts WHERE session_id = ? AND tool_call_id IN "
            "(SELECT value FROM json_each(?))",
            (session_id, json.dumps(list(ids))),
        )
        return {str(row[0]) for row in rows}

    async def tool_starts_recorded_since(self) -> float:
        """The time (``time.time()``) from which this file records every tool start.

        A call asked for before it (in a file written by an older version) may have run
        without a record, so only a call asked for after it is known not to have started
        when it has none.
        """
        if self._tool_starts_since is None:
            rows = await self._core.read(
                "SELECT applied_at FROM schema_migrations WHERE name = ?", (TOOL_STARTS_MIGRATION,)
            )
            self._tool_starts_since = float(rows[0][0])
        return self._tool_starts_since
