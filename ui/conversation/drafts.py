"""Unsent composer text, kept per conversation: what was typed in one conversation stays
with it — shown again on return, kept across restarts — and never follows the person into
another one, where Enter would have sent it there.

Where it is kept: in the conversation's own metadata in the conversation file (key
`DRAFT_KEY`), written through `ui.conversation.conversations.Conversations.update_metadata`, not in the
window's settings.json. The draft then lives and dies with its conversation: deleting the
conversation deletes it, a backup and its restore carry it, and there is no second file that
can fall out of step with the list. Writing metadata does not touch the conversation's time,
so a draft does not move its conversation up the list.

The composer's text is written a moment after typing stops (`SAVE_AFTER_MS`), when another
conversation is shown, and at close (`flush`). A write that fails is logged: the text is
still in the composer, and in this run's memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QTextCursor

from engine import ContinuoError

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QPlainTextEdit

    from engine import SessionInfo

    from .conversations import Conversations

__all__ = ["DRAFT_KEY", "SAVE_AFTER_MS", "ComposerDrafts", "DraftsHost"]

log = logging.getLogger(__name__)

#: the conversation metadata key holding the composer's unsent text
DRAFT_KEY = "composer_draft"
#: how long after the last keystroke the draft is written
SAVE_AFTER_MS = 800


class DraftsHost(Protocol):
    """What the drafts need of the controller (`ui.controller.Controller` is one): the open
    conversations' metadata, whether a conversation still exists, and a task owner."""

    @property
    def conversations(self) -> Conversations: ...

    def session_info(self, session_id: str) -> SessionInfo | None: ...

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any]: ...


class ComposerDrafts(QObject):
    """Swaps the composer's text as conversations are shown (see the module docstring).

    Given the host and the two signals it listens to (the conversation shown, a message
    stored), never the whole controller."""

    def __init__(
        self,
        composer: QPlainTextEdit,
        host: DraftsHost,
        current_changed: SignalInstance,
        message_stored: SignalInstance,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._composer = composer
        self._c = host
        self._shown = ""  # the conversation whose draft the composer holds ("": none)
        self._texts: dict[str, str] = {}  # this run's drafts, newer than what is stored
        self._setting = False  # the composer's text is being swapped, not typed
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SAVE_AFTER_MS)
        self._timer.timeout.connect(lambda: self._save(self._shown))
        composer.textChanged.connect(self._edited)
        current_changed.connect(self._on_current)
        message_stored.connect(self._message_stored)

    def draft(self, session_id: str) -> str:
        """The unsent text of a conversation (this run's, else the stored one)."""
        if session_id in self._texts:
            return self._texts[session_id]
        return str(self._c.conversations.metadata(session_id).get(DRAFT_KEY) or "")

    async def flush(self) -> None:
        """Write the shown conversation's draft now (the window is closing)."""
        self._timer.stop()
        if self._shown:
            await self._write(self._shown)

    # ------------------------------------------------------------------ the composer

    def _edited(self) -> None:
        if self._setting or not self._shown:
            return
        self._texts[self._shown] = self._composer.toPlainText()
        self._timer.start()

    def _on_current(self, session_id: str, _model: Any) -> None:
        if session_id == self._shown:
            return
        old, typed = self._shown, self._composer.toPlainText()
        self._timer.stop()
        if old and self._c.session_info(old) is not None:
            self._texts[old] = typed
            self._save(old)
        elif old:  # deleted: its draft went with it
            self._texts.pop(old, None)
        self._shown = session_id
        if not session_id:
            self._show("")
            return
        own = self.draft(session_id)
        if not old and typed.strip():
            # Typed while no conversation was shown (a first message on its way starts
            # one): it belongs to the conversation shown next, beside any draft it had.
            own = typed if not own.strip() or own == typed else f"{own}\n{typed}"
            self._texts[session_id] = own
            self._timer.start()
        self._show(own)

    def _show(self, text: str) -> None:
        composer = self._composer
        if composer.toPlainText() == text:
            return
        self._setting = True
        try:
            composer.setPlainText(text)
            composer.moveCursor(QTextCursor.MoveOperation.End)
        finally:
            self._setting = False

    def _message_stored(self, session_id: str, text: str) -> None:
        """A message left a conversation's draft: a draft not shown loses it too."""
        if session_id == self._shown:
            return  # the composer lets it go (`ConversationCommands`): typed, then saved
        draft = self._texts.get(session_id)
        if draft is None:
            return
        kept = draft.strip()
        if kept.startswith(text.strip()):
            self._texts[session_id] = kept[len(text.strip()) :].lstrip()
            self._save(session_id)

    # ------------------------------------------------------------------ writing

    def _save(self, session_id: str) -> None:
        if session_id and self._changed(session_id):
            self._c.spawn(self._write(session_id), "keep the draft")

    def _changed(self, session_id: str) -> bool:
        stored = str(self._c.conversations.metadata(session_id).get(DRAFT_KEY) or "")
        return self._texts.get(session_id, stored) != stored

    async def _write(self, session_id: str) -> None:
        if not self._changed(session_id) or self._c.session_info(session_id) is None:
            return
        text = self._texts.get(session_id, "")
        try:
            await self._c.conversations.update_metadata(session_id, {DRAFT_KEY: text or None})
        except ContinuoError as exc:  # the composer and this run still hold it
            log.warning("the draft of %s was not kept: %s", session_id, exc)
