"""The schema of a Continuo database file: its versions, and how a file is checked and upgraded.

A file is opened for writing only after it has passed, read-only, every check that could
refuse it — so a file that is refused is never changed, not even by switching it to WAL:

1. the first 16 bytes say ``SQLite format 3`` (or the file is new / empty);
2. a read-only connection (``file:...?mode=ro``) reads it: the header is intact, the
   ``application_id`` is ours or unset, and the tables are Continuo's. No page beyond the
   schema is read: a full integrity check reads every page (2-7 ms a MB) and never runs on
   this path (`engine.storage.integrity` says when it does); damage elsewhere is reported by
   SQLite on the pages a query reads (`CorruptDatabaseError`);
3. ``PRAGMA user_version`` is not newer than `SCHEMA_VERSION`;
4. its schema (``sqlite_master``: tables, indexes, triggers, views) is exactly the one this
   code creates for that version (`expected_schema`). A trigger, view, table or index that
   Continuo does not create — or one of its own, changed — is refused by name
   (`ForeignSchemaError`): a trigger planted in a file (a backup to restore, say) would run
   inside every later write, rewriting or deleting conversations. Reading ``sqlite_master``
   is cheap (a few dozen rows, no scan of the data); the reference is built once per
   process, in memory, by the same steps that migrate a file.

Then the file is switched to WAL and each pending step of `MIGRATIONS` runs in its own
``BEGIN IMMEDIATE`` transaction, which also records the step in ``schema_migrations`` and
sets ``user_version`` to the step's number — so a crash between steps leaves a file at an
exact, recorded version, and two processes opening the same file never apply a step twice.

Schema versions (``PRAGMA user_version``; the number of steps applied):

====  =====================================================================================
1     ``sessions``, ``messages`` (one row per message, key (session_id, seq)), ``leases``
2     ``drafts``: what the streaming step of each session has shown so far (one row a session)
3     ``tool_starts``: the tool calls that started running (one row a call; not messages)
4     the message tree: ``messages.parent_seq`` (each message's parent; NULL for a root),
      ``sessions.active_seq`` (the active leaf; NULL for an empty path), ``drafts.parent_seq``
5     full-text search: ``message_index`` (FTS5, trigram tokenizer) over the text of each
      message, kept by triggers in each append's transaction; ``imports`` (which source
      conversation each imported one came from). Needs SQLite 3.35 with FTS5 (`check_sqlite`)
6     ``writers``: the storages writing to the file now (one row each, deleted when it
      closes); a row whose process is gone is an unclean exit (`engine.storage.integrity`)
7     ``blobs``: attachments' bytes, once each by SHA-256; ``blob_refs``: which message
      refers to which blob, kept by triggers on ``messages``; a blob goes with its last
      reference (`engine.storage.blobs`)
8     search reads attached documents: the indexed text of a user message is its text, then
      the extracted text of each attached document (`INDEXED_TEXT`); the messages that
      already hold documents are indexed again
====  =====================================================================================

Adding a version: append a named function to `MIGRATIONS`, add its line above, and add the
``sqlite3`` dump of a file the new release writes as
``tests/engine/storage_helpers/schema_v<N>.sql`` (old dumps are frozen), so that opening
every earlier version stays proven.
"""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import (
    CorruptDatabaseError,
    ErrorAction,
    ForeignSchemaError,
    NewerSchemaError,
    StorageError,
)
from .files import storage_error

__all__ = [
    "APPLICATION_ID",
    "INDEXED_TEXT",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "TOOL_STARTS_MIGRATION",
    "Migration",
    "is_corruption",
    "MINIMUM_SQLITE",
    "Progress",
    "check_schema",
    "check_sqlite",
    "expected_schema",
    "prepare_database",
]

#: ``PRAGMA application_id`` of a Continuo file ("CNTO"), so another program's SQLite file
#: is recognised and refused rather than having our tables added to it.
APPLICATION_ID = 0x434E544F

_SQLITE_MAGIC = b"SQLite format 3\x00"


#: the oldest SQLite this code runs on: RETURNING (3.35; FTS5's trigram tokenizer is 3.34)
MINIMUM_SQLITE = (3, 35, 0)

#: how a long step reports how far it is: a fraction from 0 to 1 (called from the thread
#: that prepares the file)
Progress = Callable[[float], None]


@dataclass(frozen=True, slots=True)
class Migration:
    """One named schema step; `apply` runs inside the step's transaction."""

    name: str
    summary: str  #: one line describing what the version adds
    apply: Callable[[sqlite3.Connection], None]
    #: for a step whose cost grows with the file: the same, telling its progress
    apply_with_progress: Callable[[sqlite3.Connection, Progress], None] | None = None


def check_sqlite(version: str | None = None) -> None:
    """Raise `StorageError` (``storage.old_sqlite``) unless this SQLite can hold our files:
    3.35 or newer, built with FTS5 and its trigram tokenizer.

    `version` stands in for ``sqlite3.sqlite_version`` (tests).
    """
    found = version if version is not None else sqlite3.sqlite_version
    numbers = tuple(int(part) for part in found.split(".")[:3] if part.isdigit())
    needed = ".".join(map(str, MINIMUM_SQLITE))
    if numbers < MINIMUM_SQLITE:
        raise StorageError(key="storage.old_sqlite", params={"found": found, "needed": needed})
    if version is not None:
        return
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'trigram')")
    except sqlite3.Error as exc:
        raise StorageError(
            key="storage.old_sqlite", params={"found": f"{found} (without FTS5)", "needed": needed}
        ) from exc
    finally:
        db.close()


def _create_core_tables(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            title TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}'
        )
        """
    )
    db.execute("CREATE INDEX sessions_by_updated ON sessions(updated_at)")
    # The primary key's index on (session_id, seq) is the index that makes "the last N
    # messages of a session" (WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT N)
    # one range scan, whatever the length of the history.
    db.execute(
        """
        CREATE TABLE messages (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            request_id TEXT NOT NULL,
            id TEXT NOT NULL,
            type TEXT NOT NULL,
            created_at REAL NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        )
        """
    )
    # No foreign key here: a request takes the lease before its first message creates the
    # session.
    db.execute(
        """
        CREATE TABLE leases (
            session_id TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            boot_id TEXT NOT NULL,
            pid INTEGER NOT NULL,
            process_started REAL,
            token TEXT NOT NULL,
            acquired_at REAL NOT NULL,
            heartbeat_at REAL NOT NULL
        )
        """
    )
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")


def _create_drafts(db: sqlite3.Connection) -> None:
    # One row per session: the step streaming now (see engine.storage.drafts). ``token`` is
    # the lease token of the request that wrote it (NULL without a lease); ``body`` is the
    # JSON of the assistant message the draft becomes if its writer dies.
    db.execute(
        """
        CREATE TABLE drafts (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            request_id TEXT NOT NULL,
            token TEXT,
            id TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            body TEXT NOT NULL
        )
        """
    )


#: The name of the step adding ``tool_starts``: its ``applied_at`` is the time from which a
#: missing start record means a call never ran (calls asked earlier were never recorded).
TOOL_STARTS_MIGRATION = "0003_tool_starts"


def _create_tool_starts(db: sqlite3.Connection) -> None:
    # One row per tool call that was let through and was about to run, written just before
    # it runs (see SQLiteSessionStorage.record_tool_start). Not a message: no history reader
    # sees it; resume reads it to tell a call that never started from one that may have run.
    db.execute(
        """
        CREATE TABLE tool_starts (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            tool_call_id TEXT NOT NULL,
            started_at REAL NOT NULL,
            PRIMARY KEY (session_id, tool_call_id)
        )
        """
    )


def _create_message_tree(db: sqlite3.Connection) -> None:
    # Each message gets a parent; the history a model sees is the path from a root to the
    # session's active leaf (see engine.storage.tree). An existing file becomes a tree whose
    # one branch is its old history: each message's parent is the one before it, and the
    # active leaf is the last message.
    db.execute("ALTER TABLE messages ADD COLUMN parent_seq INTEGER")
    db.execute("ALTER TABLE sessions ADD COLUMN active_seq INTEGER")
    # The parent of a draft's message: the active leaf when the draft was written.
    db.execute("ALTER TABLE drafts ADD COLUMN parent_seq INTEGER")
    db.execute(
        "UPDATE messages SET parent_seq = (SELECT MAX(p.seq) FROM messages p "
        "WHERE p.session_id = messages.session_id AND p.seq < messages.seq)"
    )
    db.execute(
        "UPDATE sessions SET active_seq = "
        "(SELECT MAX(m.seq) FROM messages m WHERE m.session_id = sessions.id)"
    )
    db.execute(
        "UPDATE drafts SET parent_seq = "
        "(SELECT MAX(m.seq) FROM messages m WHERE m.session_id = drafts.session_id)"
    )
    # Children of a message in order (siblings, the newest leaf under a message), and a
    # message by its id (edit, switch, fork name messages by id).
    db.execute("CREATE INDEX messages_by_parent ON messages(session_id, parent_seq, seq)")
    # (seq last: the newest row of an id is found in the index, not by walking the table)
    db.execute("CREATE INDEX messages_by_id ON messages(session_id, id, seq)")


#: the text a message is found by: what the window shows of it (not the resume prompts)
# An array of content parts (a later version's) is indexed as its JSON text.
# A body that is not JSON (a damaged row) is indexed as no text: json_extract would raise, and
# the trigger with it would refuse the write (deleting the damaged conversation, say).
_TEXT_OF = (
    "CASE WHEN {row}.type IN ('user', 'assistant', 'tool', 'system') AND json_valid({row}.body) "
    "THEN json_extract({row}.body, '$.content') END"
)

#: rows indexed per statement while a migration builds the index (progress is told between)
_INDEX_BATCH = 5000


def _create_search_index(db: sqlite3.Connection, progress: Progress | None = None) -> None:
    # An external-content FTS5 table: the text lives once, in messages.body; the index keeps
    # only trigrams and reads the text back through the view (snippets). Keyed by the
    # messages' rowid, which only VACUUM could renumber (nothing here vacuums; a backup
    # copies pages, rowids included). The trigram tokenizer finds any substring of three or
    # more characters, so Chinese, which has no spaces between words, is found like English.
    db.execute(
        f"CREATE VIEW message_text(rid, text) AS SELECT rowid, {_TEXT_OF.format(row='messages')} "
        "FROM messages"
    )
    db.execute(
        "CREATE VIRTUAL TABLE message_index USING fts5(text, content = 'message_text', "
        "content_rowid = 'rid', tokenize = 'trigram')"
    )
    # Triggers keep the index in the transaction of each write (an append's, a deletion's).
    db.execute(
        "CREATE TRIGGER message_indexed AFTER INSERT ON messages BEGIN "
        "INSERT INTO message_index(rowid, text) "
        f"VALUES (new.rowid, {_TEXT_OF.format(row='new')}); END"
    )
    db.execute(
        "CREATE TRIGGER message_unindexed AFTER DELETE ON messages BEGIN "
        "INSERT INTO message_index(message_index, rowid, text) "
        f"VALUES ('delete', old.rowid, {_TEXT_OF.format(row='old')}); END"
    )
    db.execute(
        "CREATE TRIGGER message_reindexed AFTER UPDATE OF body, type ON messages BEGIN "
        "INSERT INTO message_index(message_index, rowid, text) "
        f"VALUES ('delete', old.rowid, {_TEXT_OF.format(row='old')}); "
        "INSERT INTO message_index(rowid, text) "
        f"VALUES (new.rowid, {_TEXT_OF.format(row='new')}); END"
    )
    # Index what the file already holds, in batches so that a long build can say how far it is.
    total = db.execute("SELECT COUNT(*), MIN(rowid), MAX(rowid) FROM messages").fetchone()
    count, low, high = total
    if count:
        done = 0
        for start in range(low, high + 1, _INDEX_BATCH):
            cursor = db.execute(
                "INSERT INTO message_index(rowid, text) SELECT rid, text FROM message_text "
                "WHERE rid >= ? AND rid < ?",
                (start, start + _INDEX_BATCH),
            )
            done += max(cursor.rowcount, 0)
            if progress is not None:
                progress(min(done / count, 0.99))  # 1.0 is said after the commit
    # Which conversation of another file or program an imported one is: a second import of
    # the same export adds nothing (engine.archive).
    db.execute(
        """
        CREATE TABLE imports (
            source TEXT NOT NULL,
            source_id TEXT NOT NULL,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            imported_at REAL NOT NULL,
            PRIMARY KEY (source, source_id)
        )
        """
    )
    db.execute("CREATE INDEX imports_by_session ON imports(session_id)")


def _create_writers(db: sqlite3.Connection) -> None:
    # One row per open storage that has written to the file, written in its first write's
    # transaction and deleted when it closes (engine.storage.integrity). A row whose process
    # is gone (killed, crashed, a power cut) is an unclean exit: the full check runs.
    db.execute(
        """
        CREATE TABLE writers (
            token TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            boot_id TEXT NOT NULL,
            pid INTEGER NOT NULL,
            process_started REAL,
            since REAL NOT NULL
        )
        """
    )


#: the blob references of a message row's body, for a trigger (``{row}``: new or old): its
#: attachments' ``blob`` fields. A body that is not JSON, or whose attachments are not a list
#: of objects, refers to nothing (the trigger must never refuse a write; such a row is
#: reported as damaged when read).
_REFS_OF = (
    "SELECT DISTINCT json_extract(part.value, '$.blob') AS ref FROM json_each("
    "CASE WHEN {row}.type = 'user' AND json_valid({row}.body) "
    "AND json_type({row}.body, '$.attachments') = 'array' THEN {row}.body ELSE '[]' END, "
    "CASE WHEN {row}.type = 'user' AND json_valid({row}.body) "
    "AND json_type({row}.body, '$.attachments') = 'array' THEN '$.attachments' ELSE '$' END"
    ") AS part WHERE part.type = 'object' "
    "AND json_type(part.value, '$.blob') = 'text'"
)


def _create_blobs(db: sqlite3.Connection) -> None:
    # The bytes of attachments, once each: the key is their SHA-256 (hex), so the same picture
    # attached twice, or kept by many branches and forks, is one row. An ordinary rowid
    # table: a WITHOUT ROWID table would hold large rows in its b-tree pages.
    db.execute(
        """
        CREATE TABLE blobs (
            sha256 TEXT PRIMARY KEY,
            data BLOB NOT NULL,
            size INTEGER NOT NULL,
            media_type TEXT NOT NULL
        )
        """
    )
    # Which message refers to which blob: one row a (blob, message). Kept by the triggers
    # below on every write of a message, whatever writes it (an append, a fork's copy, an
    # import), so it can never disagree with the messages' bodies.
    db.execute(
        """
        CREATE TABLE blob_refs (
            sha256 TEXT NOT NULL,
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (sha256, session_id, seq)
        ) WITHOUT ROWID
        """
    )
    db.execute("CREATE INDEX blob_refs_by_message ON blob_refs(session_id, seq)")
    # Only user messages carry attachments: no other row runs these triggers' statements.
    db.execute(
        "CREATE TRIGGER message_blobs_held AFTER INSERT ON messages WHEN new.type = 'user' BEGIN "
        "INSERT OR IGNORE INTO blob_refs (sha256, session_id, seq) "
        f"SELECT ref, new.session_id, new.seq FROM ({_REFS_OF.format(row='new')}); END"
    )
    # A changed body: its new references first, then the old ones it dropped (a blob both
    # refer to is never released in between).
    db.execute(
        "CREATE TRIGGER message_blobs_changed AFTER UPDATE OF body, type ON messages "
        "WHEN new.type = 'user' OR old.type = 'user' BEGIN "
        "INSERT OR IGNORE INTO blob_refs (sha256, session_id, seq) "
        f"SELECT ref, new.session_id, new.seq FROM ({_REFS_OF.format(row='new')}); "
        "DELETE FROM blob_refs WHERE session_id = old.session_id AND seq = old.seq "
        f"AND sha256 NOT IN ({_REFS_OF.format(row='new')}); END"
    )
    db.execute(
        "CREATE TRIGGER message_blobs_released AFTER DELETE ON messages BEGIN "
        "DELETE FROM blob_refs WHERE session_id = old.session_id AND seq = old.seq; END"
    )
    # The last reference gone (its message deleted: today, with its conversation), the bytes
    # go in the same transaction: a blob is kept exactly while a message of any branch of any
    # conversation refers to it.
    db.execute(
        "CREATE TRIGGER blob_released AFTER DELETE ON blob_refs "
        "WHEN NOT EXISTS (SELECT 1 FROM blob_refs WHERE sha256 = old.sha256) BEGIN "
        "DELETE FROM blobs WHERE sha256 = old.sha256; END"
    )


#: The text a message is found by since version 8 (``{row}``: a row alias): what the window
#: shows of it, then, for a user message, the extracted text of each attached document, a line
#: apart. A message without documents gives exactly `_TEXT_OF`'s text (the version 5 index
#: stays right for it). Parts that are not objects, or whose ``text`` is not text, add nothing:
#: the trigger must never refuse a write (such a row is reported as damaged when read).
#: The parts are walked by position, not by ``json_each``: FTS5 reads its content (``rebuild``,
#: its integrity check) with statements that may not use a table-valued function.
INDEXED_TEXT = (
    "CASE WHEN {row}.type IN ('user', 'assistant', 'tool', 'system') AND json_valid({row}.body) "
    "THEN json_extract({row}.body, '$.content') || CASE WHEN {row}.type = 'user' THEN "
    "coalesce(char(10) || (WITH RECURSIVE part(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM part "
    "WHERE n + 1 < json_array_length({row}.body, '$.attachments')) "
    "SELECT group_concat(json_extract({row}.body, '$.attachments[' || n || '].text'), char(10)) "
    "FROM part WHERE json_extract({row}.body, '$.attachments[' || n || '].kind') = 'document' "
    "AND json_type({row}.body, '$.attachments[' || n || '].text') = 'text'), '') "
    "ELSE '' END END"
)

#: the rowids of the messages that refer to a blob (the only ones that may hold documents)
_WITH_BLOBS = (
    "SELECT DISTINCT m.rowid FROM blob_refs r "
    "JOIN messages m ON m.session_id = r.session_id AND m.seq = r.seq"
)


def _index_documents(db: sqlite3.Connection) -> None:
    # The messages holding documents leave the index under the text they were indexed by
    # (the version 5 view's), the view and its triggers are made again with `INDEXED_TEXT`,
    # and those messages come back under the new text. Only messages that refer to a blob can
    # hold a document (schema 7 keeps blob_refs), so the step costs nothing that grows with
    # the rest of the file.
    db.execute(
        "INSERT INTO message_index(message_index, rowid, text) "
        f"SELECT 'delete', rid, text FROM message_text WHERE rid IN ({_WITH_BLOBS})"
    )
    for trigger in ("message_indexed", "message_unindexed", "message_reindexed"):
        db.execute(f"DROP TRIGGER {trigger}")
    db.execute("DROP VIEW message_text")
    db.execute(
        "CREATE VIEW message_text(rid, text) AS SELECT rowid, "
        f"{INDEXED_TEXT.format(row='messages')} FROM messages"
    )
    db.execute(
        "CREATE TRIGGER message_indexed AFTER INSERT ON messages BEGIN "
        "INSERT INTO message_index(rowid, text) "
        f"VALUES (new.rowid, {INDEXED_TEXT.format(row='new')}); END"
    )
    db.execute(
        "CREATE TRIGGER message_unindexed AFTER DELETE ON messages BEGIN "
        "INSERT INTO message_index(message_index, rowid, text) "
        f"VALUES ('delete', old.rowid, {INDEXED_TEXT.format(row='old')}); END"
    )
    db.execute(
        "CREATE TRIGGER message_reindexed AFTER UPDATE OF body, type ON messages BEGIN "
        "INSERT INTO message_index(message_index, rowid, text) "
        f"VALUES ('delete', old.rowid, {INDEXED_TEXT.format(row='old')}); "
        "INSERT INTO message_index(rowid, text) "
        f"VALUES (new.rowid, {INDEXED_TEXT.format(row='new')}); END"
    )
    db.execute(
        "INSERT INTO message_index(rowid, text) "
        f"SELECT rid, text FROM message_text WHERE rid IN ({_WITH_BLOBS})"
    )


#: The ordered steps; a file's version is the number of them applied.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001_core_tables",
        "sessions, messages (one row per message, key (session_id, seq)), leases",
        _create_core_tables,
    ),
    Migration(
        "0002_drafts",
        "drafts: what the streaming step of each session has shown so far (one row a session)",
        _create_drafts,
    ),
    Migration(
        TOOL_STARTS_MIGRATION,
        "tool_starts: the tool calls that started running (one row a call; not messages)",
        _create_tool_starts,
    ),
    Migration(
        "0004_message_tree",
        "the message tree: each message's parent, each session's active leaf",
        _create_message_tree,
    ),
    Migration(
        "0005_search_index",
        "full-text search over every message (FTS5 trigram); the record of imports",
        _create_search_index,
        _create_search_index,
    ),
    Migration(
        "0006_writers",
        "writers: the storages writing to the file now (a row of a gone process: an unclean "
        "exit, checked in full)",
        _create_writers,
    ),
    Migration(
        "0007_blobs",
        "blobs: attachments' bytes, once each by SHA-256, kept while a message refers to them",
        _create_blobs,
    ),
    Migration(
        "0008_search_documents",
        "search reads attached documents' text (the messages holding documents indexed again)",
        _index_documents,
    ),
)

#: The newest schema version this code reads and writes.
SCHEMA_VERSION = len(MIGRATIONS)

#: the record of applied steps, created by the first step's transaction
_SCHEMA_MIGRATIONS = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
)

#: One object of a schema as ``sqlite_master`` lists it: (type, name, table, SQL with its
#: white space folded; None for an index SQLite makes for a key).
SchemaObject = tuple[str, str, str, str | None]

#: Tables SQLite itself may add to a file of ours, with the only SQL it gives them: the
#: statistics ``ANALYZE`` (or ``PRAGMA optimize``, run by hand) keeps. Nothing runs from them.
_SQLITE_OWN: frozenset[SchemaObject] = frozenset(
    {
        ("table", "sqlite_stat1", "sqlite_stat1", "CREATE TABLE sqlite_stat1(tbl,idx,stat)"),
        (
            "table",
            "sqlite_stat4",
            "sqlite_stat4",
            "CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)",
        ),
    }
)


def _folded(sql: str | None) -> str | None:
    return " ".join(sql.split()) if sql is not None else None


def _schema_of(db: sqlite3.Connection) -> set[SchemaObject]:
    return {
        (str(kind), str(name), str(table), _folded(sql))
        for kind, name, table, sql in db.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master"
        )
    }


@functools.cache
def expected_schema(version: int) -> frozenset[SchemaObject]:
    """The schema this code gives a file at `version`: its steps applied to an empty
    database in memory (a few milliseconds, once per version and process)."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        if version > 0:
            db.execute(_SCHEMA_MIGRATIONS)
        for step in MIGRATIONS[:version]:
            step.apply(db)
        return frozenset(_schema_of(db))
    finally:
        db.close()


def _shadow_tables(schema: frozenset[SchemaObject]) -> frozenset[str]:
    """The tables a full-text index keeps its data in (``message_index_data``...): named
    after their virtual table; their SQL is FTS5's own, which may differ between SQLite
    releases, so only their names are compared."""
    virtual = [
        o[1] for o in schema if o[0] == "table" and (o[3] or "").startswith("CREATE VIRTUAL")
    ]
    return frozenset(
        o[1]
        for o in schema
        if o[0] == "table" and any(o[1].startswith(f"{name}_") for name in virtual)
    )


def check_schema(db: sqlite3.Connection, path: Path, version: int) -> None:
    """Raise unless the schema of the file open on `db` is the one `version` has.

    Raises:
        ForeignSchemaError: it holds an object this code does not create for `version`, or
            one of its own with other SQL (named in the sentence).
        CorruptDatabaseError: an object of that version is missing.
    """
    expected = expected_schema(version)
    found = _schema_of(db)
    if found == expected:
        return
    shadows = _shadow_tables(expected)
    names = {(o[0], o[1]): o for o in expected}
    extra = sorted((o for o in found - expected if o not in _SQLITE_OWN), key=lambda o: o[:2])
    for kind, name, table, _sql in extra:
        own = names.get((kind, name))
        if own is not None and name in shadows and own[2] == table:
            continue  # a shadow table of the index, as this SQLite's FTS5 writes it
        raise ForeignSchemaError(str(path), kind, name, changed=own is not None)
    seen = {(o[0], o[1]) for o in found}
    missing = sorted(key for key in names if key not in seen)
    if missing:
        kind, name = missing[0]
        raise CorruptDatabaseError(str(path), f"its {kind} {name} is missing")


def prepare_database(
    path: Path, *, busy_timeout: float = 5.0, progress: Progress | None = None
) -> int:
    """Check the file at `path` and bring it to `SCHEMA_VERSION`, creating it if missing.

    Blocking; run it in a thread. Returns the number of steps applied now. A step whose
    cost grows with the file (building the search index) calls `progress` with the
    fraction done, from this thread.

    Raises:
        CorruptDatabaseError: the file is not SQLite, is damaged, or is another program's
            database. The file is not changed.
        ForeignSchemaError: the file holds a table, index, trigger or view this version does
            not create (or one of its own, changed). The file is not changed.
        NewerSchemaError: the file was written by a newer version. The file is not changed.
        StorageFullError, StorageReadOnlyError, StoragePermissionError, StorageIOError: the
            disk or the operating system refused (see `engine.storage.files`).
        StorageError: another program kept the file locked for `busy_timeout` seconds.
    """
    deadline = time.monotonic() + busy_timeout
    delay = 0.005
    while True:
        try:
            return _prepare_once(path, busy_timeout, progress)
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise storage_error(exc, path) from exc
            if time.monotonic() > deadline:
                raise StorageError(
                    key="storage.locked",
                    params={"path": str(path)},
                    action=ErrorAction.CLOSE_OTHER,
                ) from exc
        # Another connection is creating or migrating the same file. SQLite answers BUSY at
        # once (without its busy handler) when two connections race to switch a new file to
        # WAL, so the whole preparation is retried, briefly, from the start.
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _prepare_once(path: Path, busy_timeout: float, progress: Progress | None) -> int:
    if path.exists() and path.stat().st_size > 0:
        _inspect_read_only(path)
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout)
    except sqlite3.Error as exc:
        raise storage_error(exc, path) from exc
    try:
        db.execute("PRAGMA journal_mode = WAL")
        return _migrate(db, path, progress)
    except sqlite3.DatabaseError as exc:
        if _is_busy(exc):
            raise  # retried by prepare_database
        raise storage_error(exc, path) from exc
    finally:
        db.close()


def _inspect_read_only(path: Path) -> None:
    """Refuse the file, untouched, if it is not a Continuo database this code can write."""
    with path.open("rb") as handle:
        header = handle.read(len(_SQLITE_MAGIC))
    if header != _SQLITE_MAGIC:
        raise CorruptDatabaseError(str(path), "it does not start with the SQLite header")
    try:
        ro = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise storage_error(exc, path) from exc
    try:
        # One read transaction: every answer below comes from the same snapshot, even while
        # another process migrates the file.
        ro.execute("BEGIN")
        found = ro.execute("PRAGMA user_version").fetchone()[0]
        app_id = ro.execute("PRAGMA application_id").fetchone()[0]
        if found > SCHEMA_VERSION:
            raise NewerSchemaError(str(path), found, SCHEMA_VERSION)
        if app_id not in (0, APPLICATION_ID):
            raise CorruptDatabaseError(str(path), "it belongs to another program")
        tables = {
            row[0]
            for row in ro.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        }
        if found == 0 and tables:
            raise CorruptDatabaseError(str(path), "it holds tables of another program")
        if found > 0 and "schema_migrations" not in tables:
            raise CorruptDatabaseError(str(path), "its migration record is missing")
        check_schema(ro, path, found)
    except sqlite3.DatabaseError as exc:
        if _is_busy(exc):
            raise  # retried by prepare_database
        # Damage is CorruptDatabaseError; a refusal by the disk or the OS is told as such,
        # so nobody is advised to move a good file aside.
        raise storage_error(exc, path) from exc
    finally:
        ro.close()


def _migrate(db: sqlite3.Connection, path: Path, progress: Progress | None) -> int:
    applied = 0
    for number, step in enumerate(MIGRATIONS, start=1):
        if db.execute("PRAGMA user_version").fetchone()[0] >= number:
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have applied it while we waited for the write lock.
            current = db.execute("PRAGMA user_version").fetchone()[0]
            if current > SCHEMA_VERSION:
                raise NewerSchemaError(str(path), current, SCHEMA_VERSION)
            if current >= number:
                db.execute("ROLLBACK")
                continue
            db.execute(_SCHEMA_MIGRATIONS)
            told: list[float] = []
            if step.apply_with_progress is not None and progress is not None:
                step.apply_with_progress(db, _fed(progress, told))
            else:
                step.apply(db)
            db.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (step.name, time.time()),
            )
            db.execute(f"PRAGMA user_version = {number}")
            db.execute("COMMIT")
            applied += 1
            if told and progress is not None:
                progress(1.0)  # done means committed: said only once the step is in the file
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    return applied


def _fed(progress: Progress, told: list[float]) -> Progress:
    """`progress`, also noting each fraction in `told` (so the end is said after the commit)."""

    def tell(done: float) -> None:
        told.append(done)
        progress(done)

    return tell


def _is_busy(exc: sqlite3.Error) -> bool:
    # SQLITE_BUSY (5) and SQLITE_LOCKED (6), extended codes included.
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF) in (5, 6)


def is_corruption(exc: sqlite3.DatabaseError) -> bool:
    """Return True when SQLite reports the file damaged or not a database."""
    # SQLITE_CORRUPT (11) and SQLITE_NOTADB (26), extended codes included.
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF) in (11, 26)
