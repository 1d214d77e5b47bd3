"""What every HTTP adapter shares: construction, retries, error wording and message assembly.

An adapter (`OpenAIChatModel`, `AnthropicModel`, `OllamaModel`) subclasses `HTTPModel` and
supplies the request (``_chat_url``, ``_body``), the stream parser (``_parse``), error
details (``_map_errors``, ``_context_raw``) and the model list (``_models_url``,
``_models``). This module owns, once for all of them:

- the constructor keywords of DESIGN.md and one pooled ``httpx.AsyncClient`` per adapter;
- retry-only-before-the-first-event (`HTTPModel.stream`)::

      attempt ─► error before any event? ─ no ─► raise (the agent keeps the partial)
                       │ yes
                 retryable (connection, timeout, 408/409/429/5xx/529) and attempts,
                 Retry-After cap and total time allow? ─ no ─► raise
                       │ yes
                 wait (Retry-After, else exponential backoff with jitter) ─► next attempt

  An error event saying the server is in trouble (overloaded, server error) counts as
  retryable too, still only before any event; a connection that breaks after the stop
  arrived keeps the answer whole (`until_broken`).
- `ToolCallAccumulator`, which assembles streamed tool-call fragments;
- the wording of errors, which never contains a credential: messages are built from the
  provider's name, the status and the provider's own error text with every credential
  hidden (redaction.py) and at most `QUOTE_LIMIT` characters of it quoted;
- what a server cannot do to us (DESIGN.md, "Untrusted input"): an error body is read up to
  `ERROR_BODY_LIMIT` bytes, one stream line or event up to ``max_event_size`` characters,
  and a stream must bring a model event at least every ``idle_timeout`` seconds (comments
  and pings do not count); the response and the parser are closed in the task that read
  them, on every way out (`_close_stream`);
- `HTTPModel._completed`, which withholds tool calls from a step with an abnormal stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import random
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, ClassVar

import httpx

from ..errors import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderContextLengthError,
    ProviderError,
    ProviderRateLimitError,
    ProviderResponseError,
    ProviderStatusError,
    ProviderTimeoutError,
)
from ..messages import AssistantMessage, ToolCall, Usage
from ..model import ModelEvent, ModelOptions, ModelRequest, ModelResponse
from ..redaction import Redactor, URLFilter, redact_urls, shorten
from ..stop import StopInfo, StopReason
from .sse import MAX_EVENT_SIZE, EventTooLarge, close_body

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "ERROR_BODY_LIMIT",
    "HTTPModel",
    "ModelInfo",
    "QUOTE_LIMIT",
    "ToolCallAccumulator",
    "parse_retry_after",
]

log = logging.getLogger("engine.providers")

# httpx logs every request's URL at INFO; a URL's userinfo or ?key= must not reach a log.
if not any(isinstance(f, URLFilter) for f in logging.getLogger("httpx").filters):
    logging.getLogger("httpx").addFilter(URLFilter())

#: read/write/pool 120 s between bytes (reasoning models think quietly), connect 10 s
DEFAULT_TIMEOUT = httpx.Timeout(120.0, connect=10.0)

#: seconds a stream may go without a model event (comments and pings are not events),
#: when neither ``idle_timeout`` nor a read timeout is given
DEFAULT_IDLE_TIMEOUT = 120.0

#: bytes of an error response read; the rest is not waited for
ERROR_BODY_LIMIT = 64 * 1024

#: characters of a server's own words quoted in a sentence for a person
QUOTE_LIMIT = 300

#: statuses worth another attempt: timeouts, conflicts, rate limits and every 5xx (incl. 529)
_RETRY_STATUSES = frozenset({408, 409, 429})

#: the sentence a person reads for each abnormal stop (StopInfo.message)
_STOP_MESSAGES: dict[StopReason, str] = {
    StopReason.MAX_OUTPUT: "The answer reached the output limit; Resume continues it.",
    StopReason.REFUSAL: "The model declined to answer.",
    StopReason.CONTEXT_FULL: (
        "The conversation no longer fits in the model's context window; start a new "
        "conversation or shorten this one."
    ),
    StopReason.PAUSED: "The provider paused this turn before it finished.",
}


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """A model a provider offers, for the model picker."""

    id: str  #: what goes in the ``model`` field of a request
    display_name: str  #: what a person reads; the id when the provider has no nicer name


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Return the wait a response asks for, in seconds, or None.

    Reads ``retry-after-ms`` (OpenAI), then ``Retry-After`` as seconds or as an HTTP date.
    """
    value = headers.get("retry-after-ms")
    if value:
        with contextlib.suppress(ValueError):
            return max(0.0, float(value) / 1000.0)
    value = headers.get("retry-after")
    if not value:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class ToolCallAccumulator:
    """Assembles tool calls from streamed fragments, keyed by the stream's index."""

    def __init__(self, provider: str) -> None:
        self._provider = provider
        self._calls: dict[int, list[Any]] = {}  # index -> [id, name, [argument fragments]]

    def __bool__(self) -> bool:
        return bool(self._calls)

    def add(
        self, index: int, id: str | None = None, name: str | None = None, arguments: str = ""
    ) -> ModelEvent:
        """Record a fragment and return the event announcing it."""
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = [id, name, []]
        else:
            call[0] = call[0] or id
            call[1] = call[1] or name
        if arguments:
            call[2].append(arguments)
        return ModelEvent.tool_call_delta(index, id=id, name=name, arguments=arguments)

    def names(self) -> list[str]:
        """The names of the calls seen so far, in index order."""
        return [self._calls[i][1] or "" for i in sorted(self._calls)]

    def build(self) -> tuple[ToolCall, ...]:
        """Return the finished calls.

        Raises:
            ProviderResponseError: a call's arguments are not a JSON object.
        """
        calls = []
        for index in sorted(self._calls):
            call_id, name, fragments = self._calls[index]
            text = "".join(fragments).strip()
            try:
                arguments = json.loads(text) if text else {}
            except ValueError:
                arguments = None
            if not isinstance(arguments, dict):
                raise ProviderResponseError(
                    f"{self._provider[:1].upper()}{self._provider[1:]} sent arguments for the "
                    f"tool {name!r} that are not a "
                    "whole JSON object, so the tool was not run. Resume to ask again.",
                    provider=self._provider,
                )
            calls.append(ToolCall(call_id or f"call_{index}", name or "", arguments))
        return tuple(calls)


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
        if provider_name:
            self.provider = provider_name  # type: ignore[misc]
        url = httpx.URL((base_url or self.default_base_url).rstrip("/"))
        # A key in the URL's userinfo goes as Basic auth (what httpx did with it anyway),
        # never inside a URL that a sentence, a log line or a repr could show.
        auth = httpx.BasicAuth(url.username, url.password) if url.userinfo else None
        self.base_url = str(url.copy_with(username=None, password=None))
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
        self._redact = Redactor(
            [self._api_key, url.username, url.password, *_credentials(headers or {})]
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
        return f"{type(self).__name__}(model={self.model!r}, base_url={self._shown_url!r})"

    def _auth_headers(self, api_key: str | None) -> dict[str, str]:
        return {}

    @property
    def _shown_url(self) -> str:
        """The base URL as a sentence may show it (key-like query values hidden)."""
        return redact_urls(self.base_url)

    @property
    def _who(self) -> str:
        """The provider's name at the start of a sentence."""
        return self.provider[:1].upper() + self.provider[1:]

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
        body = self._body(request)
        attempt = 0
        while True:
            attempt += 1
            produced = False
            try:
                with self._map_errors():
                    async with self._client.stream(
                        "POST", self._chat_url(), json=body, headers=self._stream_headers
                    ) as response:
                        parse: AsyncIterator[list[ModelEvent]] | None = None
                        try:
                            if response.status_code >= 400:
                                error_body = await _read_at_most(response, ERROR_BODY_LIMIT)
                                stored = self._error_response(response, error_body)  # or raises
                                produced = True
                                yield stored
                                return
                            if response.headers.get("content-type", "").startswith("text/html"):
                                raise ProviderResponseError(
                                    f"{self._who} answered with a web page instead of a model "
                                    f"stream. Check the base URL in Settings ({self._shown_url}).",
                                    provider=self.provider,
                                )
                            # The parser hands over a batch per network read (fewer hops).
                            parse = self._parse(response)
                            while True:
                                try:
                                    async with asyncio.timeout(self.idle_timeout) as idle:
                                        events = await anext(parse)
                                except StopAsyncIteration:
                                    break
                                except TimeoutError:
                                    if idle.expired():
                                        raise self._idle_error() from None
                                    raise
                                for event in events:
                                    produced = True
                                    yield event
                        finally:
                            await _close_stream(response, parse)
                return
            except ProviderError as exc:
                wait = None if produced else self._retry_wait(exc, attempt)
                if wait is None or time.monotonic() + wait > deadline:
                    raise
                log.warning(
                    "%s request failed (%s); retrying in %.2f s (attempt %d of %d)",
                    self._who,
                    type(exc).__name__,
                    wait,
                    attempt + 1,
                    self.max_attempts,
                )
                await asyncio.sleep(wait)

    async def list_models(self) -> list[ModelInfo]:
        """Return the models the provider offers, for the model picker."""
        with self._map_errors():
            async with self._client.stream("GET", self._models_url()) as response:
                if response.status_code >= 400:
                    message, code = error_fields(await _read_at_most(response, ERROR_BODY_LIMIT))
                    raise self._status_error(response.status_code, message, response.headers, code)
                content = await self._read_whole(response)
        return self._models(loads(content, self))

    async def _read_whole(self, response: httpx.Response) -> bytes:
        """A whole (not streamed) answer body, up to ``max_event_size`` bytes.

        Raises:
            ProviderResponseError: the body is larger.
        """
        content = await _read_at_most(response, self.max_event_size + 1)
        if len(content) > self.max_event_size:
            raise self._too_large(EventTooLarge(self.max_event_size))
        return content

    # -- what each adapter supplies ------------------------------------------------------

    #: headers for the streaming request (on top of the client's)
    _stream_headers: ClassVar[dict[str, str]] = {"Accept": "text/event-stream"}

    def _chat_url(self) -> str:
        raise NotImplementedError

    def _models_url(self) -> str:
        raise NotImplementedError

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _map_errors(self) -> contextlib.AbstractContextManager[None]:
        return self._transport_errors()

    def _parse(self, response: httpx.Response) -> AsyncIterator[list[ModelEvent]]:
        """Yield the step's events, a list per network read; the last is the completed one."""
        raise NotImplementedError

    def _models(self, data: Any) -> list[ModelInfo]:
        raise NotImplementedError

    def _context_raw(self, status: int, code: str | None, message: str) -> str | None:
        """The raw stop for a context-length error response, or None if it is not one."""
        return None

    def _error_response(self, response: httpx.Response, body: bytes) -> ModelEvent:
        """The stored step for a context-length response; otherwise raise the status error.

        ``body`` is what was read of the response (at most `ERROR_BODY_LIMIT` bytes).
        """
        message, code = error_fields(body)
        raw = self._context_raw(response.status_code, code, message)
        if raw is not None:
            return self._context_full(raw, message)
        raise self._status_error(response.status_code, message, response.headers, code)

    def _retry_wait(self, exc: ProviderError, attempt: int) -> float | None:
        if not getattr(exc, "retryable", False) or attempt >= self.max_attempts:
            return None
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            return float(retry_after)
        backoff = min(self.retry_backoff * 2 ** (attempt - 1), 8.0)
        return backoff * (1.0 - 0.25 * random.random())

    # -- request helpers ---------------------------------------------------------------

    def _options(self, request: ModelRequest) -> ModelOptions:
        """The constructor's defaults with the request's options laid over them."""
        given = request.options
        return ModelOptions(
            max_tokens=given.max_tokens if given.max_tokens is not None else self.max_tokens,
            temperature=given.temperature if given.temperature is not None else self.temperature,
            reasoning_effort=given.reasoning_effort or self.reasoning_effort,
            extra=given.extra,
        )

    # -- errors ------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        """A server's words, fit to quote: every credential hidden, at most `QUOTE_LIMIT` long.

        Hidden before shortening, so a key cut in two by the limit is still recognised.
        """
        return shorten(self._redact(text).strip(), QUOTE_LIMIT)

    @contextlib.contextmanager
    def _transport_errors(self, *, connect_hint: str = "") -> Iterator[None]:
        """Turn httpx's transport exceptions into the engine's, raised ``from`` them."""
        try:
            yield
        except ProviderError:
            raise
        except httpx.TimeoutException as exc:
            err: ProviderError = ProviderTimeoutError(
                f"{self._who} stopped answering (no data for "
                f"{self._timeout.read or 0:g} seconds). Check your connection and try again, "
                "or allow a longer timeout in Settings.",
                provider=self.provider,
            )
            err.retryable = True
            raise err from exc
        except httpx.ConnectError as exc:
            err = ProviderConnectionError(
                f"Could not connect to {self.provider} at {self._shown_url}. "
                + (connect_hint or "Check your network connection and the base URL in Settings."),
                provider=self.provider,
            )
            err.retryable = True
            raise err from exc
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            err = ProviderConnectionError(
                f"The connection to {self.provider} broke before the answer was complete. "
                "Check your connection and try again.",
                provider=self.provider,
            )
            err.retryable = True
            raise err from exc
        except httpx.DecodingError as exc:
            raise ProviderResponseError(
                f"{self._who} sent a response that could not be decoded. Try again.",
                provider=self.provider,
            ) from exc
        except EventTooLarge as exc:
            raise self._too_large(exc) from exc

    def _too_large(self, exc: EventTooLarge) -> ProviderError:
        """The error for a stream line, event or body larger than ``max_event_size``."""
        return ProviderResponseError(
            f"{self._who} sent a single piece of its answer larger than "
            f"{_size(exc.max_size)}, so the request was stopped there. What arrived before it "
            "is kept; Resume asks again.",
            provider=self.provider,
        )

    def _idle_error(self) -> ProviderError:
        """The error for a stream that brought no model event for ``idle_timeout`` seconds."""
        err = ProviderTimeoutError(
            f"{self._who} sent nothing of the answer for {self.idle_timeout:g} seconds (only "
            "keep-alive signals, or nothing at all), so the request was stopped. What arrived "
            "is kept; Resume asks again.",
            provider=self.provider,
        )
        err.retryable = True  # retried only before any output, as every retry is
        return err

    def _status_error(
        self, status: int, detail: str, headers: Mapping[str, str], code: str | None = None
    ) -> ProviderError:
        """Build the error for an HTTP error status, worded for a person."""
        who = self._who
        detail = self._scrub(detail)
        said = f": {detail.rstrip('.')}." if detail else "."
        retry_after = parse_retry_after(headers)
        retryable = status in _RETRY_STATUSES or status >= 500
        too_long = retry_after is not None and retry_after > self.retry_after_cap
        when = ""
        if retry_after is not None:
            at = datetime.now(UTC).timestamp() + retry_after
            when = (
                f" Try again in {retry_after:.0f} seconds "
                f"(after {datetime.fromtimestamp(at, UTC):%H:%M:%S} UTC)."
            )
        err: ProviderError
        if status == 401:
            err = ProviderAuthError(
                f"{who} refused the API key ({status}). Check the key in Settings.",
                status=status,
                provider=self.provider,
            )
            retryable = False
        elif status == 403:
            err = ProviderAuthError(
                f"{who} denied access ({status}){said} Check that the key in Settings may use "
                f"the model {self.model!r}.",
                status=status,
                provider=self.provider,
            )
            retryable = False
        elif status == 429:
            if code == "insufficient_quota":
                retryable = False
                tail = " Check the account's plan and billing, then try again."
            else:
                tail = when or " Wait a moment and try again."
            err = ProviderRateLimitError(
                f"{who} is limiting requests ({status}){said}{tail}",
                status=status,
                provider=self.provider,
                retry_after=retry_after,
            )
        elif status == 404:
            err = ProviderStatusError(
                f"{who} has no model {self.model!r} at {self._shown_url} ({status}){said} "
                "Check the model name and the base URL in Settings.",
                status=status,
                provider=self.provider,
            )
        elif status >= 500 or status in _RETRY_STATUSES:
            busy = "is overloaded" if status == 529 else "had a problem on its side"
            err = ProviderStatusError(
                f"{who} {busy} ({status}){said}{when or ' Try again in a moment.'}",
                status=status,
                provider=self.provider,
            )
        else:
            err = ProviderStatusError(
                f"{who} rejected the request ({status}){said} Check the model and its settings.",
                status=status,
                provider=self.provider,
            )
        err.retryable = retryable and not too_long  # type: ignore[attr-defined]
        err.retry_after = retry_after  # type: ignore[attr-defined]
        return err

    def _stream_error(
        self, detail: str, *, context_full: bool = False, transient: bool = False
    ) -> ProviderError:
        """The error for an error reported inside a successful (200) stream.

        ``transient`` (an overloaded or server error) makes it retryable; the retry loop
        still retries only when nothing had reached the caller yet.
        """
        text = self._scrub(detail) or "no details given"
        if context_full:
            return ProviderContextLengthError(
                f"{self._who} stopped because the conversation no longer fits the "
                f"model's context window ({text}). Start a new conversation or shorten this one.",
                status=400,
                provider=self.provider,
            )
        err = ProviderResponseError(
            f"{self._who} reported an error in the middle of its answer: {text.rstrip('.')}. "
            "What arrived is kept; Resume asks again.",
            provider=self.provider,
        )
        err.retryable = transient  # type: ignore[attr-defined]
        return err

    def _ended_early(self) -> ProviderError:
        err = ProviderConnectionError(
            f"{self._who} ended the stream before the answer was complete. "
            "What arrived is kept; Resume asks again.",
            provider=self.provider,
        )
        err.retryable = True  # type: ignore[attr-defined]  (only ever before any output)
        return err

    def _bad_json(self) -> ProviderError:
        return ProviderResponseError(
            f"{self._who} sent a stream event that is not valid JSON. Try again; if it "
            "keeps happening, the server or a proxy in between is mangling the stream.",
            provider=self.provider,
        )

    # -- the final event ---------------------------------------------------------------

    def _completed(
        self,
        *,
        text: str,
        reasoning: str,
        tools: ToolCallAccumulator,
        stop: StopInfo,
        usage: Usage | None,
        provider_data: Mapping[str, Any] | None = None,
    ) -> ModelEvent:
        """Assemble the step's `AssistantMessage` and wrap it in the last event.

        A normal stop becomes ``tool_use`` when calls arrived and ``end_turn`` when none
        did. An abnormal stop carries no tool calls: they are withheld and named in
        ``stop.details["withheld_tool_calls"]`` (DESIGN.md, resume rules).
        """
        if stop.ok:
            calls = tools.build()
            reason = StopReason.TOOL_USE if calls else StopReason.END_TURN
            if reason is not stop.reason:
                stop = replace(stop, reason=reason)
            message_stop = None
        else:
            calls = ()
            details = dict(stop.details)
            if tools:
                details["withheld_tool_calls"] = tools.names()
            stop = replace(
                stop,
                message=stop.message
                or _STOP_MESSAGES.get(stop.reason)
                or (f"The model stopped for a reason this version does not know ({stop.raw})."),
                details=details,
            )
            message_stop = stop
        message = AssistantMessage(
            content=text,
            reasoning=reasoning,
            tool_calls=calls,
            stop=message_stop,
            usage=usage,
            model=self.name,
            provider_data=provider_data or {},
        )
        return ModelEvent.completed(ModelResponse(message, stop=stop, usage=usage))

    def _context_full(self, raw: str, detail: str) -> ModelEvent:
        """The completed step for a recognised context-length error response (stored)."""
        stop = StopInfo(
            StopReason.CONTEXT_FULL,
            raw=raw,
            message=(
                f"The conversation no longer fits in the context window of {self.model} "
                f"({self._scrub(detail).rstrip('.')}). Start a new conversation or shorten "
                "this one."
            ),
        )
        return self._completed(
            text="", reasoning="", tools=ToolCallAccumulator(self.provider), stop=stop, usage=None
        )


def _credentials(headers: Mapping[str, str]) -> list[str]:
    """The values of extra headers that carry a credential, to hide wherever they echo."""
    found = []
    for name, value in headers.items():
        if re.search(r"(?i)auth|key|token|secret|cookie", name):
            found.append(value)
            found += value.split()[1:]  # "Bearer <token>": the token alone too
    return found


def _size(characters: int) -> str:
    """A size for a person: "16 MB" (characters of text count as bytes here)."""
    if characters >= 1024 * 1024:
        return f"{characters / (1024 * 1024):g} MB"
    if characters >= 1024:
        return f"{characters / 1024:g} KB"
    return f"{characters} characters"


async def _read_at_most(response: httpx.Response, limit: int) -> bytes:
    """Read at most ``limit`` bytes of a body; the rest is never waited for.

    An error status whose body never ends (or is huge) cannot hold the request or fill
    memory: the response is closed once this much is read.
    """
    body = bytearray()
    chunks = response.aiter_bytes()
    try:
        async for chunk in chunks:
            body += chunk[: limit - len(body)]
            if len(body) >= limit:
                break
    finally:
        await close_body(response, chunks)
    return bytes(body)


async def _close_stream(
    response: httpx.Response, parse: AsyncIterator[list[ModelEvent]] | None
) -> None:
    """Close the response, then the parser's generators, in the task that read them.

    The response first, for the reason `sse.close_body` gives; the readers close it too
    when they stop early, this covers a consumer that leaves between two reads.
    """
    try:
        await response.aclose()
    finally:
        aclose = getattr(parse, "aclose", None)  # every _parse is an async generator
        if aclose is not None:
            await aclose()


#: the C scanner without `json.loads`'s wrappers: half the cost per event (bench_providers)
raw_decode = json.JSONDecoder().raw_decode


def loads(data: str | bytes, model: HTTPModel) -> Any:
    """Parse one event's JSON, or raise the adapter's malformed-stream error."""
    try:
        value, end = raw_decode(data)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return _loads_slowly(data, model)
    if end != len(data) and not data[end:].isspace():
        raise model._bad_json()
    return value


def _loads_slowly(data: str | bytes, model: HTTPModel) -> Any:
    """Bytes, leading whitespace, or a real error to report."""
    try:
        return json.loads(data)
    except ValueError as exc:
        raise model._bad_json() from exc


async def until_broken(
    batches: AsyncGenerator[list[Any], None], finished: Callable[[], bool]
) -> AsyncGenerator[list[Any], None]:
    """Pass batches through; if the connection breaks once ``finished()`` is true, just end.

    A stream whose stop has already arrived may still lose its trailing usage chunk or
    ``[DONE]`` to a dropped connection or a proxy; the answer is whole, so it is kept as
    complete rather than reported as cut off.
    """
    try:
        async for batch in batches:
            yield batch
    except httpx.TransportError:
        if not finished():
            raise
        log.info("the connection closed after the answer finished; the usage may be missing")
    finally:
        await batches.aclose()  # in this task, not by the collector


#: words in an error that mean the request no longer fits the model's context window
CONTEXT_WORDS = re.compile(
    r"context[ _-]?length|context[ _-]?window|maximum context|prompt is too long|"
    r"too many tokens|exceeds the context|input is too long",
    re.IGNORECASE,
)


def error_fields(body: bytes) -> tuple[str, str | None]:
    """Read ``(message, code)`` from an error body in any of the common shapes.

    OpenAI and Anthropic: ``{"error": {"message", "code" | "type"}}``; Ollama and llama.cpp:
    ``{"error": "text"}``; FastAPI-based servers: ``{"detail": ...}``. Anything else: the
    body's text, shortened.
    """
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            message = error.get("message") or error.get("detail") or ""
            code = error.get("code") or error.get("type")
            return str(message), str(code) if code is not None else None
        if isinstance(error, str):
            return error, None
        detail = data.get("detail") or data.get("message")
        if detail:
            return str(detail), None
    text = body.decode("utf-8", "replace").strip()
    if text.lstrip().startswith("<"):
        return "the server answered with a web page instead of an API response", None
    return text[:300], None
