"""A request running tools in a child process, so the parent can SIGKILL it mid-batch.

Usage: ``python -m tests.engine.tool_start_child DB SESSION MODE FILE``.

The scripted model asks for tools; each tool, when invoked, appends one line naming itself
to FILE (so the parent knows whether and how often it ran). The child prints one marker line
(flushed) at the instant the parent kills it, then waits forever:

* ``approval``: one call, ``get_time``; a ``before_tool`` hook waits for an answer that never
  comes (as an approval card would) after printing ``waiting get_time``;
* ``running``: one call, ``get_time``; the tool appends its line, prints ``running get_time``
  and sleeps;
* ``batch``: two calls, ``get_time`` then ``send_mail``; ``get_time`` runs as in
  ``running``, so ``send_mail`` never starts;
* ``second``: two calls, ``get_time`` then ``send_mail``; ``get_time`` runs and returns,
  then the hook waits on ``send_mail``'s approval after printing ``waiting send_mail``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from engine import Agent, AgentRunConfig, Extension, ToolCall
from engine.storage import SQLiteSessionExtension
from tests.support.scripted import ScriptedModel, Turn

QUESTION = "What time is it? Then mail it to me."


def main() -> None:
    db, session, mode, file = sys.argv[1:5]
    asyncio.run(run(db, session, mode, Path(file)))


async def run(db: str, session: str, mode: str, file: Path) -> None:
    forever = asyncio.Event()  # never set

    def ran(name: str) -> None:
        with file.open("a", encoding="utf-8") as out:
            out.write(f"{name}\n")

    async def get_time() -> str:
        """The time now."""
        ran("get_time")
        if mode in ("running", "batch"):
            print("running get_time", flush=True)
            await forever.wait()
        return "12:00"

    async def send_mail() -> str:
        """Send the time by mail."""
        ran("send_mail")
        return "sent"

    waits_on = {"approval": "get_time", "second": "send_mail"}.get(mode)

    class Approval(Extension):
        async def before_tool(self, ctx, call):
            if call.name == waits_on:
                print(f"waiting {call.name}", flush=True)
                await forever.wait()
            return None

    calls = [ToolCall("call_time", "get_time", {})]
    if mode in ("batch", "second"):
        calls.append(ToolCall("call_mail", "send_mail", {}))
    model = ScriptedModel([Turn(tool_calls=calls), Turn(text="Done.")])
    store = SQLiteSessionExtension(db)
    try:
        agent = await Agent.create(
            model,
            config=AgentRunConfig(session),
            tools=[get_time, send_mail],
            extensions=[store, Approval()],
        )
        await agent.run(QUESTION)
        print("finished", flush=True)  # never reached: killed before
    finally:
        # Closed, so a child that finishes (a bug) exits, and the parent fails at once
        # instead of waiting for a marker from a process kept alive by its connection.
        await store.close()


if __name__ == "__main__":
    main()
