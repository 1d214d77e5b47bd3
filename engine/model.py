"""The model protocol: what the agent sends a model and what a model streams back.

A model is any object with ``stream(request)``, an async iterator over `ModelEvent`s::

    MODEL ─► [retrying ...] ─► text / reasoning / tool_call_delta ... ─► completed(ModelResponse)

``retrying`` (HTTP adapters) comes only before any output: an attempt failed with nothing
shown and another follows after ``delay`` seconds. It is news for a person, not output: it
makes no partial and is not stored.

Deltas are for display; the `ModelResponse` in ``completed`` is the truth the agent stores.
If the stream raises before ``completed``, the agent keeps what the deltas carried as a
partial response (stop ``interrupted``). A scripted model for a test is a few lines::

    class Hello:
        async def stream(self, request):
            yield ModelEvent.text("Hi")
            yield ModelEvent.completed(ModelResponse(AssistantMessage(content="Hi")))
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from .messages import AssistantMessage, Message, Usage
from .stop import StopInfo

__all__ = [
    "Model",
    "ModelEvent",
    "ModelEventKind",
    "ModelOptions",
    "ModelRequest",
    "ModelResponse",
    "RetryInfo",
    "ToolCallDelta",
    "ToolSpec",
]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: name, description and a JSON schema for its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ModelOptions:
    """Per-call generation options; None means the provider's default."""

    max_tokens: int | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None  #: "low" / "medium" / "high", where the API has one
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model call: the messages (system prompt first, when there is one) and tools."""

    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    options: ModelOptions = field(default_factory=ModelOptions)


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A completed step. ``stop`` None means a normal end (``tool_use`` with tool calls)."""

    message: AssistantMessage
    stop: StopInfo | None = None
    usage: Usage | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "stop", StopInfo.coerce(self.stop))


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool call: ``index`` groups fragments of one call."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class RetryInfo:
    """An attempt that failed before any output, and the one that follows.

    A host shows it as "Retrying in 0.4 s, 2 of 4…": ``attempt`` is the number of the
    attempt about to start (2 for the first retry), ``attempts`` the most there will be,
    ``delay`` the seconds waited first, ``error`` why the last attempt failed (its sentence
    is for a person; it never contains a credential).
    """

    attempt: int
    attempts: int
    delay: float
    error: BaseException


class ModelEventKind(StrEnum):
    TEXT = "text"
    REASONING = "reasoning"
    TOOL_CALL_DELTA = "tool_call_delta"
    RETRYING = "retrying"
    COMPLETED = "completed"


# Bound once: a StrEnum member lookup and keyword arguments cost more than the frozen
# dataclass itself, and adapters build one event per streamed chunk (bench_providers).
_TEXT = ModelEventKind.TEXT
_REASONING = ModelEventKind.REASONING


@dataclass(frozen=True, slots=True)
class ModelEvent:
    """One streamed event from a model. Build with the factories, not the constructor."""

    kind: ModelEventKind
    delta: str = ""
    tool_call: ToolCallDelta | None = None
    response: ModelResponse | None = None
    retry: RetryInfo | None = None

    @classmethod
    def text(cls, delta: str) -> ModelEvent:
        return cls(_TEXT, delta)

    @classmethod
    def reasoning(cls, delta: str) -> ModelEvent:
        return cls(_REASONING, delta)

    @classmethod
    def tool_call_delta(
        cls, index: int, id: str | None = None, name: str | None = None, arguments: str = ""
    ) -> ModelEvent:
        return cls(
            ModelEventKind.TOOL_CALL_DELTA,
            delta=arguments,
            tool_call=ToolCallDelta(index, id, name, arguments),
        )

    @classmethod
    def retrying(
        cls, attempt: int, attempts: int, delay: float, error: BaseException
    ) -> ModelEvent:
        """The next attempt starts in ``delay`` seconds (`RetryInfo`); not output."""
        return cls(ModelEventKind.RETRYING, retry=RetryInfo(attempt, attempts, delay, error))

    @classmethod
    def completed(cls, response: ModelResponse) -> ModelEvent:
        return cls(ModelEventKind.COMPLETED, response=response)


@runtime_checkable
class Model(Protocol):
    """Anything that streams `ModelEvent`s for a `ModelRequest`."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...
