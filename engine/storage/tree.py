"""The message tree in the SQLite file: the SQL that walks it, shared by the storage's methods.

Since schema version 4 each message row has a parent (``parent_seq``; NULL for a root) and
each session an active leaf (``sessions.active_seq``; NULL for the empty path). The history a
model sees is the path from the root to the active leaf. Invariants:

* A parent is always an earlier message of the same session (``parent_seq < seq``): a
  message is only ever appended under one that exists. The walks below follow only such
  links, so even a damaged file cannot make them loop.
* The active leaf names a stored message of its session, or is NULL (the empty path): it is
  set in the same transaction as the append that adds that message, or by a branch or a
  switch that found the message first.
* A new version moves the path only by storing its first message: an append with an
  explicit parent (an edit's question beside the edited one, the first message of a
  regenerated answer under its question) stores it there and makes it the active leaf in
  one transaction. So the active leaf is always a leaf (no message below it) unless a host
  called `branch_from` and has not appended yet. A file a killed older version left with
  the path cut short (the empty path over stored messages, or a leaf with messages below
  it) is mended when the file opens (`mend_paths`).
* Siblings are the children of one parent in ``seq`` order (the order they were written), so
  "‹ 2/3 ›" is stable. The newest leaf under a message is the largest ``seq`` in its subtree
  (a child is always newer than its parent, so that message has no children).

Walking up from a leaf is one primary-key lookup per message: reading the last N messages
of the active path costs N lookups, whatever the tree's size. Walking down (a subtree) uses
the ``(session_id, parent_seq, seq)`` index and costs the subtree's size.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import aiosqlite

from ..errors import MessageNotFoundError, SessionExistsError, StorageError
from ..extensions import ROOT, Root
from .core import StorageCore
from .lease import Lease, LeaseHolder, LeasePolicy, fence

__all__ = [
    "FROM_ACTIVE",
    "FROM_ID",
    "FROM_PARENT_OF",
    "PARENT_SEQ",
    "MendedPath",
    "MessageTree",
    "has_cut_short",
    "mend_paths",
    "path_sql",
]

_log = logging.getLogger(__name__)

#: a message's seq and parent by its id, the newest if an id was ever written twice
SEQ_OF_ID = (
    "SELECT seq, parent_seq, type FROM messages WHERE session_id = ? AND id = ? "
    "ORDER BY seq DESC LIMIT 1"
)

#: the children of a parent (``IS`` matches a NULL parent: the roots), oldest first
CHILDREN = "SELECT seq, id FROM messages WHERE session_id = ? AND parent_seq IS ? ORDER BY seq"

#: the largest seq in the subtree under (and including) a message: the newest leaf there
NEWEST_IN_SUBTREE = """
WITH RECURSIVE below(seq) AS (
    SELECT ?
    UNION ALL
    SELECT m.seq FROM below
    JOIN messages m ON m.session_id = ? AND m.parent_seq = below.seq AND m.seq > below.seq
)
SELECT m.seq, m.id FROM messages m
WHERE m.session_id = ? AND m.seq = (SELECT MAX(seq) FROM below)
"""


def path_sql(*, start: str, columns: str) -> str:
    """SQL walking up from ``start`` (a scalar subquery giving a seq, or NULL) at most
    ``:limit`` messages, selecting ``columns`` of each message, oldest first.

    Parameters, by name: ``:sid`` (the session), ``:limit`` and those of ``start``.
    """
    return f"""
WITH RECURSIVE path(seq, depth) AS (
    SELECT ({start}), 1
    UNION ALL
    SELECT m.parent_seq, path.depth + 1 FROM path
    JOIN messages m ON m.session_id = :sid AND m.seq = path.seq
    WHERE m.parent_seq IS NOT NULL AND m.parent_seq < m.seq AND path.depth < :limit
)
SELECT {columns} FROM path
JOIN messages m ON m.session_id = :sid AND m.seq = path.seq
ORDER BY path.depth DESC
"""


#: for each wanted seq (a JSON array): its index among its siblings and their count
# CROSS JOIN keeps json_each outside: each wanted seq is one primary-key lookup (left to
# itself, without ANALYZE, the planner scanned the session's messages instead).
VERSIONS = """
SELECT m.seq,
       (SELECT COUNT(*) FROM messages s WHERE s.session_id = m.session_id
            AND s.parent_seq IS m.parent_seq AND s.seq < m.seq),
       (SELECT COUNT(*) FROM messages s WHERE s.session_id = m.session_id
            AND s.parent_seq IS m.parent_seq)
FROM json_each(?) w CROSS JOIN messages m ON m.session_id = ? AND m.seq = w.value
"""

#: where a walk starts: the active leaf; a message by its id (``:leaf``); the parent of a
#: given message (``:before``). A dead process's draft is read as the message it becomes
#: (its seq the next one): its parent is the draft's (the branch it settles on).
FROM_ACTIVE = "SELECT active_seq FROM sessions WHERE id = :sid"
FROM_ID = "SELECT seq FROM messages WHERE session_id = :sid AND id = :leaf ORDER BY seq DESC LIMIT 1"
FROM_PARENT_OF = (
    "SELECT parent_seq FROM messages WHERE session_id = :sid AND seq = :before "
    "UNION ALL SELECT parent_seq FROM drafts WHERE session_id = :sid AND :before = "
    "(SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = :sid) LIMIT 1"
)

#: the parent_seq an insert gives a new message or draft: three parameters, as
#: `MessageTree.parent_seq` returns them (whether a parent is named, its seq, the session)
PARENT_SEQ = "CASE WHEN ? THEN ? ELSE (SELECT active_seq FROM sessions WHERE id = ?) END"

#: the conversations a process left holding (it was killed, or its machine stopped) whose
#: path is cut short: the empty path over stored messages, or a leaf with messages below
#: it. Only those with a lease row are looked at: every change of the path that a kill
#: could cut short ran under the conversation's lease, and a clean end deletes the row.
#: CROSS JOIN keeps the lease rows outside (left to itself, the planner scanned sessions).
_CUT_SHORT = """
SELECT s.id, s.title, s.active_seq, l.host, l.boot_id, l.pid, l.process_started,
       l.acquired_at, l.heartbeat_at
FROM leases l CROSS JOIN sessions s ON s.id = l.session_id
WHERE CASE WHEN s.active_seq IS NULL
    THEN EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
    ELSE EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id AND m.parent_seq = s.active_seq)
END
"""


@dataclass(frozen=True, slots=True)
class MendedPath:
    """A conversation whose path a killed process had left cut short, put back on open."""

    session_id: str
    title: str | None
    #: the message the path ended on (None: the empty path)
    was: str | None
    #: the message it ends on now: the newest leaf below where it ended
    now: str


async def has_cut_short(db: aiosqlite.Connection) -> bool:
    """Whether any conversation's path is cut short (read only; see `_CUT_SHORT`)."""
    rows = list(await db.execute_fetchall(f"SELECT EXISTS ({_CUT_SHORT})"))
    return bool(rows[0][0])


async def mend_paths(
    db: aiosqlite.Connection, is_gone: Callable[[LeaseHolder], bool]
) -> list[MendedPath]:
    """Move each cut-short path (see `_CUT_SHORT`) whose holder `is_gone` to the newest
    leaf below where it ended (the newest message of the conversation, for the empty path),
    in one write transaction taken only when there is one; return what was mended.

    Its cost is that of the leftover lease rows (a few index lookups each), not of the
    history: a file whose every request ended cleanly holds none.
    """
    if not await has_cut_short(db):
        return []
    await db.execute("BEGIN IMMEDIATE")
    try:
        mended = await _mend(db, is_gone)
    except BaseException:
        if db.in_transaction:
            await db.execute("ROLLBACK")
        raise
    await db.execute("COMMIT")
    return mended


async def _mend(
    db: aiosqlite.Connection, is_gone: Callable[[LeaseHolder], bool]
) -> list[MendedPath]:
    mended: list[MendedPath] = []
    for sid, title, active, *holder in list(await db.execute_fetchall(_CUT_SHORT)):
        if not is_gone(LeaseHolder(*holder)):
            continue  # a live request's path is its own business
        if active is None:
            rows = await db.execute_fetchall(
                "SELECT seq, id FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
                (sid,),
            )
            was = None
        else:
            rows = await db.execute_fetchall(NEWEST_IN_SUBTREE, (active, sid, sid))
            was_rows = list(
                await db.execute_fetchall(
                    "SELECT id FROM messages WHERE session_id = ? AND seq = ?", (sid, active)
                )
            )
            was = str(was_rows[0][0])
        leaf, leaf_id = next(iter(rows))
        await db.execute("UPDATE sessions SET active_seq = ? WHERE id = ?", (leaf, sid))
        mended.append(
            MendedPath(str(sid), title if isinstance(title, str) else None, was, str(leaf_id))
        )
    return mended


class MessageTree:
    """The tree operations of the SQLite store, on the core's connections.

    Message ids name messages here (the window and the engine know ids, not seqs). When the
    file opens, the paths a killed process left cut short are put back (`mended`).
    """

    def __init__(self, core: StorageCore, policy: LeasePolicy) -> None:
        self._core = core
        self._policy = policy
        self._mended: tuple[MendedPath, ...] = ()  #: what opening the file mended
        core.when_opened(self._mend)

    async def _mend(self, db: aiosqlite.Connection) -> None:
        """When the file opens: put back the paths a killed process left cut short."""
        try:
            with self._core.translate():
                self._mended = tuple(await mend_paths(db, self._policy.is_gone))
        except StorageError:
            # The file still opens: the path stays as it was until the next open mends it.
            _log.warning("could not mend the cut-short paths of %s", self._core.path, exc_info=True)

    async def mended(self) -> tuple[MendedPath, ...]:
        """The conversations whose path opening this file put back: a process killed while
        it changed the path (an older version's edit or regenerate) had left it cut short
        (the empty path over stored messages, or ending above newer messages). Each path now
        ends on the newest leaf below where it ended. Opens the file if it is not yet."""
        await self._core.writer()
        return self._mended

    async def parent_seq(
        self, db: aiosqlite.Connection, session_id: str, parent: str | Root | None
    ) -> tuple[bool, int | None, str]:
        """Inside a write: the parameters of `PARENT_SEQ` for a message stored under
        ``parent`` (None: the active leaf; `ROOT`: none). Raises `MessageNotFoundError` for
        an unknown parent."""
        if parent is None:
            return False, None, session_id
        if parent is ROOT:
            return True, None, session_id
        seq, _parent, _kind = await self.seq_of(db, session_id, parent)
        return True, seq, session_id

    async def seq_of(
        self, db: aiosqlite.Connection | None, session_id: str, message_id: str
    ) -> tuple[int, int | None, str]:
        """The seq, parent seq and type name of message `message_id` (read on `db` inside
        a write; None: on a read connection). Raises `MessageNotFoundError`."""
        sql = SEQ_OF_ID
        if db is None:
            rows = await self._core.read(sql, (session_id, message_id))
        else:
            rows = list(await db.execute_fetchall(sql, (session_id, message_id)))
        if not rows:
            raise MessageNotFoundError(session_id, message_id, str(self._core.path))
        seq, parent, kind = rows[0]
        return int(seq), (int(parent) if parent is not None else None), str(kind)

    async def branch_from(
        self, session_id: str, message_id: str | None, *, lease: Lease | None = None
    ) -> None:
        """Make ``message_id`` the active leaf (None: the empty path, before every root), so
        the next append starts a new branch under it. Nothing is deleted.

        Raises:
            MessageNotFoundError: no such message in the conversation.
            LeaseLostError: ``lease`` was taken over; nothing changed.
        """

        async def body(db: aiosqlite.Connection) -> None:
            if lease is not None:
                await fence(db, lease)
            seq = None
            if message_id is not None:
                seq, _parent, _kind = await self.seq_of(db, session_id, message_id)
            await db.execute("UPDATE sessions SET active_seq = ? WHERE id = ?", (seq, session_id))

        await self._core.write(body)

    async def switch_to(
        self, session_id: str, message_id: str, *, lease: Lease | None = None
    ) -> str:
        """Make the newest leaf under ``message_id`` (itself if it has no children) the active
        leaf; return that leaf's id.

        Raises:
            MessageNotFoundError: no such message in the conversation.
            LeaseLostError: ``lease`` was taken over; nothing changed.
        """

        async def body(db: aiosqlite.Connection) -> str:
            if lease is not None:
                await fence(db, lease)
            seq, _parent, _kind = await self.seq_of(db, session_id, message_id)
            rows = list(await db.execute_fetchall(NEWEST_IN_SUBTREE, (seq, session_id, session_id)))
            leaf, leaf_id = int(rows[0][0]), str(rows[0][1])
            await db.execute("UPDATE sessions SET active_seq = ? WHERE id = ?", (leaf, session_id))
            return leaf_id

        return await self._core.write(body)

    async def parent_of(self, session_id: str, message_id: str) -> tuple[str | None, str]:
        """The id of the message's parent (None for a root) and the message's type name
        (``"user"``, ``"assistant"``...).

        Raises:
            MessageNotFoundError: no such message in the conversation.
        """
        _seq, parent, kind = await self.seq_of(None, session_id, message_id)
        if parent is None:
            return None, kind
        rows = await self._core.read(
            "SELECT id FROM messages WHERE session_id = ? AND seq = ?", (session_id, parent)
        )
        return (str(rows[0][0]) if rows else None), kind

    async def siblings(self, session_id: str, message_id: str) -> list[str]:
        """The ids of the message and its siblings (the children of its parent), oldest
        first: the versions a "‹ 2/3 ›" switcher steps through.

        Raises:
            MessageNotFoundError: no such message in the conversation.
        """
        _seq, parent, _kind = await self.seq_of(None, session_id, message_id)
        rows = await self._core.read(CHILDREN, (session_id, parent))
        return [str(row[1]) for row in rows]

    async def versions(self, session_id: str, seqs: Iterable[int]) -> dict[int, tuple[int, int]]:
        """For each of these messages (by seq), its place among its siblings and their count,
        ``{seq: (index from 0, count)}``, for messages that have siblings; one query."""
        wanted = json.dumps(sorted({int(s) for s in seqs}))
        rows = await self._core.read(VERSIONS, (wanted, session_id))
        return {int(seq): (int(index), int(count)) for seq, index, count in rows if count > 1}

    async def fork_session(
        self,
        session_id: str,
        message_id: str,
        *,
        new_session_id: str | None = None,
        title: str | None = None,
    ) -> str:
        """A new conversation holding the path from the root to ``message_id`` (one branch,
        the same messages and ids), with the conversation's metadata; returns its id.

        Raises:
            MessageNotFoundError: no such message in the conversation.
        """
        new_id = new_session_id if new_session_id is not None else uuid.uuid4().hex

        async def body(db: aiosqlite.Connection) -> str:
            seq, _parent, _kind = await self.seq_of(db, session_id, message_id)
            if await db.execute_fetchall("SELECT 1 FROM sessions WHERE id = ?", (new_id,)):
                raise SessionExistsError(new_id)
            now = time.time()
            # The settings come along (model, system prompt, tool servers); an error the
            # source conversation shows does not.
            await db.execute(
                "INSERT INTO sessions (id, title, created_at, updated_at, metadata) "
                "SELECT ?, COALESCE(?, title), ?, ?, json_remove(metadata, '$.last_error') "
                "FROM sessions WHERE id = ?",
                (new_id, title, now, now, session_id),
            )
            sql = path_sql(
                start=":leaf", columns="m.request_id, m.id, m.type, m.created_at, m.body"
            )
            rows = list(
                await db.execute_fetchall(sql, {"sid": session_id, "leaf": seq, "limit": 2**62})
            )
            for number, (request_id, mid, kind, created_at, text) in enumerate(rows, start=1):
                await db.execute(
                    "INSERT INTO messages "
                    "(session_id, seq, request_id, id, type, created_at, body, parent_seq) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (new_id, number, request_id, mid, kind, created_at, text, number - 1 or None),
                )
            await db.execute(
                "UPDATE sessions SET active_seq = ? WHERE id = ?", (len(rows) or None, new_id)
            )
            # A call on the path that started keeps saying so in the copy.
            calls = [c for _r, _m, kind, _t, text in rows for c in _tool_call_ids(kind, text)]
            await db.execute(
                "INSERT OR IGNORE INTO tool_starts (session_id, tool_call_id, started_at) "
                "SELECT ?, tool_call_id, started_at FROM tool_starts "
                "WHERE session_id = ? AND tool_call_id IN (SELECT value FROM json_each(?))",
                (new_id, session_id, json.dumps(calls)),
            )
            return new_id

        return await self._core.write(body)


def _tool_call_ids(kind: str, body: str | bytes) -> list[str]:
    """The ids of an assistant message's tool calls, from its stored JSON ([] otherwise)."""
    if kind != "assistant":
        return []
    try:
        data = json.loads(body)
        return [str(call["id"]) for call in data.get("tool_calls") or ()]
    except (ValueError, TypeError, KeyError):
        return []  # an unreadable body is reported when the message is read
