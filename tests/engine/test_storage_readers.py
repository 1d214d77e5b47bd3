"""The store's connections: one writer, a few readers. Reads never wait behind a write.

`engine.storage.core.StorageCore` holds one writer connection (every write one ``BEGIN
IMMEDIATE`` transaction under its lock) and up to `READERS` read connections. These tests
hold a write transaction open, hold readers inside a statement (an SQL function that waits
on an event, in the reader's own thread), close with reads in flight, and damage a page
under an open store: all on a real file.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import aiosqlite
import pytest

from engine.errors import CorruptDatabaseError, StorageError
from engine.messages import AssistantMessage, UserMessage
from engine.storage import SQLiteSessionStorage
from engine.storage.core import READERS, StorageCore
from tests.support.wait import until

#: only to end a hang: a read that never came back fails the test here
HANG = 30.0


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[SQLiteSessionStorage]:
    s = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    yield s
    await s.close()


class Gate:
    """An SQL function ``hold(x)`` that waits, in the reader's thread, until let through."""

    def __init__(self) -> None:
        self.entered = threading.Semaphore(0)  # one release per statement that reached it
        self.inside = 0
        self._open = threading.Event()
        self._lock = threading.Lock()

    def hold(self, value: object) -> object:
        with self._lock:
            self.inside += 1
        self.entered.release()
        self._open.wait(HANG)
        return value

    def open(self) -> None:
        self._open.set()

    async def wait_inside(self, count: int) -> None:
        await until(lambda: self.inside >= count, f"{count} reads inside the gate", seconds=HANG)


@pytest.fixture
async def gated(tmp_path: Path) -> AsyncIterator[tuple[StorageCore, Gate]]:
    gate = Gate()
    core = StorageCore(tmp_path / "continuo.sqlite3", functions={"hold": gate.hold})
    try:
        yield core, gate
    finally:
        gate.open()
        core.begin_close()
        await core.close()


def _insert_session(sid: str) -> Callable[[aiosqlite.Connection], object]:
    async def body(db: aiosqlite.Connection) -> None:
        await db.execute(
            "INSERT INTO sessions (id, created_at, updated_at) VALUES (?, 0, 0)", (sid,)
        )

    return body


async def test_a_read_proceeds_while_a_write_transaction_is_held_open(
    storage: SQLiteSessionStorage,
) -> None:
    """A write that holds the writer (here: inside its transaction, until let go) delays no
    read: the conversation list, a tail, a search all answer meanwhile, from the last
    committed state; once the write commits, the next read sees it. (With every read on the
    writer, behind its lock, each read here waited for the write and the test failed.)"""
    await storage.append("kept", "r", UserMessage(content="the weather in Oslo"))
    inside, let_go = asyncio.Event(), asyncio.Event()

    async def body(db: aiosqlite.Connection) -> None:
        await db.execute(
            "INSERT INTO sessions (id, created_at, updated_at) VALUES ('pending', 0, 0)"
        )
        inside.set()
        await let_go.wait()

    write = asyncio.create_task(storage._core.write(body))
    try:
        await asyncio.wait_for(inside.wait(), HANG)
        assert storage._core._lock.locked()

        sessions = await asyncio.wait_for(storage.list_sessions(), HANG)
        assert [s.id for s in sessions] == ["kept"]  # the uncommitted row is not seen
        tail = await asyncio.wait_for(storage.load_tail("kept", 5), HANG)
        assert [r.message.content for r in tail] == ["the weather in Oslo"]  # type: ignore[attr-defined]
        hits = await asyncio.wait_for(storage.search_messages("Os"), HANG)  # a scan
        assert [h.session_id for h in hits] == ["kept"]
        assert not write.done()
    finally:
        let_go.set()
        await write
    assert {s.id for s in await storage.list_sessions()} == {"kept", "pending"}


async def test_appends_and_drafts_go_on_while_every_reader_is_busy(
    gated: tuple[StorageCore, Gate],
) -> None:
    """Every reader held inside a long statement: writes still run, one more read waits for
    a reader (never for the writer), and gets one as soon as a read ends."""
    core, gate = gated
    held = [
        asyncio.create_task(core.read("SELECT hold(?)", (n,))) for n in range(READERS)
    ]
    await gate.wait_inside(READERS)

    for n in range(5):
        await asyncio.wait_for(core.write(_insert_session(f"s{n}")), HANG)

    waiting = asyncio.create_task(core.read("SELECT COUNT(*) FROM sessions"))
    done, _ = await asyncio.wait({waiting}, timeout=0.05)
    assert not done, "a read ran on a fourth connection"
    assert len(core._readers) == READERS

    gate.open()
    assert [rows for rows in await asyncio.gather(*held)] == [[(n,)] for n in range(READERS)]
    assert await asyncio.wait_for(waiting, HANG) == [(5,)]  # what was committed before it


async def test_close_waits_for_reads_in_flight_then_closes_every_connection(
    tmp_path: Path,
) -> None:
    """`close` while reads run (one inside its statement, one waiting for a reader): both
    get their rows, the close ends after them, and every connection is closed (the suite's
    own check fails a test that leaves one open). Later reads and writes are refused."""
    gate = Gate()
    core = StorageCore(tmp_path / "continuo.sqlite3", functions={"hold": gate.hold}, readers=1)
    await core.write(_insert_session("a"))
    in_statement = asyncio.create_task(core.read("SELECT hold(id) FROM sessions"))
    await gate.wait_inside(1)
    queued = asyncio.create_task(core.read("SELECT id FROM sessions"))
    await until(lambda: len(core._waiting) == 1, "the second read waiting for the reader")

    assert core.begin_close()
    closing = asyncio.create_task(core.close())
    done, _ = await asyncio.wait({closing}, timeout=0.05)
    assert not done, "close() returned while a read was in its statement"

    gate.open()
    assert await asyncio.wait_for(in_statement, HANG) == [("a",)]
    assert await asyncio.wait_for(queued, HANG) == [("a",)]
    await asyncio.wait_for(closing, HANG)
    assert core._readers == [] and core._db is None
    with pytest.raises(StorageError) as refused:
        await core.read("SELECT 1")
    assert refused.value.key == "storage.closed"
    with pytest.raises(StorageError):
        await core.write(_insert_session("b"))


async def test_a_cancelled_read_gives_its_reader_back(gated: tuple[StorageCore, Gate]) -> None:
    """Reads cancelled while a reader opens for them, or while they wait for one, leave the
    pool whole: the readers come back and later reads use them."""
    core, gate = gated
    first = asyncio.create_task(core.read("SELECT hold(1)"))  # opens the writer, one reader
    await gate.wait_inside(1)
    opening = asyncio.create_task(core.read("SELECT 2"))  # a second reader opens for it
    await asyncio.sleep(0)  # one turn of the loop: the read reaches the opening (threads
    assert core._reader_opens  # take several turns to open a connection)
    opening.cancel()
    await until(lambda: not core._reader_opens, "the reader opened")
    assert len(core._readers) == 2 and len(core._idle) == 1  # the cancelled read's: parked

    held = [first] + [asyncio.create_task(core.read("SELECT hold(1)")) for _ in range(READERS - 1)]
    await gate.wait_inside(READERS)
    waiting = [asyncio.create_task(core.read("SELECT 3")) for _ in range(3)]
    await until(lambda: len(core._waiting) == 3, "three reads waiting for a reader")
    for task in waiting:
        task.cancel()
    gate.open()
    assert await asyncio.gather(*held) == [[(1,)]] * READERS
    for task in (opening, *waiting):
        with pytest.raises(asyncio.CancelledError):
            await task
    assert len(core._idle) == len(core._readers) == READERS

    rows = await asyncio.gather(*(core.read("SELECT ?", (n,)) for n in range(10)))
    assert rows == [[(n,)] for n in range(10)]
    assert len(core._readers) == READERS


async def test_readers_read_only_with_the_stores_settings(storage: SQLiteSessionStorage) -> None:
    await storage.append("s", "r", UserMessage(content="Straße"))
    assert [h.seq for h in await storage.search_messages("SS")] == [1]  # casefold on a reader
    (reader,) = storage._core._idle
    assert list(await reader.execute_fetchall("PRAGMA query_only")) == [(1,)]
    assert list(await reader.execute_fetchall("PRAGMA busy_timeout"))[0][0] >= 1000
    assert list(await reader.execute_fetchall("PRAGMA journal_mode")) == [("wal",)]


async def test_a_damaged_page_met_by_a_reader_of_an_open_store_is_corrupt_database(
    storage: SQLiteSessionStorage,
) -> None:
    """Pages of the messages damaged under an open, warmed-up store (another program, a
    failing disk): the next read of them says the file is damaged, naming it, and the
    store's other rows still read and write."""
    marker = "DAMAGE-MARKER"
    for n in range(60):
        kind = UserMessage if n % 2 == 0 else AssistantMessage
        await storage.append("s", "r", kind(content=f"{marker} {n} " + "words " * 150))
    await storage.create_session("other", title="Untouched")
    assert len(await storage.load("s")) == 60  # the readers' caches hold these pages now
    writer = await storage._core.writer()
    await writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the file itself

    data = storage.path.read_bytes()
    page = 4096
    damaged = 0
    with storage.path.open("r+b") as handle:
        for start in range(page, len(data), page):
            if marker.encode() in data[start : start + page]:
                handle.seek(start)
                handle.write(bytes(range(64)))  # the b-tree page header, scribbled
                damaged += 1
    assert damaged >= 10
    # A commit elsewhere in the file: each reader's next read sees the file changed and
    # drops its cache (as after any write by another connection).
    await storage.rename_session("other", "Still untouched")

    with pytest.raises(CorruptDatabaseError) as caught:
        await storage.load("s")
    assert str(storage.path) in str(caught.value)
    with pytest.raises(CorruptDatabaseError):
        await storage.search_messages("DA")  # a scan of every message
    assert (await storage.get_session("other")).title == "Still untouched"  # type: ignore[union-attr]
    with pytest.raises(CorruptDatabaseError):  # and the full check says so too
        await storage.check_integrity()
