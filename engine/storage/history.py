"""`History`: the SQLite store's part that appends messages and reads the history back.

Invariants:

* Messages of a session are numbered 1, 2, 3... (``seq``) in append order, and form a tree:
  each has a parent, the session an active leaf (`engine.storage.tree`). The history is the
  path from the root to the active leaf; `load_tail` walks up it one primary-key lookup a
  message, so its cost does not grow with the history or the number of branches.
* Every append is one write transaction: one per message, or one for a batch stored all or
  none (`append_many`). It goes under the active leaf (or under the parent it names: a new
  version) and becomes it, in that same transaction; it creates or touches the session row
  and gives it a title from its first user message while it has none.
* An append made with ``lease=`` is fenced (`engine.storage.lease.fence`): a lease another
  process took over gets `LeaseLostError`, never a row after the new holder's.
* Appending a request's assistant message deletes that request's draft in the same
  transaction (`engine.storage.drafts`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import aiosqlite

from ..attachments import Blob
from ..errors import MessageNotFoundError, StorageError
from ..extensions import ROOT, Root, StoredMessage
from ..messages import (
    AssistantMessage,
    Message,
    UserMessage,
    compact_json_in_turns,
    message_to_dict,
    message_to_json,
)
from .blobs import Blobs
from .core import StorageCore
from .drafts import DELETE_REQUEST_DRAFT
from .lease import Lease, fence
from .rows import ROW_COLUMNS, stored
from .tree import FROM_ACTIVE, FROM_ID, FROM_PARENT_OF, PARENT_SEQ, MessageTree, path_sql

__all__ = ["History", "title_from"]

_TITLE_LENGTH = 60

#: the session row an append creates or touches, keeping a title it has
_TOUCH_SESSION = (
    "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, "
    "title = COALESCE(sessions.title, excluded.title)"
)


class History:
    """Appends and history reads on the core's connections (the tree places each message)."""

    def __init__(self, core: StorageCore, tree: MessageTree, blobs: Blobs) -> None:
        self._core = core
        self._tree = tree
        self._blobs = blobs

    async def append(
        self,
        session_id: str,
        request_id: str,
        message: Message,
        *,
        lease: Lease | None = None,
        parent: str | Root | None = None,
        blobs: Sequence[Blob] = (),
    ) -> int:
        """Store `message` under the active leaf (or under `parent`), which it becomes, in
        its own transaction.

        Creates the conversation if missing, bumps its ``updated_at`` and, while it has no
        title, takes one from the first line of a user message. An assistant message
        replaces the request's draft, if any, in the same transaction. Once called, the
        write completes even if the caller is cancelled.

        Args:
            lease: the lease the appending request holds on this session, if any. The write
                then happens only while the lease's row is still its own (checked in the
                same transaction); a raw append without one is not fenced.
            parent: the message to store it under (`ROOT`: as a new root) instead of the
                active leaf: a new version and the move of the path to it are one write.
            blobs: the bytes its attachments refer to, stored (once each) in the same
                transaction (`engine.storage.blobs`); bytes already stored need not be given.

        Returns:
            The message's sequence number in the conversation (1 for the first).

        Raises:
            LeaseLostError: `lease` was taken over by another process; nothing was written.
            MessageNotFoundError: there is no message `parent`; nothing was written.
            StorageError: ``storage.missing_blob``: an attachment refers to bytes neither
                given nor stored; nothing was written.
            ValueError: a blob the message does not refer to; nothing was written.
        """
        if lease is not None and lease.session_id != session_id:
            raise ValueError(f"the lease is for {lease.session_id!r}, not {session_id!r}")
        Blobs.check([message], blobs)
        body_json = (await self._encoded([message]))[0]
        title = title_from(message) if isinstance(message, UserMessage) else None
        replaces_draft = isinstance(message, AssistantMessage)

        async def body(db: aiosqlite.Connection) -> int:
            if lease is not None:
                await fence(db, lease)
            under = await self._tree.parent_seq(db, session_id, parent)
            await self._blobs.stage(db, [message], blobs)
            # Two statements (each a round trip to the connection's thread): the session
            # row is created or touched, keeping a title it has; then the message takes
            # the next seq. RETURNING needs SQLite 3.35 (2021).
            now = time.time()
            await db.execute(_TOUCH_SESSION, (session_id, title, now, now))
            rows = list(
                await db.execute_fetchall(
                    "INSERT INTO messages "
                    "(session_id, seq, request_id, id, type, created_at, body, parent_seq) "
                    "SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ?, "
                    f"{PARENT_SEQ} FROM messages WHERE session_id = ? RETURNING seq",
                    (
                        session_id,
                        request_id,
                        message.id,
                        message.type_name,
                        message.created_at,
                        body_json,
                        *under,
                        session_id,
                    ),
                )
            )
            seq = int(next(iter(rows))[0])
            await db.execute("UPDATE sessions SET active_seq = ? WHERE id = ?", (seq, session_id))
            if replaces_draft:
                await db.execute(DELETE_REQUEST_DRAFT, (session_id, request_id))
            return seq

        return await self._core.write(body)

    async def append_many(
        self,
        session_id: str,
        request_id: str,
        messages: Sequence[Message],
        *,
        lease: Lease | None = None,
        blobs: Sequence[Blob] = (),
    ) -> list[int]:
        """Store ``messages`` one under the other, below the active leaf, in ONE transaction:
        all of them or none (the answers to a step's many tool calls, say).

        Each message is stored as `append` would store it (the session created or touched,
        a title from the first user message while it has none, a request's draft replaced
        by an assistant message), and the last becomes the active leaf. ``blobs`` are the
        bytes their attachments refer to, as for `append`. Once called, the write completes
        even if the caller is cancelled.

        Returns:
            The messages' sequence numbers, in order.

        Raises:
            LeaseLostError: `lease` was taken over by another process; nothing was written.
            StorageError: ``storage.missing_blob`` (see `append`); nothing was written.
        """
        if lease is not None and lease.session_id != session_id:
            raise ValueError(f"the lease is for {lease.session_id!r}, not {session_id!r}")
        Blobs.check(messages, blobs)
        if not messages:
            return []
        rows = list(zip(messages, await self._encoded(messages), strict=True))
        title = next(
            (title_from(m) for m in messages if isinstance(m, UserMessage) and title_from(m)),
            None,
        )
        replaces_draft = any(isinstance(m, AssistantMessage) for m in messages)

        async def body(db: aiosqlite.Connection) -> list[int]:
            if lease is not None:
                await fence(db, lease)
            await self._blobs.stage(db, messages, blobs)
            now = time.time()
            await db.execute(_TOUCH_SESSION, (session_id, title, now, now))
            found = list(
                await db.execute_fetchall(
                    "SELECT (SELECT COALESCE(MAX(seq), 0) FROM messages WHERE session_id = ?), "
                    "(SELECT active_seq FROM sessions WHERE id = ?)",
                    (session_id, session_id),
                )
            )
            last, parent = found[0]
            seqs = list(range(int(last) + 1, int(last) + 1 + len(rows)))
            await db.executemany(
                "INSERT INTO messages "
                "(session_id, seq, request_id, id, type, created_at, body, parent_seq) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        session_id,
                        seq,
                        request_id,
                        message.id,
                        message.type_name,
                        message.created_at,
                        body_json,
                        parent if seq == seqs[0] else seq - 1,
                    )
                    for seq, (message, body_json) in zip(seqs, rows, strict=True)
                ],
            )
            await db.execute(
                "UPDATE sessions SET active_seq = ? WHERE id = ?", (seqs[-1], session_id)
            )
            if replaces_draft:
                await db.execute(DELETE_REQUEST_DRAFT, (session_id, request_id))
            return seqs

        return await self._core.write(body)

    async def _encoded(self, messages: Sequence[Message]) -> list[str]:
        """The messages' stored JSON. A large batch (thousands of tool calls or answers) is
        encoded with turns for the event loop between its parts: in one piece it would
        stall the host for a tenth of a second or more.

        Raises:
            StorageError: a value cannot be written as JSON (e.g. such provider_data).
        """
        encoded: list[str] = []
        try:
            for number, message in enumerate(messages, 1):
                if isinstance(message, AssistantMessage) and len(message.tool_calls) >= 256:
                    data = message_to_dict(message)
                    encoded.append(await compact_json_in_turns(data, split="tool_calls"))
                else:
                    encoded.append(message_to_json(message))
                if number % 200 == 0:
                    await asyncio.sleep(0)
        except (TypeError, ValueError) as exc:  # e.g. provider_data that is not JSON
            raise StorageError(
                key="storage.unwritable_value",
                params={"path": str(self._core.path), "detail": str(exc)},
            ) from exc
        return encoded

    async def load(self, session_id: str, *, leaf: str | Root | None = None) -> list[Message]:
        """Return the conversation's history, the active path, oldest first ([] for an
        unknown id). Messages on other branches are not in it.

        Args:
            leaf: read the path from the root to this message instead (``[]`` for `ROOT`).

        Raises:
            UnknownMessageTypeError: a stored message is of a type this version cannot read.
            MessageNotFoundError: there is no message `leaf`.
        """
        if leaf is ROOT:
            return []
        params: dict[str, Any] = {"sid": session_id, "limit": 2**62}
        start = FROM_ACTIVE
        if leaf is not None:
            start, params["leaf"] = FROM_ID, leaf
        rows = await self._core.read(path_sql(start=start, columns=ROW_COLUMNS), params)
        if leaf is not None and not rows:
            raise MessageNotFoundError(session_id, leaf, str(self._core.path))
        return [stored(row, session_id, self._core.path).message for row in rows]

    async def load_tail(
        self, session_id: str, limit: int, before_seq: int | None = None
    ) -> list[StoredMessage]:
        """Return the last `limit` messages of the active path (of the path above
        `before_seq`, if given: that message's ancestors), oldest first.

        One primary-key lookup a message, walking up from the leaf: the cost depends on
        `limit`, not on the length of the conversation or its branches. Page backwards by
        passing the first returned ``seq`` as the next `before_seq`.

        Raises:
            UnknownMessageTypeError: a stored message is of a type this version cannot read.
        """
        if limit <= 0:
            return []
        params: dict[str, Any] = {"sid": session_id, "limit": limit}
        start = FROM_ACTIVE
        if before_seq is not None:
            start, params["before"] = FROM_PARENT_OF, before_seq
        rows = await self._core.read(path_sql(start=start, columns=ROW_COLUMNS), params)
        return [stored(row, session_id, self._core.path) for row in rows]

    async def count_messages(self, session_id: str) -> int:
        """Return how many messages the history (the active path) holds (0 for an unknown
        id); its cost is the path's length."""
        rows = await self._core.read(
            path_sql(start=FROM_ACTIVE, columns="COUNT(*)"), {"sid": session_id, "limit": 2**62}
        )
        return int(rows[0][0])

    async def count_all_messages(self, session_id: str) -> int:
        """Return how many messages the conversation holds on every branch."""
        rows = await self._core.read(
            "SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,)
        )
        return int(rows[0][0])


def title_from(message: UserMessage) -> str | None:
    """Return the first non-blank line of the message, cut to about 60 characters."""
    for line in message.content.splitlines():
        line = " ".join(line.split())
        if line:
            if len(line) <= _TITLE_LENGTH:
                return line
            cut = line[: _TITLE_LENGTH - 1]
            space = cut.rfind(" ")
            if space >= _TITLE_LENGTH // 2:
                cut = cut[:space]
            return cut.rstrip(" ,.;:") + "…"
    return None
