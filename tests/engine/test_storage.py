"""SQLiteSessionStorage against a real SQLite file: sessions, messages, migrations, cancel."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from engine.errors import SessionExistsError, StorageError
from engine.extensions import RunContext, StoredMessage
from engine.messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from engine.stop import StopInfo, StopReason
from engine.storage import SessionInfo, SQLiteSessionExtension, SQLiteSessionStorage
from engine.storage.migrations import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from tests.support.wait import until


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "continuo.sqlite3"


@pytest.fixture
async def storage(db_path: Path) -> AsyncIterator[SQLiteSessionStorage]:
    s = SQLiteSessionStorage(db_path)
    yield s
    await s.close()


def every_message_type() -> list[Message]:
    return [
        SystemMessage(content="Be brief."),
        UserMessage(content="Hello — 你好\u2028next"),
        InternalMessage(content="You were cut off; redo it.", tag="resume:retry_response"),
        InternalMessage(content="untagged"),
        AssistantMessage(
            content="Let me look.",
            reasoning="The user wants a file listing.",
            tool_calls=(
                ToolCall("call_1", "list_files", {"path": "/tmp", "deep": [1, {"x": None}]}),
                ToolCall("call_2", "read_file", {}),
            ),
            usage=Usage(10, 20, 5, 3),
            model="gpt-test",
            provider_data={"signature": "abc==", "nested": {"k": [1, 2]}},
        ),
        ToolMessage(tool_call_id="call_1", name="list_files", content="a\nb", success=True),
        ToolMessage(tool_call_id="call_2", name="read_file", content="denied", success=False),
        AssistantMessage(
            content="partial answ",
            stop=StopInfo(
                StopReason.INTERRUPTED,
                raw="network_error",
                message="The connection dropped.",
                details={"withheld_tool_calls": ["write_file"]},
            ),
        ),
        AssistantMessage(content="long", stop=StopInfo(StopReason.MAX_OUTPUT, raw="length")),
    ]


# ---------------------------------------------------------------------------- sessions


async def test_create_get_and_list_newest_first(storage: SQLiteSessionStorage) -> None:
    a = await storage.create_session("a", title="First", metadata={"model": "m1"})
    b = await storage.create_session("b")
    generated = await storage.create_session()

    assert a == SessionInfo("a", "First", a.created_at, a.created_at, {"model": "m1"})
    assert b.title is None and b.metadata == {}
    assert len(generated.id) == 32 and generated.id not in ("a", "b")
    assert await storage.get_session("a") == a
    assert await storage.get_session("nope") is None
    assert [s.id for s in await storage.list_sessions()] == [generated.id, "b", "a"]

    # An append moves a conversation to the top.
    await storage.append("a", "r1", UserMessage(content="bump"))
    listed = await storage.list_sessions()
    assert [s.id for s in listed] == ["a", generated.id, "b"]
    assert listed[0].updated_at >= listed[0].created_at


async def test_existing_id_is_refused(storage: SQLiteSessionStorage) -> None:
    await storage.create_session("a")
    with pytest.raises(SessionExistsError, match="'a' already exists"):
        await storage.create_session("a")
    await storage.append("b", "r", UserMessage(content="x"))
    with pytest.raises(SessionExistsError):
        await storage.create_session("b")


async def test_rename(storage: SQLiteSessionStorage) -> None:
    await storage.create_session("a", title="Old")
    await storage.rename_session("a", "New name")
    assert (await storage.get_session("a")).title == "New name"  # type: ignore[union-attr]
    await storage.rename_session("a", None)
    assert (await storage.get_session("a")).title is None  # type: ignore[union-attr]
    with pytest.raises(StorageError, match="no conversation 'ghost'"):
        await storage.rename_session("ghost", "x")


async def test_metadata_merges_and_none_removes(storage: SQLiteSessionStorage) -> None:
    await storage.create_session("a", metadata={"provider": "openai", "model": "m1"})
    merged = await storage.update_metadata(
        "a", {"model": "m2", "last_error": {"kind": "timeout", "at": 1.5}, "provider": None}
    )
    assert merged == {"model": "m2", "last_error": {"kind": "timeout", "at": 1.5}}
    assert (await storage.get_session("a")).metadata == merged  # type: ignore[union-attr]
    await storage.update_metadata("a", {"absent": None, "last_error": None})
    assert (await storage.get_session("a")).metadata == {"model": "m2"}  # type: ignore[union-attr]
    with pytest.raises(StorageError, match="no conversation 'ghost'"):
        await storage.update_metadata("ghost", {"x": 1})


async def test_delete_removes_messages_and_lease(
    storage: SQLiteSessionStorage, db_path: Path
) -> None:
    await storage.append("a", "r", UserMessage(content="one"))
    await storage.append("keep", "r", UserMessage(content="other"))
    lease = await storage.acquire_lease("a")
    await storage.delete_session("a")
    await storage.delete_session("a")  # deleting nothing is fine

    assert await storage.get_session("a") is None
    assert await storage.load("a") == []
    assert await storage.lease_holder("a") is None
    assert [s.id for s in await storage.list_sessions()] == ["keep"]
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("SELECT COUNT(*) FROM messages WHERE session_id='a'").fetchone() == (0,)
        assert raw.execute("SELECT COUNT(*) FROM leases").fetchone() == (0,)
    raw.close()
    await lease.release()  # the row is gone already; releasing is still fine


# ---------------------------------------------------------------------------- messages


async def test_seq_numbering_and_session_created_on_append(storage: SQLiteSessionStorage) -> None:
    seqs = [await storage.append("s", f"r{i}", UserMessage(content=str(i))) for i in range(3)]
    assert seqs == [1, 2, 3]
    assert await storage.append("other", "r", UserMessage(content="x")) == 1
    assert await storage.count_messages("s") == 3
    assert await storage.count_messages("ghost") == 0
    info = await storage.get_session("s")
    assert info is not None and info.title == "0"
    tail = await storage.load_tail("s", 10)
    assert [(r.seq, r.request_id) for r in tail] == [(1, "r0"), (2, "r1"), (3, "r2")]


async def test_concurrent_appends_get_distinct_consecutive_seqs(
    storage: SQLiteSessionStorage,
) -> None:
    seqs = await asyncio.gather(
        *(storage.append("s", f"r{i}", UserMessage(content=str(i))) for i in range(40))
    )
    assert sorted(seqs) == list(range(1, 41))
    stored = await storage.load_tail("s", 100)
    # Each message sits at the seq its append returned.
    assert {r.seq: r.request_id for r in stored} == {seq: f"r{i}" for i, seq in enumerate(seqs)}


async def test_auto_title_from_first_user_message(storage: SQLiteSessionStorage) -> None:
    await storage.append("s", "r", SystemMessage(content="not a title"))
    await storage.append("s", "r", InternalMessage(content="not one either"))
    assert (await storage.get_session("s")).title is None  # type: ignore[union-attr]

    long = "Please   explain how the write-ahead log of SQLite keeps every message safe"
    await storage.append("s", "r", UserMessage(content=f"\n  \n{long}\nsecond line"))
    title = (await storage.get_session("s")).title  # type: ignore[union-attr]
    assert title is not None and title.endswith("…") and len(title) <= 60
    assert title.startswith("Please explain how the write-ahead log")
    assert "  " not in title

    await storage.append("s", "r", UserMessage(content="A later question"))
    assert (await storage.get_session("s")).title == title  # type: ignore[union-attr]

    await storage.create_session("named", title="Chosen")
    await storage.append("named", "r", UserMessage(content="hi"))
    assert (await storage.get_session("named")).title == "Chosen"  # type: ignore[union-attr]
    await storage.append("short", "r", UserMessage(content="Short question?"))
    assert (await storage.get_session("short")).title == "Short question?"  # type: ignore[union-attr]


async def test_every_message_type_round_trips_through_the_file(db_path: Path) -> None:
    messages = every_message_type()
    writer = SQLiteSessionStorage(db_path)
    for message in messages:
        await writer.append("s", "req-1", message)
    await writer.close()

    reader = SQLiteSessionStorage(db_path)  # a fresh connection, as after a restart
    try:
        assert await reader.load("s") == messages
        tail = await reader.load_tail("s", 3)
        assert [r.message for r in tail] == messages[-3:]
        assert tail[0] == StoredMessage(len(messages) - 2, "req-1", messages[-3])
    finally:
        await reader.close()
    with sqlite3.connect(db_path) as raw:
        rows = raw.execute("SELECT type, id FROM messages ORDER BY seq").fetchall()
    raw.close()
    assert rows == [(m.type_name, m.id) for m in messages]


async def test_load_tail_pages_backwards(storage: SQLiteSessionStorage) -> None:
    for i in range(1, 26):
        await storage.append("s", "r", UserMessage(content=f"m{i}"))
    await storage.append("other", "r", UserMessage(content="elsewhere"))

    page = await storage.load_tail("s", 10)
    assert [r.seq for r in page] == list(range(16, 26))
    seen = [r.message.content for r in page]  # type: ignore[attr-defined]
    while page:
        page = await storage.load_tail("s", 10, before_seq=page[0].seq)
        seen = [r.message.content for r in page] + seen  # type: ignore[attr-defined]
    assert seen == [f"m{i}" for i in range(1, 26)]
    assert [r.seq for r in await storage.load_tail("s", 3, before_seq=3)] == [1, 2]
    assert await storage.load_tail("s", 0) == []
    assert await storage.load_tail("ghost", 5) == []


async def test_load_tail_is_an_index_range_scan(
    storage: SQLiteSessionStorage, db_path: Path
) -> None:
    await storage.append("s", "r", UserMessage(content="x"))
    with sqlite3.connect(db_path) as raw:
        plan = " | ".join(
            row[-1]
            for row in raw.execute(
                "EXPLAIN QUERY PLAN SELECT seq, request_id, body FROM messages "
                "WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
                ("s", 10, 5),
            )
        )
    raw.close()
    assert "SEARCH messages USING INDEX" in plan and "seq<?" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


# ---------------------------------------------------------------------------- the file


async def test_file_is_wal_with_migrations_recorded(
    storage: SQLiteSessionStorage, db_path: Path
) -> None:
    assert not db_path.exists()  # noqa: ASYNC240 - opened lazily: no file yet
    await storage.list_sessions()
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert raw.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert raw.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        names = [r[0] for r in raw.execute("SELECT name FROM schema_migrations ORDER BY name")]
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    raw.close()
    assert names == [m.name for m in MIGRATIONS] and SCHEMA_VERSION == len(MIGRATIONS) >= 1
    assert {"sessions", "messages", "leases", "schema_migrations"} <= tables


async def test_connection_settings(db_path: Path) -> None:
    for mode, expected in (("FULL", 2), ("NORMAL", 1)):
        s = SQLiteSessionStorage(db_path, synchronous=mode)  # type: ignore[arg-type]
        try:
            db = await s._core.writer()
            assert list(await db.execute_fetchall("PRAGMA synchronous")) == [(expected,)]
            assert list(await db.execute_fetchall("PRAGMA foreign_keys")) == [(1,)]
            assert list(await db.execute_fetchall("PRAGMA busy_timeout"))[0][0] >= 1000
        finally:
            await s.close()
    with pytest.raises(ValueError, match="synchronous"):
        SQLiteSessionStorage(db_path, synchronous="SOMETIMES")  # type: ignore[arg-type]


async def test_reopening_migrates_nothing_and_keeps_data(db_path: Path) -> None:
    first = SQLiteSessionStorage(db_path)
    await first.append("s", "r", UserMessage(content="kept"))
    await first.close()
    second = SQLiteSessionStorage(db_path)
    try:
        assert [m.content for m in await second.load("s")] == ["kept"]  # type: ignore[attr-defined]
    finally:
        await second.close()
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("SELECT COUNT(*) FROM schema_migrations").fetchone() == (
            len(MIGRATIONS),
        )
    raw.close()


async def test_close_is_safe_twice_and_use_after_close_is_refused(db_path: Path) -> None:
    s = SQLiteSessionStorage(db_path)
    await s.close()  # never opened
    await s.close()
    with pytest.raises(StorageError, match="was closed"):
        await s.list_sessions()
    t = SQLiteSessionStorage(db_path)
    await t.append("s", "r", UserMessage(content="x"))
    await asyncio.gather(t.close(), t.close())
    await t.close()


async def test_close_lets_a_write_in_flight_finish(db_path: Path) -> None:
    s = SQLiteSessionStorage(db_path)
    task = asyncio.create_task(s.append("s", "r", UserMessage(content="x")))
    await asyncio.sleep(0)  # the append has begun: it is opening the file
    await s.close()
    assert task.done() and task.result() == 1
    with pytest.raises(StorageError, match="was closed"):
        await s.count_messages("s")
    again = SQLiteSessionStorage(db_path)
    try:
        assert await again.count_messages("s") == 1
    finally:
        await again.close()


async def test_two_storages_on_one_file_see_each_other(db_path: Path) -> None:
    a, b = SQLiteSessionStorage(db_path), SQLiteSessionStorage(db_path)
    try:
        await asyncio.gather(
            *(a.append("s", "ra", UserMessage(content=f"a{i}")) for i in range(10)),
            *(b.append("s", "rb", UserMessage(content=f"b{i}")) for i in range(10)),
        )
        assert [r.seq for r in await a.load_tail("s", 100)] == list(range(1, 21))
        assert await b.count_messages("s") == 20
    finally:
        await a.close()
        await b.close()


# ---------------------------------------------------------------------------- cancellation


async def test_cancelled_append_still_stores_the_message(
    storage: SQLiteSessionStorage, db_path: Path
) -> None:
    await storage.append("s", "r", UserMessage(content="first"))  # the file is open
    message = AssistantMessage(content="complete answer")
    # Cancel at several points of the write: as it starts, and after each step inside.
    # (A task cancelled before it first runs never called append at all.)
    for yields in range(1, 7):
        task = asyncio.create_task(storage.append("s", f"cancel{yields}", message))
        for _ in range(yields):
            await asyncio.sleep(0)  # let the write progress by one step of the loop
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    # Every cancelled caller returned only after its write had committed.
    with sqlite3.connect(db_path) as raw:
        rows = raw.execute(
            "SELECT request_id FROM messages WHERE session_id='s' ORDER BY seq"
        ).fetchall()
    raw.close()
    assert [r[0] for r in rows] == ["r"] + [f"cancel{i}" for i in range(1, 7)]
    # And the connection is not left inside a transaction: later writes work.
    assert await storage.append("s", "r", UserMessage(content="after")) == 8


async def test_cancel_while_write_waits_for_another_writer(
    storage: SQLiteSessionStorage, db_path: Path
) -> None:
    await storage.append("s", "r", UserMessage(content="first"))
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        task = asyncio.create_task(storage.append("s", "blocked", UserMessage(content="late")))
        # The write has begun and waits on SQLite's lock.
        await until(storage._core._lock.locked, "the write to start", seconds=5)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=0.05)
        assert not done, "a cancelled caller returned before its write finished"
    finally:
        other.execute("COMMIT")
        other.close()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [r.request_id for r in await storage.load_tail("s", 5)] == ["r", "blocked"]


async def test_cancelled_during_first_open_then_used(db_path: Path) -> None:
    s = SQLiteSessionStorage(db_path)
    try:
        task = asyncio.create_task(s.append("s", "r", UserMessage(content="x")))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await s.count_messages("s") == 1
    finally:
        await s.close()


# ---------------------------------------------------------------------------- extension


async def test_extension_hooks(db_path: Path) -> None:
    ext = SQLiteSessionExtension(db_path, lease_stale_after=60)
    ctx = RunContext("s", "req-1", UserMessage(content="hi"))
    try:
        assert ext.storage.lease_stale_after == 60
        await ext.append(ctx, UserMessage(content="hi"))
        await ext.append(ctx, AssistantMessage(content="hello"))
        assert [m.content for m in await ext.restore(ctx)] == ["hi", "hello"]  # type: ignore[attr-defined]
        tail = await ext.restore_tail(ctx, 1)
        assert [(r.seq, r.request_id) for r in tail] == [(2, "req-1")]
        assert [r.seq for r in await ext.restore_tail(ctx, 5, before_seq=2)] == [1]

        await ext.acquire(ctx)
        holder = await ext.storage.lease_holder("s")
        assert holder is not None
        await ext.release(ctx)
        await ext.release(ctx)  # nothing held: no-op
        assert await ext.storage.lease_holder("s") is None
        await ext.acquire(ctx)  # held at close: close gives it back
    finally:
        await ext.close()
        await ext.close()
    assert ext.storage._core.closing


async def test_extension_shares_a_storage_without_closing_it(storage: SQLiteSessionStorage) -> None:
    ext = SQLiteSessionExtension(storage)
    assert ext.storage is storage
    await ext.append(RunContext("s", "r", None), UserMessage(content="x"))
    await ext.close()
    assert await storage.count_messages("s") == 1
    with pytest.raises(TypeError):
        SQLiteSessionExtension(storage, synchronous="NORMAL")
