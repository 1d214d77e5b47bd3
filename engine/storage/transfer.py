"""Whole conversations out of the file and into it: what export reads and import writes.

The files these go to and come from are `engine.archive`'s; this part of the SQLite store
(`ConversationTransfer`) only reads and writes the rows.

Export (`engine.archive.export`) reads a conversation as it is stored — every message of
every branch with its ``seq``, ``parent_seq`` and ``request_id``, the session row, its tool
start records — in pages of `PAGE_SIZE` messages, each page one read on a read connection of
the store. So a 100,000-message conversation never sits in memory at once, and the app's
own writes never wait for a page (a message appended meanwhile comes in a later page, or
not at all: an export is of the conversation as it was when each page was read).

Import (`engine.archive.importer`) stores one `ImportedConversation` whole, in ONE write
transaction: the session, its messages, its active leaf, its tool start records and the
``imports`` row that names its source. Invariants:

* A conversation whose ``(source, source_id)`` was imported before, or whose own session id
  is taken, adds nothing (`import_conversation` returns None): importing a file twice, or
  into the file it came from, changes nothing.
* The tree is checked before anything is written: seqs are distinct positive integers, a
  parent is an earlier message of the same conversation, the active leaf is one of its
  messages. A conversation that breaks one is refused whole (``archive.bad_tree``).
* The search index is kept by the triggers of schema version 5, in the same transaction.
* The bytes its attachments refer to (``blobs``) are stored in the same transaction, once
  each; a reference with no bytes given or stored refuses the conversation.
* An import keeps conversations, not the state of the app that exported them: of the
  metadata only the keys of `IMPORT_KEEPS` are stored (the model it used, the tool servers
  it did not offer, what a reader notes about the import), each of the type the app writes; everything else — ``last_error`` (an
  error banner with its links), keys a later version adds, keys of another program — is
  dropped. A system prompt is kept but not applied: it is stored as
  `IMPORTED_SYSTEM_PROMPT`, which a host shows, marked as imported, until the person
  accepts it (as the conversation's ``system_prompt``) or discards it.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiosqlite

from ..errors import StorageError
from ..messages import Message, message_to_json
from ..text import clean, clean_data
from .blobs import Blobs
from .core import StorageCore
from .rows import session_info, stored
from .tree import FROM_ACTIVE, path_sql

if TYPE_CHECKING:
    # engine.archive imports this module (IMPORT_KEEPS): the record's type only, here.
    from ..archive.records import ImportedConversation

__all__ = [
    "IMPORTED_SYSTEM_PROMPT",
    "IMPORT_KEEPS",
    "PAGE_SIZE",
    "ArchivedMessage",
    "ArchivedSession",
    "ConversationTransfer",
    "imported_metadata",
]

#: messages read per page while exporting (one read each)
PAGE_SIZE = 500

#: The metadata keys an import keeps, and the type of each value (docs/export-format.md):
#: what the conversation used, never the state of the app that exported it.
IMPORT_KEEPS: dict[str, type] = {
    "provider_id": str,  # the provider it was answered by (one of this app's, if it has it)
    "model": str,  # the model it was answered by
    "tool_servers_off": list,  # the tool servers it did not offer (names)
    # what another program's reader notes about the import (engine.archive.chatgpt)
    "imported_from": str,  # "chatgpt"
    "imported_model": str,  # the model that program named
    "imported_reasoning_dropped": int,  # reasoning steps not carried
}
#: Where an imported conversation's system prompt waits, shown but not applied, until the
#: person accepts it (a host moves it to ``system_prompt``) or discards it.
IMPORTED_SYSTEM_PROMPT = "imported_system_prompt"
#: the metadata key of a conversation's own system prompt (what a request is sent with)
_SYSTEM_PROMPT = "system_prompt"


def imported_metadata(metadata: Any) -> dict[str, Any]:
    """What an import stores of a conversation's metadata (see the module docstring)."""
    if not isinstance(metadata, dict):
        return {}
    kept = {
        key: metadata[key]
        for key, kind in IMPORT_KEEPS.items()
        if isinstance(metadata.get(key), kind) and not isinstance(metadata.get(key), bool)
    }
    if "tool_servers_off" in kept:
        kept["tool_servers_off"] = [n for n in kept["tool_servers_off"] if isinstance(n, str)]
    # The exporting app's own prompt, or one it had imported and not yet accepted.
    for key in (_SYSTEM_PROMPT, IMPORTED_SYSTEM_PROMPT):
        prompt = metadata.get(key)
        if isinstance(prompt, str) and prompt.strip():
            kept[IMPORTED_SYSTEM_PROMPT] = prompt
            break
    return kept


# The session row as `rows.session_info` reads it (text as bytes, so one damaged row is
# reported rather than raising at fetch time), then the active leaf.
_SESSION_ROW = (
    "SELECT CAST(id AS BLOB), CAST(title AS BLOB), typeof(title), created_at, updated_at, "
    "CAST(metadata AS BLOB), active_seq FROM sessions WHERE id = ?"
)

_MESSAGE_COLUMNS = "m.seq, m.parent_seq, m.request_id, CAST(m.body AS BLOB)"

#: every branch, in seq order (parents before children), one page after a given seq
_PAGE = (
    f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE m.session_id = ? AND m.seq > ? "
    "ORDER BY m.seq LIMIT ?"
)

#: the messages of the given seqs (a JSON array): one primary-key lookup each
_BY_SEQS = (
    f"SELECT {_MESSAGE_COLUMNS} FROM json_each(?) w "
    "CROSS JOIN messages m ON m.session_id = ? AND m.seq = w.value ORDER BY m.seq"
)

#: the messages with no child (the ends of the conversation's versions) other than the
#: active leaf
_OTHER_LEAVES = (
    "SELECT COUNT(*) FROM messages m WHERE m.session_id = :sid "
    "AND m.seq IS NOT (SELECT active_seq FROM sessions WHERE id = :sid) AND NOT EXISTS "
    "(SELECT 1 FROM messages c WHERE c.session_id = m.session_id AND c.parent_seq = m.seq)"
)

_INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, seq, request_id, id, type, created_at, body, parent_seq) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True, slots=True)
class ArchivedSession:
    """A conversation's row and its tool start records, as an export writes them."""

    id: str
    title: str | None
    created_at: float  #: seconds since the epoch
    updated_at: float  #: seconds since the epoch
    metadata: dict[str, Any]  #: as stored (an export drops what looks like a secret)
    active_seq: int | None  #: the active leaf; None: the empty path
    #: (tool_call_id, started_at) of every call that started running, oldest first
    tool_starts: tuple[tuple[str, float], ...]
    #: None when the row reads well; else what in it is damaged (see `SessionInfo`)
    unreadable: str | None = None


@dataclass(frozen=True, slots=True)
class ArchivedMessage:
    """One stored message at its place in the tree."""

    seq: int
    parent_seq: int | None  #: None for a root
    request_id: str
    message: Message


class ConversationTransfer:
    """The export reads and the import write of the SQLite store, on the core's
    connections."""

    def __init__(self, core: StorageCore, blobs: Blobs) -> None:
        self._core = core
        self._blobs = blobs

    # ------------------------------------------------------------------ export reads

    async def archived_session_ids(self) -> list[str]:
        """Every conversation's id, the oldest created first."""
        rows = await self._core.read("SELECT id FROM sessions ORDER BY created_at, rowid", ())
        return [str(row[0]) for row in rows]

    async def archived_session(self, session_id: str) -> ArchivedSession | None:
        """The conversation's row and tool start records; None when there is none."""
        rows = await self._core.read(_SESSION_ROW, (session_id,))
        if not rows:
            return None
        info = session_info(rows[0][:6], self._core.path)
        active = rows[0][6]
        starts = await self._core.read(
            "SELECT tool_call_id, started_at FROM tool_starts WHERE session_id = ? "
            "ORDER BY started_at, tool_call_id",
            (session_id,),
        )
        return ArchivedSession(
            id=info.id,
            title=info.title,
            created_at=info.created_at,
            updated_at=info.updated_at,
            metadata=info.metadata,
            active_seq=int(active) if isinstance(active, int) else None,
            tool_starts=tuple((str(call), float(at)) for call, at in starts),
            unreadable=info.unreadable,
        )

    async def count_every_message(self, session_ids: Sequence[str]) -> int:
        """How many messages these conversations hold on every branch (one query)."""
        rows = await self._core.read(
            "SELECT COUNT(*) FROM messages WHERE session_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(session_ids)),),
        )
        return int(rows[0][0])

    async def count_other_versions(self, session_id: str) -> int:
        """How many versions the conversation has besides the one it shows: the messages
        with no child, the active leaf aside."""
        rows = await self._core.read(_OTHER_LEAVES, {"sid": session_id})
        return int(rows[0][0])

    async def active_path_seqs(self, session_id: str) -> list[int]:
        """The seqs of the active path, root first (integers only: cheap to hold)."""
        rows = await self._core.read(
            path_sql(start=FROM_ACTIVE, columns="m.seq"), {"sid": session_id, "limit": 2**62}
        )
        return [int(row[0]) for row in rows]

    async def archived_messages(
        self, session_id: str, *, page_size: int = PAGE_SIZE
    ) -> AsyncGenerator[list[ArchivedMessage], None]:
        """Every message of every branch, in seq order (parents first), a page at a time.

        Raises:
            UnknownMessageTypeError, CorruptDatabaseError: a stored message cannot be read
                (raised when its page is read).
        """
        after = 0
        while True:
            rows = await self._core.read(_PAGE, (session_id, after, page_size))
            if not rows:
                return
            yield [self._archived(row, session_id) for row in rows]
            after = int(rows[-1][0])
            if len(rows) < page_size:
                return

    async def archived_path(
        self, session_id: str, seqs: Sequence[int], *, page_size: int = PAGE_SIZE
    ) -> AsyncGenerator[list[ArchivedMessage], None]:
        """The messages of `seqs` (an `active_path_seqs` answer), a page at a time, in order.

        Raises:
            UnknownMessageTypeError, CorruptDatabaseError: a stored message cannot be read.
        """
        for start in range(0, len(seqs), page_size):
            wanted = json.dumps(list(seqs[start : start + page_size]))
            rows = await self._core.read(_BY_SEQS, (wanted, session_id))
            if rows:
                yield [self._archived(row, session_id) for row in rows]

    def _archived(self, row: Any, session_id: str) -> ArchivedMessage:
        seq, parent, request_id, body = row
        message = stored((seq, request_id, body), session_id, self._core.path).message
        return ArchivedMessage(
            int(seq), int(parent) if parent is not None else None, str(request_id), message
        )

    # ------------------------------------------------------------------ import write

    async def import_conversation(self, conversation: ImportedConversation) -> str | None:
        """Store `conversation` whole in one transaction; return its session id.

        Returns None, adding nothing, when its ``(source, source_id)`` was imported before
        or its ``session_id`` is already a conversation here. Its rows are made (its tree
        checked, each message written as JSON) in a worker thread when it is long, so the
        caller's loop (a window's) keeps running; once its write has begun, the write
        completes even if the caller is cancelled (cancelled before, nothing is written).

        Raises:
            StorageError: ``archive.bad_tree`` — its messages do not form a tree (a seq
                repeated or not positive, a parent that is not an earlier message of it, an
                active leaf that is not one of its messages); ``storage.missing_blob`` — a
                message refers to bytes neither given (``conversation.blobs``) nor stored;
                nothing was written. Or the file's own faults, as for any write.
            ValueError: bytes no message of it refers to (`Blobs.check`).
        """
        self._blobs.check([item.message for item in conversation.messages], conversation.blobs)
        if len(conversation.messages) > _ROWS_INLINE:
            rows = await asyncio.to_thread(self._import_rows, conversation)
        else:
            rows = self._import_rows(conversation)
        sid = rows.sid

        async def body(db: aiosqlite.Connection) -> str | None:
            if await db.execute_fetchall(
                "SELECT 1 FROM imports WHERE source = ? AND source_id = ?",
                (rows.source, rows.source_id),
            ):
                return None
            if await db.execute_fetchall("SELECT 1 FROM sessions WHERE id = ?", (sid,)):
                return None
            await db.execute(
                "INSERT INTO sessions (id, title, created_at, updated_at, metadata, active_seq) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    sid,
                    rows.title,
                    float(conversation.created_at),
                    float(conversation.updated_at),
                    rows.metadata,
                    conversation.active_seq,
                ),
            )
            # The bytes first, in this transaction: a reference without them refuses the
            # conversation (storage.missing_blob) and nothing of it is written.
            await self._blobs.stage(
                db, [item.message for item in conversation.messages], conversation.blobs
            )
            await db.executemany(_INSERT_MESSAGE, rows.messages)
            await db.executemany(
                "INSERT OR IGNORE INTO tool_starts (session_id, tool_call_id, started_at) "
                "VALUES (?, ?, ?)",
                rows.starts,
            )
            await db.execute(
                "INSERT INTO imports (source, source_id, session_id, imported_at) "
                "VALUES (?, ?, ?, ?)",
                (rows.source, rows.source_id, sid, time.time()),
            )
            return sid

        return await self._core.write(body)

    def _import_rows(self, conversation: ImportedConversation) -> _ImportRows:
        """The rows `import_conversation` writes (blocking: in a thread when long)."""
        problem = _tree_problem(conversation)
        name = conversation.title or conversation.source_id
        if problem is not None:
            raise StorageError(
                key="archive.bad_tree",
                params={"name": repr(name), "problem": problem, "path": str(self._core.path)},
            )
        sid = conversation.session_id or uuid.uuid4().hex
        try:
            messages = [
                (
                    sid,
                    item.seq,
                    clean(item.request_id),
                    item.message.id,
                    item.message.type_name,
                    item.message.created_at,
                    message_to_json(item.message),
                    item.parent_seq,
                )
                for item in conversation.messages
            ]
        except (TypeError, ValueError) as exc:  # e.g. provider_data that is not JSON
            raise StorageError(
                key="storage.unwritable_value",
                params={"path": str(self._core.path), "detail": str(exc)},
            ) from exc
        return _ImportRows(
            sid=sid,
            title=clean(conversation.title) if conversation.title is not None else None,
            metadata=json.dumps(
                clean_data(imported_metadata(dict(conversation.metadata))), ensure_ascii=False
            ),
            messages=messages,
            starts=[(sid, clean(call), float(at)) for call, at in conversation.tool_starts],
            source=clean(conversation.source),
            source_id=clean(conversation.source_id),
        )


@dataclass(frozen=True, slots=True)
class _ImportRows:
    """What an imported conversation is written as."""

    sid: str
    title: str | None
    metadata: str
    messages: list[tuple[Any, ...]]
    starts: list[tuple[str, str, float]]
    source: str
    source_id: str


#: conversations with more messages than this have their rows made in a worker thread
_ROWS_INLINE = 500


def _tree_problem(conversation: ImportedConversation) -> str | None:
    """What keeps the conversation's messages from being Continuo's tree, or None."""
    seen: set[int] = set()
    for item in conversation.messages:
        seq = item.seq
        if not _is_int(seq) or seq < 1:
            return f"a message has the position {seq!r}, not a positive whole number"
        if seq in seen:
            return f"two messages have the position {seq}"
        seen.add(seq)
    for item in conversation.messages:
        seq, parent = item.seq, item.parent_seq
        if parent is None:
            continue
        if not _is_int(parent) or parent >= seq:
            return f"message {seq} does not come after its parent {parent!r}"
        if parent not in seen:
            return f"message {seq} has a parent ({parent}) that is not in the conversation"
    active = conversation.active_seq
    if active is not None and (not _is_int(active) or active not in seen):
        return f"the shown version ends at message {active!r}, which is not in the conversation"
    return None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
