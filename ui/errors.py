"""What the window says about a failure: one `describe_error`, and the record a conversation
keeps of its last error (``last_error`` in its metadata) so it can be said again later, in
another language.

A failure of the request (the provider, the network, the store) speaks with the engine's own
sentence and `ErrorAction`. A failure of the window itself while it handled a request (a bug
folding an event) is an `InternalError`: it says so, never that anything was saved, and its
traceback goes to the log.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QCoreApplication

from engine import ContinuoError, ErrorAction
from engine.errors import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
    ProviderResponseError,
    ProviderStatusError,
    ProviderTimeoutError,
)
from engine.sentences import Phrase, has_sentence, sentence

__all__ = [
    "KEPT_LOST",
    "KEPT_SAVED",
    "KEPT_UNSENT",
    "InternalError",
    "NoProviderError",
    "describe_error",
    "error_record",
    "error_text",
]

# what was kept of the answer a failed request cut off (``last_error["kept"]``)
KEPT_SAVED, KEPT_LOST = "saved", "lost"
# the message the person sent was not stored: it is still in the composer (this run only)
KEPT_UNSENT = "unsent"


class NoProviderError(ContinuoError):
    """No model provider is configured: the person must add one in Settings."""

    def __init__(self) -> None:
        super().__init__(
            QCoreApplication.translate(
                "Controller",
                "No model provider is set up yet. Open Settings and add one (for example Ollama or OpenAI).",
            )
        )


class InternalError(Exception):
    """The window failed while handling a request (its cause is the bug); the request's
    stream was closed, so the conversation is free again."""


def describe_error(
    exc: BaseException, language: str = "en", *, where: str | None = None, secret: str | None = None
) -> tuple[str, str]:
    """Say what went wrong in plain words, in ``language``, and which action helps.

    The engine's errors carry their own sentence (in any language) and an `ErrorAction`;
    the window adds its own words for the action (`MainWindow`), so they are not here. With
    ``where`` (the address a connection test in Settings tried) the sentence speaks of that
    test instead. ``secret`` (the key tried) is blanked out in case a server echoed it back.

    Returns:
        ``(message, action)``; action is an `ErrorAction` value (``"check_key"``,
        ``"resume"``...), ``"settings"`` (no provider is set up) or ``""``.
    """
    if where is not None:
        message, action = _connection_test(exc, language, where), _action(exc)
    else:
        message, action = _request_failure(exc, language)
    return (message.replace(secret, "***") if secret else message), action


def _action(exc: BaseException) -> str:
    return exc.action.value if isinstance(exc, ContinuoError) else ""


def _request_failure(exc: BaseException, language: str) -> tuple[str, str]:
    if isinstance(exc, NoProviderError):
        return str(exc), "settings"
    if isinstance(exc, InternalError):
        cause = exc.__cause__ or exc
        if isinstance(cause, ContinuoError):  # the store failed: it says what and what helps
            return cause.sentence(language), cause.action.value
        return QCoreApplication.translate(
            "Controller",
            "Something went wrong inside the app ({name}); the details are in its log.",
        ).format(name=type(cause).__name__), "resume"
    if isinstance(exc, ContinuoError):
        return exc.sentence(language), exc.action.value
    if isinstance(exc, OSError):
        return QCoreApplication.translate(
            "Controller", "Could not reach the provider."
        ), ErrorAction.CHECK_CONNECTION.value
    return QCoreApplication.translate("Controller", "Something went wrong ({name}).").format(
        name=type(exc).__name__
    ), "resume"


def _connection_test(exc: BaseException, language: str, base_url: str) -> str:
    """One or two sentences for a failed connection test against ``base_url``."""
    import httpx  # only Settings' tests reach here: not loaded at start-up

    from .settings import SettingsError

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


def error_record(exc: BaseException, language: str, kept: str) -> dict[str, Any]:
    """What ``last_error`` keeps: enough to say it again in another language."""
    message, action = describe_error(exc, language)
    record: dict[str, Any] = {
        "message": message,
        "action": action,
        "kind": type(exc).__name__,
        "at": time.time(),
        "kept": kept,
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
