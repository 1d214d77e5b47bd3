"""Esc from where the focus is: while a card of the shown conversation waits, Esc denies it.

The focus is wherever the person left it — most often in the composer, where Esc otherwise
stops the request (which would answer the call as not run and end the whole answer). While a
card waits, Esc anywhere in the window denies that card instead (with the reason typed in
its box, if any); a dialog or a menu over the window keeps its own Esc. The filter is on the
application only while a card of the shown conversation waits, so nothing else pays for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QWidget

from ..conversation.items import ApprovalChoice

if TYPE_CHECKING:
    from ..conversation.transcript_view import TranscriptView
    from .approvals import Approvals, PendingApproval

__all__ = ["EscapeDenies"]


class EscapeDenies(QObject):
    """Installed on the application while a card of the window's conversation waits.

    Args:
        window: the window whose Esc it takes (a dialog's or a menu's stays theirs).
        transcript: the shown conversation's rows (a card there denies with its reason).
        approvals: the questions waiting.
        shown: the shown conversation's id ("" for none).
    """

    def __init__(
        self,
        window: QWidget,
        transcript: TranscriptView,
        approvals: Approvals,
        shown: Callable[[], str],
    ) -> None:
        super().__init__(window)
        self._window = window
        self._transcript = transcript
        self._approvals = approvals
        self._shown = shown
        self._installed = False

    def update(self) -> None:
        """Follow whether a card of the shown conversation waits for the person."""
        sid = self._shown()
        wanted = bool(sid) and self._approvals.waiting(sid)
        app = QApplication.instance()
        if app is None or wanted == self._installed:
            return
        if wanted:
            app.installEventFilter(self)
        else:
            app.removeEventFilter(self)
        self._installed = wanted

    @property
    def active(self) -> bool:
        """Whether Esc denies now (a card of the shown conversation waits)."""
        return self._installed

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        kind = event.type()
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride):
            return False
        if not isinstance(event, QKeyEvent) or event.key() != Qt.Key.Key_Escape:
            return False
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        if not isinstance(watched, QWidget) or watched.window() is not self._window:
            return False  # a dialog, a menu or another window: its own Esc
        question = self._waiting()
        if question is None:
            return False
        if kind is QEvent.Type.ShortcutOverride:
            event.accept()  # no window shortcut takes it; the key press follows
            return True
        self._deny(question)
        return True

    def _waiting(self) -> PendingApproval | None:
        sid = self._shown()
        if not sid:
            return None
        return next(
            (q for q in self._approvals.pending() if q.session_id == sid and not q.answered),
            None,
        )

    def _deny(self, question: PendingApproval) -> None:
        # Through the card when it is shown, so the reason typed in its box goes with it.
        for view in self._transcript.views():
            item = getattr(view, "_item", None)
            if getattr(view, "waiting", False) and getattr(item, "approval", None) is question:
                view.deny_waiting()
                return
        question.answer(ApprovalChoice.DENY)
