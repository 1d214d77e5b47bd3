"""Durability with real processes killed by SIGKILL while they append.

A child appends messages in a loop and prints each seq once `append` has returned. The
parent kills it mid-stream; every acknowledged message must then be in the file, in order,
readable, and the file must pass SQLite's integrity check.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.messages import UserMessage
from engine.storage import SQLiteSessionStorage
from tests.support.wait import read_line

APPEND_FOREVER = Path(__file__).parent / "storage_helpers" / "append_forever.py"


def start_appender(path: Path, session_id: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(APPEND_FOREVER), str(path), session_id, "FULL"],
        stdout=subprocess.PIPE,
        text=True,
    )


async def kill_while_appending(path: Path, session_id: str, after: int) -> int:
    """Start a child appending to `path`; SIGKILL it once it has acknowledged `after` seqs.

    Returns the last seq the child acknowledged.
    """
    child = start_appender(path, session_id)
    assert child.stdout is not None
    last = 0
    try:
        while last < after:
            line = await read_line(child.stdout, "the child's next seq")
            assert line, "the appending child exited early"
            last = int(line)
        child.send_signal(signal.SIGKILL)
        # Whatever it printed before dying was acknowledged too.
        rest = await asyncio.to_thread(child.stdout.read)
        last = max([last, *(int(x) for x in rest.split())])
    finally:
        if child.poll() is None:
            child.kill()
        await asyncio.to_thread(child.wait, 30)
        child.stdout.close()
    return last


def integrity(path: Path) -> list[str]:
    with sqlite3.connect(path) as raw:
        result = [row[0] for row in raw.execute("PRAGMA integrity_check")]
    raw.close()
    return result


async def check_survivors(path: Path, session_id: str, acknowledged: int) -> None:
    storage = SQLiteSessionStorage(path)
    try:
        records = await storage.load_tail(session_id, 100_000)
        seqs = [r.seq for r in records]
        # Every acknowledged message is there; at most the one in flight went further.
        assert seqs == list(range(1, len(seqs) + 1))
        assert acknowledged <= len(seqs) <= acknowledged + 1
        assert records[0].message.content == "question 1"  # type: ignore[attr-defined]
        # And the file takes new writes after the crash.
        assert await storage.append(session_id, "after", UserMessage(content="next")) == (
            len(seqs) + 1
        )
    finally:
        await storage.close()
    assert integrity(path) == ["ok"]


async def test_sigkill_mid_append_loses_nothing_acknowledged(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite3"
    acknowledged = await kill_while_appending(path, "s", after=25)
    await check_survivors(path, "s", acknowledged)


@pytest.mark.stress
async def test_repeated_sigkill_mid_append(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite3"
    for round_ in range(30):
        session = f"s{round_ % 3}"
        before = await _count(path, session)
        acknowledged = await kill_while_appending(path, session, after=before + 5 + round_ % 7)
        await check_survivors(path, session, acknowledged)


async def _count(path: Path, session: str) -> int:
    storage = SQLiteSessionStorage(path)
    try:
        return await storage.count_messages(session)
    finally:
        await storage.close()
