"""The conversation vocabulary: messages, tool calls and usage, with lossless JSON.

These types are values. Every message has a stable ``id`` and a ``created_at`` time (seconds
since the epoch, UTC); storage adds a per-session sequence number of its own. Content is text;
a user message also carries its attachments (`engine.attachments`: pictures and documents,
by reference to their bytes) under ``"attachments"``, written only when there are some.

JSON form (version 1)::

    {"v": 1, "type": "assistant", "id": "...", "created_at": 1.7e9, "content": "...", ...}

`message_from_dict` refuses a ``type`` it does not know with `UnknownMessageTypeError` and a
``v`` newer than it reads the same way, rather than guessing.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from .attachments import Attachment, attachment_from_dict, attachment_to_dict
from .errors import UnknownMessageTypeError
from .stop import StopInfo
from .text import clean, clean_data

__all__ = [
    "AssistantMessage",
    "InternalMessage",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolEffect",
    "ToolInfo",
    "ToolMessage",
    "ToolOutcome",
    "Usage",
    "UserMessage",
    "message_from_dict",
    "message_from_json",
    "message_to_dict",
    "message_to_json",
]

MESSAGE_FORMAT_VERSION = 1


def new_id() -> str:
    """Return a fresh, unique message id."""
    return uuid.uuid4().hex


class ToolEffect(StrEnum):
    """What a tool does, as its server's hints say it, read strictly (`tool_effect`)."""

    READ_ONLY = "read_only"  #: said read-only, and nothing said contradicts it
    CHANGES = "changes"  #: said to change things without destroying any
    DESTRUCTIVE = "destructive"  #: said to delete or overwrite, said nothing, or contradicts itself


def tool_effect(
    read_only: bool | None, destructive: bool | None = None, idempotent: bool | None = None
) -> ToolEffect:
    """Read a server's hints (MCP ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``)
    the safe way: a server is trusted only as far as its words agree.

    Read-only only when ``read_only`` is True and no other hint contradicts it (a read-only
    tool destroys nothing and is idempotent, so ``destructive=True`` or ``idempotent=False``
    beside it is a contradiction). A contradiction, or no hint at all, counts as destructive
    (the protocol's own default for a missing ``destructiveHint``).
    """
    contradicted = destructive is True or idempotent is False
    if read_only is True:
        return ToolEffect.DESTRUCTIVE if contradicted else ToolEffect.READ_ONLY
    return ToolEffect.CHANGES if destructive is False else ToolEffect.DESTRUCTIVE


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """Who offers a called tool and what it says of itself, kept with the call.

    Recorded when the step asking for the call is stored (for an MCP server's tool), so a
    host shows the same card after a restart as before it, and an export names the tool as
    the window did. Never sent to a model. ``title`` and the hints are the server's words:
    shown as such, and read by `tool_effect`, never trusted beyond it.
    """

    server: str  #: the server offering the tool
    tool: str  #: the tool's own name on its server (the model calls it ``server__tool``)
    title: str = ""  #: the server's title for it ("" when it gave none)
    read_only: bool | None = None  #: the server's hints, None where it said nothing
    destructive: bool | None = None
    idempotent: bool | None = None

    def __post_init__(self) -> None:
        for name in ("server", "tool", "title"):
            object.__setattr__(self, name, clean(str(getattr(self, name))))

    @property
    def effect(self) -> ToolEffect:
        return tool_effect(self.read_only, self.destructive, self.idempotent)

    @property
    def display_name(self) -> str:
        """The tool's real name and its server, as a person should read it (not the title)."""
        return f"{self.tool} ({self.server})"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"server": self.server, "tool": self.tool}
        if self.title:
            data["title"] = self.title
        for name in ("read_only", "destructive", "idempotent"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        return data

    @classmethod
    def from_dict(cls, data: Any) -> ToolInfo | None:
        """The info written by `to_dict`; None for anything else (it is only ever a label)."""
        if not isinstance(data, Mapping):
            return None
        server, tool = data.get("server"), data.get("tool")
        if not isinstance(server, str) or not isinstance(tool, str):
            return None

        def hint(name: str) -> bool | None:
            value = data.get(name)
            return value if isinstance(value, bool) else None

        title = data.get("title")
        return cls(
            server,
            tool,
            title if isinstance(title, str) else "",
            hint("read_only"),
            hint("destructive"),
            hint("idempotent"),
        )


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run a tool: ``ToolCall(id, name, arguments)``.

    ``info`` (set by the agent for a tool that says who offers it, such as an MCP server's)
    names the tool for people; the model knows the call by ``name`` alone.
    """

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    info: ToolInfo | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", clean(self.id))
        object.__setattr__(self, "name", clean(self.name))
        object.__setattr__(self, "arguments", clean_data(dict(self.arguments)))

    @property
    def display_name(self) -> str:
        """How a person should read the call's tool: its real name and its server, or the
        name the model used for a tool that says nothing about itself."""
        return self.info.display_name if self.info is not None else self.name

    def to_dict(self) -> dict[str, Any]:
        data = {"id": self.id, "name": self.name, "arguments": dict(self.arguments)}
        if self.info is not None:
            data["info"] = self.info.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCall:
        info = ToolInfo.from_dict(data.get("info"))
        return cls(data["id"], data["name"], data.get("arguments") or {}, info)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts for one model step (or a sum of steps)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0  #: part of output_tokens spent on hidden reasoning
    cache_read_tokens: int = 0  #: part of input_tokens served from the provider's cache

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cache_read_tokens": self.cache_read_tokens,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Usage:
        return cls(
            int(data.get("input_tokens", 0)),
            int(data.get("output_tokens", 0)),
            int(data.get("reasoning_tokens", 0)),
            int(data.get("cache_read_tokens", 0)),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """Base of every message. Not instantiated directly."""

    type_name: ClassVar[str] = ""
    id: str = field(default_factory=new_id)
    created_at: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemMessage(Message):
    """Instructions for the model. The agent's system prompt is never stored as one."""

    type_name: ClassVar[str] = "system"
    content: str = ""

    def __post_init__(self) -> None:
        _clean_fields(self, "content")


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage(Message):
    """What the person typed, and what they attached (`engine.attachments`), in order.

    ``attachments`` is written under ``"attachments"`` only when there are some: a message
    without them has the JSON it always had.
    """

    type_name: ClassVar[str] = "user"
    content: str = ""
    attachments: tuple[Attachment, ...] = ()

    def __post_init__(self) -> None:
        _clean_fields(self, "content")
        object.__setattr__(self, "attachments", tuple(self.attachments))


@dataclass(frozen=True, slots=True, kw_only=True)
class InternalMessage(Message):
    """Input written by the runtime, not the person (a resume notice, a goal nudge).

    ``tag`` says what it is (``resume:retry_response``, ``goal``) so nothing has to match on
    its wording. Providers send it with the user role.
    """

    type_name: ClassVar[str] = "internal"
    content: str = ""
    tag: str | None = None

    def __post_init__(self) -> None:
        _clean_fields(self, "content")


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage(Message):
    """One model step's output.

    ``stop`` is set only when the step did not end normally; such a message carries no tool
    calls (they are withheld and named in ``stop.details``).
    """

    type_name: ClassVar[str] = "assistant"
    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    stop: StopInfo | None = None
    usage: Usage | None = None
    model: str | None = None
    #: provider data that must go back verbatim (e.g. an Anthropic thinking signature)
    provider_data: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        object.__setattr__(self, "stop", StopInfo.coerce(self.stop))
        object.__setattr__(self, "provider_data", clean_data(dict(self.provider_data)))
        _clean_fields(self, "content", "reasoning")


class ToolOutcome(StrEnum):
    """How a tool call ended, for hosts to read (a card's state); never sent to the model,
    which reads ``content`` and ``success``."""

    OK = "ok"
    FAILED = "failed"  #: it failed, or could not run (unknown tool, bad arguments)
    DECLINED = "declined"  #: a ``before_tool`` hook (the person, a policy) refused it
    INTERRUPTED = "interrupted"  #: running when the request or the app stopped: may have acted
    NOT_RUN = "not_run"  #: the request (or the app) stopped before it started
    #: not run: its answer asked for more calls than one answer may make
    #: (`engine.calls.MAX_TOOL_CALLS_PER_ANSWER`)
    TOO_MANY = "too_many"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolMessage(Message):
    """The result of one tool call; ``success`` is False for a failure the model should see.

    ``outcome`` says how the call ended in machine-readable form (by default `ToolOutcome.OK`
    or `ToolOutcome.FAILED`, following ``success``).
    """

    type_name: ClassVar[str] = "tool"
    tool_call_id: str
    name: str = ""
    content: str = ""
    success: bool = True
    outcome: ToolOutcome | None = None

    def __post_init__(self) -> None:
        _clean_fields(self, "content", "name")
        if self.outcome is None:
            implied = ToolOutcome.OK if self.success else ToolOutcome.FAILED
            object.__setattr__(self, "outcome", implied)
        elif not isinstance(self.outcome, ToolOutcome):
            object.__setattr__(self, "outcome", ToolOutcome(self.outcome))


def attachments_of(messages: Iterable[Message]) -> list[Attachment]:
    """Every attachment of ``messages``, in order (only user messages carry them)."""
    return [
        part
        for message in messages
        if isinstance(message, UserMessage)
        for part in message.attachments
    ]


def _clean_fields(message: Message, *names: str) -> None:
    """Make text fields storable where a message is built (see `engine.text`)."""
    for name in names:
        value = getattr(message, name)
        if isinstance(value, str):
            object.__setattr__(message, name, clean(value))


_TYPES: dict[str, type[Message]] = {
    cls.type_name: cls
    for cls in (SystemMessage, UserMessage, InternalMessage, AssistantMessage, ToolMessage)
}


def message_to_dict(message: Message) -> dict[str, Any]:
    """Return the versioned JSON form of any message."""
    data: dict[str, Any] = {
        "v": MESSAGE_FORMAT_VERSION,
        "type": message.type_name,
        "id": message.id,
        "created_at": message.created_at,
    }
    if isinstance(message, AssistantMessage):
        data["content"] = message.content
        if message.reasoning:
            data["reasoning"] = message.reasoning
        if message.tool_calls:
            data["tool_calls"] = [call.to_dict() for call in message.tool_calls]
        if message.stop is not None:
            data["stop"] = message.stop.to_dict()
        if message.usage is not None:
            data["usage"] = message.usage.to_dict()
        if message.model is not None:
            data["model"] = message.model
        if message.provider_data:
            data["provider_data"] = dict(message.provider_data)
    elif isinstance(message, ToolMessage):
        data.update(
            tool_call_id=message.tool_call_id,
            name=message.name,
            content=message.content,
            success=message.success,
        )
        if message.outcome not in (ToolOutcome.OK, ToolOutcome.FAILED):
            data["outcome"] = str(message.outcome)  # the default follows ``success``
    elif isinstance(message, InternalMessage):
        data["content"] = message.content
        if message.tag is not None:
            data["tag"] = message.tag
    elif isinstance(message, UserMessage):
        data["content"] = message.content
        if message.attachments:
            data["attachments"] = [attachment_to_dict(part) for part in message.attachments]
    elif isinstance(message, SystemMessage):
        data["content"] = message.content
    else:
        raise UnknownMessageTypeError(type(message).__name__)
    return data


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """Build a message from `message_to_dict`'s form.

    Raises:
        UnknownMessageTypeError: the type, or the format version, is not one this version
            reads.
    """
    type_name = data.get("type")
    cls = _TYPES.get(type_name) if isinstance(type_name, str) else None
    if cls is None or int(data.get("v", 1)) > MESSAGE_FORMAT_VERSION:
        raise UnknownMessageTypeError(type_name)
    common: dict[str, Any] = {"id": data["id"], "created_at": float(data["created_at"])}
    content = _text(data.get("content", ""))
    if cls is AssistantMessage:
        stop = data.get("stop")
        usage = data.get("usage")
        return AssistantMessage(
            **common,
            content=content,
            reasoning=data.get("reasoning", ""),
            tool_calls=tuple(ToolCall.from_dict(c) for c in data.get("tool_calls", ())),
            stop=StopInfo.from_dict(stop) if stop else None,
            usage=Usage.from_dict(usage) if usage else None,
            model=data.get("model"),
            provider_data=data.get("provider_data") or {},
        )
    if cls is ToolMessage:
        return ToolMessage(
            **common,
            tool_call_id=data["tool_call_id"],
            name=data.get("name", ""),
            content=content,
            success=bool(data.get("success", True)),
            outcome=_outcome(data.get("outcome")),
        )
    if cls is InternalMessage:
        return InternalMessage(**common, content=content, tag=data.get("tag"))
    if cls is UserMessage:
        parts = data.get("attachments") or ()
        if not isinstance(parts, list | tuple):
            raise ValueError(f"a message's attachments are a list, not {type(parts).__name__}")
        return UserMessage(
            **common, content=content, attachments=tuple(map(attachment_from_dict, parts))
        )
    return cls(**common, content=content)  # type: ignore[call-arg]


def _outcome(value: Any) -> ToolOutcome | None:
    """A stored outcome; one this version does not know reads as the default."""
    try:
        return ToolOutcome(value) if value is not None else None
    except ValueError:
        return None


def _text(content: Any) -> str:
    """Read content written as text, or as a list of parts (only text parts today)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def message_to_json(message: Message) -> str:
    """Serialise a message to one line of JSON."""
    data = message_to_dict(message)
    if len(data.get("tool_calls", ())) >= _PIECEWISE:
        return compact_json(data, split="tool_calls")
    return _COMPACT.encode(data)


#: list items from which `message_to_json` encodes a message's tool calls one by one
_PIECEWISE = 256
#: compact encoders, made once (json.dumps with options makes one per call, a few µs each)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_STRICT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def compact_json(data: Mapping[str, Any], *, split: str, allow_nan: bool = True) -> str:
    """``json.dumps(data)`` in compact form (UTF-8 text, no spaces), byte for byte, with the
    list under ``split`` encoded one item at a time.

    Why: the json module's encoder holds the interpreter lock for a whole call, so one dumps
    of thousands of items (an answer's 10,000 tool calls) blocks every thread, the host's
    event loop included; item by item, the loop can be given turns between
    (`compact_json_in_turns`).
    """

    dumps = (_COMPACT if allow_nan else _STRICT).encode
    parts = []
    for key, value in data.items():
        if key == split and isinstance(value, list):
            text = "[" + ",".join(dumps(item) for item in value) + "]"
        else:
            text = dumps(value)
        parts.append(f"{dumps(key)}:{text}")
    return "{" + ",".join(parts) + "}"


async def compact_json_in_turns(
    data: Mapping[str, Any], *, split: str, allow_nan: bool = True, every: int = 200
) -> str:
    """`compact_json`, giving the event loop a turn after every ``every`` items of the list
    under ``split``: thousands of items encode without a long stall of the loop (a worker
    thread would not help: it would hold the interpreter lock against the loop)."""

    dumps = (_COMPACT if allow_nan else _STRICT).encode
    parts = []
    for key, value in data.items():
        if key == split and isinstance(value, list):
            items = []
            for number, item in enumerate(value, 1):
                items.append(dumps(item))
                if number % every == 0:
                    await asyncio.sleep(0)
            text = "[" + ",".join(items) + "]"
        else:
            text = dumps(value)
        parts.append(f"{dumps(key)}:{text}")
    return "{" + ",".join(parts) + "}"


def message_from_json(text: str | bytes) -> Message:
    """Parse one message written by `message_to_json`."""
    return message_from_dict(json.loads(text))
