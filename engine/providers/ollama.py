"""Ollama's native ``/api/chat`` over newline-delimited JSON.

Each line is one JSON object: ``{"message": {"content", "thinking"?, "tool_calls"?},
"done": false}`` while generating, then a last line with ``"done": true``, ``done_reason``
and the token counts (``prompt_eval_count``, ``eval_count``). Tool calls arrive whole, with
arguments as an object and often without an id (one is made up so results can answer them).
An error arrives as a line ``{"error": "..."}``, in a 200 stream or as an error status.
Lines are split on ``\\n`` only (sse.aiter_ndjson_lines), never on U+2028. An unstreamed
answer (a server that ignored ``stream``) is one such last line holding all of the answer,
sent as ``application/json``, and is read the same way.

Order (house style): tables, error mapping, request building, stream parsing; the rest is
shared (`base` says where).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar

import httpx

from ..errors import ProviderError
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
from ._parsing import StreamParser, json_object, listed_objects, shaped
from .base import HTTPModel, ModelInfo, tool_fields
from .sse import aiter_ndjson_lines

__all__ = ["OllamaModel"]

# ---------------------------------------------------------------------------- tables

#: done_reason -> StopReason; the raw value is kept in StopInfo.raw
_STOP_REASONS: dict[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_OUTPUT,
}


def _usage(data: Mapping[str, Any]) -> Usage:
    """Map the final line's counts onto `Usage`."""
    return Usage(
        input_tokens=int(data.get("prompt_eval_count") or 0),
        output_tokens=int(data.get("eval_count") or 0),
    )


# ---------------------------------------------------------------------------- errors

# Ollama's errors carry no code: a full context window is known by its words (CONTEXT_WORDS,
# in `OllamaModel._context_raw` and in a stream's error line), a missing model by its 404's
# "not found" (`OllamaModel._status_error`); a refused connection says to start Ollama.


# ---------------------------------------------------------------------------- requests


def _messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Convert history to ``/api/chat`` messages.

    Ollama's wire has no call ids: a model pairs results with calls by their order, so each
    run of results goes in the order of the calls that asked for them (they may be stored in
    another: the answers to the calls past the cap of one answer come first).
    """
    wire: list[dict[str, Any]] = []
    order: dict[str, int] = {}  # the place of each call of the last answer asking for tools
    results: list[tuple[int, dict[str, Any]]] = []  # a run of results, with their call's place

    def flush() -> None:
        wire.extend(item for _, item in sorted(results, key=lambda pair: pair[0]))
        results.clear()

    for message in messages:
        if isinstance(message, ToolMessage):
            result = {"role": "tool", "content": message.content, "tool_name": message.name}
            results.append((order.get(message.tool_call_id, len(order)), result))
            continue
        flush()
        if isinstance(message, SystemMessage):
            wire.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage | InternalMessage):
            # Content is text today; images will go in an "images" list beside it.
            wire.append({"role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            item: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.reasoning:
                item["thinking"] = message.reasoning
            if message.tool_calls:
                item["tool_calls"] = [
                    {"function": {"name": call.name, "arguments": dict(call.arguments)}}
                    for call in message.tool_calls
                ]
                order = {call.id: place for place, call in enumerate(message.tool_calls)}
            wire.append(item)
    flush()
    return wire


# ---------------------------------------------------------------------------- the adapter


class OllamaModel(HTTPModel):
    """A model served by Ollama (``base_url`` like ``http://localhost:11434``).

    Plain Ollama needs no key; one behind an authenticating proxy may (sent as a Bearer
    token, the base's default).
    """

    provider: ClassVar[str] = "Ollama"
    default_base_url: ClassVar[str] = "http://localhost:11434"
    _connect_sentence: ClassVar[str] = "provider.connect.ollama"  # says to start `ollama serve`

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        options = self._options(request)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": _messages(request.messages),
            "stream": True,
        }
        if request.tools:
            body["tools"] = [
                {"type": "function", "function": tool_fields(tool)} for tool in request.tools
            ]
        generation: dict[str, Any] = {}
        if options.max_tokens is not None:
            generation["num_predict"] = options.max_tokens
        if options.temperature is not None:
            generation["temperature"] = options.temperature
        if generation:
            body["options"] = generation
        effort = options.reasoning_effort
        if effort:
            # gpt-oss takes a level; other thinking models take on/off.
            if effort in ("none", "off"):
                body["think"] = False
            else:
                body["think"] = effort if "gpt-oss" in self.model else True
        body.update(options.extra)
        return body

    def _status_error(
        self, status: int, detail: str, headers: Mapping[str, str], code: str | None = None
    ) -> ProviderError:
        if status == 404 and "not found" in detail:  # a model never pulled: say how
            return self._errors.status(
                status, detail, headers, code, no_model="provider.no_model.ollama"
            )
        return super()._status_error(status, detail, headers, code)

    _stream_headers: ClassVar[dict[str, str]] = {"Accept": "application/x-ndjson"}

    def _chat_url(self) -> str:
        return self._endpoint("/api/chat")

    def _models_url(self) -> str:
        return self._endpoint("/api/tags")

    def _models(self, data: Mapping[str, Any]) -> list[ModelInfo]:
        found = []
        for item in listed_objects(data, "models"):
            names = [item.get(field) for field in ("model", "name")]
            model, name = [n if n and isinstance(n, str) else None for n in names]
            if model or name:
                found.append(ModelInfo(model or name or "", name or model or ""))
        return sorted(found, key=lambda info: info.id)

    def _context_raw(self, status: int, code: str | None, message: str) -> str | None:
        return "context_length" if status == 400 and CONTEXT_WORDS.search(message) else None

    # ------------------------------------------------------------------------ parsing

    def _parse(self, response: httpx.Response) -> AsyncIterator[list[ModelEvent]]:
        lines = _Lines(self._errors, self.name, response)
        return lines.events(aiter_ndjson_lines(response, max_size=self.max_event_size))


# ---------------------------------------------------------------------------- stream parsing


class _Lines(StreamParser[str]):
    """The lines of one streamed answer, or the one object of an unstreamed one.

    A line, or a part of it, that is not the JSON it must be is the malformed-stream error;
    in a whole body (sent as ``application/json``) the bad-body one.
    """

    def __init__(self, words: ErrorWording, model: str, response: httpx.Response) -> None:
        super().__init__(words, model, response)
        self.tool_count = 0  # the calls seen so far, each a whole call in Ollama's stream
        self.done = False
        self.whole = response.headers.get("content-type", "").startswith("application/json")
        self.bad = words.bad_body if self.whole else words.bad_json

    def feed(self, batch: list[str], out: list[ModelEvent]) -> bool:
        """Add one read's lines to ``out``; True at the last line (``"done": true``), whose
        event is the completed step."""
        bad = self.bad
        for line in batch:
            data = json_object(line, self.words, body=self.whole)
            if data.get("error"):
                detail = str(data["error"])
                raise self.words.in_stream(detail, context_full=bool(CONTEXT_WORDS.search(detail)))
            message = shaped(data.get("message"), dict, bad) or {}
            thinking = shaped(message.get("thinking"), str, bad)
            if thinking:
                self.reasoning.append(thinking)
                out.append(ModelEvent.reasoning(thinking))
            content = shaped(message.get("content"), str, bad)
            if content:
                self.text.append(content)
                out.append(ModelEvent.text(content))
            for each in shaped(message.get("tool_calls"), list, bad) or ():
                call = shaped(each, dict, bad) or {}
                function = shaped(call.get("function"), dict, bad) or {}
                arguments = function.get("arguments")
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments or {}, ensure_ascii=False)
                # A running count: len(tools.names()) sorted every call so far.
                out.append(
                    self.tools.add(
                        self.tool_count,
                        call.get("id") or f"call_{uuid.uuid4().hex[:24]}",
                        function.get("name"),
                        arguments,
                    )
                )
                self.tool_count += 1
            if data.get("done"):
                raw = shaped(data.get("done_reason"), str, bad) or "stop"
                stop = StopInfo(_STOP_REASONS.get(raw, StopReason.OTHER), raw=raw)
                out.append(self.completed(stop, _usage(data)))
                self.done = True
                return True
        return False

    def end(self) -> list[ModelEvent]:
        """Nothing more after the last line; raises for a stream that ended before it."""
        if not self.done:
            raise self.words.ended_early(self.response)
        return []
