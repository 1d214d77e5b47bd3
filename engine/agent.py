"""The agent: model step → tools → next step, with every message stored the moment it is complete.

One request (``run``/``stream`` with new input, ``resume``/``stream_resume`` without;
``regenerate``/``edit`` start a new version) is::

    acquire the session's lease ─► load history ─► add the input (or what the resume adds)
      ─► before_run ─► [model step ─► tools in order, each result stored as it finishes]*
      ─► final answer (goal mode may ask for another round) ─► after_run ─► RUN_COMPLETED
    on any fault: store what arrived (partial text, stop interrupted; answers for cut tools),
    report it, on_error, release the lease, raise.

`Agent` is the public face; each job lives in its own private module:

======================  ==================================================================
`engine._request`       one request's life: the lease, the history, the input, the step
                        loop, the end
`engine._step`          one model call: deltas as events, the streaming draft, the message
                        it is stored as, and what a fault leaves (`fault_stop`)
`engine._tools_run`     one answer's tool calls: approvals, start records, results
`engine._writes`        the request's writes, finished even if it is cancelled
`engine._lease_watch`   ends a request whose lease another process took over
`engine._hooks`         the extensions' hooks, checked by name once, then called typed
`engine._session_ops`   switching versions and settling drafts outside a request
======================  ==================================================================

The history lives in the first extension that is a store (`engine.store`: the contract every
store implements), or in memory. While a step streams, its draft is kept through the store's
``save_draft`` (at most about once a second); `resume_point` reads a draft a dead process
left as the history's last message.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from ._hooks import Hooks
from ._readers import store_reader, with_draft
from ._request import Branch, Request
from ._session_ops import switch_version
from .drafts import DRAFT_INTERVAL
from .errors import AgentResumeError, BranchError
from .events import AgentEvent, AgentEventType
from .extensions import RunContext
from .goal import Goal
from .messages import AssistantMessage, UserMessage
from .model import ModelOptions
from .resume import ResumePoint, find_resume_point
from .store import ROOT, InMemoryHistory, Root, SessionStore, find_store
from .tools import Tool, as_tool

__all__ = ["Agent", "AgentRunConfig"]

#: records read a page while looking back for the last question
_BRANCH_PAGE = 50


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


class Agent:
    """Runs requests on one session. Build with `Agent.create`.

    The first of ``extensions`` that is a store keeps the history (`engine.store.find_store`:
    a `SessionStore`, or a basic store with only ``restore`` and ``append``); without one,
    it is kept in memory. Every extension's hooks are checked by name here (`TypeError` for
    a name that is not a hook, or a hook that is not ``async``).
    """

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
        self._hooks = Hooks(self.extensions)
        self.store: SessionStore = find_store(self.extensions) or InMemoryHistory()

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
        return await _run_to_end(self.stream(text, model=model, config=config, goal=goal))

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
        return await _run_to_end(self.stream_resume(model=model, config=config))

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
        return await _run_to_end(self.stream_regenerate(message_id, model=model, config=config))

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
        answer: str = message_id

        async def above(ctx: RunContext) -> str | Root:
            # Up from the answer to the question it answers (the person's message above it).
            at: str | None = answer
            while at is not None:
                parent, kind = await self.store.parent_of(ctx, at)
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
        return await _run_to_end(self.stream_edit(message_id, text, model=model, config=config))

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
            parent, kind = await self.store.parent_of(ctx, message_id)
            if kind != UserMessage.type_name:
                raise BranchError("not_a_question")
            return ROOT if parent is None else parent

        return self._request(UserMessage(content=text), model, config, None, branch=beside)

    async def switch_to(self, message_id: str, *, config: AgentRunConfig | None = None) -> str:
        """Show another version: the newest leaf under ``message_id`` becomes the active leaf
        (what "‹ 2/3 ›" does). Return that leaf's id. Takes the session's lease while it
        writes, so it never changes the path under a running request (`switch_version`).

        Raises:
            AgentBusyError: a request is running on the session.
            MessageNotFoundError: there is no such message.
        """
        cfg = config or self.config
        return await switch_version(self.store, cfg.session_id, message_id)

    async def _to_last_question(self, ctx: RunContext) -> str | Root:
        """The last user message on the active path (the tail read page by page)."""
        read = store_reader(self.store, ctx)
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
        reader = store_reader(self.store, ctx)
        draft = await self.store.restore_draft(ctx)
        if draft is not None:
            reader = with_draft(reader, draft)

        async def read_starts(asker: AssistantMessage) -> AbstractSet[str] | None:
            return await self.store.started_tool_calls(ctx, asker)

        try:
            return await find_resume_point(reader, cfg.language, read_starts)
        except AgentResumeError:
            return None

    def _request(
        self,
        user: UserMessage | None,
        model: Any,
        config: AgentRunConfig | None,
        goal: Goal | None,
        *,
        branch: Branch | None = None,
    ) -> AsyncIterator[AgentEvent]:
        request = Request(
            self.store,
            self._hooks,
            self.tools,
            user,
            self.model if model is None else model,
            config or self.config,
            goal,
            branch,
        )
        return request.events()


async def _run_to_end(events: AsyncIterator[AgentEvent]) -> AssistantMessage:
    """Consume a request's events; return its final message (RUN_COMPLETED's)."""
    final: AssistantMessage | None = None
    async for event in events:
        if event.type is AgentEventType.RUN_COMPLETED:
            final = event.message  # type: ignore[assignment]
    assert final is not None
    return final
