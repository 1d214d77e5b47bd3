"""Anthropic Messages over SSE.

The stream is a sequence of typed events: ``message_start``, then for each content block
``content_block_start`` / ``content_block_delta``... / ``content_block_stop``, then
``message_delta`` (stop reason, output usage) and ``message_stop``; ``ping`` may come at any
time and ``error`` replaces the rest. Blocks are text, thinking (its ``signature_delta`` must
be sent back with the thinking, so it is kept in ``AssistantMessage.provider_data``),
redacted thinking (kept whole, likewise) and tool use (arguments as ``input_json_delta``
fragments, the first often ``""``; a tool without parameters may send only ``""``).

A server that ignores ``stream`` answers with one whole message (``application/json``): it is
told to the same parser as the events that would have brought it (`_Events.whole`).

History goes out with alternating roles: consecutive user-role turns (tool results followed by
an internal message) merge into one; thinking without a signature and empty text blocks are
dropped, because the API rejects both.

Order (house style): tables, error mapping, request building, stream parsing; the rest is
shared (`base` says where).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar

import httpx

from ..messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    SystemMessage,
    ToolMessage,
    Usage,
    UserMessage,
)
from ..model import ModelEvent, ModelRequest
from ..stop import StopInfo, StopReason
from ._errors import CONTEXT_WORDS, ErrorWording
from ._limits import read_whole
from ._parsing import StreamParser, json_body, json_object, listed_objects, shaped
from .base import HTTPModel, ModelInfo, tool_fields
from .sse import EventTooLarge, ServerSentEvent, aiter_sse

__all__ = ["AnthropicModel"]

# ---------------------------------------------------------------------------- tables

#: stop_reason -> StopReason; the raw value is kept in StopInfo.raw
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_OUTPUT,
    "pause_turn": StopReason.PAUSED,
    "refusal": StopReason.REFUSAL,
    "model_context_window_exceeded": StopReason.CONTEXT_FULL,
}

#: error event types worth another attempt (when nothing had arrived yet)
_TRANSIENT_ERRORS = frozenset({"overloaded_error", "api_error"})

#: reasoning_effort -> thinking budget in tokens (the API's minimum budget is 1024)
_THINKING_BUDGETS: dict[str, int] = {"low": 1024, "medium": 4096, "high": 16384}

#: the API requires max_tokens; used when neither the constructor nor the request sets it
_DEFAULT_MAX_TOKENS = 8192

API_VERSION = "2023-06-01"

#: how an unstreamed message is told to the stream parser, an event at a time
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _usage(data: Mapping[str, Any], previous: Usage | None = None) -> Usage:
    """Map Anthropic usage onto `Usage`; ``message_delta`` may repeat or omit input counts."""
    base = previous or Usage()
    cached = data.get("cache_read_input_tokens")
    fresh = data.get("input_tokens")
    created = data.get("cache_creation_input_tokens") or 0
    input_tokens = (
        int(fresh or 0) + int(cached or 0) + int(created)
        if fresh is not None
        else base.input_tokens
    )
    return Usage(
        input_tokens=input_tokens,
        output_tokens=int(data.get("output_tokens") or base.output_tokens),
        reasoning_tokens=base.reasoning_tokens,
        cache_read_tokens=int(cached) if cached is not None else base.cache_read_tokens,
    )


# ---------------------------------------------------------------------------- errors


def _is_context_error(code: str | None, message: str) -> bool:
    return code == "invalid_request_error" and bool(CONTEXT_WORDS.search(message))


# ---------------------------------------------------------------------------- requests


def _text_block(text: str) -> list[dict[str, Any]]:
    # Content is text today; image blocks will be added here. Empty text is rejected.
    return [{"type": "text", "text": text}] if text else []


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    signed = (message.provider_data.get("anthropic") or {}).get("thinking") or []
    for block in signed:
        # Thinking goes back only with its signature; redacted thinking goes back whole.
        if block.get("type") == "redacted_thinking" or block.get("signature"):
            blocks.append(dict(block))
    blocks += _text_block(message.content)
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.arguments)}
        )
    return blocks


def _messages(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Return ``(system, messages)`` in Messages API form, roles merged to alternate."""
    system: list[str] = []
    wire: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            if message.content:
                system.append(message.content)
            continue
        if isinstance(message, UserMessage | InternalMessage):
            role, blocks = "user", _text_block(message.content)
        elif isinstance(message, ToolMessage):
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
            }
            if not message.success:
                result["is_error"] = True
            role, blocks = "user", [result]
        elif isinstance(message, AssistantMessage):
            role, blocks = "assistant", _assistant_blocks(message)
        else:
            continue
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    for turn in wire:
        # tool_result blocks must lead a user turn.
        if turn["role"] == "user":
            turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    return "\n\n".join(system), wire


# ---------------------------------------------------------------------------- the adapter


class AnthropicModel(HTTPModel):
    """A Claude model behind the Anthropic Messages API (``base_url`` without ``/v1``)."""

    provider: ClassVar[str] = "Anthropic"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"

    def _auth_headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        options = self._options(request)
        system, messages = _messages(request.messages)
        max_tokens = options.max_tokens or _DEFAULT_MAX_TOKENS
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": messages,
            "stream": True,
        }
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = [tool_fields(tool, schema="input_schema") for tool in request.tools]
        budget = _THINKING_BUDGETS.get(options.reasoning_effort or "")
        if budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            # The budget must fit under max_tokens, and thinking allows no temperature.
            body["max_tokens"] = max(max_tokens, budget + 1024)
        elif options.temperature is not None:
            body["temperature"] = options.temperature
        body.update(options.extra)
        return body

    def _chat_url(self) -> str:
        return self._endpoint("/v1/messages")

    def _models_url(self) -> str:
        return self._endpoint("/v1/models", limit="1000")

    def _models(self, data: Mapping[str, Any]) -> list[ModelInfo]:
        """The API lists models newest first; that order is kept."""
        found = []
        for item in listed_objects(data, "data"):
            id, shown = item.get("id"), item.get("display_name")
            if id and isinstance(id, str):
                found.append(ModelInfo(id, shown if shown and isinstance(shown, str) else id))
        return found

    def _context_raw(self, status: int, code: str | None, message: str) -> str | None:
        if status in (400, 413) and _is_context_error(code, message):
            return "prompt_too_long"
        return None

    # ------------------------------------------------------------------------ parsing

    def _parse(self, response: httpx.Response) -> AsyncIterator[list[ModelEvent]]:
        events = _Events(self._errors, self.name, response, max_size=self.max_event_size)
        if response.headers.get("content-type", "").startswith("application/json"):
            return self._parse_whole(response, events)  # the server ignored "stream"
        return events.events(aiter_sse(response, event_names=False, max_size=self.max_event_size))

    async def _parse_whole(
        self, response: httpx.Response, events: _Events
    ) -> AsyncIterator[list[ModelEvent]]:
        """The events of one whole message, sent where a stream was asked for."""
        content = await read_whole(response, self.max_event_size)  # a body may never end
        yield events.whole(json_body(content, self._errors))


# ---------------------------------------------------------------------------- stream parsing


class _Events(StreamParser[ServerSentEvent]):
    """The events of one streamed message; ``max_size`` caps its signatures like an event."""

    def __init__(
        self, words: ErrorWording, model: str, response: httpx.Response, *, max_size: int
    ) -> None:
        super().__init__(words, model, response)
        self._max_size = max_size
        self.thinking: list[dict[str, Any]] = []  # signed and redacted blocks, in order
        self.blocks: dict[int, dict[str, Any]] = {}  # stream index -> the block being built
        self.tool_count = 0  # tool_use blocks started so far
        self.signed = 0  # characters of signature received, capped like one event
        self.usage: Usage | None = None
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None

    def finished(self) -> bool:
        return self.stop_reason is not None

    def feed(self, batch: list[ServerSentEvent], out: list[ModelEvent]) -> bool:
        """Add one read's events to ``out``; True at ``message_stop``."""
        text, blocks = self.text, self.blocks  # looked up once a read
        for sse in batch:
            raw = sse.data  # a property: read it once
            if not raw:
                continue
            data = json_object(raw, self.words)
            kind = data.get("type")  # the event name, repeated in the data; "ping" matches none
            if kind == "content_block_delta":
                delta = data.get("delta") or {}
                dtype = delta.get("type")
                if dtype == "text_delta":  # the hot path: most events are text
                    piece = delta.get("text")
                    if piece:
                        text.append(piece)
                        out.append(ModelEvent.text(piece))
                    continue
                block = blocks.get(data.get("index", 0)) or {}
                if dtype == "thinking_delta":
                    piece = delta.get("thinking")
                    if piece:
                        self.reasoning.append(piece)
                        block.setdefault("parts", []).append(piece)
                        out.append(ModelEvent.reasoning(piece))
                elif dtype == "signature_delta":
                    # Pieces joined once at the end: "+=" copied the whole
                    # signature per delta (quadratic on a hostile stream).
                    piece = delta.get("signature") or ""
                    self.signed += len(piece)
                    if self.signed > self._max_size:
                        raise EventTooLarge(self._max_size)
                    block.setdefault("signature_parts", []).append(piece)
                elif dtype == "input_json_delta":
                    out.append(
                        self.tools.add(
                            block.get("tool_index", 0), arguments=delta.get("partial_json") or ""
                        )
                    )
            elif kind == "content_block_start":
                start = dict(data.get("content_block") or {})
                btype = start.get("type")
                if btype == "tool_use":
                    # A running count: summing over the blocks per start
                    # was quadratic in the number of blocks.
                    tool_index = self.tool_count
                    self.tool_count += 1
                    blocks[data.get("index", 0)] = {"type": "tool_use", "tool_index": tool_index}
                    out.append(self.tools.add(tool_index, start.get("id"), start.get("name")))
                elif btype == "thinking":
                    block = {
                        "type": "thinking",
                        "thinking": start.get("thinking") or "",
                        "signature": start.get("signature") or "",
                    }
                    blocks[data.get("index", 0)] = block
                    self.thinking.append(block)
                elif btype == "redacted_thinking":
                    blocks[data.get("index", 0)] = start
                    self.thinking.append(start)
                elif btype == "text":
                    blocks[data.get("index", 0)] = start
                    if start.get("text"):
                        text.append(start["text"])
                        out.append(ModelEvent.text(start["text"]))
            elif kind == "message_start":
                message = data.get("message") or {}
                if message.get("usage"):
                    self.usage = _usage(message["usage"])
            elif kind == "message_delta":
                delta = data.get("delta") or {}
                self.stop_reason = delta.get("stop_reason") or self.stop_reason
                self.stop_sequence = delta.get("stop_sequence") or self.stop_sequence
                if data.get("usage"):
                    self.usage = _usage(data["usage"], self.usage)
            elif kind == "message_stop":
                return True
            elif kind == "error":
                error = data.get("error") or {}
                detail = str(error.get("message") or error.get("type") or "")
                if error.get("type") == "overloaded_error":
                    detail = f"{detail} (Anthropic is overloaded)"
                raise self.words.in_stream(
                    detail,
                    context_full=bool(CONTEXT_WORDS.search(detail)),
                    transient=error.get("type") in _TRANSIENT_ERRORS,
                )
        return False

    def whole(self, data: Mapping[str, Any]) -> list[ModelEvent]:
        """The events of an unstreamed answer: a whole ``message`` (or an ``error``), the
        completed step last.

        The message is told to `feed` as the stream of events that would have brought it,
        so one parser reads both. Each part read must be of its kind (`shaped`): one that is
        not, or a body that is neither a message nor an error, is the bad-body error.
        """
        bad = self.words.bad_body
        if data.get("type") == "error":
            shaped(data.get("error"), dict, bad)
            stream: list[dict[str, Any]] = [dict(data)]
        elif data.get("type") == "message":
            stream = self._as_stream(data)
        else:
            raise bad()
        out: list[ModelEvent] = []
        self.feed([ServerSentEvent(data=_JSON.encode(event)) for event in stream], out)
        return out + self.end()

    def _as_stream(self, message: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The stream events that bring ``message`` (its parts checked on the way)."""
        bad = self.words.bad_body
        usage = shaped(message.get("usage"), dict, bad)
        stream: list[dict[str, Any]] = [
            {"type": "message_start", "message": {"usage": usage} if usage else {}}
        ]
        for index, each in enumerate(shaped(message.get("content"), list, bad) or ()):
            block = shaped(each, dict, bad) or {}
            kind = block.get("type")
            if kind == "text":
                text = shaped(block.get("text"), str, bad) or ""
                start: dict[str, Any] = {"type": "text", "text": text}
                deltas = []
            elif kind == "thinking":
                start = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [
                    {"type": "thinking_delta", "thinking": shaped(block.get("thinking"), str, bad)},
                    {
                        "type": "signature_delta",
                        "signature": shaped(block.get("signature"), str, bad),
                    },
                ]
            elif kind == "redacted_thinking":
                start = {"type": kind, "data": shaped(block.get("data"), str, bad) or ""}
                deltas = []
            elif kind == "tool_use":
                start = {
                    "type": kind,
                    "id": shaped(block.get("id"), str, bad),
                    "name": shaped(block.get("name"), str, bad),
                }
                arguments = _JSON.encode(shaped(block.get("input"), dict, bad) or {})
                deltas = [{"type": "input_json_delta", "partial_json": arguments}]
            else:
                continue  # a kind of block this adapter does not read, streamed or not
            stream.append({"type": "content_block_start", "index": index, "content_block": start})
            stream += [
                {"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas
            ]
        delta = {
            "stop_reason": shaped(message.get("stop_reason"), str, bad) or "end_turn",
            "stop_sequence": shaped(message.get("stop_sequence"), str, bad),
        }
        return [*stream, {"type": "message_delta", "delta": delta}, {"type": "message_stop"}]

    def end(self) -> list[ModelEvent]:
        """The completed step; raises for a stream that ended without its stop reason."""
        if self.stop_reason is None:
            # message_delta carries the stop; without it the answer may be incomplete.
            raise self.words.ended_early(self.response)
        details = {"stop_sequence": self.stop_sequence} if self.stop_sequence else {}
        stop = StopInfo(
            _STOP_REASONS.get(self.stop_reason, StopReason.OTHER),
            raw=self.stop_reason,
            details=details,
        )
        kept = [_clean(block) for block in self.thinking if _keep(block)]
        return [
            self.completed(stop, self.usage, {"anthropic": {"thinking": kept}} if kept else None)
        ]


def _keep(block: Mapping[str, Any]) -> bool:
    return block.get("type") == "redacted_thinking" or bool(_signature(block))


def _clean(block: Mapping[str, Any]) -> dict[str, Any]:
    if block.get("type") == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.get("data", "")}
    thinking = block.get("thinking", "") + "".join(block.get("parts", ()))
    return {"type": "thinking", "thinking": thinking, "signature": _signature(block)}


def _signature(block: Mapping[str, Any]) -> str:
    """A thinking block's signature: its start value and its deltas, joined once."""
    return str(block.get("signature") or "") + "".join(block.get("signature_parts", ()))
