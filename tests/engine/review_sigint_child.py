"""A script using `SyncAgent` whose request hangs mid-answer until Ctrl-C (SIGINT).

Usage: ``python -m tests.engine.review_sigint_child DB``. Prints ``ready`` once the partial
text has streamed, then reports what the script sees after catching ``KeyboardInterrupt``:
the resume point and the resumed answer (``busy`` if the session is still held).
"""

from __future__ import annotations

import asyncio
import sys

from engine import (
    AgentBusyError,
    AgentRunConfig,
    AssistantMessage,
    ModelEvent,
    ModelResponse,
    SyncAgent,
)
from engine.storage import SQLiteSessionExtension


class HangingModel:
    """First call: streams a partial answer, then hangs like a stalled connection."""

    name = "hanging"

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request):
        self.calls += 1
        if self.calls == 1:
            yield ModelEvent.text("Partial ")
            print("ready", flush=True)
            await asyncio.Event().wait()  # only a cancellation ends this
        yield ModelEvent.text("Whole answer.")
        yield ModelEvent.completed(ModelResponse(AssistantMessage(content="Whole answer.")))


def main() -> None:
    extension = SQLiteSessionExtension(sys.argv[1])
    with SyncAgent(HangingModel(), config=AgentRunConfig("s"), extensions=[extension]) as agent:
        try:
            agent.run("Tell me")
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        point = agent.resume_point()
        print("point", point.kind.value if point else None, flush=True)
        try:
            print("resumed", agent.resume().content, flush=True)
        except AgentBusyError:
            print("busy", flush=True)


if __name__ == "__main__":
    main()
