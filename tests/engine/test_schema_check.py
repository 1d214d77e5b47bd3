"""A file whose schema is not the one Continuo creates is refused, by open and by restore.

A backup can come from anywhere. One holding a trigger of another program's making would run
inside every later append (rewriting each saved message, deleting the earlier ones), so the
schema of a file (``sqlite_master``: tables, indexes, triggers, views) must be exactly the
one this version creates for the file's schema version. Each case here plants one object in
an honest file, of every schema version (the frozen dumps of tests/engine/storage_helpers),
and checks that opening and restoring refuse it by name, leaving every byte as it was; the
honest files themselves still open, restore and migrate.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from pathlib import Path

import pytest

from engine import CorruptDatabaseError, ForeignSchemaError, SQLiteSessionStorage, UserMessage
from engine.storage.backup import inspect_backup, restore_database
from engine.storage.migrations import MIGRATIONS, SCHEMA_VERSION, expected_schema

pytestmark = pytest.mark.timeout(60)

DUMPS = sorted((Path(__file__).parent / "storage_helpers").glob("schema_v*.sql"))

#: what each case plants, and the name the refusal must give
PLANTED = {
    # The attack seen: every saved message rewritten, the earlier ones deleted, silently.
    "trigger": (
        "hijack",
        "CREATE TRIGGER hijack AFTER INSERT ON messages BEGIN "
        "UPDATE messages SET body = json_set(body, '$.content', 'HIJACKED') "
        "WHERE session_id = new.session_id AND seq = new.seq; "
        "DELETE FROM messages WHERE session_id = new.session_id AND seq < new.seq; END",
    ),
    "view": ("every_body", "CREATE VIEW every_body AS SELECT body FROM messages"),
    "table": ("stash", "CREATE TABLE stash (what TEXT)"),
    "index": ("by_type", "CREATE INDEX by_type ON messages(type)"),
}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _build(dump: Path, path: Path) -> Path:
    with sqlite3.connect(path) as raw:
        raw.executescript(dump.read_text(encoding="utf-8"))
    raw.close()
    return path


def _plant(path: Path, sql: str) -> None:
    db = sqlite3.connect(path)
    db.execute(sql)
    db.commit()
    db.close()


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


async def _sessions(path: Path) -> dict[str, int]:
    storage = SQLiteSessionStorage(path)
    try:
        return {s.id: await storage.count_all_messages(s.id) for s in await storage.list_sessions()}
    finally:
        await storage.close()


async def _current(folder: Path) -> Path:
    data = folder / "data" / "continuo.sqlite3"
    storage = SQLiteSessionStorage(data)
    try:
        await storage.append("current", "r1", UserMessage(content="what I have now"))
    finally:
        await storage.close()
    return data


def _assert_names(error: ForeignSchemaError, path: Path, name: str) -> None:
    for language in ("en", "zh_CN"):
        said = error.sentence(language)
        assert str(path) in said and repr(name) in said, said
    assert error.sentence("zh_CN") != error.sentence("en")
    assert error.name == name


@pytest.mark.parametrize("kind", sorted(PLANTED))
@pytest.mark.parametrize("dump", DUMPS, ids=[d.stem for d in DUMPS])
async def test_a_planted_object_is_refused_by_open_and_nothing_changes(tmp_path, dump, kind):
    name, sql = PLANTED[kind]
    path = _build(dump, tmp_path / "planted.sqlite3")
    _plant(path, sql)
    digest, files = _digest(path), _files(tmp_path)

    storage = SQLiteSessionStorage(path)
    try:
        with pytest.raises(ForeignSchemaError) as caught:
            await storage.list_sessions()
    finally:
        await storage.close()

    _assert_names(caught.value, path, name)
    assert caught.value.kind == kind and not caught.value.changed
    assert _digest(path) == digest, "the refused file is not changed (not even migrated)"
    assert _files(tmp_path) == files, "no -wal or -shm was created beside it"


@pytest.mark.parametrize("kind", sorted(PLANTED))
@pytest.mark.parametrize("dump", DUMPS, ids=[d.stem for d in DUMPS])
async def test_a_planted_object_is_refused_by_restore_and_nothing_changes(tmp_path, dump, kind):
    name, sql = PLANTED[kind]
    data = await _current(tmp_path)
    backup = _build(dump, tmp_path / "backup.db")
    _plant(backup, sql)
    digests = (_digest(data), _digest(backup))
    files = _files(data.parent)

    with pytest.raises(ForeignSchemaError) as inspected:
        await asyncio.to_thread(inspect_backup, backup)
    with pytest.raises(ForeignSchemaError) as caught:
        await asyncio.to_thread(restore_database, data, backup)

    _assert_names(inspected.value, backup, name)
    _assert_names(caught.value, backup, name)
    assert (_digest(data), _digest(backup)) == digests
    assert _files(data.parent) == files, "nothing was moved aside"
    assert await _sessions(data) == {"current": 1}


async def test_one_of_our_own_triggers_changed_is_refused_as_changed(tmp_path):
    """The same name with other SQL: the index's trigger rewritten to hijack each message."""
    path = _build(DUMPS[-1], tmp_path / "changed.sqlite3")
    _plant(path, "DROP TRIGGER message_indexed")
    _plant(path, PLANTED["trigger"][1].replace("hijack", "message_indexed"))
    digest = _digest(path)
    storage = SQLiteSessionStorage(path)
    try:
        with pytest.raises(ForeignSchemaError) as caught:
            await storage.list_sessions()
    finally:
        await storage.close()
    assert caught.value.changed and caught.value.kind == "trigger"
    assert "differs from the one Continuo creates" in caught.value.sentence("en")
    _assert_names(caught.value, path, "message_indexed")
    assert _digest(path) == digest


async def test_a_missing_index_is_damage_and_is_refused(tmp_path):
    path = _build(DUMPS[-1], tmp_path / "missing.sqlite3")
    _plant(path, "DROP INDEX messages_by_id")
    digest = _digest(path)
    storage = SQLiteSessionStorage(path)
    try:
        with pytest.raises(CorruptDatabaseError) as caught:
            await storage.list_sessions()
    finally:
        await storage.close()
    assert "messages_by_id is missing" in caught.value.sentence("en")
    assert _digest(path) == digest


@pytest.mark.parametrize("dump", DUMPS, ids=[d.stem for d in DUMPS])
async def test_an_honest_backup_of_each_version_restores_and_migrates(tmp_path, dump):
    data = await _current(tmp_path)
    backup = _build(dump, tmp_path / "backup.db")
    summary = await asyncio.to_thread(inspect_backup, backup)
    assert summary.conversations == 2
    aside = await asyncio.to_thread(restore_database, data, backup)
    assert aside is not None and await _sessions(aside) == {"current": 1}
    storage = SQLiteSessionStorage(data)
    try:
        await storage.append("chat-1", "r9", UserMessage(content="after the restore"))
        assert (await storage.load("chat-1"))[-1].content == "after the restore"
        assert len(await storage.search_messages("after the restore")) == 1
    finally:
        await storage.close()
    with sqlite3.connect(data) as raw:
        assert raw.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    raw.close()


async def test_the_statistics_sqlite_keeps_are_not_foreign(tmp_path):
    """``ANALYZE`` (or ``PRAGMA optimize``) run by hand adds SQLite's own statistics tables:
    nothing runs from them, and the file still opens."""
    path = tmp_path / "analysed.sqlite3"
    storage = SQLiteSessionStorage(path)
    try:
        await storage.append("a", "r", UserMessage(content="hello there"))
    finally:
        await storage.close()
    _plant(path, "ANALYZE")
    assert await _sessions(path) == {"a": 1}


def test_the_reference_schema_is_what_a_new_file_gets(tmp_path):
    """The reference each version is checked against is what this code writes into a file."""
    import engine.storage.migrations as migrations

    path = tmp_path / "new.sqlite3"
    migrations.prepare_database(path)
    db = sqlite3.connect(path)
    try:
        found = migrations._schema_of(db)
    finally:
        db.close()
    assert found == set(expected_schema(len(MIGRATIONS)))
    kinds = {o[0] for o in found}
    assert kinds == {"table", "index", "trigger", "view"}
