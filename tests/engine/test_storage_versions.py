"""Files written by earlier releases keep opening: one frozen dump per schema version.

``storage_helpers/schema_v<N>.sql`` is the ``sqlite3`` dump of a file as the release that
introduced version N wrote it. Each is rebuilt into a real file and opened by this code,
which must migrate it to `SCHEMA_VERSION` and read every message back. When a migration is
added, dump a file written by the new release beside them; never edit an old dump.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine.messages import (
    AssistantMessage,
    InternalMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from engine.stop import StopInfo, StopReason
from engine.storage import SQLiteSessionStorage
from engine.storage.migrations import MIGRATIONS, SCHEMA_VERSION

DUMPS = sorted((Path(__file__).parent / "storage_helpers").glob("schema_v*.sql"))
T = 1764400000.0

#: What the version-1 dump holds, as messages.
V1_MESSAGES = [
    UserMessage(id="m1", created_at=T, content="List the files in /tmp, please"),
    AssistantMessage(
        id="m2",
        created_at=T + 1,
        content="Let me look.",
        reasoning="A listing.",
        tool_calls=(ToolCall("call_1", "list_files", {"path": "/tmp"}),),
        usage=Usage(10, 20, 5, 3),
        model="gpt-test",
        provider_data={"signature": "abc=="},
    ),
    ToolMessage(
        id="m3", created_at=T + 2, tool_call_id="call_1", name="list_files", content="a\nb"
    ),
    AssistantMessage(
        id="m4",
        created_at=T + 3,
        content="Two files: a and b",
        stop=StopInfo(StopReason.MAX_OUTPUT, raw="length"),
    ),
    InternalMessage(
        id="m5",
        created_at=T + 4,
        content="Continue exactly where you stopped.",
        tag="resume:continue_response",
    ),
    ToolMessage(
        id="m6",
        created_at=T + 5,
        tool_call_id="call_9",
        name="write_file",
        content="declined",
        success=False,
    ),
    SystemMessage(id="m7", created_at=T + 6, content="Be brief."),
]


def build(dump: Path, path: Path) -> None:
    with sqlite3.connect(path) as raw:
        raw.executescript(dump.read_text(encoding="utf-8"))
    raw.close()


def test_every_schema_version_has_a_dump() -> None:
    assert [d.name for d in DUMPS] == [f"schema_v{n}.sql" for n in range(1, SCHEMA_VERSION + 1)]


@pytest.mark.parametrize("dump", DUMPS, ids=[d.stem for d in DUMPS])
async def test_old_file_opens_migrates_and_reads(dump: Path, tmp_path: Path) -> None:
    path = tmp_path / f"{dump.stem}.sqlite3"
    build(dump, path)
    storage = SQLiteSessionStorage(path)
    try:
        sessions = await storage.list_sessions()
        assert [s.id for s in sessions] == ["chat-2", "chat-1"]
        assert sessions[1].title == "List the files in /tmp, please"
        assert sessions[1].metadata == {"provider": "openai", "model": "gpt-test"}
        assert await storage.load("chat-1") == V1_MESSAGES
        assert await storage.append("chat-1", "req-2", UserMessage(content="more")) == 8
    finally:
        await storage.close()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        names = [r[0] for r in raw.execute("SELECT name FROM schema_migrations ORDER BY name")]
    raw.close()
    assert names == [m.name for m in MIGRATIONS]


@pytest.mark.parametrize("dump", DUMPS, ids=[d.stem for d in DUMPS])
async def test_tool_starts_after_migration(dump: Path, tmp_path: Path) -> None:
    """Version 3 records tool starts from its migration's time; older records are kept."""
    path = tmp_path / f"{dump.stem}.sqlite3"
    build(dump, path)
    storage = SQLiteSessionStorage(path)
    try:
        since = await storage.tool_starts_recorded_since()
        started = await storage.started_tool_calls("chat-1", ["call_1", "call_9"])
        if dump.stem not in ("schema_v1", "schema_v2"):
            assert since == 1764400020.0 and started == {"call_1"}
        else:
            assert since > T + 10 and started == set()  # migrated now: nothing recorded yet
        assert await storage.load("chat-1") == V1_MESSAGES  # never a message
    finally:
        await storage.close()


async def test_calls_asked_before_the_migration_are_never_said_not_to_have_run(
    tmp_path: Path,
) -> None:
    """A call an older version asked for has no start record even if it ran: it stays "may
    or may not have completed"; a call asked for after the migration without one did not run."""
    from engine import Agent, AgentRunConfig
    from engine.storage import SQLiteSessionExtension

    path = tmp_path / "old.sqlite3"
    build(DUMPS[1], path)  # version 2: no tool starts
    with sqlite3.connect(path) as raw:  # the older version's process died while call_1 ran
        raw.execute("INSERT INTO sessions SELECT 'legacy', title, created_at, updated_at, "
                    "metadata FROM sessions WHERE id = 'chat-1'")
        raw.execute("INSERT INTO messages SELECT 'legacy', seq, request_id, id, type, "
                    "created_at, body FROM messages WHERE session_id = 'chat-1' AND seq <= 2")
    raw.close()
    ext = SQLiteSessionExtension(path)
    try:
        legacy = await Agent(None, AgentRunConfig("legacy"), extensions=[ext]).resume_point()
        assert legacy is not None and legacy.kind.value == "recover_tools"
        assert [c.id for c in legacy.unanswered_tool_calls] == ["call_1"]
        assert legacy.not_started == ()
        assert "may or may not" in legacy.description
        # The same history asked for now, under this version, with no start record.
        await ext.storage.append("fresh", "r", UserMessage(content="List the files"))
        await ext.storage.append("fresh", "r", AssistantMessage(tool_calls=V1_MESSAGES[1].tool_calls))
        fresh = await Agent(None, AgentRunConfig("fresh"), extensions=[ext]).resume_point()
        assert fresh is not None and [c.id for c in fresh.not_started] == ["call_1"]
        assert "did not run" in fresh.description
    finally:
        await ext.close()


@pytest.mark.parametrize("dump", DUMPS[:3], ids=[d.stem for d in DUMPS[:3]])
async def test_a_file_from_before_the_tree_becomes_one_branch(dump: Path, tmp_path: Path) -> None:
    """Version 4 gives every message the one before it as its parent and makes the last
    message the active leaf: the history reads as before, and a new branch can start."""
    path = tmp_path / f"{dump.stem}.sqlite3"
    build(dump, path)
    storage = SQLiteSessionStorage(path)
    try:
        assert await storage.load("chat-1") == V1_MESSAGES
        assert await storage.load("chat-2") == []
        for message in V1_MESSAGES:
            assert await storage.siblings("chat-1", message.id) == [message.id]
        assert await storage.parent_of("chat-1", "m1") == (None, "user")
        assert await storage.parent_of("chat-1", "m4") == ("m3", "assistant")
        tail = await storage.load_tail("chat-1", 3)
        assert [r.seq for r in tail] == [5, 6, 7]
        # A second answer beside m2: the history follows the new branch, m2's stays.
        await storage.branch_from("chat-1", "m1")
        await storage.append("chat-1", "req-2", AssistantMessage(id="m2b", content="Again"))
        assert [m.id for m in await storage.load("chat-1")] == ["m1", "m2b"]
        assert await storage.siblings("chat-1", "m2b") == ["m2", "m2b"]
        assert await storage.switch_to("chat-1", "m2") == "m7"
        assert await storage.load("chat-1") == V1_MESSAGES
    finally:
        await storage.close()
    with sqlite3.connect(path) as raw:
        parents = raw.execute(
            "SELECT seq, parent_seq FROM messages WHERE session_id = 'chat-1' ORDER BY seq"
        ).fetchall()
    raw.close()
    assert parents[:7] == [(1, None), (2, 1), (3, 2), (4, 3), (5, 4), (6, 5), (7, 6)]
