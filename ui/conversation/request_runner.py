"""The request runner: one request's life, from send (or Resume) to its last event.

::

    busyChanged(sid, True) ─► events folded into the transcript ─► (ok | error | stopped)
        ─► busyChanged(sid, False) ─► resumeChanged(sid, point-or-None, busy-text)

Stop cancels the request's task: the engine stores the partial answer (stop ``interrupted``,
raw ``cancelled``) and the transcript marks it stopped. The engine's stream is closed on
every exit (``aclosing``), so the conversation's lease is released even when the window fails
while folding an event; such a failure is an `InternalError` (logged with its traceback, said
as the app's own failure, never as "what arrived is saved"), and the transcript is read back
from the store so it shows what was really kept.

An error belongs to its request: a new request clears the kept one (``last_error``) as it
starts, so a later Stop never shows an earlier failure again. The person's message is
announced (``messageStored``) once the engine stored it, and only then leaves the composer.
With no provider set up, the request still runs with `_NoProvider` in the model's place: the
engine stores the message, then the model call fails with `NoProviderError`, so the message
waits for Resume (its resume point is ``call_model``) instead of being lost. While the
adapter retries a connection before any output, ``retryChanged`` says so (cleared by the
first output and at the end). The request holds its adapter (`ModelCatalog.hold`), so saving
Settings meanwhile does not close it under the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING, Any, Protocol, cast

from engine import (
    Agent,
    AgentEvent,
    AgentEventType,
    AgentResumeError,
    AgentRunConfig,
    AssistantMessage,
    StopReason,
    UserMessage,
)

from ..common.errors import InternalError, Kept, NoProviderError
from .items import ItemKind

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from engine import SQLiteSessionExtension
    from engine.mcp import MCPTool, MCPToolset

    from ..settings.model_catalog import ModelCatalog
    from .conversations import Conversations

__all__ = ["RequestRunner", "RunnerHost", "ServerHolds"]

log = logging.getLogger(__name__)

#: the longest the runner folds events without giving the event loop a turn (seconds)
_FOLD_SLICE = 0.02


class RunnerHost(Protocol):
    """What a request needs of the controller (`ui.controller.Controller` is one): where its
    task runs, the store's extension now (a restore replaces it), the tools and extensions
    every agent gets, the language, the signals a request is announced through, a new
    conversation for a first message, and the resume point after it."""

    @property
    def closed(self) -> bool: ...

    @property
    def language(self) -> str: ...

    @property
    def extension(self) -> SQLiteSessionExtension: ...

    @property
    def tools(self) -> Sequence[Any]: ...

    @property
    def tool_extensions(self) -> Sequence[Any]: ...

    @property
    def busyChanged(self) -> SignalInstance: ...  # noqa: N802

    @property
    def resumeChanged(self) -> SignalInstance: ...  # noqa: N802

    @property
    def retryChanged(self) -> SignalInstance: ...  # noqa: N802

    @property
    def inputStored(self) -> SignalInstance: ...  # noqa: N802

    @property
    def messageStored(self) -> SignalInstance: ...  # noqa: N802

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any]: ...

    async def new_session(self) -> str: ...

    async def refresh_resume(self, sid: str) -> None: ...


class ServerHolds(Protocol):
    """The MCP servers a request holds while it runs (`ui.tools.tool_servers.ToolServers` is one)."""

    async def hold(
        self, metadata: Mapping[str, Any], *, session_id: str = ""
    ) -> tuple[MCPToolset | None, list[MCPTool]]: ...

    async def release(self, handle: MCPToolset | None) -> None: ...


class RequestRunner:
    """The running requests of one window, one per conversation at most.

    Args:
        host: see `RunnerHost`.
        conversations: the transcripts, metadata and kept errors a request updates.
        catalog: the adapter a request holds while it runs.
        tool_servers: the MCP servers a request holds while it runs.
        offer_tools: tells the approval cards which tools a conversation's request runs
            (`ui.tools.approvals.Approvals.offer`; None when it is over).
    """

    def __init__(
        self,
        host: RunnerHost,
        conversations: Conversations,
        catalog: ModelCatalog,
        tool_servers: ServerHolds,
        offer_tools: Callable[[str, Mapping[str, Any] | None], None],
    ) -> None:
        self._c = host
        self._conversations = conversations
        self._catalog = catalog
        self._tool_servers = tool_servers
        self._offer_tools = offer_tools
        self.running: dict[str, asyncio.Task[Any]] = {}  # session id → its request
        self._starting: asyncio.Task[Any] | None = None  # a send creating its conversation

    def is_running(self, session_id: str) -> bool:
        return session_id in self.running

    @contextlib.contextmanager
    def busy(self, sid: str) -> Iterator[None]:
        """Hold ``sid`` busy for the current task while engine work outside a request (a
        version switch) takes its lease: Send waits, as for a request."""
        task = asyncio.current_task()
        assert task is not None, "called from a task"
        self.running[sid] = task
        self._c.busyChanged.emit(sid, True)
        try:
            yield
        finally:
            if self.running.get(sid) is task:
                del self.running[sid]
                self._c.busyChanged.emit(sid, False)

    def task_done(self, task: asyncio.Task[Any]) -> None:
        """A task ended: one cancelled before its first step cleared nothing itself."""
        for sid, running in list(self.running.items()):
            if running is task:
                del self.running[sid]
                self._c.busyChanged.emit(sid, False)

    def send(self, sid: str | None, text: str) -> asyncio.Task[Any] | None:
        """Send ``text`` in conversation ``sid`` (a new one when None)."""
        if sid and sid in self.running:
            return None
        if not sid and self._starting is not None and not self._starting.done():
            return None  # a first message is already starting its conversation
        task = self._c.spawn(self._send(sid, text), "send")
        if sid:
            self.running[sid] = task  # busy from now on, not from the task's first step
        else:
            self._starting = task
        return task

    async def _send(self, sid: str | None, text: str) -> None:
        outcome = _Outcome()
        try:
            if not sid:
                sid = await self._c.new_session()
            await self.run(sid, text, outcome)
        finally:
            # Not stored (a full disk, a read-only folder): the composer keeps the text.
            if not outcome.stored and not outcome.told:  # never reached `run`
                self._c.inputStored.emit(text, False)

    def resume(self, sid: str) -> asyncio.Task[Any] | None:
        if sid in self.running:
            return None
        task = self._c.spawn(self.run(sid, None), "resume")
        self.running[sid] = task  # busy from now on, not from the task's first step
        return task

    def regenerate(self, sid: str, message_id: str) -> asyncio.Task[Any] | None:
        """Answer again the question ``message_id`` (an answer) answers, as a new version."""
        if sid in self.running:
            return None
        task = self._c.spawn(
            self.run(sid, None, branch=_Branch(regenerate=message_id)), "regenerate"
        )
        self.running[sid] = task
        return task

    def edit(self, sid: str, message_id: str, text: str) -> asyncio.Task[Any] | None:
        """Send ``text`` as a new version of the person's message ``message_id``."""
        if sid in self.running:
            return None
        branch = _Branch(edit=message_id, text=text)
        task = self._c.spawn(self.run(sid, None, branch=branch), "edit")
        self.running[sid] = task
        return task

    def stop(self, sid: str) -> bool:
        task = self.running.get(sid)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def stop_all(self) -> None:
        for task in list(self.running.values()):
            task.cancel()

    async def stop_and_wait(self, sid: str) -> None:
        task = self.running.get(sid)
        if task is not None:
            task.cancel()
            await asyncio.wait({task})

    async def run(
        self,
        sid: str,
        text: str | None,
        outcome: _Outcome | None = None,
        *,
        branch: _Branch | None = None,
    ) -> None:
        """One request (``text`` None: Resume, or a new version with ``branch``), from busy
        to the resume point after it."""
        c = self._c
        task = asyncio.current_task()
        assert task is not None
        self.running[sid] = task
        convs = self._conversations
        rows = convs.transcript(sid)
        c.busyChanged.emit(sid, True)
        c.resumeChanged.emit(sid, None, "")
        failure: BaseException | None = None
        # what was kept of an answer the failure cut off: Kept.SAVED / Kept.LOST
        outcome = outcome if outcome is not None else _Outcome()
        # A new version changes the path: the rows are cut to where it starts, and read back
        # from the store at the end (the new path, its versions).
        reread = branch is not None
        if branch is None and rows.newer:
            # Shown around a search hit: what this request adds goes under the latest page.
            await convs.show_latest(sid)
        if branch is not None:
            branch.cut(rows)
        try:
            try:
                await convs.clear_error(sid)  # an earlier request's error is not this one's
                await self._stream(sid, text, outcome, branch)
            except asyncio.CancelledError:
                # A Stop: the engine stored the partial (it raises StorageError when not).
                # Its event never reached the window: the row is settled from the store below.
                rows.finish_request(stopped=True, saved=True)
                if c.closed:
                    raise
            except InternalError as exc:
                log.error("the window failed during a request", exc_info=exc.__cause__ or exc)
                failure, outcome.kept, reread = exc, Kept.NONE, True
            except (NoProviderError, AgentResumeError) as exc:
                failure = exc
            except Exception as exc:
                # An answer still streaming here was never announced as stored: it is lost.
                stopped = isinstance(exc.__cause__, asyncio.CancelledError)
                if rows.finish_request(stopped=stopped, saved=False):
                    outcome.kept = Kept.LOST
                failure = exc
                log.info("request failed: %s", type(exc).__name__)
            else:
                await convs.set_error(sid, None)
        finally:
            self.running.pop(sid, None)
            c.retryChanged.emit(sid, None)
            c.busyChanged.emit(sid, False)
        if reread:
            rows.finish_request(stopped=True, saved=False)
            await convs.reread(sid)
        elif rows.stopped_unsettled:
            await convs.settle_stopped(sid)
        if text is not None and not outcome.stored:
            # Before the banner says so: the composer keeps it, free to send it again.
            outcome.told = True
            c.inputStored.emit(text, False)
            if failure is not None:
                outcome.kept = Kept.UNSENT
        if failure is not None:
            await convs.set_error(sid, failure, outcome.kept)
        await convs.touch(sid)
        await c.refresh_resume(sid)
        convs.forget_unless_shown(sid)

    async def _stream(
        self, sid: str, text: str | None, outcome: _Outcome, branch: _Branch | None = None
    ) -> None:
        """Run the engine's stream to its end, folding each event into the transcript.

        Raises:
            InternalError: folding an event failed (the stream is closed all the same).
        """
        c = self._c
        convs = self._conversations
        metadata = convs.metadata(sid)
        held: Any = None
        try:
            adapter = held = await self._catalog.hold(metadata)
        except NoProviderError:
            adapter = _NoProvider()  # the message is stored all the same, for Resume
        servers: Any = None  # the hold of the conversation's MCP servers (None: none)
        asked_servers = False
        try:
            config = AgentRunConfig(
                sid, system_prompt=metadata.get("system_prompt") or None, language=c.language
            )
            # The store first (the engine keeps history in the first extension that is a store).
            extensions = [c.extension, *c.tool_extensions]
            agent = await Agent.create(adapter, config=config, tools=c.tools, extensions=extensions)
            # The approval card asks about the very tools this agent runs.
            self._offer_tools(sid, agent.tools)
            asks = text is not None or (branch is not None and branch.edit is not None)
            if not asks:  # Resume, regenerate: no message of the person's to store first
                asked_servers = True
                servers = await self._add_server_tools(sid, metadata, agent)
            if branch is not None and branch.edit is not None:
                events = agent.stream_edit(branch.edit, branch.text)
            elif branch is not None:
                events = agent.stream_regenerate(branch.regenerate)
            elif text is not None:
                events = agent.stream(text)
            else:
                events = agent.stream_resume()
            # The agent's streams are async generators (typed as iterators): closed here.
            async with contextlib.aclosing(
                cast("AsyncGenerator[AgentEvent, None]", events)
            ) as stream:
                since = time.perf_counter()  # when the loop last had a turn
                async for event in stream:
                    if time.perf_counter() - since > _FOLD_SLICE:
                        # A burst of events with no wait between them (the answers to
                        # thousands of calls): let the window paint and take input.
                        await asyncio.sleep(0)
                        since = time.perf_counter()
                    try:
                        self._fold(sid, event, outcome)
                        stored_user = event.type is AgentEventType.MESSAGE_APPENDED and isinstance(
                            event.message, UserMessage
                        )
                        if stored_user:
                            if text is not None and not outcome.stored:
                                outcome.stored = True
                                c.inputStored.emit(text, True)
                            await convs.touch(sid)
                    except Exception as exc:
                        raise InternalError(str(exc)) from exc
                    if stored_user and asks and not asked_servers:
                        # The person's message is stored: now start the conversation's MCP
                        # servers (it may take a while), before the model is called (the
                        # stream waits until the next event is asked for).
                        asked_servers = True
                        servers = await self._add_server_tools(sid, metadata, agent)
        finally:
            self._offer_tools(sid, None)
            try:
                await self._tool_servers.release(servers)
            finally:
                if held is not None:
                    await self._catalog.release(held)

    async def _add_server_tools(self, sid: str, metadata: Any, agent: Agent) -> Any:
        """Hold the conversation's MCP servers (starting them) and give their tools to the
        agent; return the hold (`ToolServers.release` ends it)."""
        servers = self._tool_servers
        handle, tools = await servers.hold(metadata, session_id=sid)
        agent.add_tools(tools)
        return handle

    def _fold(self, sid: str, event: AgentEvent, outcome: _Outcome) -> None:
        """Fold one event into the transcript and announce what the window shows apart."""
        c = self._c
        self._conversations.transcript(sid).apply_event(event)
        kind = event.type
        if kind is AgentEventType.MODEL_RETRYING:
            c.retryChanged.emit(sid, event.retry)
            outcome.retrying = True
        elif outcome.retrying and kind in _OUTPUT:
            c.retryChanged.emit(sid, None)
            outcome.retrying = False
        if kind is AgentEventType.MESSAGE_APPENDED:
            message = event.message
            if isinstance(message, UserMessage):
                c.messageStored.emit(sid, message.content)
            elif _is_partial(message):
                outcome.kept = Kept.SAVED  # the engine announces a partial once stored


# events that are output (or the stored message): a retry notice is over
_OUTPUT = frozenset(
    {
        AgentEventType.TEXT_DELTA,
        AgentEventType.REASONING_DELTA,
        AgentEventType.TOOL_CALL_DELTA,
        AgentEventType.MESSAGE_APPENDED,
        AgentEventType.MODEL_STOPPED,
    }
)


class _Branch:
    """A new version: regenerate the answer ``regenerate``, or send ``text`` in place of the
    person's message ``edit``."""

    __slots__ = ("edit", "regenerate", "text")

    def __init__(
        self, *, regenerate: str | None = None, edit: str | None = None, text: str = ""
    ) -> None:
        self.regenerate, self.edit, self.text = regenerate, edit, text

    def cut(self, rows: Any) -> None:
        """Cut the shown rows to where the new version starts."""
        if self.edit is not None:
            rows.cut_from(self.edit)
            return
        keys = [item.key for item in rows.items()]
        at = keys.index(self.regenerate) if self.regenerate in keys else len(keys)
        question = next((i for i in reversed(rows.items()[:at]) if i.kind is ItemKind.USER), None)
        if question is not None:
            rows.cut_after(question.key)
        elif self.regenerate is not None:
            rows.cut_from(self.regenerate)  # its question is on an earlier page


class _Outcome:
    """What a request kept of an answer a failure cut off, and whether a retry is shown
    (set as events arrive)."""

    __slots__ = ("kept", "retrying", "stored", "told")

    def __init__(self) -> None:
        self.kept = Kept.NONE
        self.retrying = False
        self.stored = False  # the message sent was stored
        self.told = False  # the window was told it was not


class _NoProvider:
    """The model while no provider is set up: the engine stores the person's message, then
    this call fails with `NoProviderError` (the message waits for Resume)."""

    provider_name = "no provider"
    name = ""

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        raise NoProviderError()
        yield  # an async generator, as a model's stream is


def _is_partial(message: Any) -> bool:
    stop = getattr(message, "stop", None)
    return (
        isinstance(message, AssistantMessage)
        and stop is not None
        and stop.reason is StopReason.INTERRUPTED
    )
