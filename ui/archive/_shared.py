"""What the four archive flows share: what the window gives them, and the dialogs they show.

`ArchiveHost` is everything the window gives (`ui.archive.host.WindowArchiveHost` builds it
over the controller): the store, owned tasks, the status bar, the engine's language, the open
conversation, reading the list again and replacing the store. The flows are given only the
parts of it each needs.

`ArchiveUI` is the plumbing every flow uses: the file dialog (through the `choose_path` seam
the tests replace: a modal native dialog cannot be driven offscreen), the progress dialog
whose Cancel cancels the engine's work (`ArchiveUI.run`), the question or choices open now
(`dialog`), and the message box that ends an action (`report`), or a status-bar line for a
cancel. Every dialog opens with ``open()``: none runs a nested event loop inside the qasync
loop. Nothing here reads or writes a file on the GUI thread.

This module is built with the window's widgets, before the event loop and the engine load
(tests/ui/test_startup.py): asyncio and the engine are imported on first use.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable, Coroutine
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtWidgets import QMessageBox, QWidget

    from engine import SQLiteSessionStorage

__all__ = [
    "Action",
    "ArchiveHost",
    "ArchiveUI",
    "Outcome",
    "ProgressDialog",
    "aio",
    "result_of",
]

T = TypeVar("T")


class Action(StrEnum):
    """The four archive actions (what `ArchiveActions.finished` names first)."""

    EXPORT = "export"
    IMPORT = "import"
    BACKUP = "backup"
    RESTORE = "restore"


class Outcome(StrEnum):
    """How an action ended (`ArchiveActions.finished`)."""

    DONE = "done"
    FAILED = "failed"
    REFUSED = "refused"  # the engine refused the file; nothing changed
    CANCELLED = "cancelled"
    DISMISSED = "dismissed"  # no file chosen, not confirmed


# What `ArchiveUI.choose_path` is asked for: a file to write, or one to read.
SAVING = frozenset({Action.EXPORT, Action.BACKUP})


def aio() -> Any:
    """asyncio, imported on first use (not with the window's first frame)."""
    import asyncio

    return asyncio


class ArchiveHost(Protocol):
    """What the window gives the archive actions."""

    @property
    def storage(self) -> SQLiteSessionStorage:
        """The conversation store now (a restore replaces it)."""
        ...

    @property
    def language(self) -> str:
        """The language of the engine's sentences ("en", "zh_CN")."""
        ...

    def usable(self) -> bool:
        """The window is ready (its store is open) and not closing."""
        ...

    def spawn(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        """Run ``coro`` as a task the window owns (waited for when it closes)."""
        ...

    def say(self, text: str, msecs: int) -> None:
        """Show ``text`` in the status bar for ``msecs``."""
        ...

    def shown(self) -> tuple[str, str] | None:
        """The open conversation: (its id, its title as shown), or None."""
        ...

    def provider_names(self) -> dict[str, str]:
        """The name the person gave each provider set up, by its id (exports say names)."""
        ...

    async def reload(self, *, reopen: bool) -> None:
        """Read the conversation list from the store again; with ``reopen``, show the open
        conversation from it too (the first one when it is gone)."""
        ...

    async def replace_store(self, replace: Callable[[], Path | None]) -> Path | None:
        """Stop the requests (their partial answers stored), close the store, run the blocking
        ``replace`` in a worker thread to its end, open the store again whatever happened and
        read the list again; return what ``replace`` returned, or raise its error."""
        ...


class ArchiveUI(QObject):
    """The dialogs and reports of the running action, and its engine work (module docstring).

    Tests drive the file dialogs through `choose_path`, and read `progress` (the dialog shown
    while an action runs), `dialog` (the choices or confirmation open) and `report` (the
    message box that ends it).
    """

    # an action ended: (`Action`, `Outcome`, the text the person was shown)
    finished = Signal(str, str, str)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.parent_widget = parent
        self.host: ArchiveHost | None = None  # given when the window's controller arrives
        # The seam for file dialogs: ``choose_path(purpose, suggested)`` returns the path
        # chosen (or None), directly or as an awaitable; purpose is an `Action`, suggested
        # the file (or folder) to offer.
        self.choose_path: Callable[[str, Path], Path | None | Awaitable[Path | None]] = (
            self.ask_for_path
        )
        self.folder: Path | None = None  # where the last file was chosen
        self.progress: ProgressDialog | None = None
        self.report: QMessageBox | None = None
        self.dialog: QDialog | None = None  # the export choices or the restore confirmation
        self._work: asyncio.Task[Any] | None = None  # the engine work Cancel cancels

    def _host(self) -> ArchiveHost:
        if self.host is None:
            raise RuntimeError("the archive actions run only once the window has its controller")
        return self.host

    # ------------------------------------------------------------------ the engine's work

    async def run(
        self, name: str, work: Coroutine[Any, Any, T]
    ) -> tuple[T | None, BaseException | None, bool]:
        """Run the engine's ``work`` as an owned task that Cancel stops.

        Returns (its result, the error the engine raised or None, whether it was cancelled).
        The engine's errors are returned, not raised: the controller would take a failure of
        an export's file for a failure of the conversation file.
        """
        from engine import ContinuoError

        async def guarded() -> tuple[T | None, BaseException | None]:
            try:
                return await work, None
            except (ContinuoError, OSError, ValueError) as exc:
                return None, exc

        task = self._host().spawn(guarded(), name)
        self._work = task
        try:
            await aio().wait({task})
        except aio().CancelledError:  # the window is closing: the work stops with it
            task.cancel()
            while not task.done():
                with contextlib.suppress(aio().CancelledError):
                    await aio().wait({task})
            raise
        finally:
            self._work = None
        if task.cancelled():
            return None, None, True
        result, error = task.result()
        return result, error, False

    def cancel(self) -> bool:
        """Cancel the running action's work (the progress dialog's Cancel)."""
        work = self._work
        if work is None or work.done():
            return False
        work.cancel()
        return True

    # ------------------------------------------------------------------ files

    async def choose(self, purpose: Action, suggested: Path) -> Path | None:
        """The file the person chose for ``purpose`` (`choose_path`), or None."""
        chosen = self.choose_path(purpose, suggested)
        if inspect.isawaitable(chosen):
            chosen = await chosen
        if not chosen:
            return None
        from ..common.file_dialogs import remember

        path = Path(chosen)
        self.folder = path.parent
        remember(path)
        return path

    def start_folder(self) -> Path:
        """Where the file dialog starts: the last folder chosen (here, or in another of the
        window's file dialogs), else Documents, else home (`ui.common.file_dialogs`)."""
        from ..common.file_dialogs import start_folder

        if self.folder is not None and self.folder.is_dir():
            return self.folder
        return start_folder()

    async def ask_for_path(self, purpose: str, suggested: Path) -> Path | None:
        """The default `choose_path`: the platform's file dialog, opened with ``open()``."""
        from PySide6.QtWidgets import QFileDialog

        titles = {
            Action.EXPORT: self.tr("Export conversations"),
            Action.IMPORT: self.tr("Import conversations"),
            Action.BACKUP: self.tr("Back up the conversations"),
            Action.RESTORE: self.tr("Restore from a backup"),
        }
        kinds = {
            ".md": self.tr("Markdown (*.md)"),
            ".json": self.tr("JSON (*.json)"),
            ".html": self.tr("HTML (*.html)"),
        }
        filters = {
            Action.EXPORT: ";;".join(kinds.values()),
            Action.IMPORT: self.tr("Exports (*.json *.zip);;All files (*)"),
            Action.BACKUP: self.tr("Continuo backups (*.db)"),
            Action.RESTORE: self.tr("Continuo backups (*.db *.sqlite3);;All files (*)"),
        }
        action = Action(purpose)
        dialog = QFileDialog(self.parent_widget, titles[action], str(suggested), filters[action])
        dialog.setObjectName("archiveFileDialog")
        if action in SAVING:
            dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
            dialog.setFileMode(QFileDialog.FileMode.AnyFile)
            dialog.setDefaultSuffix(suggested.suffix.lstrip("."))
            if action is Action.EXPORT and suggested.suffix in kinds:
                # The format chosen is the filter shown; another filter chosen in the dialog
                # gives a name typed without an extension that filter's extension.
                dialog.selectNameFilter(kinds[suggested.suffix])
                by_filter = {text: suffix for suffix, text in kinds.items()}
                dialog.filterSelected.connect(
                    lambda text: dialog.setDefaultSuffix(by_filter.get(text, "").lstrip("."))
                )
            dialog.selectFile(suggested.name)
        else:
            dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        try:
            accepted = await result_of(dialog)
            files = dialog.selectedFiles() if accepted else []
        finally:
            dialog.deleteLater()
        return Path(files[0]) if files else None

    async def ask(self, dialog: QDialog) -> int:
        """Open ``dialog`` (the choices or a confirmation) as `dialog`; its result."""
        self.dialog = dialog
        try:
            return await result_of(dialog)
        finally:
            self.dialog = None

    def close_open_questions(self) -> None:
        """Answer "no" to a question or file dialog still open (the window is closing)."""
        from PySide6.QtWidgets import QFileDialog

        chooser = self.parent_widget.findChild(QFileDialog, "archiveFileDialog")
        for dialog in (self.dialog, chooser):
            if dialog is not None and dialog.isVisible():
                dialog.reject()

    # ------------------------------------------------------------------ what is shown

    def conversations(self, count: int) -> str:
        """The count of conversations in words (Qt's plural forms would need an English
        catalog; the window has none)."""
        if count == 1:
            return self.tr("1 conversation")
        return self.tr("{count} conversations").format(count=count)

    def messages(self, count: int) -> str:
        if count == 1:
            return self.tr("1 message")
        return self.tr("{count} messages").format(count=count)

    def show_progress(
        self, text: str, *, cancellable: bool = True, modal: bool = False
    ) -> ProgressDialog:
        """Show (soon) what the action has done so far, with Cancel when ``cancellable``."""
        self.close_progress()
        dialog = ProgressDialog(self.parent_widget, text, cancellable=cancellable)
        dialog.cancelRequested.connect(self.cancel)
        if modal:  # the store is swapped meanwhile: nothing else may be asked of it
            from PySide6.QtCore import Qt

            dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.progress = dialog
        dialog.show_soon()
        return dialog

    def close_progress(self) -> None:
        dialog, self.progress = self.progress, None
        if dialog is not None:
            dialog.cancelRequested.disconnect(self.cancel)
            dialog.done_with()

    def sentence(self, error: BaseException, same_file: Path | None = None) -> str:
        """The engine's sentence for ``error``, in the window's language."""
        from engine import ContinuoError

        from ..common.errors import describe_error

        if isinstance(error, ValueError) and same_file is not None:
            return self.tr(
                "{path} is the conversation file in use, not a backup. Choose a backup file."
            ).format(path=same_file)
        if isinstance(error, ContinuoError):
            return describe_error(error, self._host().language)[0]
        return str(error)

    def dismissed(self, action: Action) -> None:
        """The action ended before it began (no file chosen, not confirmed)."""
        self.finished.emit(action, Outcome.DISMISSED, "")

    def said(self, action: Action, outcome: Outcome, text: str) -> None:
        """Say ``text`` in the status bar (a cancel needs no box to close)."""
        self.close_progress()
        self._host().say(text, 8000)
        self.finished.emit(action, outcome, text)

    def tell(self, action: Action, outcome: Outcome, text: str, details: str = "") -> None:
        """End an action with a message box saying ``text`` and ``details``."""
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QMessageBox

        self.close_progress()
        if self.report is not None:
            self.report.done(0)
        box = QMessageBox(self.parent_widget)
        box.setObjectName("archiveReport")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setIcon(
            QMessageBox.Icon.Information if outcome is Outcome.DONE else QMessageBox.Icon.Warning
        )
        box.setWindowTitle(
            {
                Action.EXPORT: self.tr("Export"),
                Action.IMPORT: self.tr("Import"),
                Action.BACKUP: self.tr("Back up"),
                Action.RESTORE: self.tr("Restore"),
            }[action]
        )
        box.setText(text)
        box.setInformativeText(details)
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        def forget(_result: int) -> None:
            if self.report is box:
                self.report = None
            box.deleteLater()

        box.finished.connect(forget)
        self.report = box
        box.open()
        self.finished.emit(action, outcome, "\n".join(t for t in (text, details) if t))


async def result_of(dialog: QDialog) -> int:
    """Open ``dialog`` with ``open()`` and wait for its result (0 when it went away)."""
    done: asyncio.Future[int] = aio().get_running_loop().create_future()

    def finish(result: int = 0) -> None:
        if not done.done():
            done.set_result(result)

    dialog.finished.connect(finish)
    dialog.destroyed.connect(lambda *_: finish(0))
    dialog.open()
    return await done


class ProgressDialog(QDialog):
    """What an action has done so far, with Cancel; objectName ``archiveProgress``.

    Not a `QProgressDialog`: a modal one runs the event loop inside ``setValue``, which the
    qasync loop must never have run under one of its tasks.
    """

    cancelRequested = Signal()  # noqa: N815

    def __init__(self, parent: QWidget, text: str, *, cancellable: bool = True) -> None:
        from PySide6.QtCore import Qt, QTimer
        from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout

        from ..common.dialog_buttons import Standard, button_row

        super().__init__(parent)
        self.setObjectName("archiveProgress")
        self.setWindowTitle(text.rstrip("…."))
        layout = QVBoxLayout(self)
        self.label = QLabel(text, self)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.bar = QProgressBar(self)
        self.bar.setObjectName("archiveProgressBar")
        self.bar.setRange(0, 0)  # busy until the first count arrives
        self.bar.setMinimumWidth(320)
        # Cancel (like Esc) is `reject`, which asks the action to stop.
        self.buttons = button_row(self, {Standard.Cancel: "archiveCancelButton"})
        self.cancel_button = self.buttons.button(Standard.Cancel)
        self.cancel_button.setVisible(cancellable)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        layout.addWidget(self.buttons)
        self._cancellable = cancellable
        self._over = False
        # Shown after a moment only: a quick action does not flash a dialog.
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(300)
        self._timer.timeout.connect(self._appear)

    def show_soon(self) -> None:
        """Show the dialog unless the action is over within a moment (a modal one at once)."""
        from PySide6.QtCore import Qt

        if self.windowModality() != Qt.WindowModality.NonModal:
            self._appear()
        else:
            self._timer.start()

    def _appear(self) -> None:
        if not self._over:
            self.show()

    def set_progress(self, done: int, total: int) -> None:
        """``done`` of ``total`` (pages, messages) so far."""
        if self._over:
            return
        top = 2**31 - 1
        total, done = min(max(total, 1), top), min(max(done, 0), top)
        if self.bar.maximum() != total:
            self.bar.setRange(0, total)
        self.bar.setValue(min(done, total))

    def _cancel(self) -> None:
        if self._cancellable and not self._over:
            self.cancel_button.setEnabled(False)
            self.label.setText(self.tr("Cancelling…"))
            self.cancelRequested.emit()

    def reject(self) -> None:  # Esc, the title bar's close: Cancel
        self._cancel()

    def done_with(self) -> None:
        """The action is over: close and delete the dialog."""
        self._over = True
        self._timer.stop()
        self.hide()
        self.deleteLater()
