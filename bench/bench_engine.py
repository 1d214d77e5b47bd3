"""Engine benchmarks: `resume_point()` on a long session, and durable appends per second.

Targets (issue: engine): `resume_point()` on a 20,000-message session has a median within 2x
of a 10-message session's, and under 20 ms. Appends are reported (durable default,
``synchronous=FULL``), with ``NORMAL`` beside it for comparison.

Opening does not grow with the history: a fresh storage's open plus `list_sessions()`, and
a fresh `Agent.create` plus `resume_point()` (what the window does to show a conversation),
each on the large profile's file (`bench.profiles`: 100,000 messages, about 150 MB) against
a file of 10 messages, medians of 15; target: within 2x (opening used to read every page of
a file under 256 MB: 156-164 ms against 4-7 ms).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from engine import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    SQLiteSessionExtension,
    SQLiteSessionStorage,
    ToolCall,
    ToolMessage,
    UserMessage,
)


def _history(n: int) -> list:
    messages = []
    while len(messages) < n - 2:
        call = ToolCall(f"c{len(messages)}", "search", {"q": "x" * 40})
        messages += [
            UserMessage(content="Question " * 20),
            AssistantMessage(content="Answer " * 60, tool_calls=(call,)),
            ToolMessage(tool_call_id=call.id, name="search", content="result " * 40),
        ]
    messages = messages[: n - 2]
    messages += [
        UserMessage(content="last"),
        AssistantMessage(tool_calls=(ToolCall("z", "search", {}),)),
    ]
    return messages


async def _fill(storage: SQLiteSessionStorage, session: str, n: int) -> None:
    conn_messages = _history(n)
    # Bulk seeding goes through the public append for fidelity; NORMAL sync keeps it quick.
    for message in conn_messages:
        await storage.append(session, "seed", message)


async def _median_resume_point(path: Path, session: str, rounds: int = 41) -> float:
    ext = SQLiteSessionExtension(path)
    agent = await Agent.create(object(), config=AgentRunConfig(session), extensions=[ext])
    await agent.resume_point()  # open the connection and warm the page cache
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        point = await agent.resume_point()
        times.append(time.perf_counter() - start)
        assert point is not None and point.kind.value == "recover_tools"
    await ext.close()
    return statistics.median(times)


async def _appends_per_second(path: Path, synchronous: str, count: int = 400) -> float:
    storage = SQLiteSessionStorage(path, synchronous=synchronous)
    message = AssistantMessage(content="A typical answer of a few hundred characters. " * 8)
    await storage.append("warm", "r", message)
    start = time.perf_counter()
    for _ in range(count):
        await storage.append("appends", "r", message)
    elapsed = time.perf_counter() - start
    await storage.close()
    return count / elapsed


_OPEN_ROUNDS = 15
_OPEN_TARGET = 2.0


async def _open_figures(path: Path, session: str) -> tuple[float, float]:
    """Medians: a fresh storage's open + `list_sessions()`; a fresh `Agent.create` over a
    fresh extension + `resume_point()` on `session`."""
    listing, resuming = [], []
    for _ in range(_OPEN_ROUNDS):
        start = time.perf_counter()
        storage = SQLiteSessionStorage(path)
        await storage.list_sessions()
        listing.append(time.perf_counter() - start)
        await storage.close()
        start = time.perf_counter()
        ext = SQLiteSessionExtension(path)
        agent = await Agent.create(object(), config=AgentRunConfig(session), extensions=[ext])
        await agent.resume_point()
        resuming.append(time.perf_counter() - start)
        await ext.close()
    return statistics.median(listing), statistics.median(resuming)


async def _open_large(missed: list[str]) -> None:
    from bench.profiles import DB_FILE, large_profile

    with tempfile.TemporaryDirectory() as tmp:
        small_path = Path(tmp) / "small.sqlite3"
        small = SQLiteSessionStorage(small_path)
        await _fill(small, "small", 10)
        await small.close()
        small_list, small_resume = await _open_figures(small_path, "small")
    large_path = large_profile() / DB_FILE
    size = large_path.stat().st_size / 1e6
    large_list, large_resume = await _open_figures(large_path, "conversation-199")
    for what, big, base in (
        ("open + list_sessions()", large_list, small_list),
        ("Agent.create + resume_point()", large_resume, small_resume),
    ):
        ratio = big / base
        print(
            f"{what}, fresh: {big * 1000:.1f} ms on 100,000 messages ({size:.0f} MB) vs "
            f"{base * 1000:.1f} ms on 10 (ratio {ratio:.2f}; target <= {_OPEN_TARGET})"
        )
        if ratio > _OPEN_TARGET:
            missed.append(f"{what} on a large file {ratio:.2f}x a small one's")


async def main() -> list[str]:
    missed: list[str] = []
    await _open_large(missed)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.sqlite3"
        seeding = SQLiteSessionStorage(path, synchronous="OFF")
        await _fill(seeding, "small", 10)
        await _fill(seeding, "large", 20_000)
        await seeding.close()
        small = await _median_resume_point(path, "small")
        large = await _median_resume_point(path, "large")
        ratio = large / small
        print(f"resume_point() median, 10 messages:     {small * 1000:7.3f} ms")
        print(
            f"resume_point() median, 20,000 messages: {large * 1000:7.3f} ms  (ratio {ratio:.2f}x; target <= 2x and < 20 ms)"
        )
        if ratio > 2:
            missed.append(f"resume_point ratio {ratio:.2f}x > 2x")
        if large > 0.020:
            missed.append(f"resume_point at 20k messages {large * 1000:.1f} ms > 20 ms")
        full = await _appends_per_second(Path(tmp) / "full.sqlite3", "FULL")
        normal = await _appends_per_second(Path(tmp) / "normal.sqlite3", "NORMAL")
        print(f"appends, synchronous=FULL (default): {full:8.0f} messages/s")
        print(
            f"appends, synchronous=NORMAL:         {normal:8.0f} messages/s  (FULL is {full / normal:.2f}x of NORMAL)"
        )
    return missed
