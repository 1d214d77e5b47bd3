"""Continuo's agent runtime: durable sessions that can always be resumed.

The public API, everything a host needs, is importable from here (see DESIGN.md, "The engine's
public API"); provider adapters live in `engine.providers`. The engine is pure asyncio and
never imports Qt.
"""

from .agent import Agent, AgentRunConfig
from .client import AgentClient, SyncAgent
from .errors import (
    AgentBusyError,
    AgentError,
    AgentResumeError,
    ContinuoError,
    CorruptDatabaseError,
    NewerSchemaError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderContextLengthError,
    ProviderEmptyStreamError,
    ProviderError,
    ProviderRateLimitError,
    ProviderResponseError,
    ProviderStatusError,
    ProviderTimeoutError,
    SessionExistsError,
    StepLimitError,
    StorageError,
    ToolDefinitionError,
    UnknownMessageTypeError,
)
from .events import AgentEvent, AgentEventType
from .extensions import Extension, InMemoryHistory, RunContext, StoredMessage, ToolDenial
from .goal import Goal, GoalVerdict
from .jsonl import JSONLExtension
from .messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
    message_from_dict,
    message_from_json,
    message_to_dict,
    message_to_json,
)
from .model import (
    Model,
    ModelEvent,
    ModelEventKind,
    ModelOptions,
    ModelRequest,
    ModelResponse,
    ToolCallDelta,
    ToolSpec,
)
from .resume import ResumeKind, ResumePoint
from .stop import StopInfo, StopReason
from .storage import LeaseHolder, SessionInfo, SQLiteSessionExtension, SQLiteSessionStorage
from .tools import Tool, tool

__all__ = [
    "Agent",
    "AgentBusyError",
    "AgentClient",
    "AgentError",
    "AgentEvent",
    "AgentEventType",
    "AgentResumeError",
    "AgentRunConfig",
    "AssistantMessage",
    "ContinuoError",
    "CorruptDatabaseError",
    "Extension",
    "Goal",
    "GoalVerdict",
    "InMemoryHistory",
    "InternalMessage",
    "JSONLExtension",
    "LeaseHolder",
    "Message",
    "Model",
    "ModelEvent",
    "ModelEventKind",
    "ModelOptions",
    "ModelRequest",
    "ModelResponse",
    "NewerSchemaError",
    "ProviderAuthError",
    "ProviderConnectionError",
    "ProviderContextLengthError",
    "ProviderEmptyStreamError",
    "ProviderError",
    "ProviderRateLimitError",
    "ProviderResponseError",
    "ProviderStatusError",
    "ProviderTimeoutError",
    "ResumeKind",
    "ResumePoint",
    "RunContext",
    "SQLiteSessionExtension",
    "SQLiteSessionStorage",
    "SessionExistsError",
    "SessionInfo",
    "StepLimitError",
    "StopInfo",
    "StopReason",
    "StorageError",
    "StoredMessage",
    "SyncAgent",
    "SystemMessage",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolDefinitionError",
    "ToolDenial",
    "ToolMessage",
    "ToolSpec",
    "UnknownMessageTypeError",
    "Usage",
    "UserMessage",
    "message_from_dict",
    "message_from_json",
    "message_to_dict",
    "message_to_json",
    "tool",
]
