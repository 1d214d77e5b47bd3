"""The per-session lease, with real processes: busy while held, taken over once the holder is gone."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from engine.errors import AgentBusyError
from engine.extensions import RunContext
from engine.messages import UserMessage
from engine.storage import LeaseHolder, SQLiteSessionExtension, SQLiteSessionStorage
from engine.storage.lease import ProcessIdentity, process_alive
from tests.support.language import english_words
from tests.support.wait import read_line, until

HOLD_LEASE = Path(__file__).parent / "storage_helpers" / "hold_lease.py"
TRY_LEASE = Path(__file__).parent / "storage_helpers" / "try_lease.py"
IS_LINUX = sys.platform.startswith("linux")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "continuo.sqlite3"


@pytest.fixture
async def storage(db_path: Path) -> AsyncIterator[SQLiteSessionStorage]:
    # A long staleness: every takeover in these tests must come from liveness, not time,
    # unless a test builds its own storage with a short one.
    s = SQLiteSessionStorage(db_path, lease_stale_after=3600)
    yield s
    await s.close()


@pytest.fixture
def holder_process(db_path: Path) -> Iterator[Callable[[str], subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(session_id: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, str(HOLD_LEASE), str(db_path), session_id],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def write_row(
    path: Path,
    session_id: str,
    *,
    host: str,
    boot_id: str,
    pid: int,
    process_started: float | None,
    heartbeat_age: float = 0.0,
    acquired_age: float | None = None,
    token: str = "their-token",
) -> None:
    now = time.time()
    acquired_age = heartbeat_age if acquired_age is None else acquired_age
    with sqlite3.connect(path) as raw:
        raw.execute(
            "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                host,
                boot_id,
                pid,
                process_started,
                token,
                now - acquired_age,
                now - heartbeat_age,
            ),
        )
    raw.close()

def write_foreign_row(path: Path, **ages: float) -> None:
    """Write session "s"'s lease as held by process 4242 on another host ("elsewhere")."""
    write_row(path, "s", host="elsewhere", boot_id="b", pid=4242, process_started=1.0, **ages)



def age_row(path: Path, session_id: str, *, heartbeat_age: float, acquired_age: float) -> None:
    """Move an existing row's times into the past, as a stopped holder's would be."""
    now = time.time()
    with sqlite3.connect(path) as raw:
        raw.execute(
            "UPDATE leases SET heartbeat_at = ?, acquired_at = ? WHERE session_id = ?",
            (now - heartbeat_age, now - acquired_age, session_id),
        )
    raw.close()


def lease_row(path: Path, session_id: str) -> tuple | None:
    with sqlite3.connect(path) as raw:
        row = raw.execute(
            "SELECT pid, token, heartbeat_at FROM leases WHERE session_id = ?", (session_id,)
        ).fetchone()
    raw.close()
    return row


# ---------------------------------------------------------------------------- processes


async def test_other_process_holds_until_killed(
    storage: SQLiteSessionStorage, db_path: Path, holder_process
) -> None:
    await storage.append("s", "r", UserMessage(content="before"))
    child = holder_process("s")
    assert (await read_line(child.stdout, "held")).strip() == "held"

    with pytest.raises(AgentBusyError) as caught:
        await storage.acquire_lease("s")
    holder = caught.value.holder
    assert isinstance(holder, LeaseHolder)
    assert holder.pid == child.pid and holder.host == socket.gethostname()
    assert f"process {child.pid} on host" in str(caught.value)
    # In Chinese the holder is said in Chinese too (before: "process 123 on host ...").
    chinese = caught.value.sentence("zh_CN")
    assert f"主机 {holder.host!r} 上的进程 {child.pid}" in chinese
    assert not english_words(chinese, holder.host), chinese
    assert await storage.lease_holder("s") == holder

    # Reading and raw appends never need the lease.
    assert await storage.append("s", "r", UserMessage(content="while held")) == 2
    assert len(await storage.load("s")) == 2
    assert len(await storage.load_tail("s", 1)) == 1

    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    # Taken over at once: the holder's process is gone (staleness is an hour here).
    assert await storage.lease_holder("s") is None
    lease = await storage.acquire_lease("s")
    assert lease_row(db_path, "s")[:2] == (os.getpid(), lease.token)  # type: ignore[index]
    await lease.release()
    assert lease_row(db_path, "s") is None


async def test_another_process_is_refused_while_we_hold(
    storage: SQLiteSessionStorage, db_path: Path
) -> None:
    async def try_from_child() -> str:
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, str(TRY_LEASE), str(db_path), "s"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    lease = await storage.acquire_lease("s")
    assert await try_from_child() == f"busy {os.getpid()}"
    await lease.release()
    assert await try_from_child() == "acquired"


@pytest.mark.skipif(not IS_LINUX, reason="zombie state is read from /proc")
async def test_killed_but_unreaped_holder_is_gone(
    storage: SQLiteSessionStorage, holder_process
) -> None:
    child = holder_process("s")
    assert (await read_line(child.stdout, "held")).strip() == "held"
    child.send_signal(signal.SIGKILL)
    # Not reaped: its pid still answers kill(pid, 0), but as a zombie it can never release.
    await until(lambda: _proc_state(child.pid) == "Z", "the child to become a zombie")
    lease = await storage.acquire_lease("s")
    await lease.release()


def _proc_state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as handle:  # noqa: ASYNC230 - a tiny /proc read
        raw = handle.read()
    return raw[raw.rindex(")") + 2]


async def test_second_request_in_same_process_is_refused(storage: SQLiteSessionStorage) -> None:
    lease = await storage.acquire_lease("s")
    with pytest.raises(AgentBusyError) as caught:
        await storage.acquire_lease("s")
    assert caught.value.holder.pid == os.getpid()
    assert caught.value.session_id == "s"
    other = await storage.acquire_lease("another session")  # leases are per session
    await lease.release()
    await lease.release()  # twice is fine
    again = await storage.acquire_lease("s")
    await again.release()
    await other.release()


async def test_two_storages_in_one_process_exclude_each_other(db_path: Path) -> None:
    a = SQLiteSessionStorage(db_path)
    b = SQLiteSessionStorage(db_path)
    try:
        results = await asyncio.gather(
            a.acquire_lease("s"), b.acquire_lease("s"), return_exceptions=True
        )
        leases = [r for r in results if not isinstance(r, BaseException)]
        errors = [r for r in results if isinstance(r, BaseException)]
        assert len(leases) == 1 and len(errors) == 1
        assert isinstance(errors[0], AgentBusyError)
        await leases[0].release()
    finally:
        await a.close()
        await b.close()


# ---------------------------------------------------------------------------- rows left by others


async def test_other_host_with_fresh_heartbeat_is_busy(
    storage: SQLiteSessionStorage, db_path: Path
) -> None:
    await storage.list_sessions()  # create the file
    write_foreign_row(db_path)
    with pytest.raises(AgentBusyError) as caught:
        await storage.acquire_lease("s")
    assert str(caught.value.holder).startswith("process 4242 on host 'elsewhere', since ")
    holder = await storage.lease_holder("s")
    assert holder is not None and holder.host == "elsewhere"


async def test_other_host_with_stale_heartbeat_is_taken_over(db_path: Path) -> None:
    s = SQLiteSessionStorage(db_path, lease_stale_after=5)
    try:
        await s.list_sessions()
        write_foreign_row(db_path, heartbeat_age=60)
        assert await s.lease_holder("s") is None
        lease = await s.acquire_lease("s")
        assert lease_row(db_path, "s")[:2] == (os.getpid(), lease.token)  # type: ignore[index]
        await lease.release()
    finally:
        await s.close()


@pytest.mark.parametrize("host", ["elsewhere", "this host"])
async def test_fresh_heartbeat_of_a_live_holder_is_refused_at_any_age(
    db_path: Path, holder_process, host: str
) -> None:
    s = SQLiteSessionStorage(db_path, lease_stale_after=5)
    try:
        if host == "this host":
            child = holder_process("s")
            assert (await read_line(child.stdout, "held")).strip() == "held"
            os.kill(child.pid, signal.SIGSTOP)  # no heartbeat of its own may refresh the row
            try:
                age_row(db_path, "s", heartbeat_age=0, acquired_age=30 * 86400)
                with pytest.raises(AgentBusyError) as caught:
                    await s.acquire_lease("s")
            finally:
                os.kill(child.pid, signal.SIGCONT)
            assert caught.value.holder.pid == child.pid
        else:
            await s.list_sessions()
            write_foreign_row(db_path, heartbeat_age=0, acquired_age=30 * 86400)
            with pytest.raises(AgentBusyError):
                await s.acquire_lease("s")
            assert await s.lease_holder("s") is not None
    finally:
        await s.close()


async def test_staleness_counts_from_the_heartbeat_not_from_acquisition(db_path: Path) -> None:
    # Issue 9, item 7: a holder that acquired long ago but beats on is alive; one that
    # acquired a moment ago but whose heartbeat stopped long ago is stale. Only the heartbeat
    # time tells them apart (the two rows differ in nothing else).
    s = SQLiteSessionStorage(db_path, lease_stale_after=5)
    try:
        await s.list_sessions()
        write_foreign_row(db_path, heartbeat_age=1, acquired_age=3600)
        with pytest.raises(AgentBusyError):
            await s.acquire_lease("s")
        write_foreign_row(db_path, heartbeat_age=3600, acquired_age=1)
        assert await s.lease_holder("s") is None
        lease = await s.acquire_lease("s")
        await lease.release()
    finally:
        await s.close()


async def test_live_holder_on_this_host_is_never_taken_over_for_a_late_heartbeat(
    db_path: Path, holder_process
) -> None:
    # A stopped process (SIGSTOP, a suspended laptop) is alive and may write again: on its
    # own machine its lease is not stale, however old its heartbeat. Once dead, it is gone
    # at once.
    s = SQLiteSessionStorage(db_path, lease_stale_after=0.5)
    try:
        child = holder_process("s")
        assert (await read_line(child.stdout, "held")).strip() == "held"
        os.kill(child.pid, signal.SIGSTOP)
        try:
            age_row(db_path, "s", heartbeat_age=3600, acquired_age=3600)
            with pytest.raises(AgentBusyError) as caught:
                await s.acquire_lease("s")
            assert caught.value.holder.pid == child.pid
            assert await s.lease_holder("s") == caught.value.holder
        finally:
            os.kill(child.pid, signal.SIGCONT)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        lease = await s.acquire_lease("s")
        assert lease_row(db_path, "s")[:2] == (os.getpid(), lease.token)  # type: ignore[index]
        await lease.release()
    finally:
        await s.close()


async def test_dead_pid_on_this_host_is_taken_over(
    storage: SQLiteSessionStorage, db_path: Path
) -> None:
    finished = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(finished.stdout)
    assert not process_alive(dead_pid)
    here = ProcessIdentity.current()
    await storage.list_sessions()
    write_row(
        db_path, "s", host=here.host, boot_id=here.boot_id, pid=dead_pid, process_started=None
    )
    lease = await storage.acquire_lease("s")
    await lease.release()


@pytest.mark.skipif(not IS_LINUX, reason="process start times are read from /proc")
async def test_reused_pid_is_taken_over(storage: SQLiteSessionStorage, db_path: Path) -> None:
    here = ProcessIdentity.current()
    assert here.process_started is not None
    await storage.list_sessions()
    # Our own, live pid — but recorded with another start time: the pid was reused.
    write_row(
        db_path,
        "s",
        host=here.host,
        boot_id=here.boot_id,
        pid=here.pid,
        process_started=here.process_started - 100,
    )
    assert await storage.lease_holder("s") is None
    lease = await storage.acquire_lease("s")
    await lease.release()


@pytest.mark.skipif(not IS_LINUX, reason="boot ids are read from /proc")
async def test_holder_from_before_a_reboot_is_taken_over(
    storage: SQLiteSessionStorage, db_path: Path
) -> None:
    here = ProcessIdentity.current()
    await storage.list_sessions()
    write_row(
        db_path,
        "s",
        host=here.host,
        boot_id="an-earlier-boot",
        pid=here.pid,
        process_started=here.process_started,
    )
    lease = await storage.acquire_lease("s")
    await lease.release()


# ---------------------------------------------------------------------------- heartbeat, release


async def test_heartbeat_refreshes_while_held(db_path: Path) -> None:
    s = SQLiteSessionStorage(db_path, lease_stale_after=1.0, heartbeat_interval=0.02)
    try:
        lease = await s.acquire_lease("s")
        first = lease_row(db_path, "s")[2]  # type: ignore[index]
        await until(lambda: lease_row(db_path, "s")[2] > first, "a heartbeat")  # type: ignore[index]
        await lease.release()
        assert lease._heartbeat.done()
    finally:
        await s.close()


async def test_release_leaves_a_new_holders_row_alone(db_path: Path) -> None:
    s = SQLiteSessionStorage(db_path, lease_stale_after=3600, heartbeat_interval=0.02)
    try:
        lease = await s.acquire_lease("s")
        # Another host took it over (say our heartbeat had stalled): its token now.
        write_row(
            db_path,
            "s",
            host="elsewhere",
            boot_id="b",
            pid=7,
            process_started=None,
            token="new-holder",
        )
        await until(lambda: lease.lost, "the heartbeat to notice the takeover")
        await lease.release()
        assert lease_row(db_path, "s")[:2] == (7, "new-holder")  # type: ignore[index]
        with pytest.raises(AgentBusyError):
            await s.acquire_lease("s")
    finally:
        await s.close()


async def test_default_heartbeat_is_a_third_of_staleness(db_path: Path) -> None:
    assert SQLiteSessionStorage(db_path, lease_stale_after=30).heartbeat_interval == 10
    assert SQLiteSessionStorage(db_path, heartbeat_interval=2).heartbeat_interval == 2


async def test_cancelled_acquire_leaves_no_lease_behind(storage: SQLiteSessionStorage) -> None:
    await storage.list_sessions()
    for yields in range(1, 8):
        task = asyncio.create_task(storage.acquire_lease("s"))
        for _ in range(yields):
            await asyncio.sleep(0)  # let the acquire progress by one step of the loop
        task.cancel()
        try:
            lease = await task
        except asyncio.CancelledError:
            pass
        else:
            await lease.release()  # it finished before the cancel arrived
        assert await storage.lease_holder("s") is None, f"orphan lease after {yields} steps"
    lease = await storage.acquire_lease("s")
    await lease.release()


async def test_cancelled_release_still_gives_the_lease_back(
    storage: SQLiteSessionStorage,
) -> None:
    for yields in range(1, 8):
        lease = await storage.acquire_lease("s")
        task = asyncio.create_task(lease.release())
        for _ in range(yields):
            await asyncio.sleep(0)  # let the release progress by one step of the loop
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert lease.released and lease._heartbeat.done()
        assert await storage.lease_holder("s") is None, f"lease kept after {yields} steps"


async def test_close_releases_held_leases(db_path: Path) -> None:
    s = SQLiteSessionStorage(db_path)
    lease = await s.acquire_lease("s")
    await s.close()
    assert lease.released and lease._heartbeat.done()
    assert lease_row(db_path, "s") is None


async def test_holder_text_and_reprs_hold_no_token(storage: SQLiteSessionStorage) -> None:
    lease = await storage.acquire_lease("s")
    try:
        text = str(lease.holder)
        assert text.startswith(f"process {os.getpid()} on host {socket.gethostname()!r}, since ")
        assert len(text.rsplit("since ", 1)[1]) == len("14:02:11")
        for shown in (text, repr(lease.holder), repr(lease)):
            assert lease.token not in shown
    finally:
        await lease.release()
    fixed = LeaseHolder("box", "", 4242, None, time.mktime((2026, 1, 2, 14, 2, 11, 0, 0, -1)), 0)
    assert str(fixed) == "process 4242 on host 'box', since 14:02:11"


async def test_extension_keeps_leases_by_request(db_path: Path) -> None:
    ext = SQLiteSessionExtension(db_path)
    first = RunContext("s", "req-1", None)
    second = RunContext("s", "req-2", None)
    try:
        await ext.acquire(first)
        with pytest.raises(AgentBusyError):
            await ext.acquire(second)
        await ext.release(second)  # the refused request releases nothing
        assert await ext.storage.lease_holder("s") is not None
        await ext.release(first)
        assert await ext.storage.lease_holder("s") is None
        await ext.acquire(second)
        await ext.release(second)
    finally:
        await ext.close()
