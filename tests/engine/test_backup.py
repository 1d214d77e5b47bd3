"""Backups of a conversation file taken while it is written, and restoring one.

Everything runs on real SQLite files: a backup is taken while another task appends and while
an answer streams from the loopback provider (over HTTP), then opened with a new store and a
new agent, as the app opens a restored file; restoring moves the current file aside intact,
and refuses damaged, foreign and newer files without changing anything.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from engine import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    CorruptDatabaseError,
    NewerSchemaError,
    NotABackupError,
    ResumeKind,
    SQLiteSessionStorage,
    StopReason,
    UserMessage,
)
from engine.providers import OpenAIChatModel
from engine.storage import SQLiteSessionExtension
from engine.storage import backup as backup_module
from engine.storage.backup import backup_database, restore_database
from engine.storage.migrations import SCHEMA_VERSION
from tests.support.provider_server import Fault, ProviderServer, Turn
from tests.support.wait import until

pytestmark = pytest.mark.timeout(60)


ROOT = Path(__file__).resolve().parents[2]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _leftovers(folder: Path) -> list[str]:
    """Temporary files a backup or restore may have left behind (it must leave none)."""
    return sorted(
        p.name for p in folder.iterdir() if p.name.endswith(".partial") or ".partial-" in p.name
    )


def _beside(path: Path, suffix: str) -> Path:
    """The file SQLite keeps beside ``path`` (``-wal``, ``-shm``)."""
    return Path(f"{path}{suffix}")


def _names(path: Path) -> set[str]:
    """Which of ``path`` and the files SQLite keeps beside it exist."""
    names = {path.name + suffix for suffix in ("", "-wal", "-shm", "-journal")}
    return {p.name for p in path.parent.iterdir()} & names


def _copy_files(source: Path, folder: Path, suffixes: tuple[str, ...]) -> Path:
    """Copy a database and the files beside it into ``folder``, as a crash leaves them."""
    folder.mkdir()
    for suffix in suffixes:
        _beside(folder / source.name, suffix).write_bytes(_beside(source, suffix).read_bytes())
    return folder / source.name


def _raw(path: Path, sql: str) -> list[tuple]:
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


async def _seed(storage: SQLiteSessionStorage, sessions: dict[str, int], size: int = 200) -> None:
    for sid, count in sessions.items():
        for n in range(count):
            await storage.append(
                sid, "seed", UserMessage(content=f"{sid} message {n} " + "x" * size)
            )


# ---------------------------------------------------------------------------- backing up


async def test_backup_while_another_task_appends_is_a_consistent_prefix(tmp_path, monkeypatch):
    # A page a step: hundreds of steps, with the appender writing between them.
    monkeypatch.setattr(backup_module, "_STEP_PAGES", 1)
    storage = SQLiteSessionStorage(tmp_path / "data" / "continuo.sqlite3")
    destination = tmp_path / "backups" / "Continuo backup.db"
    destination.parent.mkdir()
    appended = 0
    try:
        await _seed(storage, {"other": 1000}, size=1000)

        async def keep_appending() -> None:
            nonlocal appended
            while True:
                await storage.append("s", "writer", UserMessage(content=f"line {appended + 1}"))
                appended += 1

        writer = asyncio.ensure_future(keep_appending())
        await until(lambda: appended >= 5, what="the writer has started")
        reports: list[tuple[int, int]] = []

        before = appended
        try:
            assert (
                await backup_database(storage, destination, progress=lambda *r: reports.append(r))
                == destination
            )
            after = appended
        finally:
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)
        stored_at_end = appended
    finally:
        await storage.close()

    # The writer kept writing while the pages were copied.
    assert len(reports) > 100 and after > before
    assert reports[-1][0] == reports[-1][1] and all(d <= t for d, t in reports)
    # One file, private, in rollback-journal mode, that SQLite finds sound.
    assert sorted(p.name for p in destination.parent.iterdir()) == [destination.name]
    assert stat.S_IMODE(destination.stat().st_mode) == 0o600
    assert _raw(destination, "PRAGMA journal_mode") == [("delete",)]
    assert _raw(destination, "PRAGMA integrity_check") == [("ok",)]
    assert _raw(destination, "SELECT COUNT(*) FROM leases") == [(0,)]
    # A prefix of what was written, without a gap: lines 1..k of one moment.
    copy = SQLiteSessionStorage(destination)
    try:
        lines = [m.content for m in await copy.load("s")]
        assert before <= len(lines) <= stored_at_end
        assert lines == [f"line {n}" for n in range(1, len(lines) + 1)]
        assert await copy.count_all_messages("other") == 1000
        assert {s.id for s in await copy.list_sessions()} == {"other", "s"}
    finally:
        await copy.close()


async def test_a_backup_taken_mid_answer_opens_and_resumes(tmp_path):
    """The answer streams over HTTP and stalls half-way, its draft on disk; the backup
    taken then opens with a new store and agent, says the answer was cut off, and Resume
    writes it whole."""
    data = tmp_path / "continuo.sqlite3"
    destination = tmp_path / "mid-answer.db"
    half = "The first half of a long answer, "
    with ProviderServer() as server:
        # Eight characters an event: four events hold `half`, then the stream stalls.
        server.script(Turn(text=half + "and the rest.", fault=Fault.STALL_MIDSTREAM, fault_after=6))
        storage = SQLiteSessionStorage(data)
        extension = SQLiteSessionExtension(storage)
        model = OpenAIChatModel(model="loopback", base_url=server.openai_url)
        try:
            agent = await Agent.create(
                model, config=AgentRunConfig("s", draft_interval=0.05), extensions=[extension]
            )

            async def ask() -> None:
                async for _event in agent.stream("Tell me a long story"):
                    pass

            answering = asyncio.ensure_future(ask())

            def draft_text() -> str:
                try:
                    rows = _raw(data, "SELECT json_extract(body, '$.content') FROM drafts")
                except sqlite3.Error:  # not created yet
                    return ""
                return rows[0][0] if rows else ""

            # The draft holds what arrived (the live request's: its lease is held).
            await until(lambda: draft_text().startswith(half), what="the draft on disk", seconds=20)
            assert await storage.load_draft("s") is None  # a live request's draft is its own
            await backup_database(storage, destination)
            assert not answering.done(), "the backup was taken while the answer streamed"
            answering.cancel()
            await asyncio.gather(answering, return_exceptions=True)
        finally:
            server.release_stalls()
            await model.aclose()
            await extension.close()
            await storage.close()

        # The backup, opened as the app opens a restored file.
        server.script(Turn(text="The whole answer, written again."))
        copy = SQLiteSessionExtension(destination)
        model = OpenAIChatModel(model="loopback", base_url=server.openai_url)
        try:
            draft = await copy.storage.load_draft("s")
            assert draft is not None and draft.message.content.startswith(half)
            agent = await Agent.create(model, config=AgentRunConfig("s"), extensions=[copy])
            point = await agent.resume_point()
            assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE
            assert point.stop is not None and point.stop.raw == "app_stopped"
            final = await agent.resume()
            assert final.content == "The whole answer, written again."
            assert await agent.resume_point() is None
            history = await copy.storage.load("s")
            assert isinstance(history[0], UserMessage)
            assert history[0].content == "Tell me a long story"
            kept = [m for m in history if isinstance(m, AssistantMessage)]
            assert kept[0].content.startswith(half)
            assert kept[0].stop.reason is StopReason.INTERRUPTED
            assert kept[-1].content == "The whole answer, written again."
            # What the model was sent: the question and the cut-off answer.
            sent = server.chat_requests()[-1].messages()
            assert sent[0]["content"] == "Tell me a long story"
            assert any(half.strip() in str(m.get("content")) for m in sent)
        finally:
            await model.aclose()
            await copy.close()


async def test_a_cancelled_backup_leaves_no_file(tmp_path, monkeypatch):
    monkeypatch.setattr(backup_module, "_STEP_PAGES", 1)  # thousands of steps: time to cancel
    storage = SQLiteSessionStorage(tmp_path / "data" / "continuo.sqlite3")
    destination = tmp_path / "out" / "backup.db"
    destination.parent.mkdir()
    try:
        await _seed(storage, {"a": 2000}, size=2000)
        task: asyncio.Future[Path] | None = None
        reports: list[tuple[int, int]] = []

        def progress(done: int, total: int) -> None:
            reports.append((done, total))
            if task is not None:
                task.cancel()

        task = asyncio.ensure_future(backup_database(storage, destination, progress=progress))
        with pytest.raises(asyncio.CancelledError):
            await task
        assert reports and reports[-1][0] < reports[-1][1], "cancelled before the end"
        assert list(destination.parent.iterdir()) == []
        # The store works on, and a backup after it completes.
        await storage.append("a", "later", UserMessage(content="after the cancel"))
        await backup_database(storage, destination)
    finally:
        await storage.close()
    assert sorted(p.name for p in destination.parent.iterdir()) == ["backup.db"]


async def test_a_backup_replaces_an_older_file_and_refuses_the_data_file(tmp_path):
    storage = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    destination = tmp_path / "backup.db"
    destination.write_bytes(b"an older backup")
    os.chmod(destination, 0o644)
    try:
        await _seed(storage, {"a": 3})
        await backup_database(storage, destination)
        with pytest.raises(ValueError):
            await backup_database(storage, tmp_path / "continuo.sqlite3")
    finally:
        await storage.close()
    assert stat.S_IMODE(destination.stat().st_mode) == 0o600
    assert _raw(destination, "SELECT COUNT(*) FROM messages") == [(3,)]
    assert _leftovers(tmp_path) == []


async def test_a_cancel_after_the_final_rename_leaves_the_backup_standing(tmp_path, monkeypatch):
    """The rename is the line: cancelled after it (while the folder is synced), the backup
    is complete and in place, and says so rather than "no file was written"."""
    storage = SQLiteSessionStorage(tmp_path / "data" / "continuo.sqlite3")
    destination = tmp_path / "out" / "backup.db"
    destination.parent.mkdir()
    loop = asyncio.get_running_loop()
    sync_folder = backup_module._sync_folder

    def sync_then_cancel(folder: Path) -> None:  # in the copy's worker thread
        sync_folder(folder)
        loop.call_soon_threadsafe(task.cancel)  # reaches the task before the copy's end does

    try:
        await _seed(storage, {"a": 3})
        monkeypatch.setattr(backup_module, "_sync_folder", sync_then_cancel)
        task = asyncio.ensure_future(backup_database(storage, destination))
        assert await task == destination
        assert not task.cancelled() and task.cancelling() == 0
    finally:
        await storage.close()
    assert _raw(destination, "SELECT COUNT(*) FROM messages") == [(3,)]
    assert sorted(p.name for p in destination.parent.iterdir()) == ["backup.db"]


async def test_a_backup_never_replaces_a_file_sqlite_keeps_beside_the_data(tmp_path):
    """SQLite deletes or replays its -wal, -shm and -journal: a backup there would vanish,
    or be taken for the data's own journal."""
    data = tmp_path / "continuo.sqlite3"
    storage = SQLiteSessionStorage(data)
    try:
        await _seed(storage, {"a": 2})
        for suffix in ("-wal", "-shm", "-journal"):
            with pytest.raises(ValueError, match="cannot replace the conversation file"):
                await backup_database(storage, _beside(data, suffix))
        await storage.append("a", "later", UserMessage(content="after the refusals"))
    finally:
        await storage.close()
    assert _names(data) == {"continuo.sqlite3"} and _leftovers(tmp_path) == []
    assert await _sessions(data) == {"a": 3}


async def test_a_restore_never_reads_a_file_sqlite_keeps_beside_the_data(tmp_path):
    backups = tmp_path / "backups"
    backups.mkdir()
    backup = await _backup_of(backups, {"old": 2})
    data = tmp_path / "data" / "continuo.sqlite3"
    storage = SQLiteSessionStorage(data)
    try:
        await _seed(storage, {"current": 1})
    finally:
        await storage.close()
    digest = _digest(data)
    for suffix in ("-wal", "-shm", "-journal"):
        beside = _beside(data, suffix)
        beside.write_bytes(backup.read_bytes())  # a real backup, under a name SQLite uses
        with pytest.raises(ValueError, match="is the conversation file itself"):
            await asyncio.to_thread(restore_database, data, beside)
        assert sorted(p.name for p in data.parent.iterdir()) == sorted([data.name, beside.name])
        assert _digest(data) == digest and _digest(beside) == _digest(backup)
        beside.unlink()
    assert await _sessions(data) == {"current": 1}


async def test_a_backup_where_no_file_can_be_written_is_a_storage_error(tmp_path):
    """The destination's folder is a file (the refusal the disk gives, as root too: the
    suite runs as root, where permission bits refuse nothing)."""
    from engine import StorageError

    storage = SQLiteSessionStorage(tmp_path / "data" / "continuo.sqlite3")
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("a file, not a folder")
    try:
        await _seed(storage, {"a": 1})
        with pytest.raises(StorageError) as caught:
            await backup_database(storage, not_a_folder / "backup.db")
        assert str(not_a_folder) in caught.value.sentence("en")
    finally:
        await storage.close()
    assert not_a_folder.read_text() == "a file, not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "notes.txt"]


# ---------------------------------------------------------------------------- restoring


async def _backup_of(folder: Path, sessions: dict[str, int]) -> Path:
    storage = SQLiteSessionStorage(folder / "source.sqlite3")
    try:
        await _seed(storage, sessions)
        return await backup_database(storage, folder / "backup.db")
    finally:
        await storage.close()


async def _sessions(path: Path) -> dict[str, int]:
    storage = SQLiteSessionStorage(path)
    try:
        return {s.id: await storage.count_all_messages(s.id) for s in await storage.list_sessions()}
    finally:
        await storage.close()


async def test_restore_moves_the_current_file_aside_and_brings_the_backup_in(tmp_path):
    backups = tmp_path / "backups"
    backups.mkdir()
    backup = await _backup_of(backups, {"old": 2, "kept": 1})
    data = tmp_path / "data" / "continuo.sqlite3"
    storage = SQLiteSessionStorage(data)
    try:
        await _seed(storage, {"current": 4})
    finally:
        await storage.close()
    # Closing checkpointed the WAL into the file: nothing is left beside it.
    assert sorted(p.name for p in data.parent.iterdir()) == ["continuo.sqlite3"]
    before = _digest(data)
    backup_digest = _digest(backup)

    aside = await asyncio.to_thread(restore_database, data, backup)

    assert aside is not None and aside.parent == data.parent
    assert aside.name.startswith("continuo.sqlite3.before-restore-")
    assert _digest(aside) == before, "the current file is kept as it was"
    assert _digest(backup) == backup_digest, "the backup is only read"
    assert stat.S_IMODE(data.stat().st_mode) == 0o600
    assert await _sessions(data) == {"old": 2, "kept": 1}
    assert await _sessions(aside) == {"current": 4}
    assert _leftovers(data.parent) == []
    # The restored file is the app's again: it takes a new message.
    storage = SQLiteSessionStorage(data)
    try:
        await storage.append("old", "after", UserMessage(content="after the restore"))
        assert (await storage.load("old"))[-1].content == "after the restore"
    finally:
        await storage.close()
    # A second restore the same second keeps both earlier files.
    second = await asyncio.to_thread(restore_database, data, backup)
    assert second is not None and second != aside and aside.exists()
    assert await _sessions(second) == {"old": 3, "kept": 1}


async def test_a_wal_left_beside_the_current_file_moves_aside_with_it(tmp_path):
    """A process that died with the file open leaves its last writes in the -wal: they go
    aside with the file (where SQLite finds them), never into the restored one."""
    backup = await _backup_of(tmp_path, {"from-backup": 1})
    data = tmp_path / "data" / "continuo.sqlite3"
    data.parent.mkdir()
    storage = SQLiteSessionStorage(data)
    live = sqlite3.connect(data, isolation_level=None)
    try:
        await _seed(storage, {"in-the-file": 1})
        # Another connection reading holds the WAL open: closing does not checkpoint it.
        live.execute("BEGIN")
        live.execute("SELECT COUNT(*) FROM sessions").fetchall()
        await storage.append("only-in-the-wal", "r", UserMessage(content="late"))
        await storage.close()
        assert _names(data) == {data.name, f"{data.name}-wal", f"{data.name}-shm"}
        # As a crash leaves it: the file and its WAL, copied with the connection open.
        target = _copy_files(data, tmp_path / "crashed", ("", "-wal"))
    finally:
        live.close()
        await storage.close()
    aside = await asyncio.to_thread(restore_database, target, backup)
    assert aside is not None
    assert _names(target) == {target.name}
    assert _names(aside) == {aside.name, f"{aside.name}-wal"}
    assert await _sessions(target) == {"from-backup": 1}
    assert set(await _sessions(aside)) == {"in-the-file", "only-in-the-wal"}


async def test_restore_into_an_empty_folder_moves_nothing(tmp_path):
    backup = await _backup_of(tmp_path, {"a": 1})
    data = tmp_path / "new" / "continuo.sqlite3"
    data.parent.mkdir()
    assert await asyncio.to_thread(restore_database, data, backup) is None
    assert await _sessions(data) == {"a": 1}


def _foreign(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    db.commit()
    db.close()


def _other_program(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA application_id = 1234")
    db.execute("PRAGMA user_version = 1")
    db.execute("CREATE TABLE schema_migrations (name TEXT)")
    db.commit()
    db.close()


def _empty_sqlite(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size = 4096")
    db.execute("VACUUM")
    db.close()


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("garbage", NotABackupError),
        ("truncated", CorruptDatabaseError),
        ("foreign", NotABackupError),
        ("other_program", NotABackupError),
        ("empty_sqlite", NotABackupError),
        ("missing", NotABackupError),
        ("newer", NewerSchemaError),
    ],
)
async def test_a_bad_backup_is_refused_and_nothing_changes(tmp_path, kind, error):
    data = tmp_path / "data" / "continuo.sqlite3"
    storage = SQLiteSessionStorage(data)
    try:
        await _seed(storage, {"current": 2})
    finally:
        await storage.close()
    bad = tmp_path / "bad.db"
    if kind == "garbage":
        bad.write_bytes(b"not a database at all" * 100)
    elif kind == "truncated":
        good = await _backup_of(tmp_path, {"a": 50})
        bad.write_bytes(good.read_bytes()[: 4096 + 100])
    elif kind == "foreign":
        _foreign(bad)
    elif kind == "other_program":
        _other_program(bad)
    elif kind == "empty_sqlite":
        _empty_sqlite(bad)
    elif kind == "newer":
        good = await _backup_of(tmp_path, {"a": 1})
        db = sqlite3.connect(good)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        db.commit()
        db.close()
        good.rename(bad)
    before = sorted(p.name for p in data.parent.iterdir())
    digest = _digest(data)
    bad_digest = _digest(bad) if bad.exists() else None

    with pytest.raises(error) as caught:
        await asyncio.to_thread(restore_database, data, bad)

    assert str(bad) in caught.value.sentence("en")
    assert caught.value.sentence("zh_CN") != caught.value.sentence("en")
    # A file that is no Continuo database is said to be no backup, not a damaged file; a
    # damaged backup is still told as damage.
    if error is NotABackupError:
        assert "is not a Continuo backup" in caught.value.sentence("en")
        assert "damaged" not in caught.value.sentence("en")
    elif kind == "truncated":
        assert not isinstance(caught.value, NotABackupError)
    assert sorted(p.name for p in data.parent.iterdir()) == before
    assert _digest(data) == digest
    assert (_digest(bad) if bad.exists() else None) == bad_digest
    assert await _sessions(data) == {"current": 2}


async def test_restoring_the_data_file_onto_itself_is_refused(tmp_path):
    data = tmp_path / "continuo.sqlite3"
    storage = SQLiteSessionStorage(data)
    try:
        await _seed(storage, {"a": 1})
    finally:
        await storage.close()
    with pytest.raises(ValueError):
        await asyncio.to_thread(restore_database, data, data)
    assert await _sessions(data) == {"a": 1}


async def test_a_kill_just_before_the_restore_renames_the_backup_in_keeps_the_current_file(
    tmp_path,
):
    """A real child restores and is SIGKILLed just before the final rename: the current file
    is still where the app opens it, whole (the copy kept aside is an extra name for it), so
    the next start shows every conversation; a later restore works."""
    import signal
    import subprocess
    import sys

    from tests.support.wait import read_line

    backups = tmp_path / "backups"
    backups.mkdir()
    backup = await _backup_of(backups, {"from-backup": 2})
    data = tmp_path / "data" / "continuo.sqlite3"
    storage = SQLiteSessionStorage(data)
    try:
        await _seed(storage, {"current": 3})
    finally:
        await storage.close()
    before = _digest(data)
    child = subprocess.Popen(  # noqa: ASYNC220 (reads go through a thread)
        [sys.executable, "-m", "tests.engine.restore_kill_child", str(data), str(backup)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = await read_line(child.stdout, "the final rename", seconds=60)
        assert line.strip() == "renaming", f"child said {line!r}: {child.stderr.read()}"  # type: ignore[union-attr]
        os.kill(child.pid, signal.SIGKILL)
        assert await asyncio.to_thread(child.wait, 30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()  # type: ignore[union-attr]
        child.stderr.close()  # type: ignore[union-attr]
    assert data.exists() and _digest(data) == before
    assert await _sessions(data) == {"current": 3}
    aside = await asyncio.to_thread(restore_database, data, backup)
    assert await _sessions(data) == {"from-backup": 2}
    assert aside is not None and await _sessions(aside) == {"current": 3}
