"""The rows of a transcript: `TranscriptItem`, its kind and its state, and the model roles.

Kept apart from `ui.conversation.transcript` (which folds engine messages and events into these
rows) so the widgets that draw rows import no engine code: the window paints its first frame
before the engine is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt

if TYPE_CHECKING:
    from engine import StopInfo

__all__ = [
    "ITEM_ROLE",
    "KIND_ROLE",
    "STATE_ROLE",
    "ApprovalChoice",
    "ItemKind",
    "ItemState",
    "ToolEffect",
    "ToolHints",
    "TranscriptItem",
]

KIND_ROLE = Qt.ItemDataRole.UserRole + 1
STATE_ROLE = Qt.ItemDataRole.UserRole + 2
ITEM_ROLE = Qt.ItemDataRole.UserRole + 3


class ItemKind(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    NOTICE = "notice"
    #: the calls of one answer past the cap (`engine.calls.MAX_TOOL_CALLS_PER_ANSWER`), folded
    #: into one row: none of them runs
    FOLDED_CALLS = "folded_calls"


class ItemState(StrEnum):
    DONE = "done"  # a finished message, or a tool that succeeded
    STREAMING = "streaming"  # an answer still arriving
    STOPPED = "stopped"  # Stop was pressed; the partial answer is kept
    INTERRUPTED = "interrupted"  # a fault cut the answer, or the app stopped mid-tool
    TRUNCATED = "truncated"  # the output limit cut the answer
    REFUSED = "refused"
    CONTEXT_FULL = "context_full"
    PAUSED = "paused"
    OTHER = "other"  # a stop this version does not know
    PENDING = "pending"  # a tool call not started yet
    AWAITING_APPROVAL = "awaiting_approval"  # a tool call waiting for the person's answer
    RUNNING = "running"  # a tool running now
    FAILED = "failed"  # a tool that failed
    DENIED = "denied"  # the person (or a policy) declined the tool call
    NOT_RUN = "not_run"  # a tool call answered without running (Stop before it started)


class ToolEffect(StrEnum):
    """What a tool's server says it does (its annotations; hints, not guarantees), read
    strictly as `engine.messages.tool_effect` does (the same values)."""

    UNKNOWN = ""  # not an MCP tool (the app's own), or a call stored before tools were labelled
    READ_ONLY = "read_only"  # said read-only, and nothing it said contradicts that
    CHANGES = "changes"  # may change things, said not to destroy anything
    DESTRUCTIVE = "destructive"  # may delete or overwrite: said so, said nothing, or contradicted


class ToolHints(StrEnum):
    """Why a card reads its tool's effect as it does."""

    SAID = "said"  # the server's hints say it, consistently
    SILENT = "silent"  # the server said nothing about what the tool does
    CONTRADICTORY = "contradictory"  # it said read-only and something that contradicts it


class ApprovalChoice(StrEnum):
    """The person's answer on an approval card."""

    ALLOW_ONCE = "allow_once"
    ALWAYS = "always"
    DENY = "deny"


class ApprovalQuestion(Protocol):
    """What an approval card asks (`ui.tools.approvals.PendingApproval`)."""

    @property
    def answered(self) -> bool: ...

    def answer(self, choice: ApprovalChoice, reason: str = "") -> None: ...


@dataclass(slots=True, eq=False)
class TranscriptItem:
    """One row of the transcript."""

    kind: ItemKind
    # the message id; for a card, "tool:<asking message id>:<index of the call>" (a card whose
    # asking message is not loaded: "result:<result message id>"), for a row of folded calls
    # "folded:<asking message id>" ("folded:?<first result id>"), so no two rows share a key
    # whatever ids a provider sent; "live:N" while an answer streams
    key: str
    state: ItemState = ItemState.DONE
    parts: list[str] = field(default_factory=list)  # the text, in arrival order
    reasoning_parts: list[str] = field(default_factory=list)
    tool_call_id: str = ""  # the call's id (unique in the conversation, see engine.calls)
    tool_name: str = ""  # the name the model called (``server__tool`` for an MCP tool)
    tool_arguments: str = ""  # pretty JSON
    tool_result: str = ""
    # an MCP tool's own name on its server, the server, its title (the server's words) and
    # what its hints say it does: kept with the call (engine.messages.ToolInfo), so the same
    # after a restart; "" and UNKNOWN for the app's own tools
    tool_remote: str = ""
    tool_title: str = ""
    tool_server: str = ""
    tool_effect: ToolEffect = ToolEffect.UNKNOWN
    tool_hints: ToolHints = ToolHints.SAID
    # a row of folded calls: the ids it stands for, how many, their tools' names (each
    # once, in order) and how many of them were answered, by outcome (ToolOutcome values)
    folded_ids: set[str] = field(default_factory=set)
    folded_total: int = 0
    folded_names: list[str] = field(default_factory=list)
    folded_outcomes: dict[str, int] = field(default_factory=dict)
    # while the card waits for the person (AWAITING_APPROVAL): the question its buttons answer
    approval: ApprovalQuestion | None = None
    # time.monotonic() when the tool began to run (RUNNING), for the elapsed seconds
    started_at: float | None = None
    stop: StopInfo | None = None
    tag: str | None = None  # an internal message's tag (``resume:retry_response``)
    # False for an answer cut off whose text could not be stored (shown, but lost)
    saved: bool = True
    seq: int | None = None
    # a cut-off answer that Resume redid (a ``resume:retry_response`` notice follows it):
    # shown folded, as an earlier attempt
    earlier: bool = False
    # versions (the message tree): this message's place among its siblings and their count,
    # (index from 0, count), when it has siblings; None otherwise or not known yet
    versions: tuple[int, int] | None = None
    # who wrote an answer, when and with how many tokens (the line under it)
    model: str = ""
    created_at: float | None = None
    output_tokens: int | None = None
    seconds: float | None = None  # how long the live answer took to arrive (not stored)
    version: int = 0  # bumped on every change, so a view can skip work it already did

    @property
    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    @property
    def reasoning(self) -> str:
        if len(self.reasoning_parts) > 1:
            self.reasoning_parts[:] = ["".join(self.reasoning_parts)]
        return self.reasoning_parts[0] if self.reasoning_parts else ""
