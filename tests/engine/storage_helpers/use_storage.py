"""Open a database file and append one message; print what happened as one JSON line.

Run as ``python use_storage.py <database>`` by the refusal tests, as a user the operating
system really refuses: when the tests run as root (where file modes do not stop writes), they
start this script as ``nobody``. Prints ``{"error": <class or null>, "message": <text>, "zh": <the Chinese>}``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from engine.errors import StorageError  # noqa: E402
from engine.messages import UserMessage  # noqa: E402
from engine.storage import SQLiteSessionStorage  # noqa: E402


async def main(path: str) -> None:
    storage = SQLiteSessionStorage(path)
    try:
        await storage.append("s", "r", UserMessage(content="hello"))
    except StorageError as exc:
        said = {"message": str(exc), "zh": exc.sentence("zh_CN")}
        print(json.dumps({"error": type(exc).__name__, **said}), flush=True)
    else:
        print(json.dumps({"error": None, "message": ""}), flush=True)
    finally:
        await storage.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
