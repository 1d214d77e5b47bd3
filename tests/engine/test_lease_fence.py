"""Fenced appends: a holder that lost its lease can never write after the new holder.

The story of issue 9 with real processes: process 1 holds the lease mid-answer and is stopped
with SIGSTOP; process 2, playing another machine (its leases record another host name), takes
the stale lease over and completes its own request; process 1 continues and is refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Agent, AgentRunConfig, UserMessage
from engine.errors import LeaseLostError
from engine.storage import SQLiteSessionExtension, SQLiteSessionStorage
from tests.engine.test_lease import lease_row, write_row
from tests.support.language import english_words
from tests.support.scripted import ScriptedModel, Turn
from tests.support.wait import read_line, until

STORY = Path(__file__).parent / "storage_helpers" / "lease_story.py"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "continuo.sqlite3"


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
        proc.wait(timeout=30)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def start_story(db_path: Path, text: str, started: list[subprocess.Popen[str]]) -> Any:
    """Start process 1: it holds the lease while its answer waits for a line on stdin."""
    proc = subprocess.Popen(
        [sys.executable, str(STORY), str(db_path), "s", text, "1.0", "-", "--wait"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    started.append(proc)
    return proc


def run_story(db_path: Path, text: str, stale_after: float, host: str) -> str:
    done = subprocess.run(
        [sys.executable, str(STORY), str(db_path), "s", text, str(stale_after), host],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def history(db_path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db_path) as raw:
        rows = raw.execute(
            "SELECT type, body FROM messages WHERE session_id = 's' ORDER BY seq"
        ).fetchall()
    raw.close()
    return [(kind, json.loads(body)["content"]) for kind, body in rows]


async def test_stopped_holder_taken_over_by_another_machine_cannot_interleave(
    db_path: Path, children: list[subprocess.Popen[str]]
) -> None:
    first = start_story(db_path, "question A", children)
    assert (await read_line(first.stdout)).strip() == "streaming"  # user A stored, answer A streaming
    os.kill(first.pid, signal.SIGSTOP)

    # Past the staleness limit (1 s here) the stopped holder's heartbeat is late ...
    await until(
        lambda: time.time() - lease_row(db_path, "s")[2] > 1.0,  # type: ignore[index]
        "process 1's heartbeat to be older than the staleness limit",
    )
    # ... yet on its own machine it is alive, so a second process there is refused,
    out = await asyncio.to_thread(run_story, db_path, "question B", 1.0, "-")
    assert out.startswith("AgentBusyError: ") and f"process {first.pid}" in out
    # while "another machine" only sees the stale heartbeat, takes over and answers.
    out = await asyncio.to_thread(run_story, db_path, "question B", 1.0, "other-machine")
    assert out == "done"

    os.kill(first.pid, signal.SIGCONT)
    assert first.stdin is not None
    first.stdin.write("go\n")
    first.stdin.flush()
    out = (await read_line(first.stdout)).strip()
    assert out.startswith("LeaseLostError: Conversation 's' was taken over by another process")
    assert first.wait(timeout=30) == 0

    assert history(db_path) == [
        ("user", "question A"),
        ("user", "question B"),
        ("assistant", "answer to question B"),
    ]


async def test_append_under_a_lost_lease_is_refused_and_writes_nothing(db_path: Path) -> None:
    mine = SQLiteSessionStorage(db_path, lease_stale_after=3600, heartbeat_interval=3600)
    try:
        lease = await mine.acquire_lease("s")
        assert await mine.append("s", "r1", UserMessage(content="one"), lease=lease) == 1
        # Another machine took the lease over (our heartbeat had stopped, say).
        write_row(
            db_path, "s", host="elsewhere", boot_id="b", pid=7, process_started=None, token="new"
        )
        with pytest.raises(LeaseLostError) as caught:
            await mine.append("s", "r1", UserMessage(content="two"), lease=lease)
        assert caught.value.holder is not None and caught.value.holder.pid == 7
        assert "new" not in str(caught.value) and lease.token not in str(caught.value)
        chinese = caught.value.sentence("zh_CN")
        assert "（即主机 'elsewhere' 上的进程 7，自 " in chinese
        assert not english_words(chinese, "elsewhere"), chinese
        assert lease.lost
        assert await mine.count_messages("s") == 1
        # A raw append, made without a lease, is not fenced (reading and raw appends never
        # take the lease).
        assert await mine.append("s", "r2", UserMessage(content="raw")) == 2
        await lease.release()
        assert lease_row(db_path, "s")[:2] == (7, "new")  # type: ignore[index]
        with pytest.raises(ValueError):
            await mine.append("t", "r", UserMessage(content="x"), lease=lease)
    finally:
        await mine.close()


async def test_heartbeat_noticing_the_loss_ends_the_request(db_path: Path) -> None:
    storage = SQLiteSessionStorage(db_path, lease_stale_after=3600, heartbeat_interval=0.02)
    extension = SQLiteSessionExtension(storage)
    started, never = asyncio.Event(), asyncio.Event()
    model = ScriptedModel([Turn(text="partial answer", chunks=2, gate=never, started=started)])
    agent = await Agent.create(model, AgentRunConfig("s"), extensions=[extension])
    try:
        request = asyncio.create_task(agent.run("question"))
        await asyncio.wait_for(started.wait(), 10)
        write_row(
            db_path, "s", host="elsewhere", boot_id="b", pid=7, process_started=None, token="new"
        )
        # The model never finishes by itself: only the heartbeat can end this request
        # (asyncio.wait does not cancel it on timeout, unlike wait_for).
        await asyncio.wait({request}, timeout=10)
        assert request.done(), "the request went on after its lease was lost"
        assert isinstance(request.exception(), LeaseLostError)
        assert [m.content for m in await storage.load("s")] == ["question"]
        assert lease_row(db_path, "s")[:2] == (7, "new")  # type: ignore[index]
    finally:
        await extension.close()
        await storage.close()


async def test_consumer_task_is_left_uncancelled_after_a_lost_lease(db_path: Path) -> None:
    storage = SQLiteSessionStorage(db_path, lease_stale_after=3600, heartbeat_interval=0.02)
    extension = SQLiteSessionExtension(storage)
    started, never = asyncio.Event(), asyncio.Event()
    model = ScriptedModel([Turn(text="partial answer", chunks=2, gate=never, started=started)])
    agent = await Agent.create(model, AgentRunConfig("s"), extensions=[extension])

    async def consume() -> int:
        with pytest.raises(LeaseLostError):
            async for _event in agent.stream("question"):
                if started.is_set() and lease_row(db_path, "s")[1] != "new":  # type: ignore[index]
                    # In a thread: written on the loop's thread, the raw write waited for
                    # the lock of a transaction that needed the (blocked) loop to finish,
                    # and failed with "database is locked" after 5 s on a loaded machine.
                    await asyncio.to_thread(
                        write_row,
                        db_path,
                        "s",
                        host="elsewhere",
                        boot_id="b",
                        pid=7,
                        process_started=None,
                        token="new",
                    )
        task = asyncio.current_task()
        assert task is not None
        await asyncio.sleep(0)  # a cancel left pending would be delivered here
        return task.cancelling()

    try:
        assert await asyncio.wait_for(consume(), 10) == 0
    finally:
        await extension.close()
        await storage.close()


async def test_lost_lease_ends_a_request_waiting_between_events(db_path: Path) -> None:
    storage = SQLiteSessionStorage(db_path, lease_stale_after=3600, heartbeat_interval=0.02)
    extension = SQLiteSessionExtension(storage)
    model = ScriptedModel([Turn(text="a full answer", chunks=3)])
    agent = await Agent.create(model, AgentRunConfig("s"), extensions=[extension])
    try:
        events = agent.stream("question")
        first = await anext(events)  # the user message, stored; the request now waits on us
        assert first.message is not None and first.message.content == "question"
        write_row(
            db_path, "s", host="elsewhere", boot_id="b", pid=7, process_started=None, token="new"
        )
        lease = next(iter(extension._leases.values()))
        await asyncio.wait_for(lease.wait_lost(), 10)
        with pytest.raises(LeaseLostError):
            await anext(events)
        assert [m.content for m in await storage.load("s")] == ["question"]
    finally:
        await extension.close()
        await storage.close()
