"""Storage benchmarks: durable appends per second, and `load_tail` against history length.

Figures, each with its ratio to a baseline measured in the same run:

* appends per second through `SQLiteSessionStorage.append` with the durable default
  (``synchronous=FULL``) and with ``NORMAL``; baseline: bare ``sqlite3`` inserting the same
  rows one transaction each with the same setting (the cost of our bookkeeping on top).
* the median of `load_tail` on a 20,000-message session; baseline: the same call, returning
  the same number of rows, on a short session in the same file — ``limit=10`` against a
  10-message session and ``limit=50`` against a 50-message one.

* the same on a branched conversation: 20,000 messages on the active path and a side branch
  of 3 messages every 20 (3,000 more rows off the path, as regenerating and editing leave
  them); ``load_tail`` walks up from the active leaf.

Target: each 20,000-message median within 2x of its baseline (the cost of reading the tail
does not grow with the history, nor with its branches). Also printed, not a target: ``limit=50`` on 20,000 messages
against a 10-message session, which returns five times the rows and so mostly measures
decoding 50 messages instead of 10. The append rates are reported only (they are the disk's
fsync rate).
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from engine.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage, message_to_json
from engine.storage import SQLiteSessionStorage

_APPENDS = 300
_LONG = 20_000
_SESSIONS = {"short": 10, "medium": 50, "long": _LONG, "branched": _LONG}
_BRANCH_EVERY, _BRANCH_LENGTH = 20, 3
_SHORT_MAX = 50  # sessions up to this size are written through append
_LIMITS = (10, 50)
_ROUNDS = 201
_TAIL_TARGET = 2.0


def _message(i: int) -> AssistantMessage | UserMessage | ToolMessage:
    if i % 3 == 0:
        return UserMessage(content=f"Question {i}: " + "what about this? " * 10)
    if i % 3 == 1:
        return AssistantMessage(
            content="A typical answer of a few hundred characters. " * 8,
            tool_calls=(ToolCall(f"c{i}", "search", {"q": "x" * 40}),),
        )
    return ToolMessage(tool_call_id=f"c{i - 1}", name="search", content="result " * 40)


async def _appends_per_second(path: Path, synchronous: str) -> float:
    storage = SQLiteSessionStorage(path, synchronous=synchronous)  # type: ignore[arg-type]
    try:
        await storage.append("warm", "r", _message(1))
        start = time.perf_counter()
        for i in range(_APPENDS):
            await storage.append("appends", "r", _message(i))
        return _APPENDS / (time.perf_counter() - start)
    finally:
        await storage.close()


def _raw_inserts_per_second(path: Path, synchronous: str) -> float:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute(f"PRAGMA synchronous = {synchronous}")
        db.execute(
            "CREATE TABLE m (session_id TEXT, seq INTEGER, body TEXT, PRIMARY KEY (session_id, seq))"
        )
        start = time.perf_counter()
        for i in range(_APPENDS):
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO m VALUES (?, ?, ?)", ("s", i, message_to_json(_message(i))))
            db.execute("COMMIT")
        return _APPENDS / (time.perf_counter() - start)
    finally:
        db.close()


async def _seed(path: Path) -> None:
    storage = SQLiteSessionStorage(path, synchronous="NORMAL")
    for session, count in _SESSIONS.items():
        if session == "branched":
            continue  # written below, row by row with its tree
        for i in range(min(count, _SHORT_MAX)):
            await storage.append(session, "r", _message(i))
    await storage.close()
    # The long history is written in one transaction with the same row format; going through
    # append 20,000 times would only measure the disk.
    db = sqlite3.connect(path)
    with db:
        db.executemany(
            "INSERT INTO messages "
            "(session_id, seq, request_id, id, type, created_at, body, parent_seq) "
            "VALUES ('long', ?, 'r', ?, ?, ?, ?, ?)",
            (
                (i + 1, m.id, m.type_name, m.created_at, message_to_json(m), i)
                for i, m in ((i, _message(i)) for i in range(_SHORT_MAX, _LONG))
            ),
        )
        db.execute("UPDATE sessions SET active_seq = ? WHERE id = 'long'", (_LONG,))
        db.execute(
            "INSERT INTO sessions (id, created_at, updated_at, active_seq) "
            "VALUES ('branched', 0, 0, NULL)"
        )
        db.executemany(
            "INSERT INTO messages "
            "(session_id, seq, request_id, id, type, created_at, body, parent_seq) "
            "VALUES ('branched', ?, 'r', ?, ?, ?, ?, ?)",
            _branched_rows(),
        )
        db.execute(
            "UPDATE sessions SET active_seq = ? WHERE id = 'branched'",
            (_branched_rows.last,),  # type: ignore[attr-defined]
        )
    db.close()


def _branched_rows():  # -> Iterator[tuple]
    """The active path of _LONG messages, with a side branch every _BRANCH_EVERY; the path's
    last message is the active leaf (its seq is the highest)."""
    seq, parent = 0, None
    for i in range(_LONG):
        m = _message(i)
        seq += 1
        on_path = seq
        yield (seq, m.id, m.type_name, m.created_at, message_to_json(m), parent)
        if i % _BRANCH_EVERY == 0 and i < _LONG - 1:
            side_parent = parent
            for j in range(_BRANCH_LENGTH):
                side = _message(i + j)
                seq += 1
                row = (seq, side.id, side.type_name, side.created_at, message_to_json(side))
                yield (*row, side_parent)
                side_parent = seq
        parent = on_path
    _branched_rows.last = parent  # type: ignore[attr-defined]


async def _tail_medians(path: Path) -> dict[tuple[str, int], float]:
    """Median seconds of `load_tail(session, limit)` for every session and limit."""
    storage = SQLiteSessionStorage(path)
    cases = [(session, limit) for session in _SESSIONS for limit in _LIMITS]
    times: dict[tuple[str, int], list[float]] = {case: [] for case in cases}
    try:
        assert await storage.count_messages("long") == _LONG
        assert await storage.count_messages("branched") == _LONG
        off_path = await storage.count_all_messages("branched") - _LONG
        assert off_path == ((_LONG - 2) // _BRANCH_EVERY + 1) * _BRANCH_LENGTH
        for _ in range(5):  # warm the connection and the page cache
            for session, limit in cases:
                await storage.load_tail(session, limit)
        for _ in range(_ROUNDS):  # interleaved, so drift affects every case alike
            for session, limit in cases:
                start = time.perf_counter()
                records = await storage.load_tail(session, limit)
                times[(session, limit)].append(time.perf_counter() - start)
                assert len(records) == min(limit, _SESSIONS[session])
        return {case: statistics.median(samples) for case, samples in times.items()}
    finally:
        await storage.close()


async def _run() -> list[str]:
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for mode in ("FULL", "NORMAL"):
            ours = await _appends_per_second(folder / f"append-{mode}.sqlite3", mode)
            raw = await asyncio.to_thread(
                _raw_inserts_per_second, folder / f"raw-{mode}.sqlite3", mode
            )
            print(
                f"append, synchronous={mode:<6}: {ours:8.0f} messages/s "
                f"(bare sqlite3 insert per transaction: {raw:8.0f}/s; ratio {ours / raw:.2f})"
            )
        path = folder / "tail.sqlite3"
        await _seed(path)
        medians = await _tail_medians(path)

        def line(limit: int, baseline: str, gated: bool, session: str = "long") -> None:
            long, base = medians[(session, limit)], medians[(baseline, limit)]
            ratio = long / base
            rows = min(limit, _SESSIONS[baseline])
            note = f"target <= {_TAIL_TARGET}" if gated else "not a target: returns 5x the rows"
            what = f"{_LONG:,} messages" + (
                " (branched: +3 off the path every 20)" if session == "branched" else ""
            )
            print(
                f"load_tail(limit={limit}), median: {long * 1e3:.3f} ms on {what} "
                f"vs {base * 1e3:.3f} ms on {_SESSIONS[baseline]} messages ({rows} rows back) "
                f"(ratio {ratio:.2f}, {note})"
            )
            if gated and ratio > _TAIL_TARGET:
                missed.append(
                    f"load_tail(limit={limit}) on {what} took {ratio:.2f}x the "
                    f"time on {_SESSIONS[baseline]} messages (target {_TAIL_TARGET}x)"
                )

        # Same rows returned, history 2,000x / 400x longer: this is what must not grow.
        line(10, "short", gated=True)
        line(50, "medium", gated=True)
        # The literal pairing (limit 50 on 20,000 vs a 10-message session) also measures
        # decoding 50 messages instead of 10, which is not history length; printed only.
        line(50, "short", gated=False)
        # A branched tree: the same path length, thousands of messages off it.
        line(10, "short", gated=True, session="branched")
        line(50, "medium", gated=True, session="branched")
    return missed


def main() -> list[str]:
    """Run the storage benchmarks; return the targets missed."""
    return asyncio.run(_run())
