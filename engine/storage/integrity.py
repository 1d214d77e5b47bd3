"""The full integrity check of a conversation file, and when it runs.

SQLite reports damage on the pages a query reads (`CorruptDatabaseError`), so opening a file
reads only its header and schema (`engine.storage.migrations`). The full check
(``PRAGMA integrity_check``) reads every page, 2-7 ms a MB, so it never runs on the way to
the conversation list. It runs:

* after an unclean exit. Every storage that writes to the file records itself in the
  ``writers`` table (schema 6) inside its first write's transaction — who it is, as a lease
  names its holder (`engine.storage.lease.ProcessIdentity`) — and deletes its row when it
  closes. A row whose process is gone (killed, crashed, a reboot after a power cut) is an
  unclean exit: `Integrity.integrity_check_due` says so. Judged by the process,
  not by a flag, so two processes sharing the file never mistake each other for a crash,
  and a reused pid is told apart by its start time. The rows of gone processes are deleted
  only once a check that began after they were read has passed: a check cut short (the app
  closed meanwhile, or a second crash) runs again at the next start, and a damaged file is
  told again at every start until it is restored. A process that never wrote left no row:
  it cannot have damaged the file. A row of another machine (a shared folder) is never
  judged gone: its processes cannot be seen from here.
* on request (`Integrity.check_integrity`: the window's Help menu);
* on backup and restore (`engine.storage.backup`): the copy, and the backup to restore.

The check opens its own read-only connection in a worker thread: in WAL mode it reads one
snapshot of the file while the storage's connections keep reading and writing. A check can
be stopped from another thread at any moment (`CheckStop`: ``sqlite3_interrupt``); closing
the store stops those running (`Integrity.stop_checks`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import aiosqlite

from ..errors import CorruptDatabaseError
from .core import StorageCore
from .files import storage_error
from .lease import ProcessIdentity, process_alive

__all__ = [
    "WRITER_COLUMNS",
    "CheckStop",
    "Integrity",
    "Pause",
    "check_file",
    "gone_writers",
    "run_check",
    "writer_row",
]

#: called from the checking thread as the check begins, and now and then while it runs (a
#: host can wait there; tests hold a check with it)
Pause = Callable[[], None]

_log = logging.getLogger(__name__)

#: SQLite virtual machine steps between two calls of `Pause` (SQLite's b-tree walk is one
#: step: most of a check happens between two calls)
_STEPS = 10_000

#: a row of ``writers`` as `gone_writers` reads it
WRITER_COLUMNS = "token, host, boot_id, pid, process_started"


class CheckStop:
    """Stops a running `check_file` from any thread (``sqlite3_interrupt``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self.stopped = False

    def stop(self) -> None:
        with self._lock:
            self.stopped = True
            if self._db is not None:
                self._db.interrupt()

    def _attach(self, db: sqlite3.Connection | None) -> bool:
        """Let `stop` interrupt `db` (None: no longer); True when already stopped."""
        with self._lock:
            self._db = db
            return self.stopped


def check_file(path: Path, *, stop: CheckStop | None = None, pause: Pause | None = None) -> bool:
    """Read every page of the database at `path` (``PRAGMA integrity_check``), read-only.

    Blocking: run it in a thread. Returns True when the file passed, False when `stop` was
    used before the check ended (nothing is known then).

    Raises:
        CorruptDatabaseError: the check found damage (the first problem SQLite names).
        StorageError: the file could not be read (the disk, the operating system).
    """
    stop = stop if stop is not None else CheckStop()
    try:
        db = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None, timeout=5.0
        )
    except sqlite3.Error as exc:
        raise storage_error(exc, path) from exc

    def step() -> int:
        if pause is not None:
            pause()
        return 1 if stop.stopped else 0  # non-zero interrupts the statement

    try:
        if stop._attach(db):
            return False
        db.set_progress_handler(step, _STEPS)
        if step():
            return False
        problems = [str(row[0]) for row in db.execute("PRAGMA integrity_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        if stop.stopped:
            return False
        raise storage_error(exc, path) from exc
    finally:
        stop._attach(None)
        db.close()
    if problems != ["ok"]:
        raise CorruptDatabaseError(str(path), problems[0] if problems else "unknown damage")
    return True


async def run_check(path: Path, stops: set[CheckStop], pause: Pause | None) -> bool:
    """`check_file` in a worker thread; its `CheckStop` is in `stops` while it runs (the
    storage's `close` uses them). Cancelling the caller stops the check, and returns once
    the thread has closed its connection."""
    stop = CheckStop()
    stops.add(stop)
    check = asyncio.ensure_future(asyncio.to_thread(check_file, path, stop=stop, pause=pause))
    try:
        return await asyncio.shield(check)
    except asyncio.CancelledError:
        stop.stop()
        while not check.done():
            with contextlib.suppress(BaseException):
                await asyncio.shield(check)
        raise
    finally:
        stops.discard(stop)


def gone_writers(rows: Iterable[Any], here: ProcessIdentity) -> list[str]:
    """The tokens of the ``writers`` rows (`WRITER_COLUMNS`) whose process is gone."""
    gone = []
    for token, host, boot_id, pid, started in rows:
        if host != here.host:
            continue  # another machine's process: it cannot be seen from here
        if (boot_id and here.boot_id and boot_id != here.boot_id) or not process_alive(
            int(pid), started
        ):
            gone.append(str(token))
    return gone


def writer_row(token: str, here: ProcessIdentity) -> tuple[Any, ...]:
    """The ``writers`` row recording this storage: (token, host, boot_id, pid, started, since)."""
    return (token, here.host, here.boot_id, here.pid, here.process_started, time.time())


class Integrity:
    """The SQLite store's part that knows when the file needs its full check, and runs it.

    It records the store in ``writers`` inside the core's first write transaction, and
    deletes that row as the core closes (see the module docstring).

    Args:
        core: the store's core.
        host: the host name to record instead of the machine's (tests play a second one).
    """

    def __init__(self, core: StorageCore, host: str | None = None) -> None:
        self._core = core
        self._host = host
        self._token = secrets.token_hex(16)  #: this store's row of ``writers``
        self._checks: set[CheckStop] = set()  #: the running checks
        core.in_first_write(self._record)
        core.when_closing(self._forget)

    async def integrity_check_due(self) -> bool:
        """Whether a process that wrote to this file ended without closing it (killed,
        crashed, a power cut) and no full check has passed since: then run `check_integrity`.

        One small read; opens the file if it is not open yet.
        """
        return bool(await self._gone_writers())

    async def check_integrity(self, *, pause: Pause | None = None) -> bool:
        """Read every page of the file (SQLite's full check) on a separate read-only
        connection in a worker thread, while the store keeps working.

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
        passed = await run_check(self._core.path, self._checks, pause)
        if passed and gone:

            async def forget(db: aiosqlite.Connection) -> None:
                await db.execute(
                    "DELETE FROM writers WHERE token IN (SELECT value FROM json_each(?))",
                    (json.dumps(gone),),
                )

            await self._core.write(forget)
        return passed

    def stop_checks(self) -> None:
        """Stop the running checks now (their callers see them stopped): the store closes."""
        for check in list(self._checks):
            check.stop()

    async def _gone_writers(self) -> list[str]:
        rows = await self._core.read(f"SELECT {WRITER_COLUMNS} FROM writers")
        return gone_writers(rows, ProcessIdentity.current(self._host))

    async def _record(self, db: aiosqlite.Connection) -> None:
        await db.execute(
            "INSERT OR REPLACE INTO writers VALUES (?, ?, ?, ?, ?, ?)",
            writer_row(self._token, ProcessIdentity.current(self._host)),
        )

    async def _forget(self, db: aiosqlite.Connection) -> None:
        """Delete this store's ``writers`` row: it closes cleanly. A failure (a full disk)
        only leaves the row, and the next start checks the file once more."""
        try:
            await db.execute("DELETE FROM writers WHERE token = ?", (self._token,))
        except sqlite3.Error:
            _log.warning("could not record the clean close of %s", self._core.path, exc_info=True)
