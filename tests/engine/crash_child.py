"""A request run in a child process, paused at a named instant so the parent can SIGKILL it.

Usage: ``python -m tests.engine.crash_child DB SESSION INSTANT RUNLOG``. At the instant it prints
``ready <instant>`` (flushed) and blocks on stdin; the parent kills it there. Tools append
``start NAME`` / ``end NAME`` lines to RUNLOG (fsynced), the proof that no tool runs twice.
"""

from __future__ import annotations

import asyncio
import os
import sys

from engine import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    Extension,
    ModelEvent,
    ModelResponse,
    ToolCall,
    tool,
)
from engine.storage import SQLiteSessionExtension


def log_line(path: str, line: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())


async def wait_forever(instant: str) -> None:
    print(f"ready {instant}", flush=True)
    await asyncio.to_thread(sys.stdin.readline)  # the parent kills us before this returns


def main() -> None:
    db, session, instant, runlog = sys.argv[1:5]

    @tool
    async def write_file(name: str) -> str:
        """Write a file.

        Args:
            name: the file.
        """
        log_line(runlog, f"start {name}")
        if instant == "mid-tool" and name == "a.txt":
            await wait_forever(instant)
        log_line(runlog, f"end {name}")
        return f"wrote {name}"

    class SlowModel:
        name = "slow"

        def __init__(self) -> None:
            self.calls = 0

        async def stream(self, request):
            self.calls += 1
            if self.calls == 1:
                text = "I will write both files. "
                for i, word in enumerate(text.split(" ")):
                    yield ModelEvent.text(word + " ")
                    if instant == "mid-stream" and i == 2:
                        await wait_forever(instant)
                calls = (
                    ToolCall("a", "write_file", {"name": "a.txt"}),
                    ToolCall("b", "write_file", {"name": "b.txt"}),
                )
                yield ModelEvent.completed(
                    ModelResponse(AssistantMessage(content=text, tool_calls=calls))
                )
            else:
                yield ModelEvent.completed(ModelResponse(AssistantMessage(content="Both written.")))

    class Pause(Extension):
        async def after_tool(self, ctx, call, result):
            if instant == "between-results" and call.id == "a":
                await wait_forever(instant)

        async def before_model(self, ctx, request):
            if instant == "holding-lease":
                await wait_forever(instant)

    async def run() -> None:
        storage = SQLiteSessionExtension(db)
        agent = await Agent.create(
            SlowModel(),
            # No streaming draft is saved here (the interval outlasts the test): these kills
            # prove the history a kill leaves without one (test_drafts has the other case).
            config=AgentRunConfig(session, draft_interval=3600),
            tools=[write_file],
            extensions=[storage, Pause()],
        )
        await agent.run("Write a.txt and b.txt")
        await storage.close()
        print("finished", flush=True)

    asyncio.run(run())


if __name__ == "__main__":
    main()
