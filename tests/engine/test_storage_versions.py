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
