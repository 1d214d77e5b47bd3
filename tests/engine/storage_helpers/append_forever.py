"""Append messages to a session until killed, printing each seq once its append returned.

Run as ``python append_forever.py <database> <session id> <synchronous>`` by the crash
tests: every seq printed was acknowledged as stored, so after a SIGKILL each one must be in
the file.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from engine.messages import AssistantMessage, UserMessage  # noqa: E402
from engine.storage import SQLiteSessionStorage  # noqa: E402


async def main(path: str, session_id: str, synchronous: str) -> None:
    storage = SQLiteSessionStorage(path, synchronous=synchronous)  # type: ignore[arg-type]
    i = 0
    while True:
        i += 1
        message = (
            UserMessage(content=f"question {i}")
            if i % 2
            else AssistantMessage(content=f"answer {i} " + "words " * 50)
        )
        seq = await storage.append(session_id, f"req-{i}", message)
        print(seq, flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
