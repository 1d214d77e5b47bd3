"""`SQLiteSessionStorage`: conversations in one SQLite file, durable message by message.

Invariants:

* ONE aiosqlite connection, opened lazily on first use after `prepare_database` has checked
  the file read-only (a refused file is never changed) and migrated it. WAL,
  ``synchronous=FULL`` by default (every committed message survives a power cut), a
  ``busy_timeout`` for other processes' writers, foreign keys on.
* Every operation runs under one asyncio lock, so the transactions of concurrent coroutines
  on the single connection never interleave. Every write is one ``BEGIN IMMEDIATE``
  transaction: one per message, or one for a batch stored all or none (`append_many`).
* A started write finishes even if its caller is cancelled: it runs as an owned task the
  caller awaits through `engine._finish.finish`; on cancellation the caller waits for the
  write to complete, then gets `CancelledError`, or the write's own error if it failed (a
  message that was not stored is never reported as kept). (A write abandoned half-way would
  leave the shared connection inside an open transaction.)
* Messages of a session are numbered 1, 2, 3... (``seq``) in append order, and form a tree:
  each has a parent, the session an active leaf (`engine.storage.tree`). The history is the
  path from the root to the active leaf; `load_tail` walks up it one primary-key lookup a
  message, so its cost does not grow with the history or the number of branches. An append
  goes under the active leaf (or under the parent it names: a new version) and becomes it,
  in the append's own transaction. Opening the file mends a path an older version's killed
  edit left cut short (`mended`).
* Reading and `append` never take the lease; only `acquire_lease` does. An append made with
  ``lease=`` is fenced: the lease's token is checked in the append's own transaction, and a
  lease another process took over gets `LeaseLostError`, never a row after the new holder's.
* The file is private (folder 0700, file 0600) and a file that cannot be written is refused
  before SQLite opens it; see `engine.storage.files`.
* One unreadable conversation row hides nothing else: it is listed with ``unreadable`` set.
* While a step streams, its request keeps a draft of it (`save_draft`; see
  `engine.storage.drafts`). Appending a request's assistant message deletes that request's
  draft in the same transaction; acquiring the lease turns a draft left by a gone holder
  into the message it was; `load_draft` shows such a draft without writing.
* The first write transaction also records this storage in ``writers`` (deleted by `close`):
  a row left by a process that is gone is an unclean exit, after which the full integrity
  check runs (`integrity_check_due`, `check_integrity`; `engine.storage.integrity`). Opening
  never reads more than the file's header and schema.
* Just before a tool call runs, its request records that it started (`record_tool_start`,
  fenced like an append). These records are not messages: no history reader returns them;
  resume reads them (`started_tool_calls`) to tell a call that never started from one that
  may have run. Files older than those records say nothing about earlier calls
  (`tool_starts_recorded_since`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import sqlite3
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import aiosqlite

from .._finish import finish
from ..errors import (
    AgentBusyError,
    CorruptDatabaseError,
    ErrorAction,
    LeaseLostError,
    MessageNotFoundError,
    SessionExistsError,
    StorageError,
    UnknownMessageTypeError,
)
from ..extensions import ROOT, Root, StoredMessage
from ..messages import (
    AssistantMessage,
    Message,
    UserMessage,
    compact_json_in_turns,
    message_from_json,
    message_to_dict,
    message_to_json,
)
from ..text import clean, clean_data
from .drafts import DELETE_REQUEST_DRAFT, READ_DRAFT, settle_draft, upsert_draft
from .files import create_private, make_private, storage_error
from .integrity import WRITER_COLUMNS, CheckStop, Pause, gone_writers, run_check, writer_row
from .lease import Lease, LeaseHolder, ProcessIdentity, holder_is_gone
from .migrations import TOOL_STARTS_MIGRATION, Progress, check_sqlite, prepare_database
from .search import MessageSearch, casefold
from .transfer import ConversationTransfer
from .tree import (
    FROM_ACTIVE,
    FROM_ID,
    FROM_PARENT_OF,
    PARENT_SEQ,
    MendedPath,
    MessageTree,
    path_sql,
)

__all__ = ["SQLiteSessionStorage", "SessionInfo"]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

_TITLE_LENGTH = 60
_BUSY_TIMEOUT = 5.0  # seconds another process's write transaction may make us wait

Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One conversation as listed: its id, title and times (seconds since the epoch)."""

    id: str
    title: str | None  #: None until set, or taken from the first user message
    created_at: float
    updated_at: float  #: bumped by every append; the conversation list sorts on it
    metadata: dict[str, Any] = field(default_factory=dict)
    #: None when the row reads well; else what in it is damaged (its fields then hold what
    #: could be read: an unreadable title is None, unreadable metadata is empty)
    unreadable: str | None = None


class SQLiteSessionStorage(MessageTree, MessageSearch, ConversationTransfer):
    """Conversations, their messages (a tree of versions) and their leases in one SQLite file.

    Args:
        path: the database file; it and its folder are created if missing.
        synchronous: SQLite's ``synchronous`` setting. ``FULL`` (the default) makes each
            committed message survive a power cut; ``NORMAL`` only a crash of the process.
        lease_stale_after: seconds after which a lease whose heartbeat stopped is taken over.
        heartbeat_interval: seconds between heartbeats of a held lease (default: a third of
            `lease_stale_after`).
        lease_host: the host name recorded in this storage's leases instead of the
            machine's (tests use it to play a second machine sharing the file).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        lease_stale_after: float = 30.0,
        heartbeat_interval: float | None = None,
        lease_host: str | None = None,
    ) -> None:
        if synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
        if lease_stale_after <= 0:
            raise ValueError("lease_stale_after must be a positive number of seconds")
        self.path = Path(path)
        self.synchronous = synchronous
        self.lease_stale_after = float(lease_stale_after)
        self.heartbeat_interval = float(
            heartbeat_interval if heartbeat_interval is not None else lease_stale_after / 3
        )
        self.lease_host = lease_host
        #: called with the fraction done (0..1) while opening the file runs a long migration
        #: (building the search index of an older file), from the thread that migrates
        self.on_migration_progress: Progress | None = None
        self._db: aiosqlite.Connection | None = None
        self._opening: asyncio.Task[aiosqlite.Connection] | None = None
        self._lock = asyncio.Lock()
        self._writes: set[asyncio.Task[Any]] = set()
        self._leases: set[Lease] = set()
        self._tool_starts_since: float | None = None  #: read once (see tool_starts_recorded_since)
        self._mended: tuple[MendedPath, ...] = ()  #: what opening the file mended
        #: this storage's row of ``writers`` (see engine.storage.integrity); True once written
        self._writer_token = secrets.token_hex(16)
        self._writer_recorded = False
        self._checks: set[CheckStop] = set()  #: the running integrity checks
        self._closed = False  #: close() has begun (writes already started still complete)
        self._finished = False  #: close() has closed the connection: nothing more runs

    def __repr__(self) -> str:
        return f"<SQLiteSessionStorage {str(self.path)!r}>"

    # ------------------------------------------------------------------ lifecycle

    async def close(self) -> None:
        """Release held leases, let writes in progress finish, close the file. Idempotent."""
        if self._closed:
            return
        self._closed = True
        for lease in list(self._leases):
            with contextlib.suppress(StorageError):
                await lease.release()
        for check in list(self._checks):
            check.stop()  # a running check ends now (its caller sees it stopped)
        while self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        if self._opening is not None and self._db is None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                self._db = await self._opening
        async with self._lock:  # after any read in progress
            db, self._db = self._db, None
            self._finished = True
            if db is not None:
                if self._writer_recorded:
                    await self._forget_writer(db)
                await db.close()

    async def _forget_writer(self, db: aiosqlite.Connection) -> None:
        """Delete this storage's ``writers`` row: it closes cleanly. A failure (a full disk)
        only leaves the row, and the next start checks the file once more."""
        try:
            await db.execute("DELETE FROM writers WHERE token = ?", (self._writer_token,))
        except sqlite3.Error:
            _log.warning("could not record the clean close of %s", self.path, exc_info=True)

    async def _connection(self) -> aiosqlite.Connection:
        if self._db is not None:
            return self._db
        if self._finished:
            raise StorageError(key="storage.closed", params={"path": str(self.path)})
        if self._opening is None:
            self._opening = asyncio.get_running_loop().create_task(self._open())
        opening = self._opening
        try:
            # Shielded: a caller cancelled mid-open must not leave a half-opened connection.
            db = await asyncio.shield(opening)
        except asyncio.CancelledError:
            raise
        except BaseException:
            if self._opening is opening:
                self._opening = None  # let a later call try again (the file may be fixed)
            raise
        if self._finished:  # close() ran meanwhile and closed this very connection
            raise StorageError(key="storage.closed", params={"path": str(self.path)})
        self._db = db
        return db

    async def _open(self) -> aiosqlite.Connection:
        # One trip to a worker thread for the file's checks, and one statement for the
        # settings: each trip waits for the event loop's turn (a window's start-up is busy).
        await asyncio.to_thread(self._prepare_file)
        db = await aiosqlite.connect(self.path, isolation_level=None, timeout=_BUSY_TIMEOUT)
        try:
            with self._translate():
                await db.executescript(
                    f"PRAGMA journal_mode = WAL; PRAGMA synchronous = {self.synchronous}; "
                    f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT * 1000)}; PRAGMA foreign_keys = ON;"
                )
                await db.create_function("casefold", 1, casefold, deterministic=True)
            self._mended = tuple(await self._mend(db))
        except BaseException:
            await db.close()
            raise
        return db

    def _prepare_file(self) -> None:
        create_private(self.path)
        check_sqlite()
        prepare_database(self.path, busy_timeout=_BUSY_TIMEOUT, progress=self.on_migration_progress)
        make_private(self.path)

    # ------------------------------------------------------------------ sessions

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

        return await self._write(body)

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """Return the conversation, or None when there is none with this id."""
        rows = await self._read(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?",
            (session_id,),
        )
        return self._session_info(rows[0]) if rows else None

    async def list_sessions(self) -> list[SessionInfo]:
        """Return every conversation, the most recently updated first."""
        rows = await self._read(
            f"SELECT {_SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, rowid DESC",
            (),
        )
        return [self._session_info(row) for row in rows]

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

        await self._write(body)

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
            merged = self._json_object(rows[0][0], session_id)
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

        return await self._write(body)

    async def delete_session(self, session_id: str) -> None:
        """Delete the conversation, its messages and its lease. Deleting none is no error."""

        async def body(db: aiosqlite.Connection) -> None:
            await db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            await db.execute("DELETE FROM leases WHERE session_id = ?", (session_id,))
            await db.execute("DELETE FROM tool_starts WHERE session_id = ?", (session_id,))
            await db.execute("DELETE FROM imports WHERE session_id = ?", (session_id,))
            await db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

        await self._write(body)

    # ------------------------------------------------------------------ messages

    async def append(
        self,
        session_id: str,
        request_id: str,
        message: Message,
        *,
        lease: Lease | None = None,
        parent: str | Root | None = None,
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

        Returns:
            The message's sequence number in the conversation (1 for the first).

        Raises:
            LeaseLostError: `lease` was taken over by another process; nothing was written.
            MessageNotFoundError: there is no message `parent`; nothing was written.
        """
        if lease is not None and lease.session_id != session_id:
            raise ValueError(f"the lease is for {lease.session_id!r}, not {session_id!r}")
        body_json = (await self._encoded([message]))[0]
        title = _title_from(message) if isinstance(message, UserMessage) else None
        replaces_draft = isinstance(message, AssistantMessage)

        async def body(db: aiosqlite.Connection) -> int:
            if lease is not None:
                await self._fence(db, lease)
            under = await self._parent_seq(db, session_id, parent)
            # Two statements (each a round trip to the connection's thread): the session
            # row is created or touched, keeping a title it has; then the message takes
            # the next seq. RETURNING needs SQLite 3.35 (2021).
            now = time.time()
            await db.execute(
                "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, "
                "title = COALESCE(sessions.title, excluded.title)",
                (session_id, title, now, now),
            )
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

        return await self._write(body)

    async def append_many(
        self,
        session_id: str,
        request_id: str,
        messages: Sequence[Message],
        *,
        lease: Lease | None = None,
    ) -> list[int]:
        """Store ``messages`` one under the other, below the active leaf, in ONE transaction:
        all of them or none (the answers to a step's many tool calls, say).

        Each message is stored as `append` would store it (the session created or touched,
        a title from the first user message while it has none, a request's draft replaced
        by an assistant message), and the last becomes the active leaf. Once called, the
        write completes even if the caller is cancelled.

        Returns:
            The messages' sequence numbers, in order.

        Raises:
            LeaseLostError: `lease` was taken over by another process; nothing was written.
        """
        if lease is not None and lease.session_id != session_id:
            raise ValueError(f"the lease is for {lease.session_id!r}, not {session_id!r}")
        if not messages:
            return []
        rows = list(zip(messages, await self._encoded(messages), strict=True))
        title = next(
            (_title_from(m) for m in messages if isinstance(m, UserMessage) and _title_from(m)),
            None,
        )
        replaces_draft = any(isinstance(m, AssistantMessage) for m in messages)

        async def body(db: aiosqlite.Connection) -> list[int]:
            if lease is not None:
                await self._fence(db, lease)
            now = time.time()
            await db.execute(
                "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, "
                "title = COALESCE(sessions.title, excluded.title)",
                (session_id, title, now, now),
            )
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

        return await self._write(body)

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
                key="storage.unwritable_value", params={"path": str(self.path), "detail": str(exc)}
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
        rows = await self._read(path_sql(start=start, columns=_ROW_COLUMNS), params)
        if leaf is not None and not rows:
            raise MessageNotFoundError(session_id, leaf, str(self.path))
        return [self._stored(row, session_id).message for row in rows]

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
        rows = await self._read(path_sql(start=start, columns=_ROW_COLUMNS), params)
        return [self._stored(row, session_id) for row in rows]

    async def count_messages(self, session_id: str) -> int:
        """Return how many messages the history (the active path) holds (0 for an unknown
        id); its cost is the path's length."""
        rows = await self._read(
            path_sql(start=FROM_ACTIVE, columns="COUNT(*)"), {"sid": session_id, "limit": 2**62}
        )
        return int(rows[0][0])

    async def count_all_messages(self, session_id: str) -> int:
        """Return how many messages the conversation holds on every branch."""
        rows = await self._read("SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,))
        return int(rows[0][0])

    # ------------------------------------------------------------------ drafts

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
        becomes if its writer dies (see `engine.storage.drafts`), under the active leaf of
        this moment or under `parent` (a regenerated answer's question). With a lease
        `token`, the draft is written only while that token still holds the session's lease.

        Returns:
            False when `token` no longer holds the lease (nothing was written).

        Raises:
            MessageNotFoundError: there is no message `parent`; nothing was written.
        """

        async def body(db: aiosqlite.Connection) -> bool:
            under = await self._parent_seq(db, session_id, parent)
            return await upsert_draft(
                db, session_id, request_id, token, message, time.time(), under
            )

        return await self._write(body)

    async def load_draft(self, session_id: str) -> StoredMessage | None:
        """Return the draft a gone holder left, as the message it will become; or None.

        A draft whose writer still holds the session's lease (alive, same token) is that
        request's business and is not returned. The record's ``seq`` is the one the message
        will get. Reads only.

        Raises:
            CorruptDatabaseError: the draft is unreadable.
        """
        rows = await self._read(READ_DRAFT, (session_id,))
        if not rows:
            return None
        request_id, token, body, last_seq, lease_token, *holder_fields = rows[0]
        if lease_token is not None and lease_token == token:
            holder = LeaseHolder(*holder_fields)
            if not holder_is_gone(
                holder,
                now=time.time(),
                stale_after=self.lease_stale_after,
                here=ProcessIdentity.current(self.lease_host),
            ):
                return None
        return self._stored(((last_seq or 0) + 1, request_id, body), session_id)

    # ------------------------------------------------------------------ tool starts

    async def record_tool_start(
        self, session_id: str, tool_call_id: str, *, lease: Lease | None = None
    ) -> None:
        """Record, durably, that the tool call `tool_call_id` is about to run.

        One transaction, fenced by `lease` like `append`; once called, the write completes
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
                await self._fence(db, lease)
            await db.execute(
                "INSERT INTO tool_starts (session_id, tool_call_id, started_at) VALUES (?, ?, ?) "
                "ON CONFLICT (session_id, tool_call_id) DO UPDATE SET started_at = "
                "excluded.started_at",
                (session_id, tool_call_id, time.time()),
            )

        await self._write(body)

    async def started_tool_calls(self, session_id: str, ids: Iterable[str]) -> set[str]:
        """Return which of the tool call `ids` of the session have a start record."""
        # One JSON array parameter, however many ids (SQLite limits the number of parameters).
        rows = await self._read(
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
            rows = await self._read(
                "SELECT applied_at FROM schema_migrations WHERE name = ?", (TOOL_STARTS_MIGRATION,)
            )
            self._tool_starts_since = float(rows[0][0])
        return self._tool_starts_since

    # ------------------------------------------------------------------ integrity

    async def integrity_check_due(self) -> bool:
        """Whether a process that wrote to this file ended without closing it (killed,
        crashed, a power cut) and no full check has passed since: then run `check_integrity`.

        One small read; opens the file if it is not open yet.
        """
        return bool(await self._gone_writers())

    async def check_integrity(self, *, pause: Pause | None = None) -> bool:
        """Read every page of the file (SQLite's full check) on a separate read-only
        connection in a worker thread, while this storage keeps working.

        Cancelling the caller stops the check. Once a check passes, the unclean exits seen
        before it began are forgotten (`integrity_check_due` is False again).

        Args:
            pause: called from the checking thread as the check begins and now and then.

        Returns:
            True when the file passed; False when the check was stopped first (`close`).

        Raises:
            CorruptDatabaseError: the file is damaged (the first problem SQLite names).
            StorageError: the file could not be read.
        """
        gone = await self._gone_writers()  # those this check covers: read before it begins
        passed = await run_check(self.path, self._checks, pause)
        if passed and gone:

            async def forget(db: aiosqlite.Connection) -> None:
                await db.execute(
                    "DELETE FROM writers WHERE token IN (SELECT value FROM json_each(?))",
                    (json.dumps(gone),),
                )

            await self._write(forget)
        return passed

    async def _gone_writers(self) -> list[str]:
        rows = await self._read(f"SELECT {WRITER_COLUMNS} FROM writers", ())
        return gone_writers(rows, ProcessIdentity.current(self.lease_host))

    # ------------------------------------------------------------------ leases

    async def lease_holder(self, session_id: str) -> LeaseHolder | None:
        """Return who holds the session's lease, or None when an acquirer would get it."""
        rows = await self._read(
            f"SELECT {_HOLDER_COLUMNS} FROM leases WHERE session_id = ?", (session_id,)
        )
        if not rows:
            return None
        holder = LeaseHolder(*rows[0])
        gone = holder_is_gone(
            holder,
            now=time.time(),
            stale_after=self.lease_stale_after,
            here=ProcessIdentity.current(self.lease_host),
        )
        return None if gone else holder

    async def acquire_lease(self, session_id: str) -> Lease:
        """Take the session's lease for one request; `Lease.release()` gives it back.

        A draft left by a holder that is gone becomes the assistant message it was, in the
        same transaction (see `engine.storage.drafts`).

        Raises:
            AgentBusyError: a live holder (another process, or another request of this
                one) has it; ``.holder`` is its `LeaseHolder`.
        """
        token = secrets.token_hex(16)
        here = ProcessIdentity.current(self.lease_host)

        async def body(db: aiosqlite.Connection) -> LeaseHolder:
            now = time.time()
            rows = list(
                await db.execute_fetchall(
                    f"SELECT {_HOLDER_COLUMNS} FROM leases WHERE session_id = ?", (session_id,)
                )
            )
            if rows:
                current = LeaseHolder(*rows[0])
                if not holder_is_gone(
                    current, now=now, stale_after=self.lease_stale_after, here=here
                ):
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

        task = self._spawn(self._transaction(body))
        try:
            holder = await finish(task)
        except asyncio.CancelledError:
            # The row may be written by now; nobody would ever release it, and it names
            # this live process, so it would block the session until we exit. Undo it.
            if not task.cancelled() and task.exception() is None:
                await self._undo_lease(session_id, token)
            raise
        lease = Lease(self, session_id, token, holder, self.heartbeat_interval)
        self._leases.add(lease)
        return lease

    async def _undo_lease(self, session_id: str, token: str) -> None:
        """Delete a lease row taken for a caller that was cancelled meanwhile. A failure is
        logged, not raised: the caller's cancellation is what it hears (the row then names
        this process and is taken over once it exits)."""
        try:
            await self._write(_delete_row(session_id, token))
        except StorageError:
            _log.warning("A lease taken for a cancelled caller was not undone", exc_info=True)

    async def _fence(self, db: aiosqlite.Connection, lease: Lease) -> None:
        """Inside a write: raise `LeaseLostError` unless `lease`'s row is still its own.

        ``BEGIN IMMEDIATE`` holds the write lock from the start of the transaction, so no
        takeover can come between this check and the write that follows it.
        """
        rows = list(
            await db.execute_fetchall(
                f"SELECT token, {_HOLDER_COLUMNS} FROM leases WHERE session_id = ?",
                (lease.session_id,),
            )
        )
        if rows and rows[0][0] == lease.token:
            return
        lease.mark_lost()
        holder = LeaseHolder(*rows[0][1:]) if rows else None
        raise LeaseLostError(lease.session_id, holder)

    async def _refresh_lease(self, session_id: str, token: str) -> bool:
        async def body(db: aiosqlite.Connection) -> bool:
            cursor = await db.execute(
                "UPDATE leases SET heartbeat_at = ? WHERE session_id = ? AND token = ?",
                (time.time(), session_id, token),
            )
            return cursor.rowcount > 0

        return await self._write(body)

    async def _delete_lease(self, lease: Lease) -> None:
        self._leases.discard(lease)
        await self._write(_delete_row(lease.session_id, lease.token))

    # ------------------------------------------------------------------ machinery

    async def _read(self, sql: str, params: tuple[Any, ...] | Mapping[str, Any]) -> list[Any]:
        db = await self._connection()
        async with self._lock:
            with self._translate():
                return list(await db.execute_fetchall(sql, params))

    async def _write(self, body: Callable[[aiosqlite.Connection], Awaitable[_T]]) -> _T:
        return await finish(self._spawn(self._transaction(body)))

    async def _transaction(self, body: Callable[[aiosqlite.Connection], Awaitable[_T]]) -> _T:
        db = await self._connection()
        async with self._lock:
            with self._translate():
                await db.execute("BEGIN IMMEDIATE")
                try:
                    if not self._writer_recorded:
                        await db.execute(
                            "INSERT OR REPLACE INTO writers VALUES (?, ?, ?, ?, ?, ?)",
                            writer_row(self._writer_token, ProcessIdentity.current(self.lease_host)),
                        )
                    result = await body(db)
                except BaseException:
                    # A full disk or an I/O error mid-statement has already rolled the
                    # transaction back; a second ROLLBACK would raise "no transaction is
                    # active" and hide the real error.
                    if db.in_transaction:
                        try:
                            await db.execute("ROLLBACK")
                        except sqlite3.Error:
                            # The body's error says what happened; a failed rollback
                            # (the file went away) must not replace it.
                            _log.warning("rollback failed in %s", self.path, exc_info=True)
                    raise
                await db.execute("COMMIT")
                self._writer_recorded = True
                return result

    def _spawn(self, coro: Awaitable[_T]) -> asyncio.Task[_T]:
        task: asyncio.Task[_T] = asyncio.ensure_future(coro)
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return task

    @contextlib.contextmanager
    def _translate(self) -> Iterator[None]:
        """Turn SQLite's errors into `StorageError`s that name the file."""
        try:
            yield
        except (UnicodeError, OverflowError, sqlite3.InterfaceError) as exc:
            # Values SQLite cannot take (text that is not storable, a number too large): a
            # write that did not happen is a StorageError, never a silent drop.
            raise StorageError(
                key="storage.unwritable_value", params={"path": str(self.path), "detail": str(exc)}
            ) from exc
        except sqlite3.DatabaseError as exc:
            raise storage_error(exc, self.path) from exc

    def _stored(self, row: Any, session_id: str) -> StoredMessage:
        seq, request_id, body = row
        try:
            # Read as bytes: text that is not UTF-8 made sqlite3 raise a generic error at
            # fetch time, naming neither the file nor the damage.
            if isinstance(body, bytes):
                body = body.decode("utf-8")
            message = message_from_json(body)
        except UnknownMessageTypeError as exc:
            raise UnknownMessageTypeError(exc.type_name, str(self.path)) from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptDatabaseError(
                str(self.path), f"message {seq} of conversation {session_id!r} is unreadable"
            ) from exc
        return StoredMessage(seq, request_id, message)

    def _session_info(self, row: Any) -> SessionInfo:
        """Build the row's `SessionInfo`; a damaged field is reported, not raised."""
        raw_id, raw_title, title_type, created_at, updated_at, raw_metadata = row
        damaged: list[str] = []
        sid, _ = _decoded(raw_id)
        title, readable = _decoded(raw_title)
        if title_type not in ("text", "null") or not readable:
            # A title that is not text is dropped; text that is not UTF-8 is shown with
            # replacement characters, and the row is marked.
            damaged.append("its title")
            title = title if title_type == "text" else None
        times: list[float] = []
        for name, value in (("creation time", created_at), ("update time", updated_at)):
            if isinstance(value, int | float) and not isinstance(value, bool):
                times.append(float(value))
            else:
                damaged.append(f"its {name}")
                times.append(0.0)
        metadata, readable = _decoded(raw_metadata)
        try:
            if not readable:
                raise CorruptDatabaseError(str(self.path), "metadata that is not UTF-8")
            meta = self._json_object(metadata or "", str(sid))
        except CorruptDatabaseError:
            damaged.append("its settings (metadata)")
            meta = {}
        unreadable = (" and ".join(damaged) + " could not be read") if damaged else None
        return SessionInfo(str(sid), title, times[0], times[1], meta, unreadable)

    def _json_object(self, text: str | bytes | None, session_id: str) -> dict[str, Any]:
        try:
            value = json.loads(text or "{}")
        except (ValueError, TypeError):
            value = None
        if not isinstance(value, dict):
            raise CorruptDatabaseError(
                str(self.path), f"the metadata of conversation {session_id!r} is unreadable"
            )
        return value

    def _missing(self, session_id: str) -> StorageError:
        return StorageError(
            key="storage.missing",
            params={"session_id": repr(session_id), "path": str(self.path)},
            action=ErrorAction.NONE,
        )


_HOLDER_COLUMNS = "host, boot_id, pid, process_started, acquired_at, heartbeat_at"
#: a message row as `_stored` reads it
_ROW_COLUMNS = "m.seq, m.request_id, CAST(m.body AS BLOB)"

#: a conversation's row, its text as bytes: sqlite3 raises at fetch time on text that is not
#: UTF-8, and one such row would hide every conversation (`_session_info` marks it instead)
_SESSION_COLUMNS = (
    "CAST(id AS BLOB), CAST(title AS BLOB), typeof(title), created_at, updated_at, "
    "CAST(metadata AS BLOB)"
)


def _decoded(value: Any) -> tuple[str | None, bool]:
    """``value`` (bytes read with CAST AS BLOB, or None) as text, and whether it was UTF-8."""
    if value is None:
        return None, True
    if not isinstance(value, bytes):
        return str(value), True
    try:
        return value.decode("utf-8"), True
    except UnicodeDecodeError:
        return value.decode("utf-8", errors="replace"), False


def _delete_row(session_id: str, token: str) -> Callable[[aiosqlite.Connection], Awaitable[None]]:
    async def body(db: aiosqlite.Connection) -> None:
        await db.execute(
            "DELETE FROM leases WHERE session_id = ? AND token = ?", (session_id, token)
        )

    return body


def _title_from(message: UserMessage) -> str | None:
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
