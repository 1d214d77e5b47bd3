"""One request of a real agent on a shared database file, for the lease-fence story.

Run as ``python lease_story.py <database> <session id> <text> <stale after> <host> [--wait]``:

* it sends ``<text>`` through an `Agent` backed by `SQLiteSessionExtension`; the model
  streams a first delta and, with ``--wait``, prints ``streaming`` and waits for a line on
  stdin before it completes its answer ``answer to <text>``;
* ``<host>`` (``-`` for the machine's own) is the host name its leases record, so a test
  can play a second machine sharing the file;
* the heartbeat is an hour: while the test has this process stopped (SIGSTOP) it is never
  caught inside a write transaction, and its lease goes stale for the other "machine".

Prints ``done`` when the request succeeded, else ``<error class>: <message>``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from engine import Agent, AgentRunConfig, AssistantMessage, ModelEvent, ModelResponse  # noqa: E402
from engine.errors import ContinuoError  # noqa: E402
from engine.storage import SQLiteSessionExtension, SQLiteSessionStorage  # noqa: E402


class GatedModel:
    """Streams a first delta, then waits for a line on stdin (if asked) before finishing."""

    name = "gated"

    def __init__(self, wait_for_stdin: bool) -> None:
        self.wait_for_stdin = wait_for_stdin

    async def stream(self, request):  # type: ignore[no-untyped-def]
        asked = request.messages[-1].content
        yield ModelEvent.text("answer ")
        if self.wait_for_stdin:
            print("streaming", flush=True)
            await asyncio.to_thread(sys.stdin.readline)
        answer = AssistantMessage(content=f"answer to {asked}")
        yield ModelEvent.completed(ModelResponse(message=answer))


async def main(path: str, session_id: str, text: str, stale_after: str, host: str) -> None:
    storage = SQLiteSessionStorage(
        path,
        lease_stale_after=float(stale_after),
        heartbeat_interval=3600,
        lease_host=None if host == "-" else host,
    )
    extension = SQLiteSessionExtension(storage)
    agent = await Agent.create(
        GatedModel(wait_for_stdin="--wait" in sys.argv[6:]),
        AgentRunConfig(session_id),
        extensions=[extension],
    )
    try:
        await agent.run(text)
    except ContinuoError as exc:
        print(f"{type(exc).__name__}: {exc}", flush=True)
    else:
        print("done", flush=True)
    finally:
        await extension.close()
        await storage.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
