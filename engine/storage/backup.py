"""Backups of the conversation file, taken while the app runs, and restoring one.

Invariants:

* A backup is a consistent snapshot: SQLite's online backup API copies the file from a
  SEPARATE read-only connection (``file:...?mode=ro``) that holds one read transaction for
  the whole copy. In WAL mode that transaction sees one moment of the file while the
  storage's own connection keeps writing (a request streaming, another appending), and the
  backup never restarts because of those writes.
* A backup is one self-contained file: the copy is switched to ``journal_mode=DELETE`` (no
  ``-wal``/``-shm`` beside it), is private (0600), and passes SQLite's full check
  (``PRAGMA integrity_check``) before it is renamed to the chosen name. Until then it is a temporary file beside the destination,
  removed on any failure or cancellation: a failed or cancelled backup leaves no file, and an
  existing file of that name is replaced only by a complete, checked copy. The rename is the
  line: a cancel before the final rename leaves nothing; after it, the backup stands
  (`backup_database` returns it, declining the cancel).
* A backup is never written over the conversation file, nor over a file SQLite keeps beside
  it (``-wal``, ``-shm``, ``-journal``: SQLite would delete or replay it), and a restore never
  reads one of those as the backup (`is_database_file`).
* A copy holds no leases, and no ``writers`` rows. A lease names the process writing the
  original file; in the copy nobody writes, and a lease naming this (live) process would keep
  every conversation that was answering busy forever (a writer's row would be taken for an
  unclean exit once this process ends). Without leases the copy behaves as after a crash: an
  answer that was streaming is kept as its draft, and taking the lease turns it into the
  stopped answer that Resume writes again.
* Restoring checks the backup read-only with the checks every open makes (the migrations'
  inspection: SQLite header, Continuo's application id, a schema this version reads, and a
  schema exactly as this version creates it: a trigger, view, table or index of another
  program is `ForeignSchemaError`, by name), then reads every page of it (the full check of
  `engine.storage.integrity`, which opening the app's own file never runs), so a bad, foreign
  or newer file is refused with `CorruptDatabaseError` or `NewerSchemaError` and the current
  data is not touched. A file that is no Continuo database at all (not SQLite, another
  program's, an empty one) is `NotABackupError`: it says so, not that a file is damaged. The copy's schema is checked again before the copy is written to. The
  current file is kept as ``<name>.before-restore-<timestamp>``, never deleted: that name is a
  hard link to it (a copy where the disk has no links), so the file stays where the app opens
  it until the backup's checked copy is renamed onto it in one step. A kill at any instant
  leaves a whole database there, the current one or the restored one, never no file (which
  the next start would take for a new, empty one). Any ``-wal``/``-shm``/``-journal`` left
  beside the current file is renamed aside first, with it (where SQLite finds it), so it is
  never applied to the restored file; a kill just after that keeps the current file without
  the last writes its WAL held (they are in the copy kept aside).

Errors from the disk are the storage's errors (`engine.storage.files`): a full disk is
`StorageFullError`, a read-only or forbidden folder `StorageReadOnlyError` or
`StoragePermissionError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .._finish import finish
from ..errors import CorruptDatabaseError, NotABackupError, StorageError
from ..sentences import Phrase
from .files import _os_refusal, make_private, refuse_unusable, storage_error
from .integrity import check_file
from .migrations import _SQLITE_MAGIC, APPLICATION_ID, _inspect_read_only, check_schema
from .sqlite import SQLiteSessionStorage

__all__ = [
    "BackupProgress",
    "BackupSummary",
    "backup_database",
    "inspect_backup",
    "is_database_file",
    "restore_database",
]

#: how a backup reports how far it is: (pages copied, pages in all), on the event loop
BackupProgress = Callable[[int, int], None]

#: pages copied per step of the backup (4 KiB each): about one progress call per 4 MB
_STEP_PAGES = 1024
#: the files SQLite may keep beside a database (WAL, its index, a rollback journal)
_BESIDE = ("-wal", "-shm", "-journal")
_BUSY_TIMEOUT = 5.0
#: the pragmas that say who wrote a database: its schema version, its application's id
_IDENTITY = ("user_version", "application_id")
#: SQLite's result code for a file that is not a database (past a valid-looking header)
_NOTADB = 26
#: the schema version that added ``writers`` (a backup of an older file has none to drop)
_WRITERS_VERSION = 6


@dataclass(frozen=True, slots=True)
class BackupSummary:
    """What a backup holds, as `inspect_backup` read it."""

    path: Path
    conversations: int
    messages: int  #: on every branch
    newest: float | None  #: the last update of its newest conversation (epoch seconds)


class _Cancelled(Exception):
    """Raised from the backup's progress callback to stop the copy (the task was cancelled)."""


async def backup_database(
    storage: SQLiteSessionStorage, destination: Path, *, progress: BackupProgress | None = None
) -> Path:
    """Copy the conversation file to ``destination``, consistently, while the app runs.

    The copy is made from a separate read-only connection (see the module docstring), in a
    worker thread; the storage keeps working meanwhile. Cancelling the task stops the copy
    and removes what was written. A cancel before the final rename leaves nothing; after it,
    the backup stands: the checked copy is complete, and ``destination`` is returned (the
    cancel is declined).

    Args:
        storage: the open store whose file is backed up (opened here if it was not yet).
        destination: the backup file; an existing file there is replaced.
        progress: called with (pages copied, pages in all) as the copy goes, on the loop.

    Returns:
        ``destination``.

    Raises:
        ValueError: ``destination`` is the conversation file itself, or a file SQLite keeps
            beside it (``-wal``, ``-shm``, ``-journal``).
        asyncio.CancelledError: the task was cancelled before the copy was renamed into
            place; no file was written.
        StorageError: the conversation file cannot be read, or the destination written
            (`StorageFullError`, `StorageReadOnlyError`, `StoragePermissionError`...).
    """
    destination = Path(destination)
    if is_database_file(destination, storage.path):
        raise ValueError("a backup cannot replace the conversation file it copies")
    # Opens, checks and migrates the file if the storage has not yet: the copy is of a file
    # this version wrote, never of one it would refuse.
    await storage.get_session("")
    loop = asyncio.get_running_loop()

    def tell(done: int, total: int) -> None:
        if progress is not None:
            loop.call_soon_threadsafe(progress, done, total)

    cancelled = threading.Event()
    copy = asyncio.ensure_future(
        asyncio.to_thread(_backup, storage.path, destination, tell, cancelled)
    )
    try:
        # The thread cannot be interrupted: a cancel asks it to stop at its next step, and
        # it removes its file.
        return await finish(copy, on_cancel=cancelled.set, discard_on_cancel=True)
    except asyncio.CancelledError:
        if copy.cancelled() or copy.exception() is not None:
            raise  # the copy's own stop (or failure), seen, ends with the cancel
        # It was renamed into place before the cancel reached it: the backup is done.
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        return copy.result()


def inspect_backup(path: Path) -> BackupSummary:
    """Check ``path`` read-only as `restore_database` does, and say what it holds.

    Blocking: run it in a thread. The file is not changed.

    Raises:
        CorruptDatabaseError, NewerSchemaError, StorageError: as `restore_database`, which
            would refuse the file.
    """
    path = Path(path)
    _check_backup(path)
    try:
        ro = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            conversations, newest = ro.execute(
                "SELECT COUNT(*), MAX(updated_at) FROM sessions"
            ).fetchone()
            messages = ro.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        finally:
            ro.close()
    except sqlite3.Error as exc:
        raise storage_error(exc, path) from exc
    newest_time = float(newest) if isinstance(newest, int | float) else None
    return BackupSummary(path, int(conversations), int(messages), newest_time)


def restore_database(data_path: Path, backup_path: Path) -> Path | None:
    """Put the backup ``backup_path`` in the place of the conversation file ``data_path``.

    Blocking: run it in a thread, after closing every storage open on ``data_path`` (closing
    checkpoints the WAL into the file; whatever is left beside it moves with it anyway).

    Returns:
        Where the current file was moved (``<data_path>.before-restore-<timestamp>``), or
        None when there was no current file.

    Raises:
        CorruptDatabaseError: the backup is damaged. Nothing was changed.
            (`NotABackupError`, one of them: it is not SQLite, is another program's or holds
            no Continuo database; `ForeignSchemaError`, another: it holds a trigger, view,
            table or index Continuo does not create.)
        NewerSchemaError: a newer Continuo wrote the backup. Nothing was changed.
        ValueError: ``backup_path`` is the conversation file itself, or a file SQLite keeps
            beside it (``-wal``, ``-shm``, ``-journal``).
        StorageError: the disk refused (`StorageFullError`, `StorageReadOnlyError`...).
            The current file is where it was.
    """
    data_path, backup_path = Path(data_path), Path(backup_path)
    if is_database_file(backup_path, data_path):
        raise ValueError("the backup is the conversation file itself")
    _check_backup(backup_path)
    refuse_unusable(data_path)
    temporary = _temporary_beside(data_path)
    try:
        _copy(backup_path, temporary, data_path, lambda _done, _total: None, None)
        aside = _keep_aside(data_path)
        try:
            os.replace(temporary, data_path)  # the one step from the current file to the backup
        except OSError as exc:
            if aside is not None:
                _put_back(aside, data_path)
            raise _disk_error(data_path, exc) from exc
    finally:
        _remove(temporary)
    _sync_folder(data_path.parent)
    return aside


# ---------------------------------------------------------------------------- the copy


def _backup(
    source: Path, destination: Path, tell: BackupProgress, cancelled: threading.Event
) -> Path:
    refuse_unusable(destination)
    temporary = _temporary_beside(destination)
    try:
        _copy(source, temporary, destination, tell, cancelled)
        if cancelled.is_set():
            raise _Cancelled
        try:
            os.replace(temporary, destination)
        except OSError as exc:
            raise _disk_error(destination, exc) from exc
    finally:
        _remove(temporary)
    _sync_folder(destination.parent)
    return destination


def _copy(
    source: Path,
    temporary: Path,
    named: Path,
    tell: BackupProgress,
    cancelled: threading.Event | None,
) -> None:
    """Copy the database ``source`` into the new file ``temporary``: one consistent snapshot,
    without leases, in rollback-journal mode, checked and on disk. ``named`` is the file the
    copy becomes (the disk's errors name it)."""
    try:
        ro = sqlite3.connect(
            f"{source.resolve().as_uri()}?mode=ro",
            uri=True,
            isolation_level=None,
            timeout=_BUSY_TIMEOUT,
        )
    except sqlite3.Error as exc:
        raise storage_error(exc, source) from exc
    try:
        try:
            # One read transaction for the whole copy: one snapshot of the file, and no
            # restart when the storage's writer writes between two steps.
            ro.execute("BEGIN")
            ro.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            raise storage_error(exc, source) from exc
        target = _open_target(temporary, named)
        try:

            def step(_status: int, remaining: int, total: int) -> None:
                if cancelled is not None and cancelled.is_set():
                    raise _Cancelled
                tell(total - remaining, total)

            try:
                ro.backup(target, pages=_STEP_PAGES, progress=step)
            except sqlite3.Error as exc:
                # Reading the source or writing the copy failed: the disk's answer names
                # the file it is about (a full disk is the copy's).
                raise storage_error(exc, named) from exc
            try:
                # The copy's schema is checked again before anything is written to it: a
                # trigger that came in with the pages would run on the DELETE below (the
                # source was checked, but it could have changed since).
                version = target.execute("PRAGMA user_version").fetchone()[0]
                check_schema(target, source, version)
                target.execute("DELETE FROM leases")
                if version >= _WRITERS_VERSION:
                    target.execute("DELETE FROM writers")
                # The copy carried the source's WAL flag: back to one self-contained file.
                mode = target.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
                problems = [row[0] for row in target.execute("PRAGMA integrity_check").fetchall()]
            except sqlite3.Error as exc:
                raise storage_error(exc, named) from exc
            if str(mode).lower() != "delete" or problems != ["ok"]:
                raise CorruptDatabaseError(str(named), problems[0] if problems else str(mode))
        finally:
            target.close()
    finally:
        ro.close()
    _sync_file(temporary, named)


def _open_target(temporary: Path, named: Path) -> sqlite3.Connection:
    """Create ``temporary`` (0600, whatever the umask) and open it as an empty database."""
    try:
        fd = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600
        )
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, 0o600)  # os.open's mode is filtered by the umask
        finally:
            os.close(fd)
    except OSError as exc:
        raise _disk_error(named, exc) from exc
    try:
        return sqlite3.connect(temporary, isolation_level=None, timeout=_BUSY_TIMEOUT)
    except sqlite3.Error as exc:
        raise storage_error(exc, named) from exc


def _check_backup(backup: Path) -> None:
    """Refuse, untouched, a backup that is not a Continuo database this version reads."""
    try:
        if not backup.is_file() or not _continuo_database(backup):
            raise NotABackupError(str(backup))
        _inspect_read_only(backup)
        check_file(backup)  # every page: opening a file never reads them all
        ro = sqlite3.connect(f"{backup.resolve().as_uri()}?mode=ro", uri=True)
        try:
            version = ro.execute("PRAGMA user_version").fetchone()[0]
        finally:
            ro.close()
    except sqlite3.Error as exc:
        raise storage_error(exc, backup) from exc
    except OSError as exc:
        raise _disk_error(backup, exc) from exc
    if version < 1:  # an empty SQLite file: restoring it would lose every conversation
        raise NotABackupError(str(backup))


def _continuo_database(path: Path) -> bool:
    """Whether ``path`` is, by its header and schema record, a database Continuo wrote
    (damaged or not): not another file, another program's database, nor an empty one. A file
    that is none of these is told "not a Continuo backup", never "damaged"; the full checks
    come after, for the file that is one.

    Raises:
        sqlite3.Error, OSError: the file could not be read (told by the caller as such).
    """
    with path.open("rb") as handle:
        if handle.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
            return False
    ro = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        version, app_id = (ro.execute(f"PRAGMA {p}").fetchone()[0] for p in _IDENTITY)
        migrations = ro.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ).fetchone()
    except sqlite3.DatabaseError as exc:
        if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == _NOTADB:
            return True  # the SQLite header but unreadable pages: damage, said as damage
        raise
    finally:
        ro.close()
    return version > 0 and app_id in (0, APPLICATION_ID) and migrations is not None


# ---------------------------------------------------------------------------- files


def _keep_aside(data_path: Path) -> Path | None:
    """Keep the current file as ``.before-restore-<timestamp>``: the files beside it renamed
    there, the file itself linked (or copied) there, so it stays in place until replaced."""
    if not data_path.exists():
        # A journal without its database would be applied to the restored file: keep it too.
        if not any(Path(f"{data_path}{s}").exists() for s in _BESIDE):
            return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = data_path.with_name(f"{data_path.name}.before-restore-{stamp}")
    number = 2
    while any(Path(f"{aside}{s}").exists() for s in ("", *_BESIDE)):
        aside = data_path.with_name(f"{data_path.name}.before-restore-{stamp}-{number}")
        number += 1
    moved: list[tuple[Path, Path]] = []
    try:
        # The journals first: if the file itself cannot be kept, nothing else has moved.
        for suffix in _BESIDE:
            current = Path(f"{data_path}{suffix}")
            if current.exists():
                os.replace(current, Path(f"{aside}{suffix}"))
                moved.append((current, Path(f"{aside}{suffix}")))
        if data_path.exists():
            _link_or_copy(data_path, aside)
    except OSError as exc:
        for current, kept in reversed(moved):
            with contextlib.suppress(OSError):
                os.replace(kept, current)
        raise _disk_error(data_path, exc) from exc
    _sync_folder(data_path.parent)
    return aside


def _link_or_copy(current: Path, kept: Path) -> None:
    """A second name for ``current`` (a hard link), or a synced copy where links fail."""
    try:
        os.link(current, kept)
        return
    except OSError:
        pass  # a disk without hard links (FAT, some network shares): copy instead
    temporary = _temporary_beside(kept)
    try:
        shutil.copyfile(current, temporary)
        os.chmod(temporary, 0o600)
        _sync_file(temporary, kept)
        os.replace(temporary, kept)
    finally:
        _remove(temporary)


def _put_back(aside: Path, data_path: Path) -> None:
    """Undo `_keep_aside` (the final rename failed): the journals back, the kept name gone."""
    for suffix in _BESIDE:
        kept = Path(f"{aside}{suffix}")
        if kept.exists():
            with contextlib.suppress(OSError):
                os.replace(kept, Path(f"{data_path}{suffix}"))
    with contextlib.suppress(OSError):
        if data_path.exists():
            aside.unlink()  # the current file is still in place: the kept name is extra
        elif aside.exists():
            os.replace(aside, data_path)


def _temporary_beside(path: Path) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")


def _remove(temporary: Path) -> None:
    for suffix in ("", *_BESIDE):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{temporary}{suffix}").unlink()


def _sync_file(path: Path, named: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _disk_error(named, exc) from exc
    make_private(path)


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX; Windows has no folder handles to sync)."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def is_database_file(path: Path, database: Path) -> bool:
    """True when ``path`` is the database ``database`` (by name, through a link, or the same
    file under another name) or one of the files SQLite keeps beside it (``-wal``, ``-shm``,
    ``-journal``): a file that a backup or an export must not replace, nor a restore read."""
    try:
        here, there = path.resolve(), database.resolve()
        if here.parent == there.parent and here.name in {there.name + s for s in ("", *_BESIDE)}:
            return True
        return path.exists() and database.exists() and path.samefile(database)
    except OSError:
        return False


def _disk_error(path: Path, exc: OSError) -> StorageError:
    return _os_refusal(path, exc, Phrase("storage.reason.not_created"))
