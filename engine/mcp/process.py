"""A stdio server's process: its small environment, its log file, and its whole group's end.

The SDK's ``stdio_client`` puts the server in a new session but, when the server leaves by
itself after its stdin closes, it never signals the rest of the group, so a child the server
spawned (``npx`` → node, ``uvx`` → python) outlives it. This transport is the SDK's own shape
(two memory streams of `SessionMessage`, parsed and written with the SDK's types — no JSON-RPC
of ours) with the end we need: close stdin, give the leader a moment, then SIGTERM and SIGKILL
the whole process group, whatever the leader did. Stderr goes to a file (or nowhere), never
into our own stderr, and `on_exit` hears when stdout closes (the server is gone).

Reading stdout is ours too, and bounded: `LineSplitter` looks at each byte once (a result in
one 100 MB line was re-split per chunk, quadratic) and holds at most the server's limit of
one line (`MAX_LINE_BYTES`, or its entry's ``"maxLineBytes"``); past that it keeps only the
line's first and last few KB until its newline. A reply
that is too large or cannot be read, but names one of our pending requests, answers that
request at once with an error (`on_bad_reply` says which and why) instead of leaving it to
its timeout. Text is cleaned as providers' is (`engine.text.clean`: a lone surrogate becomes
U+FFFD), so a valid JSON escape like ``\\ud800`` never makes a reply unreadable.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import IO, Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from pydantic_core import from_json

from ..text import clean_data
from .config import MAX_LINE_BYTES

__all__ = [
    "BAD_REPLY_CODE",
    "MAX_LINE_BYTES",
    "BadReply",
    "LineSplitter",
    "LongLine",
    "server_environment",
    "stdio_transport",
]

#: the JSON-RPC error code of the answer the transport gives a request whose reply was bad
BAD_REPLY_CODE = -32099
#: bytes kept of a too-long line's start and end, where its id is written
_KEPT = 4096
_READ = 65536  #: bytes asked of the pipe at a time

#: inherited from our own environment; everything else (API keys above all) stays with us
_INHERITED = (
    (
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "TMP",
        "USERNAME",
        "USERPROFILE",
        "COMSPEC",
    )
    if sys.platform == "win32"
    else ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "LANG", "LANGUAGE")
)
#: seconds the leader gets to leave after its stdin closes, then its group after SIGTERM
_GRACE = 2.0
_TERM_GRACE = 1.0
_POLL = 0.02


def server_environment(
    configured: Mapping[str, str], ours: Mapping[str, str] | None = None
) -> dict[str, str]:
    """PATH, HOME, the user, the temp folder and locale (``LANG``, ``LC_*``) from ``ours``
    (the process's environment by default), plus what the server's entry configures."""
    ours = os.environ if ours is None else ours
    env = {k: ours[k] for k in _INHERITED if k in ours}
    env.update({k: v for k, v in ours.items() if k.startswith("LC_")})
    env.update(configured)
    return env


@asynccontextmanager
async def stdio_transport(
    command: str,
    args: tuple[str, ...],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    errlog: IO[bytes] | int,
    on_exit: Callable[[], None],
    returncode: Callable[[int | None], None],
    on_bad_reply: Callable[[types.RequestId, BadReply, str], None] = lambda *_: None,
    lines: LineSplitter | None = None,
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """Start ``command`` in its own process group and speak MCP on its stdin/stdout.

    Args:
        errlog: where its stderr goes (an open binary file, or ``subprocess.DEVNULL``).
        on_exit: called once its stdout has closed (it exited or closed it).
        returncode: called with its exit status once it is reaped at the end.
        on_bad_reply: called (with the request's id, why, and a short English detail) just
            before one of our requests is answered with a `BAD_REPLY_CODE` error because the
            server's reply to it was too large or could not be read.
        lines: what splits its stdout into lines, and its limit (`MAX_LINE_BYTES` by
            default); a new one for each start.
    """
    process = await anyio.open_process(
        [command, *args],
        env=dict(env),
        cwd=cwd,
        stderr=errlog,
        start_new_session=True,  # its own group: ended as a whole
    )
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
    lines = LineSplitter() if lines is None else lines
    max_line = lines.limit
    pending: set[types.RequestId] = set()  # our requests the server has not answered yet

    async def answer_bad(request_id: types.RequestId | None, why: BadReply, detail: str) -> bool:
        """Answer our pending request ``request_id`` with an error now; False when the id
        names none (then nothing waits for that line)."""
        if request_id is None or request_id not in pending:
            return False
        pending.discard(request_id)
        on_bad_reply(request_id, why, detail)
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=types.ErrorData(code=BAD_REPLY_CODE, message=detail),
        )
        await read_send.send(SessionMessage(types.JSONRPCMessage(error)))
        return True

    async def read_stdout() -> None:
        assert process.stdout is not None
        answered = False  # the too-long line being dropped has answered its request
        try:
            async with read_send:
                while True:
                    try:
                        chunk = await process.stdout.receive(_READ)
                    except anyio.EndOfStream:
                        break
                    for item in lines.feed(chunk):
                        if isinstance(item, LongLine):
                            if item.tail is None:
                                _note(errlog, f"a message passed {max_line} bytes, the limit")
                            if not answered:
                                detail = f"its answer is longer than {max_line} bytes"
                                answered = await answer_bad(
                                    reply_id(item.head, item.tail), BadReply.TOO_LARGE, detail
                                )
                            if item.tail is not None:  # the line has ended
                                answered = False
                            continue
                        message = parse_line(item)
                        if isinstance(message, Unreadable):  # a stray print(), or worse
                            if not await answer_bad(
                                message.request_id, BadReply.UNREADABLE, message.detail
                            ):
                                await read_send.send(ValueError(message.detail))
                            continue
                        root = message.root
                        if isinstance(root, types.JSONRPCResponse | types.JSONRPCError):
                            pending.discard(_normal_id(root.id))
                        await read_send.send(SessionMessage(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            on_exit()

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with write_recv:
                async for message in write_recv:
                    root = message.message.root
                    if isinstance(root, types.JSONRPCRequest):
                        pending.add(root.id)
                    elif (
                        isinstance(root, types.JSONRPCNotification)
                        and root.method == "notifications/cancelled"
                    ):  # no answer is awaited any more
                        pending.discard(_normal_id((root.params or {}).get("requestId")))
                    data = message.message.model_dump_json(by_alias=True, exclude_none=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass  # the server is gone; the session hears it from stdout's end

    async with process, anyio.create_task_group() as group:
        group.start_soon(read_stdout)
        group.start_soon(write_stdin)
        try:
            yield read_recv, write_send
        finally:
            with anyio.CancelScope(shield=True):
                await _end(process)
                returncode(process.returncode)
                group.cancel_scope.cancel()


# ---------------------------------------------------------------------------- reading lines


class BadReply(StrEnum):
    """Why the reply to one of our requests was answered for the server."""

    TOO_LARGE = "too_large"  #: its line was longer than the limit
    UNREADABLE = "unreadable"  #: not JSON, or not a JSON-RPC message


@dataclass(frozen=True, slots=True)
class LongLine:
    """A line longer than the limit: its first bytes, and its last ones once it ended.

    `LineSplitter.feed` gives one when the line passes the limit (``tail`` None: it goes on)
    and another when its newline comes (``tail``: its last bytes); the rest is dropped.
    """

    head: bytes
    tail: bytes | None
    size: int  #: bytes of it seen so far


class LineSplitter:
    """Splits a byte stream into lines, looking at each byte once, holding at most ``limit``
    bytes of one line (and a few KB of each end of a longer one, which is dropped).

    `scanned` counts the bytes searched for a newline and `fed` the bytes given: a reader
    that searched a growing buffer again for each chunk would make the first run far past
    the second (the tests hold them equal).
    """

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self.fed = 0
        self.scanned = 0
        self._parts: list[bytes] = []
        self._size = 0  # bytes of the current line so far
        self._head: bytes | None = None  # set while a too-long line is dropped
        self._tail = b""

    def feed(self, chunk: bytes) -> list[bytes | LongLine]:
        """Take the next bytes; return the lines they end (without their newline, blank
        ones left out) and a `LongLine` for each line passing the limit or ending past it."""
        out: list[bytes | LongLine] = []
        self.fed += len(chunk)
        start, end = 0, len(chunk)
        while start < end:
            newline = chunk.find(b"\n", start)
            stop = end if newline < 0 else newline
            self.scanned += stop - start + (newline >= 0)
            if stop > start:
                self._add(chunk[start:stop], out)
            if newline < 0:
                break
            self._end_line(out)
            start = newline + 1
        return out

    def _add(self, piece: bytes, out: list[bytes | LongLine]) -> None:
        self._size += len(piece)
        if self._head is not None:  # dropping: keep only the last bytes
            self._tail = (self._tail + piece[-_KEPT:])[-_KEPT:]
            return
        self._parts.append(piece)
        if self._size > self.limit:
            self._head, self._tail = _first(self._parts, _KEPT), _last(self._parts, _KEPT)
            self._parts = []
            out.append(LongLine(self._head, None, self._size))

    def _end_line(self, out: list[bytes | LongLine]) -> None:
        if self._head is not None:
            out.append(LongLine(self._head, self._tail, self._size))
            self._head, self._tail = None, b""
        else:
            line = self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)
            if line and not line.isspace():
                out.append(line)
        self._parts = []
        self._size = 0


def _first(parts: list[bytes], n: int) -> bytes:
    kept: list[bytes] = []
    for part in parts:
        kept.append(part[:n])
        n -= len(kept[-1])
        if n <= 0:
            break
    return b"".join(kept)


def _last(parts: list[bytes], n: int) -> bytes:
    kept: list[bytes] = []
    for part in reversed(parts):
        kept.append(part[-n:])
        n -= len(kept[-1])
        if n <= 0:
            break
    return b"".join(reversed(kept))


# A reply's id, read from the ends of a line that cannot be parsed whole. Only a reply (its
# first key after "jsonrpc" is "result" or "error") counts: a request from the server has an
# id of the server's own numbering. Our SDK writes {"jsonrpc","id","result"}; the TypeScript
# one {"result",..,"jsonrpc","id"}: the id is at one end or the other.
_RPC = rb'"jsonrpc"\s*:\s*"2\.0"'
_ID = rb'(-?\d{1,19}|"(?:[^"\\]|\\.){0,64}")'
_REPLY = rb'"(?:result|error)"'
_HEAD_ID = re.compile(
    rb"\s*\{\s*(?:"
    + _RPC
    + rb"\s*,\s*)?\"id\"\s*:\s*"
    + _ID
    + rb"\s*,\s*(?:"
    + _RPC
    + rb"\s*,\s*)?"
    + _REPLY
)
_HEAD_REPLY = re.compile(rb"\s*\{\s*(?:" + _RPC + rb"\s*,\s*)?" + _REPLY)
_TAIL_ID = re.compile(rb',\s*"id"\s*:\s*' + _ID + rb"\s*(?:,\s*" + _RPC + rb"\s*)?\}\s*\Z")


def reply_id(head: bytes, tail: bytes | None) -> types.RequestId | None:
    """The id of the reply whose line starts with ``head`` and ends with ``tail`` (None:
    not seen yet), or None when it is not a reply or its id is not at either end."""
    found = _HEAD_ID.match(head)
    if found is None and tail is not None and _HEAD_REPLY.match(head):
        found = _TAIL_ID.search(tail)
    if found is None:
        return None
    try:
        value: types.RequestId = _normal_id(json.loads(found.group(1)))
    except ValueError:
        return None
    return value


def _normal_id(value: Any) -> Any:
    """An id as the SDK matches it: ``"5"`` is 5 (it numbers its requests)."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return value
    return value


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A line that is not a JSON-RPC message: why (a short English detail, none of the
    server's text), and the id of the reply it claims to be, if it names one."""

    detail: str
    request_id: types.RequestId | None


def parse_line(line: bytes) -> types.JSONRPCMessage | Unreadable:
    """One line from a server as a message, its text cleaned (a lone surrogate, escaped or
    not valid UTF-8, becomes U+FFFD), or `Unreadable`."""
    # Parsed first, then validated: the SDK's model_validate_json tries the message union's
    # members on the JSON text itself, 7x slower on a 100 MB result. This parser refuses
    # lone surrogates and bad UTF-8 (rare): those lines are parsed again and cleaned.
    try:
        data = from_json(line)
    except ValueError:
        try:
            data = clean_data(json.loads(line.decode("utf-8", "replace")))
        except ValueError as exc:
            detail = f"it is not valid JSON ({str(exc).split(':', 1)[0]})"
            return Unreadable(detail, reply_id(line[:_KEPT], line[-_KEPT:]))
        except RecursionError:
            return Unreadable("it is nested too deeply", reply_id(line[:_KEPT], line[-_KEPT:]))
    try:
        return types.JSONRPCMessage.model_validate(data)
    except ValidationError as exc:
        claimed = None
        if (
            isinstance(data, dict)
            and "method" not in data
            and ("result" in data or "error" in data)
        ):
            claimed = _normal_id(data.get("id"))
        return Unreadable(f"it is not a JSON-RPC message ({validation_detail(exc)})", claimed)


def validation_detail(exc: ValidationError) -> str:
    """Where and what the first problem is, without the server's values."""
    first = exc.errors(include_url=False, include_input=False, include_context=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def _note(errlog: IO[bytes] | int, text: str) -> None:
    """Add a line of ours to the server's log file (if it has one)."""
    if isinstance(errlog, int):
        return
    try:
        errlog.write(f"continuo: {text}\n".encode())
        errlog.flush()
    except (OSError, ValueError):  # a full disk or a closed file: the log is a courtesy
        pass


# ---------------------------------------------------------------------------- ending


async def _end(process: anyio.abc.Process) -> None:
    """Close stdin, let the leader leave, then end whatever is left of its group."""
    try:
        if process.stdin is not None:
            await process.stdin.aclose()
    except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass
    with anyio.move_on_after(_GRACE):
        await process.wait()
    if sys.platform == "win32":  # pragma: no cover - no process groups; the SDK's job objects
        if process.returncode is None:
            process.kill()
        await process.wait()
        return
    pgid = process.pid  # a session leader's group id is its pid
    if _signal_group(pgid, signal.SIGTERM):
        # Poll the group (there is no event for "a group is empty"), for at most _TERM_GRACE.
        for _ in range(int(_TERM_GRACE / _POLL)):
            if not _signal_group(pgid, 0):
                break
            await anyio.sleep(_POLL)
        _signal_group(pgid, signal.SIGKILL)
    if process.returncode is None:
        await process.wait()


def _signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to the group; False when no process of it is left."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed user: nothing more we may do
        return False
    return True


DEVNULL = subprocess.DEVNULL
