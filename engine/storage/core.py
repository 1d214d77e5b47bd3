"""`StorageCore`: the connections to one conversation file and the transactions on them.

Every part of the SQLite store (`engine.storage.sqlite` lists them) is given this core and
reads and writes only through it; none holds a connection of its own. Invariants:

* ONE writer connection, opened lazily on first use after `prepare_database` has checked the
  file read-only (a refused file is never changed) and migrated it. WAL, ``synchronous=FULL``
  by default (every committed message survives a power cut), a ``busy_timeout`` for other
  processes' writers, foreign keys on. The hooks given to `when_opened` run on it then (the
  tree mends a path a killed process cut short), before anything reads the file.
* Every write is one ``BEGIN IMMEDIATE`` transaction on the writer, under the writer's lock,
  so the transactions of concurrent coroutines never interleave. A read inside a write is
  the body's own (`write` hands the body the writer: it sees what the transaction wrote).
* A started write finishes even if its caller is cancelled: it runs as an owned task the
  caller awaits through `engine._finish.finish` (a write abandoned half-way would leave the
  writer inside an open transaction).
* Reads run on a small pool of read connections (`READERS`), opened as they are needed (the
  first beside the writer), each with the same ``busy_timeout`` and SQL functions, and
  ``query_only`` on. WAL lets a reader read while a write commits, so a read never waits
  behind the writer's lock, and a long read (a search that scans, an export page) never
  delays a write. A read started after a write committed sees it (each read is its own
  snapshot). At most `READERS` reads run at once; one more waits for a reader to come
  back, never for the writer.
* The core knows no table. Its parts hook what must happen at its joints: `when_opened` (on
  the writer as the file opens: the tree mends a path a killed process cut short),
  `in_first_write` (inside each write's transaction until one commits: the integrity check's
  ``writers`` row) and `when_closing` (on the writer before it closes, once a write
  committed: that row is deleted). The SQL functions given (``casefold``) are registered
  on every connection.
* `close` lets writes in progress finish, waits for the reads in progress, closes the readers
  and then the writer (the last connection to close folds the WAL back into the file).
  Afterwards every read and write is refused (``storage.closed``).
* SQLite's errors become `StorageError`s that name the file (`translate`): damage a read meets
  on any connection is `CorruptDatabaseError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import aiosqlite

from .._finish import finish
from ..errors import StorageError
from .files import create_private, make_private, storage_error
from .migrations import Progress, check_sqlite, prepare_database

__all__ = ["BUSY_TIMEOUT", "READERS", "Body", "Hook", "StorageCore", "Synchronous"]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]
#: what a write runs inside its transaction, given the writer
Body = Callable[[aiosqlite.Connection], Awaitable[_T]]
#: what a part hooks at one of the core's joints, given the writer
Hook = Callable[[aiosqlite.Connection], Awaitable[None]]
#: an SQL function of one argument, registered on every connection
Function = Callable[[Any], Any]

BUSY_TIMEOUT = 5.0  #: seconds another process's write transaction may make us wait
READERS = 3  #: read connections at most (each one thread)


class StorageCore:
    """The writer connection, the read connections and the transactions of one file.

    Args:
        path: the database file; it and its folder are created if missing.
        synchronous: SQLite's ``synchronous`` setting for the writer.
        functions: SQL functions of one argument (deterministic), by name, registered on
            every connection.
        readers: how many read connections may be open at once.
    """

    def __init__(
        self,
        path: Path,
        *,
        synchronous: Synchronous = "FULL",
        functions: Mapping[str, Function] | None = None,
        readers: int = READERS,
    ) -> None:
        self.path = path
        self.synchronous = synchronous
        self._functions = dict(functions or {})
        #: called with the fraction done (0..1) while opening runs a long migration
        self.on_migration_progress: Progress | None = None
        #: for the benchmark only: every read on the writer, under its lock (the design
        #: before the read connections), to measure what they give
        self.reads_on_writer = False
        self._opened: list[Hook] = []
        self._first_write: list[Hook] = []
        self._closing_hooks: list[Hook] = []
        self._db: aiosqlite.Connection | None = None
        self._opening: asyncio.Task[aiosqlite.Connection] | None = None
        self._lock = asyncio.Lock()  #: the writer's: one transaction at a time
        self._writes: set[asyncio.Task[Any]] = set()
        self._pool_size = max(1, readers)
        self._readers: list[aiosqlite.Connection] = []  #: every open reader
        self._idle: list[aiosqlite.Connection] = []  #: those no read is using
        self._reader_opens: set[asyncio.Task[aiosqlite.Connection]] = set()
        self._waiting: deque[asyncio.Future[None]] = deque()  #: reads waiting for a reader
        self._reading = 0  #: reads in progress (on a reader, or waiting for one)
        self._reads_done = asyncio.Event()
        self._reads_done.set()
        self._wrote = False  #: a write transaction committed
        self._closing = False  #: close() has begun (what already started still completes)
        self._finished = False  #: close() has closed the connections: nothing more runs

    @property
    def closing(self) -> bool:
        """True once `close` has begun."""
        return self._closing

    def when_opened(self, hook: Hook) -> None:
        """Run `hook` on the writer when the file opens, before anything reads it."""
        self._opened.append(hook)

    def in_first_write(self, hook: Hook) -> None:
        """Run `hook` inside each write transaction, before its body, until one commits."""
        self._first_write.append(hook)

    def when_closing(self, hook: Hook) -> None:
        """Run `hook` on the writer just before `close` closes it, if a write committed.
        Its SQLite errors are logged, not raised (the close goes on)."""
        self._closing_hooks.append(hook)

    # ------------------------------------------------------------------ reads and writes

    async def read(self, sql: str, params: tuple[Any, ...] | Mapping[str, Any] = ()) -> list[Any]:
        """Run one query on a read connection and return its rows."""
        if self.reads_on_writer:
            db = await self.writer()
            async with self._lock:
                with self.translate():
                    return list(await db.execute_fetchall(sql, params))
        async with self._reader() as db:
            with self.translate():
                return list(await db.execute_fetchall(sql, params))

    async def write(self, body: Body[_T]) -> _T:
        """Run `body` on the writer inside one ``BEGIN IMMEDIATE`` transaction, committed
        when it returns and rolled back when it raises; the write finishes even if the
        caller is cancelled (`engine._finish.finish`)."""
        return await finish(self.start_write(body))

    def start_write(self, body: Body[_T]) -> asyncio.Task[_T]:
        """`write`'s task, for a caller that must look at it after a cancel (the lease's
        undo); `close` waits for it."""
        task: asyncio.Task[_T] = asyncio.ensure_future(self._transaction(body))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return task

    async def _transaction(self, body: Body[_T]) -> _T:
        db = await self.writer()
        async with self._lock:
            with self.translate():
                await db.execute("BEGIN IMMEDIATE")
                try:
                    if not self._wrote:
                        for hook in self._first_write:
                            await hook(db)
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
                self._wrote = True
                return result

    @contextlib.contextmanager
    def translate(self) -> Iterator[None]:
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

    # ------------------------------------------------------------------ the writer

    async def writer(self) -> aiosqlite.Connection:
        """The writer connection, opening the file first if it is not open yet.

        Raises:
            StorageError: the file was refused (see `prepare_database`), or is closed.
        """
        if self._db is not None:
            return self._db
        if self._finished:
            raise self._closed_error()
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
            raise self._closed_error()
        self._db = db
        return db

    async def _open(self) -> aiosqlite.Connection:
        # One trip to a worker thread for the file's checks, then the writer and the first
        # reader open side by side: each trip waits for the event loop's turn (a window's
        # start-up is busy).
        await asyncio.to_thread(self._prepare_file)
        opened = await asyncio.gather(
            self._connect_writer(), self._connect_reader(), return_exceptions=True
        )
        failed = [r for r in opened if isinstance(r, BaseException)]
        connections = [r for r in opened if not isinstance(r, BaseException)]
        if failed:
            for db in connections:
                await db.close()
            raise failed[0]
        db, reader = connections
        self._readers.append(reader)
        self._idle.append(reader)
        return db

    def _prepare_file(self) -> None:
        create_private(self.path)
        check_sqlite()
        prepare_database(self.path, busy_timeout=BUSY_TIMEOUT, progress=self.on_migration_progress)
        make_private(self.path)

    async def _connect_writer(self) -> aiosqlite.Connection:
        db = await aiosqlite.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT)
        try:
            with self.translate():
                await db.executescript(
                    f"PRAGMA journal_mode = WAL; PRAGMA synchronous = {self.synchronous}; "
                    f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}; PRAGMA foreign_keys = ON;"
                )
                await self._register_functions(db)
            for hook in self._opened:
                await hook(db)
        except BaseException:
            await db.close()
            raise
        return db

    async def _register_functions(self, db: aiosqlite.Connection) -> None:
        for name, function in self._functions.items():
            await db.create_function(name, 1, function, deterministic=True)

    # ------------------------------------------------------------------ the readers

    async def _connect_reader(self) -> aiosqlite.Connection:
        db = await aiosqlite.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT)
        try:
            with self.translate():
                # query_only: a reader that was asked to write refuses (a write belongs
                # in a transaction on the writer).
                await db.executescript(
                    f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}; PRAGMA query_only = ON;"
                )
                await self._register_functions(db)
        except BaseException:
            await db.close()
            raise
        return db

    @contextlib.asynccontextmanager
    async def _reader(self) -> AsyncIterator[aiosqlite.Connection]:
        # Counted from the start: `close` waits for a read waiting for a reader too.
        self._reading += 1
        self._reads_done.clear()
        try:
            await self.writer()  # the file is checked, migrated and mended before it is read
            db = await self._take_reader()
            try:
                yield db
            finally:
                self._idle.append(db)
                self._wake_one()
        finally:
            self._reading -= 1
            if not self._reading:
                self._reads_done.set()

    async def _take_reader(self) -> aiosqlite.Connection:
        while True:
            if self._finished:
                raise self._closed_error()
            if self._idle:
                return self._idle.pop()
            if len(self._readers) + len(self._reader_opens) < self._pool_size:
                return await self._open_reader()
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_one()  # woken and cancelled at once: the next one's turn
                raise

    async def _open_reader(self) -> aiosqlite.Connection:
        opening = asyncio.ensure_future(self._connect_reader())
        self._reader_opens.add(opening)

        def opened(task: asyncio.Task[aiosqlite.Connection]) -> None:
            self._reader_opens.discard(task)
            if not task.cancelled() and task.exception() is None:
                self._readers.append(task.result())

        opening.add_done_callback(opened)
        try:
            # Shielded: a caller cancelled mid-open leaves the reader to the pool.
            return await asyncio.shield(opening)
        except asyncio.CancelledError:
            opening.add_done_callback(self._park)
            raise

    def _park(self, task: asyncio.Task[aiosqlite.Connection]) -> None:
        """A reader opened for a read that was cancelled meanwhile: it joins the idle ones."""
        if not task.cancelled() and task.exception() is None:
            self._idle.append(task.result())
            self._wake_one()

    def _wake_one(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    # ------------------------------------------------------------------ closing

    def begin_close(self) -> bool:
        """Mark the core as closing; False when `close` had already begun."""
        if self._closing:
            return False
        self._closing = True
        return True

    async def close(self) -> None:
        """Let writes in progress finish and the reads in progress end, then close every
        connection (the readers, then the writer). Call `begin_close` first."""
        while self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        if self._opening is not None and self._db is None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                self._db = await self._opening
        async with self._lock:  # after any read in progress on the writer
            while self._reader_opens or not self._reads_done.is_set():
                await asyncio.gather(*self._reader_opens, return_exceptions=True)
                await self._reads_done.wait()
            db, self._db = self._db, None
            readers, self._readers, self._idle = self._readers, [], []
            self._finished = True
            while self._waiting:  # each sees the close and is refused
                self._wake_one()
            for reader in readers:
                await reader.close()
            if db is not None:
                if self._wrote:
                    for hook in self._closing_hooks:
                        try:
                            await hook(db)
                        except sqlite3.Error:
                            _log.warning("closing %s", self.path, exc_info=True)
                await db.close()

    def _closed_error(self) -> StorageError:
        return StorageError(key="storage.closed", params={"path": str(self.path)})
