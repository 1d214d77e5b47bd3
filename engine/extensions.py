"""Extensions: hooks around a request (and, through `engine.store`, where history lives).

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

Hooks are found by name when the agent is built (`HOOKS`); each must be a coroutine
function, and a method named like a hook (``on_*``, ``before_*``, ``after_*``) that is not one
is refused with `TypeError`, so a misspelt hook never silently does not run.

Where history lives is the other seam: the first extension that is a store (see
`engine.store`, whose `SessionStore` is the whole contract) keeps it; without one, history is
kept in memory (`InMemoryHistory`, which keeps versions too). The store's names are
re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .messages import Message, UserMessage
from .store import ROOT, InMemoryHistory, Root, StoredMessage

if TYPE_CHECKING:
    from .messages import AssistantMessage, ToolCall, ToolMessage
    from .model import ModelRequest, ModelResponse

__all__ = [
    "HOOKS",
    "ROOT",
    "Extension",
    "InMemoryHistory",
    "Root",
    "RunContext",
    "StoredMessage",
    "ToolDenial",
]

#: The hooks the engine calls, by name (the table above).
HOOKS: Final = frozenset(
    {
        "on_message",
        "before_run",
        "after_run",
        "on_error",
        "before_model",
        "after_model",
        "before_tool",
        "after_tool",
    }
)


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
