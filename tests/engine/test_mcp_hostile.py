"""A hostile stdio server cannot hurt the window or lie through it (issue 18, section 2).

The server (`tests/support/hostile_mcp_server.py`) is a real subprocess writing raw JSON-RPC:
a result in one huge line, a line that never ends, a lone surrogate, unreadable replies.
Work is asserted by counts (bytes searched for a newline against bytes read) and memory by
tracemalloc's peak, never by the clock; a reply that must fail "at once" runs under a call
timeout far beyond the test's own, so waiting for the timeout would fail the test.
"""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from engine.errors import (
    MCPBadReplyError,
    MCPReplyTooLargeError,
    MCPTimeoutError,
)
from engine.mcp import MCPServerConfig, MCPToolset, load_mcp_config
from engine.mcp.process import (
    DEVNULL,
    LineSplitter,
    LongLine,
    parse_line,
    reply_id,
    stdio_transport,
)
from engine.text import REPLACEMENT
from tests.support.wait import until

SERVER = str(Path(__file__).parents[1] / "support" / "hostile_mcp_server.py")
MB = 1024 * 1024


def hostile(**entry: Any) -> MCPServerConfig:
    body: dict[str, Any] = {"command": sys.executable, "args": [SERVER], **entry}
    (config,) = load_mcp_config({"mcpServers": {"bad": body}})
    return config


@pytest.fixture
async def open_toolset(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    opened: list[MCPToolset] = []

    async def make(config: MCPServerConfig) -> MCPToolset:
        toolset = MCPToolset([config], log_dir=tmp_path / "logs")
        await toolset.__aenter__()
        opened.append(toolset)
        await toolset.list_tools()
        assert not toolset.failures, dict(toolset.failures)
        return toolset

    yield make
    for toolset in opened:
        await toolset.aclose()


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


# ---------------------------------------------------------------------------- the splitter


def test_the_splitter_looks_at_each_byte_once_in_a_20_mb_line() -> None:
    lines = LineSplitter(limit=64 * MB)
    block = b"x" * 65536
    out: list[bytes | LongLine] = []
    for _ in range(20 * 16):  # 20 MB in 64 KB chunks, as the pipe gives them
        out += lines.feed(block)
    assert out == []
    out += lines.feed(b"\n")
    assert len(out) == 1 and out[0] == b"x" * (20 * MB)
    assert lines.scanned == lines.fed == 20 * MB + 1


def test_the_splitter_splits_lines_across_and_within_chunks() -> None:
    lines = LineSplitter(limit=1024)
    assert lines.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert lines.feed(b":2}\n\n  \n{") == [b'{"b":2}']  # blank lines are left out
    assert lines.feed(b"}\n") == [b"{}"]
    assert lines.scanned == lines.fed


def test_the_splitter_drops_a_long_line_holding_only_its_ends(traced) -> None:
    lines = LineSplitter(limit=MB)
    head = b'{"jsonrpc":"2.0","id":7,"result":"'
    block = b"y" * 65536
    tracemalloc.reset_peak()
    out = lines.feed(head)
    for _ in range(160):  # 10 MB: ten times the limit
        out += lines.feed(block)
    out += lines.feed(b'","id":8}\n{"after":1}\n')
    _, peak = tracemalloc.get_traced_memory()
    assert peak < 3 * MB, f"dropping a 10 MB line took {peak / MB:.1f} MB"
    first, last, after = out
    assert isinstance(first, LongLine) and first.tail is None and first.head.startswith(head)
    assert isinstance(last, LongLine) and last.tail is not None
    assert last.tail.endswith(b'","id":8}') and last.size == len(head) + 160 * 65536 + 9
    assert after == b'{"after":1}'  # the next line is read whole
    assert lines.scanned == lines.fed


def test_a_replys_id_is_read_at_either_end_and_only_a_replys() -> None:
    assert reply_id(b'{"jsonrpc":"2.0","id":5,"result":{"content', None) == 5
    assert reply_id(b'{"id": "12", "jsonrpc": "2.0", "error": {', None) == 12
    assert reply_id(b'{"jsonrpc":"2.0","id":"abc","result":', None) == "abc"
    ts_head = b'{"result":{"content":[{"type":"text","text":"xx'
    assert reply_id(ts_head, None) is None  # not seen yet
    assert reply_id(ts_head, b'xx"}]},"jsonrpc":"2.0","id":9}') == 9
    assert reply_id(ts_head, b'xx"}],"id":9},"jsonrpc":"2.0"}') is None  # a nested "id"
    assert reply_id(ts_head, b'xx\\",\\"id\\":9}"}]}}') is None  # inside a text
    # A request from the server has an id of its own numbering: never taken for a reply.
    assert reply_id(b'{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage"', None) is None
    assert reply_id(b'{"method":"x","params":{', b',"jsonrpc":"2.0","id":5}') is None


def test_a_line_is_cleaned_and_an_unreadable_one_names_its_id() -> None:
    message = parse_line(b'{"jsonrpc":"2.0","id":1,"result":{"t":"a\\ud800b\\ud83d\\ude00"}}')
    assert message.root.result == {"t": f"a{REPLACEMENT}b\U0001f600"}  # type: ignore[union-attr]
    message = parse_line(b'{"jsonrpc":"2.0","id":1,"result":{"t":"a\xff"}}')  # not UTF-8
    assert message.root.result == {"t": f"a{REPLACEMENT}"}  # type: ignore[union-attr]
    cut = parse_line(b'{"jsonrpc":"2.0","id":4,"result":{"content":[')
    assert cut.request_id == 4 and "not valid JSON" in cut.detail  # type: ignore[union-attr]
    wrong = parse_line(b'{"jsonrpc":"1.0","id":"4","result":{}}')
    assert wrong.request_id == 4 and "JSON-RPC" in wrong.detail  # type: ignore[union-attr]
    stray = parse_line(b"Starting up...")
    assert stray.request_id is None  # type: ignore[union-attr]
    deep = parse_line(b"[" * 100_000)
    assert deep.request_id is None  # type: ignore[union-attr]


# ---------------------------------------------------------------------------- a real server


async def test_a_20_mb_one_line_result_is_read_whole_looking_at_each_byte_once() -> None:
    lines = LineSplitter(limit=64 * MB)
    async with (
        stdio_transport(
            sys.executable,
            (SERVER,),
            env={},
            cwd=None,
            errlog=DEVNULL,
            on_exit=lambda: None,
            returncode=lambda _: None,
            lines=lines,
        ) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("big", {"bytes": 20 * MB})
    (part,) = result.content
    assert part.text == "x" * (20 * MB)  # type: ignore[union-attr]
    assert lines.fed > 20 * MB
    assert lines.scanned == lines.fed, "a byte was searched for a newline more than once"


@pytest.mark.parametrize("order", ["head", "tail"])
async def test_an_answer_over_the_line_limit_fails_its_call_saying_the_tool_finished(
    open_toolset, order
) -> None:
    toolset = await open_toolset(hostile(maxLineBytes=MB))
    with pytest.raises(MCPReplyTooLargeError) as caught:
        await toolset.call("bad", "big", {"bytes": 3 * MB, "order": order})
    error = caught.value
    assert error.tool == "big" and error.limit == MB
    assert "finished" in str(error) and "larger than 1 MB" in str(error)
    assert "may or may not" not in str(error)
    assert "已经完成" in error.sentence("zh_CN") and "1 MB" in error.sentence("zh_CN")
    # Dropped up to its newline: the server's next answer is read as it should be.
    assert await toolset.call("bad", "stray", {}) == "ok"


async def test_a_line_that_never_ends_fails_its_call_at_once_and_memory_stays_bounded(
    open_toolset, tmp_path, traced
) -> None:
    count = tmp_path / "count"
    config = hostile(maxLineBytes=MB, env={"HOSTILE_COUNT": str(count)})
    toolset = await open_toolset(config)  # the call's timeout is 300 s: it must not wait it
    tracemalloc.reset_peak()
    with pytest.raises(MCPReplyTooLargeError):
        await toolset.call("bad", "endless", {"order": "head"})
    await until(
        lambda: _written(count) >= 40 * MB,
        lambda: f"{_written(count)} bytes written",
        seconds=60,
    )
    _, peak = tracemalloc.get_traced_memory()
    assert peak < 8 * MB, f"{peak / MB:.1f} MB held for a line of 40 MB and more"


async def test_a_line_that_never_ends_naming_no_id_ends_at_the_timeout_with_memory_bounded(
    open_toolset, tmp_path, traced
) -> None:
    count = tmp_path / "count"
    config = hostile(maxLineBytes=MB, timeout=1, env={"HOSTILE_COUNT": str(count)})
    toolset = await open_toolset(config)
    tracemalloc.reset_peak()
    with pytest.raises(MCPTimeoutError):  # the id is at the end that never comes
        await toolset.call("bad", "endless", {"order": "tail"})
    after = _written(count)
    await until(
        lambda: _written(count) >= after + 40 * MB,
        lambda: f"{_written(count)} bytes written",
        seconds=60,
    )
    _, peak = tracemalloc.get_traced_memory()
    assert peak < 8 * MB, f"{peak / MB:.1f} MB held for a line of 40 MB and more"


def _written(count: Path) -> int:
    try:
        return int(count.read_text() or 0)
    except FileNotFoundError:
        return 0


async def test_a_lone_surrogate_in_a_result_becomes_the_replacement_character(
    open_toolset,
) -> None:
    toolset = await open_toolset(hostile())  # a hang would wait for the 300 s timeout
    assert await toolset.call("bad", "surrogate", {}) == f"a{REPLACEMENT}b"


@pytest.mark.parametrize(
    ("tool", "detail"),
    [
        ("garbage", "not valid JSON"),
        ("not_rpc", "not a JSON-RPC message"),
        ("not_a_result", "not a tool's result"),
    ],
)
async def test_a_reply_that_cannot_be_read_but_names_its_call_fails_it_at_once(
    open_toolset, tool, detail
) -> None:
    toolset = await open_toolset(hostile())  # a hang would wait for the 300 s timeout
    with pytest.raises(MCPBadReplyError) as caught:
        await toolset.call("bad", tool, {})
    error = caught.value
    assert error.tool == tool and detail in error.detail
    assert "answered badly" in str(error) and "may or may not" not in str(error)
    assert "回答有误" in error.sentence("zh_CN")
    assert str(toolset.log_path("bad")) in str(error)
    assert await toolset.call("bad", "stray", {}) == "ok"  # the server still serves


async def test_a_stray_line_naming_no_call_fails_nothing(open_toolset) -> None:
    toolset = await open_toolset(hostile())
    assert await toolset.call("bad", "stray", {}) == "ok"
