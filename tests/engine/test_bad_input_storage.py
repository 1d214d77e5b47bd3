"""Files the storage must refuse, naming them and leaving them byte-for-byte untouched."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from engine.errors import CorruptDatabaseError, NewerSchemaError, UnknownMessageTypeError
from engine.extensions import RunContext
from engine.messages import UserMessage
from engine.storage import SQLiteSessionExtension, SQLiteSessionStorage
from engine.storage.migrations import SCHEMA_VERSION


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def real_database(path: Path, messages: int = 200) -> None:
    s = SQLiteSessionStorage(path)
    for i in range(messages):
        await s.append("s", "r", UserMessage(content=f"message {i} " + "text " * 40))
    await s.close()
    # Fold the WAL into the file so the file alone is the database, as after a clean exit.
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()


async def refused(
    path: Path, expected: type[Exception], use: Callable[[SQLiteSessionStorage], Awaitable[Any]]
) -> Exception:
    """Open `path`, run `use`, expect `expected`; check the file did not change."""
    before = digest(path)
    storage = SQLiteSessionStorage(path)
    try:
        with pytest.raises(expected) as caught:
            await use(storage)
        # A second attempt checks the file again and refuses it again.
        with pytest.raises(expected):
            await use(storage)
    finally:
        await storage.close()
    assert digest(path) == before, "a refused file was changed"
    assert str(path) in str(caught.value)
    assert caught.value.path == str(path)  # type: ignore[attr-defined]
    return caught.value


async def test_random_bytes_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "noise.sqlite3"
    path.write_bytes(random.Random(7).randbytes(8192))
    error = await refused(path, CorruptDatabaseError, lambda s: s.list_sessions())
    assert "SQLite header" in str(error) and "not changed" in str(error)


async def test_text_file_is_refused_through_every_entry_point(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite3"
    path.write_text("These are my notes, not a database.\n" * 10)
    await refused(path, CorruptDatabaseError, lambda s: s.append("s", "r", UserMessage()))
    await refused(path, CorruptDatabaseError, lambda s: s.acquire_lease("s"))
    await refused(path, CorruptDatabaseError, lambda s: s.load_tail("s", 5))
    before = digest(path)
    ext = SQLiteSessionExtension(path)
    with pytest.raises(CorruptDatabaseError):
        await ext.restore(RunContext("s", "r", None))
    await ext.close()
    assert digest(path) == before


async def test_truncated_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "truncated.sqlite3"
    await real_database(path)
    data = path.read_bytes()
    assert len(data) > 16384
    path.write_bytes(data[: len(data) // 2])
    error = await refused(path, CorruptDatabaseError, lambda s: s.load("s"))
    assert "damaged" in str(error)


async def test_damaged_page_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "damaged.sqlite3"
    await real_database(path)
    data = bytearray(path.read_bytes())
    page = 4096
    # Scribble over the b-tree headers of the pages after the schema page.
    for start in range(2 * page, len(data), page):
        data[start : start + 64] = random.Random(start).randbytes(64)
    path.write_bytes(bytes(data))
    await refused(path, CorruptDatabaseError, lambda s: s.count_messages("s"))


async def test_newer_schema_is_refused_before_any_write(tmp_path: Path) -> None:
    path = tmp_path / "newer.sqlite3"
    await real_database(path, messages=3)
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        # A rollback-journal file: opening it read-write would switch it to WAL (a write).
        raw.execute("PRAGMA journal_mode = DELETE")
    raw.close()
    error = await refused(path, NewerSchemaError, lambda s: s.list_sessions())
    assert isinstance(error, NewerSchemaError)
    assert (error.found, error.supported) == (SCHEMA_VERSION + 1, SCHEMA_VERSION)
    assert "newer Continuo" in str(error) and "update Continuo" in str(error)
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    raw.close()


async def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
        raw.execute("INSERT INTO photos (name) VALUES ('cat.jpg')")
    raw.close()
    error = await refused(path, CorruptDatabaseError, lambda s: s.list_sessions())
    assert "another program" in str(error)

    tagged = tmp_path / "tagged.sqlite3"
    with sqlite3.connect(tagged) as raw:
        raw.execute("PRAGMA application_id = 1234")
        raw.execute("CREATE TABLE t (x)")
    raw.close()
    await refused(tagged, CorruptDatabaseError, lambda s: s.list_sessions())


async def test_empty_file_becomes_a_database(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite3"
    path.write_bytes(b"")
    s = SQLiteSessionStorage(path)
    try:
        assert await s.append("s", "r", UserMessage(content="hi")) == 1
    finally:
        await s.close()


@pytest.mark.parametrize(
    "body",
    [
        {"v": 1, "type": "hologram", "id": "x", "created_at": 1.0, "content": "?"},
        {"v": 9, "type": "user", "id": "x", "created_at": 1.0, "content": "from the future"},
    ],
    ids=["unknown-type", "newer-format"],
)
async def test_unknown_message_type_is_refused_on_load(tmp_path: Path, body: dict) -> None:
    path = tmp_path / "future.sqlite3"
    await real_database(path, messages=2)
    with sqlite3.connect(path) as raw:
        # As a newer version would write it: the third message, under the second, active.
        raw.execute(
            "INSERT INTO messages "
            "(session_id, seq, request_id, id, type, created_at, body, parent_seq) "
            "VALUES ('s', 3, 'r', 'x', ?, 1.0, ?, 2)",
            (body["type"], json.dumps(body)),
        )
        raw.execute("UPDATE sessions SET active_seq = 3 WHERE id = 's'")
        raw.commit()
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()

    error = await refused(path, UnknownMessageTypeError, lambda s: s.load("s"))
    assert isinstance(error, UnknownMessageTypeError) and error.type_name == body["type"]
    assert "update Continuo" in str(error)
    await refused(path, UnknownMessageTypeError, lambda s: s.load_tail("s", 1))

    # The messages before it are still readable by paging around it, and counting works.
    s = SQLiteSessionStorage(path)
    try:
        assert [r.seq for r in await s.load_tail("s", 5, before_seq=3)] == [1, 2]
        assert await s.count_messages("s") == 3
    finally:
        await s.close()


async def test_unreadable_message_body_is_reported_as_damage(tmp_path: Path) -> None:
    path = tmp_path / "garbled.sqlite3"
    await real_database(path, messages=1)
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE messages SET body = '{not json' WHERE seq = 1")
        raw.commit()
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    error = await refused(path, CorruptDatabaseError, lambda s: s.load("s"))
    assert "message 1 of conversation 's'" in str(error)


async def test_one_unreadable_session_row_hides_no_other(tmp_path: Path) -> None:
    path = tmp_path / "continuo.sqlite3"
    s = SQLiteSessionStorage(path)
    await s.create_session("first", "First", {"model": "m1"})
    await s.create_session("bad-metadata", "Bad metadata")
    await s.create_session("bad-fields", "Bad fields")
    await s.append("last", "r", UserMessage(content="Last one"))
    await s.close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE sessions SET metadata = '{not json' WHERE id = 'bad-metadata'")
        raw.execute(
            "UPDATE sessions SET title = x'00ff', updated_at = 'yesterday' WHERE id = 'bad-fields'"
        )
    raw.close()

    s = SQLiteSessionStorage(path)
    try:
        listed = {info.id: info for info in await s.list_sessions()}
        assert set(listed) == {"first", "bad-metadata", "bad-fields", "last"}
        assert listed["first"].unreadable is None and listed["first"].metadata == {"model": "m1"}
        assert listed["last"].unreadable is None and listed["last"].title == "Last one"
        bad = listed["bad-metadata"]
        assert bad.title == "Bad metadata" and bad.metadata == {}
        assert bad.unreadable == "its settings (metadata) could not be read"
        odd = listed["bad-fields"]
        assert odd.title is None and odd.updated_at == 0.0
        assert odd.unreadable == "its title and its update time could not be read"
        assert await s.get_session("bad-metadata") == bad
        # Writing over what cannot be read is refused, naming the conversation; the others
        # still work.
        with pytest.raises(CorruptDatabaseError, match="bad-metadata"):
            await s.update_metadata("bad-metadata", {"model": "m2"})
        assert await s.update_metadata("first", {"model": "m2"}) == {"model": "m2"}
    finally:
        await s.close()


async def test_text_that_is_not_utf8_hides_no_other_conversation(tmp_path: Path) -> None:
    # Before: sqlite3 raised "Could not decode to UTF-8" while fetching, before any row was
    # looked at, so one such title or metadata made every conversation vanish.
    path = tmp_path / "continuo.sqlite3"
    s = SQLiteSessionStorage(path)
    await s.create_session("good", "Good", {"model": "m1"})
    await s.create_session("bad-title", "Bad title")
    await s.create_session("bad-metadata", "Bad metadata")
    await s.close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE sessions SET title = CAST(x'4142c3' AS TEXT) WHERE id = 'bad-title'")
        raw.execute(
            "UPDATE sessions SET metadata = CAST(x'7b22ff223a317d' AS TEXT) "
            "WHERE id = 'bad-metadata'"
        )
    raw.close()

    s = SQLiteSessionStorage(path)
    try:
        listed = {info.id: info for info in await s.list_sessions()}
        assert set(listed) == {"good", "bad-title", "bad-metadata"}
        assert listed["good"].unreadable is None and listed["good"].metadata == {"model": "m1"}
        title = listed["bad-title"]
        assert title.title == "AB\ufffd" and title.unreadable == "its title could not be read"
        meta = listed["bad-metadata"]
        assert meta.title == "Bad metadata" and meta.metadata == {}
        assert meta.unreadable == "its settings (metadata) could not be read"
        assert await s.get_session("bad-title") == title
        with pytest.raises(CorruptDatabaseError, match="bad-metadata"):
            await s.update_metadata("bad-metadata", {"model": "m2"})
    finally:
        await s.close()


async def test_a_message_body_that_is_not_utf8_is_reported_as_damage(tmp_path: Path) -> None:
    # Before: a generic StorageError ("Could not decode to UTF-8"), not named as damage.
    path = tmp_path / "garbled.sqlite3"
    await real_database(path, messages=2)
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE messages SET body = CAST(x'7bc3' AS TEXT) WHERE seq = 2")
        raw.commit()
    raw.close()
    error = await refused(path, CorruptDatabaseError, lambda s: s.load("s"))
    assert "message 2 of conversation 's'" in str(error) and str(path) in str(error)
