"""The rows of a transcript: `TranscriptItem`, its kind and its state, and the model roles.

Kept apart from `ui.models.transcript` (which folds engine messages and events into these
rows) so the widgets that draw rows import no engine code: the window paints its first frame
before the engine is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt

if TYPE_CHECKING:
    from engine.stop import StopInfo

__all__ = ["ITEM_ROLE", "KIND_ROLE", "STATE_ROLE", "ItemKind", "ItemState", "TranscriptItem"]

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
    RUNNING = "running"  # a tool running now
    FAILED = "failed"  # a tool that failed


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
    stop: StopInfo | None = None
    tag: str | None = None  # an internal message's tag (``resume:retry_response``)
    # False for an answer cut off whose text could not be stored (shown, but lost)
    saved: bool = True
    seq: int | None = None
    # a cut-off answer that Resume redid (a ``resume:retry_response`` notice follows it):
    # shown folded, as an earlier attempt
    earlier: bool = False
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
