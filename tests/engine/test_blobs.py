"""Attachments' bytes in the conversation file (schema version 7, `engine.storage.blobs`).

Real SQLite files throughout. The bytes are written in the transaction of the append that
stores their message (a refused append leaves none), stored once by SHA-256, and deleted
exactly when no message of any branch of any conversation refers to them any more.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine import Blob, CorruptDatabaseError, DocumentPart, ImagePart, UserMessage
from engine.errors import MessageNotFoundError, StorageError
from engine.storage import SQLiteSessionStorage

from .test_storage_versions import build

PICTURE = Blob.of(b"\x89PNG\r\n\x1a\n a picture", "image/png")
ORIGINAL = Blob.of(b"%PDF-1.7 an original", "application/pdf")
V6 = Path(__file__).parent / "storage_helpers" / "schema_v6.sql"


def picture_message(text: str = "look", blob: Blob = PICTURE) -> UserMessage:
    return UserMessage(
        content=text,
        attachments=(ImagePart(blob.media_type, 2, 1, blob.size, blob.sha256, name="a.png"),),
    )


def document_message(text: str = "read") -> UserMessage:
    part = DocumentPart("a.pdf", ORIGINAL.media_type, "page one", ORIGINAL.sha256, pages=1)
    return UserMessage(content=text, attachments=(part,))


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as raw:
        found = list(raw.execute(sql))
    raw.close()
    return found


@pytest.fixture
async def storage(tmp_path: Path):
    store = SQLiteSessionStorage(tmp_path / "c.sqlite3")
    try:
        yield store
    finally:
        await store.close()


async def test_a_message_and_its_bytes_are_stored_and_read_back(storage) -> None:
    message = picture_message()
    await storage.append("s", "r", message, blobs=[PICTURE])
    assert await storage.load("s") == [message]
    assert await storage.read_blob(PICTURE.sha256) == PICTURE
    assert await storage.read_blob(ORIGINAL.sha256) is None
    assert rows(storage.path, "SELECT size, media_type FROM blobs") == [(PICTURE.size, "image/png")]


async def test_the_same_bytes_attached_twice_are_stored_once(storage) -> None:
    await storage.append("s", "r", picture_message("one"), blobs=[PICTURE])
    await storage.append("s", "r", picture_message("two"), blobs=[PICTURE])
    await storage.append("t", "r", picture_message("three"), blobs=[PICTURE])
    assert rows(storage.path, "SELECT COUNT(*) FROM blobs") == [(1,)]
    assert rows(storage.path, "SELECT COUNT(*) FROM blob_refs") == [(3,)]


async def test_stored_bytes_need_not_be_given_again(storage) -> None:
    await storage.append("s", "r", picture_message("first"), blobs=[PICTURE])
    again = picture_message("the same picture, resent")
    await storage.append("s", "r2", again)  # an edit resent, a regenerate: no bytes passed
    assert (await storage.load("s"))[-1] == again


async def test_a_reference_to_bytes_nowhere_is_refused_and_nothing_is_written(storage) -> None:
    with pytest.raises(StorageError) as caught:
        await storage.append("s", "r", picture_message())
    assert caught.value.key == "storage.missing_blob"
    assert "Attach the file again" in caught.value.sentence("en")
    assert "请重新添加该文件" in caught.value.sentence("zh_CN")
    assert await storage.get_session("s") is None
    assert rows(storage.path, "SELECT COUNT(*) FROM messages") == [(0,)]


async def test_bytes_no_message_refers_to_are_refused_before_any_write(storage) -> None:
    with pytest.raises(ValueError, match="not referred to"):
        await storage.append("s", "r", picture_message(), blobs=[PICTURE, ORIGINAL])
    assert await storage.get_session("s") is None
    assert rows(storage.path, "SELECT COUNT(*) FROM blobs") == [(0,)]


async def test_bytes_are_written_in_the_message_own_transaction(storage) -> None:
    """An append refused inside its transaction (an unknown parent) leaves no bytes."""
    await storage.append("s", "r", UserMessage(content="hello"))
    with pytest.raises(MessageNotFoundError):
        await storage.append("s", "r", picture_message(), parent="no-such", blobs=[PICTURE])
    assert rows(storage.path, "SELECT COUNT(*) FROM blobs") == [(0,)]
    assert await storage.count_all_messages("s") == 1


async def test_a_batch_stores_every_message_bytes_or_none(storage) -> None:
    batch = [picture_message("a"), document_message("b")]
    await storage.append_many("s", "r", batch, blobs=[PICTURE, ORIGINAL])
    assert await storage.load("s") == batch
    assert await storage.read_blob(ORIGINAL.sha256) == ORIGINAL
    with pytest.raises(StorageError):  # the second message's bytes are missing
        await storage.append_many(
            "t", "r", [picture_message("c", Blob.of(b"new", "image/png")), document_message()]
        )
    assert await storage.get_session("t") is None


async def test_deleting_one_of_two_conversations_sharing_a_picture_keeps_it(storage) -> None:
    await storage.append("one", "r", picture_message(), blobs=[PICTURE])
    await storage.append("two", "r", picture_message(), blobs=[PICTURE])
    await storage.append("two", "r", document_message(), blobs=[ORIGINAL])
    await storage.delete_session("one")
    assert await storage.read_blob(PICTURE.sha256) == PICTURE
    await storage.delete_session("two")
    assert await storage.read_blob(PICTURE.sha256) is None
    assert await storage.read_blob(ORIGINAL.sha256) is None
    assert rows(storage.path, "SELECT COUNT(*) FROM blobs") == [(0,)]
    assert rows(storage.path, "SELECT COUNT(*) FROM blob_refs") == [(0,)]


async def test_a_picture_kept_only_by_another_branch_or_a_fork_is_kept(storage) -> None:
    first = UserMessage(content="start")
    await storage.append("s", "r", first)
    await storage.append("s", "r", picture_message("version 1"), blobs=[PICTURE])
    # A new version beside it: the picture is on a branch no longer shown.
    await storage.append("s", "r", UserMessage(content="version 2"), parent=first.id)
    fork = await storage.fork_session("s", first.id)
    await storage.delete_session(fork)  # the fork holds only the root: nothing to release
    assert await storage.read_blob(PICTURE.sha256) == PICTURE
    assert [m.content for m in await storage.load("s")] == ["start", "version 2"]
    # A fork of the picture's branch holds it after the original conversation is gone.
    hidden = rows(storage.path, "SELECT id FROM messages WHERE session_id = 's' AND seq = 2")
    copy = await storage.fork_session("s", str(hidden[0][0]))
    await storage.delete_session("s")
    assert await storage.read_blob(PICTURE.sha256) == PICTURE
    await storage.delete_session(copy)
    assert await storage.read_blob(PICTURE.sha256) is None


async def test_damaged_bytes_are_reported_not_returned(storage) -> None:
    await storage.append("s", "r", picture_message(), blobs=[PICTURE])
    await storage.close()
    with sqlite3.connect(storage.path) as raw:
        raw.execute("UPDATE blobs SET data = X'00'")
    raw.close()
    reopened = SQLiteSessionStorage(storage.path)
    try:
        with pytest.raises(CorruptDatabaseError):
            await reopened.read_blob(PICTURE.sha256)
    finally:
        await reopened.close()


async def test_a_version_6_file_migrates_and_takes_attachments(tmp_path: Path) -> None:
    path = tmp_path / "v6.sqlite3"
    build(V6, path)
    storage = SQLiteSessionStorage(path)
    try:
        before = await storage.load("chat-1")
        await storage.append("chat-1", "r", picture_message(), blobs=[PICTURE])
        assert (await storage.load("chat-1"))[:-1] == before
        assert await storage.read_blob(PICTURE.sha256) == PICTURE
        # The old messages refer to nothing: deleting their conversation keeps other bytes.
        await storage.append("other", "r", picture_message(), blobs=[PICTURE])
        await storage.delete_session("chat-1")
        assert await storage.read_blob(PICTURE.sha256) == PICTURE
    finally:
        await storage.close()
    assert rows(path, "SELECT name FROM schema_migrations WHERE name = '0007_blobs'")


async def test_a_damaged_body_never_stops_a_write(storage) -> None:
    """The reference triggers read every inserted body: one that is not JSON, or whose
    attachments are not a list, refers to nothing and is written as before."""
    await storage.append("s", "r", UserMessage(content="hello"))
    await storage.close()
    with sqlite3.connect(storage.path) as raw:
        for seq, body in ((90, "not json"), (91, '{"attachments": "x"}')):
            raw.execute(
                "INSERT INTO messages (session_id, seq, request_id, id, type, created_at, body) "
                "VALUES ('s', ?, 'r', ?, 'user', 1.0, ?)",
                (seq, f"m{seq}", body),
            )
        raw.execute("DELETE FROM messages WHERE seq >= 90")
    raw.close()
    assert rows(storage.path, "SELECT COUNT(*) FROM blob_refs") == [(0,)]


async def test_a_full_disk_while_bytes_are_written_stores_neither_and_says_so(storage) -> None:
    from engine.errors import StorageFullError

    await storage.append("s", "r", UserMessage(content="before"))
    big = Blob.of(bytes(range(256)) * 20_000, "image/png")  # 5 MB: more than is left
    message = picture_message("with a big picture", big)
    writer = await storage._core.writer()  # SQLite's size limit: a real "disk is full"
    ((pages,),) = await writer.execute_fetchall("PRAGMA page_count")
    await writer.execute(f"PRAGMA max_page_count = {pages + 8}")
    with pytest.raises(StorageFullError) as caught:
        await storage.append("s", "r", message, blobs=[big])
    assert "is full, so the last change was not saved" in str(caught.value)
    assert [m.content for m in await storage.load("s")] == ["before"]
    assert await storage.read_blob(big.sha256) is None
    assert rows(storage.path, "SELECT count(*) FROM blobs") == [(0,)]
    # Space again: the same message and bytes, given again, are stored whole.
    await writer.execute("PRAGMA max_page_count = 1073741823")
    await storage.append("s", "r", message, blobs=[big])
    assert (await storage.load("s"))[-1] == message
    assert await storage.read_blob(big.sha256) == big
