"""Take a session's lease on a database file, say "held", and keep it until stdin closes.

Run as ``python hold_lease.py <database> <session id>`` by the lease tests: a real second
process holding the lease, which the test then kills with SIGKILL.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from engine.storage import SQLiteSessionStorage  # noqa: E402


async def main(path: str, session_id: str) -> None:
    storage = SQLiteSessionStorage(path)
    lease = await storage.acquire_lease(session_id)
    print("held", flush=True)
    # Wait for stdin to close (or a line), without blocking the loop's heartbeat.
    await asyncio.to_thread(sys.stdin.readline)
    await lease.release()
    await storage.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
