"""Export and read benchmarks: a big export and a big ChatGPT import read, each against a baseline.

These were wall-clock bounds inside `make test` ("< 5 s"), which a loaded two-core machine
could break; the tests now check the behaviour (pages written as they come, memory flat, the
file read a conversation at a time) and the times are here (issue 18).

- Exporting one conversation of 20,000 messages to JSON (`export_conversations`), against
  loading the same 20,000 messages from the same file (`SQLiteSessionStorage.load`) in the
  same run. Target: under 5 s.
- Reading a 30 MB ChatGPT ``conversations.json`` a conversation at a time
  (`engine.archive.chatgpt.read_conversations`, every message parsed), against ``json.load``
  of the whole file (what streaming avoids) in the same run. Target: under 5 s.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from engine.archive import export_conversations
from engine.archive.chatgpt import read_conversations
from engine.archive.records import ImportedConversation
from engine.storage.sqlite import SQLiteSessionStorage
from tests.engine.archive_helpers import big_conversation

EXPORT_MESSAGES = 20_000
CHATGPT_BYTES = 30_000_000
TARGET = 5.0  #: seconds, for each


async def _export(folder: Path) -> tuple[float, float]:
    """Seconds to export the conversation to JSON, and to load its messages."""
    storage = SQLiteSessionStorage(folder / "continuo.sqlite3")
    try:
        await storage.import_conversation(big_conversation(EXPORT_MESSAGES, words=3))
        start = time.perf_counter()
        report = await export_conversations(storage, folder / "big.json", "json")
        exported = time.perf_counter() - start
        assert report.messages == EXPORT_MESSAGES
        start = time.perf_counter()
        loaded = await storage.load("big")
        load = time.perf_counter() - start
        assert len(loaded) == EXPORT_MESSAGES
    finally:
        await storage.close()
    return exported, load


def _chatgpt_export(path: Path, size: int) -> int:
    """Write a ChatGPT export of about ``size`` bytes: conversations of ten messages."""
    count = 0
    with path.open("wb") as file:
        file.write(b"[")
        while file.tell() < size:
            nodes: dict[str, Any] = {"r": {"id": "r", "message": None, "parent": None}}
            parent = "r"
            for j in range(10):
                node = f"c{count}-{j}"
                nodes[node] = {
                    "id": node,
                    "parent": parent,
                    "children": [],
                    "message": {
                        "author": {"role": "user" if j % 2 == 0 else "assistant"},
                        "create_time": 1.7e9 + j,
                        "content": {
                            "content_type": "text",
                            "parts": [f"Message {j} of conversation {count} 😀 " * 120],
                        },
                        "metadata": {"model_slug": "gpt-4o"},
                        "recipient": "all",
                    },
                }
                parent = node
            conversation = {"title": f"c{count}", "mapping": nodes, "id": f"c{count}"}
            file.write((b"," if count else b"") + json.dumps(conversation).encode())
            count += 1
        file.write(b"]")
    return count


def _chatgpt_read(folder: Path) -> tuple[float, float, int]:
    """Seconds to read the export streamed, and to json.load it whole; its size."""
    path = folder / "conversations.json"
    count = _chatgpt_export(path, CHATGPT_BYTES)
    start = time.perf_counter()
    messages = 0
    with path.open("rb") as file:
        for item in read_conversations(file):
            assert isinstance(item, ImportedConversation), item
            messages += len(item.messages)
    streamed = time.perf_counter() - start
    assert messages == count * 10
    start = time.perf_counter()
    with path.open("rb") as file:
        whole = json.load(file)
    loaded = time.perf_counter() - start
    assert len(whole) == count
    return streamed, loaded, path.stat().st_size


def main() -> list[str]:
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        exported, load = asyncio.run(_export(Path(tmp)))
        print(
            f"export of {EXPORT_MESSAGES:,} messages to JSON: {exported * 1e3:8.0f} ms"
            f"  ({exported / load:.1f}x loading them, {load * 1e3:.0f} ms; target < {TARGET:g} s)"
        )
        if exported > TARGET:
            missed.append(f"export of {EXPORT_MESSAGES:,} messages {exported:.1f} s > {TARGET:g} s")
    with tempfile.TemporaryDirectory() as tmp:
        streamed, loaded, size = _chatgpt_read(Path(tmp))
        print(
            f"reading a {size / 1e6:.0f} MB ChatGPT export streamed: {streamed * 1e3:8.0f} ms"
            f"  ({streamed / loaded:.1f}x json.load of the whole file, {loaded * 1e3:.0f} ms;"
            f" target < {TARGET:g} s)"
        )
        if streamed > TARGET:
            missed.append(f"reading a {size / 1e6:.0f} MB ChatGPT export {streamed:.1f} s")
    return missed
