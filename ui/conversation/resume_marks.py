"""Which listed conversations wait for Resume, for the mark the conversation list draws.

Two sources keep `SessionListModel.set_waiting` true: every resume point the window reads
anyway (the controller's ``resumeChanged``: opening a conversation, the end of a request), and
one pass over the listed conversations after start-up. That pass reads each conversation's tail
with the engine's own resume logic (`Agent.resume_point`: a short range scan, no lease, no
write), one conversation after the other, on the shared store's thread. It starts
`SCAN_DELAY` seconds after the open conversation is shown, so neither start-up nor the first
conversation the person opens waits behind it (its reads share the store's one thread); it
checks at most `SCAN_LIMIT` conversations (the newest).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Protocol

from engine import Agent, AgentRunConfig, SQLiteSessionExtension

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from engine import SQLiteSessionStorage

    from .sessions import SessionListModel

__all__ = ["SCAN_DELAY", "SCAN_LIMIT", "MarksHost", "follow", "scan"]

log = logging.getLogger(__name__)

SCAN_LIMIT = 200  # conversations checked after start-up, the newest first
SCAN_DELAY = 1.0  # seconds after start-up before the pass begins


class MarksHost(Protocol):
    """What the marks need of the controller (`ui.controller.Controller` is one)."""

    @property
    def storage(self) -> SQLiteSessionStorage: ...

    @property
    def sessions(self) -> SessionListModel: ...

    @property
    def closed(self) -> bool: ...

    @property
    def current(self) -> str | None: ...

    @property
    def resumeChanged(self) -> SignalInstance: ...  # noqa: N802

    def is_running(self, session_id: str) -> bool: ...


def follow(controller: MarksHost) -> None:
    """Mark or unmark a conversation whenever the controller announces its resume point."""

    def on_resume(session_id: str, point: Any, busy_text: str) -> None:
        if session_id and not busy_text:  # held by another window: its point is not known
            controller.sessions.set_waiting(session_id, point is not None)

    controller.resumeChanged.connect(on_resume)


async def scan(controller: MarksHost) -> None:
    """Mark the listed conversations that wait for Resume (see the module docstring)."""
    await asyncio.sleep(SCAN_DELAY)  # after what the person is waiting for, not a sync point
    extension = SQLiteSessionExtension(controller.storage)  # shares the open store
    for sid in list(controller.sessions.session_ids())[:SCAN_LIMIT]:
        if controller.closed:
            return
        if sid == controller.current or controller.is_running(sid):
            continue  # the window reads (and marks) these itself
        agent = Agent(None, AgentRunConfig(sid), extensions=[extension])
        try:
            point = await agent.resume_point()
        except Exception as exc:  # an unreadable conversation is simply not marked
            log.info("resume point of %s not read: %s", sid, type(exc).__name__)
            continue
        controller.sessions.set_waiting(sid, point is not None)
