"""The MCP servers the app runs: read from ``mcp.json``, started when first needed, offered
to each conversation's requests, stopped at quit.

`ToolServers` is the controller's ``tool_servers``, given only where its work runs (the
controller's owned tasks) and where a problem is said. It reads the enabled servers of
``<data dir>/mcp.json`` (`ui.settings.mcp_file.MCPFile`, keychain-held values filled in) after the
window has started, and keeps one `engine.mcp.MCPToolset` over them. Nothing starts until a
request needs tools: `hold` (called by `ui.conversation.request_runner.RequestRunner` for each request)
starts the servers the conversation is offered, lists their tools and returns them; a
server that stopped or failed since is started again by the next request that holds them.
`release` ends the hold.

Why holds: the person may change the servers in Settings while a request is running one of
their tools. `reload` then builds a new toolset for the requests to come; the old one is
closed (its process groups ended) only once no request holds it, so a running call is never
killed by a save. With no change to the enabled servers the running toolset stays.

Per conversation: metadata ``"tool_servers_off"`` lists the servers whose tools are not
offered there (all enabled servers are, by default, so a server added later is offered too).

Start-up stays as fast as without tools: the SDK (`engine.mcp`) and `ui.settings.mcp_file` are imported
only when ``mcp.json`` exists, after the window is up: on the GUI thread (about half a second,
once), after the Markdown warm-up thread is done, and past shiboken's ``__import__`` hook
(`_import_past_shiboken` says why).

It also answers the Settings › Tools page (`ui.settings.tools_page.ToolRuntime`): ``names``,
``state``, ``failure``, ``tools_of``, ``log_tail``, ``check`` and the ``changed`` signal.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from ..common.i18n import engine_language
from ..common.markdown import wait_warm

if TYPE_CHECKING:
    from engine.mcp import MCPServerConfig, MCPServerState, MCPTool, MCPToolset

    from ..common.tasks import Spawn

__all__ = ["OFF_KEY", "ToolServers", "offered_servers"]

log = logging.getLogger(__name__)

OFF_KEY = "tool_servers_off"  # conversation metadata: servers not offered there
MCP_FILE_NAME = "mcp.json"  # as `ui.settings.mcp_file.MCP_FILE_NAME` (not imported: see the docstring)
LOG_FOLDER = "logs"  # each server's stderr: <data dir>/logs/mcp-<server>.log


def offered_servers(names: Sequence[str], metadata: Mapping[str, Any]) -> list[str]:
    """The servers of ``names`` a conversation with this metadata is offered."""
    off = metadata.get(OFF_KEY)
    off = {n for n in off if isinstance(n, str)} if isinstance(off, list) else set()
    return [n for n in names if n not in off]


class ToolServers(QObject):
    """The app's MCP servers (see the module docstring)."""

    # the servers, their states or their tools changed (the Tools page and the header listen)
    changed = Signal()
    # a server could not start for a request: (server, why in plain words, its log or "");
    # "why" is the engine's whole sentence when the failure was not a start's
    failed = Signal(str, str, str)
    # a conversation's request waits for its servers to start: (session id, waiting)
    starting = Signal(str, bool)

    # seconds a request waits for the first read of mcp.json (a keychain may ask to be
    # unlocked) before it goes on without the servers' tools
    FIRST_READ_WAIT = 15.0

    def __init__(
        self,
        data_dir: Path,
        spawn: Spawn,
        problem: Callable[[str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._spawn = spawn  # runs a task the controller owns
        self._problem = problem  # says a problem in plain words (the status bar)
        self._dir = Path(data_dir)
        self._configs: tuple[MCPServerConfig, ...] = ()
        self._toolset: MCPToolset | None = None  # the current one (entered), or None yet
        self._holds: dict[int, int] = {}  # id(toolset) → requests holding it
        self._retired: dict[int, MCPToolset] = {}  # replaced, closed when no longer held
        # Guards the current toolset, the holds and the retired ones; never held while a
        # server starts (`hold` lists outside it) or while servers close.
        self._lock = asyncio.Lock()
        self._reload_lock = asyncio.Lock()  # one read of mcp.json at a time, applied in order
        self._reading: asyncio.Task[None] | None = None  # the first read of mcp.json
        self._closed = False

    # ------------------------------------------------------------------ reading mcp.json

    def start_reading(self) -> asyncio.Task[None]:
        """Read ``mcp.json`` for the first time, as the controller's task; a request that
        starts meanwhile waits for it (it may offer the servers' tools)."""
        if self._reading is None:
            self._reading = self._spawn(self.reload(), "read mcp.json")
        return self._reading

    async def reload(self) -> None:
        """Read ``mcp.json`` again; a change of the enabled servers takes effect for the
        requests that start from now on (running ones keep the servers they hold)."""
        async with self._reload_lock:
            configs = await self._read()
            async with self._lock:
                if configs == self._configs or self._closed:
                    return
                self._configs = configs
                old, self._toolset = self._toolset, None
                if old is not None:
                    self._retired[id(old)] = old
                    self._close_later(old)
            self.changed.emit()

    async def _read(self) -> tuple[MCPServerConfig, ...]:
        path = self._dir / MCP_FILE_NAME
        if not await asyncio.to_thread(path.exists):
            return ()
        # Not while another thread imports (see the module docstring): the Markdown warm-up
        # is the window's one importing thread.
        await asyncio.to_thread(wait_warm, 30)
        mcp_file = _import_past_shiboken("ui.settings.mcp_file")
        try:
            configs = await mcp_file.MCPFile(self._dir).load_configs()
        except Exception as exc:  # a refused file, a keychain that said no: tools are off
            log.warning("MCP servers not started: %s", exc)
            self._problem(str(exc))
            return ()
        return tuple(configs)

    # ------------------------------------------------------------------ requests

    async def hold(
        self, metadata: Mapping[str, Any], *, session_id: str = ""
    ) -> tuple[MCPToolset | None, list[MCPTool]]:
        """The tools a request in a conversation with this metadata is offered, started.

        Only the servers the conversation is offered are started. Servers that cannot start
        are left out; `failed` says why.

        Returns:
            (a handle to give `release`, or None when nothing is held; the tools).
        """
        reading = self._reading
        if reading is not None and not reading.done():
            # Its failure is the controller's to log; a read that takes too long (a keychain
            # waiting to be unlocked) leaves this request without the servers' tools.
            await asyncio.wait({reading}, timeout=self.FIRST_READ_WAIT)
        offered = offered_servers(self.names(), metadata)
        if not offered or self._closed:
            return None, []
        async with self._lock:
            if self._closed:
                return None, []
            toolset = await self._current()
            self._holds[id(toolset)] = self._holds.get(id(toolset), 0) + 1
        try:
            await self._start(toolset, offered, session_id)
        except BaseException:
            await self.release(toolset)
            raise
        chosen = set(offered)
        return toolset, [t for t in toolset.tools if t.server in chosen]

    async def _start(self, toolset: MCPToolset, offered: list[str], session_id: str) -> None:
        from engine.mcp import MCPServerState  # imported by `_current`

        # A running server was listed when it started (only `list_tools` starts one here).
        need = [n for n in offered if toolset.state(n) is not MCPServerState.RUNNING]
        if not need:
            return
        before = {name: str(error) for name, error in toolset.failures.items()}
        self.starting.emit(session_id, True)
        try:
            await toolset.list_tools(need)
        finally:
            self.starting.emit(session_id, False)
        for name in need:
            error = toolset.failures.get(name)
            if error is not None and before.get(name) != str(error):
                self.failed.emit(name, *_why_not_started(error))
        self.changed.emit()

    async def release(self, handle: MCPToolset | None) -> None:
        """A request is over with what `hold` gave it."""
        if handle is None:
            return
        async with self._lock:
            key = id(handle)
            count = self._holds.get(key, 0) - 1
            if count > 0:
                self._holds[key] = count
            else:
                self._holds.pop(key, None)
                if key in self._retired:
                    self._close_later(self._retired[key])
        self.changed.emit()  # a server may have stopped during the request

    def find_tool(self, name: str) -> MCPTool | None:
        """A tool of the current toolset by the name the model uses (the Tools page; a
        request's approval asks about that request's own tools, `Approvals.offer`)."""
        toolset = self._toolset
        if toolset is None:
            return None
        return next((t for t in toolset.tools if t.name == name), None)

    async def _current(self) -> MCPToolset:
        if self._toolset is None:
            mcp = importlib.import_module("engine.mcp")  # loaded with ui.settings.mcp_file already
            toolset = mcp.MCPToolset(self._configs, log_dir=self._dir / LOG_FOLDER)
            await toolset.__aenter__()
            self._toolset = toolset
        return self._toolset

    def _close_later(self, toolset: MCPToolset) -> None:
        """Close a retired toolset once no request holds it (a task: closing servers takes
        a while, and nobody should wait for it). Called under the lock."""
        if self._holds.get(id(toolset), 0) > 0:
            return  # a request still uses it: its `release` comes back here
        self._retired.pop(id(toolset), None)
        self._spawn(_close(toolset), "close replaced MCP servers")

    async def close(self) -> None:
        """Stop every server (with its process group), held or not: the app is quitting."""
        self._closed = True
        async with self._lock:  # after a toolset being made is made: it is closed too
            sets = [self._toolset, *self._retired.values()]
            self._toolset, self._retired, self._holds = None, {}, {}
        for toolset in sets:
            if toolset is not None:
                await _close(toolset)

    # ------------------------------------------------------------------ the Tools page

    def names(self) -> list[str]:
        """The enabled servers, in the file's order."""
        return [c.name for c in self._configs]

    def state(self, name: str) -> MCPServerState:
        from engine.mcp import MCPServerState

        toolset = self._toolset
        if toolset is None or name not in self.names():
            return MCPServerState.NOT_STARTED
        return toolset.state(name)

    def failure(self, name: str) -> str | None:
        toolset = self._toolset
        error = toolset.failures.get(name) if toolset is not None else None
        return error.sentence(engine_language()) if error is not None else None

    def tools_of(self, name: str) -> list[MCPTool]:
        toolset = self._toolset
        return [t for t in toolset.tools if t.server == name] if toolset is not None else []

    async def log_tail(self, name: str, lines: int = 20) -> str:
        """The last lines of the server's log (its stderr), or "" without one."""
        path = self._dir / LOG_FOLDER / f"mcp-{name}.log"
        if self._toolset is not None and name in self.names():
            path = self._toolset.log_path(name) or path

        def read() -> str:
            with contextlib.suppress(OSError):
                with path.open("rb") as file:
                    file.seek(0, 2)
                    size = file.tell()
                    file.seek(max(0, size - 64 * 1024))
                    text = file.read().decode("utf-8", "replace")
                return "\n".join(text.splitlines()[-lines:])
            return ""

        return await asyncio.to_thread(read)

    async def check(self, name: str) -> None:
        """Start the server now (if it is not running) and list its tools (only that one)."""
        handle, _tools = await self.hold({OFF_KEY: [n for n in self.names() if n != name]})
        await self.release(handle)
        self.changed.emit()


def _why_not_started(error: Any) -> tuple[str, str]:
    """(why, log) of a server's failure, in the window's language: a start's reason alone
    ("the command … was not found"), short enough for the status bar with the log's path;
    any other failure's whole sentence."""
    from engine import MCPServerStartError  # loaded: the error is one of the engine's

    language = engine_language()
    if not isinstance(error, MCPServerStartError):
        return error.sentence(language), ""
    detail = error.detail
    why = detail if isinstance(detail, str) else detail.sentence(language)
    return why.rstrip(".。"), error.log or ""


async def _close(toolset: MCPToolset) -> None:
    try:
        await toolset.aclose()
    except Exception as exc:  # closing must not fail a save or the quit
        log.warning("MCP servers did not close cleanly: %s", type(exc).__name__)


def _import_past_shiboken(name: str) -> Any:
    """Import ``name`` with Python's own ``__import__``, not shiboken's.

    shiboken replaces ``builtins.__import__`` with a hook that, after each module loads,
    reads the importer's source with `inspect`; on pydantic (the SDK's) that touches the
    package's lazy ``__getattr__`` while ``pydantic._internal._validators`` is half loaded,
    and in the bundle the import failed now and then ("partially initialized"). Nothing of
    the SDK uses PySide's ``__feature__`` selections, so the hook has nothing to do there.
    """
    import builtins

    hooked = builtins.__import__
    builtins.__import__ = importlib.__import__
    try:
        return importlib.import_module(name)
    finally:
        builtins.__import__ = hooked
