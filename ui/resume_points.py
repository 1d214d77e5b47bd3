"""Resume points: whether the shown conversation can carry on, and how, or who holds it.

Read whenever a conversation opens, after every request and when the language changes: the
engine's `Agent.resume_point` (its description in the window's language), or, when another
process holds the conversation's lease, "open in another window" instead of a Resume button.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication

from engine import Agent, AgentRunConfig

if TYPE_CHECKING:
    from .controller import Controller

__all__ = ["ResumePoints"]


class ResumePoints:
    """Reads and announces (``resumeChanged``) a conversation's resume point."""

    def __init__(self, controller: Controller) -> None:
        self._c = controller

    async def refresh(self, sid: str) -> None:
        """Read the resume point (or who holds the conversation) and announce it."""
        c = self._c
        if c.is_running(sid):
            c.resumeChanged.emit(sid, None, "")
            return
        holder = await c.storage.lease_holder(sid)
        if holder is not None and not _is_this_process(holder):
            c.resumeChanged.emit(
                sid,
                None,
                QCoreApplication.translate(
                    "Controller", "This conversation is open in another window."
                ),
            )
            return
        agent = Agent(None, AgentRunConfig(sid, language=c.language), extensions=[c.extension])
        point = await agent.resume_point()
        if c.is_running(sid):  # a request began meanwhile
            point = None
        c.resumeChanged.emit(sid, point, "")


def _is_this_process(holder: Any) -> bool:
    return (
        getattr(holder, "pid", None) == os.getpid()
        and getattr(holder, "host", "") == socket.gethostname()
    )
