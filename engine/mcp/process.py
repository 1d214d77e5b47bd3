"""A stdio server's process: its small environment, its log file, and its whole group's end.

The SDK's ``stdio_client`` puts the server in a new session but, when the server leaves by
itself after its stdin closes, it never signals the rest of the group, so a child the server
spawned (``npx`` → node, ``uvx`` → python) outlives it. This transport is the SDK's own shape
(two memory streams of `SessionMessage`, parsed and written with the SDK's types — no JSON-RPC
of ours) with the end we need: close stdin, give the leader a moment, then SIGTERM and SIGKILL
the whole process group, whatever the leader did. Stderr goes to a file (or nowhere), never
into our own stderr, and `on_exit` hears when stdout closes (the server is gone).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import IO

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from anyio.streams.text import TextReceiveStream
from mcp import types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["server_environment", "stdio_transport"]

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

    async def read_stdout() -> None:
        assert process.stdout is not None
        buffer = ""
        try:
            async with read_send:
                async for chunk in TextReceiveStream(process.stdout, errors="replace"):
                    lines = (buffer + chunk).split("\n")
                    buffer = lines.pop()
                    for line in lines:
                        if not line.strip():
                            continue
                        try:
                            message = types.JSONRPCMessage.model_validate_json(line)
                        except ValidationError as exc:  # a stray print() in the server
                            await read_send.send(exc)
                            continue
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
