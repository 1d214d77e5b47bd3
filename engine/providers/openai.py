"""OpenAI Chat Completions over SSE, for OpenAI and every compatible server.

Compatible servers (llama.cpp, llama-box, vLLM, LM Studio, Ollama's ``/v1``, OpenRouter,
DeepSeek, Groq) differ in small ways, each handled here with a note and a recorded sample in
tests/wire_samples/: reasoning arrives as ``reasoning_content`` or ``reasoning``; a whole tool
call may come in one chunk; errors arrive as ``data: {"error": ...}``, as ``event: error``, or
as a bare ``error:`` line; a finish reason may be followed by an error chunk that only
restates it (OpenRouter); and some servers ignore ``stream`` and answer with one JSON body.

Order (house style): tables, error mapping, request building, stream parsing.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
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
from ._errors import CONTEXT_WORDS, error_fields
from ._limits import ERROR_BODY_LIMIT, WHOLE_ANSWER_FACTOR, read_whole, read_within
from .base import (
    EmptyBody,
    HTTPModel,
    ModelInfo,
    ToolCallAccumulator,
    loads,
    raw_decode,
    until_broken,
)
from .sse import aiter_sse

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
    prompt = data.get("prompt_tokens_details") or {}
    completion = data.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=int(data.get("prompt_tokens") or 0),
        output_tokens=int(data.get("completion_tokens") or 0),
        reasoning_tokens=int(completion.get("reasoning_tokens") or 0),
        cache_read_tokens=int(prompt.get("cached_tokens") or 0),
    )


# ---------------------------------------------------------------------------- errors


@contextlib.contextmanager
def _map_errors(model: OpenAIChatModel) -> Iterator[None]:
    """Raise engine errors (``from`` httpx's) for transport failures; never the key."""
    with model._errors.transport("provider.connect.local"):
        yield


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

    def _auth_headers(self, api_key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

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
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": dict(tool.parameters),
                    },
                }
                for tool in request.tools
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

    def _models(self, data: Any) -> list[ModelInfo]:
        items = data.get("data") or [] if isinstance(data, dict) else []
        return sorted(
            (ModelInfo(item["id"], item["id"]) for item in items if item.get("id")),
            key=lambda info: info.id,
        )

    def _map_errors(self) -> contextlib.AbstractContextManager[None]:
        return _map_errors(self)

    def _context_raw(self, status: int, code: str | None, message: str) -> str | None:
        if status in (400, 413) and _is_context_error(code, message):
            return code or "context_length_exceeded"
        return None

    # ------------------------------------------------------------------------ parsing

    async def _parse(self, response: httpx.Response) -> AsyncIterator[list[ModelEvent]]:
        if response.headers.get("content-type", "").startswith("application/json"):
            # The server ignored "stream": one whole completion.
            content = await read_whole(response, self.max_event_size)  # a body may never end
            yield list(self._whole(loads(content, self)))
            return
        text: list[str] = []
        reasoning: list[str] = []
        refusal: list[str] = []
        tools = ToolCallAccumulator(self.provider)
        ids: dict[str, int] = {}
        finish: str | None = None
        usage: Usage | None = None
        late_error = ""
        done = False
        out: list[ModelEvent] = []
        # Late binding is the point: the finish is read when the connection breaks.
        finished = lambda: finish is not None  # noqa: B023, E731
        batches = until_broken(aiter_sse(response, max_size=self.max_event_size), finished)
        async with contextlib.aclosing(batches):  # closed here, not by the collector
            async for batch in batches:
                try:
                    for sse in batch:
                        data = sse.data
                        if data == "[DONE]":
                            done = True
                            break
                        if not data:
                            continue
                        try:  # the common case inline; anything unusual goes through loads()
                            chunk, end = raw_decode(data)
                            if end != len(data):
                                chunk = loads(data, self)
                        except ValueError:
                            chunk = loads(data, self)
                        if not isinstance(chunk, dict):
                            raise self._errors.bad_json()
                        choices = chunk.get("choices")
                        error = chunk.get("error")
                        if error or (not choices and sse.event == "error"):
                            detail, code = error_fields(data.encode())
                            if finish is not None:
                                # OpenRouter restates a finished "length" as an error chunk: keep it.
                                late_error = detail
                                if chunk.get("usage"):
                                    usage = _usage(chunk["usage"])
                                continue
                            raise self._errors.in_stream(
                                detail,
                                context_full=_is_context_error(code, detail),
                                transient=_is_transient(error),
                            )
                        if chunk.get("usage"):
                            usage = _usage(chunk["usage"])
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
                            reasoning.append(thought)
                            out.append(ModelEvent.reasoning(thought))
                        declined = delta.get("refusal")
                        if declined:
                            refusal.append(declined)
                            out.append(ModelEvent.text(declined))
                        for call in delta.get("tool_calls") or ():
                            index = call.get("index")
                            if index is None:  # some servers omit it; tell calls apart by id
                                index = ids.setdefault(call.get("id") or "", len(ids))
                            function = call.get("function") or {}
                            out.append(
                                tools.add(
                                    index,
                                    call.get("id"),
                                    function.get("name"),
                                    function.get("arguments") or "",
                                )
                            )
                        if choice.get("finish_reason"):
                            finish = choice["finish_reason"]
                except Exception:
                    if out:
                        yield out  # what arrived before the fault still reaches the caller
                    raise
                if out:
                    yield out
                    out = []
                if done:
                    break
        if finish is None:
            if not response.num_bytes_downloaded:
                # Asked again by the caller, outside the stream's idle deadline: an
                # unstreamed answer may take as long as the read timeout allows.
                raise EmptyBody
            raise self._errors.ended_early(response)
        yield [
            self._finish(
                finish, "".join(text), "".join(reasoning), refusal, tools, usage, late_error
            )
        ]

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
        return list(self._whole(loads(content, self)))

    def _finish(
        self,
        finish: str,
        text: str,
        reasoning: str,
        refusal: list[str],
        tools: ToolCallAccumulator,
        usage: Usage | None,
        late_error: str = "",
    ) -> ModelEvent:
        details = {"provider_error": self._errors.scrub(late_error)} if late_error else {}
        if refusal:
            # A refusal arrives as `delta.refusal` text with finish_reason "stop".
            stop = StopInfo(StopReason.REFUSAL, raw="refusal", details={"finish_reason": finish})
            text = text + "".join(refusal)
        else:
            stop = StopInfo(
                _STOP_REASONS.get(finish, StopReason.OTHER), raw=finish, details=details
            )
        return self._completed(text=text, reasoning=reasoning, tools=tools, stop=stop, usage=usage)

    def _whole(self, data: Mapping[str, Any]) -> Iterator[ModelEvent]:
        """Events for a non-streamed ``chat.completion`` body."""
        if data.get("error"):
            detail, code = error_fields(_json(data).encode())
            raise self._errors.in_stream(detail, context_full=_is_context_error(code, detail))
        choice = (data.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        tools = ToolCallAccumulator(self.provider)
        text = message.get("content") or ""
        reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
        if reasoning:
            yield ModelEvent.reasoning(reasoning)
        if text:
            yield ModelEvent.text(text)
        for index, call in enumerate(message.get("tool_calls") or ()):
            function = call.get("function") or {}
            yield tools.add(
                index, call.get("id"), function.get("name"), function.get("arguments") or ""
            )
        refusal = [message["refusal"]] if message.get("refusal") else []
        usage = _usage(data["usage"]) if data.get("usage") else None
        yield self._finish(
            choice.get("finish_reason") or "stop", text, reasoning, refusal, tools, usage
        )
