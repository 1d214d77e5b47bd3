"""One request's life: the lease, the history, the input, the step loop, the end (the
diagram in `engine.agent`). A new version (regenerate, edit) loads the path to where it
starts, under the lease, and its first stored message moves the path there.

A request whose lease another process takes over ends with `LeaseLostError` as soon as the
lease's heartbeat notices (`LeaseWatch`). The loop never retries; adapters retry before any
output, and the host calls ``resume()``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from collections.abc import Set as AbstractSet
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ._finish import finish
from ._hooks import Hooks
from ._lease_watch import LeaseWatch
from ._readers import list_reader
from ._step import Step, StepInterrupted, fault_stop, response_of
from ._tools_run import ToolRunner
from ._writes import RequestWriter
from .errors import AgentResumeError, ProviderResponseError, StepLimitError, StorageError
from .events import AgentEvent
from .extensions import RunContext
from .goal import Goal, evaluate_goal
from .messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from .model import ModelRequest
from .resume import ResumeKind, ResumePoint, find_resume_point, resume_notice
from .stop import StopReason
from .store import Root, SessionStore
from .tools import Tool

if TYPE_CHECKING:
    from .agent import AgentRunConfig

__all__ = ["Branch", "Request"]

#: Where a new version starts, decided under the lease (None: carry on the active path).
Branch = Callable[[RunContext], Awaitable[str | Root]]


class Request:
    """One request on a session; `events()` runs it."""

    def __init__(
        self,
        store: SessionStore,
        hooks: Hooks,
        tools: Mapping[str, Tool],
        user: UserMessage | None,
        model: Any,
        cfg: AgentRunConfig,
        goal: Goal | None,
        branch: Branch | None = None,
    ) -> None:
        self.store = store
        self.hooks = hooks
        self.tools = tools  #: the agent's live dict: tools added meanwhile are offered
        self.user = user
        self.model = model
        self.cfg = cfg
        self.goal = goal
        self.branch = branch
        self.ctx = RunContext(cfg.session_id, uuid.uuid4().hex, user, resumed=user is None)
        self.writer = RequestWriter(store, self.ctx)
        self.runner = ToolRunner(tools, hooks, self.writer)
        self.watch = LeaseWatch(cfg.session_id)
        #: the request's final assistant message, once the loop has one
        self.final: AssistantMessage | None = None

    async def events(self) -> AsyncGenerator[AgentEvent, None]:
        """Run the request, ending it with `LeaseLostError` once its lease is lost."""
        watch = self.watch
        async with aclosing(self._serve()) as events:
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

    async def _serve(self) -> AsyncGenerator[AgentEvent, None]:
        store, hooks = self.store, self.hooks
        ctx, writer, user = self.ctx, self.writer, self.user
        sid, rid = ctx.session_id, ctx.request_id
        acquired = finished = False
        try:
            self.watch.watch(await store.acquire(ctx))
            acquired = True
            if self.branch is None:
                ctx.messages = list(await store.restore(ctx))
            else:
                # Under the lease, nothing written: where the new version starts (a
                # regenerate under its question, an edit beside the edited message) and the
                # path up to there. The path moves only when the version's first message is
                # stored there (`RequestWriter`); a version that stores nothing leaves it.
                ctx.branch_at = await self.branch(ctx)
                ctx.messages = list(await store.restore(ctx, leaf=ctx.branch_at))
            ctx.first_new = len(ctx.messages)
            if user is not None:
                await hooks.on_message(ctx, user)
                for closing in await self._unanswered_results():
                    await writer.append(closing)
                    yield AgentEvent.message_appended(sid, rid, closing)
                await writer.append(user)
                yield AgentEvent.message_appended(sid, rid, user)
            else:
                point = await find_resume_point(
                    list_reader(ctx.messages), self.cfg.language, self._read_starts
                )
                for added in _resume_additions(point):
                    await writer.append(added)
                    yield AgentEvent.message_appended(sid, rid, added)
            await hooks.before_run(ctx)
            async with aclosing(self._loop()) as steps:
                async for event in steps:
                    yield event
            final = self.final
            assert final is not None, "the loop ends with a final message"
            await hooks.after_run(ctx, final)
            finished = True
            yield AgentEvent.run_completed(sid, rid, final)
        except GeneratorExit:
            # The consumer left `async for` (aclose): no more events can be yielded. After
            # RUN_COMPLETED the request had succeeded (after_run ran): that is no failure.
            if not finished:
                await hooks.on_error(ctx, asyncio.CancelledError("stream closed"))
            raise
        except BaseException as exc:
            await hooks.on_error(ctx, exc)
            raise
        finally:
            if acquired:
                await finish(store.release(ctx))

    async def _read_starts(self, asker: AssistantMessage) -> AbstractSet[str] | None:
        return await self.store.started_tool_calls(self.ctx, asker)

    async def _loop(self) -> AsyncGenerator[AgentEvent, None]:
        """Model steps until a final answer (sets `final`)."""
        ctx, cfg, writer, hooks = self.ctx, self.cfg, self.writer, self.hooks
        sid, rid = ctx.session_id, ctx.request_id
        model, goal = self.model, self.goal
        steps = pauses = rounds = 0
        while True:
            if steps >= cfg.max_steps:
                raise StepLimitError(cfg.max_steps)
            steps += 1
            request = await hooks.before_model(ctx, self._model_request())
            yield AgentEvent.model_started(sid, rid)
            step = Step(model, self.runner.settle_calls, writer.save_draft, cfg.draft_interval)
            try:
                async with aclosing(step.run(request, ctx)) as deltas:
                    async for event in deltas:
                        yield event
            except StepInterrupted as exc:
                message = step.stored
                await writer.append(message)
                yield AgentEvent.message_appended(sid, rid, message)
                response = response_of(message)
                yield AgentEvent.model_completed(sid, rid, response)
                await hooks.after_model(ctx, response)
                yield AgentEvent.model_stopped(sid, rid, message.stop, message)  # type: ignore[arg-type]
                raise ProviderResponseError(
                    str(exc), provider=getattr(model, "provider_name", "the provider")
                ) from None
            except BaseException as exc:
                partial = step.partial(exc)
                not_saved: StorageError | None = None
                if partial is not None:
                    try:
                        await finish(writer.append(partial))
                    except StorageError as failed:
                        not_saved = failed
                if isinstance(exc, Exception):
                    if partial is not None and not_saved is None:
                        yield AgentEvent.message_appended(sid, rid, partial)
                    stop = partial.stop if partial is not None else fault_stop(exc, ())
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
            response = response_of(message)
            try:
                await writer.append(message)
                yield AgentEvent.message_appended(sid, rid, message)
                yield AgentEvent.model_completed(sid, rid, response)
                await hooks.after_model(ctx, response)
            except (asyncio.CancelledError, GeneratorExit):
                # Stop after the step asking for tools was stored, before any tool started:
                # answer its calls as not run, so the history does not read like a crash.
                if ctx.messages and ctx.messages[-1] is message:
                    await writer.close_cut_calls(message.tool_calls, None)
                raise
            if message.stop is not None:
                yield AgentEvent.model_stopped(sid, rid, message.stop, message)
                self.final = message
                return
            if stop is not None and stop.reason is StopReason.PAUSED:
                continue  # below the pause limit: let the model carry on
            if message.tool_calls:
                async with aclosing(self.runner.run(message.tool_calls)) as results:
                    async for event in results:
                        yield event
                continue
            if goal is not None and rounds < goal.max_rounds:
                verdict = await evaluate_goal(goal, message, ctx.messages)
                if not verdict.done:
                    rounds += 1
                    nudge = InternalMessage(content=verdict.message or goal.description, tag="goal")
                    await writer.append(nudge)
                    yield AgentEvent.message_appended(sid, rid, nudge)
                    continue
            self.final = message
            return

    def _model_request(self) -> ModelRequest:
        cfg = self.cfg
        messages: list[Message] = []
        if cfg.system_prompt:
            messages.append(SystemMessage(content=cfg.system_prompt))
        messages.extend(self.ctx.messages)
        return ModelRequest(
            messages=messages, tools=[t.spec for t in self.tools.values()], options=cfg.options
        )

    async def _unanswered_results(self) -> list[ToolMessage]:
        """Answers for the calls the history leaves open (a new message closes them)."""
        try:
            point = await find_resume_point(
                list_reader(self.ctx.messages), read_starts=self._read_starts
            )
        except AgentResumeError:
            return []
        return point.recovery_results()


def _resume_additions(point: ResumePoint) -> list[Message]:
    if point.kind is ResumeKind.RECOVER_TOOLS:
        return [*point.recovery_results()]  # a list of Message (list is invariant)
    notice = resume_notice(point.kind)
    return [notice] if notice is not None else []
