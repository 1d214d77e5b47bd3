"""Conversations to export and import, and a raw look at what a database file holds.

`seed` writes, through the storage's own methods, conversations with what an export must
carry: branches with a shown version that is not the newest, tool calls with start
records, reasoning, usage, a cut answer, settings (with a secret that must never leave) and
an empty conversation. `snapshot` reads a file with plain ``sqlite3``, so a comparison does
not depend on the code under test.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from engine.archive.records import ImportedConversation, ImportedMessage
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
from engine.storage.sqlite import SQLiteSessionStorage

#: a key-shaped value kept under a secret-looking name, and one under an innocent name
SECRET = "sk-proj-Zq7SECRETxY4nB81mKk2Pw9"
SECRET_TOO = "Bearer tok-live-SECRET-3f9a8b7c"
METADATA: dict[str, Any] = {
    "provider_id": "openai",
    "model": "gpt-4.1",
    "tool_servers_off": ["files"],
    "system_prompt": "Be brief.",
    "api_key": SECRET,
    "nested": {"Authorization": SECRET_TOO, "kept": 1},
    "note": f"pasted by mistake: {SECRET}",
}

#: every way a message could try to run or load something in a page
HOSTILE = (
    "<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n"
    "[x](javascript:alert(1)) [y](JAVASCRIPT:alert(2)) [z](vbscript:msgbox) "
    "[f](file:///etc/passwd) [r](relative/page.html) <javascript:alert(3)>\n\n"
    "![](/dev/zero) ![cat](https://example.com/cat.png) [ok](https://example.com/)\n\n"
    '<a href="javascript:alert(4)" onclick="alert(5)">a</a> <svg onload=alert(6)>'
    "<iframe src=//evil></iframe><style>body{display:none}</style>"
)


async def seed(storage: SQLiteSessionStorage) -> None:
    """Three conversations: "trip" (branches, tools), "hostile" (markup) and "empty"."""
    s = "trip"
    await storage.create_session(s, title="A trip to Lyon", metadata=METADATA)
    await storage.append(s, "r1", SystemMessage(content="You plan trips."))
    question = UserMessage(content="Plan a day in Lyon. ![map](/dev/zero)")
    await storage.append(s, "r1", question)
    await storage.append(
        s,
        "r1",
        AssistantMessage(
            content="Let me look.",
            reasoning="The person wants a plan.\n\nCheck the weather first.",
            tool_calls=(ToolCall("call-1", "weather", {"city": "Lyon", "days": [1, 2]}),),
            usage=Usage(120, 30, 10, 100),
            model="gpt-4.1",
        ),
    )
    await storage.record_tool_start(s, "call-1")
    await storage.append(
        s,
        "r1",
        ToolMessage(tool_call_id="call-1", name="weather", content="```\nsunny, 24°C\n```"),
    )
    await storage.append(
        s,
        "r1",
        AssistantMessage(
            content="Morning: Fourvière. Afternoon: the old town…",
            stop=StopInfo(StopReason.MAX_OUTPUT, raw="length"),
            usage=Usage(200, 4096),
        ),
    )
    shown = (await storage.load(s))[-1]
    # A second version of the first answer, then back to the first one: the shown version
    # is not the newest branch.
    await storage.branch_from(s, question.id)
    await storage.append(s, "r2", AssistantMessage(content="A shorter plan: walk.", model="o3"))
    await storage.append(s, "r2", InternalMessage(content="resumed", tag="resume:continue"))
    await storage.switch_to(s, shown.id)

    await storage.create_session("hostile", title="<script>alert('title')</script>")
    await storage.append("hostile", "r", UserMessage(content=HOSTILE))
    await storage.append(
        "hostile",
        "r",
        AssistantMessage(
            content=HOSTILE,
            reasoning=HOSTILE,
            tool_calls=(ToolCall("c<script>", "<b onmouseover=x>", {"html": HOSTILE}),),
            model='<script>"model"</script>',
        ),
    )
    await storage.append(
        "hostile", "r", ToolMessage(tool_call_id="c<script>", name="<i onclick=1>", content=HOSTILE)
    )
    await storage.append(
        "hostile",
        "r",
        AssistantMessage(content="", stop=StopInfo(StopReason.INTERRUPTED, raw="cancelled")),
    )
    await storage.create_session("empty", title=None, metadata={"model": "llama3"})


def big_conversation(count: int, sid: str = "big", *, words: int = 12) -> ImportedConversation:
    """One branch of `count` messages (user, assistant, ...), built without storage."""
    messages = []
    for seq in range(1, count + 1):
        text = " ".join(f"word{seq}-{i}" for i in range(words))
        message = (
            UserMessage(content=text, created_at=1.7e9 + seq)
            if seq % 2
            else AssistantMessage(content=text, created_at=1.7e9 + seq, usage=Usage(seq, 1))
        )
        messages.append(ImportedMessage(seq, seq - 1 or None, message, request_id=f"r{seq // 2}"))
    return ImportedConversation(
        source="test",
        source_id=sid,
        session_id=sid,
        title=f"Big {sid}",
        created_at=1.7e9,
        updated_at=1.7e9 + count,
        messages=tuple(messages),
        active_seq=count,
    )


def snapshot(path: Path) -> dict[str, Any]:
    """Everything a conversation is, as the file holds it (plain sqlite3, read-only)."""
    if not path.exists():
        return {}
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        sessions = {
            sid: (title, created, updated, json.loads(meta), active)
            for sid, title, created, updated, meta, active in db.execute(
                "SELECT id, title, created_at, updated_at, metadata, active_seq FROM sessions"
            )
        }
        messages = {
            (sid, seq): (parent, request, mid, kind, created, json.loads(body))
            for sid, seq, parent, request, mid, kind, created, body in db.execute(
                "SELECT session_id, seq, parent_seq, request_id, id, type, created_at, body "
                "FROM messages"
            )
        }
        starts = set(db.execute("SELECT session_id, tool_call_id, started_at FROM tool_starts"))
        imports = {
            (source, source_id, sid)
            for source, source_id, sid in db.execute(
                "SELECT source, source_id, session_id FROM imports"
            )
        }
    finally:
        db.close()
    return {"sessions": sessions, "messages": messages, "tool_starts": starts, "imports": imports}


def files_in(folder: Path) -> set[str]:
    """The names in `folder` other than the database's own files."""
    return {p.name for p in folder.iterdir() if not p.name.startswith("continuo.sqlite3")}
