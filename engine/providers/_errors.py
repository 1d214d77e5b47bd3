"""How a provider's failures are told to a person, and what of a server's words may be quoted.

Every adapter builds one `ErrorWording` with its identity and limits; everything it raises
comes from there, so the same failure reads the same whatever the protocol:

- httpx's transport exceptions, and the readers' signals (`sse.EventTooLarge`,
  `_limits.BodyTooSlow`), become `ProviderError`s raised ``from`` them (`ErrorWording.transport`);
- an HTTP error status becomes the `ProviderStatusError` its status and code call for, with
  ``retryable`` and ``retry_after`` for the retry loop (`ErrorWording.status`);
- an error inside a successful stream, a stream that ended early, an empty one, malformed JSON,
  a web page instead of an API answer: one builder each.

A sentence never contains a credential: it is built from the catalog (`engine.sentences`), the
provider's name, the status and the server's own words with every credential hidden
(`redactor_for`, engine/redaction.py) and at most `QUOTE_LIMIT` characters of them quoted
(`ErrorWording.scrub`). What is particular to one wire (which codes mean a full context window,
which in-stream errors are transient) stays in its adapter's error mapping.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from ..errors import (
    ErrorAction,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderContextLengthError,
    ProviderEmptyStreamError,
    ProviderError,
    ProviderRateLimitError,
    ProviderResponseError,
    ProviderStatusError,
    ProviderTimeoutError,
)
from ..redaction import Redactor, redact_urls, shorten
from ..sentences import Phrase
from ._limits import BodyTooSlow
from ._retry import parse_retry_after, retryable_status
from .sse import EventTooLarge

__all__ = ["CONTEXT_WORDS", "QUOTE_LIMIT", "ErrorWording", "error_fields", "redactor_for"]

#: characters of a server's own words quoted in a sentence for a person
QUOTE_LIMIT = 300

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


# ---------------------------------------------------------------------------- credentials


def redactor_for(api_key: str | None, url: httpx.URL, headers: Mapping[str, str]) -> Redactor:
    """What hides an adapter's credentials wherever a server echoes them: the key, the base
    URL's userinfo (also as the Basic credentials it is sent as) and key-like query values,
    and the values of extra headers that carry a credential."""
    return Redactor(
        [
            api_key,
            url.username,
            url.password,
            *_header_credentials(headers),
            *_query_credentials(url),
            *_basic_credentials(url),
        ]
    )


def _query_credentials(url: httpx.URL) -> list[str]:
    """The values of a base URL's key-like query parameters (``?key=``), to hide wherever
    they echo, not only as ``key=value``."""
    return [
        value
        for name, value in url.params.multi_items()
        if re.search(r"(?i)key|token|secret|passw|pwd|sig|auth|credential", name)
    ]


def _basic_credentials(url: httpx.URL) -> list[str]:
    """The Basic credentials a base URL's userinfo is sent as (base64 of ``user:password``),
    to hide where a server echoes them (the Redactor also hides the password in base64 at
    any alignment, but a short one only in this exact form)."""
    if not url.userinfo:
        return []
    pair = f"{url.username}:{url.password}".encode()
    return [base64.b64encode(pair).decode("ascii")]


def _header_credentials(headers: Mapping[str, str]) -> list[str]:
    """The values of extra headers that carry a credential, to hide wherever they echo."""
    found = []
    for name, value in headers.items():
        if re.search(r"(?i)auth|key|token|secret|cookie", name):
            found.append(value)
            found += value.split()[1:]  # "Bearer <token>": the token alone too
    return found


# ---------------------------------------------------------------------------- the wording


class ErrorWording:
    """The errors of one adapter, worded for a person.

    Args:
        provider: the provider's name as `ProviderError.provider` carries it.
        address: the ``host:port`` a provider without a name of its own is called after
            ("the server at …", said in any language), or None.
        base_url: the adapter's base URL without userinfo; shown with key-like query values
            hidden.
        redact: hides the adapter's credentials (`redactor_for`).
        model: the model id, named in a status error.
        timeout: the adapter's httpx timeouts, named in a timeout error.
        idle_timeout: the idle deadline, named when it passes.
        retry_after_cap: the longest ``Retry-After`` waited for; a longer one is not retried.
    """

    def __init__(
        self,
        *,
        provider: str,
        address: str | None,
        base_url: str,
        redact: Redactor,
        model: str,
        timeout: httpx.Timeout,
        idle_timeout: float,
        retry_after_cap: float,
    ) -> None:
        self.provider = provider
        self._address = address
        #: the base URL as a sentence may show it (key-like query values hidden)
        self.shown_url = redact_urls(base_url)
        self.redact = redact
        self._model = model
        self._timeout = timeout
        self._idle_timeout = idle_timeout
        self._retry_after_cap = retry_after_cap

    @property
    def who(self) -> str | Phrase:
        """The provider's name at the start of a sentence."""
        if self._address is not None:  # "the server at host:port", said in any language
            return Phrase("provider.server_at.who", {"address": self._address})
        return self.provider[:1].upper() + self.provider[1:]

    @property
    def named(self) -> str | Phrase:
        """The provider's name inside a sentence."""
        if self._address is not None:
            return Phrase("provider.server_at", {"address": self._address})
        return self.provider

    def scrub(self, text: str, limit: int = QUOTE_LIMIT) -> str:
        """A server's words, fit to quote: every credential hidden, at most ``limit`` long.

        Hidden before shortening, so a key cut in two by the limit is still recognised. Only
        a head of a long text is redacted (a 15 MB error event cost seconds and hundreds of
        MB): enough that what a cut leaves of a key at its end lies past the quoted part,
        even after earlier redactions shortened the text; a longer head is taken if not.
        """
        margin = 2 * self.redact.longest + 16
        size = limit + margin
        while True:
            hidden = self.redact(text[:size]).strip()
            if size >= len(text) or len(hidden) >= limit + margin:
                return shorten(hidden, limit)
            size *= 4

    # -- the transport -----------------------------------------------------------------

    @contextlib.contextmanager
    def transport(self, connect_key: str = "provider.connect") -> Iterator[None]:
        """Turn httpx's transport exceptions and the readers' signals into the engine's
        errors, raised ``from`` them.

        ``connect_key`` is the catalog sentence for a refused connection (`engine.sentences`).
        """
        try:
            yield
        except ProviderError:
            raise
        except (httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            # No connection within the connect (or pool) timeout: not "no data for" the
            # read timeout, which was never reached.
            limit = self._timeout.connect if isinstance(exc, httpx.ConnectTimeout) else None
            limit = limit if limit is not None else self._timeout.pool
            raise ProviderTimeoutError(
                key="provider.connect_timeout",
                params={
                    "provider": self.named,
                    "base_url": self.shown_url,
                    "seconds": f"{limit or 0:g}",
                },
                provider=self.provider,
                retryable=True,
            ) from exc
        except httpx.TimeoutException as exc:
            limit = self._timeout.write if isinstance(exc, httpx.WriteTimeout) else None
            limit = limit if limit is not None else self._timeout.read
            raise self._waited_past("provider.timeout", limit or 0) from exc
        except httpx.ConnectError as exc:
            raise ProviderConnectionError(
                key=connect_key,
                params={"provider": self.named, "base_url": self.shown_url},
                provider=self.provider,
                retryable=True,
            ) from exc
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            raise ProviderConnectionError(
                key="provider.connection_broke",
                params={"provider": self.named},
                provider=self.provider,
                retryable=True,
            ) from exc
        except httpx.DecodingError as exc:
            raise ProviderResponseError(
                key="provider.undecodable", params={"who": self.who}, provider=self.provider
            ) from exc
        except EventTooLarge as exc:
            raise self.too_large(exc) from exc
        except BodyTooSlow as exc:
            raise self.slow_body(exc.seconds) from None

    def unanswered(self, exc: ProviderError) -> ProviderError:
        """The error for a connection that closed before any answer began, else ``exc``.

        httpx calls a connection the server resets before its response "broke"; nothing
        arrived, so a person reads that the provider could not be reached, not that an
        answer was cut off.
        """
        if exc.key != "provider.connection_broke":
            return exc
        return ProviderConnectionError(
            key="provider.connect.no_answer",
            params={"provider": self.named, "base_url": self.shown_url},
            provider=self.provider,
            retryable=True,
        )

    # -- the limits ----------------------------------------------------------------------

    def too_large(self, exc: EventTooLarge) -> ProviderError:
        """The error for a stream line, event or body larger than ``max_event_size``."""
        return ProviderResponseError(
            key="provider.too_large",
            params={"who": self.who, "size": _size(exc.max_size)},
            provider=self.provider,
        )

    def slow_body(self, seconds: float) -> ProviderError:
        """The error for a body still arriving after ``seconds`` (a byte at a time)."""
        return self._waited_past("provider.slow_body", seconds)

    def idle(self) -> ProviderError:
        """The error for a stream that brought no model event for ``idle_timeout`` seconds."""
        return self._waited_past("provider.idle", self._idle_timeout)

    def _waited_past(self, key: str, seconds: float) -> ProviderError:
        """A timeout (``key``) after ``seconds``; retried only before any output, as every
        retry is."""
        return ProviderTimeoutError(
            key=key,
            params={"who": self.who, "seconds": f"{seconds:g}"},
            provider=self.provider,
            retryable=True,
        )

    # -- what the server said ------------------------------------------------------------

    def status(
        self,
        status: int,
        detail: str,
        headers: Mapping[str, str],
        code: str | None = None,
        *,
        no_model: str = "provider.no_model",
    ) -> ProviderError:
        """The error for an HTTP error status, worded for a person.

        ``no_model`` is the catalog sentence for a 404 (an unknown model), which an adapter
        may replace with one that says how its servers get a model (Ollama: ``ollama pull``);
        it has the same parameters, ``name`` being the model's id unquoted.
        """
        detail = self.scrub(detail)
        params: dict[str, Any] = {
            "who": self.who,
            "status": status,
            "said": f": {detail.rstrip('.')}." if detail else ".",
            "model": repr(self._model),
            "name": self._model,
            "base_url": self.shown_url,
        }
        retry_after = parse_retry_after(headers)
        retryable = retryable_status(status)
        too_long = retry_after is not None and retry_after > self._retry_after_cap
        until = ""
        if retry_after is not None:
            at = datetime.now(UTC).timestamp() + retry_after
            params["seconds"] = f"{retry_after:.0f}"
            params["at"] = f"{datetime.fromtimestamp(at, UTC):%H:%M:%S}"
            until = "_until"
        if status in (401, 403):
            refused = "provider.key_refused" if status == 401 else "provider.access_denied"
            return ProviderAuthError(
                key=refused,
                params=params,
                status=status,
                provider=self.provider,
                retry_after=retry_after,
            )
        if status == 429:
            quota = code == "insufficient_quota"
            return ProviderRateLimitError(
                key="provider.quota" if quota else f"provider.rate_limited{until}",
                params=params,
                status=status,
                provider=self.provider,
                retry_after=retry_after,
                action=ErrorAction.CHECK_ACCOUNT if quota else None,
                retryable=retryable and not quota and not too_long,
            )
        if status == 404:
            key, action = no_model, ErrorAction.CHECK_MODEL
        elif retryable:
            busy = "provider.overloaded" if status == 529 else "provider.server_error"
            key, action = busy + until, ErrorAction.WAIT
        else:
            key, action = "provider.rejected", ErrorAction.CHECK_MODEL
        return ProviderStatusError(
            key=key,
            params=params,
            status=status,
            provider=self.provider,
            action=action,
            retryable=retryable and not too_long,
            retry_after=retry_after,
        )

    def in_stream(
        self, detail: str, *, context_full: bool = False, transient: bool = False
    ) -> ProviderError:
        """The error for an error reported inside a successful (200) stream.

        ``transient`` (an overloaded or server error) makes it retryable; the retry loop
        still retries only when nothing had reached the caller yet.
        """
        text = self.scrub(detail) or "no details given"
        if context_full:
            return ProviderContextLengthError(
                key="provider.context_full",
                params={"who": self.who, "detail": text},
                status=400,
                provider=self.provider,
            )
        # Whether what arrived was kept is not known here: the agent stores it, and the
        # host says so only when it was (MESSAGE_APPENDED).
        return ProviderResponseError(
            key="provider.error_in_stream",
            params={"who": self.who, "detail": text.rstrip(".")},
            provider=self.provider,
            retryable=transient,
        )

    def ended_early(self, response: httpx.Response | None = None) -> ProviderError:
        """The error for a stream that ended without its stop; an empty one is its own."""
        if response is not None and not response.num_bytes_downloaded:
            return self.empty_stream()
        return ProviderConnectionError(
            key="provider.ended_early",
            params={"who": self.who},
            provider=self.provider,
            action=ErrorAction.RESUME,
            retryable=True,  # only ever before any output
        )

    def empty_stream(self, reason: str | ProviderError = "") -> ProviderError:
        """The error for a ``200 OK`` whose body was empty: nothing arrived, nothing is kept.

        Not retried: the servers that do this (llama.cpp's Python server) do it every time
        for the same request. ``reason`` is what the server said when asked again without
        streaming, a sentence of its own.
        """
        if reason:
            return ProviderEmptyStreamError(
                key="provider.empty_stream.reason",
                params={"who": self.who, "reason": reason},
                provider=self.provider,
            )
        return ProviderEmptyStreamError(
            key="provider.empty_stream", params={"who": self.who}, provider=self.provider
        )

    def bad_json(self) -> ProviderError:
        """The error for a stream event that is not the JSON it must be."""
        return ProviderResponseError(
            key="provider.bad_json", params={"who": self.who}, provider=self.provider
        )

    def bad_body(self) -> ProviderError:
        """The error for a whole body (an unstreamed answer, a model list) that is not the
        JSON object its API sends, or holds a part of the wrong kind."""
        return ProviderResponseError(
            key="provider.bad_json.body", params={"who": self.who}, provider=self.provider
        )

    def web_page(self) -> ProviderError:
        """The error for a web page where the API's answer should be (a wrong base URL)."""
        return ProviderResponseError(
            key="provider.web_page",
            params={"who": self.who, "base_url": self.shown_url},
            provider=self.provider,
            action=ErrorAction.CHECK_CONNECTION,
        )


def _size(characters: int) -> str:
    """A size for a person: "16 MB" (characters of text count as bytes here)."""
    if characters >= 1024 * 1024:
        return f"{characters / (1024 * 1024):g} MB"
    if characters >= 1024:
        return f"{characters / 1024:g} KB"
    return f"{characters} characters"
