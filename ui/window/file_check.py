"""The conversation file's full check, in the background, never before the list is shown.

Opening the file reads only what the list needs (`engine.storage.integrity`); reading every
page is this module's job, and it runs:

* after an unclean exit (the engine says when: a process that wrote to the file ended
  without closing it) — started once the conversation list has painted, on its own
  read-only connection in a worker thread, so the list, the transcript and the composer
  never wait for it;
* when the person asks (Help › Check the conversation file), or presses Try again on the
  notice a damaged file put up.

Damage is told as the window tells a damaged file at any time: the controller's storage
notice (`Controller.storage_failed`), naming the file, with Restore from a backup. A check
that passes afterwards takes that notice away. Closing the window stops a check where it is
(the next start checks again: the engine forgets an unclean exit only once a check passed).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from engine import SQLiteSessionStorage, StorageError

__all__ = ["FileCheck", "painted"]

log = logging.getLogger(__name__)

#: how long the check waits for the list to paint (a window that is not on screen: minimised,
#: another workspace, never paints)
_PAINT_WAIT = 1.0


class FileCheck(QObject):
    """Runs `SQLiteSessionStorage.check_integrity` as the window needs it."""

    #: a check began: (whether the person asked for it)
    started = Signal(bool)
    #: a check ended: (asked, the damage found or None when the file passed); not emitted
    #: for a check stopped before its end (the window closing)
    finished = Signal(bool, object)

    def __init__(
        self, storage: Callable[[], SQLiteSessionStorage], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._storage = storage  # the store now (a restore replaces it)
        #: called from the checking thread as a check begins and now and then (tests hold a
        #: check there)
        self.pause: Callable[[], None] | None = None
        self._running = False

    @property
    def running(self) -> bool:
        return self._running

    async def after_start(self, shown: QWidget | None = None) -> None:
        """Once `shown` (the conversation list) has painted, check the file if the engine
        says an unclean exit left it unchecked."""
        if shown is not None:
            await painted(shown)
        try:
            due = await self._storage().integrity_check_due()
        except StorageError as exc:  # the file cannot be used: its notice says so already
            log.info("no check after start: %s", exc)
            return
        if due:
            await self.run(asked=False)

    async def run(self, *, asked: bool) -> None:
        """Check the file now (nothing when a check is running already)."""
        if self._running:
            return
        self._running = True
        self.started.emit(asked)
        try:
            passed = await self._storage().check_integrity(pause=self.pause)
        except StorageError as exc:  # damaged, or unreadable: the storage notice says which
            log.warning("the conversation file failed its check: %s", exc)
            self.finished.emit(asked, exc)
            return
        finally:
            self._running = False
        if passed:
            self.finished.emit(asked, None)


class _PaintWatch(QObject):
    def __init__(self, widget: QWidget, done: asyncio.Future[None]) -> None:
        super().__init__(widget)
        self._done = done

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint and not self._done.done():
            # After this paint is done and on screen.
            QTimer.singleShot(0, self._set_done)
        return False

    def _set_done(self) -> None:
        if not self._done.done():
            self._done.set_result(None)


async def painted(widget: QWidget) -> None:
    """Return once `widget` has painted what it shows now (at most `_PAINT_WAIT` seconds;
    at once when it is not shown)."""
    if not widget.isVisible():
        return
    done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    watch = _PaintWatch(widget, done)
    widget.installEventFilter(watch)
    widget.update()
    try:
        await asyncio.wait_for(done, _PAINT_WAIT)
    except TimeoutError:
        pass
    finally:
        if shiboken6.isValid(widget):  # the window may have gone meanwhile
            widget.removeEventFilter(watch)
            watch.deleteLater()
