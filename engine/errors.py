"""Every error the engine raises, in one hierarchy.

```
ContinuoError
 ├─ AgentError
 │   ├─ AgentResumeError(reason)      nothing to resume: empty, completed, refused, ...
 │   ├─ AgentBusyError(holder)        another request holds the session's lease
 │   ├─ StepLimitError                the request used up its model steps
 │   └─ ToolDefinitionError           a function cannot be turned into a tool
 ├─ StorageError
 │   ├─ SessionExistsError            create_session with an id already used
 │   ├─ CorruptDatabaseError          the file is not a readable Continuo database
 │   ├─ NewerSchemaError              written by a newer Continuo; refused, not touched
 │   └─ UnknownMessageTypeError       a stored message of a type this version cannot read
 └─ ProviderError(provider)
     ├─ ProviderConnectionError       could not reach the server, or it hung up
     ├─ ProviderTimeoutError          the server stopped answering
     ├─ ProviderResponseError         malformed stream, or an error inside a 200 stream
     │   └─ ProviderEmptyStreamError  a 200 answer with nothing in it
     └─ ProviderStatusError(status)   an HTTP error status
         ├─ ProviderAuthError         401 / 403
         ├─ ProviderRateLimitError(retry_after)
         └─ ProviderContextLengthError
```

Each message says what happened and what to do, in words a person understands. No message
ever contains a credential: adapters build messages from status, provider name and the
provider's own error text, never from request headers.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentBusyError",
    "AgentError",
    "AgentResumeError",
    "ContinuoError",
    "CorruptDatabaseError",
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
    "SessionExistsError",
    "StepLimitError",
    "StorageError",
    "ToolDefinitionError",
    "UnknownMessageTypeError",
]


class ContinuoError(Exception):
    """The root of every error the engine raises on purpose."""


# ---------------------------------------------------------------------------- agent


class AgentError(ContinuoError):
    """A request could not be carried out."""


_RESUME_MESSAGES = {
    "empty": "This conversation has no messages, so there is nothing to resume.",
    "completed": "The last answer finished normally, so there is nothing to resume.",
    "refused": "The model declined the last request; resuming would be declined again.",
    "context_full": (
        "The conversation filled the model's context window; start a new conversation "
        "or shorten this one before going on."
    ),
    "unknown_stop": "The last answer stopped for a reason this version does not know.",
    "malformed": (
        "The conversation ends in a tool result that answers no tool call, so it cannot be resumed."
    ),
}


class AgentResumeError(AgentError):
    """There is nothing to resume; `.reason` says why (see the resume table)."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        self.reason = reason
        super().__init__(message or _RESUME_MESSAGES.get(reason, f"Cannot resume: {reason}."))


class AgentBusyError(AgentError):
    """Another request is running on this session; `.holder` describes it."""

    def __init__(self, session_id: str, holder: Any, message: str | None = None) -> None:
        self.session_id = session_id
        self.holder = holder
        super().__init__(
            message
            or f"Conversation {session_id!r} is busy in another request ({holder}); "
            "wait for it to finish or close the other window."
        )


class StepLimitError(AgentError):
    """The request reached `max_steps` model calls without a final answer."""

    def __init__(self, max_steps: int) -> None:
        self.max_steps = max_steps
        super().__init__(
            f"The request used all {max_steps} model steps without a final answer; "
            "everything so far is saved, and Resume carries on from here."
        )


class ToolDefinitionError(AgentError):
    """A function cannot be described as a tool (an unsupported parameter type, say)."""


# ---------------------------------------------------------------------------- storage


class StorageError(ContinuoError):
    """The conversation store could not be read or written."""


class SessionExistsError(StorageError):
    """A session with this id already exists."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"A conversation with id {session_id!r} already exists.")


class CorruptDatabaseError(StorageError):
    """The file is not a readable Continuo database; it is left untouched."""

    def __init__(self, path: str, detail: str = "") -> None:
        self.path = path
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"The conversation file {path} is damaged or is not a Continuo database{extra}. "
            "It was not changed; restore it from a backup or move it aside to start afresh."
        )


class NewerSchemaError(StorageError):
    """The file was written by a newer version; it is refused, never downgraded."""

    def __init__(self, path: str, found: int, supported: int) -> None:
        self.path = path
        self.found = found
        self.supported = supported
        super().__init__(
            f"The conversation file {path} was written by a newer Continuo (schema {found}, "
            f"this version reads up to {supported}). It was not changed; update Continuo to "
            "open it."
        )


class UnknownMessageTypeError(StorageError):
    """A stored message has a type this version cannot read."""

    def __init__(self, type_name: object, path: str | None = None) -> None:
        self.type_name = type_name
        self.path = path
        where = f" in {path}" if path else ""
        super().__init__(
            f"A stored message{where} has the unknown type {type_name!r}; it may come from "
            "a newer Continuo. Nothing was changed; update Continuo to open it."
        )


# ---------------------------------------------------------------------------- providers


class ProviderError(ContinuoError):
    """A model provider failed; `.provider` names it (e.g. ``"OpenAI"``).

    ``retryable`` is set by the adapters for transient failures (connection errors, 408, 409,
    429, 5xx): they retry those themselves, and only before any output arrived.
    """

    retryable: bool = False

    def __init__(self, message: str, *, provider: str = "the provider") -> None:
        self.provider = provider
        super().__init__(message)


class ProviderConnectionError(ProviderError):
    """The provider could not be reached, or the connection broke."""


class ProviderTimeoutError(ProviderError):
    """The provider stopped answering within the time allowed."""


class ProviderResponseError(ProviderError):
    """The provider sent something malformed, or an error inside a successful stream."""


class ProviderEmptyStreamError(ProviderResponseError):
    """The provider answered ``200 OK`` and then sent nothing at all.

    llama.cpp's Python server answers some failures this way (a prompt over the context
    window, ``tool_choice`` it cannot stream). Nothing arrived, so nothing is kept; the
    message gives the server's reason when asking again without streaming revealed one.
    """


class ProviderStatusError(ProviderError):
    """The provider answered with an HTTP error status (`.status`)."""

    def __init__(self, message: str, *, status: int, provider: str = "the provider") -> None:
        self.status = status
        super().__init__(message, provider=provider)


class ProviderAuthError(ProviderStatusError):
    """The key was refused (401) or lacks permission (403). Never retried."""


class ProviderRateLimitError(ProviderStatusError):
    """Too many requests (429); `.retry_after` is the wait in seconds, when known."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 429,
        provider: str = "the provider",
        retry_after: float | None = None,
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, status=status, provider=provider)


class ProviderContextLengthError(ProviderStatusError):
    """The request is longer than the model's context window."""
