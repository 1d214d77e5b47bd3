"""The agent: model step → tools → next step, with every message stored the moment it is complete.

One request (``run``/``stream`` with new input, ``resume``/``stream_resume`` without) is::

    acquire the session's lease ─► load history ─► add the input (or what the resume adds)
      ─► before_run ─► [model step ─► tools in order, each result stored as it finishes]*
      ─► final answer (goal mode may ask for another round) ─► after_run ─► RUN_COMPLETED
    on any fault: store what arrived (partial text, stop interrupted; answers for cut tools),
    report it, on_error, release the lease, raise.

While a step streams, a `DraftWriter` keeps what it has shown as the session's draft (at
most about once a second, through the store's ``save_draft``); the step's stored message
replaces it. `resume_point` reads a draft a dead process left as the history's last message.

A request whose lease another process takes over (this process was stopped past the lease's
staleness limit) ends with `LeaseLostError` as soon as the lease's heartbeat notices, and
every append it still tries is refused by the storage's fence.

The loop never retries; adapters retry before any output, and the host calls ``resume()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Any

from .calls import MAX_TOOL_CALLS_PER_ANSWER, TOO_MANY_TOOL_TEXT, path_call_ids, unique_calls
from .drafts import DRAFT_INTERVAL, DraftWriter, app_stopped_stop
from .errors import (
    AgentResumeError,
    BranchError,
    ContinuoError,
    LeaseLostError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
    ProviderTimeoutError,
    StepLimitError,
    StorageError,
)
from .events import AgentEvent, AgentEventType
from .extensions import ROOT, InMemoryHistory, Root, RunContext, StoredMessage, ToolDenial
from .goal import Goal, evaluate_goal
from .messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolOutcome,
    UserMessage,
    new_id,
)
from .model import ModelEventKind, ModelOptions, ModelRequest, ModelResponse
from .resume import (
    CANCELLED_TOOL_TEXT,
    NOT_RUN_TOOL_TEXT,
    ResumeKind,
    ResumePoint,
    find_resume_point,
    interrupted_tool_result,
    resume_notice,
)
from .sentences import sentence
from .stop import StopInfo, StopReason
from .text import TextJoiner, clean
from .tools import Tool, ToolArgumentError, as_tool, result_text

__all__ = ["Agent", "AgentRunConfig"]

#: Items of a long loop (thousands of calls in one answer) between turns given to the loop.
_BREATHE = 500


@dataclass(frozen=True, slots=True)
class AgentRunConfig:
    """Settings for requests on one session.

    Attributes:
        session_id: the conversation.
        system_prompt: sent with every model call, never stored in the history.
        max_steps: model calls one request may make before `StepLimitError`.
        max_pauses: consecutive provider pauses continued automatically.
        options: generation options passed to the model.
        draft_interval: seconds between saves of a streaming step's draft (with a store
            that keeps drafts); a kill loses at most about this much of the answer.
        language: the language of sentences for people the engine writes for this session
            (``ResumePoint.description``): ``"en"`` or ``"zh_CN"`` (`engine.sentences`).
            Errors carry their own key and render in any language (``error.sentence``).
    """

    session_id: str
    system_prompt: str | None = field(default=None, kw_only=True)
    max_steps: int = field(default=50, kw_only=True)
    max_pauses: int = field(default=5, kw_only=True)
    options: ModelOptions = field(default_factory=ModelOptions, kw_only=True)
    language: str = field(default="en", kw_only=True)
    draft_interval: float = field(default=DRAFT_INTERVAL, kw_only=True)

    def __post_init__(self) -> None:
        if self.draft_interval <= 0:
            raise ValueError("draft_interval must be a positive number of seconds")


class _Interrupted(Exception):
    """A completed step carried stop ``interrupted``: stored, then raised as a provider error."""


_BRANCH_PAGE = 50  # records read a page while looking back for the last question


class Agent:
    """Runs requests on one session. Build with `Agent.create`."""

    def __init__(
        self,
        model: Any,
        config: AgentRunConfig,
        tools: Iterable[Tool | Any] = (),
        extensions: Iterable[Any] = (),
    ) -> None:
        self.model = model
        self.config = config
        self.tools: dict[str, Tool] = {}
        self.add_tools(tools)
        self.extensions: list[Any] = list(extensions)
        store = next((e for e in self.extensions if _has(e, "append") and _has(e, "restore")), None)
        if store is None:
            store = InMemoryHistory()
        self.store: Any = store

    @classmethod
    async def create(
        cls,
        model: Any,
        config: AgentRunConfig | None = None,
        tools: Iterable[Tool | Any] = (),
        extensions: Iterable[Any] = (),
    ) -> Agent:
        """Build an agent. Reads nothing: the history is loaded by each request."""
        return cls(model, config or AgentRunConfig(uuid.uuid4().hex), tools, extensions)

    @property
    def session_id(self) -> str:
        return self.config.session_id

    def add_tools(self, tools: Iterable[Tool | Any]) -> None:
        """Offer more tools (a tool of the same name is replaced). Added while a request
        runs, they are offered from its next model call on: a host may start slow tool
        servers after the request's first event (the person's message stored) has arrived."""
        for item in tools:
            t = as_tool(item)
            self.tools[t.name] = t

    # ------------------------------------------------------------------ public entry points

    async def run(
        self,
        text: str,
        *,
        model: Any = None,
        config: AgentRunConfig | None = None,
        goal: Goal | None = None,
    ) -> AssistantMessage:
        """Send ``text`` and return the final assistant message."""
        return await _final(self.stream(text, model=model, config=config, goal=goal))

    def stream(
        self,
        text: str,
        *,
        model: Any = None,
        config: AgentRunConfig | None = None,
        goal: Goal | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Send ``text`` and yield the request's events."""
        return self._request(UserMessage(content=text), model, config, goal)

    async def resume(
        self, *, model: Any = None, config: AgentRunConfig | None = None
    ) -> AssistantMessage:
        """Carry on from where the session stopped; raises `AgentResumeError` if it did not."""
        return await _final(self.stream_resume(model=model, config=config))

    def stream_resume(
        self, *, model: Any = None, config: AgentRunConfig | None = None
    ) -> AsyncIterator[AgentEvent]:
        """`resume` as a stream of the same events as `stream`."""
        return self._request(None, model, config, None)

    # -------------------------------------------------------------- versions (the message tree)

    async def regenerate(
        self,
        message_id: str | None = None,
        *,
        model: Any = None,
        config: AgentRunConfig | None = None,
    ) -> AssistantMessage:
        """A new answer to the last user message on the active path (or to the user message
        ``message_id`` answers), as a sibling of the current answer; return it. The old
        answer, with its tool calls and results, stays on its branch, and none of its tools
        runs again.

        Raises:
            BranchError: there is no user message to answer again (``no_question``).
            MessageNotFoundError: there is no message ``message_id``.
        """
        return await _final(self.stream_regenerate(message_id, model=model, config=config))

    def stream_regenerate(
        self,
        message_id: str | None = None,
        *,
        model: Any = None,
        config: AgentRunConfig | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """`regenerate` as a stream of the same events as `stream`."""
        if message_id is None:
            return self._request(None, model, config, None, branch=self._to_last_question)

        async def above(ctx: RunContext) -> str | Root:
            # Up from the answer to the question it answers (the person's message above it).
            at: str | None = message_id
            while at is not None:
                parent, kind = await _maybe_await(self._tree("parent_of")(ctx, at))
                if kind == UserMessage.type_name:
                    return at
                at = parent
            raise BranchError("no_question")

        return self._request(None, model, config, None, branch=above)

    async def edit(
        self,
        message_id: str,
        text: str,
        *,
        model: Any = None,
        config: AgentRunConfig | None = None,
    ) -> AssistantMessage:
        """Send ``text`` as a new user message beside ``message_id`` (a sibling: same parent)
        and return the answer; the edited message and what followed it stay on their branch.

        Raises:
            BranchError: ``message_id`` is not a user message (``not_a_question``).
            MessageNotFoundError: there is no such message.
        """
        return await _final(self.stream_edit(message_id, text, model=model, config=config))

    def stream_edit(
        self,
        message_id: str,
        text: str,
        *,
        model: Any = None,
        config: AgentRunConfig | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """`edit` as a stream of the same events as `stream`."""

        async def beside(ctx: RunContext) -> str | Root:
            parent, kind = await _maybe_await(self._tree("parent_of")(ctx, message_id))
            if kind != UserMessage.type_name:
                raise BranchError("not_a_question")
            return ROOT if parent is None else str(parent)

        return self._request(UserMessage(content=text), model, config, None, branch=beside)

    async def switch_to(self, message_id: str, *, config: AgentRunConfig | None = None) -> str:
        """Show another version: the newest leaf under ``message_id`` becomes the active leaf
        (what "‹ 2/3 ›" does). Return that leaf's id. Takes the session's lease while it
        writes, so it never changes the path under a running request.

        Raises:
            AgentBusyError: a request is running on the session.
            MessageNotFoundError: there is no such message.
        """
        cfg = config or self.config
        ctx = RunContext(cfg.session_id, uuid.uuid4().hex, None)
        switch = self._tree("switch_to")
        acquired = False
        try:
            if _has(self.store, "acquire"):
                await _maybe_await(self.store.acquire(ctx))
            acquired = True
            return str(await _maybe_await(switch(ctx, message_id)))
        finally:
            if acquired:
                await _finish(self._call_store("release", ctx))

    def _tree(self, name: str) -> Any:
        hook = getattr(self.store, name, None)
        if hook is None:
            raise TypeError(f"{type(self.store).__name__} keeps no versions (it has no {name})")
        return hook

    async def _to_last_question(self, ctx: RunContext) -> str | Root:
        """The last user message on the active path (the tail read page by page)."""
        self._tree("parent_of")  # a store without versions refuses before anything runs
        read = self._tail_reader(ctx)
        before: int | None = None
        while True:
            page = await read(_BRANCH_PAGE, before)
            if not page:
                raise BranchError("no_question")
            for record in reversed(page):
                if isinstance(record.message, UserMessage):
                    return record.message.id
            before = page[0].seq

    async def resume_point(
        self, *, model: Any = None, config: AgentRunConfig | None = None
    ) -> ResumePoint | None:
        """Say where the session stopped, or None. Reads only the tail; writes nothing.

        A draft left by a process that died mid-answer counts as the message it will become
        when the lease is next taken (stopped ``interrupted``, raw ``app_stopped``).
        """
        cfg = config or self.config
        ctx = RunContext(cfg.session_id, "", None)
        reader = self._tail_reader(ctx)
        if _has(self.store, "restore_draft"):
            draft = await _maybe_await(self.store.restore_draft(ctx))
            if draft is not None:
                reader = _with_draft(reader, draft)
        try:
            return await find_resume_point(reader, cfg.language, self._start_reader(ctx))
        except AgentResumeError:
            return None

    # ------------------------------------------------------------------ the request

    async def _request(
        self,
        user: UserMessage | None,
        model: Any,
        config: AgentRunConfig | None,
        goal: Goal | None,
        *,
        branch: Callable[[RunContext], Awaitable[str | Root]] | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run `_serve`, ending it with `LeaseLostError` once its lease is lost."""
        cfg = config or self.config
        watch = _LeaseWatch(cfg.session_id)
        async with aclosing(self._serve(user, model, cfg, goal, watch, branch)) as events:
            try:
                while True:
                    watch.check()
                    watch.running = asyncio.current_task()
                    try:
                        event = await anext(events)
                    except StopAsyncIteration:
                        return
                    except BaseException as exc:
                        watch.check(exc)  # the loss, rather than the cancel it caused
                        raise
                    finally:
                        watch.running = None
                    watch.check()
                    yield event
            finally:
                await watch.stop()

    async def _serve(
        self,
        user: UserMessage | None,
        model: Any,
        cfg: AgentRunConfig,
        goal: Goal | None,
        watch: _LeaseWatch,
        branch: Callable[[RunContext], Awaitable[str | Root]] | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        model = self.model if model is None else model
        ctx = RunContext(cfg.session_id, uuid.uuid4().hex, user, resumed=user is None)
        sid, rid = ctx.session_id, ctx.request_id
        acquired = finished = False
        try:
            if _has(self.store, "acquire"):
                watch.watch(await _maybe_await(self.store.acquire(ctx)))
            acquired = True
            if branch is None:
                ctx.messages = list(await self.store.restore(ctx))
            else:
                # Under the lease, nothing written: where the new version starts (a
                # regenerate under its question, an edit beside the edited message) and the
                # path up to there. The path moves only when the version's first message is
                # stored there (`_append`); a version that stores nothing leaves it as it is.
                ctx.branch_at = await branch(ctx)
                ctx.messages = list(await self.store.restore(ctx, leaf=ctx.branch_at))
            ctx.first_new = len(ctx.messages)
            if user is not None:
                await self._hook("on_message", ctx, user)
                for closing in await self._unanswered_results(ctx):
                    await self._append(ctx, closing)
                    yield AgentEvent.message_appended(sid, rid, closing)
                await self._append(ctx, user)
                yield AgentEvent.message_appended(sid, rid, user)
            else:
                point = await find_resume_point(
                    _list_reader(ctx.messages), cfg.language, self._start_reader(ctx)
                )
                for added in _resume_additions(point):
                    await self._append(ctx, added)
                    yield AgentEvent.message_appended(sid, rid, added)
            await self._hook("before_run", ctx)
            async with aclosing(self._loop(ctx, model, cfg, goal)) as steps:
                async for event in steps:
                    yield event
            final = ctx.state["final"]
            await self._hook("after_run", ctx, final)
            finished = True
            yield AgentEvent.run_completed(sid, rid, final)
        except GeneratorExit:
            # The consumer left `async for` (aclose): no more events can be yielded. After
            # RUN_COMPLETED the request had succeeded (after_run ran): that is no failure.
            if not finished:
                await self._hook("on_error", ctx, asyncio.CancelledError("stream closed"))
            raise
        except BaseException as exc:
            await self._hook("on_error", ctx, exc)
            raise
        finally:
            if acquired:
                await _finish(self._call_store("release", ctx))

    async def _loop(
        self, ctx: RunContext, model: Any, cfg: AgentRunConfig, goal: Goal | None
    ) -> AsyncGenerator[AgentEvent, None]:
        sid, rid = ctx.session_id, ctx.request_id
        steps = pauses = rounds = 0
        while True:
            if steps >= cfg.max_steps:
                raise StepLimitError(cfg.max_steps)
            steps += 1
            request = self._build_request(ctx, cfg)
            for ext in self.extensions:
                if _has(ext, "before_model"):
                    replaced = await _maybe_await(ext.before_model(ctx, request))
                    if replaced is not None:
                        request = replaced
            yield AgentEvent.model_started(sid, rid)
            step = _Step(model, lambda message: self._settle_calls(ctx, message))
            if _has(self.store, "save_draft"):
                step.drafts = DraftWriter(
                    lambda draft: self._save_draft(ctx, draft),
                    step.draft,
                    cfg.draft_interval,
                )
            try:
                async with aclosing(step.run(request, ctx)) as deltas:
                    async for event in deltas:
                        yield event
            except _Interrupted as exc:
                message = step.stored
                await self._append(ctx, message)
                yield AgentEvent.message_appended(sid, rid, message)
                response = step.response_for(message)
                yield AgentEvent.model_completed(sid, rid, response)
                await self._hook("after_model", ctx, response)
                yield AgentEvent.model_stopped(sid, rid, message.stop, message)  # type: ignore[arg-type]
                raise ProviderResponseError(
                    str(exc), provider=getattr(model, "provider_name", "the provider")
                ) from None
            except BaseException as exc:
                partial = step.partial(exc)
                not_saved: StorageError | None = None
                if partial is not None:
                    try:
                        await _finish(self._append(ctx, partial))
                    except StorageError as failed:
                        not_saved = failed
                if isinstance(exc, Exception):
                    if partial is not None and not_saved is None:
                        yield AgentEvent.message_appended(sid, rid, partial)
                    stop = partial.stop if partial is not None else _fault_stop(exc, ())
                    # The event carries the partial only when it was stored.
                    kept = partial if not_saved is None else None
                    yield AgentEvent.model_stopped(sid, rid, stop, kept, exc)  # type: ignore[arg-type]
                if not_saved is not None:
                    # What arrived is lost: that is the news, and no sentence may say
                    # "saved". Raised even for a Stop (instead of CancelledError), so the
                    # host never reports a partial as kept that is not.
                    raise not_saved from exc
                raise
            message = step.stored
            stop = message.stop
            if stop is not None and stop.reason is StopReason.PAUSED:
                pauses += 1
                if pauses < cfg.max_pauses:
                    message = replace(message, stop=None)
            else:
                pauses = 0
            response = step.response_for(message)
            try:
                await self._append(ctx, message)
                yield AgentEvent.message_appended(sid, rid, message)
                yield AgentEvent.model_completed(sid, rid, response)
                await self._hook("after_model", ctx, response)
            except (asyncio.CancelledError, GeneratorExit):
                # Stop after the step asking for tools was stored, before any tool started:
                # answer its calls as not run, so the history does not read like a crash.
                if ctx.messages and ctx.messages[-1] is message:
                    await self._close_cut_calls(ctx, message.tool_calls, None)
                raise
            if message.stop is not None:
                yield AgentEvent.model_stopped(sid, rid, message.stop, message)
                ctx.state["final"] = message
                return
            if stop is not None and stop.reason is StopReason.PAUSED:
                continue  # below the pause limit: let the model carry on
            if message.tool_calls:
                async with aclosing(self._run_tools(ctx, message.tool_calls)) as results:
                    async for event in results:
                        yield event
                continue
            if goal is not None and rounds < goal.max_rounds:
                verdict = await evaluate_goal(goal, message, ctx.messages)
                if not verdict.done:
                    rounds += 1
                    nudge = InternalMessage(content=verdict.message or goal.description, tag="goal")
                    await self._append(ctx, nudge)
                    yield AgentEvent.message_appended(sid, rid, nudge)
                    continue
            ctx.state["final"] = message
            return

    async def _settle_calls(self, ctx: RunContext, message: AssistantMessage) -> AssistantMessage:
        """Make a step's tool calls safe to store and to ask about, before either happens.

        Each call gets an id no other call of the conversation has: not one of this answer
        (a provider or a proxy may send one id twice), not one on the path (a server that
        numbers calls ``call_0``, ``call_1``… in every answer), not one with a start record
        (a call of another version that ran). Repeats are renamed deterministically
        (``dup``, ``dup_2``…), within what every provider takes back (`unique_calls`); no
        protocol needs the provider's own id again, since each request carries the whole
        history and the provider matches results to calls only within it. Each call is also
        labelled with its tool's `ToolInfo` (the server and what it says of the tool), so a
        host shows the same card after a restart and an export names the tool as the card did.
        """
        taken = path_call_ids(ctx.messages)
        while True:
            calls = unique_calls(message.tool_calls, taken)
            clash = await self._started_ids(ctx, calls)
            if not clash:
                break
            taken |= clash  # those ids are taken by calls of other versions: rename again
        labelled: list[ToolCall] = []
        for number, call in enumerate(calls, 1):
            labelled.append(self._labelled(call))
            if number % _BREATHE == 0:
                await asyncio.sleep(0)  # thousands: the host's loop takes a turn
        return replace(message, tool_calls=tuple(labelled))

    def _labelled(self, call: ToolCall) -> ToolCall:
        tool = self.tools.get(call.name)
        info = tool.info if tool is not None else None
        return call if info is None or info == call.info else replace(call, info=info)

    async def _started_ids(self, ctx: RunContext, calls: Sequence[ToolCall]) -> AbstractSet[str]:
        """The ids among ``calls`` that already have a start record (of another call)."""
        read = self._start_reader(ctx)
        if read is None or not calls:
            return frozenset()
        started = await read(AssistantMessage(tool_calls=tuple(calls)))
        return started or frozenset()

    async def _run_tools(
        self, ctx: RunContext, calls: Sequence[ToolCall]
    ) -> AsyncGenerator[AgentEvent, None]:
        sid, rid = ctx.session_id, ctx.request_id
        running: str | None = None
        try:
            if len(calls) > MAX_TOOL_CALLS_PER_ANSWER:
                # The calls past the cap never run: answered together, in one write, before
                # the first call runs (a kill then leaves only the calls that may run open).
                skipped: list[ToolMessage] = []
                for number, call in enumerate(calls[MAX_TOOL_CALLS_PER_ANSWER:], 1):
                    skipped.append(_failed(call, TOO_MANY_TOOL_TEXT, ToolOutcome.TOO_MANY))
                    if number % _BREATHE == 0:
                        await asyncio.sleep(0)  # thousands: the host's loop takes a turn
                await self._append_many(ctx, skipped)
                for answer in skipped:
                    yield AgentEvent.message_appended(sid, rid, answer)
            for call in calls[:MAX_TOOL_CALLS_PER_ANSWER]:
                yield AgentEvent.tool_started(sid, rid, call)
                # Only a call its hooks let through is "running": a Stop while before_tool
                # waits for a person answers the call as not run.
                result = await self._approve(ctx, call)
                if result is None:
                    # Durably "started" before it runs: a kill before this line leaves no
                    # record, and resume tells the model the call did not run. If it cannot
                    # be recorded (lease lost, disk full), the call does not run.
                    await self._record_start(ctx, call)
                    running = call.id
                    result = await self._run_tool(call)
                    running = None
                await self._append(ctx, result)
                yield AgentEvent.tool_finished(sid, rid, call, result)
                yield AgentEvent.message_appended(sid, rid, result)
                await self._hook("after_tool", ctx, call, result)
        except (asyncio.CancelledError, GeneratorExit):
            # Stop during the batch: answer every call that has no result, so the history is
            # whole ("cancelled mid-tool, already answered as cancelled" → CALL_MODEL).
            await self._close_cut_calls(ctx, calls, running)
            raise

    async def _close_cut_calls(
        self, ctx: RunContext, calls: Sequence[ToolCall], running: str | None
    ) -> None:
        """After a Stop, answer each of ``calls`` that has no stored result yet.

        The results stored so far are the trailing tool messages of ``ctx.messages`` (a
        result whose write the Stop interrupted is among them: `_append` finishes it).
        """
        answered: set[str] = set()
        for message in reversed(ctx.messages):
            if not isinstance(message, ToolMessage):
                break
            answered.add(message.tool_call_id)
        results = [
            interrupted_tool_result(call, CANCELLED_TOOL_TEXT)
            if call.id == running
            else interrupted_tool_result(call, NOT_RUN_TOOL_TEXT, ToolOutcome.NOT_RUN)
            for call in calls
            if call.id not in answered
        ]
        if results:
            # One write for them all (an answer may have asked for many calls).
            with contextlib.suppress(asyncio.CancelledError):
                await self._append_many(ctx, results)  # cancelled again: the write finished

    async def _approve(self, ctx: RunContext, call: ToolCall) -> ToolMessage | None:
        """Ask the ``before_tool`` hooks; a denial becomes the call's failed result."""
        for ext in self.extensions:
            if _has(ext, "before_tool"):
                denial = await _maybe_await(ext.before_tool(ctx, call))
                if denial is not None:
                    reason = denial.reason if isinstance(denial, ToolDenial) else str(denial)
                    return _failed(call, _declined_text(reason), ToolOutcome.DECLINED)
        return None

    async def _record_start(self, ctx: RunContext, call: ToolCall) -> None:
        if _has(self.store, "record_tool_start"):
            await _finish(_stored(self.store.record_tool_start(ctx, call)))

    def _start_reader(self, ctx: RunContext) -> Any:
        """The store's `StartReader` for this session, or None when it records no starts."""
        if not _has(self.store, "started_tool_calls"):
            return None
        return lambda asker: _maybe_await(self.store.started_tool_calls(ctx, asker))

    async def _run_tool(self, call: ToolCall) -> ToolMessage:
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return _failed(call, f"There is no tool named {call.name!r}. Available tools: {known}.")
        try:
            value = await tool.invoke(call.arguments)
        except ToolArgumentError as exc:
            return _failed(
                call,
                f"Invalid arguments for {call.name}: {exc}. Call it again with corrected "
                "arguments.",
            )
        except Exception as exc:
            return _failed(call, f"The tool failed: {type(exc).__name__}: {exc}")
        return ToolMessage(
            tool_call_id=call.id, name=call.name, content=result_text(value), success=True
        )

    # ------------------------------------------------------------------ helpers

    def _build_request(self, ctx: RunContext, cfg: AgentRunConfig) -> ModelRequest:
        messages: list[Message] = []
        if cfg.system_prompt:
            messages.append(SystemMessage(content=cfg.system_prompt))
        messages.extend(ctx.messages)
        return ModelRequest(
            messages=messages, tools=[t.spec for t in self.tools.values()], options=cfg.options
        )

    async def _append(self, ctx: RunContext, message: Message) -> None:
        """Store ``message``; a started write finishes even if this task is cancelled.

        ``ctx.messages`` gets the message exactly when the store has it, also when the
        cancellation is re-raised afterwards, so clean-up knows what is stored.
        """
        write = asyncio.ensure_future(_stored(self._store_append(ctx, message)))
        try:
            await asyncio.shield(write)
        except asyncio.CancelledError:
            await asyncio.wait({write})
            if not write.cancelled() and write.exception() is None:
                ctx.messages.append(message)
                ctx.branch_at = None
            raise
        ctx.messages.append(message)
        ctx.branch_at = None  # stored there, it is the active leaf: the rest follows it

    def _store_append(self, ctx: RunContext, message: Message) -> Any:
        """The store's append: under the new version's branch point while one is pending
        (that write also moves the path), else under the active leaf."""
        if ctx.branch_at is None:
            return self.store.append(ctx, message)
        return self.store.append(ctx, message, parent=ctx.branch_at)

    def _save_draft(self, ctx: RunContext, draft: AssistantMessage) -> Any:
        """The store's save_draft; a new version's first answer settles at its branch point."""
        if ctx.branch_at is None:
            return self.store.save_draft(ctx, draft)
        return self.store.save_draft(ctx, draft, parent=ctx.branch_at)

    async def _append_many(self, ctx: RunContext, messages: Sequence[Message]) -> None:
        """Store ``messages`` in one write when the store can (its ``append_many``: one
        transaction), else one by one; like `_append`, a started write finishes, and
        ``ctx.messages`` gets exactly what the store has."""
        if messages and ctx.branch_at is not None:
            # A new version's first message moves the path with it (never expected for a
            # batch, which follows the answer asking for the calls; kept whole if it comes).
            await self._append(ctx, messages[0])
            messages = messages[1:]
        if not _has(self.store, "append_many"):
            for message in messages:
                await self._append(ctx, message)
            return
        write = asyncio.ensure_future(_stored(self.store.append_many(ctx, list(messages))))
        try:
            await asyncio.shield(write)
        except asyncio.CancelledError:
            await asyncio.wait({write})
            if not write.cancelled() and write.exception() is None:
                ctx.messages.extend(messages)
            raise
        ctx.messages.extend(messages)

    async def _unanswered_results(self, ctx: RunContext) -> list[ToolMessage]:
        try:
            point = await find_resume_point(
                _list_reader(ctx.messages), read_starts=self._start_reader(ctx)
            )
        except AgentResumeError:
            return []
        return point.recovery_results()

    def _tail_reader(self, ctx: RunContext) -> Any:
        if _has(self.store, "restore_tail"):
            return lambda limit, before: self.store.restore_tail(ctx, limit, before)

        async def read(limit: int, before: int | None) -> Sequence[StoredMessage]:
            records: Sequence[StoredMessage] = await _list_reader(await self.store.restore(ctx))(
                limit, before
            )
            return records

        return read

    async def _call_store(self, name: str, ctx: RunContext) -> None:
        if _has(self.store, name):
            await _maybe_await(getattr(self.store, name)(ctx))

    async def _hook(self, name: str, ctx: RunContext, *args: Any) -> None:
        for ext in self.extensions:
            if _has(ext, name):
                await _maybe_await(getattr(ext, name)(ctx, *args))


class _LeaseWatch:
    """Ends a request whose lease was lost: cancels the body while it runs, then says why.

    The lease is whatever the store's ``acquire`` hook returned; only one with a
    ``wait_lost()`` coroutine (a storage `Lease`) is watched. `running` is the task driving
    the request's body at this moment (None while an event is with the consumer), so the
    cancel never lands in the consumer's own code.
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.running: asyncio.Task[Any] | None = None
        self.lost = False
        self._cancelled: asyncio.Task[Any] | None = None
        self._task: asyncio.Task[None] | None = None

    def watch(self, lease: Any) -> None:
        wait_lost = getattr(lease, "wait_lost", None)
        if callable(wait_lost):
            self._task = asyncio.get_running_loop().create_task(
                self._wait(wait_lost()), name=f"lease watch {self.session_id}"
            )

    async def _wait(self, lost: Any) -> None:
        await lost
        self.lost = True
        if self.running is not None:
            self._cancelled = self.running
            self.running.cancel()

    def check(self, error: BaseException | None = None) -> None:
        """Raise `LeaseLostError` if the lease was lost, taking back the cancel it caused.

        `error` is what the body raised, if it did: the storage's own `LeaseLostError`
        (which names the new holder) is kept.
        """
        if not self.lost:
            return
        if self._cancelled is not None:
            task, self._cancelled = self._cancelled, None
            task.uncancel()  # our cancel is answered by this error, not a CancelledError
        if isinstance(error, LeaseLostError):
            raise error
        raise LeaseLostError(self.session_id) from None

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})


class _Step:
    """One model call: forwards deltas as events and remembers them for a partial response."""

    def __init__(
        self,
        model: Any,
        settle: Callable[[AssistantMessage], Awaitable[AssistantMessage]] | None = None,
    ) -> None:
        self.model = model
        self._settle = settle  #: makes the completed step's tool calls safe (unique ids)
        self.text: list[str] = []
        self.reasoning: list[str] = []
        # Deltas are joined so a surrogate pair split across two events is one character
        # again (engine.text): events and the partial only ever carry storable text.
        self._text = TextJoiner()
        self._reasoning = TextJoiner()
        self._arguments: dict[int, TextJoiner] = {}
        self.call_names: dict[int, str] = {}
        self.got_output = False
        self._stored: AssistantMessage | None = None
        #: keeps the step's draft while it streams; None with a store that keeps none
        self.drafts: DraftWriter | None = None
        self._draft_id = new_id()
        self._started = time.time()

    async def run(self, request: ModelRequest, ctx: RunContext) -> AsyncGenerator[AgentEvent, None]:
        sid, rid = ctx.session_id, ctx.request_id
        stream = self.model.stream(request)
        response: ModelResponse | None = None
        drafts = self.drafts
        try:
            async for event in stream:
                kind = event.kind
                if kind is ModelEventKind.TEXT:
                    if event.delta:
                        self.got_output = True
                        piece = self._text.feed(event.delta)
                        if piece:
                            self.text.append(piece)
                            if drafts is not None:
                                drafts.changed()
                            yield AgentEvent.text_delta(sid, rid, piece)
                elif kind is ModelEventKind.REASONING:
                    if event.delta:
                        self.got_output = True
                        piece = self._reasoning.feed(event.delta)
                        if piece:
                            self.reasoning.append(piece)
                            if drafts is not None:
                                drafts.changed()
                            yield AgentEvent.reasoning_delta(sid, rid, piece)
                elif kind is ModelEventKind.TOOL_CALL_DELTA and event.tool_call is not None:
                    self.got_output = True
                    delta = event.tool_call
                    if delta.name:
                        self.call_names[delta.index] = clean(delta.name)
                        if drafts is not None:
                            drafts.changed()  # the draft names the call it withholds
                    joiner = self._arguments.setdefault(delta.index, TextJoiner())
                    arguments = joiner.feed(delta.arguments)
                    name = clean(delta.name) if delta.name else delta.name
                    if arguments != delta.arguments or name != delta.name:
                        delta = replace(delta, name=name, arguments=arguments)
                    yield AgentEvent.tool_call_delta(sid, rid, delta)
                elif kind is ModelEventKind.RETRYING and event.retry is not None:
                    # News, not output: no partial, no draft (got_output stays as it was).
                    yield AgentEvent.model_retrying(sid, rid, event.retry)
                elif kind is ModelEventKind.COMPLETED:
                    response = event.response
                    # A high surrogate still held never got its low half: it shows as U+FFFD.
                    if piece := self._text.flush():
                        self.text.append(piece)
                        yield AgentEvent.text_delta(sid, rid, piece)
                    if piece := self._reasoning.flush():
                        self.reasoning.append(piece)
                        yield AgentEvent.reasoning_delta(sid, rid, piece)
                    break
        finally:
            # The draft stops before the step's message is stored, so no draft write can
            # land after the append that replaces it.
            if drafts is not None:
                await _finish(drafts.close())
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await _finish(aclose())
        if response is None:
            raise ProviderResponseError(
                key="agent.no_final_response",
                provider=getattr(self.model, "provider_name", "the provider"),
            )
        stored = _normalise(response, self.model)
        if stored.tool_calls and self._settle is not None:
            stored = await self._settle(stored)
        self._stored = stored
        if stored.stop is not None and stored.stop.reason is StopReason.INTERRUPTED:
            stop = stored.stop
            raise _Interrupted(stop.message or sentence("stop.provider_error"))

    @property
    def stored(self) -> AssistantMessage:
        """The step's message as stored (set once the model completed the step)."""
        assert self._stored is not None, "the step has not completed"
        return self._stored

    def response_for(self, message: AssistantMessage) -> ModelResponse:
        return ModelResponse(message=message, stop=message.stop, usage=message.usage)

    def draft(self) -> AssistantMessage | None:
        """What the step has shown so far, as the message it becomes if the process dies."""
        if not self.text and not self.reasoning:
            return None  # only tool-call fragments: nothing a person could read
        names = [self.call_names[i] for i in sorted(self.call_names)]
        return AssistantMessage(
            id=self._draft_id,
            created_at=self._started,
            content="".join(self.text),
            reasoning="".join(self.reasoning),
            stop=app_stopped_stop(names),
            model=_model_name(self.model),
        )

    def partial(self, exc: BaseException) -> AssistantMessage | None:
        """The partial response for a fault, or None when nothing arrived."""
        if not self.got_output:
            return None
        names = [self.call_names[i] for i in sorted(self.call_names)]
        return AssistantMessage(
            content="".join(self.text) + self._text.flush(),
            reasoning="".join(self.reasoning) + self._reasoning.flush(),
            stop=_fault_stop(exc, names),
            model=_model_name(self.model),
        )


def _fault_stop(exc: BaseException, withheld: Sequence[str]) -> StopInfo:
    details = {"withheld_tool_calls": list(withheld)} if withheld else {}
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        raw, text = "cancelled", sentence("stop.cancelled")
    elif isinstance(
        exc, ProviderConnectionError | ProviderTimeoutError | OSError
    ) or _is_httpx_transport_error(exc):
        raw, text = "network_error", sentence("stop.network_error")
    else:
        raw = "provider_error"
        text = (
            str(exc)
            if isinstance(exc, ProviderError)
            else sentence("stop.error", name=type(exc).__name__)
        )
    return StopInfo(StopReason.INTERRUPTED, raw=raw, message=text, details=details)


def _is_httpx_transport_error(exc: BaseException) -> bool:
    """True for httpx's transport errors, checked by name so the loop need not import httpx."""
    return any(
        cls.__name__ == "TransportError" and cls.__module__.startswith("httpx")
        for cls in type(exc).__mro__
    )


def _normalise(response: ModelResponse, model: Any) -> AssistantMessage:
    """Apply the storage rules: ``stop`` only when abnormal; no tool calls with it."""
    message = response.message
    stop = response.stop or message.stop
    usage = response.usage or message.usage
    if stop is None or stop.ok:
        message = replace(message, stop=None, usage=usage)
    else:
        if message.tool_calls:
            names = [call.name for call in message.tool_calls]
            details = dict(stop.details)
            details.setdefault("withheld_tool_calls", names)
            stop = replace(stop, details=details)
        message = replace(message, tool_calls=(), stop=stop, usage=usage)
    if message.model is None:
        message = replace(message, model=_model_name(model))
    return message


def _resume_additions(point: ResumePoint) -> list[Message]:
    if point.kind is ResumeKind.RECOVER_TOOLS:
        return [*point.recovery_results()]  # a list of Message (list is invariant)
    notice = resume_notice(point.kind)
    return [notice] if notice is not None else []


def _with_draft(read_tail: Any, draft: StoredMessage) -> Any:
    """A tail reader that sees `draft` as the last stored record (its seq is the next one),
    on the branch it settles on: its ancestors are read as those of its seq."""

    async def read(limit: int, before: int | None) -> Sequence[StoredMessage]:
        if before is not None and before <= draft.seq:
            return await read_tail(limit, before)  # type: ignore[no-any-return]
        records = list(await read_tail(limit, draft.seq))
        return [*records, draft][-limit:]

    return read


def _list_reader(messages: Sequence[Message]) -> Any:
    records = [StoredMessage(i + 1, "", m) for i, m in enumerate(messages)]

    async def read(limit: int, before: int | None) -> Sequence[StoredMessage]:
        end = len(records) if before is None else before - 1
        return records[max(0, end - limit) : end]

    return read


def _failed(call: ToolCall, text: str, outcome: ToolOutcome = ToolOutcome.FAILED) -> ToolMessage:
    return ToolMessage(
        tool_call_id=call.id, name=call.name, content=text, success=False, outcome=outcome
    )


def _declined_text(reason: str) -> str:
    """What the model reads for a call a ``before_tool`` hook declined."""
    reason = clean(reason).strip()
    return f"The person declined: {reason}" if reason else "The person declined to run this tool."


def _model_name(model: Any) -> str | None:
    name = getattr(model, "name", None)
    return name if isinstance(name, str) else None


def _has(obj: Any, name: str) -> bool:
    return callable(getattr(obj, name, None))


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _stored(append: Any) -> None:
    """Await a store's append; any failure to store becomes a `StorageError`.

    A storage extension may be any object with ``append``: whatever it raises, the message
    was not stored, and the host must hear it as such (never a silent drop). The engine's
    own errors (a lost lease) pass unchanged.
    """
    try:
        await _maybe_await(append)
    except ContinuoError:
        raise
    except Exception as exc:
        raise StorageError(
            key="storage.append_failed", params={"detail": f"{type(exc).__name__}: {exc}"}
        ) from exc


async def _finish(awaitable: Any) -> Any:
    """Await to the end even if this task is cancelled meanwhile (a started write finishes)."""
    task = asyncio.ensure_future(awaitable)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait({task})
        raise


async def _final(events: AsyncIterator[AgentEvent]) -> AssistantMessage:
    final: AssistantMessage | None = None
    async for event in events:
        if event.type is AgentEventType.RUN_COMPLETED:
            final = event.message  # type: ignore[assignment]
    assert final is not None
    return final
