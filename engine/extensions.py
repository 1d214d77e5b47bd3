"""Extensions: hooks around a request, and where history lives.

An extension subclasses `Extension` (every hook a no-op) or is a plain object with any of
these async hooks, context first:

=========================  ===============================================================
``on_message(ctx, msg)``   a new user message arrived (not called on resume)
``before_run(ctx)``        the request's input is stored; the first model call is next
``after_run(ctx, result)`` the request succeeded with this final assistant message
``on_error(ctx, error)``   the request failed (also: nothing to resume)
``before_model(ctx, req)`` may return a replacement `ModelRequest`
``after_model(ctx, resp)`` a step completed
``before_tool(ctx, call)`` may return a `ToolDenial` (the call is answered as declined)
``after_tool(ctx, call, result)``
=========================  ===============================================================

Storage hooks, used from the first extension that has ``append``: ``restore(ctx)`` → the
whole history; ``append(ctx, message)``; optionally ``append_many(ctx, messages)``, which
stores several messages one under the other in one write, all or none (without it, the agent
appends them one by one); optionally ``restore_tail(ctx, limit, before_seq)``
→ the last stored records (so reading a resume point does not grow with the history), and
``acquire(ctx)`` / ``release(ctx)`` for a per-session lease (``acquire`` may return the
lease; if it has a ``wait_lost()`` coroutine, the agent ends the request with
`LeaseLostError` once it returns), and ``save_draft(ctx, message)`` / ``restore_draft(ctx)``
for streaming drafts: while a step streams, the agent hands ``save_draft`` the assistant
message so far (text and reasoning, stop ``interrupted`` with raw ``app_stopped``, no tool
calls) at most about once a second; ``restore_draft`` returns a draft whose writer is gone as
a `StoredMessage`, so a read-only `resume_point` sees it as the history's last message. A
store without them (in memory, JSONL) keeps no drafts. Optionally ``record_tool_start(ctx, call)``,
awaited after ``before_tool`` let a call through and just before it runs (if it raises, the
call does not run), and ``started_tool_calls(ctx, asker)`` → the ids of the assistant
message ``asker``'s calls that started, or None when the store cannot tell: resume then says
which unanswered calls never ran. A store without them leaves every unanswered call "may or
may not have completed". Optionally, for a store that keeps versions (a message tree whose
history is the path to an active leaf): ``append(ctx, message, parent=message_id | ROOT)``
stores the message under that message (or as a new root) instead of under the active leaf
and makes it the active leaf, in one write — a new version (an edit's question, the first
message of a regenerated answer) and the move of the path to it are never apart;
``restore(ctx, leaf=message_id | ROOT)`` → the path from the root to that message (``[]``
for ROOT); ``save_draft(ctx, message, parent=...)`` keeps a draft that settles under that
message; ``switch_to(ctx, message_id)`` makes the newest leaf under a message active and
returns its id; ``parent_of(ctx, message_id)`` → (its parent's id or None, its type name);
``branch(ctx, message_id | None)`` only moves the active leaf (for hosts: the agent never
moves the path without storing). A store with drafts reads ``restore_tail(ctx, limit,
draft.seq)`` as the draft's ancestors, the path it settles on. Without a storage extension,
history is kept in memory (`InMemoryHistory`, which keeps versions too).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Final

from .errors import AgentBusyError, MessageNotFoundError
from .messages import Message, UserMessage
from .sentences import Phrase

if TYPE_CHECKING:
    from .messages import AssistantMessage, ToolCall, ToolMessage
    from .model import ModelRequest, ModelResponse

__all__ = [
    "ROOT",
    "Extension",
    "InMemoryHistory",
    "Root",
    "RunContext",
    "StoredMessage",
    "ToolDenial",
]


class Root(Enum):
    """The place before every message: a message stored with ``parent=ROOT`` is a new root
    (an edit of a conversation's first question), and the path to ROOT is empty."""

    ROOT = "root"


#: ``parent=ROOT``: store the message as a root (see `Root`)
ROOT: Final = Root.ROOT


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message as storage holds it: its per-session sequence number and request id."""

    seq: int
    request_id: str
    message: Message


@dataclass(frozen=True, slots=True)
class ToolDenial:
    """Returned by ``before_tool`` to decline a call; the model is told the person declined.

    The model reads "The person declined: <reason>", or "The person declined to run this
    tool." when ``reason`` is empty.
    """

    reason: str = ""


@dataclass(slots=True)
class RunContext:
    """What hooks know about the request in progress."""

    session_id: str
    request_id: str
    input_message: UserMessage | None  #: None on resume
    resumed: bool = False
    #: the session's history as the request has it (grows as messages are appended)
    messages: list[Message] = field(default_factory=list)
    #: index in ``messages`` of the first message this request added
    first_new: int = 0
    #: where a new version starts (an edit: beside the edited question; a regenerate: under
    #: the question): the request's first stored message goes under this message (ROOT: as
    #: a root) and becomes the active leaf in the same write. None for a request that
    #: carries on the active path, and once that first message is stored.
    branch_at: str | Root | None = None
    #: free space for extensions to keep per-request state
    state: dict[str, Any] = field(default_factory=dict)


class Extension:
    """Base class with every hook a no-op. Override what you need."""

    async def on_message(self, ctx: RunContext, message: UserMessage) -> None: ...
    async def before_run(self, ctx: RunContext) -> None: ...
    async def after_run(self, ctx: RunContext, result: AssistantMessage) -> None: ...
    async def on_error(self, ctx: RunContext, error: BaseException) -> None: ...
    async def before_model(self, ctx: RunContext, request: ModelRequest) -> ModelRequest | None:
        return None

    async def after_model(self, ctx: RunContext, response: ModelResponse) -> None: ...
    async def before_tool(self, ctx: RunContext, call: ToolCall) -> ToolDenial | None:
        return None

    async def after_tool(self, ctx: RunContext, call: ToolCall, result: ToolMessage) -> None: ...


class InMemoryHistory:
    """The default store: one tree of messages per session, in this process only.

    Like the SQLite store, the history is the path from the root to the session's active
    leaf, and an append goes under the active leaf (or the ``parent`` it names) and becomes
    it. It refuses a second concurrent request on a session like the SQLite lease does.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, list[StoredMessage]] = {}  # every message, seq order
        self._parents: dict[str, dict[int, int | None]] = {}
        self._active: dict[str, int | None] = {}
        self._busy: dict[str, str] = {}
        self._lock = asyncio.Lock()

    def _path(self, sid: str, leaf: int | None) -> list[StoredMessage]:
        records, parents = self._sessions.get(sid, []), self._parents.get(sid, {})
        path: list[StoredMessage] = []
        while leaf is not None:
            path.append(records[leaf - 1])
            leaf = parents[leaf]
        return path[::-1]

    def _seq_of(self, sid: str, message_id: str) -> int:
        for record in reversed(self._sessions.get(sid, [])):
            if record.message.id == message_id:
                return record.seq
        raise MessageNotFoundError(sid, message_id, "memory")

    def _place(self, sid: str, at: str | Root | None) -> int | None:
        """The seq of the message ``at`` names (None for ROOT); the active leaf for None."""
        if at is None:
            return self._active.get(sid)
        return None if at is ROOT else self._seq_of(sid, at)

    async def restore(self, ctx: RunContext, *, leaf: str | Root | None = None) -> list[Message]:
        """The path to the active leaf (or to ``leaf``; ``[]`` for ROOT)."""
        sid = ctx.session_id
        return [r.message for r in self._path(sid, self._place(sid, leaf))]

    async def restore_tail(
        self, ctx: RunContext, limit: int, before_seq: int | None = None
    ) -> Sequence[StoredMessage]:
        sid = ctx.session_id
        if before_seq is not None:
            leaf = self._parents.get(sid, {}).get(before_seq)
        else:
            leaf = self._active.get(sid)
        return self._path(sid, leaf)[-limit:] if limit > 0 else []

    async def append(
        self, ctx: RunContext, message: Message, *, parent: str | Root | None = None
    ) -> None:
        """Store ``message`` under the active leaf (or ``parent``); it becomes the leaf."""
        sid = ctx.session_id
        under = self._place(sid, parent)  # an unknown parent raises before anything changes
        records = self._sessions.setdefault(sid, [])
        seq = len(records) + 1
        records.append(StoredMessage(seq, ctx.request_id, message))
        self._parents.setdefault(sid, {})[seq] = under
        self._active[sid] = seq

    async def append_many(self, ctx: RunContext, messages: Sequence[Message]) -> None:
        """Append ``messages`` one under the other, all at once (as the SQLite store's one
        transaction does: nothing can come between them)."""
        for message in messages:
            await self.append(ctx, message)

    async def branch(self, ctx: RunContext, message_id: str | None) -> None:
        sid = ctx.session_id
        self._active[sid] = None if message_id is None else self._seq_of(sid, message_id)

    async def switch_to(self, ctx: RunContext, message_id: str) -> str:
        sid = ctx.session_id
        top = self._seq_of(sid, message_id)
        parents = self._parents.get(sid, {})
        below = {top}
        for seq in range(top + 1, len(self._sessions[sid]) + 1):  # children come later
            if parents[seq] in below:
                below.add(seq)
        self._active[sid] = leaf = max(below)
        return self._sessions[sid][leaf - 1].message.id

    async def parent_of(self, ctx: RunContext, message_id: str) -> tuple[str | None, str]:
        sid = ctx.session_id
        seq = self._seq_of(sid, message_id)
        parent = self._parents[sid][seq]
        kind = self._sessions[sid][seq - 1].message.type_name
        return (None if parent is None else self._sessions[sid][parent - 1].message.id), kind

    async def acquire(self, ctx: RunContext) -> None:
        holder = self._busy.get(ctx.session_id)
        if holder is not None:
            raise AgentBusyError(
                ctx.session_id, Phrase("agent.busy.in_process", {"request_id": holder})
            )
        self._busy[ctx.session_id] = ctx.request_id

    async def release(self, ctx: RunContext) -> None:
        if self._busy.get(ctx.session_id) == ctx.request_id:
            del self._busy[ctx.session_id]
