"""`Sessions`: the SQLite store's part that keeps the conversations' own rows.

A conversation's row holds its id, title, times and metadata (the history is
`engine.storage.history`'s). One unreadable row hides nothing else: it is listed with
``unreadable`` set (`engine.storage.rows.session_info`). Deleting a conversation deletes
everything of it in one transaction: messages, lease, tool starts, the import record, and
the bytes of attachments no message of another conversation refers to (the triggers of
`engine.storage.migrations`' ``0007_blobs``; `engine.storage.blobs`).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

import aiosqlite

from ..errors import ErrorAction, SessionExistsError, StorageError
from ..text import clean, clean_data
from .core import StorageCore
from .rows import SESSION_COLUMNS, SessionInfo, json_object, session_info

__all__ = ["Sessions"]


class Sessions:
    """The conversations' rows, on the core's connections."""

    def __init__(self, core: StorageCore) -> None:
        self._core = core

    async def create_session(
        self,
        session_id: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> SessionInfo:
        """Create an empty conversation (with a fresh id when `session_id` is None).

        Raises:
            SessionExistsError: a conversation with this id already exists.
        """
        sid = session_id if session_id is not None else uuid.uuid4().hex
        meta = clean_data(dict(metadata or {}))
        title = clean(title) if title is not None else None
        now = time.time()

        async def body(db: aiosqlite.Connection) -> SessionInfo:
            if await db.execute_fetchall("SELECT 1 FROM sessions WHERE id = ?", (sid,)):
                raise SessionExistsError(sid)
            await db.execute(
                "INSERT INTO sessions (id, title, created_at, updated_at, metadata) "
                "VALUES (?, ?, ?, ?, ?)",
                (sid, title, now, now, json.dumps(meta, ensure_ascii=False)),
            )
            return SessionInfo(sid, title, now, now, meta)

        return await self._core.write(body)

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """Return the conversation, or None when there is none with this id."""
        rows = await self._core.read(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        )
        return session_info(rows[0], self._core.path) if rows else None

    async def list_sessions(self) -> list[SessionInfo]:
        """Return every conversation, the most recently updated first."""
        rows = await self._core.read(
            f"SELECT {SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, rowid DESC"
        )
        return [session_info(row, self._core.path) for row in rows]

    async def rename_session(self, session_id: str, title: str | None) -> None:
        """Set the conversation's title (None clears it).

        Raises:
            StorageError: there is no conversation with this id.
        """
        title = clean(title) if title is not None else None

        async def body(db: aiosqlite.Connection) -> None:
            cursor = await db.execute(
                "UPDATE sessions SET title = ? WHERE id = ?", (title, session_id)
            )
            if cursor.rowcount == 0:
                raise self._missing(session_id)

        await self._core.write(body)

    async def update_metadata(self, session_id: str, mapping: Mapping[str, Any]) -> dict[str, Any]:
        """Merge `mapping` into the conversation's metadata; a key mapped to None is removed.

        Returns the metadata as stored afterwards.

        Raises:
            StorageError: there is no conversation with this id.
        """
        changes = clean_data(dict(mapping))

        async def body(db: aiosqlite.Connection) -> dict[str, Any]:
            rows = list(
                await db.execute_fetchall(
                    "SELECT CAST(metadata AS BLOB) FROM sessions WHERE id = ?", (session_id,)
                )
            )
            if not rows:
                raise self._missing(session_id)
            merged = json_object(rows[0][0], session_id, self._core.path)
            for key, value in changes.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            await db.execute(
                "UPDATE sessions SET metadata = ? WHERE id = ?",
                (json.dumps(merged, ensure_ascii=False), session_id),
            )
            return merged

        return await self._core.write(body)

    async def delete_session(self, session_id: str) -> None:
        """Delete the conversation, its messages and its lease, and the attachments' bytes
        only its messages referred to (a picture another conversation holds is kept).
        Deleting none is no error."""

        async def body(db: aiosqlite.Connection) -> None:
            await db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            await db.execute("DELETE FROM leases WHERE session_id = ?", (session_id,))
            await db.execute("DELETE FROM tool_starts WHERE session_id = ?", (session_id,))
            await db.execute("DELETE FROM imports WHERE session_id = ?", (session_id,))
            await db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

        await self._core.write(body)

    def _missing(self, session_id: str) -> StorageError:
        return StorageError(
            key="storage.missing",
            params={"session_id": repr(session_id), "path": str(self._core.path)},
            action=ErrorAction.NONE,
        )
