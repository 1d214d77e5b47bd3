"""`JSONLExtension`: one self-contained JSON line per request, for audit and analysis.

Each line holds the session id, the request id, start and end times, whether it was resumed,
the turn's messages from the last user message on (so a resumed request's record starts at
that user message too), the outcome (``completed``, ``error`` with the error's type and
message, or ``cancelled``) and the summed token usage. Lines are appended whole, with one
``write`` each, off the event loop; a started write finishes even if the caller is cancelled
(`engine._finish.finish`).
Messages and engine errors never carry credentials, so neither does the file.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from ._finish import finish
from .extensions import Extension, RunContext
from .messages import AssistantMessage, Usage, UserMessage, message_to_dict
from .redaction import redact_urls

__all__ = ["JSONLExtension"]


class JSONLExtension(Extension):
    """Append one JSON line per request to ``path``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    async def before_run(self, ctx: RunContext) -> None:
        ctx.state.setdefault("jsonl_started_at", time.time())

    async def after_run(self, ctx: RunContext, result: AssistantMessage) -> None:
        outcome: dict[str, Any] = {"status": "completed"}
        if result.stop is not None:
            outcome["stop"] = result.stop.to_dict()
        await self._write(ctx, outcome)

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        if isinstance(error, asyncio.CancelledError | GeneratorExit):
            outcome: dict[str, Any] = {"status": "cancelled"}
        else:
            outcome = {
                "status": "error",
                "error": type(error).__name__,
                "message": _redact(str(error)),
            }
            reason = getattr(error, "reason", None)
            if isinstance(reason, str):
                outcome["reason"] = reason
        await self._write(ctx, outcome)

    async def _write(self, ctx: RunContext, outcome: dict[str, Any]) -> None:
        turn = _turn(ctx)
        usage = Usage()  # this request's own steps: a resumed turn's record repeats earlier ones
        for message in ctx.messages[ctx.first_new :]:
            if isinstance(message, AssistantMessage) and message.usage is not None:
                usage = usage + message.usage
        record = {
            "session_id": ctx.session_id,
            "request_id": ctx.request_id,
            "started_at": ctx.state.get("jsonl_started_at", time.time()),
            "ended_at": time.time(),
            "resumed": ctx.resumed,
            "messages": [message_to_dict(m) for m in turn],
            "outcome": outcome,
            "usage": usage.to_dict(),
        }
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        # A line begun is written whole; a line that could not be written is the news.
        await finish(asyncio.to_thread(self._append_line, line))

    def _append_line(self, line: str) -> None:
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())


def _redact(text: str) -> str:
    """Hide credentials in URLs (engine errors never carry any; other models' errors might)."""
    return redact_urls(text)


def _turn(ctx: RunContext) -> list[Any]:
    """The messages from the last user message on."""
    messages = ctx.messages
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], UserMessage):
            return list(messages[index:])
    return list(messages)
