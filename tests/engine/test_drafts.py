"""Streaming drafts: what a step has shown is on disk while it streams, and survives a kill.

Real SQLite files throughout; the "process that died" is a real child (`draft_child`) killed
with SIGKILL while its draft is saved and its request still streams.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine import (
    Agent,
    AgentBusyError,
    AgentRunConfig,
    AssistantMessage,
    InternalMessage,
    ModelEvent,
    ModelResponse,
    ResumeKind,
    SQLiteSessionExtension,
    SQLiteSessionStorage,
    StopReason,
    UserMessage,
)
from engine.drafts import APP_STOPPED_TEXT, app_stopped_stop
from tests.engine import draft_child
from tests.support.scripted import ScriptedModel, Turn

ROOT = Path(__file__).resolve().parents[2]


class DraftChild:
    """`draft_child` in a scripted mode: it streams, saves its draft, says ``ready``, waits."""

    def __init__(self, db: Path, session: str, mode: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.engine.draft_child", str(db), session, mode],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def wait_ready(self) -> None:
        line = self.proc.stdout.readline()  # blocks until the draft is saved
        assert line.strip() == "ready", f"child said {line!r}; stderr: {self.proc.stderr.read()}"

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        assert self.proc.wait(timeout=10) == -signal.SIGKILL
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            pipe.close()


def raw(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(sql).fetchall()
    conn.close()
    return rows


def counts(db: Path) -> tuple[int, int]:
    """(messages, drafts) in the file."""
    return (
        raw(db, "SELECT COUNT(*) FROM messages")[0][0],
        raw(db, "SELECT COUNT(*) FROM drafts")[0][0],
    )


def killed_child(db: Path, mode: str, session: str = "s") -> None:
    child = DraftChild(db, session, mode)
    try:
        child.wait_ready()
    finally:
        child.kill()
    assert raw(db, "PRAGMA integrity_check") == [("ok",)]


class Paced:
    """A model streaming `pieces`, one every `pace` seconds (its own output rate, as a
    provider's), calling `at(n)` after piece n so a test can look mid-stream."""

    name = "paced"

    def __init__(self, pieces: list[str], pace: float, at=None) -> None:
        self.pieces, self.pace, self.at = pieces, pace, at

    async def stream(self, request):
        for n, piece in enumerate(self.pieces, start=1):
            yield ModelEvent.text(piece)
            if self.at is not None:
                await self.at(n)
            await asyncio.sleep(self.pace)
        yield ModelEvent.completed(ModelResponse(AssistantMessage(content="".join(self.pieces))))


class CountingExtension(SQLiteSessionExtension):
    """Real SQLite storage that also notes when each draft was saved and what it held."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.saved: list[tuple[float, str]] = []
        self.changed = asyncio.Event()

    async def save_draft(self, ctx, message, **where):
        began = asyncio.get_running_loop().time()  # the snapshot was taken just now
        await super().save_draft(ctx, message, **where)
        self.saved.append((began, message.content))
        self.changed.set()


async def test_draft_is_on_disk_while_streaming_and_written_at_most_once_an_interval(store):
    pieces = [f"word{n} " for n in range(60)]
    ext = CountingExtension(store.path)
    seen_on_disk: list[str] = []

    async def look(n: int) -> None:
        if n == 30:  # wait until a draft holding all 30 pieces is saved, then read the file
            while not ext.saved or ext.saved[-1][1] != "".join(pieces[:30]):
                ext.changed.clear()
                await asyncio.wait_for(ext.changed.wait(), 10)
            body = raw(store.path, "SELECT body FROM drafts")[0][0]
            seen_on_disk.append(json.loads(body)["content"])

    model = Paced(pieces, 0.01, look)
    agent = await Agent.create(model, AgentRunConfig("s", draft_interval=0.1), extensions=[ext])
    loop = asyncio.get_running_loop()
    began = loop.time()
    final = await agent.run("Count")
    took = loop.time() - began
    await ext.close()

    assert seen_on_disk == ["".join(pieces[:30])]
    times = [t for t, _ in ext.saved]
    assert len(times) <= took / 0.1 + 1, f"{len(times)} draft writes in {took:.2f} s"
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert all(gap >= 0.1 - 0.005 for gap in gaps), gaps
    # No duplicate: the answer replaced the draft in the same transaction.
    assert counts(store.path) == (2, 0)
    history = await store.history()
    assert [type(m) for m in history] == [UserMessage, AssistantMessage]
    assert history[1].content == final.content == "".join(pieces) and history[1].stop is None


async def test_a_completed_answer_never_leaves_a_draft_to_convert(store):
    """Drafts written right up to the end of each step: the next lease converts nothing."""
    for round_ in range(4):
        model = Paced([f"r{round_}p{n} " for n in range(25)], 0.004)
        agent = await store.agent(model, draft_interval=0.01)
        await agent.run(f"round {round_}")
        assert counts(store.path)[1] == 0
    history = await store.history()
    assert [type(m) for m in history] == [UserMessage, AssistantMessage] * 4
    assert len({m.id for m in history}) == 8
    assert all(m.stop is None for m in history if isinstance(m, AssistantMessage))


async def test_killed_mid_answer_the_next_lease_turns_the_draft_into_the_answer(store):
    killed_child(store.path, "text")
    assert counts(store.path) == (1, 1)  # the question, and the draft of the answer

    model = ScriptedModel([Turn(text="Once upon a time, whole this time.")])
    agent = await store.agent(model)
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE
    assert point.stop == app_stopped_stop()
    assert point.description.startswith("The app stopped before the answer finished")
    assert counts(store.path) == (1, 1), "resume_point() reads only"

    final = await agent.resume()
    assert final.content == "Once upon a time, whole this time."
    history = await store.history()
    assert [type(m) for m in history] == [
        UserMessage,
        AssistantMessage,
        InternalMessage,
        AssistantMessage,
    ]
    recovered = history[1]
    assert recovered.content == draft_child.TEXT
    assert recovered.stop.reason is StopReason.INTERRUPTED
    assert (recovered.stop.raw, recovered.stop.message) == ("app_stopped", APP_STOPPED_TEXT)
    assert history[2].tag == "resume:retry_response"
    # The model was shown what it had written before the crash.
    assert draft_child.TEXT in [getattr(m, "content", None) for m in model.requests[0].messages]
    assert counts(store.path) == (4, 0)
    assert await agent.resume_point() is None


async def test_a_new_message_after_the_kill_keeps_the_text_that_arrived(store):
    killed_child(store.path, "text")
    agent = await store.agent(ScriptedModel([Turn(text="Sure.")]))
    await agent.run("Shorter, please")
    history = await store.history()
    assert [type(m) for m in history] == [
        UserMessage,
        AssistantMessage,
        UserMessage,
        AssistantMessage,
    ]
    assert history[1].content == draft_child.TEXT and history[1].stop.raw == "app_stopped"
    assert counts(store.path) == (4, 0)


async def test_a_reasoning_only_draft_is_kept(store):
    killed_child(store.path, "reasoning")
    storage = SQLiteSessionStorage(store.path)
    try:
        draft = await storage.load_draft("s")
        assert draft is not None and draft.seq == 2
        assert (draft.message.content, draft.message.reasoning) == ("", draft_child.REASONING)
        lease = await storage.acquire_lease("s")
        await lease.release()
        history = await storage.load("s")
    finally:
        await storage.close()
    assert history[1] == draft.message
    assert history[1].stop == app_stopped_stop()
    agent = await store.agent(ScriptedModel([Turn(text="unused")]))
    assert (await agent.resume_point()).kind is ResumeKind.RETRY_RESPONSE


async def test_a_draft_never_holds_half_a_tool_call(store):
    killed_child(store.path, "tool")
    body = json.loads(raw(store.path, "SELECT body FROM drafts")[0][0])
    assert "tool_calls" not in body or body["tool_calls"] == []
    agent = await store.agent(ScriptedModel([Turn(text="Done.")]))
    await agent.resume()
    recovered = (await store.history())[1]
    assert recovered.content == draft_child.TEXT
    assert recovered.tool_calls == ()
    assert recovered.stop == app_stopped_stop(["write_file"])


async def test_a_live_holders_draft_is_not_converted(store):
    child = DraftChild(store.path, "s", "text")
    try:
        child.wait_ready()
        agent = await store.agent(ScriptedModel([Turn(text="me too")]))
        # While its writer streams, the draft is that request's business.
        point = await agent.resume_point()
        assert point is not None and point.kind is ResumeKind.CALL_MODEL
        storage = SQLiteSessionStorage(store.path)
        try:
            assert await storage.load_draft("s") is None
        finally:
            await storage.close()
        with pytest.raises(AgentBusyError):
            await agent.run("me too")
        assert counts(store.path) == (1, 1)
    finally:
        child.kill()
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE


async def test_a_draft_is_fenced_by_the_lease_and_replaced_by_its_own_requests_answer(tmp_path):
    storage = SQLiteSessionStorage(tmp_path / "f.sqlite3", lease_stale_after=3600)
    try:
        await storage.append("s", "r1", UserMessage(content="hi"))
        lease = await storage.acquire_lease("s")
        partial = AssistantMessage(content="Hel", stop=app_stopped_stop())
        assert not await storage.save_draft("s", "r1", partial, token="not-the-lease")
        assert await storage.save_draft("s", "r1", partial, token=lease.token)
        # Another request's answer leaves r1's draft alone; r1's own answer replaces it.
        await storage.append("s", "r2", AssistantMessage(content="other"))
        assert counts(storage.path)[1] == 1
        await storage.append("s", "r1", AssistantMessage(content="Hello"))
        assert counts(storage.path) == (3, 0)
        await lease.release()
    finally:
        await storage.close()


@pytest.mark.parametrize("ending", ["stop", "fault"])
async def test_a_stopped_or_broken_answer_is_stored_once_and_its_draft_goes(store, ending):
    drafted = asyncio.Event()
    ext = CountingExtension(store.path)

    async def look(n: int) -> None:
        if n == 3:
            await asyncio.wait_for(ext.changed.wait(), 10)  # a draft is on disk
            drafted.set()
            if ending == "fault":
                raise ConnectionResetError("the connection broke")
            await asyncio.Event().wait()  # streams no more: the person presses Stop

    pieces = ["Hello ", "there, ", "friend. ", "More."]
    agent = await Agent.create(
        Paced(pieces, 0.02, look), AgentRunConfig("s", draft_interval=0.02), extensions=[ext]
    )
    task = asyncio.ensure_future(agent.run("Hi"))
    await asyncio.wait_for(drafted.wait(), 10)
    assert counts(store.path) == (1, 1)
    if ending == "stop":
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        with pytest.raises(ConnectionResetError):
            await task
    await ext.close()
    history = await store.history()
    assert counts(store.path) == (2, 0)
    assert history[1].content == "Hello there, friend. "
    assert history[1].stop.raw == ("cancelled" if ending == "stop" else "network_error")
