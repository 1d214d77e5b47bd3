"""MCP benchmarks: a no-op tool's round trip through a stdio server, and a server's first start.

Targets (issue 11, Bench): the round trip of a no-op tool (``echo``) through a real stdio
server (the FastMCP test server, ``tests/support/mcp_server.py``) through `MCPToolset.call`,
median of `CALLS` calls, under 10 ms; printed beside the same no-op as an in-process engine
`Tool` (``Tool.invoke``, the call `Agent` makes), measured in the same run, with the ratio.
First use of a Python stdio server (enter an `MCPToolset`, `list_tools`: the process starts,
imports the SDK and answers ``initialize`` and ``tools/list``), median of `STARTS`, under 2 s.
Entering an `MCPToolset` without listing starts no server (start-up stays as fast as it was):
under 20 ms. The published ``mcp-server-time`` (test extra) first start is reported too.

One-line results (issue 18): a text result of 10, 20 and 100 MB in a single line from the
hostile test server (``tests/support/hostile_mcp_server.py``, line limit raised to 128 MiB),
through `MCPToolset.call`; each printed with its ratio to the 10 MB read of the same run. The
reader was quadratic (10 MB 4.6 s, 20 MB 14.4 s, 100 MB past the 300 s timeout): target, the
100 MB read within 25x the 10 MB one (10x is linear, 100x quadratic).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine.mcp import MCPServerConfig, MCPToolset, load_mcp_config
from engine.tools import Tool

REPO = Path(__file__).resolve().parent.parent
SERVER = REPO / "tests" / "support" / "mcp_server.py"
HOSTILE = REPO / "tests" / "support" / "hostile_mcp_server.py"

CALLS = 300  #: counted round trips of each kind
WARM = 20  #: uncounted calls first (the server's and our own first-call costs)
STARTS = 5  #: counted first starts

ROUND_TRIP_TARGET = 0.010
FIRST_START_TARGET = 2.0
ENTER_TARGET = 0.020
LINE_SIZES_MB = (10, 20, 100)  #: one-line results read, the first being the baseline
LINE_RATIO_TARGET = 25.0  #: the largest read against the baseline (linear: 10x, quadratic: 100x)


def _config(name: str, command: str, args: list[str]) -> MCPServerConfig:
    (config,) = load_mcp_config({"mcpServers": {name: {"command": command, "args": args}}})
    return config


def test_server() -> MCPServerConfig:
    return _config("bench", sys.executable, [str(SERVER), "--name", "bench"])


def time_server() -> MCPServerConfig:
    script = Path(sys.executable).with_name("mcp-server-time")
    if script.exists():
        return _config("time", str(script), ["--local-timezone", "UTC"])
    return _config("time", sys.executable, ["-m", "mcp_server_time", "--local-timezone", "UTC"])


async def _echo(text: str) -> str:
    """Say the text back."""
    return text


def _echo_sync(text: str) -> str:
    """Say the text back (a plain function: `Tool.invoke` runs it in a worker thread)."""
    return text


async def in_process_round_trip(func: object = _echo) -> float:
    """Median seconds of `Tool.invoke` on a no-op (validation, and the await or the thread)."""
    tool = Tool(func, name="echo")  # type: ignore[arg-type]
    arguments = {"text": "ok"}
    for _ in range(WARM):
        await tool.invoke(arguments)
    times = []
    for _ in range(CALLS):
        start = time.perf_counter()
        result = await tool.invoke(arguments)
        times.append(time.perf_counter() - start)
        assert result == "ok"
    return statistics.median(times)


async def stdio_round_trip(log_dir: Path) -> tuple[float, float]:
    """Median and 90th-percentile seconds of `MCPToolset.call` of ``echo`` over stdio."""
    async with MCPToolset([test_server()], log_dir=log_dir) as toolset:
        await toolset.list_tools()
        assert not toolset.failures, dict(toolset.failures)
        arguments = {"text": "ok"}
        for _ in range(WARM):
            await toolset.call("bench", "echo", arguments)
        times = []
        for _ in range(CALLS):
            start = time.perf_counter()
            result = await toolset.call("bench", "echo", arguments)
            times.append(time.perf_counter() - start)
            assert result == "ok", result
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)]


async def first_start(config: MCPServerConfig, log_dir: Path) -> tuple[float, float]:
    """Median seconds to enter a fresh toolset and list one server's tools (which starts it),
    and median seconds to enter one without listing; closing is not counted."""
    starts, enters = [], []
    for _ in range(STARTS + 1):  # the first warms the file cache and is not counted
        toolset = MCPToolset([config], log_dir=log_dir)
        start = time.perf_counter()
        await toolset.__aenter__()
        entered = time.perf_counter()
        try:
            tools = await toolset.list_tools()
            listed = time.perf_counter()
            assert tools and not toolset.failures, dict(toolset.failures)
        finally:
            await toolset.aclose()
        starts.append(listed - start)
        enters.append(entered - start)
    return statistics.median(starts[1:]), statistics.median(enters[1:])


async def one_line_reads(log_dir: Path) -> list[float]:
    """Seconds of `MCPToolset.call` returning a text result of each of `LINE_SIZES_MB` in one
    line (best of two, the server warm)."""
    (config,) = load_mcp_config(
        {
            "mcpServers": {
                "big": {
                    "command": sys.executable,
                    "args": [str(HOSTILE)],
                    "maxLineBytes": 128 * 1024 * 1024,
                }
            }
        }
    )
    times = []
    async with MCPToolset([config], log_dir=log_dir) as toolset:
        await toolset.list_tools()
        assert not toolset.failures, dict(toolset.failures)
        await toolset.call("big", "big", {"bytes": 1024})
        for size in LINE_SIZES_MB:
            best = float("inf")
            for _ in range(2):
                start = time.perf_counter()
                text = await toolset.call("big", "big", {"bytes": size * 1024 * 1024})
                best = min(best, time.perf_counter() - start)
                assert len(text) == size * 1024 * 1024
                del text
            times.append(best)
    return times


_IMPORT_TIMER = """
import time
t0 = time.perf_counter()
import engine
t1 = time.perf_counter()
import engine.mcp
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def import_cost() -> tuple[float, float]:
    """Median seconds of ``import engine`` and of ``import engine.mcp`` after it, each in a
    fresh interpreter (the first run, warming the file cache, not counted)."""
    runs = []
    for _ in range(STARTS + 1):
        out = subprocess.run(
            [sys.executable, "-c", _IMPORT_TIMER],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.split()
        runs.append((float(out[0]), float(out[1])))
    runs = runs[1:]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


async def main() -> list[str]:
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp)
        direct = await in_process_round_trip()
        threaded = await in_process_round_trip(_echo_sync)
        median, p90 = await stdio_round_trip(logs)
        print(f"no-op tool, in-process Tool.invoke, median of {CALLS}:  {direct * 1e6:8.1f} µs")
        print(
            f"  the same as a plain function (worker thread), median:  {threaded * 1e6:8.1f} µs"
            " (reported)"
        )
        print(
            f"no-op tool through a stdio MCP server, median of {CALLS}: {median * 1e3:8.3f} ms"
            f"  (p90 {p90 * 1e3:.3f} ms; {median / direct:.0f}x the in-process call;"
            f" target < {ROUND_TRIP_TARGET * 1e3:g} ms)"
        )
        if median > ROUND_TRIP_TARGET:
            missed.append(
                f"stdio round trip {median * 1e3:.2f} ms > {ROUND_TRIP_TARGET * 1e3:g} ms"
            )

        start, enter = await first_start(test_server(), logs)
        print(
            f"first use of a Python stdio server (enter + list_tools), median of {STARTS}:"
            f" {start * 1e3:7.0f} ms  (target < {FIRST_START_TARGET:g} s)"
        )
        print(
            f"entering an MCPToolset without listing (no server starts), median of {STARTS}:"
            f" {enter * 1e3:7.2f} ms  (target < {ENTER_TARGET * 1e3:g} ms)"
        )
        if start > FIRST_START_TARGET:
            missed.append(f"first start {start:.2f} s > {FIRST_START_TARGET:g} s")
        if enter > ENTER_TARGET:
            missed.append(f"entering a toolset {enter * 1e3:.1f} ms > {ENTER_TARGET * 1e3:g} ms")

        third, _ = await first_start(time_server(), logs)
        print(
            f"first use of mcp-server-time (PyPI), median of {STARTS}:"
            f" {third * 1e3:7.0f} ms  (reported; {third / start:.2f}x the test server)"
        )
        reads = await one_line_reads(logs)
        for size, seconds in zip(LINE_SIZES_MB, reads, strict=True):
            print(
                f"a {size} MB result in one line through a stdio server, best of 2:"
                f" {seconds * 1e3:8.0f} ms  ({seconds / reads[0]:.2f}x the"
                f" {LINE_SIZES_MB[0]} MB read; {size / seconds:.0f} MB/s)"
            )
        ratio = reads[-1] / reads[0]
        print(
            f"  the {LINE_SIZES_MB[-1]} MB read against the {LINE_SIZES_MB[0]} MB one:"
            f" {ratio:.1f}x (linear: {LINE_SIZES_MB[-1] / LINE_SIZES_MB[0]:g}x;"
            f" target < {LINE_RATIO_TARGET:g}x)"
        )
        if ratio > LINE_RATIO_TARGET:
            missed.append(f"one-line reads {ratio:.1f}x > {LINE_RATIO_TARGET:g}x")
    engine_s, mcp_s = import_cost()
    print(
        f"importing engine.mcp after engine, fresh interpreter, median of {STARTS}:"
        f" {mcp_s * 1e3:7.0f} ms  (reported; `import engine` itself {engine_s * 1e3:.0f} ms:"
        f" {mcp_s / engine_s:.1f}x; keep it off the window's start-up)"
    )
    return missed
