"""Every error the engine raises, in one hierarchy.

```
ContinuoError
 ├─ AgentError
 │   ├─ AgentResumeError(reason)      nothing to resume: empty, completed, refused, ...
 │   ├─ AgentBusyError(holder)        another request holds the session's lease
 │   ├─ StepLimitError                the request used up its model steps
 │   ├─ BranchError(reason)           nothing to regenerate, or a message that cannot be edited
 │   └─ ToolDefinitionError           a function cannot be turned into a tool
 ├─ StorageError
 │   ├─ SessionExistsError            create_session with an id already used
 │   ├─ CorruptDatabaseError          the file is not a readable Continuo database
 │   │   └─ ForeignSchemaError(kind, name)  it holds a trigger, view, table or index of another
 │   │                                    program (or one of Continuo's, changed)
 │   ├─ NewerSchemaError              written by a newer Continuo; refused, not touched
 │   ├─ UnknownMessageTypeError       a stored message of a type this version cannot read
 │   ├─ LeaseLostError(holder)        another process took the request's lease over
 │   ├─ MessageNotFoundError          no message with this id in the conversation
 │   ├─ StorageFullError              the disk is full
 │   ├─ StorageReadOnlyError(reason)  the file or its folder can be read but not written
 │   ├─ StoragePermissionError        the file or its folder cannot be opened at all
 │   └─ StorageIOError                the disk reported an error reading or writing
 ├─ QueryError                      a query (a search...) SQLite refused: not the disk's or
 │                                    the file's fault, nothing changed
 ├─ ProviderError(provider, retryable, retry_after)
 │   ├─ ProviderConnectionError       could not reach the server, or it hung up
 │   ├─ ProviderTimeoutError          the server stopped answering
 │   ├─ ProviderResponseError         malformed stream, or an error inside a 200 stream
 │   │   └─ ProviderEmptyStreamError  a 200 answer with nothing in it
 │   └─ ProviderStatusError(status)   an HTTP error status
 │       ├─ ProviderAuthError         401 / 403
 │       ├─ ProviderRateLimitError(retry_after)
 │       └─ ProviderContextLengthError
 ├─ MCPError(server)
 │   ├─ MCPConfigError(field)         an "mcpServers" entry (or file) that cannot be used
 │   ├─ MCPServerStartError           a server could not be started or did not initialise
 │   ├─ MCPServerCrashedError(tool)   a server stopped during a call: it may have acted
 │   ├─ MCPTimeoutError(tool)         a call did not finish in time and was stopped
 │   ├─ MCPToolError(tool)            the server answered the call with an error
 │   ├─ MCPReplyTooLargeError(tool)   the call finished; its answer passed the line limit
 │   └─ MCPBadReplyError(tool)        the server answered the call with an unreadable message
 ├─ ArchiveError(path)                a file to import or export to that cannot be used
 └─ AttachmentError(path)             a file that cannot be attached: refused before it was
                                      read (a link, too big, not what its name says), or
                                      its reading failed, stopped or was cancelled
```

Each message says what happened and what helps, in words a person understands and that fit
any host (no "Settings", no "window"). ``str(error)`` is English; `ContinuoError.sentence`
renders the same sentence in another language from the error's catalog key and parameters
(`engine.sentences`), and `ContinuoError.action` is an `ErrorAction` a host turns into its
own words (a link to its settings, a Resume button). No message ever contains a credential:
adapters build messages from status, provider name and the provider's own error text, never
from request headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .sentences import ErrorAction, Phrase, has_sentence, sentence

__all__ = [
    "AgentBusyError",
    "AgentError",
    "AgentResumeError",
    "ArchiveError",
    "AttachmentError",
    "BranchError",
    "ContinuoError",
    "CorruptDatabaseError",
    "ErrorAction",
    "ForeignSchemaError",
    "LeaseLostError",
    "MCPBadReplyError",
    "MCPConfigError",
    "MCPError",
    "MCPReplyTooLargeError",
    "MCPServerCrashedError",
    "MCPServerStartError",
    "MCPTimeoutError",
    "MCPToolError",
    "MessageNotFoundError",
    "NewerSchemaError",
    "NotABackupError",
    "ProviderAuthError",
    "ProviderConnectionError",
    "ProviderContextLengthError",
    "ProviderEmptyStreamError",
    "ProviderError",
    "ProviderRateLimitError",
    "ProviderResponseError",
    "ProviderStatusError",
    "ProviderTimeoutError",
    "QueryError",
    "SessionExistsError",
    "StepLimitError",
    "StorageError",
    "StorageFullError",
    "StorageIOError",
    "StoragePermissionError",
    "StorageReadOnlyError",
    "ToolDefinitionError",
    "UnknownMessageTypeError",
]


class ContinuoError(Exception):
    """The root of every error the engine raises on purpose.

    Args:
        message: the English sentence; when None, rendered from ``key`` and ``params``.
        key: the sentence's catalog key (`engine.sentences`), when it has one.
        params: the values the sentence is filled with.
        action: what helps; each class has a default.
    """

    #: what helps after this error, for the host to offer in its own words
    action: ErrorAction = ErrorAction.NONE

    def __init__(
        self,
        message: str | None = None,
        *,
        key: str | None = None,
        params: Mapping[str, Any] | None = None,
        action: ErrorAction | None = None,
    ) -> None:
        self.key = key
        self.params: dict[str, Any] = dict(params or {})
        if action is not None:
            self.action = action
        if message is None:
            message = sentence(key, "en", **self.params) if key is not None else ""
        super().__init__(message)

    def sentence(self, language: str | None = "en") -> str:
        """The error's sentence in ``language`` (``"en"``, ``"zh_CN"``); English if untranslated."""
        if self.key is None:
            return str(self)
        return sentence(self.key, language, **self.params)


# ---------------------------------------------------------------------------- agent


class AgentError(ContinuoError):
    """A request could not be carried out."""


_RESUME_REASONS = frozenset(
    {"empty", "completed", "refused", "context_full", "unknown_stop", "malformed"}
)


class AgentResumeError(AgentError):
    """There is nothing to resume; `.reason` says why (see the resume table)."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        self.reason = reason
        known = reason in _RESUME_REASONS
        super().__init__(
            message,
            key=f"cannot_resume.{reason}" if known else "cannot_resume.other",
            params={} if known else {"reason": reason},
            action=ErrorAction.NEW_CONVERSATION if reason == "context_full" else ErrorAction.NONE,
        )


class AgentBusyError(AgentError):
    """Another request is running on this session; `.holder` describes it."""

    action = ErrorAction.CLOSE_OTHER

    def __init__(self, session_id: str, holder: Any, message: str | None = None) -> None:
        self.session_id = session_id
        self.holder = holder
        super().__init__(
            message, key="agent.busy", params={"session_id": repr(session_id), "holder": holder}
        )


class StepLimitError(AgentError):
    """The request reached `max_steps` model calls without a final answer."""

    action = ErrorAction.RESUME

    def __init__(self, max_steps: int) -> None:
        self.max_steps = max_steps
        super().__init__(key="agent.step_limit", params={"max_steps": max_steps})


class BranchError(AgentError):
    """A regenerate or edit that cannot be done; `.reason` is ``"no_question"`` (no user
    message on the active path to answer again) or ``"not_a_question"`` (only a user message
    can be edited)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(key=f"agent.branch.{reason}")


class ToolDefinitionError(AgentError):
    """A function cannot be described as a tool (an unsupported parameter type, say)."""


# ---------------------------------------------------------------------------- storage


class StorageError(ContinuoError):
    """The conversation store could not be read or written.

    No action by default: only a full disk (`StorageFullError`) says to free space; the
    other faults say what helps in their own subclasses or where they are raised.
    """

    action = ErrorAction.NONE


class SessionExistsError(StorageError):
    """A session with this id already exists."""

    action = ErrorAction.NONE

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(key="storage.exists", params={"session_id": repr(session_id)})


class CorruptDatabaseError(StorageError):
    """The file is not a readable Continuo database; it is left untouched."""

    action = ErrorAction.RESTORE_BACKUP

    def __init__(self, path: str, detail: str = "") -> None:
        self.path = path
        super().__init__(
            key="storage.corrupt",
            params={"path": path, "detail": f" ({detail})" if detail else ""},
        )


class ForeignSchemaError(CorruptDatabaseError):
    """The file holds a table, index, trigger or view that this version of Continuo does not
    create for its schema version (`.kind`, `.name`), or one of its own with other SQL
    (`.changed`). Refused, never kept and never dropped: the file is left untouched."""

    def __init__(self, path: str, kind: str, name: str, *, changed: bool = False) -> None:
        self.kind = kind
        self.name = name
        self.changed = changed
        self.path = path
        known = has_sentence(f"storage.kind.{kind}")  # a table, an index, a trigger, a view
        ContinuoError.__init__(
            self,
            key="storage.foreign_changed" if changed else "storage.foreign",
            params={
                "path": path,
                "kind": Phrase(f"storage.kind.{kind}") if known else kind,
                "name": repr(name),
            },
        )


class NotABackupError(CorruptDatabaseError):
    """A file chosen to restore is not a Continuo backup at all (not SQLite, another
    program's database, an empty one): refused, untouched, and nothing else changed. Not
    damage: what helps is choosing another file."""

    action = ErrorAction.NONE

    def __init__(self, path: str) -> None:
        self.path = path
        ContinuoError.__init__(self, key="storage.not_backup", params={"path": path})


class NewerSchemaError(StorageError):
    """The file was written by a newer version; it is refused, never downgraded."""

    action = ErrorAction.UPDATE_APP

    def __init__(self, path: str, found: int, supported: int) -> None:
        self.path = path
        self.found = found
        self.supported = supported
        super().__init__(
            key="storage.newer", params={"path": path, "found": found, "supported": supported}
        )


class UnknownMessageTypeError(StorageError):
    """A stored message has a type this version cannot read."""

    action = ErrorAction.UPDATE_APP

    def __init__(self, type_name: object, path: str | None = None) -> None:
        self.type_name = type_name
        self.path = path
        super().__init__(
            key="storage.unknown_type",
            params={"where": f" in {path}" if path else "", "type_name": repr(type_name)},
        )


# Storage faults that are not damage: each names the file and what a person can do about it.
# (Kept together so the layer's other errors stay as they were.)


class LeaseLostError(StorageError):
    """Another process took this request's lease over; nothing more of the request is stored.

    `.holder` describes the new holder when known (a `LeaseHolder`), else None.
    """

    action = ErrorAction.NONE

    def __init__(self, session_id: str, holder: Any = None) -> None:
        self.session_id = session_id
        self.holder = holder
        super().__init__(
            key="storage.lease_lost",
            params={
                "session_id": repr(session_id),
                "who": Phrase("storage.lease_lost.who", {"holder": holder})
                if holder is not None
                else "",
            },
        )


class MessageNotFoundError(StorageError):
    """A message named by its id (to branch from, switch to, fork at) is not in the
    conversation."""

    def __init__(self, session_id: str, message_id: str, path: str) -> None:
        self.session_id, self.message_id = session_id, message_id
        super().__init__(
            key="storage.no_message",
            params={"message_id": repr(message_id), "session_id": repr(session_id), "path": path},
        )


class StorageFullError(StorageError):
    """The disk holding the file is full; nothing was written by the failed operation."""

    action = ErrorAction.FREE_SPACE

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(key="storage.full", params={"path": path})


class _FolderRefusal(StorageError):
    """The system refused the file or its folder; `.reason` says which and why."""

    action = ErrorAction.CHECK_FOLDER
    _key = ""

    def __init__(self, path: str, reason: str | Phrase) -> None:
        self.path = path
        self.reason = str(reason)  # in English; the sentence says it in its own language
        super().__init__(key=self._key, params={"path": path, "reason": reason})


class StorageReadOnlyError(_FolderRefusal):
    """The file or its folder can be read but not written (`.reason` says which and why)."""

    _key = "storage.read_only"


class StoragePermissionError(_FolderRefusal):
    """The file or its folder cannot be opened at all with this user's permissions."""

    _key = "storage.permission"


class StorageIOError(StorageError):
    """The operating system reported an error while reading or writing the file."""

    action = ErrorAction.CHECK_FOLDER

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        super().__init__(key="storage.io", params={"path": path, "detail": detail})


class QueryError(ContinuoError):
    """SQLite refused a query Continuo made (a full-text search it could not read, a
    statement it could not run): a fault of the query, never of the disk or the file, which
    are as they were. Not a `StorageError`, so no host tells it as one (no "check the disk",
    no notice that the file cannot be used); `.detail` is SQLite's words."""

    action = ErrorAction.NONE

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        self.detail = detail
        super().__init__(key="storage.query", params={"path": path, "detail": detail})


# ---------------------------------------------------------------------------- providers


class ProviderError(ContinuoError):
    """A model provider failed; `.provider` names it (e.g. ``"OpenAI"``).

    ``retryable`` is given by the adapters for transient failures (connection errors, 408,
    409, 429, 5xx): they retry those themselves, and only before any output arrived.
    ``retry_after`` is the wait in seconds the server asked for (``Retry-After``), when it
    did; a retry waits that long instead of its own backoff.
    """

    action = ErrorAction.RESUME

    def __init__(
        self,
        message: str | None = None,
        *,
        provider: str = "the provider",
        key: str | None = None,
        params: Mapping[str, Any] | None = None,
        action: ErrorAction | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        self.provider = provider
        self.retryable = retryable
        self.retry_after = retry_after
        super().__init__(message, key=key, params=params, action=action)


class ProviderConnectionError(ProviderError):
    """The provider could not be reached, or the connection broke."""

    action = ErrorAction.CHECK_CONNECTION


class ProviderTimeoutError(ProviderError):
    """The provider stopped answering within the time allowed."""

    action = ErrorAction.CHECK_CONNECTION


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

    def __init__(
        self,
        message: str | None = None,
        *,
        status: int,
        provider: str = "the provider",
        key: str | None = None,
        params: Mapping[str, Any] | None = None,
        action: ErrorAction | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        super().__init__(
            message,
            provider=provider,
            key=key,
            params=params,
            action=action,
            retryable=retryable,
            retry_after=retry_after,
        )


class ProviderAuthError(ProviderStatusError):
    """The key was refused (401) or lacks permission (403). Never retried."""

    action = ErrorAction.CHECK_KEY


class ProviderRateLimitError(ProviderStatusError):
    """Too many requests (429); `.retry_after` is the wait in seconds, when known."""

    action = ErrorAction.WAIT

    def __init__(
        self,
        message: str | None = None,
        *,
        status: int = 429,
        provider: str = "the provider",
        retry_after: float | None = None,
        key: str | None = None,
        params: Mapping[str, Any] | None = None,
        action: ErrorAction | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(
            message,
            status=status,
            provider=provider,
            key=key,
            params=params,
            action=action,
            retryable=retryable,
            retry_after=retry_after,
        )


class ProviderContextLengthError(ProviderStatusError):
    """The request is longer than the model's context window."""

    action = ErrorAction.NEW_CONVERSATION


# ---------------------------------------------------------------------------- MCP servers


class MCPError(ContinuoError):
    """An MCP server (a tool host) could not be configured, started or called.

    `.server` names the server as its configuration does (None for a whole file's fault).
    """

    action = ErrorAction.NONE

    def __init__(
        self,
        server: str | None,
        *,
        key: str,
        params: Mapping[str, Any],
        action: ErrorAction | None = None,
    ) -> None:
        self.server = server
        super().__init__(key=key, params=params, action=action)


def _log_phrase(log: str | None) -> Phrase | str:
    return Phrase("mcp.log", {"path": log}) if log else ""


class MCPConfigError(MCPError):
    """An ``mcpServers`` configuration cannot be used; `.field` names the bad key (None when
    the file or its shape is the problem)."""

    def __init__(
        self, source: str, problem: str, *, server: str | None = None, field: str | None = None
    ) -> None:
        self.source = source
        self.field = field
        self.problem = problem
        if server is None or field is None:
            super().__init__(
                server, key="mcp.config.file", params={"source": source, "problem": problem}
            )
        else:
            super().__init__(
                server,
                key="mcp.config.entry",
                params={
                    "server": repr(server),
                    "source": source,
                    "field": field,
                    "problem": problem,
                },
            )


class MCPServerStartError(MCPError):
    """A server could not be started, or did not finish the protocol's start-up in time."""

    def __init__(self, server: str, detail: str | Phrase, log: str | None = None) -> None:
        self.detail = detail  # a Phrase when our own words say it (a command not found)
        self.log = log
        super().__init__(
            server,
            key="mcp.start",
            params={"server": repr(server), "detail": detail, "log": _log_phrase(log)},
        )


class MCPServerCrashedError(MCPError):
    """A server stopped (exited, hung up) while a call ran; the tool may have acted."""

    def __init__(
        self, server: str, tool: str, status: int | None = None, log: str | None = None
    ) -> None:
        self.tool = tool
        self.status = status
        self.log = log
        super().__init__(
            server,
            key="mcp.crashed",
            params={
                "server": repr(server),
                "tool": repr(tool),
                "status": Phrase("mcp.status", {"code": status}) if status is not None else "",
                "log": _log_phrase(log),
            },
        )


class MCPTimeoutError(MCPError):
    """A call did not finish within the server's timeout; it was cancelled on the server."""

    def __init__(self, server: str, tool: str, seconds: float) -> None:
        self.tool = tool
        self.seconds = seconds
        super().__init__(
            server,
            key="mcp.timeout",
            params={"server": repr(server), "tool": repr(tool), "seconds": f"{seconds:g}"},
        )


class MCPToolError(MCPError):
    """The server answered a call with an error (an ``isError`` result or a protocol error);
    `.text` is the server's words, shortened."""

    def __init__(self, server: str, tool: str, text: str) -> None:
        self.tool = tool
        self.text = text
        super().__init__(
            server,
            key="mcp.tool_error",
            params={"server": repr(server), "tool": repr(tool), "text": text},
        )


class MCPReplyTooLargeError(MCPError):
    """A call's answer was longer than the server's line limit (`.limit` bytes): the tool
    finished, but its answer was dropped unread."""

    def __init__(self, server: str, tool: str, limit: int, log: str | None = None) -> None:
        self.tool = tool
        self.limit = limit
        self.log = log
        super().__init__(
            server,
            key="mcp.too_large",
            params={
                "server": repr(server),
                "tool": repr(tool),
                "size": _bytes(limit),
                "log": _log_phrase(log),
            },
        )


class MCPBadReplyError(MCPError):
    """The server answered a call with a message that is not valid JSON or not the
    protocol's shape; `.detail` says what is wrong (no value of the server's is quoted)."""

    def __init__(self, server: str, tool: str, detail: str, log: str | None = None) -> None:
        self.tool = tool
        self.detail = detail
        self.log = log
        super().__init__(
            server,
            key="mcp.bad_reply",
            params={
                "server": repr(server),
                "tool": repr(tool),
                "detail": detail,
                "log": _log_phrase(log),
            },
        )


def _bytes(count: int) -> str:
    """A size for a person: "16 MB", "1.5 KB", "900 bytes"."""
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.3g} MB"
    if count >= 1024:
        return f"{count / 1024:.3g} KB"
    return f"{count} bytes"


# ---------------------------------------------------------------------------- archive


class ArchiveError(ContinuoError):
    """A file to import cannot be read as an export, or an export cannot be written.

    `.path` names the file; the sentence says what is wrong with it first. Raised before
    anything changes: an import that raises it stored nothing (`engine.archive.importer`),
    an export that raises it left the target as it was (`engine.archive.export`).
    """

    def __init__(
        self,
        path: str,
        *,
        key: str,
        params: Mapping[str, Any] | None = None,
        action: ErrorAction | None = None,
    ) -> None:
        self.path = path
        super().__init__(key=key, params={"path": path, **(params or {})}, action=action)


# ---------------------------------------------------------------------------- attachments


class AttachmentError(ContinuoError):
    """A file cannot be attached (`engine.attach`): refused before anything was read (not a
    regular file, over the size limit, bytes that are not what its name says), or its
    reading failed (a damaged file, a decompression bomb), ran out of time or memory and
    was stopped. Nothing was attached; the file was never changed.

    `.path` names the file (its name only is shown: a sentence names no folders).
    """

    def __init__(
        self,
        path: str,
        *,
        key: str,
        params: Mapping[str, Any] | None = None,
        action: ErrorAction | None = None,
    ) -> None:
        self.path = path
        name = path.replace("\\", "/").rsplit("/", 1)[-1] or path
        super().__init__(key=key, params={"name": repr(name), **(params or {})}, action=action)


def size_phrase(count: int) -> str:
    """A size for a person ("16 MB", "2 GB"), as the engine's sentences write it."""
    if count >= 1024**3:
        return f"{count / 1024**3:.3g} GB"
    return _bytes(count)
