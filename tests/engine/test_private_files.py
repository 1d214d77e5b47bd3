"""Conversations are private: folder 0700, database and its -wal/-shm 0600, whatever the umask.

Run under umask 022 (the usual default), where files are created 0644 and folders 0755 unless
the code says otherwise: every other local user could then read every conversation.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.messages import UserMessage
from engine.storage import SQLiteSessionStorage


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask_022")
async def test_new_folder_and_database_files_are_private(tmp_path: Path) -> None:
    path = tmp_path / "data" / "nested" / "continuo.sqlite3"
    storage = SQLiteSessionStorage(path)
    try:
        await storage.append("s", "r", UserMessage(content="private"))
        # While the connection is open, SQLite keeps the -wal and -shm files beside it.
        wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
        assert wal.exists() and shm.exists()  # noqa: ASYNC240 - a stat
        assert {p.name: mode(p) for p in (path, wal, shm)} == {
            path.name: 0o600,
            wal.name: 0o600,
            shm.name: 0o600,
        }
        assert mode(path.parent) == 0o700
        assert mode(path.parent.parent) == 0o700  # created by us, so private as well
    finally:
        await storage.close()


@pytest.mark.usefixtures("umask_022")
async def test_existing_readable_database_is_narrowed_to_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "continuo.sqlite3"
    storage = SQLiteSessionStorage(path)
    await storage.append("s", "r", UserMessage(content="written by an older version"))
    await storage.close()
    os.chmod(path, 0o644)  # as an earlier Continuo left it
    storage = SQLiteSessionStorage(path)
    try:
        assert len(await storage.load("s")) == 1
        assert mode(path) == 0o600
        assert mode(Path(f"{path}-wal")) == 0o600
    finally:
        await storage.close()


@pytest.mark.usefixtures("umask_022")
async def test_an_existing_folder_is_left_as_chosen(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    storage = SQLiteSessionStorage(folder / "continuo.sqlite3")
    try:
        await storage.list_sessions()
        assert mode(folder) == 0o755  # the person's own folder is theirs to set
        assert mode(folder / "continuo.sqlite3") == 0o600
    finally:
        await storage.close()
