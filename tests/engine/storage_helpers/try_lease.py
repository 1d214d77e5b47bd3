"""Try once to take a session's lease; print "acquired", or "busy <holder pid>".

Run as ``python try_lease.py <database> <session id>`` by the lease tests, to see the lease
from another process while the test holds it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from engine.errors import AgentBusyError  # noqa: E402
from engine.storage import SQLiteSessionStorage  # noqa: E402


async def main(path: str, session_id: str) -> None:
    storage = SQLiteSessionStorage(path)
    try:
        lease = await storage.acquire_lease(session_id)
    except AgentBusyError as exc:
        print(f"busy {exc.holder.pid}", flush=True)
    else:
        await lease.release()
        print("acquired", flush=True)
    finally:
        await storage.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
