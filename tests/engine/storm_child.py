"""The kill storm's child: a mixed workload on one conversation file, run until it is killed.

Usage: ``python -m tests.engine.storm_child DB SIDE_FILE WORK_DIR SEED``.

Two workers share one storage (as the window's conversations do), each on its own
conversation, and loop until the parent SIGKILLs the process: Resume when the conversation
offers it (as a person would after a crash), else send (a third of the answers ask for the
``act`` tool first), regenerate, edit a question on the path, switch to another version; the
first worker also imports a generated Continuo JSON export. The model streams its answers in
paced pieces, each answer opening with a unique token, so the parent can find what it saw.

Everything the parent needs is one line on stdout, flushed, in the order it happened::

    ready <mended paths>             the file is open (what opening it mended: must be 0)
    request <sid> <kind>             a request is about to start (send/regenerate/edit/resume)
    step <sid>                       a model call started
    text <sid> <token> <chars>       the answer ``token`` has shown ``chars`` characters
    ack <sid> <id> <parent id | ->   a message is committed, under that parent
    toolstart <sid> <call id>        a tool call's start is committed; the tool runs next
    switch <sid> <message id>        a switch to another version is about to be written
    import <conversation id> <n>     an import of ``n`` messages is about to start
    imported <conversation id>       it is stored

The ``act`` tool appends its call id to SIDE_FILE before it returns: a call id there twice is
a tool that ran twice.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from engine import (
    Agent,
    AgentEventType,
    AgentRunConfig,
    AssistantMessage,
    ModelEvent,
    ModelResponse,
    ToolCall,
    ToolMessage,
    UserMessage,
    import_file,
    tool,
)
from engine.storage import SQLiteSessionExtension

SESSIONS = ("s1", "s2")
#: seconds between draft saves: what was shown a second before a kill must be on disk,
#: counting the write and a loaded machine's delays
DRAFT_INTERVAL = 0.3


def say(*parts: object) -> None:
    # One write of the whole line (print writes its parts one by one: a kill between two
    # would leave half a line).
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


class Store(SQLiteSessionExtension):
    """The real SQLite hooks; each committed message and tool start is told to the parent."""

    async def append(self, ctx, message, **where) -> None:  # type: ignore[no-untyped-def]
        await super().append(ctx, message, **where)
        parent, _kind = await self.storage.parent_of(ctx.session_id, message.id)
        say("ack", ctx.session_id, message.id, parent or "-")

    async def record_tool_start(self, ctx, call) -> None:  # type: ignore[no-untyped-def]
        await super().record_tool_start(ctx, call)
        say("toolstart", ctx.session_id, call.id)


class Model:
    """Answers in paced pieces; asks for ``act`` first when the coin says so."""

    name = "storm"

    def __init__(self, rng: random.Random, sid: str) -> None:
        self.rng, self.sid = rng, sid

    async def stream(self, request: Any) -> Any:
        rng = self.rng
        last = request.messages[-1] if request.messages else None
        if not isinstance(last, ToolMessage) and rng.random() < 0.33:
            await asyncio.sleep(rng.uniform(0.0, 0.2))  # thinking: the pace of the workload
            call_id = f"call-{uuid.uuid4().hex[:12]}"
            call = ToolCall(call_id, "act", {"call": call_id})
            yield ModelEvent.completed(ModelResponse(AssistantMessage(tool_calls=(call,))))
            return
        token = f"«{self.sid}-{uuid.uuid4().hex[:10]}»"
        words = [token] + [f"word{rng.randint(0, 999)}" for _ in range(rng.randint(5, 60))]
        text = " ".join(words)
        pieces = max(1, len(words) // 2)
        size = -(-len(text) // pieces)
        for start in range(0, len(text), size):
            yield ModelEvent.text(text[start : start + size])
            await asyncio.sleep(rng.uniform(0.01, 0.08))  # a provider's pace
        yield ModelEvent.completed(ModelResponse(AssistantMessage(content=text)))


def make_act(side_file: Path, rng: random.Random) -> Any:
    @tool
    async def act(call: str) -> str:
        """Do something that must happen once.

        Args:
            call: the id of the call (the model passes its own).
        """
        await asyncio.sleep(rng.uniform(0.0, 0.15))  # the tool's own pace
        with side_file.open("a", encoding="utf-8") as out:
            out.write(f"{call}\n")
        await asyncio.sleep(rng.uniform(0.0, 0.15))
        return f"done {call}"

    return act


async def drive(events: Any, sid: str) -> None:
    """Run a request to its end, telling the parent each step and what each answer showed."""
    shown = ""
    async for event in events:
        if event.type is AgentEventType.MODEL_STARTED:
            say("step", sid)
            shown = ""
        elif event.type is AgentEventType.TEXT_DELTA:
            shown += event.delta
            if "»" in shown:
                say("text", sid, shown.split("»", 1)[0] + "»", len(shown))


async def worker(
    store: Store, sid: str, rng: random.Random, side_file: Path, work: Path, imports: bool
) -> None:
    config = AgentRunConfig(sid, draft_interval=DRAFT_INTERVAL)
    agent = Agent(Model(rng, sid), config, [make_act(side_file, rng)], [store])
    storage = store.storage
    count = 0
    while True:
        count += 1
        if await agent.resume_point() is not None:
            say("request", sid, "resume")
            await drive(agent.stream_resume(), sid)
            continue
        path = await storage.load(sid)
        questions = [m for m in path if isinstance(m, UserMessage)]
        roll = rng.random()
        if imports and roll < 0.08:
            await do_import(storage, work, rng)
        elif not questions or roll < 0.45:
            say("request", sid, "send")
            await drive(agent.stream(f"question {count} {rng.randint(0, 999)}"), sid)
        elif roll < 0.62:
            answers = [m for m in path if isinstance(m, AssistantMessage)]
            target = rng.choice([None, *(a.id for a in answers)]) if answers else None
            say("request", sid, "regenerate")
            await drive(agent.stream_regenerate(target), sid)
        elif roll < 0.8:
            target = rng.choice(questions)
            say("request", sid, "edit")
            await drive(agent.stream_edit(target.id, f"edited {count}"), sid)
        else:
            message = rng.choice(path)
            versions = await storage.siblings(sid, message.id)
            chosen = rng.choice(versions)
            say("switch", sid, chosen)
            await agent.switch_to(chosen)


async def do_import(storage: Any, work: Path, rng: random.Random) -> None:
    """Import one generated conversation of a few hundred messages (two branches)."""
    cid = f"imported-{uuid.uuid4().hex[:10]}"
    n = rng.randint(50, 400)
    now = time.time()
    messages = []
    for seq in range(1, n + 1):
        kind = "user" if seq % 2 else "assistant"
        parent = None if seq == 1 else (seq - 1 if seq != n else seq - 2)
        body = {"v": 1, "type": kind, "id": f"{cid}-{seq}", "created_at": now, "content": f"m{seq}"}
        messages.append({"seq": seq, "parent_seq": parent, "request_id": "import", "message": body})
    document = {
        "format": "continuo-export",
        "version": 1,
        "exported_at": now,
        "conversations": [
            {
                "id": cid,
                "title": cid,
                "created_at": now,
                "updated_at": now,
                "metadata": {},
                "active_seq": n,
                "tool_starts": [],
                "messages": messages,
            }
        ],
    }
    file = work / f"{cid}.json"
    file.write_text(json.dumps(document), encoding="utf-8")
    say("import", cid, n)
    await import_file(storage, file)
    say("imported", cid)


async def main_async(db: str, side_file: str, work: str, seed: int) -> None:
    store = Store(db)
    mended = await store.storage.mended()
    say("ready", len(mended))
    rngs = [random.Random(f"{seed}-{sid}") for sid in SESSIONS]
    await asyncio.gather(
        *(
            worker(store, sid, rng, Path(side_file), Path(work), imports=(sid == SESSIONS[0]))
            for sid, rng in zip(SESSIONS, rngs, strict=True)
        )
    )


def main() -> None:
    db, side_file, work, seed = sys.argv[1:5]
    asyncio.run(main_async(db, side_file, work, int(seed)))


if __name__ == "__main__":
    main()
