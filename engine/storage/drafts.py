"""Streaming drafts in the SQLite file: what a step has shown so far, kept while it streams.

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
* Readers see a dead holder's draft as the message it will become (`load_draft` in
  `SQLiteSessionStorage`), without writing anything.
* A draft belongs to the branch it was written on: it keeps the active leaf of that moment,
  or the parent its request named (a regenerated answer's question, while nothing of the new
  answer is stored and the path still shows the old one), as ``parent_seq``, and settles
  under it, becoming the session's active leaf (see `engine.storage.tree`). Readers walk up
  from the draft's parent (`FROM_PARENT_OF` with the draft's seq), so a dead regenerate's
  draft shows on its own branch before it settles.
"""

from __future__ import annotations

import aiosqlite

from ..messages import AssistantMessage, message_to_json
from .tree import PARENT_SEQ

__all__ = [
    "DELETE_REQUEST_DRAFT",
    "READ_DRAFT",
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
