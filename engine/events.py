"""What a request reports as it goes: `AgentEvent`s, built only through named factories.

Order within one request::

    new input   MESSAGE_APPENDED (closing result of each unanswered call)... MESSAGE_APPENDED (user)
    resume      MESSAGE_APPENDED (each message the resume adds)...
    each step   MODEL_STARTED ─► [MODEL_RETRYING ...] ─► TEXT_DELTA | REASONING_DELTA | TOOL_CALL_DELTA ...
                ─► MESSAGE_APPENDED (assistant) ─► MODEL_COMPLETED [─► MODEL_STOPPED if abnormal]
    too many    MESSAGE_APPENDED (result TOO_MANY) for each call past the cap of one answer
                (`engine.calls`), all stored in one write before the first tool runs
    each tool   TOOL_STARTED ─► TOOL_COMPLETED | TOOL_FAILED ─► MESSAGE_APPENDED (result)
    the end     RUN_COMPLETED (the final assistant message)
    a fault     [MESSAGE_APPENDED (the partial)] ─► MODEL_STOPPED ─► the exception is raised

MODEL_RETRYING comes only before a step's first output: an attempt failed with nothing shown
and the adapter tries again after ``retry.delay`` seconds ("Retrying in 0.4 s, 2 of 4…").
It is not output: nothing is stored for it. When the last attempt fails too, the fault
follows with no partial (MESSAGE_APPENDED) — nothing arrived, so nothing is saved.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .messages import AssistantMessage, Message, ToolCall, ToolMessage
from .model import ModelResponse, RetryInfo, ToolCallDelta
from .stop import StopInfo

__all__ = ["AgentEvent", "AgentEventType"]


class AgentEventType(StrEnum):
    MESSAGE_APPENDED = "message_appended"
    MODEL_STARTED = "model_started"
    TEXT_DELTA = "text_delta"
    REASONING_DELTA = "reasoning_delta"
    TOOL_CALL_DELTA = "tool_call_delta"
    MODEL_RETRYING = "model_retrying"
    MODEL_COMPLETED = "model_completed"
    MODEL_STOPPED = "model_stopped"
    TOOL_STARTED = "tool_started"
    TOOL_COMPLETED = "tool_completed"
    TOOL_FAILED = "tool_failed"
    RUN_COMPLETED = "run_completed"


_T = AgentEventType
#: fields each type must carry (checked in __post_init__)
_REQUIRED: dict[AgentEventType, tuple[str, ...]] = {
    _T.MESSAGE_APPENDED: ("message",),
    _T.MODEL_STARTED: (),
    _T.TEXT_DELTA: ("delta",),
    _T.REASONING_DELTA: ("delta",),
    _T.TOOL_CALL_DELTA: ("tool_call",),
    _T.MODEL_RETRYING: ("retry", "error"),
    _T.MODEL_COMPLETED: ("response",),
    _T.MODEL_STOPPED: ("stop",),
    _T.TOOL_STARTED: ("tool_call",),
    _T.TOOL_COMPLETED: ("tool_call", "message"),
    _T.TOOL_FAILED: ("tool_call", "message"),
    _T.RUN_COMPLETED: ("message",),
}


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """One event of a request. Fields other than the type's own are None."""

    type: AgentEventType
    session_id: str
    request_id: str
    delta: str | None = None
    tool_call: ToolCall | ToolCallDelta | None = None
    message: Message | None = None
    response: ModelResponse | None = None
    stop: StopInfo | None = None
    error: BaseException | None = None
    retry: RetryInfo | None = None

    def __post_init__(self) -> None:
        missing = [name for name in _REQUIRED[self.type] if getattr(self, name) is None]
        if missing:
            raise ValueError(f"{self.type.value} event needs {', '.join(missing)}")

    # Factories, one per type. -------------------------------------------------------

    @classmethod
    def message_appended(cls, sid: str, rid: str, message: Message) -> AgentEvent:
        return cls(_T.MESSAGE_APPENDED, sid, rid, message=message)

    @classmethod
    def model_started(cls, sid: str, rid: str) -> AgentEvent:
        return cls(_T.MODEL_STARTED, sid, rid)

    @classmethod
    def text_delta(cls, sid: str, rid: str, delta: str) -> AgentEvent:
        return cls(_T.TEXT_DELTA, sid, rid, delta=delta)

    @classmethod
    def reasoning_delta(cls, sid: str, rid: str, delta: str) -> AgentEvent:
        return cls(_T.REASONING_DELTA, sid, rid, delta=delta)

    @classmethod
    def tool_call_delta(cls, sid: str, rid: str, delta: ToolCallDelta) -> AgentEvent:
        return cls(_T.TOOL_CALL_DELTA, sid, rid, delta=delta.arguments, tool_call=delta)

    @classmethod
    def model_retrying(cls, sid: str, rid: str, retry: RetryInfo) -> AgentEvent:
        """The model call failed before any output; attempt ``retry.attempt`` follows."""
        return cls(_T.MODEL_RETRYING, sid, rid, retry=retry, error=retry.error)

    @classmethod
    def model_completed(cls, sid: str, rid: str, response: ModelResponse) -> AgentEvent:
        return cls(_T.MODEL_COMPLETED, sid, rid, response=response, message=response.message)

    @classmethod
    def model_stopped(
        cls,
        sid: str,
        rid: str,
        stop: StopInfo,
        message: AssistantMessage | None = None,
        error: BaseException | None = None,
    ) -> AgentEvent:
        return cls(_T.MODEL_STOPPED, sid, rid, stop=stop, message=message, error=error)

    @classmethod
    def tool_started(cls, sid: str, rid: str, call: ToolCall) -> AgentEvent:
        return cls(_T.TOOL_STARTED, sid, rid, tool_call=call)

    @classmethod
    def tool_finished(cls, sid: str, rid: str, call: ToolCall, result: ToolMessage) -> AgentEvent:
        """TOOL_COMPLETED or TOOL_FAILED, by the result's ``success``."""
        kind = _T.TOOL_COMPLETED if result.success else _T.TOOL_FAILED
        return cls(kind, sid, rid, tool_call=call, message=result)

    @classmethod
    def run_completed(cls, sid: str, rid: str, message: AssistantMessage) -> AgentEvent:
        return cls(_T.RUN_COMPLETED, sid, rid, message=message, stop=message.stop)
