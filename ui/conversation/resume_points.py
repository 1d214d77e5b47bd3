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
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QCoreApplication

from engine import Agent, AgentRunConfig, ResumePoint

if TYPE_CHECKING:
    from engine import LeaseHolder, SQLiteSessionExtension, SQLiteSessionStorage

    from .transcript import TranscriptModel

__all__ = ["ResumeHost", "ResumePoints"]

# announces a conversation's resume point: (session id, the point or None, the sentence
# that it is open in another window, else "")
Announce = Callable[[str, ResumePoint | None, str], None]


class ResumeHost(Protocol):
    """What reading a resume point needs of the controller (`ui.controller.Controller` is
    one): the store now (a restore replaces it), the language, and which conversations run."""

    @property
    def storage(self) -> SQLiteSessionStorage: ...

    @property
    def extension(self) -> SQLiteSessionExtension: ...

    @property
    def language(self) -> str: ...

    def is_running(self, session_id: str) -> bool: ...


class ResumePoints:
    """Reads and announces a conversation's resume point.

    Args:
        host: the store, the language and the running requests.
        rows: a conversation's transcript (its cards of calls that never started are told).
        announce: where the point is announced (the controller's ``resumeChanged``).
    """

    def __init__(
        self, host: ResumeHost, rows: Callable[[str], TranscriptModel], announce: Announce
    ) -> None:
        self._host = host
        self._rows = rows
        self._announce = announce

    async def refresh(self, sid: str) -> None:
        """Read the resume point (or who holds the conversation) and announce it."""
        host = self._host
        if host.is_running(sid):
            self._announce(sid, None, "")
            return
        holder = await host.storage.lease_holder(sid)
        if holder is not None and not _is_this_process(holder):
            self._announce(
                sid,
                None,
                QCoreApplication.translate(
                    "Controller", "This conversation is open in another window."
                ),
            )
            return
        config = AgentRunConfig(sid, language=host.language)
        point = await Agent(None, config, extensions=[host.extension]).resume_point()
        if host.is_running(sid):  # a request began meanwhile
            point = None
        # The cards of calls that never started say "did not run", as Resume does (read from
        # the start records), not "interrupted".
        not_started = [] if point is None else [call.id for call in point.not_started]
        self._rows(sid).set_not_started(not_started)
        self._announce(sid, point, "")


def _is_this_process(holder: LeaseHolder) -> bool:
    return holder.pid == os.getpid() and holder.host == socket.gethostname()
