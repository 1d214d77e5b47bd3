"""A new version and the move of the path to it are one write, in both stores.

``append(..., parent=message_id | ROOT)`` stores a message under a named message (or as a new
root) and makes it the active leaf in the same transaction; ``load(leaf=...)`` reads the path
up to a message; a draft saved with ``parent=`` settles there. An unknown parent writes
nothing. The invariants of the tree (`check_tree`) hold after each step.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import (
    ROOT,
    Agent,
    AgentRunConfig,
    AssistantMessage,
    InMemoryHistory,
    MessageNotFoundError,
    RunContext,
    UserMessage,
)
from engine.storage import SQLiteSessionStorage
from tests.engine.test_message_tree import check_tree
from tests.support.scripted import ScriptedModel, Turn


def _ctx(request: str = "r") -> RunContext:
    return RunContext("s", request, None)


async def _seed(storage: SQLiteSessionStorage) -> None:
    for message in (
        UserMessage(id="q1", content="one"),
        AssistantMessage(id="a1", content="A1"),
        UserMessage(id="q2", content="two"),
        AssistantMessage(id="a2", content="A2"),
    ):
        await storage.append("s", "r", message)


async def test_an_append_with_a_parent_stores_there_and_moves_the_path_in_one_write(
    tmp_path: Path,
):
    db = tmp_path / "t.sqlite3"
    storage = SQLiteSessionStorage(db)
    try:
        await _seed(storage)
        await storage.append("s", "r2", UserMessage(id="q2b", content="two, edited"), parent="a1")
        assert check_tree(db) == ["q1", "a1", "q2b"]
        assert await storage.siblings("s", "q2b") == ["q2", "q2b"]
        await storage.append("s", "r3", UserMessage(id="q1b", content="one, edited"), parent=ROOT)
        assert check_tree(db) == ["q1b"]
        assert await storage.siblings("s", "q1b") == ["q1", "q1b"]
        # The path up to a message, without moving anything.
        assert [m.id for m in await storage.load("s", leaf="q2")] == ["q1", "a1", "q2"]
        assert await storage.load("s", leaf=ROOT) == []
        assert check_tree(db) == ["q1b"]
        # An unknown parent writes nothing: no message, no move, no new conversation.
        with pytest.raises(MessageNotFoundError):
            await storage.append("s", "r4", UserMessage(id="lost", content="?"), parent="nope")
        with pytest.raises(MessageNotFoundError):
            await storage.load("s", leaf="nope")
        with pytest.raises(MessageNotFoundError):
            await storage.append("new", "r4", UserMessage(content="?"), parent="q1")
        assert await storage.get_session("new") is None
        assert await storage.count_all_messages("s") == 6
        assert check_tree(db) == ["q1b"]
    finally:
        await storage.close()


async def test_a_draft_with_a_parent_shows_and_settles_on_its_branch(tmp_path: Path):
    """A regenerate's draft, written while the path still shows the old answer: readers see
    it under its question, and taking the lease stores it there as the path's end."""
    db = tmp_path / "t.sqlite3"
    storage = SQLiteSessionStorage(db)
    try:
        await _seed(storage)
        draft = AssistantMessage(id="d", content="A new answer so far")
        assert await storage.save_draft("s", "gone", draft, parent="q1")
        assert check_tree(db) == ["q1", "a1", "q2", "a2"]  # nothing moved
        shown = await storage.load_draft("s")
        assert shown is not None and shown.message == draft
        above = await storage.load_tail("s", 10, before_seq=shown.seq)
        assert [r.message.id for r in above] == ["q1"]
        # Any other missing seq has no ancestors; the messages' own seqs are unchanged.
        assert await storage.load_tail("s", 10, before_seq=shown.seq + 1) == []
        assert [r.message.id for r in await storage.load_tail("s", 10, before_seq=4)] == [
            "q1",
            "a1",
            "q2",
        ]
        lease = await storage.acquire_lease("s")
        await lease.release()
        assert check_tree(db) == ["q1", "d"]
        assert await storage.siblings("s", "d") == ["a1", "d"]
        with pytest.raises(MessageNotFoundError):
            await storage.save_draft("s", "r", draft, parent="nope")
        assert await storage.load_draft("s") is None
    finally:
        await storage.close()


async def test_the_in_memory_store_takes_the_same_parent():
    store = InMemoryHistory()
    ctx = _ctx()
    for message in (UserMessage(id="q1", content="one"), AssistantMessage(id="a1", content="A")):
        await store.append(ctx, message)
    await store.append(ctx, UserMessage(id="q1b", content="edited"), parent=ROOT)
    assert [m.id for m in await store.restore(ctx)] == ["q1b"]
    await store.append(ctx, AssistantMessage(id="a1b", content="B"), parent="q1")
    assert [m.id for m in await store.restore(ctx)] == ["q1", "a1b"]
    assert [m.id for m in await store.restore(ctx, leaf="a1")] == ["q1", "a1"]
    assert await store.restore(ctx, leaf=ROOT) == []
    with pytest.raises(MessageNotFoundError):
        await store.append(ctx, UserMessage(content="lost"), parent="nope")
    assert [m.id for m in await store.restore(ctx)] == ["q1", "a1b"]


@pytest.mark.parametrize("where", ["memory", "sqlite"])
async def test_a_new_version_that_stores_nothing_never_moved_the_path(tmp_path: Path, where):
    """A regenerate whose provider fails before any output and an edit refused by a hook:
    the path never moved, so there is nothing to put back."""
    from engine import Extension, ProviderAuthError
    from engine.storage import SQLiteSessionExtension

    class Refusing:
        name = "refusing"

        async def stream(self, request):  # type: ignore[no-untyped-def]
            raise ProviderAuthError("no", provider="test", status=401)
            yield  # an async generator

    class Watching(Extension):
        """Reads the active path from the store while the new version is being made."""

        def __init__(self) -> None:
            self.seen: list[list[str]] = []
            self.store: object = None

        async def on_message(self, ctx, message):  # type: ignore[no-untyped-def]
            self.seen.append([m.id for m in await self.store.restore(ctx)])  # type: ignore[attr-defined]
            raise RuntimeError("a hook failed")

        async def before_model(self, ctx, request):  # type: ignore[no-untyped-def]
            self.seen.append([m.id for m in await self.store.restore(ctx)])  # type: ignore[attr-defined]

    store: object = (
        InMemoryHistory() if where == "memory" else SQLiteSessionExtension(tmp_path / "t.sqlite3")
    )
    watching = Watching()
    watching.store = store
    try:
        first = Agent(ScriptedModel([Turn(text="Old")]), AgentRunConfig("s"), extensions=[store])
        await first.run("Question")
        before = [m.id for m in await store.restore(_ctx())]  # type: ignore[attr-defined]
        refusing = Agent(Refusing(), AgentRunConfig("s"), extensions=[store, watching])
        with pytest.raises(ProviderAuthError):
            await refusing.regenerate()
        failing = Agent(ScriptedModel([Turn(text="x")]), AgentRunConfig("s"), [], [store, watching])
        with pytest.raises(RuntimeError):
            await failing.edit(before[0], "Another question")
        assert watching.seen == [before, before]  # the path shown never moved
        assert [m.id for m in await store.restore(_ctx())] == before  # type: ignore[attr-defined]
    finally:
        if where == "sqlite":
            await store.close()  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- mended on open


def _dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


def _leave_lease(db: Path, session_id: str, pid: int, started: float | None = None) -> None:
    """The lease row a process holding ``session_id`` leaves when it is killed."""
    import sqlite3
    import time

    from engine.storage.lease import ProcessIdentity

    here = ProcessIdentity.current()
    with sqlite3.connect(db) as raw:
        raw.execute(
            "INSERT OR REPLACE INTO leases (session_id, host, boot_id, pid, process_started, "
            "token, acquired_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, 'token', ?, ?)",
            (session_id, here.host, here.boot_id, pid, started, time.time(), time.time()),
        )
    raw.close()


def _set_leaf(db: Path, session_id: str, seq: int | None) -> None:
    import sqlite3

    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE sessions SET active_seq = ? WHERE id = ?", (seq, session_id))
    raw.close()


@pytest.mark.parametrize("cut", ["empty", "short"])
async def test_a_path_a_killed_older_version_cut_short_is_mended_on_open(tmp_path: Path, cut):
    """The two states an older version's edit left when killed between its two writes: the
    empty path over stored messages (the first question edited), or a path ending at the
    answer above the edited question. Opening the file puts the path on the newest leaf
    below where it ended and says so; a path a live process holds, or one a host moved
    itself (no lease left behind), is not touched."""
    from engine.storage.lease import ProcessIdentity

    db = tmp_path / "t.sqlite3"
    storage = SQLiteSessionStorage(db)
    await _seed(storage)
    await storage.rename_session("s", "Capitals")
    for sid in ("live", "moved"):
        for message in (UserMessage(id=f"{sid}-q", content="q"), AssistantMessage(content="a")):
            await storage.append(sid, "r", message)
    await storage.close()
    _set_leaf(db, "s", None if cut == "empty" else 2)
    _leave_lease(db, "s", _dead_pid())
    _set_leaf(db, "live", 1)
    here = ProcessIdentity.current()
    _leave_lease(db, "live", here.pid, here.process_started)  # this very process: alive
    _set_leaf(db, "moved", 1)  # a host's branch_from, no lease: its own doing

    storage = SQLiteSessionStorage(db)
    try:
        mended = await storage.mended()
        assert [(m.session_id, m.title, m.was, m.now) for m in mended] == [
            ("s", "Capitals", None if cut == "empty" else "a1", "a2")
        ]
        assert check_tree(db) == ["q1", "a1", "q2", "a2"]
        assert check_tree(db, "live") == ["live-q"]
        assert check_tree(db, "moved") == ["moved-q"]
    finally:
        await storage.close()
    again = SQLiteSessionStorage(db)
    try:
        assert await again.mended() == ()
    finally:
        await again.close()


def test_finding_a_cut_short_path_reads_only_the_leftover_leases(tmp_path: Path):
    """The look made at every open scans only the lease rows; each conversation and message
    it touches is one index lookup, so it costs nothing that grows with the history."""
    import sqlite3

    from engine.storage.migrations import prepare_database
    from engine.storage.tree import _CUT_SHORT

    db = tmp_path / "t.sqlite3"
    prepare_database(db)
    with sqlite3.connect(db) as raw:
        plan = [row[-1] for row in raw.execute(f"EXPLAIN QUERY PLAN {_CUT_SHORT}")]
    raw.close()
    scans = [step for step in plan if step.startswith("SCAN")]
    assert scans == ["SCAN l"], plan
    assert all("USING" in step for step in plan if step.startswith("SEARCH")), plan
