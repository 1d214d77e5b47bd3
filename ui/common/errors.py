"""What the window says about a failure, and the window's own errors.

One `describe_error` turns any failure into a sentence for a person and what helps; the record
a conversation keeps of its last error (``last_error`` in its metadata) lets it be said again
later, in another language.

A failure of the request (the provider, the network, the store) speaks with the engine's own
sentence and `ErrorAction`. A query SQLite refused (`engine.QueryError`) is said as itself:
only disk and file faults (`engine.StorageError`) speak of the disk or the file. A failure of
the window itself while it handled a request (a bug folding an event) is an `InternalError`:
it says so, never that anything was saved, and its traceback goes to the log.

The window's own errors have one root, `WindowError`, beside the engine's `ContinuoError`
(not under it: an engine error's sentence comes from the engine's catalog in every language,
a window error's words are the window's, translated by Qt)::

    WindowError
     ├─ NoProviderError          no model provider is set up (what helps: Settings)
     ├─ InternalError            the window failed while handling a request
     └─ SettingsError            settings.json or a key could not be read or written (raised by ui.settings.store)
         ├─ SettingsFileError    settings.json is unreadable; it was not changed (ui.settings.store)
         ├─ KeychainError        the system keychain refused a key (ui.settings.store)
         └─ MCPFileError         mcp.json cannot be used as it is (ui.settings.mcp_file)

Values, not strings: what helps is an `ErrorAction` (the engine's) or a `WindowAction` (the
window's own: "open Settings"), and what was kept of a cut-off answer is a `Kept`; both are
read back from a kept record or a signal with `action_of` and `kept_of`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication

from engine import (
    ContinuoError,
    ErrorAction,
    Phrase,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
    ProviderResponseError,
    ProviderStatusError,
    ProviderTimeoutError,
    has_sentence,
    join_sentences,
    sentence,
)

__all__ = [
    "AnyAction",
    "BannerWords",
    "InternalError",
    "KeychainError",
    "Kept",
    "NoProviderError",
    "SettingsError",
    "SettingsFileError",
    "WindowAction",
    "WindowError",
    "action_of",
    "action_words",
    "banner_words",
    "describe_error",
    "error_record",
    "error_text",
    "kept_of",
    "kept_words",
]


class WindowAction(StrEnum):
    """What helps after a failure only the window meets (the engine's are `ErrorAction`)."""

    OPEN_SETTINGS = "settings"  #: no provider is set up: add one in Settings


#: what helps after any failure the window says
AnyAction = ErrorAction | WindowAction


def action_of(value: object) -> AnyAction:
    """What helps, read back from a kept record or a signal (`ErrorAction.NONE` when unknown)."""
    if isinstance(value, ErrorAction | WindowAction):
        return value
    text = str(value or "")
    for kind in (ErrorAction, WindowAction):
        try:
            return kind(text)
        except ValueError:
            pass
    return ErrorAction.NONE


class Kept(StrEnum):
    """What was kept of the answer a failed request cut off (``last_error["kept"]``)."""

    NONE = ""  #: no answer was cut off
    SAVED = "saved"  #: what arrived was stored
    LOST = "lost"  #: what arrived could not be stored
    #: the person's message was not stored: it is still in the composer (that run only)
    UNSENT = "unsent"


def kept_of(value: object) -> Kept:
    """A `Kept` read back from a kept record or a signal (`Kept.NONE` when unknown)."""
    try:
        return Kept(str(value or ""))
    except ValueError:
        return Kept.NONE


class WindowError(Exception):
    """The root of the window's own errors (see the module docstring)."""


class NoProviderError(WindowError):
    """No model provider is configured: the person must add one in Settings."""

    def __init__(self) -> None:
        super().__init__(
            QCoreApplication.translate(
                "Controller",
                "No model provider is set up yet. Open Settings and add one (for example Ollama or OpenAI).",
            )
        )


class InternalError(WindowError):
    """The window failed while handling a request (its cause is the bug); the request's
    stream was closed, so the conversation is free again."""


class SettingsError(WindowError):
    """The settings or an API key could not be read or written (raised by `ui.settings.store`)."""


class SettingsFileError(SettingsError):
    """settings.json is unreadable; it was left exactly as it was (`.path`)."""

    def __init__(self, path: Path, detail: str) -> None:
        self.path = path
        self.detail = detail
        super().__init__(
            f"The settings file {path} could not be read ({detail}). It was not changed. "
            "Continuo is using default settings for now; fix the file, or let Continuo move "
            "it aside and start with fresh settings."
        )


class KeychainError(SettingsError):
    """The system keychain refused to store, read or delete a key."""


def describe_error(
    exc: BaseException, language: str = "en", *, where: str | None = None, secret: str | None = None
) -> tuple[str, AnyAction]:
    """Say what went wrong in plain words, in ``language``, and what helps.

    The engine's errors carry their own sentence (in any language) and an `ErrorAction`;
    the window words what helps itself (`banner_words`). With ``where`` (the address a
    connection test in Settings tried) the sentence speaks of that test instead. ``secret``
    (the key tried) is blanked out in case a server echoed it back.

    Returns:
        ``(message, action)``: the action is the engine error's `ErrorAction`,
        `WindowAction.OPEN_SETTINGS` (no provider is set up) or `ErrorAction.NONE`.
    """
    if where is not None:
        message = _connection_test(exc, language, where)
        action: AnyAction = exc.action if isinstance(exc, ContinuoError) else ErrorAction.NONE
    else:
        message, action = _request_failure(exc, language)
    return (message.replace(secret, "***") if secret else message), action


def _request_failure(exc: BaseException, language: str) -> tuple[str, AnyAction]:
    if isinstance(exc, NoProviderError):
        return str(exc), WindowAction.OPEN_SETTINGS
    if isinstance(exc, InternalError):
        cause = exc.__cause__ or exc
        if isinstance(cause, ContinuoError):  # the store failed: it says what and what helps
            return cause.sentence(language), cause.action
        return QCoreApplication.translate(
            "Controller",
            "Something went wrong inside the app ({name}); the details are in its log.",
        ).format(name=type(cause).__name__), ErrorAction.RESUME
    if isinstance(exc, ContinuoError):
        # a disk or file fault (`StorageError`) says so; a query SQLite refused
        # (`QueryError`) says it was the query's, never the disk's
        return exc.sentence(language), exc.action
    if isinstance(exc, OSError):
        return QCoreApplication.translate(
            "Controller", "Could not reach the provider."
        ), ErrorAction.CHECK_CONNECTION
    return QCoreApplication.translate("Controller", "Something went wrong ({name}).").format(
        name=type(exc).__name__
    ), ErrorAction.RESUME


# --------------------------------------------------------------------------- the error banner

#: after these, Resume is all that helps: when the failure cut off an answer, that answer's
#: row says what happened and the banner stays hidden
_SAID_BY_THE_ROW = frozenset({ErrorAction.RESUME, ErrorAction.WAIT, ErrorAction.CHECK_CONNECTION})

#: what helps after these is in the window's settings: the banner links to them
_SETTINGS_ACTIONS = frozenset(
    {
        WindowAction.OPEN_SETTINGS,
        ErrorAction.CHECK_KEY,
        ErrorAction.CHECK_CONNECTION,
        ErrorAction.CHECK_MODEL,
    }
)


@dataclass(frozen=True, slots=True)
class BannerWords:
    """What the error banner under a conversation says (plain text, escaped when shown)."""

    text: str  #: the engine's sentence, what was kept, what helps
    link: str  #: the words of the link to the settings ("" for none)


def banner_words(message: str, action: AnyAction, kept: Kept) -> BannerWords | None:
    """The banner's words for a request's failure, or None when the banner stays hidden.

    The engine's sentence (already in the window's language) comes first, then the window's
    own words: whether what arrived was kept — decided by whether it was stored — and what
    helps.
    """
    if kept in (Kept.SAVED, Kept.LOST) and action in _SAID_BY_THE_ROW:
        # The cut-off answer's row says what happened, and Resume is what helps: one
        # notice, not three. The banner stays for errors that need something else.
        return None
    if not message:
        return None
    words = [message, kept_words(kept), action_words(action, unsent=kept is Kept.UNSENT)]
    link = (
        QCoreApplication.translate("ErrorBanner", "Open settings")
        if action in _SETTINGS_ACTIONS
        else ""
    )
    return BannerWords(join_sentences(*words), link)


def kept_words(kept: Kept) -> str:
    """Whether what arrived of a cut-off answer was saved (the request runner knows which)."""
    texts = {
        Kept.SAVED: QCoreApplication.translate("ErrorBanner", "What arrived is saved."),
        Kept.LOST: QCoreApplication.translate("ErrorBanner", "What arrived could not be saved."),
        Kept.UNSENT: QCoreApplication.translate(
            "ErrorBanner", "Your message was not sent; it is still in the box below."
        ),
    }
    return texts.get(kept, "")


def action_words(action: AnyAction, *, unsent: bool = False) -> str:
    """The window's words for what helps after an error; ``unsent``: the message was not
    stored, so sending it again is what helps."""
    if unsent:
        again: dict[AnyAction, str] = {
            ErrorAction.FREE_SPACE: QCoreApplication.translate(
                "ErrorBanner", "Free some disk space, then press Send again."
            ),
            ErrorAction.CHECK_FOLDER: QCoreApplication.translate(
                "ErrorBanner", "Check the data folder's permissions, then press Send again."
            ),
            ErrorAction.RESUME: QCoreApplication.translate(
                "ErrorBanner", "Press Send to try again."
            ),
        }
        if action in again:
            return again[action]
    texts: dict[AnyAction, str] = {
        ErrorAction.RESUME: QCoreApplication.translate("ErrorBanner", "Press Resume to carry on."),
        ErrorAction.WAIT: QCoreApplication.translate(
            "ErrorBanner", "Then press Resume to carry on."
        ),
        ErrorAction.CHECK_CONNECTION: QCoreApplication.translate(
            "ErrorBanner", "Then press Resume to carry on."
        ),
        ErrorAction.FREE_SPACE: QCoreApplication.translate(
            "ErrorBanner", "Free some disk space, then press Resume."
        ),
        ErrorAction.CHECK_FOLDER: QCoreApplication.translate(
            "ErrorBanner", "Check the data folder and its permissions, then press Resume."
        ),
        ErrorAction.CLOSE_OTHER: QCoreApplication.translate(
            "ErrorBanner", "Close the conversation in the other window first."
        ),
        ErrorAction.NEW_CONVERSATION: QCoreApplication.translate(
            "ErrorBanner", "Start a new conversation with New chat."
        ),
        ErrorAction.UPDATE_APP: QCoreApplication.translate(
            "ErrorBanner", "Install a newer Continuo to open it."
        ),
        ErrorAction.RESTORE_BACKUP: QCoreApplication.translate(
            "ErrorBanner", "Restore the conversation file from a backup."
        ),
        ErrorAction.CHECK_ACCOUNT: QCoreApplication.translate(
            "ErrorBanner", "Check your account on the provider's website."
        ),
    }
    return texts.get(action, "")


def _connection_test(exc: BaseException, language: str, base_url: str) -> str:
    """One or two sentences for a failed connection test against ``base_url``."""
    import httpx  # only Settings' tests reach here: not loaded at start-up

    # The engine's sentence in the window's language (other errors have only their own words).
    detail = (exc.sentence(language) if isinstance(exc, ContinuoError) else str(exc)).strip()
    where = base_url or QCoreApplication.translate("SettingsDialog", "the server")
    if isinstance(exc, ProviderAuthError):
        text = QCoreApplication.translate(
            "SettingsDialog",
            "The server refused the API key (HTTP {status}). Check that the key is "
            "correct and still active, then test again.",
        ).format(status=exc.status)
    elif isinstance(exc, ProviderRateLimitError):
        text = QCoreApplication.translate(
            "SettingsDialog",
            "The server says too many requests were made. Wait a minute and test again.",
        )
    elif isinstance(exc, ProviderStatusError):
        text = QCoreApplication.translate(
            "SettingsDialog", "The server answered with an error (HTTP {status}): {detail}"
        ).format(status=exc.status, detail=detail)
    elif isinstance(exc, ProviderTimeoutError | httpx.TimeoutException):
        text = QCoreApplication.translate(
            "SettingsDialog", "{url} did not answer in time. Check the address, or try again later."
        ).format(url=where)
    elif isinstance(exc, ProviderConnectionError | httpx.TransportError):
        text = QCoreApplication.translate(
            "SettingsDialog",
            "Could not connect to {url}. Check the address and that the server is running.",
        ).format(url=where)
    elif isinstance(exc, ProviderResponseError):
        text = QCoreApplication.translate(
            "SettingsDialog",
            "The server's answer was not understood ({detail}). Check that the address "
            "points to this kind of server.",
        ).format(detail=detail)
    elif isinstance(exc, ProviderError | SettingsError):
        text = detail
    else:
        text = QCoreApplication.translate(
            "SettingsDialog", "The connection test failed: {detail}"
        ).format(detail=f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__)
    return text


def error_record(exc: BaseException, language: str, kept: Kept) -> dict[str, Any]:
    """What ``last_error`` keeps: enough to say it again in another language (its action and
    kept state as their values: `action_of` and `kept_of` read them back)."""
    message, action = describe_error(exc, language)
    record: dict[str, Any] = {
        "message": message,
        "action": action.value,
        "kind": type(exc).__name__,
        "at": time.time(),
        "kept": kept.value,
    }
    if isinstance(exc, ContinuoError) and exc.key is not None:
        record["key"] = exc.key
        record["params"] = {k: _kept(v) for k, v in exc.params.items()}
    return record


def _kept(value: Any) -> Any:
    """A sentence's part as JSON: a `Phrase` keeps its key, so it is said again in the
    language of the sentence it fills (as text, it stayed English after a switch)."""
    if isinstance(value, Phrase):
        return {"phrase": value.key, "params": {k: _kept(v) for k, v in value.params.items()}}
    return value if isinstance(value, str | int | float) else str(value)


def _said(value: Any) -> Any:
    """The inverse of `_kept`: a kept phrase becomes a `Phrase` again."""
    if isinstance(value, dict) and isinstance(value.get("phrase"), str):
        if has_sentence(value["phrase"]):
            params = value.get("params") or {}
            return Phrase(value["phrase"], {k: _said(v) for k, v in dict(params).items()})
    return value


def error_text(record: dict[str, Any], language: str) -> str:
    """A kept error's sentence in ``language`` (its own words when it has no catalog key)."""
    key = record.get("key")
    if isinstance(key, str) and has_sentence(key):
        try:
            params = {k: _said(v) for k, v in dict(record.get("params") or {}).items()}
            return sentence(key, language, **params)
        except (KeyError, IndexError, ValueError):
            pass  # a record from another version: its own words still say it
    return str(record.get("message", ""))
