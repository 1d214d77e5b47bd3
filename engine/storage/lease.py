"""The per-session lease: one request at a time on a conversation, across processes.

A request holds its session's lease from start to end, recorded as one row of ``leases``:
who holds it (host name + boot id, pid + process start time), a random token and two times.
Whether a row still blocks a newcomer is decided here, by `holder_is_gone`, liveness first:

* the holder runs on this machine (same host name and boot id): it blocks for as long as its
  process lives, however late its heartbeat (a process stopped with SIGSTOP, or one whose
  loop is stuck, is still alive and may write again); it is taken over at once when the pid
  is not alive, is a zombie, or now belongs to a process started at another time (pid reuse);
* the holder named this host but another boot id → the machine rebooted since: gone;
* a holder on another host is alive until its heartbeat (never its ``acquired_at``) is older
  than ``stale_after``: that is the only case staleness decides.

Every append made under a lease is fenced (`fence`, inside the append's transaction): the
token is checked in the write's own transaction, so a holder that lost its lease — stopped
past the staleness limit, then taken over from another host — cannot add a single message
after the new holder's; it gets `LeaseLostError` instead.

A second request in the same process is refused like any other: its row names a live pid.
The acquiring transaction itself (``BEGIN IMMEDIATE``) lives in `engine.storage.leases`; a
`Lease` keeps the row fresh with an owned heartbeat task and deletes it on `release`, only
while the token is still its own.

Process start time is the raw ``starttime`` field of ``/proc/<pid>/stat`` (clock ticks since
boot) on Linux and None elsewhere; raw ticks rather than wall-clock seconds because the boot
time Linux reports moves when the clock is adjusted.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
import time
from dataclasses import dataclass
from typing import Protocol

import aiosqlite

from ..errors import LeaseLostError
from ..sentences import sentence
from .rows import HOLDER_COLUMNS

__all__ = [
    "Lease",
    "LeaseHolder",
    "LeasePolicy",
    "ProcessIdentity",
    "fence",
    "holder_is_gone",
    "process_alive",
]

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    """Who a process is, as far as a lease needs to know."""

    host: str  #: socket.gethostname()
    boot_id: str  #: /proc/sys/kernel/random/boot_id on Linux, "" elsewhere
    pid: int
    process_started: float | None  #: Linux: clock ticks since boot; None elsewhere

    @classmethod
    def current(cls, host: str | None = None) -> ProcessIdentity:
        """Return the identity of the calling process (read afresh: a fork changes it).

        Args:
            host: the host name to record instead of ``socket.gethostname()`` (tests use it
                to play a second machine sharing the file).
        """
        pid = os.getpid()
        return cls(host or socket.gethostname(), _boot_id(), pid, _start_ticks(pid))


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """The holder of a session's lease. Holds no secret: the token is not part of it."""

    host: str
    boot_id: str
    pid: int
    process_started: float | None  #: see `ProcessIdentity.process_started`
    acquired_at: float  #: seconds since the epoch
    heartbeat_at: float  #: seconds since the epoch; refreshed while the lease is held

    def __str__(self) -> str:
        return self.sentence("en")

    def sentence(self, language: str | None = "en") -> str:
        """Who holds the lease, in ``language`` (it goes into the busy and lease-lost
        sentences, which say it in their own language)."""
        since = time.strftime("%H:%M:%S", time.localtime(self.acquired_at))
        return sentence("lease.holder", language, pid=self.pid, host=repr(self.host), since=since)


def holder_is_gone(
    holder: LeaseHolder, *, now: float, stale_after: float, here: ProcessIdentity
) -> bool:
    """Return True when `holder` no longer blocks a newcomer (see the module docstring)."""
    if holder.host != here.host:
        # Another machine: its processes cannot be seen from here, only its heartbeat.
        return now - holder.heartbeat_at > stale_after
    if holder.boot_id and here.boot_id and holder.boot_id != here.boot_id:
        return True  # same machine name, another boot: every process of that boot has ended
    # Liveness before staleness: a live process on this machine may still write, so a late
    # heartbeat (SIGSTOP, a stuck loop, a suspended laptop) never hands its lease over.
    return not process_alive(holder.pid, holder.process_started)


def process_alive(pid: int, started: float | None = None) -> bool:
    """Return True when process `pid` runs and, if `started` is known, started then."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        return _windows_process_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    stat = _proc_stat(pid)
    if stat is None:
        return True  # no /proc: a live pid is all we can know
    state, ticks = stat
    if state in ("Z", "X"):
        return False  # killed and not yet reaped by its parent: it will never release
    return started is None or ticks == started


@dataclass(frozen=True, slots=True)
class LeasePolicy:
    """How a storage judges and keeps leases."""

    stale_after: float  #: seconds after which another host's silent holder is gone
    heartbeat_interval: float  #: seconds between heartbeats of a held lease
    host: str | None = None  #: the host name to record instead of the machine's (tests)

    def here(self) -> ProcessIdentity:
        """This process, as its leases name it."""
        return ProcessIdentity.current(self.host)

    def is_gone(self, holder: LeaseHolder) -> bool:
        """Whether `holder` no longer blocks a newcomer, judged now (`holder_is_gone`)."""
        return holder_is_gone(
            holder, now=time.time(), stale_after=self.stale_after, here=self.here()
        )


async def fence(db: aiosqlite.Connection, lease: Lease) -> None:
    """Inside a write: raise `LeaseLostError` unless `lease`'s row is still its own.

    ``BEGIN IMMEDIATE`` holds the write lock from the start of the transaction, so no
    takeover can come between this check and the write that follows it.
    """
    rows = list(
        await db.execute_fetchall(
            f"SELECT token, {HOLDER_COLUMNS} FROM leases WHERE session_id = ?",
            (lease.session_id,),
        )
    )
    if rows and rows[0][0] == lease.token:
        return
    lease.mark_lost()
    holder = LeaseHolder(*rows[0][1:]) if rows else None
    raise LeaseLostError(lease.session_id, holder)


class _LeaseStore(Protocol):
    async def refresh_lease(self, session_id: str, token: str) -> bool: ...
    async def delete_lease(self, lease: Lease) -> None: ...


class Lease:
    """A held session lease; `release()` (or ``async with``) gives it up.

    While held, an owned task refreshes ``heartbeat_at`` every `heartbeat_interval` seconds,
    so other hosts see the holder alive. If another process took the lease over (after a
    stale heartbeat), `lost` becomes True — noticed by the heartbeat or by a fenced append —
    the heartbeat stops, `wait_lost()` returns, and `release()` leaves the new holder's row
    alone.
    """

    def __init__(
        self,
        store: _LeaseStore,
        session_id: str,
        token: str,
        holder: LeaseHolder,
        heartbeat_interval: float,
    ) -> None:
        self.session_id = session_id
        self.holder = holder
        self._token = token
        self._store = store
        self._interval = heartbeat_interval
        self._released = False
        self._lost = asyncio.Event()
        self._heartbeat = asyncio.get_running_loop().create_task(
            self._beat(), name=f"lease heartbeat {session_id}"
        )

    def __repr__(self) -> str:
        state = "released" if self._released else "lost" if self.lost else "held"
        return f"<Lease {self.session_id!r} {state} by {self.holder}>"

    @property
    def token(self) -> str:
        """The random token that marks the row as this lease's."""
        return self._token

    @property
    def lost(self) -> bool:
        """True once another process is known to have taken the lease over."""
        return self._lost.is_set()

    async def wait_lost(self) -> None:
        """Return once the lease is known to be lost (never, if it is released first)."""
        await self._lost.wait()

    def mark_lost(self) -> None:
        """Record that the row is no longer ours (the storage calls it when a fence fails)."""
        if not self._lost.is_set():
            _log.warning("The lease of %s was taken over by another process", self.session_id)
            self._lost.set()
            if self._heartbeat is not asyncio.current_task():
                self._heartbeat.cancel()  # nothing left to keep fresh

    @property
    def released(self) -> bool:
        """True once `release()` has run."""
        return self._released

    async def release(self) -> None:
        """Stop the heartbeat and delete the row if it is still ours. Safe to call twice.

        Cancelling the caller does not stop the delete: a row left behind would name this
        live process and keep the session busy until it exits.
        """
        if self._released:
            return
        self._released = True
        self._heartbeat.cancel()
        # The delete is a shielded write; a heartbeat write still in flight is harmless
        # before or after it (it matches on the token).
        await self._store.delete_lease(self)
        await self.stop_heartbeat()

    async def stop_heartbeat(self) -> None:
        """Cancel the heartbeat task and wait for it (a write in progress completes)."""
        self._heartbeat.cancel()
        # wait() rather than awaiting the task: the task's own CancelledError is expected,
        # while a cancellation of the caller must still propagate.
        await asyncio.wait({self._heartbeat})

    async def __aenter__(self) -> Lease:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.release()

    async def _beat(self) -> None:
        while True:
            # A timer, not synchronisation: the heartbeat's period.
            await asyncio.sleep(self._interval)
            try:
                still_ours = await self._store.refresh_lease(self.session_id, self._token)
            except asyncio.CancelledError:
                raise
            except Exception:
                _log.warning("Could not refresh the lease of %s", self.session_id, exc_info=True)
                continue
            if not still_ours:
                self.mark_lost()
                return


# ---------------------------------------------------------------------------- platform


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _proc_stat(pid: int) -> tuple[str, float] | None:
    """Return (state, starttime ticks) from /proc/<pid>/stat, or None without /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read().decode("ascii", "replace")
    except FileNotFoundError:
        return ("X", 0.0) if os.path.isdir("/proc/self") else None
    except OSError:
        return None
    try:
        # The command name (field 2) is in parentheses and may itself hold spaces or ')'.
        fields = raw[raw.rindex(")") + 2 :].split()
        # fields[0] is field 3 (state); starttime is field 22.
        return fields[0], float(fields[22 - 3])
    except (ValueError, IndexError):
        return None  # an unexpected format: fall back to what kill(pid, 0) said


def _start_ticks(pid: int) -> float | None:
    stat = _proc_stat(pid)
    return None if stat is None else stat[1]


def _windows_process_alive(pid: int) -> bool:  # pragma: no cover - exercised on Windows only
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return bool(kernel32.GetLastError() == 5)  # access denied: it exists
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return True
        return code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)
