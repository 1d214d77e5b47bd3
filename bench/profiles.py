"""Data folders the benchmarks start Continuo on: a few tiny conversations, and a large one.

* `tiny_profile`: 20 conversations of two messages each, no settings file (the folder the
  start-up figures have always used).
* `large_profile`: what a person who has used Continuo for a long time has: 200
  conversations, 100,000 messages of 50 to some 2,000 characters (about 150 MB with the
  search index) and a ``settings.json`` with a provider (on a port nothing listens to, so
  listing its models fails at once, as an unreachable server does). Written once per `make bench` run (about 10 s): the file is made as the storage
  makes one (`prepare_database`: every migration, the real schema), the rows go in by bulk SQL with the index's triggers
  set aside, the index is rebuilt in one statement, and the triggers come back as they were
  (their SQL read from the file: the schema check on open sees exactly what it expects).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import random
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage, message_to_json
from engine.storage.migrations import prepare_database

__all__ = ["LARGE_CONVERSATIONS", "LARGE_MESSAGES", "DB_FILE", "large_profile", "tiny_profile"]

DB_FILE = "continuo.sqlite3"  #: `ui.controller.DB_FILE_NAME` (not imported: no Qt here)
LARGE_CONVERSATIONS = 200
LARGE_MESSAGES = 100_000
_INDEX_TRIGGERS = ("message_indexed", "message_unindexed", "message_reindexed")
_WORDS = (
    "the of and to in is that for it as with was on be by this are at from or have an they "
    "which one you were all we there can more has would their if when will about up out what "
    "model answer question storage network window message branch search export import backup "
    "python rust kernel thread socket memory cache latency server client request response "
    "function return value error list table index query file folder change test build"
).split()

_large: Path | None = None


async def _tiny(folder: Path) -> None:
    storage = SQLiteSessionStorage(folder / DB_FILE)
    try:
        for n in range(20):
            sid = f"chat-{n}"
            await storage.create_session(session_id=sid, title=f"Conversation {n}")
            await storage.append(sid, "r", UserMessage(content=f"Question {n}"))
            await storage.append(sid, "r", AssistantMessage(content=f"Answer {n}"))
    finally:
        await storage.close()


def tiny_profile(folder: Path) -> Path:
    """Write the tiny data folder into `folder` (which exists); return it."""
    asyncio.run(_tiny(folder))
    return folder


def large_profile() -> Path:
    """The large data folder, written on first use in this process (removed at exit)."""
    global _large
    if _large is None:
        folder = Path(tempfile.mkdtemp(prefix="continuo-bench-large-"))
        atexit.register(shutil.rmtree, folder, True)
        _write_large(folder)
        _large = folder
    return _large


def _text(rng: random.Random) -> str:
    # Most messages are short, a few long: about 370 characters on average.
    words = max(8, int(rng.expovariate(1 / 60)))
    return " ".join(rng.choices(_WORDS, k=min(words, 400))).capitalize() + "."


def _rows(rng: random.Random, per: int) -> Iterator[tuple[Any, ...]]:
    start = time.time() - 400 * 86400  # conversations spread over the last year or so
    for number in range(LARGE_MESSAGES):
        conversation, index = divmod(number, per)
        at = start + conversation * 2 * 86400 + index * 60
        kind = UserMessage if index % 2 == 0 else AssistantMessage
        message = kind(content=_text(rng), created_at=at)
        yield (
            f"conversation-{conversation:03d}",
            index + 1,
            f"request-{number // 2}",
            message.id,
            message.type_name,
            at,
            message_to_json(message),
            index or None,
        )


def _write_large(folder: Path) -> None:
    path = folder / DB_FILE
    per = LARGE_MESSAGES // LARGE_CONVERSATIONS

    prepare_database(path)  # every migration, as the storage makes a new file
    rng = random.Random(19)
    start = time.time() - 400 * 86400
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA synchronous = OFF")
        db.execute("BEGIN")
        triggers = [
            row[0]
            for name in _INDEX_TRIGGERS
            for row in db.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)
            )
        ]
        for name in _INDEX_TRIGGERS:
            db.execute(f"DROP TRIGGER {name}")
        db.executemany(
            "INSERT INTO sessions (id, title, created_at, updated_at, metadata, active_seq) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                (
                    f"conversation-{n:03d}",
                    f"Conversation {n}: " + " ".join(rng.choices(_WORDS, k=5)),
                    start + n * 2 * 86400,
                    start + n * 2 * 86400 + per * 60,
                    json.dumps({"provider_id": "local", "model": "bench-model"}),
                    per,
                )
                for n in range(LARGE_CONVERSATIONS)
            ),
        )
        db.executemany(
            "INSERT INTO messages (session_id, seq, request_id, id, type, created_at, body, "
            "parent_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            _rows(rng, per),
        )
        db.execute("INSERT INTO message_index(message_index) VALUES ('rebuild')")
        for sql in triggers:
            db.execute(sql)
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # one file, as after a clean exit
    finally:
        db.close()
    settings = {
        "version": 1,
        "providers": [
            {
                "id": "local",
                "kind": "openai",
                "name": "A local server",
                "base_url": "http://127.0.0.1:9/v1",
                "default_model": "bench-model",
                "key_in_keychain": False,
            }
        ],
        "default_provider_id": "local",
        "language": "en",
        "theme": "light",
    }
    (folder / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
