"""OpenAI Chat Completions over SSE, for OpenAI and every compatible server.

Compatible servers (llama.cpp, llama-box, vLLM, LM Studio, Ollama's ``/v1``, OpenRouter,
DeepSeek, Groq) differ in small ways, each handled here with a note and a recorded sample in
tests/wire_samples/: reasoning arrives as ``reasoning_content`` or ``reasoning``; a whole tool
call may come in one chunk; errors arrive as ``data: {"error": ...}``, as ``event: error``, or
as a bare ``error:`` line; a finish reason may be followed by an error chunk that only
restates it (OpenRouter); and some servers ignore ``stream`` and answer with one JSON body.

Order (house style): tables, error mapping, request building, stream parsing; the rest is
shared (`base` says where).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar

import httpx

from ..errors import ProviderConnectionError, ProviderError, ProviderTimeoutError
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
from ._errors import CONTEXT_WORDS, ErrorWording, error_fields
from ._limits import ERROR_BODY_LIMIT, WHOLE_ANSWER_FACTOR, read_whole, read_within
from ._parsing import EmptyBody, StreamParser, json_body, json_object, listed_objects, shaped
from .base import HTTPModel, ModelInfo, tool_fields
from .sse import ServerSentEvent, aiter_sse

__all__ = ["OpenAIChatModel"]

# ---------------------------------------------------------------------------- tables

#: finish_reason -> StopReason; the raw value is kept in StopInfo.raw
_STOP_REASONS: dict[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,  # the legacy functions API
    "length": StopReason.MAX_OUTPUT,
    "content_filter": StopReason.REFUSAL,
}


def _usage(data: Mapping[str, Any]) -> Usage:
    """Map ``usage`` (prompt/completion tokens and their details) onto `Usage`."""
    prompt = data.get("prompt_tokens_details")
    prompt = prompt if isinstance(prompt, dict) else {}
    completion = data.get("completion_tokens_details")
    completion = completion if isinstance(completion, dict) else {}
    return Usage(
        input_tokens=int(data.get("prompt_tokens") or 0),
        output_tokens=int(data.get("completion_tokens") or 0),
        reasoning_tokens=int(completion.get("reasoning_tokens") or 0),
        cache_read_tokens=int(prompt.get("cached_tokens") or 0),
    )


# ---------------------------------------------------------------------------- errors


def _is_context_error(code: str | None, message: str) -> bool:
    return code == "context_length_exceeded" or bool(CONTEXT_WORDS.search(message))


def _is_transient(error: Any) -> bool:
    """An in-stream error worth another attempt: the server's trouble, not the request's."""
    return isinstance(error, dict) and error.get("type") in ("server_error", "overloaded_error")


# ---------------------------------------------------------------------------- requests


def _text(message: Message) -> str:
    # Content is text today; a list of parts (images) will be built here.
    return getattr(message, "content", "")


def _messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Convert history to Chat Completions messages."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            wire.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage | InternalMessage):
            # Internal messages (resume notices) are input the model must read: user role.
            wire.append({"role": "user", "content": _text(message)})
        elif isinstance(message, AssistantMessage):
            item: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": _json(call.arguments),
                        },
                    }
                    for call in message.tool_calls
                ]
                # Not null: llama.cpp's Python server refuses null with a 500 (the recorded
                # compat/llamacpp-tool-history-null.*); "" is a string, which OpenAI accepts.
            wire.append(item)
        elif isinstance(message, ToolMessage):
            wire.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            )
    return wire


#: one encoder for every call's arguments (json.dumps with options builds one per call)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _json(value: Any) -> str:
    return _ENCODER.encode(value)


# ---------------------------------------------------------------------------- the adapter


class OpenAIChatModel(HTTPModel):
    """A model behind the OpenAI Chat Completions API (``base_url`` includes ``/v1``)."""

    provider: ClassVar[str] = "OpenAI"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    _connect_sentence: ClassVar[str] = "provider.connect.local"  # most such servers are local

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        # OpenAI itself deprecated max_tokens (reasoning models refuse it); compatible
        # servers mostly know only max_tokens.
        host = httpx.URL(self.base_url).host
        self._max_tokens_field = (
            "max_completion_tokens" if host == "api.openai.com" else "max_tokens"
        )

    def _server_address(self, base_url: str) -> str | None:
        # Name other servers after their host so errors say where the failure was.
        url = httpx.URL(base_url)
        return url.netloc.decode() if url.host not in ("api.openai.com", "") else None

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        options = self._options(request)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": _messages(request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = [
                {"type": "function", "function": tool_fields(tool)} for tool in request.tools
            ]
        if options.max_tokens is not None:
            body[self._max_tokens_field] = options.max_tokens
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.reasoning_effort:
            body["reasoning_effort"] = options.reasoning_effort
        body.update(options.extra)
        return body

    def _chat_url(self) -> str:
        return self._endpoint("/chat/completions")

    def _models_url(self) -> str:
        return self._endpoint("/models")

    def _models(self, data: Mapping[str, Any]) -> list[ModelInfo]:
        ids = [item.get("id") for item in listed_objects(data, "data")]
        return [ModelInfo(id, id) for id in sorted(id for id in ids if id and isinstance(id, str))]

    def _context_raw(self, status: int, code: str | None, message: str) -> str | None:
        if status in (400, 413) and _is_context_error(code, message):
            return code or "context_length_exceeded"
        return None

    # ------------------------------------------------------------------------ parsing

    def _parse(self, response: httpx.Response) -> AsyncIterator[list[ModelEvent]]:
        if response.headers.get("content-type", "").startswith("application/json"):
            return self._parse_whole(response)  # the server ignored "stream"
        chunks = _Chunks(self._errors, self.name, response)
        return chunks.events(aiter_sse(response, max_size=self.max_event_size))

    async def _parse_whole(self, response: httpx.Response) -> AsyncIterator[list[ModelEvent]]:
        """The events of one whole completion, sent where a stream was asked for."""
        content = await read_whole(response, self.max_event_size)  # a body may never end
        yield _Chunks(self._errors, self.name, response).whole(json_body(content, self._errors))

    async def _answer_empty_stream(self, response: httpx.Response) -> list[ModelEvent]:
        """After a ``200 OK`` with an empty body: the same request once with stream=false.

        llama.cpp's Python server streams nothing for a prompt over its context window (and
        for some tool_choice values), but answers the same request unstreamed with its
        reason, e.g. ``400 context_length_exceeded`` (compat/llamacpp-context-*). A context
        error becomes the stored context_full step, any other error its own sentence, and a
        whole completion is the answer.
        """
        body = json.loads(response.request.content)
        body["stream"] = False
        body.pop("stream_options", None)
        for attempt in (1, 2):
            try:
                with self._map_errors():
                    async with self._client.stream("POST", self._chat_url(), json=body) as again:
                        # Capped like every body: this answer may never end either.
                        # Outside the idle deadline (an unstreamed answer arrives whole,
                        # after all of it was made), but within a total of its own.
                        if again.status_code >= 400:
                            content = await read_within(again, ERROR_BODY_LIMIT, self.idle_timeout)
                        else:
                            content = await read_whole(
                                again, self.max_event_size, WHOLE_ANSWER_FACTOR * self.idle_timeout
                            )
                break
            except ProviderTimeoutError as exc:
                if exc.key == "provider.slow_body":
                    raise  # a server too slow to finish: say so, not "empty stream"
                raise self._errors.empty_stream() from exc
            except ProviderError as exc:
                # The server closes the connection the empty stream came on just after it
                # (uvicorn, after the app's exception), so the pool may hand that dying
                # connection to this request: a second try gets a fresh one. A timeout is
                # not tried again: an unstreamed answer may simply take that long.
                if attempt == 2 or not isinstance(exc, ProviderConnectionError):
                    raise self._errors.empty_stream() from exc
        if again.status_code >= 400:
            message, code = error_fields(content)
            raw = self._context_raw(again.status_code, code, message)
            if raw is not None:
                return [self._context_full(raw, message)]
            status = self._status_error(again.status_code, message, again.headers, code)
            raise self._errors.empty_stream(status) from status  # said in the window's language
        if not again.headers.get("content-type", "").startswith("application/json"):
            raise self._errors.empty_stream()
        return _Chunks(self._errors, self.name, again).whole(json_body(content, self._errors))


# ---------------------------------------------------------------------------- stream parsing


class _Chunks(StreamParser[ServerSentEvent]):
    """The chunks of one completion: streamed (`feed`), or one whole body (`whole`)."""

    def __init__(self, words: ErrorWording, model: str, response: httpx.Response) -> None:
        super().__init__(words, model, response)
        self.refusal: list[str] = []
        self.ids: dict[str, int] = {}  # call id -> index, for servers that send no index
        self.finish: str | None = None
        self.usage: Usage | None = None
        self.late_error = ""  # an error chunk after the finish reason (kept, not raised)

    def finished(self) -> bool:
        return self.finish is not None

    def feed(self, batch: list[ServerSentEvent], out: list[ModelEvent]) -> bool:
        """Add one read's events to ``out``; True at ``[DONE]``."""
        text = self.text  # the hot path's list, looked up once a read
        for sse in batch:
            data = sse.data
            if data == "[DONE]":
                return True
            if not data:
                continue
            chunk = json_object(data, self.words)
            choices = chunk.get("choices")
            error = chunk.get("error")
            if error or (not choices and sse.event == "error"):
                detail, code = error_fields(data.encode())
                if self.finish is not None:
                    # OpenRouter restates a finished "length" as an error chunk: keep it.
                    self.late_error = detail
                    if chunk.get("usage"):
                        self.usage = _usage(chunk["usage"])
                    continue
                raise self.words.in_stream(
                    detail,
                    context_full=_is_context_error(code, detail),
                    transient=_is_transient(error),
                )
            if chunk.get("usage"):
                self.usage = _usage(chunk["usage"])
            if not choices:
                continue
            choice = choices[0]  # one choice is asked for (no "n")
            delta = choice.get("delta") or {}
            piece = delta.get("content")
            if piece:
                text.append(piece)
                out.append(ModelEvent.text(piece))
                if len(delta) == 1 and not choice.get("finish_reason"):
                    continue  # the hot path: a chunk of text and nothing else
            thought = delta.get("reasoning_content") or delta.get("reasoning")
            if thought:
                self.reasoning.append(thought)
                out.append(ModelEvent.reasoning(thought))
            declined = delta.get("refusal")
            if declined:
                self.refusal.append(declined)
                out.append(ModelEvent.text(declined))
            for call in delta.get("tool_calls") or ():
                index = call.get("index")
                if index is None:  # some servers omit it; tell calls apart by id
                    index = self.ids.setdefault(call.get("id") or "", len(self.ids))
                out.append(self._call(index, call))
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]
        return False

    def end(self) -> list[ModelEvent]:
        """The completed step; raises for a stream that ended without its finish reason."""
        if self.finish is None:
            if not self.response.num_bytes_downloaded:
                # Asked again by the caller, outside the stream's idle deadline: an
                # unstreamed answer may take as long as the read timeout allows.
                raise EmptyBody
            raise self.words.ended_early(self.response)
        return [self._step(self.finish)]

    def whole(self, data: Mapping[str, Any]) -> list[ModelEvent]:
        """The events of a non-streamed ``chat.completion`` body, the completed step last.

        Each part read must be of its kind (`shaped`): one that is not is the bad-body
        error, before any event is made.
        """
        if data.get("error"):
            detail, code = error_fields(_json(data).encode())
            raise self.words.in_stream(detail, context_full=_is_context_error(code, detail))
        bad = self.words.bad_body
        choice = shaped((shaped(data.get("choices"), list, bad) or [{}])[0], dict, bad) or {}
        message = shaped(choice.get("message"), dict, bad) or {}
        reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
        text = shaped(message.get("content"), str, bad) or ""
        refusal = shaped(message.get("refusal"), str, bad)
        finish = shaped(choice.get("finish_reason"), str, bad) or "stop"
        usage = shaped(data.get("usage"), dict, bad)
        calls = []
        for call in shaped(message.get("tool_calls"), list, bad) or ():
            call = shaped(call, dict, bad) or {}
            function = shaped(call.get("function"), dict, bad) or {}
            arguments = function.get("arguments")
            if isinstance(arguments, dict):  # some servers send the object itself
                arguments = _json(arguments)
            calls.append(
                (
                    shaped(call.get("id"), str, bad),
                    shaped(function.get("name"), str, bad),
                    shaped(arguments, str, bad) or "",
                )
            )
        out: list[ModelEvent] = []
        if shaped(reasoning, str, bad):
            self.reasoning.append(reasoning)
            out.append(ModelEvent.reasoning(reasoning))
        if text:
            self.text.append(text)
            out.append(ModelEvent.text(text))
        for index, (id, name, arguments) in enumerate(calls):
            out.append(self.tools.add(index, id, name, arguments))
        if refusal:
            self.refusal.append(refusal)
        self.usage = _usage(usage) if usage else None
        out.append(self._step(finish))
        return out

    def _call(self, index: int, call: Mapping[str, Any]) -> ModelEvent:
        """Record a streamed tool call's fragment."""
        function = call.get("function") or {}
        return self.tools.add(
            index, call.get("id"), function.get("name"), function.get("arguments") or ""
        )

    def _step(self, finish: str) -> ModelEvent:
        """The completed step for ``finish``: a refusal arrives as ``delta.refusal`` text
        with finish_reason "stop", and is a refusal whatever the finish says."""
        if self.refusal:
            stop = StopInfo(StopReason.REFUSAL, raw="refusal", details={"finish_reason": finish})
            self.text += self.refusal
        else:
            details = (
                {"provider_error": self.words.scrub(self.late_error)} if self.late_error else {}
            )
            stop = StopInfo(
                _STOP_REASONS.get(finish, StopReason.OTHER), raw=finish, details=details
            )
        return self.completed(stop, self.usage)
