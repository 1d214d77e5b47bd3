"""Approvals: the person answers before each MCP tool call runs.

`Approvals` is an engine extension (its ``before_tool`` hook, see `engine.extensions`) the
controller owns and gives every agent it builds. The engine awaits the hook before each tool
call; for a tool of an MCP server the hook puts the call's card in the transcript into
"waiting for approval" (`TranscriptModel.ask_approval`) and waits, without a timeout, for
the card's answer:

=================  ==========================================================================
Allow once         the call runs (the next call of that tool asks again)
Always allow       the call runs, and (server, tool) is kept in ``settings.always_allowed``
Deny (a reason)    the call is answered as declined: the model reads "The person declined: …"
Stop, or closing   the request is cancelled while it waits: the engine answers the call as
                   not run, the card says "Did not run"
=================  ==========================================================================

The app's own tools (not `MCPTool`) run without asking; so does an MCP tool the person
always allows, and, with the `ToolApproval.READ_ONLY` policy, one whose server's hints say
read-only and nothing that contradicts it (`engine.messages.tool_effect`: a tool also marked
destructive, or marked nothing at all, asks). Under the default policy (`ToolApproval.ASK`)
every MCP call asks. The card and the decision read the same `ToolInfo` (the one the engine
keeps with the call).
`waitingChanged` tells the window a conversation waits for the person (its status line).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Signal

from engine import Extension, RunContext, ToolCall, ToolDenial, ToolInfo
from engine import ToolEffect as EngineToolEffect

from ..conversation.items import ApprovalChoice, ItemState, ToolEffect
from ..settings.store import ToolApproval

if TYPE_CHECKING:
    from engine.mcp import MCPTool

    from ..conversation.transcript import TranscriptModel
    from ..settings.store import Settings

__all__ = ["ApprovalsHost", "Approvals", "PendingApproval", "mcp_tool", "tool_effect"]

log = logging.getLogger(__name__)


def mcp_tool(tool: Any) -> MCPTool | None:
    """``tool`` if it is an MCP server's tool, else None.

    Without importing `engine.mcp` (the SDK is large, and the window starts without it): any
    `MCPTool` comes from that module, so while it is not loaded there is none.
    """
    toolset = sys.modules.get("engine.mcp.toolset")
    if toolset is None or not isinstance(tool, toolset.MCPTool):
        return None
    return tool  # type: ignore[no-any-return]


def tool_effect(info: ToolInfo) -> ToolEffect:
    """What the tool's server says it does, read strictly (a contradiction or silence is
    destructive)."""
    return ToolEffect(info.effect.value)


class PendingApproval:
    """One question on a card: may this call run? Answered once, by the card's buttons."""

    def __init__(
        self, session_id: str, call: ToolCall, info: ToolInfo, future: asyncio.Future[Any]
    ) -> None:
        self.session_id = session_id
        self.call_id = call.id
        self.server = info.server
        self.tool = info.tool
        self.title = info.title
        self.effect = tool_effect(info)
        self._future = future

    @property
    def answered(self) -> bool:
        return self._future.done()

    def answer(self, choice: ApprovalChoice, reason: str = "") -> None:
        """The person's answer; a second answer (or one after Stop) is ignored."""
        if not self._future.done():
            self._future.set_result((ApprovalChoice(choice), reason))


class ApprovalsHost(Protocol):
    """What asking before a tool call needs of the controller (`ui.controller.Controller` is
    one): the tools it knows, a conversation's transcript (the card), the settings (the
    always-allowed tools) and a way to save them."""

    @property
    def settings(self) -> Settings | None: ...

    def find_tool(self, name: str) -> Any: ...

    def transcript(self, session_id: str) -> TranscriptModel: ...

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any]: ...

    async def save_settings(self) -> None: ...


class Approvals(QObject, Extension):
    """The window's ``before_tool``: asks the person about each MCP tool call."""

    # (session id, whether a card of that conversation waits for the person)
    waitingChanged = Signal(str, bool)  # noqa: N815

    def __init__(self, host: ApprovalsHost, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._c = host
        self._waiting: dict[tuple[str, str], PendingApproval] = {}
        # each running request's tools by name (its agent's own map), by session id
        self._offered: dict[str, Mapping[str, Any]] = {}

    def offer(self, session_id: str, tools: Mapping[str, Any] | None) -> None:
        """The tools a conversation's running request has (its agent's map, which grows when
        its servers' tools are added), or None when the request is over. A card asks about
        the very tool the agent runs under a name, whatever other requests listed since."""
        if tools is None:
            self._offered.pop(session_id, None)
        else:
            self._offered[session_id] = tools

    def waiting(self, session_id: str) -> bool:
        """Whether a card of this conversation waits for the person now."""
        return any(sid == session_id for sid, _ in self._waiting)

    def pending(self) -> list[PendingApproval]:
        """The questions waiting now, oldest first."""
        return list(self._waiting.values())

    async def before_tool(self, ctx: RunContext, call: ToolCall) -> ToolDenial | None:
        offered = self._offered.get(ctx.session_id)
        tool = mcp_tool(
            offered.get(call.name) if offered is not None else self._c.find_tool(call.name)
        )
        if tool is None:
            return None  # the app's own tools run as they always did
        sid = ctx.session_id
        rows = self._c.transcript(sid)
        # What the card shows is what decides: the info the engine kept with the call.
        info = call.info if call.info is not None else tool.info
        if call.info is None:
            rows.describe_tool(call.id, info)
        settings = self._c.settings
        if settings is not None and (
            settings.is_always_allowed(info.server, info.tool)
            or (
                settings.tool_approval == ToolApproval.READ_ONLY
                and info.effect is EngineToolEffect.READ_ONLY
            )
        ):
            return None
        question = PendingApproval(sid, call, info, asyncio.get_running_loop().create_future())
        if not rows.ask_approval(call.id, question):
            # No card to ask on (never expected): waiting unseen would hang the request.
            log.warning("no card to ask about tool call %s; it does not run", call.id)
            return ToolDenial("The app could not ask the person, so the tool did not run.")
        key = (sid, call.id)
        self._waiting[key] = question
        self.waitingChanged.emit(sid, True)
        try:
            choice, reason = await question._future  # no timeout: the person takes their time
        except asyncio.CancelledError:
            # Stop (or closing the window): the engine answers the call as not run.
            rows.end_approval(call.id, ItemState.NOT_RUN)
            raise
        finally:
            self._waiting.pop(key, None)
            self.waitingChanged.emit(sid, self.waiting(sid))
        if choice is ApprovalChoice.DENY:
            rows.end_approval(call.id, ItemState.DENIED)
            return ToolDenial(reason.strip())
        if choice is ApprovalChoice.ALWAYS:
            self._always_allow(info.server, info.tool)
        rows.end_approval(call.id, ItemState.RUNNING)
        return None

    def _always_allow(self, server: str, tool: str) -> None:
        settings = self._c.settings
        if settings is None:
            return
        if not settings.is_always_allowed(server, tool):
            settings.always_allowed.append((server, tool))
        # Saved as its own task: the call runs now, whatever the disk does; a failure to
        # save is said by the controller (its owned tasks report their failures).
        self._c.spawn(self._c.save_settings(), "save always-allowed tool")
