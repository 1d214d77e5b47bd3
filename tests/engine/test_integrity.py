"""The full integrity check: never on the way to the list; after an unclean exit, on request.

Real files and real processes: the damage is bytes written over pages of a real file, far
from the pages listing conversations reads; an unclean exit is a child appending to the file
killed with SIGKILL; a clean one is a child that closes its store.
"""

from __future__ import annotations

import asyncio
import random
import socket
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engine import CorruptDatabaseError, SQLiteSessionStorage, UserMessage
from engine.storage.backup import backup_database, inspect_backup
from engine.storage.lease import ProcessIdentity
from tests.engine.test_storage_crash import kill_while_appending

pytestmark = pytest.mark.timeout(60)

HELPERS = Path(__file__).parent / "storage_helpers"
PAGE = 4096


async def written_file(path: Path, messages: int = 400) -> None:
    """A file holding two conversations, the second one long (its pages come last), closed
    cleanly: its WAL folded into the file."""
    storage = SQLiteSessionStorage(path, synchronous="OFF")
    try:
        await storage.append("short", "r", UserMessage(content="a short conversation"))
        for i in range(messages):
            await storage.append("long", "r", UserMessage(content=f"message {i} " + "text " * 300))
    finally:
        await storage.close()
    assert not _wal_left(path)


def _wal_left(path: Path) -> bool:
    return Path(f"{path}-wal").exists()


def damage_far_pages(path: Path, pages: int = 3) -> None:
    """Write noise over the headers of the file's last pages: the long conversation's
    messages and their index, which listing the conversations never reads."""
    data = bytearray(path.read_bytes())
    assert len(data) > 40 * PAGE
    for start in range(len(data) - pages * PAGE, len(data), PAGE):
        data[start : start + 64] = random.Random(start).randbytes(64)
    path.write_bytes(bytes(data))


def fold_wal(path: Path) -> None:
    """Fold what a killed process left in the WAL into the file (as the next open does)."""
    raw = sqlite3.connect(path)
    try:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        raw.close()


def writers(path: Path) -> list[tuple[str, int]]:
    raw = sqlite3.connect(path)
    try:
        return [(str(r[0]), int(r[1])) for r in raw.execute("SELECT host, pid FROM writers")]
    finally:
        raw.close()


async def test_open_and_list_read_no_page_beyond_what_they_need(tmp_path: Path) -> None:
    """A page damaged far from the list is not read by opening: the list comes, and the
    full check finds the damage (before: opening ran ``quick_check`` and refused the file)."""
    path = tmp_path / "far.sqlite3"
    await written_file(path)
    damage_far_pages(path)
    storage = SQLiteSessionStorage(path)
    try:
        assert {s.id for s in await storage.list_sessions()} == {"short", "long"}
        assert [m.content for m in await storage.load("short")] == ["a short conversation"]
        assert not await storage.integrity_check_due()  # closed cleanly: nothing to check
        with pytest.raises(CorruptDatabaseError) as caught:
            await storage.check_integrity()
        assert caught.value.path == str(path) and "damaged" in str(caught.value)
    finally:
        await storage.close()


async def test_a_clean_file_passes_and_a_clean_close_leaves_no_writer(tmp_path: Path) -> None:
    path = tmp_path / "clean.sqlite3"
    await written_file(path, messages=20)
    assert writers(path) == []  # each storage deleted its row when it closed
    # A child that writes and closes its store, as the app does when it quits.
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, str(HELPERS / "use_storage.py"), str(path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert '"error": null' in done.stdout, done.stderr
    assert writers(path) == []
    storage = SQLiteSessionStorage(path)
    try:
        assert not await storage.integrity_check_due()
        await storage.append("s", "r", UserMessage(content="this process writes now"))
        assert writers(path) == [(socket.gethostname(), ProcessIdentity.current().pid)]
        assert not await storage.integrity_check_due()  # a live writer is no unclean exit
        assert await storage.check_integrity() is True
    finally:
        await storage.close()
    assert writers(path) == []


async def test_after_an_unclean_exit_the_check_is_due_until_one_passes(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite3"
    await written_file(path, messages=20)
    await kill_while_appending(path, "appending", after=3)
    storage = SQLiteSessionStorage(path)
    try:
        assert await storage.integrity_check_due()
        assert len(await storage.list_sessions()) == 3  # the list does not wait for a check
        assert await storage.check_integrity() is True
        assert not await storage.integrity_check_due()
    finally:
        await storage.close()
    again = SQLiteSessionStorage(path)
    try:
        assert not await again.integrity_check_due()  # the next start has nothing to check
    finally:
        await again.close()


async def test_damage_after_an_unclean_exit_is_found_and_said_again(tmp_path: Path) -> None:
    path = tmp_path / "damaged.sqlite3"
    await written_file(path)
    await kill_while_appending(path, "appending", after=3)
    fold_wal(path)
    damage_far_pages(path)
    for _start in range(2):  # found, and found again at the next start until restored
        storage = SQLiteSessionStorage(path)
        try:
            assert len(await storage.list_sessions()) == 3
            assert await storage.integrity_check_due()
            with pytest.raises(CorruptDatabaseError):
                await storage.check_integrity()
        finally:
            await storage.close()


async def test_a_writer_of_another_boot_is_an_unclean_exit_another_machine_is_not(
    tmp_path: Path,
) -> None:
    """A row naming this machine at another boot is a power cut or a crash of the system;
    a row of another machine sharing the file cannot be judged from here."""
    path = tmp_path / "boots.sqlite3"
    await written_file(path, messages=5)
    here = ProcessIdentity.current()
    raw = sqlite3.connect(path)
    raw.execute(
        "INSERT INTO writers VALUES ('elsewhere', 'another-machine', 'b', 1, NULL, 0)"
    )
    raw.commit()
    raw.close()
    storage = SQLiteSessionStorage(path)
    try:
        assert not await storage.integrity_check_due()
    finally:
        await storage.close()
    raw = sqlite3.connect(path)
    raw.execute(
        "INSERT INTO writers VALUES ('before-reboot', ?, 'an-earlier-boot', ?, NULL, 0)",
        (here.host, here.pid),  # this very pid, but at another boot
    )
    raw.commit()
    raw.close()
    storage = SQLiteSessionStorage(path)
    try:
        assert await storage.integrity_check_due()
        assert await storage.check_integrity() is True
        assert not await storage.integrity_check_due()
    finally:
        await storage.close()
    assert [host for host, _ in writers(path)] == ["another-machine"]


async def test_close_stops_a_running_check(tmp_path: Path) -> None:
    path = tmp_path / "stop.sqlite3"
    await written_file(path, messages=100)
    started, release = threading.Event(), threading.Event()

    def pause() -> None:
        started.set()
        release.wait(30)

    storage = SQLiteSessionStorage(path)
    await storage.list_sessions()
    check = asyncio.ensure_future(storage.check_integrity(pause=pause))
    assert await asyncio.to_thread(started.wait, 30)
    closing = asyncio.ensure_future(storage.close())
    # Let the check go on only after close() has begun (callbacks run in the order given).
    asyncio.get_running_loop().call_soon(release.set)
    assert await check is False  # stopped: nothing is known, nothing was forgotten
    await closing


async def test_cancelling_a_check_stops_it(tmp_path: Path) -> None:
    path = tmp_path / "cancel.sqlite3"
    await written_file(path, messages=100)
    started, release = threading.Event(), threading.Event()
    calls = 0

    def pause() -> None:
        nonlocal calls
        calls += 1
        started.set()
        release.wait(30)

    storage = SQLiteSessionStorage(path)
    try:
        check = asyncio.ensure_future(storage.check_integrity(pause=pause))
        assert await asyncio.to_thread(started.wait, 30)
        check.cancel()
        # Let the check go on only after the cancel has reached it.
        asyncio.get_running_loop().call_soon(release.set)
        with pytest.raises(asyncio.CancelledError):
            await check
        assert calls == 1  # it stopped where it was held, reading nothing more
        assert await storage.check_integrity() is True  # the file is fine; a new check runs
    finally:
        await storage.close()


async def test_a_backup_holds_no_writer_and_a_damaged_backup_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "live.sqlite3"
    await written_file(path)
    storage = SQLiteSessionStorage(path)
    try:
        await storage.append("s", "r", UserMessage(content="written while backing up"))
        copy = await backup_database(storage, tmp_path / "copy.sqlite3")
    finally:
        await storage.close()
    assert writers(copy) == []  # the copy's writer would be taken for a crash
    assert inspect_backup(copy).conversations == 3
    damage_far_pages(copy)
    with pytest.raises(CorruptDatabaseError):
        inspect_backup(copy)  # a restore reads every page of a backup first
