"""The base every HTTP adapter builds on, and the map of where each shared job lives.

An adapter (`OpenAIChatModel`, `AnthropicModel`, `OllamaModel`) subclasses `HTTPModel` and
supplies only its wire: headers and URLs (``_auth_headers``, ``_chat_url``, ``_models_url``),
the request (``_body``), the stream parser (``_parse``), what its errors mean
(``_connect_sentence``, ``_context_raw``) and the model list (``_models``). The rest is done
once for all of them, a job to a module:

- here, `HTTPModel`: the constructor keywords of DESIGN.md and one pooled
  ``httpx.AsyncClient`` per adapter; `HTTPModel.stream`, the request with the idle deadline
  between events and the loop that retries only before the first event reached the caller;
  `HTTPModel.list_models`;
- `_retry`: which failures are retried, ``Retry-After``, the backoff (with the loop's diagram);
- `_errors`: every error worded for a person and never with a credential (`ErrorWording`,
  which each adapter holds as ``_errors``), and the reading of an error body;
- `_limits`: what a server cannot do to us (DESIGN.md, "Untrusted input"): the bounds on
  error bodies, whole bodies and slow bodies, and the idle deadline's default;
- `_parsing`: the loop around each adapter's parser (a list of events per read, what arrived
  yielded before a fault, a break after the stop kept whole) and one event's JSON;
- `_tool_calls`: tool calls assembled from streamed fragments (what an answer's calls may be
  is `engine.calls`' rule, applied by the agent);
- `_step`: the step's last event (tool calls withheld from an abnormal stop, the server's
  stop values fit to store);
- `sse`: the stream's framing (SSE, NDJSON), its per-event size cap and its closing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from ..errors import ProviderError
from ..messages import AssistantMessage, compact_json_in_turns
from ..model import ModelEvent, ModelOptions, ModelRequest, ToolSpec
from ..redaction import install_url_filter
from ._errors import QUOTE_LIMIT, ErrorWording, error_fields, redactor_for
from ._limits import DEFAULT_IDLE_TIMEOUT, ERROR_BODY_LIMIT, read_whole, read_within
from ._parsing import EmptyBody, json_body
from ._retry import parse_retry_after, retry_wait
from ._step import context_full
from ._tool_calls import ToolCallAccumulator
from .sse import MAX_EVENT_SIZE, close_body

# Also here: the names adapters and tests imported from this module before the split.
__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "ERROR_BODY_LIMIT",
    "LARGE_BODY",
    "HTTPModel",
    "ModelInfo",
    "QUOTE_LIMIT",
    "ToolCallAccumulator",
    "parse_retry_after",
    "tool_fields",
]

log = logging.getLogger("engine.providers")

# httpx logs every request's URL at INFO; a URL's userinfo or ?key= must not reach a log.
install_url_filter()

#: read/write/pool 120 s between bytes (reasoning models think quietly), connect 10 s
DEFAULT_TIMEOUT = httpx.Timeout(120.0, connect=10.0)


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """A model a provider offers, for the model picker."""

    id: str  #: what goes in the ``model`` field of a request
    display_name: str  #: what a person reads; the id when the provider has no nicer name


#: messages and tool calls in a request from which its body is encoded in turns of the loop
LARGE_BODY = 2000


class HTTPModel:
    """Base of the HTTP adapters. Subclasses set `provider` and `default_base_url`.

    Args:
        model: the model id sent to the provider; also `name`, stored as
            ``AssistantMessage.model``.
        base_url: where the API lives; follows each official SDK (OpenAI's includes ``/v1``).
        api_key: the credential; optional for local servers. Never shown anywhere.
        timeout: seconds (read timeout between bytes) or an ``httpx.Timeout``.
        headers: extra headers sent with every request.
        max_tokens, temperature, reasoning_effort: defaults that ``request.options`` override.
        max_attempts: requests in all for one call, counting the first.
        retry_after_cap: the longest ``Retry-After`` honoured, in seconds; a longer one fails
            at once, saying when to try again.
        retry_backoff: the first backoff in seconds; doubles per attempt, capped at 8 s.
        max_retry_time: the longest time, in seconds, spent retrying one call.
        transport: an ``httpx.AsyncBaseTransport`` (tests).
        provider_name: how errors name the provider (e.g. ``"OpenRouter"``).
        max_event_size: the most characters one stream line or event may hold; a larger
            one ends the request (`ProviderResponseError`), keeping what arrived before.
        idle_timeout: the longest wait, in seconds, for the next model event once the
            response began; comments and pings do not reset it. Past it the request ends
            (`ProviderTimeoutError`), keeping what arrived. By default the read timeout
            (120 s unless ``timeout`` says otherwise).
    """

    provider: ClassVar[str] = "The provider"
    default_base_url: ClassVar[str] = ""
    #: the catalog sentence for a refused connection (`engine.sentences`), which may say
    #: what to start (Ollama) or where servers usually are (OpenAI-compatible ones: here)
    _connect_sentence: ClassVar[str] = "provider.connect"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | httpx.Timeout | None = None,
        headers: Mapping[str, str] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        reasoning_effort: str | None = None,
        max_attempts: int = 4,
        retry_after_cap: float = 60.0,
        retry_backoff: float = 0.5,
        max_retry_time: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
        provider_name: str | None = None,
        max_event_size: int = MAX_EVENT_SIZE,
        idle_timeout: float | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts counts every request, so it must be at least 1")
        self.model = model
        url = httpx.URL((base_url or self.default_base_url).rstrip("/"))
        # A key in the URL's userinfo goes as Basic auth (what httpx did with it anyway),
        # never inside a URL that a sentence, a log line or a repr could show.
        auth = httpx.BasicAuth(url.username, url.password) if url.userinfo else None
        self.base_url = str(url.copy_with(username=None, password=None))
        address = None if provider_name is not None else self._server_address(self.base_url)
        if provider_name:
            self.provider = provider_name  # type: ignore[misc]
        elif address:
            self.provider = f"the server at {address}"  # type: ignore[misc]
        self.max_event_size = max_event_size
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.reasoning_effort = reasoning_effort
        self.max_attempts = max_attempts
        self.retry_after_cap = retry_after_cap
        self.retry_backoff = retry_backoff
        self.max_retry_time = max_retry_time
        self._api_key = api_key or None
        if timeout is None:
            self._timeout = DEFAULT_TIMEOUT
        elif isinstance(timeout, httpx.Timeout):
            self._timeout = timeout
        else:
            self._timeout = httpx.Timeout(float(timeout), connect=min(float(timeout), 10.0))
        # A person who allowed a slow model a longer read timeout allows it between events too.
        self.idle_timeout = (
            idle_timeout if idle_timeout is not None else self._timeout.read or DEFAULT_IDLE_TIMEOUT
        )
        all_headers = {**self._auth_headers(self._api_key), **dict(headers or {})}
        self._errors = ErrorWording(
            provider=self.provider,
            address=address,
            base_url=self.base_url,
            redact=redactor_for(self._api_key, url, headers or {}),
            model=model,
            timeout=self._timeout,
            idle_timeout=self.idle_timeout,
            retry_after_cap=retry_after_cap,
        )
        self._client = httpx.AsyncClient(
            timeout=self._timeout, headers=all_headers, transport=transport, auth=auth
        )

    # -- identity ----------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The model id, used as ``AssistantMessage.model``."""
        return self.model

    @property
    def provider_name(self) -> str:
        """The provider's name as errors use it (``"OpenAI"``, ``"Ollama"``...)."""
        return self.provider

    def __repr__(self) -> str:
        # Never the key, nor the headers that carry it, nor a key= in the URL.
        return f"{type(self).__name__}(model={self.model!r}, base_url={self._errors.shown_url!r})"

    # -- lifetime ----------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the pooled HTTP client. Safe to call twice."""
        await self._client.aclose()

    async def __aenter__(self) -> HTTPModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- the model protocol ------------------------------------------------------------

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one model step, retrying transient failures only before any event.

        The HTTP request and the adapter's parser run inline here (no wrapper generator per
        attempt): each layer of async generators costs time on every event.
        """
        deadline = time.monotonic() + self.max_retry_time
        weight = len(request.messages) + sum(
            len(m.tool_calls) for m in request.messages if isinstance(m, AssistantMessage)
        )
        # A history of many thousands of messages (an answer's 10,000 calls and their
        # answers) takes tens of milliseconds to encode: encoded here as httpx's ``json=``
        # does (compact, UTF-8, no NaN), a message at a time, with turns for the host's loop.
        payload: dict[str, Any]
        body = self._body(request)
        if weight < LARGE_BODY:
            payload = {"json": body, "headers": self._stream_headers}
        else:
            text = await compact_json_in_turns(body, split="messages", allow_nan=False)
            headers = {**self._stream_headers, "Content-Type": "application/json"}
            payload = {"content": text.encode("utf-8"), "headers": headers}
        attempt = 0
        while True:
            attempt += 1
            produced = False
            answered = False  # the response's head arrived: the connection was made
            try:
                with self._map_errors():
                    async with self._client.stream("POST", self._chat_url(), **payload) as response:
                        answered = True
                        parse: AsyncIterator[list[ModelEvent]] | None = None
                        try:
                            if response.status_code >= 400:
                                error_body = await read_within(
                                    response, ERROR_BODY_LIMIT, self.idle_timeout
                                )
                                stored = self._error_response(response, error_body)  # or raises
                                produced = True
                                yield stored
                                return
                            if response.headers.get("content-type", "").startswith("text/html"):
                                raise self._errors.web_page()
                            # The parser hands over a batch per network read (fewer hops).
                            parse = self._parse(response)
                            while True:
                                try:
                                    async with asyncio.timeout(self.idle_timeout) as idle:
                                        events = await anext(parse)
                                except StopAsyncIteration:
                                    break
                                except EmptyBody:
                                    events = await self._answer_empty_stream(response)
                                    for event in events:
                                        produced = True
                                        yield event
                                    break
                                except TimeoutError:
                                    if idle.expired():
                                        raise self._errors.idle() from None
                                    raise
                                for event in events:
                                    produced = True
                                    yield event
                        finally:
                            await close_body(response, parse)
                return
            except ProviderError as exc:
                failure = exc if answered else self._errors.unanswered(exc)
                wait = None
                if not produced:  # once anything reached the caller, never again
                    wait = retry_wait(failure, attempt, self.max_attempts, self.retry_backoff)
                if wait is None or time.monotonic() + wait > deadline:
                    if failure is exc:
                        raise
                    raise failure from exc.__cause__
                # INFO, not a warning: the window shows the retry (MODEL_RETRYING).
                log.info(
                    "%s request failed (%s); retrying in %.2f s (attempt %d of %d)",
                    self._errors.who,
                    type(exc).__name__,
                    wait,
                    attempt + 1,
                    self.max_attempts,
                )
            # Outside the except block: a host that stops here (a Stop during the retry
            # news) must not see this attempt's error as the context of its cancellation.
            yield ModelEvent.retrying(attempt + 1, self.max_attempts, wait, failure)
            await asyncio.sleep(wait)

    async def list_models(self) -> list[ModelInfo]:
        """Return the models the provider offers, for the model picker."""
        with self._map_errors():
            async with self._client.stream("GET", self._models_url()) as response:
                # Each read has the read timeout, the whole list the idle deadline: a server
                # sending a byte at a time must not hold the model picker for ever.
                if response.status_code >= 400:
                    body = await read_within(response, ERROR_BODY_LIMIT, self.idle_timeout)
                    message, code = error_fields(body)
                    raise self._status_error(response.status_code, message, response.headers, code)
                content = await read_whole(response, self.max_event_size, self.idle_timeout)
        return self._models(json_body(content, self._errors))

    def _error_response(self, response: httpx.Response, body: bytes) -> ModelEvent:
        """The stored step for a context-length response; otherwise raise the status error.

        ``body`` is what was read of the response (at most `ERROR_BODY_LIMIT` bytes).
        """
        message, code = error_fields(body)
        raw = self._context_raw(response.status_code, code, message)
        if raw is not None:
            return self._context_full(raw, message)
        raise self._status_error(response.status_code, message, response.headers, code)

    # -- what each adapter supplies ------------------------------------------------------

    #: headers for the streaming request (on top of the client's)
    _stream_headers: ClassVar[dict[str, str]] = {"Accept": "text/event-stream"}

    def _auth_headers(self, api_key: str | None) -> dict[str, str]:
        """The headers that carry the key (and any the API requires on every request); by
        default the key as a Bearer token, as OpenAI-compatible servers and Ollama take it."""
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def _server_address(self, base_url: str) -> str | None:
        """The ``host:port`` errors name the provider after ("the server at …") when it has
        no name of its own, or None (the default: the provider's name)."""
        return None

    def _chat_url(self) -> str:
        raise NotImplementedError

    def _models_url(self) -> str:
        raise NotImplementedError

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _parse(self, response: httpx.Response) -> AsyncIterator[list[ModelEvent]]:
        """Yield the step's events, a list per network read; the last is the completed one."""
        raise NotImplementedError

    def _models(self, data: Mapping[str, Any]) -> list[ModelInfo]:
        """The models in a model list's body (a JSON object; `_parsing.listed_objects`)."""
        raise NotImplementedError

    def _context_raw(self, status: int, code: str | None, message: str) -> str | None:
        """The raw stop for a context-length error response, or None if it is not one."""
        return None

    def _status_error(
        self, status: int, detail: str, headers: Mapping[str, str], code: str | None = None
    ) -> ProviderError:
        """The error for an HTTP error status (`ErrorWording.status`)."""
        return self._errors.status(status, detail, headers, code)

    async def _answer_empty_stream(self, response: httpx.Response) -> list[ModelEvent]:
        """The answer to a ``200 OK`` whose body was empty; by default, an error.

        An adapter whose servers say why when asked again without streaming overrides this.
        """
        raise self._errors.empty_stream()

    # -- what adapters use -------------------------------------------------------------

    def _endpoint(self, path: str, **query: str) -> str:
        """The URL of ``path`` under the base URL, keeping the base URL's own query.

        A base URL may carry a query (``?api-version=…`` of an Azure-style gateway, a
        ``?key=…`` of a proxy); appending the path as text put it inside that query.
        """
        url = httpx.URL(self.base_url)
        url = url.copy_with(path=url.path.rstrip("/") + path)
        return str(url.copy_merge_params(query) if query else url)

    def _map_errors(self) -> contextlib.AbstractContextManager[None]:
        """Raise engine errors (``from`` httpx's) for transport failures; never the key."""
        return self._errors.transport(self._connect_sentence)

    def _options(self, request: ModelRequest) -> ModelOptions:
        """The constructor's defaults with the request's options laid over them."""
        given = request.options
        return ModelOptions(
            max_tokens=given.max_tokens if given.max_tokens is not None else self.max_tokens,
            temperature=given.temperature if given.temperature is not None else self.temperature,
            reasoning_effort=given.reasoning_effort or self.reasoning_effort,
            extra=given.extra,
        )

    def _context_full(self, raw: str, detail: str) -> ModelEvent:
        """The stored step for a context-length error response (`_step.context_full`)."""
        return context_full(self._errors, self.name, raw, detail)


def tool_fields(tool: ToolSpec, schema: str = "parameters") -> dict[str, Any]:
    """One tool as every wire describes it: name, description and the arguments' JSON schema
    under ``schema`` (``parameters`` in OpenAI's and Ollama's function tools,
    ``input_schema`` in Anthropic's)."""
    return {"name": tool.name, "description": tool.description, schema: dict(tool.parameters)}
