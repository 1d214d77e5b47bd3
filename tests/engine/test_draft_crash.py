"""SIGKILL at many instants of an answer streamed from the real loopback provider.

Each child (`draft_child` in ``provider`` mode) streams a long answer from the loopback
server over HTTP into a real SQLite file and prints every text delta with the time it
arrived (``time.monotonic()``, one clock for every process on the machine). The parent kills
it with SIGKILL at a chosen instant after its first delta, then checks what the file kept:

* ``PRAGMA integrity_check`` is ok;
* the stored answer (the draft, turned into a message when the lease is next taken) holds at
  least all the text that arrived one second before the kill, and nothing that did not
  arrive;
* nothing is stored twice: one question, at most one answer, no draft left after the lease.

Several children stream at once (one file, one session each), so the instants cost about
their longest, not their sum.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from engine.drafts import app_stopped_stop
from tests.engine.draft_child import QUESTION
from tests.support.provider_server import ProviderServer, Turn

ROOT = Path(__file__).resolve().parents[2]
#: Long enough to outlast every instant: 5 characters every 10 ms, about 8 s in all.
LONG = "".join(f"word{n:04d} " for n in range(4000))
LOSS_BOUND = 1.0  #: seconds: text older than this at the kill must be on disk


@dataclass
class Killed:
    session: str
    instant: float
    killed_at: float = 0.0
    deltas: list[tuple[float, str]] = field(default_factory=list)
    stderr: str = ""


def stream_then_kill(db: Path, url: str, session: str, instant: float) -> Killed:
    """Run one child; SIGKILL it once a delta arrives `instant` s after its first one."""
    outcome = Killed(session, instant)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.engine.draft_child", str(db), session, "provider", url],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for line in proc.stdout:
            kind, _, rest = line.partition(" ")
            if kind != "delta":
                break  # "finished": the stream outran the instant (checked below)
            stamp, _, text = rest.partition(" ")
            outcome.deltas.append((float(stamp), json.loads(text)))
            if outcome.deltas[-1][0] - outcome.deltas[0][0] >= instant:
                outcome.killed_at = time.monotonic()
                os.kill(proc.pid, signal.SIGKILL)
                break
        # Deltas the child printed before it died are still in the pipe: they arrived too.
        for line in proc.stdout:
            kind, _, rest = line.partition(" ")
            if kind == "delta":
                stamp, _, text = rest.partition(" ")
                outcome.deltas.append((float(stamp), json.loads(text)))
    finally:
        if proc.poll() is None and not outcome.killed_at:
            proc.kill()
        proc.wait(timeout=30)
        outcome.stderr = proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
    assert outcome.killed_at, f"the child ended before {instant} s: {outcome.stderr}"
    assert proc.returncode == -signal.SIGKILL
    return outcome


async def check_kills(tmp_path: Path, instants: list[float], parallel: int) -> None:
    db = tmp_path / "continuo.sqlite3"
    with ProviderServer(default=Turn(text=LONG, chunk_size=5, delay=0.01)) as server:
        with ThreadPoolExecutor(parallel) as pool:
            outcomes = list(
                pool.map(
                    lambda item: stream_then_kill(db, server.openai_url, f"s{item[0]}", item[1]),
                    enumerate(instants),
                )
            )
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    raw.close()

    storage = SQLiteSessionStorage(db)
    kept = 0
    try:
        for outcome in outcomes:
            sid = outcome.session
            draft = await storage.load_draft(sid)  # read-only: as the window shows it
            lease = await storage.acquire_lease(sid)  # the next holder: turns it into a message
            await lease.release()
            history = await storage.load(sid)
            arrived = "".join(text for _, text in outcome.deltas)
            required = "".join(
                text for stamp, text in outcome.deltas if stamp <= outcome.killed_at - LOSS_BOUND
            )
            assert isinstance(history[0], UserMessage) and history[0].content == QUESTION
            assert len(history) <= 2, f"{sid}: stored twice? {history}"
            stored = ""
            if len(history) == 2:
                answer = history[1]
                assert isinstance(answer, AssistantMessage)
                assert answer == (draft.message if draft else None)
                assert answer.stop == app_stopped_stop()
                stored = answer.content
                kept += 1
            else:
                assert draft is None
            assert arrived.startswith(stored), f"{sid}: stored text that never arrived"
            assert stored.startswith(required), (
                f"{sid} killed {outcome.instant:.2f} s in: lost "
                f"{len(required) - len(stored)} characters older than {LOSS_BOUND} s"
            )
    finally:
        await storage.close()
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT COUNT(*) FROM drafts").fetchone() == (0,)
        ids = [r[0] for r in raw.execute("SELECT id FROM messages")]
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    raw.close()
    assert len(ids) == len(set(ids)) == len(instants) + kept
    late = sum(o.instant > LOSS_BOUND + 0.05 for o in outcomes)
    assert kept >= late, "every answer killed after its first second kept its text"


async def test_sigkill_at_twenty_instants_of_a_streamed_answer(tmp_path):
    # 0.15 s to 3.0 s after the first delta: before the first draft, and across the phases
    # of the draft interval after it.
    await check_kills(tmp_path, [0.15 * (i + 1) for i in range(20)], parallel=5)


@pytest.mark.stress
async def test_sigkill_at_a_hundred_instants_of_a_streamed_answer(tmp_path):
    """`make stress`: 100 instants, 0.05 s apart, up to 5 s into the answer."""
    await check_kills(tmp_path, [0.05 * (i + 1) for i in range(100)], parallel=6)
