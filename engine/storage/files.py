"""The database file on disk: who may read it, whether it can be written, what a refusal means.

Invariants:

* Conversations are private. A data folder this code creates is 0700 and a database file it
  creates is 0600, whatever the umask; SQLite gives the ``-wal``/``-shm`` files the mode of
  the database file, so they are 0600 too. An existing file (or companion) readable by
  others, and ours, is narrowed to 0600 once it has been accepted.
* A folder or file that cannot be written is refused before SQLite touches it, so a refused
  file gets no ``-wal``/``-shm`` beside it and is never called damaged: the operating
  system's refusal is reported as what it is (`StorageReadOnlyError`,
  `StoragePermissionError`), with the path and the reason.
* SQLite's own result codes are mapped once, here (`storage_error`): a full disk, a read-only
  file, a refused open and an I/O error are distinct errors with distinct sentences; only
  ``SQLITE_CORRUPT``/``SQLITE_NOTADB`` mean damage. ``SQLITE_ERROR`` (a statement SQLite
  could not run: a full-text query it cannot read, a fault in our SQL) is a `QueryError`,
  never told as a fault of the disk or the file (whose schema was checked when it opened).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from pathlib import Path

from ..errors import (
    CorruptDatabaseError,
    QueryError,
    StorageError,
    StorageFullError,
    StorageIOError,
    StoragePermissionError,
    StorageReadOnlyError,
)
from ..sentences import ErrorAction, Phrase

__all__ = [
    "COMPANIONS",
    "create_private",
    "make_private",
    "make_private_folder",
    "refuse_unusable",
    "storage_error",
]

#: the files SQLite keeps beside a database in WAL mode
COMPANIONS = ("-wal", "-shm")

# SQLite primary result codes (the low byte of an extended code).
_ERROR, _PERM, _BUSY, _LOCKED, _READONLY, _IOERR = 1, 3, 5, 6, 8, 10
_CORRUPT, _FULL, _CANTOPEN, _NOTADB = 11, 13, 14, 26


def create_private(path: Path) -> None:
    """Create the folder of `path` (0700) and an empty database file (0600) if missing.

    Raises:
        StorageReadOnlyError: the folder cannot be created or written.
        StoragePermissionError: this user may not enter a folder on the way.
    """
    folder = path.parent
    try:
        make_private_folder(folder)
    except OSError as exc:
        raise _os_refusal(
            path, exc, Phrase("storage.reason.folder_not_created", {"folder": folder})
        ) from exc
    refuse_unusable(path)
    if path.exists():
        return
    try:
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600
        )
    except FileExistsError:
        return  # another process created it meanwhile
    except OSError as exc:
        raise _os_refusal(path, exc, Phrase("storage.reason.not_created")) from exc
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o600)  # os.open's mode is filtered by the umask too
    finally:
        os.close(fd)


def make_private_folder(folder: Path) -> None:
    """Create `folder` and any missing parents as 0700, whatever the umask.

    A folder that already exists is left as it is (it may be one the person chose, shared on
    purpose). The host uses this for the data folder too, so whichever creates it first
    creates it private.

    Raises:
        OSError: the folder could not be created.
    """
    missing: list[Path] = []
    for ancestor in (folder, *folder.parents):
        if ancestor.exists():
            break
        missing.append(ancestor)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for created in missing:
        os.chmod(created, 0o700)  # mkdir's mode is filtered by the umask; chmod's is not


def make_private(path: Path) -> None:
    """Narrow the database file and its companions to 0600 if others could read them.

    Only files this user owns are changed; a failure to change them is not an error (the
    conversations are as readable as before, and the file still works).
    """
    if not hasattr(os, "getuid"):
        return  # Windows: access is governed by ACLs, which the user folder already sets
    for candidate in (path, *(Path(f"{path}{suffix}") for suffix in COMPANIONS)):
        try:
            info = candidate.stat()
            if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
                os.chmod(candidate, stat.S_IMODE(info.st_mode) & 0o700)
        except OSError:
            continue


def refuse_unusable(path: Path) -> None:
    """Raise if `path` (or its folder, or a companion file) cannot be read and written.

    Raises:
        StoragePermissionError: this user may not enter the folder or read the file.
        StorageReadOnlyError: the folder, the file or a companion file cannot be written.
    """
    folder = path.parent
    if not os.access(folder, os.X_OK):
        raise StoragePermissionError(
            str(path), Phrase("storage.reason.folder_not_enterable", {"folder": folder})
        )
    if _read_only_mount(folder):
        raise StorageReadOnlyError(
            str(path), Phrase("storage.reason.folder_on_read_only_disk", {"folder": folder})
        )
    if path.exists() and not os.access(path, os.R_OK):
        raise StoragePermissionError(str(path), Phrase("storage.reason.not_readable"))
    if not os.access(folder, os.W_OK):
        # SQLite creates its -wal and -shm files beside the database on every open.
        raise StorageReadOnlyError(
            str(path), Phrase("storage.reason.folder_read_only", {"folder": folder})
        )
    if path.exists() and not os.access(path, os.W_OK):
        raise StorageReadOnlyError(str(path), Phrase("storage.reason.file_read_only"))
    for suffix in COMPANIONS:
        companion = Path(f"{path}{suffix}")
        if companion.exists() and not os.access(companion, os.R_OK | os.W_OK):
            raise StorageReadOnlyError(
                str(path), Phrase("storage.reason.companion_read_only", {"companion": companion})
            )


def storage_error(exc: sqlite3.Error, path: Path) -> StorageError | QueryError:
    """Return the `StorageError` that says what SQLite's `exc` means for the file at `path`
    (a `QueryError` when it is about the statement, not the disk or the file)."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    where = str(path)
    if code == _ERROR:
        return QueryError(where, str(exc))
    if code in (_CORRUPT, _NOTADB):
        return CorruptDatabaseError(where, str(exc))
    if code == _FULL:
        return StorageFullError(where)
    if code in (_READONLY, _CANTOPEN, _PERM):
        # Ask the file system which part refused, so the sentence names it.
        try:
            refuse_unusable(path)
        except (StorageReadOnlyError, StoragePermissionError) as refusal:
            return refusal
        if code == _READONLY:
            return StorageReadOnlyError(where, str(exc))
        if code == _PERM:
            return StoragePermissionError(where, str(exc))
        return StorageError(
            key="storage.cannot_open",
            params={"path": where, "detail": str(exc)},
            action=ErrorAction.CHECK_FOLDER,
        )
    if code == _IOERR:
        return StorageIOError(where, str(exc))
    if code in (_BUSY, _LOCKED):
        return StorageError(
            key="storage.locked", params={"path": where}, action=ErrorAction.CLOSE_OTHER
        )
    return StorageError(
        key="storage.unusable",
        params={"path": where, "detail": str(exc)},
        action=ErrorAction.CHECK_FOLDER,  # the sentence asks to check the disk and the file
    )


def _os_refusal(path: Path, exc: OSError, what: Phrase) -> StorageError:
    # Reasons are catalog phrases, said in the language of the sentence they go into; only
    # an uncommon system error keeps the operating system's own (English) words.
    if exc.errno == errno.ENOSPC:
        return StorageFullError(str(path))
    if exc.errno == errno.EROFS:
        return StorageReadOnlyError(
            str(path), Phrase("storage.reason.disk_read_only", {"what": what})
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        denied = Phrase("storage.reason.permission_denied")
        return StorageReadOnlyError(
            str(path), Phrase("storage.reason.os_error", {"what": what, "error": denied})
        )
    error = exc.strerror or str(exc)
    return StorageIOError(
        str(path), str(Phrase("storage.reason.os_error", {"what": what, "error": error}))
    )


def _read_only_mount(folder: Path) -> bool:
    statvfs = getattr(os, "statvfs", None)
    if statvfs is None:
        return False
    try:
        return bool(statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False
