"""The rows of a transcript: `TranscriptItem`, its kind and its state, and the model roles.

Kept apart from `ui.models.transcript` (which folds engine messages and events into these
rows) so the widgets that draw rows import no engine code: the window paints its first frame
before the engine is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt

if TYPE_CHECKING:
    from engine.stop import StopInfo

__all__ = [
    "ITEM_ROLE",
    "KIND_ROLE",
    "STATE_ROLE",
    "ApprovalChoice",
    "ItemKind",
    "ItemState",
    "ToolEffect",
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
    """What a tool's server says it does (its annotations; hints, not guarantees)."""

    UNKNOWN = ""  # not an MCP tool, or a card read back from history
    READ_ONLY = "read_only"
    CHANGES = "changes"  # may change things, said not to destroy anything
    DESTRUCTIVE = "destructive"  # may delete or overwrite


class ApprovalChoice(StrEnum):
    """The person's answer on an approval card."""

    ALLOW_ONCE = "allow_once"
    ALWAYS = "always"
    DENY = "deny"


class ApprovalQuestion(Protocol):
    """What an approval card asks (`ui.approvals.PendingApproval`)."""

    @property
    def answered(self) -> bool: ...

    def answer(self, choice: ApprovalChoice, reason: str = "") -> None: ...


@dataclass(slots=True, eq=False)
class TranscriptItem:
    """One row of the transcript."""

    kind: ItemKind
    key: str  # the message id, or the tool call's id for a card, or "live:N" while streaming
    state: ItemState = ItemState.DONE
    parts: list[str] = field(default_factory=list)  # the text, in arrival order
    reasoning_parts: list[str] = field(default_factory=list)
    tool_name: str = ""
    tool_arguments: str = ""  # pretty JSON
    tool_result: str = ""
    # an MCP tool's title, server and what it says it does (live cards; "" from history)
    tool_title: str = ""
    tool_server: str = ""
    tool_effect: ToolEffect = ToolEffect.UNKNOWN
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
