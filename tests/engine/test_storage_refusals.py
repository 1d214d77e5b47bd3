"""A full disk, a read-only file or folder, a file this user may not open: each told as such.

The operating system must really refuse, so the storage is used from a child process run as
an unprivileged user: when the tests run as root (whose writes file modes do not stop), the
child runs as ``nobody`` on a workspace handed to ``nobody``. The full disk is a real, small
tmpfs when the tests may mount one (root); otherwise SQLite's own page limit
(``PRAGMA max_page_count``) makes the same SQLITE_FULL happen in the same write path.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.errors import (
    CorruptDatabaseError,
    StorageFullError,
    StoragePermissionError,
    StorageReadOnlyError,
)
from engine.messages import UserMessage
from engine.sentences import ErrorAction
from engine.storage import SQLiteSessionStorage
from tests.support.language import english_words
from tests.support.unprivileged import AS_ROOT, DROP, NOBODY, reachable_by_nobody

USE_STORAGE = Path(__file__).parent / "storage_helpers" / "use_storage.py"


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    """A folder the unprivileged child owns (under /tmp when root: tmp_path is root's 0700)."""
    if not AS_ROOT:
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="continuo-refusals-"))
    os.chmod(folder, 0o755)
    os.chown(folder, NOBODY, NOBODY)
    try:
        yield folder
    finally:
        for path in (folder, *folder.rglob("*")):
            with contextlib.suppress(OSError):
                os.chmod(path, 0o700)
        shutil.rmtree(folder)


def use_storage(path: Path) -> dict[str, Any]:
    """Open `path` and append a message in an unprivileged child; return what it reported."""
    with reachable_by_nobody():
        done = subprocess.run(
            [*DROP, sys.executable, str(USE_STORAGE), str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


async def good_database(path: Path) -> str:
    """Write a real database at `path`, owned by the child's user; return its digest."""
    s = SQLiteSessionStorage(path)
    await s.append("s", "r", UserMessage(content="kept"))
    await s.close()
    if AS_ROOT:
        os.chown(path, NOBODY, NOBODY)
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    return hashlib.sha256(path.read_bytes()).hexdigest()  # noqa: ASYNC240 - a small file


def assert_chinese(text: str, *names: object) -> None:
    """No English word in a Chinese sentence, once the paths and names it quotes are out."""
    assert not english_words(text, *names), text


def assert_untouched(path: Path, digest: str) -> None:
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, "a refused file changed"
    beside = sorted(p.name for p in path.parent.iterdir())
    assert beside == [path.name], f"files were created beside a refused file: {beside}"


async def test_read_only_file_is_refused_as_read_only_not_damaged(workspace: Path) -> None:
    path = workspace / "continuo.sqlite3"
    digest = await good_database(path)
    os.chmod(path, 0o444)
    result = use_storage(path)
    assert result["error"] == StorageReadOnlyError.__name__, result
    assert result["message"] == str(StorageReadOnlyError(str(path), "the file is read-only"))
    assert_chinese(result["zh"], path)  # before: "...无法写入：the file is read-only。"
    assert "damaged" not in result["message"] and "move it aside" not in result["message"]
    assert_untouched(path, digest)


async def test_read_only_folder_is_refused_naming_the_folder(workspace: Path) -> None:
    folder = workspace / "data"
    folder.mkdir()
    path = folder / "continuo.sqlite3"
    digest = await good_database(path)
    if AS_ROOT:
        os.chown(folder, NOBODY, NOBODY)
    os.chmod(folder, 0o555)
    result = use_storage(path)
    assert result["error"] == StorageReadOnlyError.__name__, result
    assert f"its folder {folder} is read-only" in result["message"]
    assert_chinese(result["zh"], path, folder)
    assert CorruptDatabaseError.__name__ not in result["message"]
    assert_untouched(path, digest)


async def test_file_this_user_may_not_read_is_a_permission_error(workspace: Path) -> None:
    path = workspace / "continuo.sqlite3"
    digest = await good_database(path)
    os.chmod(path, 0o000)
    result = use_storage(path)
    assert result["error"] == StoragePermissionError.__name__, result
    assert result["message"].startswith(f"The conversation file {path} cannot be opened: ")
    assert "this user may not read it" in result["message"]
    assert_chinese(result["zh"], path)
    os.chmod(path, 0o600)
    assert_untouched(path, digest)


async def test_folder_that_cannot_be_created_is_read_only(workspace: Path) -> None:
    parent = workspace / "locked"
    parent.mkdir()
    if AS_ROOT:
        os.chown(parent, NOBODY, NOBODY)
    os.chmod(parent, 0o555)
    path = parent / "data" / "continuo.sqlite3"
    result = use_storage(path)
    assert result["error"] == StorageReadOnlyError.__name__, result
    assert f"its folder {path.parent} could not be created" in result["message"]
    assert_chinese(result["zh"], path, path.parent)  # "permission denied" said in Chinese
    assert not path.parent.exists()


# ---------------------------------------------------------------------------- a full disk


@contextlib.contextmanager
def small_tmpfs(where: Path) -> Iterator[bool]:
    """Mount a 1 MB tmpfs at `where`; yield False (mounting nothing) when not permitted."""
    where.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
            capture_output=True,
            check=False,
        )
    except OSError:
        yield False
        return
    if done.returncode != 0:
        yield False
        return
    try:
        yield True
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def fill(folder: Path) -> Path:
    """Fill the file system of `folder` with one file; return it."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"\0" * 4096) == 4096:
            pass
    except OSError as exc:
        assert exc.errno == errno.ENOSPC, exc
    finally:
        os.close(fd)
    return filler


@pytest.fixture
async def full_disk(tmp_path: Path) -> AsyncIterator[tuple[SQLiteSessionStorage, Any]]:
    """A storage on a disk that is full; yields it and a function that frees space."""
    with small_tmpfs(tmp_path / "disk") as mounted:
        path = tmp_path / "disk" / "continuo.sqlite3"
        storage = SQLiteSessionStorage(path)
        try:
            await storage.append("s", "r", UserMessage(content="before the disk filled"))
            yield storage, await disk_filled(storage, mounted)
        finally:
            await storage.close()


async def disk_filled(storage: SQLiteSessionStorage, mounted: bool) -> Any:
    """Fill the disk under `storage`; return a coroutine function that frees space again."""
    if mounted:
        filler = fill(storage.path.parent)

        async def free() -> None:
            filler.unlink()

        return free
    db = await storage._core.writer()
    pages = (await db.execute_fetchall("PRAGMA page_count"))[0][0]
    await db.execute(f"PRAGMA max_page_count = {pages}")

    async def raise_limit() -> None:
        await db.execute("PRAGMA max_page_count = 1073741823")

    return raise_limit


async def test_full_disk_says_so_and_the_next_write_works_once_space_is_freed(
    full_disk: tuple[SQLiteSessionStorage, Any],
) -> None:
    storage, free = full_disk
    big = "words " * 50_000  # 300 KB: more than the disk has left
    with pytest.raises(StorageFullError) as caught:
        for _ in range(8):
            await storage.append("s", "r", UserMessage(content=big))
    text = str(caught.value)
    assert text == (
        f"The disk holding the conversation file {storage.path} is full, so the last change "
        "was not saved. Free some space on that disk, then resume."
    )
    for host_word in ("button", "Settings", "window"):
        assert host_word not in text
    assert [m.content for m in await storage.load("s")][0] == "before the disk filled"
    await free()
    await storage.append("s", "r", UserMessage(content="after freeing space"))
    assert (await storage.load("s"))[-1].content == "after freeing space"


# ---------------------------------------------------------------------------- the mapping


async def test_raw_sqlite_errors_map_to_distinct_errors(tmp_path: Path) -> None:
    from engine.errors import StorageIOError
    from engine.storage.files import storage_error

    path = tmp_path / "x.sqlite3"
    seen = {}
    for code, name in ((13, "SQLITE_FULL"), (8, "SQLITE_READONLY"), (10, "SQLITE_IOERR")):
        exc = sqlite3.OperationalError(name)
        exc.sqlite_errorcode = code  # type: ignore[attr-defined]
        exc.sqlite_errorname = name  # type: ignore[attr-defined]
        seen[name] = type(storage_error(exc, path))
    assert seen == {
        "SQLITE_FULL": StorageFullError,
        "SQLITE_READONLY": StorageReadOnlyError,
        "SQLITE_IOERR": StorageIOError,
    }
    # A statement SQLite could not run (here a full-text query it cannot read) is about the
    # query: its own error, with no advice about the disk or the file.
    from engine.errors import QueryError, StorageError

    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    with pytest.raises(sqlite3.OperationalError) as raised:
        db.execute("SELECT * FROM t WHERE t MATCH ?", ('"unbalanced',)).fetchall()
    db.close()
    error = storage_error(raised.value, path)
    assert isinstance(error, QueryError) and not isinstance(error, StorageError)
    assert "disk" in error.sentence("en") and "not in the disk or the file" in error.sentence("en")
    assert "space" not in error.sentence("en") and "writable" not in error.sentence("en")


async def test_a_message_larger_than_the_page_cache_on_a_full_disk_says_full(
    full_disk: tuple[SQLiteSessionStorage, Any],
) -> None:
    # A write that spills past the page cache meets the full disk mid-statement; SQLite has
    # then rolled the transaction back itself. Before: our own ROLLBACK failed with "cannot
    # rollback - no transaction is active", and that generic error hid the full disk.
    storage, free = full_disk
    with pytest.raises(StorageFullError) as caught:
        await storage.append("s", "r", UserMessage(content="x" * 5_000_000))
    assert caught.value.action is ErrorAction.FREE_SPACE  # the window says to free space
    assert [m.content for m in await storage.load("s")] == ["before the disk filled"]
    await free()
    await storage.append("s", "r", UserMessage(content="after freeing space"))
    assert (await storage.load("s"))[-1].content == "after freeing space"


def test_only_a_full_disk_says_to_free_space(tmp_path: Path) -> None:
    # Before: every StorageError without its own action (a closed store, a value that
    # cannot be stored, an append that failed) told a person to free disk space.
    from engine.errors import (
        LeaseLostError,
        NewerSchemaError,
        SessionExistsError,
        StorageError,
        StorageIOError,
        StoragePermissionError,
        UnknownMessageTypeError,
    )
    from engine.storage.files import storage_error

    path = str(tmp_path / "x.sqlite3")
    actions = {
        type(error).__name__ + ":" + (error.key or ""): error.action
        for error in (
            StorageError(key="storage.closed", params={"path": path}),
            StorageError(key="storage.append_failed", params={"detail": "d"}),
            StorageFullError(path),
            StorageReadOnlyError(path, "r"),
            StoragePermissionError(path, "r"),
            StorageIOError(path, "d"),
            CorruptDatabaseError(path),
            NewerSchemaError(path, 9, 2),
            UnknownMessageTypeError("x", path),
            SessionExistsError("s"),
            LeaseLostError("s"),
        )
    }
    assert actions == {
        "StorageError:storage.closed": ErrorAction.NONE,
        "StorageError:storage.append_failed": ErrorAction.NONE,
        "StorageFullError:storage.full": ErrorAction.FREE_SPACE,
        "StorageReadOnlyError:storage.read_only": ErrorAction.CHECK_FOLDER,
        "StoragePermissionError:storage.permission": ErrorAction.CHECK_FOLDER,
        "StorageIOError:storage.io": ErrorAction.CHECK_FOLDER,
        "CorruptDatabaseError:storage.corrupt": ErrorAction.RESTORE_BACKUP,
        "NewerSchemaError:storage.newer": ErrorAction.UPDATE_APP,
        "UnknownMessageTypeError:storage.unknown_type": ErrorAction.UPDATE_APP,
        "SessionExistsError:storage.exists": ErrorAction.NONE,
        "LeaseLostError:storage.lease_lost": ErrorAction.NONE,
    }
    mapped = {}
    for code, name in (
        (13, "SQLITE_FULL"),
        (5, "SQLITE_BUSY"),
        (1, "SQLITE_ERROR"),
        (18, "SQLITE_TOOBIG"),
    ):
        exc = sqlite3.OperationalError(name)
        exc.sqlite_errorcode = code  # type: ignore[attr-defined]
        mapped[name] = storage_error(exc, tmp_path / "x.sqlite3").action
    assert mapped == {
        "SQLITE_FULL": ErrorAction.FREE_SPACE,
        "SQLITE_BUSY": ErrorAction.CLOSE_OTHER,
        # a statement SQLite could not run (a query error): no advice about the disk
        "SQLITE_ERROR": ErrorAction.NONE,
        "SQLITE_TOOBIG": ErrorAction.CHECK_FOLDER,  # "check that the disk has space and ..."
    }
