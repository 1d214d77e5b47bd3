"""A request streaming in a child process, so the parent can SIGKILL it while it streams.

Usage: ``python -m tests.engine.draft_child DB SESSION MODE [URL]``.

* ``text``, ``reasoning``, ``tool``: a scripted model streams (text; reasoning only; text then
  half a tool call), waits until the streaming draft holding all of it is saved, prints
  ``ready`` (flushed) and blocks on stdin; the parent kills it there.
* ``provider``: streams a long answer from the loopback provider at URL (OpenAI wire) with
  the default draft interval, and prints ``delta <time.monotonic()> <json text>`` for each
  text delta as it arrives, so the parent knows what arrived when.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from engine import Agent, AgentRunConfig, AssistantMessage, ModelEvent
from engine.storage import SQLiteSessionExtension

QUESTION = "Tell me a long story"
TEXT = "Once upon a time there was a draft that survived a kill."
REASONING = "The person wants a story; think it through before writing."


class NotingExtension(SQLiteSessionExtension):
    """Storage that also says when a draft showing everything streamed was saved."""

    def __init__(self, path: str, expected: AssistantMessage, withheld: list[str]) -> None:
        super().__init__(path)
        self.expected = expected
        self.withheld = withheld
        self.saved = asyncio.Event()

    async def save_draft(self, ctx, message, **where):
        await super().save_draft(ctx, message, **where)
        shown = (
            message.content,
            message.reasoning,
            message.stop.details.get("withheld_tool_calls", []),
        )
        if shown == (self.expected.content, self.expected.reasoning, self.withheld):
            self.saved.set()


async def scripted(db: str, session: str, mode: str) -> None:
    content = "" if mode == "reasoning" else TEXT
    reasoning = REASONING if mode == "reasoning" else ""
    withheld = ["write_file"] if mode == "tool" else []
    storage = NotingExtension(db, AssistantMessage(content=content, reasoning=reasoning), withheld)

    class Streaming:
        name = "scripted"

        async def stream(self, request):
            if reasoning:
                yield ModelEvent.reasoning(reasoning[:20])
                yield ModelEvent.reasoning(reasoning[20:])
            for word in content.split(" ") if content else ():
                yield ModelEvent.text(word if word == content.split(" ")[-1] else word + " ")
            if mode == "tool":
                yield ModelEvent.tool_call_delta(0, id="call_1", name="write_file")
                yield ModelEvent.tool_call_delta(0, arguments='{"name": "a.t')
            await storage.saved.wait()
            print("ready", flush=True)
            await asyncio.to_thread(sys.stdin.readline)  # killed before this returns

    agent = await Agent.create(
        Streaming(),
        config=AgentRunConfig(session, draft_interval=0.05),
        extensions=[storage],
    )
    await agent.run(QUESTION)


async def provider(db: str, session: str, url: str) -> None:
    from engine.providers import OpenAIChatModel

    model = OpenAIChatModel(model="loopback", base_url=url)
    storage = SQLiteSessionExtension(db)
    agent = await Agent.create(model, config=AgentRunConfig(session), extensions=[storage])
    out = sys.stdout
    async for event in agent.stream(QUESTION):
        if event.delta and event.type.value == "text_delta":
            out.write(f"delta {time.monotonic()!r} {json.dumps(event.delta)}\n")
            out.flush()
    print("finished", flush=True)


def main() -> None:
    db, session, mode = sys.argv[1:4]
    if mode == "provider":
        asyncio.run(provider(db, session, sys.argv[4]))
    else:
        asyncio.run(scripted(db, session, mode))


if __name__ == "__main__":
    main()
