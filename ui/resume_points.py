"""Resume points: whether the shown conversation can carry on, and how, or who holds it.

Read whenever a conversation opens, after every request and when the language changes: the
engine's `Agent.resume_point` (its description in the window's language), or, when another
process holds the conversation's lease, "open in another window" instead of a Resume button.
The point's calls that never started (read from the start records) are handed to the
transcript, so their cards say "did not run" as the Resume line does.
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
        # The cards of calls that never started say "did not run", as Resume does (read from
        # the start records), not "interrupted".
        not_started = [] if point is None else [call.id for call in point.not_started]
        c.transcript(sid).set_not_started(not_started)
        c.resumeChanged.emit(sid, point, "")


def _is_this_process(holder: Any) -> bool:
    return (
        getattr(holder, "pid", None) == os.getpid()
        and getattr(holder, "host", "") == socket.gethostname()
    )
