"""`MCPToolset`: MCP servers' tools as ordinary engine `Tool`s.

The sessions run on a thread of their own. The window's loop is qasync's, and the SDK's stdio
transport starts subprocesses and runs task groups through anyio, which expects a plain
asyncio loop (child watchers, cancel scopes entered and left in one task). A dedicated thread
with its own asyncio loop gives the SDK exactly that whatever loop the host runs; every call
crosses over with ``asyncio.run_coroutine_threadsafe`` and comes back with ``wrap_future``, so
cancelling the caller's task cancels the call's task on the MCP loop too. The cost is one
thread and a hop per call (microseconds next to a subprocess round trip).

Each server has an owner task on that loop that enters its transport and `ClientSession` and
leaves them (anyio needs both in one task); calls are other tasks using the session. A server
starts on first need (`MCPToolset.list_tools` or a call), is started again by the next call
after it died, and is stopped with its whole process group when the toolset closes.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import json
import re
import threading
from collections.abc import Coroutine, Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import IO, Any, TypeVar

import anyio
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import McpError
from pydantic import ValidationError

from .._finish import finish
from ..errors import (
    MCPBadReplyError,
    MCPError,
    MCPReplyTooLargeError,
    MCPServerCrashedError,
    MCPServerStartError,
    MCPTimeoutError,
    MCPToolError,
)
from ..messages import ToolEffect, ToolInfo, tool_effect
from ..model import ToolSpec
from ..redaction import Redactor, install_url_filter, shorten
from ..sentences import Phrase
from ..tools import Tool, ToolArgumentError
from .config import MCPServerConfig, MCPTransport
from .process import (
    DEVNULL,
    BadReply,
    LineSplitter,
    server_environment,
    stdio_transport,
    validation_detail,
)

__all__ = [
    "MCPServerState",
    "MCPTool",
    "MCPToolAnnotations",
    "MCPToolset",
    "call_result_text",
    "tool_names",
]

T = TypeVar("T")

#: characters of a server's own words kept in an error (as elsewhere: a quote, not a dump)
QUOTE_LIMIT = 300
#: seconds a server has to start and answer the protocol's start-up
DEFAULT_START_TIMEOUT = 60.0
_NAME_LIMIT = 64
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")
# The SDK's HTTP client is httpx, which logs each request's URL (a ?key=… in it) at INFO.
install_url_filter()
_CONNECTION_CLOSED = -32000  # the SDK's code for "the connection closed"


class MCPServerState(StrEnum):
    """Where a server is, for a host to show."""

    NOT_STARTED = "not_started"
    RUNNING = "running"
    STOPPED = "stopped"  #: it exited or hung up; the next call starts it again
    FAILED = "failed"  #: the last start failed (`MCPToolset.failures` says why)


@dataclass(frozen=True, slots=True)
class MCPToolAnnotations:
    """What a server says about a tool (hints, not guarantees; None when it says nothing).

    The protocol's defaults when a hint is missing: not read-only, destructive, not
    idempotent, open-world. `effect` reads them strictly (`engine.messages.tool_effect`): a
    tool is read-only only when it says so and no other hint contradicts it; a contradiction
    or silence counts as destructive.
    """

    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    @property
    def effect(self) -> ToolEffect:
        return tool_effect(self.read_only, self.destructive, self.idempotent)

    @property
    def is_read_only(self) -> bool:
        """Said read-only, with nothing said against it (the only tool a read-only policy
        may let through)."""
        return self.effect is ToolEffect.READ_ONLY

    @property
    def may_destroy(self) -> bool:
        """It may delete or overwrite: said so, said nothing, or contradicted itself."""
        return self.effect is ToolEffect.DESTRUCTIVE


class MCPTool(Tool):
    """One tool of one server, callable by `Agent` like any `Tool`.

    ``name`` is the provider-safe ``server__tool`` name; ``remote_name`` the server's own.
    ``invoke`` returns the result as text; a failure raises an `MCPError` (which the agent
    stores as a failed result the model reads).
    """

    def __init__(
        self,
        toolset: MCPToolset,
        *,
        name: str,
        server: str,
        remote_name: str,
        description: str,
        parameters: Mapping[str, Any],
        annotations: MCPToolAnnotations,
    ) -> None:
        # Not Tool.__init__: that one reads a Python function's signature.
        self.name = name
        self.server = server
        self.remote_name = remote_name
        self.description = description
        self.parameters = dict(parameters)
        self.annotations = annotations
        self.is_async = True
        self._toolset = toolset

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    @property
    def title(self) -> str:
        return self.annotations.title or self.remote_name

    @property
    def info(self) -> ToolInfo:
        """What the agent keeps with each call of this tool (`engine.messages.ToolInfo`)."""
        hints = self.annotations
        return ToolInfo(
            self.server,
            self.remote_name,
            hints.title or "",
            hints.read_only,
            hints.destructive,
            hints.idempotent,
        )

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Only the shape: the server checks the arguments against its own schema."""
        if not isinstance(arguments, Mapping):
            raise ToolArgumentError("arguments must be a JSON object")
        return dict(arguments)

    async def invoke(self, arguments: Mapping[str, Any]) -> str:
        return await self._toolset.call(self.server, self.remote_name, self.validate(arguments))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{self.name} runs on an MCP server: await its invoke(arguments)")

    def __repr__(self) -> str:
        return f"MCPTool({self.name!r})"


def tool_names(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """``server__tool`` for each pair, valid for every provider (``^[a-zA-Z0-9_-]{1,64}$``).

    Other characters become ``_``; a name taken by an earlier pair gets ``_2``, ``_3``...
    (cut to fit), so the same pairs in the same order always get the same names.
    """
    taken: set[str] = set()
    names: list[str] = []
    for server, tool in pairs:
        base = _INVALID.sub("_", f"{server}__{tool}")[:_NAME_LIMIT]
        name, n = base, 1
        while name in taken:
            n += 1
            suffix = f"_{n}"
            name = base[: _NAME_LIMIT - len(suffix)] + suffix
        taken.add(name)
        names.append(name)
    return names


def call_result_text(result: types.CallToolResult) -> str:
    """The text the model reads: text parts as they are, a short placeholder for each image,
    audio or resource, and the structured content as JSON when no text part says it (the
    protocol asks servers to repeat structured content as text, so text wins when present)."""
    parts: list[str] = []
    has_text = False
    for item in result.content:
        if isinstance(item, types.TextContent):
            parts.append(item.text)
            has_text = True
        elif isinstance(item, types.ImageContent | types.AudioContent):
            kind = "image" if isinstance(item, types.ImageContent) else "audio"
            parts.append(f"[{kind}: {item.mimeType}, {_b64_size(item.data)} bytes]")
        elif isinstance(item, types.ResourceLink):
            size = f", {item.size} bytes" if item.size is not None else ""
            parts.append(f"[resource link: {item.uri}, {item.mimeType or 'unknown type'}{size}]")
        elif isinstance(item, types.EmbeddedResource):
            res = item.resource
            kind_of = res.mimeType or "unknown type"
            if isinstance(res, types.TextResourceContents):
                parts.append(f"[resource: {res.uri}, {kind_of}, {len(res.text)} characters]")
            else:
                parts.append(f"[resource: {res.uri}, {kind_of}, {_b64_size(res.blob)} bytes]")
    if result.structuredContent is not None and not has_text:
        parts.insert(0, json.dumps(result.structuredContent, ensure_ascii=False))
    return "\n".join(parts)


def _b64_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except ValueError:
        return len(data) * 3 // 4


class _LoopThread:
    """A daemon thread running one asyncio loop for every MCP session."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="continuo-mcp", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            left = asyncio.all_tasks(self.loop)
            for task in left:
                task.cancel()
            if left:  # let them end (a server's owner stops its process group as it ends)
                self.loop.run_until_complete(asyncio.wait(left, timeout=10))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def stop(self) -> None:
        """Stop the loop and wait (off the caller's loop) for its thread to end."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        await asyncio.to_thread(self._thread.join, 15)


class _Start:
    """One start of a server: its owner task, the events that end it, its exit status.

    A call keeps the start it was sent to, so what it learns later (the server hung up) is
    about that start, never about a newer one begun since by another call.
    """

    def __init__(self) -> None:
        self.owner: asyncio.Task[None] | None = None
        self.session: ClientSession | None = None
        self.stop = asyncio.Event()
        self.gone = asyncio.Event()
        self.returncode: int | None = None
        #: our requests the transport answered for the server, and why (`stdio_transport`)
        self.bad_replies: dict[types.RequestId, tuple[BadReply, str]] = {}

    def set_returncode(self, code: int | None) -> None:
        self.returncode = code

    def note_bad_reply(self, request_id: types.RequestId, why: BadReply, detail: str) -> None:
        self.bad_replies[request_id] = (why, detail)


class _Server:
    """One server's connection; lives on the MCP loop (every method runs there)."""

    def __init__(self, config: MCPServerConfig, log_dir: Path | None, start_timeout: float):
        self.config = config
        self.log_path = (
            log_dir / f"mcp-{_INVALID.sub('_', config.name)[:80]}.log" if log_dir else None
        )
        self.start_timeout = start_timeout
        self.state = MCPServerState.NOT_STARTED
        self.current = _Start()  #: the latest start (none has run yet: no session)
        self._lock = asyncio.Lock()
        self._background: set[asyncio.Future[Any]] = set()
        # The secrets its entry holds, hidden in whatever of the server's words we quote.
        self.redact = Redactor(_secrets(config))

    @property
    def _log(self) -> str | None:
        return str(self.log_path) if self.log_path else None

    async def ensure(self) -> tuple[_Start, ClientSession]:
        """The running start and its session, starting the server when it is not running."""
        async with self._lock:
            start = self.current
            if start.session is not None and not start.gone.is_set():
                return start, start.session
            await self._finish_owner()
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[ClientSession] = loop.create_future()
            start = self.current = _Start()
            start.owner = loop.create_task(self._own(start, ready))
            try:
                async with asyncio.timeout(self.start_timeout):
                    session = await asyncio.shield(ready)
            except TimeoutError:
                await self._finish_owner(cancel=True)  # it is stuck in start-up, not waiting
                self.state = MCPServerState.FAILED
                raise MCPServerStartError(
                    self.config.name,
                    f"it did not answer within {self.start_timeout:g} seconds",
                    self._log,
                ) from None
            except MCPError:
                await self._finish_owner()
                self.state = MCPServerState.FAILED
                raise
            except asyncio.CancelledError:
                # The caller went away mid-start: end this start and its process group now
                # (not at the start timeout, and not as a server running unseen), still
                # holding the lock, so the next need starts it afresh.
                await self._finish_owner(cancel=True)
                raise
            self.state = MCPServerState.RUNNING
            return start, session

    async def _own(self, start: _Start, ready: asyncio.Future[ClientSession]) -> None:
        """Enter the transport and session, wait until told to stop or the server is gone."""
        log: IO[bytes] | None = None
        try:
            async with AsyncExitStack() as stack:
                cfg = self.config
                if cfg.transport is MCPTransport.STDIO:
                    assert cfg.command is not None
                    if self.log_path is not None:
                        self.log_path.parent.mkdir(parents=True, exist_ok=True)
                        log = stack.enter_context(self.log_path.open("ab"))
                        stamp = datetime.now(UTC).isoformat(timespec="seconds")
                        log.write(f"--- {stamp} starting {cfg.command}\n".encode())
                        log.flush()
                    read, write = await stack.enter_async_context(
                        stdio_transport(
                            cfg.command,
                            cfg.args,
                            env=server_environment(cfg.env),
                            cwd=cfg.cwd,
                            errlog=log if log is not None else DEVNULL,
                            on_exit=start.gone.set,
                            returncode=start.set_returncode,
                            on_bad_reply=start.note_bad_reply,
                            lines=LineSplitter(cfg.max_line_bytes),
                        )
                    )
                else:
                    assert cfg.url is not None
                    client = await stack.enter_async_context(
                        create_mcp_http_client(headers=dict(cfg.headers))
                    )
                    read, write, _ = await stack.enter_async_context(
                        streamable_http_client(cfg.url, http_client=client)
                    )
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                start.session = session
                ready.set_result(session)
                stop, gone = (
                    asyncio.ensure_future(start.stop.wait()),
                    asyncio.ensure_future(start.gone.wait()),
                )
                try:
                    await asyncio.wait({stop, gone}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop.cancel()
                    gone.cancel()
        except Exception as exc:  # every start failure becomes one error
            if not ready.done():
                ready.set_exception(
                    MCPServerStartError(
                        self.config.name, _start_detail(exc, self.config, self.redact), self._log
                    )
                )
        finally:
            start.session = None
            start.gone.set()
            if self.current is start and self.state is MCPServerState.RUNNING:
                self.state = MCPServerState.STOPPED

    async def _finish_owner(self, *, cancel: bool = False) -> None:
        """Tell the latest start's owner to stop (or cancel it) and wait until its server has
        ended."""
        start = self.current
        owner, start.owner = start.owner, None
        if owner is None:
            return
        start.stop.set()
        if cancel:
            owner.cancel()
        # asyncio.wait, not awaiting the task: its own cancellation is not ours to raise.
        _, pending = await asyncio.wait({owner}, timeout=10)
        if pending:
            owner.cancel()
            await asyncio.wait({owner})

    async def close(self) -> None:
        async with self._lock:
            await self._finish_owner()
            for task in list(self._background):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(task, 2)
            if self.state is MCPServerState.RUNNING:
                self.state = MCPServerState.STOPPED

    async def list_tools(self) -> list[types.Tool]:
        _, session = await self.ensure()
        found: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = await session.list_tools(
                params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            found.extend(page.tools)
            cursor = page.nextCursor
            if not cursor:
                return found

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        name, timeout = self.config.name, self.config.timeout
        start, session = await self.ensure()
        taken: list[int] = []  # the request's id, once it has one

        async def send() -> types.CallToolResult:
            # The id call_tool takes, read in its own task in the same step as call_tool takes
            # it (no await in between), so calls running together never share one. The SDK
            # does not send the protocol's cancellation itself, so we do, with this id.
            taken.append(session._request_id)
            return await session.call_tool(tool, arguments)

        try:
            async with asyncio.timeout(timeout):
                result = await self._unless_gone(send(), tool, start)
        except TimeoutError:
            if taken:
                self._cancel_later(session, taken[0], "timed out")
            raise MCPTimeoutError(name, tool, timeout) from None
        except asyncio.CancelledError:
            if taken:
                self._cancel_later(session, taken[0], "stopped by the user")
            raise
        except McpError as exc:
            bad = start.bad_replies.pop(taken[0], None) if taken else None
            if bad is not None:
                raise self._bad_reply(tool, *bad) from None
            if exc.error.code == _CONNECTION_CLOSED:
                raise await self._crashed(tool, start) from None
            quoted = shorten(self.redact(exc.error.message), QUOTE_LIMIT)
            raise MCPToolError(name, tool, quoted) from None
        except ValidationError as exc:  # a JSON-RPC reply whose result is not a tool's result
            detail = f"it is not a tool's result ({validation_detail(exc)})"
            raise self._bad_reply(tool, BadReply.UNREADABLE, detail) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            raise await self._crashed(tool, start) from None
        if result.isError:
            text = call_result_text(result) or "no details"
            raise MCPToolError(name, tool, shorten(self.redact(text), QUOTE_LIMIT))
        return call_result_text(result)

    def _bad_reply(self, tool: str, why: BadReply, detail: str) -> MCPError:
        """The error for a call whose reply was too large or could not be read."""
        if why is BadReply.TOO_LARGE:
            return MCPReplyTooLargeError(
                self.config.name, tool, self.config.max_line_bytes, self._log
            )
        quoted = shorten(self.redact(detail), QUOTE_LIMIT)
        return MCPBadReplyError(self.config.name, tool, quoted, self._log)

    async def _unless_gone(
        self, call: Coroutine[Any, Any, types.CallToolResult], tool: str, start: _Start
    ) -> types.CallToolResult:
        """Await ``call`` unless the server goes away first.

        When a transport dies under the session (an HTTP server that stopped: the SDK's task
        group fails and takes the session down) the pending request is never answered, so the
        call would wait for its timeout; the server's end answers it instead.
        """
        request = asyncio.ensure_future(call)
        gone = asyncio.ensure_future(start.gone.wait())
        try:
            await asyncio.wait({request, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:  # also on a timeout or our own cancellation
            gone.cancel()
            if not request.done():
                request.cancel()
                self._background.add(request)
                request.add_done_callback(self._background.discard)
        if request.done():
            return request.result()
        raise await self._crashed(tool, start)

    async def _crashed(self, tool: str, start: _Start) -> MCPServerCrashedError:
        """``start`` hung up mid-call: let its owner end it, then say what we know of it.

        Only that start's fields: by the time a call hears of its server's end, another call
        may have started the server again, and that start is not this call's to end or judge.
        """
        start.gone.set()
        owner = start.owner
        if owner is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(owner), 10)
        if self.current is start:
            self.state = MCPServerState.STOPPED
        return MCPServerCrashedError(self.config.name, tool, start.returncode, self._log)

    def _cancel_later(self, session: ClientSession, request_id: int, reason: str) -> None:
        """Send ``notifications/cancelled`` from a task of its own (this one is ending)."""

        async def send() -> None:
            notice = types.CancelledNotification(
                params=types.CancelledNotificationParams(requestId=request_id, reason=reason)
            )
            with contextlib.suppress(Exception):
                await session.send_notification(types.ClientNotification(notice))

        task = asyncio.get_running_loop().create_task(send())
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _detail(exc: BaseException, redact: Redactor) -> str:
    """The innermost error's words (anyio wraps them in exception groups), secrets hidden."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, McpError):
        return shorten(redact(exc.error.message), QUOTE_LIMIT)
    if isinstance(exc, MCPError):
        return str(exc)
    text = str(exc) or type(exc).__name__
    return shorten(redact(f"{type(exc).__name__}: {text}"), QUOTE_LIMIT)


def _start_detail(exc: BaseException, config: MCPServerConfig, redact: Redactor) -> str | Phrase:
    """Why a server did not start, in words: a command or folder that is not there, or may
    not be run, is said as such (the OS's errno text is no help to a person); else `_detail`."""
    inner = exc
    while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
        inner = inner.exceptions[0]
    if isinstance(inner, OSError) and config.transport is MCPTransport.STDIO:
        command = redact(str(config.command))
        # Starting a process reports a missing working folder as a missing file too: the
        # error's filename tells which of the two it was.
        if config.cwd is not None and str(inner.filename) == str(config.cwd):
            if isinstance(inner, FileNotFoundError | NotADirectoryError):
                return Phrase("mcp.start.no_folder", {"path": redact(str(config.cwd))})
        elif isinstance(inner, FileNotFoundError):
            return Phrase("mcp.start.not_found", {"command": command})
        elif isinstance(inner, PermissionError | IsADirectoryError):
            return Phrase("mcp.start.not_allowed", {"command": command})
    return _detail(exc, redact)


#: names of environment variables whose values are credentials (hidden when quoted)
_SECRET_NAME = re.compile(r"key|token|secret|passw|auth|cred", re.IGNORECASE)


def _secrets(config: MCPServerConfig) -> list[str]:
    """The credentials in a server's entry: every header value, and the values of env
    variables named like one (a value such as "on" must not hide every "on" quoted)."""
    return [*config.headers.values(), *(v for k, v in config.env.items() if _SECRET_NAME.search(k))]


class MCPToolset:
    """Servers' tools for `Agent(tools=...)`; an async context manager.

    Entering starts nothing but a thread: each server starts when first needed. Inside,
    ``await toolset.list_tools()`` starts the servers not yet running (together), lists their
    tools and keeps them in `tools`; a server that cannot start is left out and its error kept
    in `failures`. Leaving stops every server with its whole process group.

    Args:
        configs: the servers, e.g. from `load_mcp_config`.
        log_dir: folder for each server's stderr (``mcp-<server>.log``); None discards it.
        start_timeout: seconds a server has to start and answer the protocol's start-up.
    """

    def __init__(
        self,
        configs: Iterable[MCPServerConfig],
        *,
        log_dir: str | Path | None = None,
        start_timeout: float = DEFAULT_START_TIMEOUT,
    ) -> None:
        self.configs = tuple(configs)
        names = [c.name for c in self.configs]
        if len(set(names)) != len(names):
            raise ValueError(f"two servers have the same name: {names}")
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.start_timeout = start_timeout
        self._thread: _LoopThread | None = None
        self._servers: dict[str, _Server] = {}
        self._tools: tuple[MCPTool, ...] = ()
        self._failures: dict[str, MCPError] = {}
        self._listed: dict[str, list[types.Tool]] = {}  # each server's tools, as last listed

    async def __aenter__(self) -> MCPToolset:
        if self._thread is not None:
            raise RuntimeError("this MCPToolset is already open")
        self._thread = _LoopThread()
        self._servers = await self._run(self._make_servers())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop every server (and its process group) and the MCP thread; idempotent."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        # A cancelled caller still waits for the servers' process groups to end, then for the
        # thread (stopped at once, its tasks left half-way, servers' children lived on).
        try:
            await finish(asyncio.wrap_future(thread.submit(self._close_all())))
        finally:
            await finish(thread.stop())

    @property
    def tools(self) -> tuple[MCPTool, ...]:
        """The tools found by the last `list_tools` (empty before it)."""
        return self._tools

    @property
    def failures(self) -> Mapping[str, MCPError]:
        """Why each server whose last listing failed could not be listed."""
        return MappingProxyType(dict(self._failures))

    def state(self, server: str) -> MCPServerState:
        return self._servers[server].state

    def log_path(self, server: str) -> Path | None:
        return self._servers[server].log_path

    async def list_tools(self, servers: Iterable[str] | None = None) -> tuple[MCPTool, ...]:
        """Start the servers that are not running and list their tools.

        Args:
            servers: only these (by name): the others are neither started nor listed again,
                and keep the tools and failures of their last listing. None: every server.

        Returns:
            The tools of every server as last listed (`tools`).
        """
        chosen = [c.name for c in self.configs] if servers is None else list(servers)
        unknown = set(chosen) - {c.name for c in self.configs}
        if unknown:
            raise ValueError(f"no such MCP servers: {sorted(unknown)}")
        listed = await self._run(self._list_all(chosen))
        for name, outcome in listed.items():
            if isinstance(outcome, MCPError):
                self._failures[name] = outcome
                self._listed.pop(name, None)
            else:
                self._failures.pop(name, None)
                self._listed[name] = outcome
        pairs = [
            (config.name, t) for config in self.configs for t in self._listed.get(config.name, ())
        ]
        names = tool_names((server, t.name) for server, t in pairs)
        self._tools = tuple(
            _make_tool(self, name, server, t)
            for name, (server, t) in zip(names, pairs, strict=True)
        )
        return self._tools

    async def call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> str:
        """Call ``tool`` (the server's own name) and return its result as text.

        Raises:
            MCPToolError: the server answered with an error.
            MCPReplyTooLargeError: the tool finished, but its answer passed the line limit.
            MCPBadReplyError: the server's answer could not be read.
            MCPTimeoutError: no answer within the server's timeout (the call was cancelled).
            MCPServerCrashedError: the server stopped during the call.
            MCPServerStartError: the server could not be started.
        """
        return await self._run(self._servers[server].call(tool, dict(arguments)))

    async def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._thread is None:
            coro.close()
            raise RuntimeError("use the MCPToolset inside `async with`")
        return await asyncio.wrap_future(self._thread.submit(coro))

    async def _make_servers(self) -> dict[str, _Server]:
        # Built on the MCP loop: their events and locks belong to it.
        return {c.name: _Server(c, self.log_dir, self.start_timeout) for c in self.configs}

    async def _list_all(self, chosen: list[str]) -> dict[str, list[types.Tool] | MCPError]:
        async def one(server: _Server) -> list[types.Tool] | MCPError:
            try:
                return await server.list_tools()
            except MCPError as exc:
                return exc
            except McpError as exc:
                detail = _detail(exc, server.redact)
                return MCPServerStartError(server.config.name, detail, server._log)

        servers = [self._servers[name] for name in chosen]
        results = await asyncio.gather(*(one(s) for s in servers))
        return {s.config.name: r for s, r in zip(servers, results, strict=True)}

    async def _close_all(self) -> None:
        await asyncio.gather(*(s.close() for s in self._servers.values()))


def _make_tool(toolset: MCPToolset, name: str, server: str, tool: types.Tool) -> MCPTool:
    hints = tool.annotations
    annotations = MCPToolAnnotations(
        title=(hints.title if hints else None) or tool.title,
        read_only=hints.readOnlyHint if hints else None,
        destructive=hints.destructiveHint if hints else None,
        idempotent=hints.idempotentHint if hints else None,
        open_world=hints.openWorldHint if hints else None,
    )
    return MCPTool(
        toolset,
        name=name,
        server=server,
        remote_name=tool.name,
        description=tool.description or annotations.title or tool.name,
        parameters=tool.inputSchema or {"type": "object", "properties": {}},
        annotations=annotations,
    )
