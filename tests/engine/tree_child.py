"""One tree operation in a child process, killed by the parent (SIGKILL) mid-answer.

Usage: ``python -m tests.engine.tree_child DB SESSION OP TEXT [MESSAGE_ID]`` with OP one of
``send``, ``regenerate``, ``edit``. The model streams an answer beginning with TEXT; once the
streaming draft of it is stored, the child prints ``ready`` (flushed) and blocks until killed.
"""

from __future__ import annotations

import asyncio
import sys

from engine import Agent, AgentRunConfig, ModelEvent
from engine.storage import SQLiteSessionExtension


class _Store(SQLiteSessionExtension):
    async def save_draft(self, ctx, message, **where) -> None:  # type: ignore[no-untyped-def]
        await super().save_draft(ctx, message, **where)
        print("ready", flush=True)


class _Hanging:
    name = "hanging"

    def __init__(self, text: str) -> None:
        self.text = text

    async def stream(self, request):  # type: ignore[no-untyped-def]
        yield ModelEvent.text(self.text)
        await asyncio.Event().wait()  # the parent kills this process here


async def run(db: str, session: str, op: str, text: str, message_id: str | None) -> None:
    store = _Store(db)
    agent = await Agent.create(
        _Hanging(f"{text}-draft"),
        config=AgentRunConfig(session, draft_interval=0.01),
        extensions=[store],
    )
    if op == "send":
        events = agent.stream(text)
    elif op == "regenerate":
        events = agent.stream_regenerate()
    else:
        assert message_id is not None
        events = agent.stream_edit(message_id, text)
    async for _event in events:
        pass


def main() -> None:
    db, session, op, text = sys.argv[1:5]
    message_id = sys.argv[5] if len(sys.argv) > 5 else None
    asyncio.run(run(db, session, op, text, message_id))


if __name__ == "__main__":
    main()
