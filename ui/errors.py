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
from engine.sentences import has_sentence, sentence

__all__ = [
    "KEPT_LOST",
    "KEPT_SAVED",
    "InternalError",
    "NoProviderError",
    "describe_error",
    "error_record",
    "error_text",
]

#: what was kept of the answer a failed request cut off (``last_error["kept"]``)
KEPT_SAVED, KEPT_LOST = "saved", "lost"


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


def describe_error(exc: BaseException, language: str = "en") -> tuple[str, str]:
    """Say what went wrong in plain words, in ``language``, and which action helps.

    The engine's errors carry their own sentence (in any language) and an `ErrorAction`;
    the window adds its own words for the action (`MainWindow`), so they are not here.

    Returns:
        ``(message, action)``; action is an `ErrorAction` value (``"check_key"``,
        ``"resume"``...), ``"settings"`` (no provider is set up) or ``""``.
    """
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
        record["params"] = {
            k: v if isinstance(v, str | int | float) else str(v) for k, v in exc.params.items()
        }
    return record


def error_text(record: dict[str, Any], language: str) -> str:
    """A kept error's sentence in ``language`` (its own words when it has no catalog key)."""
    key = record.get("key")
    if isinstance(key, str) and has_sentence(key):
        try:
            return sentence(key, language, **dict(record.get("params") or {}))
        except (KeyError, IndexError, ValueError):
            pass  # a record from another version: its own words still say it
    return str(record.get("message", ""))
