"""The File menu's archive actions: Export…, Import…, Back up… and Restore….

`ArchiveActions` owns the four actions (`install` puts them into the File menu) and runs each
as a controller task: the engine does the work on its own threads (`engine.archive`,
`engine.storage.backup`), a small progress dialog says how far it is and its Cancel button
cancels the work, and a message box then says what was done, or the engine's sentence for
what went wrong. Nothing here reads or writes a file on the GUI thread.

Restore swaps the conversation file under the running window, as a person expects of it
(no restart): the backup is checked first, read-only, so a file the engine refuses is refused
before anything stops; then requests stop (their partial answers are stored), the store
closes, `restore_database` puts the backup in place (the current file moved aside, never
deleted), a new store opens the restored file, and the list and the open conversation are
read from it.

File dialogs are reached through `choose_path` only, a seam the tests replace (a modal native
dialog cannot be driven offscreen). Every other dialog is real and opened with ``open()``:
none runs a nested event loop inside the qasync loop.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import re
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QDialog

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

    from .main_window import MainWindow

__all__ = ["ArchiveActions", "ExportDialog", "ProgressDialog", "backup_file_name"]

log = logging.getLogger(__name__)

# What `choose_path` is asked for: a file to write (export, backup) or to read.
SAVING = frozenset({"export", "backup"})

# An action's outcome, as `ArchiveActions.finished` says it.
DONE, FAILED, REFUSED, CANCELLED, DISMISSED = "done", "failed", "refused", "cancelled", "dismissed"

# A file name's characters no file system takes (and control characters).
_UNSAFE = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*]+')


def _aio() -> Any:
    # asyncio is imported on first use: this module is built with the window's first frame,
    # before the event loop and the engine are loaded (tests/ui/test_startup.py).
    import asyncio

    return asyncio


def backup_file_name(when: float | None = None) -> str:
    """The name a backup is offered: ``Continuo backup 2026-12-01 2300.db`` (local time)."""
    stamp = time.strftime("%Y-%m-%d %H%M", time.localtime(when))
    return f"Continuo backup {stamp}.db"


def _export_file_name(title: str | None, suffix: str, when: float | None = None) -> str:
    """A conversation's title as a file name, or ``Continuo export 2026-12-01 2300``."""
    name = _UNSAFE.sub(" ", title or "").strip(" .")[:80].strip()
    if not name:
        name = "Continuo export " + time.strftime("%Y-%m-%d %H%M", time.localtime(when))
    return name + suffix


class ArchiveActions(QObject):
    """The File menu's Export…, Import…, Back up… and Restore… of one window.

    One action runs at a time (the four are disabled meanwhile). Tests drive the file
    dialogs through `choose_path`, and read `progress` (the dialog shown while an action
    runs) and `report` (the message box that ends it).
    """

    # an action ended: (action: "export", "import", "backup", "restore"; outcome: `DONE`,
    # `FAILED`, `REFUSED` (the engine refused the file; nothing changed), `CANCELLED`,
    # `DISMISSED` (no file chosen, not confirmed); the text the person was shown)
    finished = Signal(str, str, str)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        from PySide6.QtGui import QAction

        self._window = window
        self.export_action = QAction(window)
        self.import_action = QAction(window)
        self.backup_action = QAction(window)
        self.restore_action = QAction(window)
        for act, name, slot in (
            (self.export_action, "exportAction", self.export),
            (self.import_action, "importAction", self.import_),
            (self.backup_action, "backupAction", self.back_up),
            (self.restore_action, "restoreAction", self.restore),
        ):
            act.setObjectName(name)
            act.triggered.connect(slot)
        # The seam for file dialogs: ``choose_path(purpose, suggested)`` returns the path
        # chosen (or None), directly or as an awaitable; purpose is "export", "import",
        # "backup" or "restore", suggested the file (or folder) to offer.
        self.choose_path: Callable[[str, Path], Path | None | Awaitable[Path | None]] = (
            self.ask_for_path
        )
        self.folder: Path | None = None  # where the last file was chosen
        self.progress: ProgressDialog | None = None
        self.report: QMessageBox | None = None
        self.dialog: QDialog | None = None  # the export choices or the restore confirmation
        self._flow: asyncio.Task[Any] | None = None  # the action running (one at a time)
        self._work: asyncio.Task[Any] | None = None  # its engine work, which Cancel cancels
        self._export_format = "markdown"  # the format chosen last (offered again)
        window.installEventFilter(self)
        self.retranslate()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        # The window is closing: a question still open is answered "no" at once, so that
        # closing does not wait for the action's task behind it.
        if watched is self._window and event.type() == QEvent.Type.Close:
            from PySide6.QtWidgets import QFileDialog

            for dialog in (self.dialog, self._window.findChild(QFileDialog, "archiveFileDialog")):
                if dialog is not None and dialog.isVisible():
                    dialog.reject()
        return False

    def install(self, menu: QMenu, before: QAction) -> None:
        """Put the actions into ``menu`` before ``before``, in two groups."""
        for act in (
            None,
            self.export_action,
            self.import_action,
            None,
            self.backup_action,
            self.restore_action,
            None,
        ):
            if act is None:
                menu.insertSeparator(before)
            else:
                menu.insertAction(before, act)

    def retranslate(self) -> None:
        self.export_action.setText(self.tr("&Export…"))
        self.export_action.setStatusTip(
            self.tr("Write conversations to a Markdown, JSON or HTML file")
        )
        self.import_action.setText(self.tr("&Import…"))
        self.import_action.setStatusTip(
            self.tr("Add the conversations of a Continuo or ChatGPT export")
        )
        self.backup_action.setText(self.tr("&Back up…"))
        self.backup_action.setStatusTip(self.tr("Copy every conversation into one backup file"))
        self.restore_action.setText(self.tr("&Restore from a backup…"))
        self.restore_action.setStatusTip(
            self.tr("Replace the conversations with a backup's; the current ones are kept aside")
        )

    @property
    def busy(self) -> bool:
        """An action is running."""
        return self._flow is not None and not self._flow.done()

    # ------------------------------------------------------------------ the four actions

    def export(self) -> asyncio.Task[Any] | None:
        """Export…: which conversations and which format, then the file (a task)."""
        return self._start("export", self._export())

    def import_(self) -> asyncio.Task[Any] | None:
        """Import…: a Continuo or ChatGPT export's conversations join the list (a task)."""
        return self._start("import", self._import())

    def back_up(self) -> asyncio.Task[Any] | None:
        """Back up…: copy the conversation file, consistently, while the window runs."""
        return self._start("backup", self._back_up())

    def restore(self) -> asyncio.Task[Any] | None:
        """Restore…: put a backup in place of the conversation file, after confirming."""
        return self._start("restore", self._restore())

    def cancel(self) -> bool:
        """Cancel the running action's work (the progress dialog's Cancel)."""
        work = self._work
        if work is None or work.done():
            return False
        work.cancel()
        return True

    # ------------------------------------------------------------------ running

    def _start(self, name: str, flow: Coroutine[Any, Any, None]) -> asyncio.Task[Any] | None:
        c = self._window.controller
        if not c.ready or c.closed or self.busy:
            flow.close()
            if self.busy:
                self._window.statusBar().showMessage(
                    self.tr("Wait for the export, import or backup under way to finish."), 5000
                )
            return None
        self._enable(False)
        self._flow = c.spawn(self._guarded(flow), f"archive: {name}")
        return self._flow

    async def _guarded(self, flow: Coroutine[Any, Any, None]) -> None:
        try:
            await flow
        finally:
            self._close_progress()
            self._work = None
            self._enable(True)

    def _enable(self, enabled: bool) -> None:
        for act in (
            self.export_action,
            self.import_action,
            self.backup_action,
            self.restore_action,
        ):
            act.setEnabled(enabled)

    async def _run(
        self, name: str, work: Coroutine[Any, Any, Any]
    ) -> tuple[Any, BaseException | None, bool]:
        """Run the engine's ``work`` as an owned task that Cancel stops.

        Returns (its result, the error the engine raised or None, whether it was cancelled).
        The engine's errors are returned, not raised: the controller would take a failure of
        an export's file for a failure of the conversation file.
        """
        from engine import ContinuoError

        async def guarded() -> tuple[Any, BaseException | None]:
            try:
                return await work, None
            except (ContinuoError, OSError, ValueError) as exc:
                return None, exc

        task = self._window.controller.spawn(guarded(), name)
        self._work = task
        try:
            await _aio().wait({task})
        except _aio().CancelledError:  # the window is closing: the work stops with it
            task.cancel()
            while not task.done():
                with contextlib.suppress(_aio().CancelledError):
                    await _aio().wait({task})
            raise
        finally:
            self._work = None
        if task.cancelled():
            return None, None, True
        result, error = task.result()
        return result, error, False

    async def _choose(self, purpose: str, suggested: Path) -> Path | None:
        chosen = self.choose_path(purpose, suggested)
        if inspect.isawaitable(chosen):
            chosen = await chosen
        if not chosen:
            return None
        path = Path(chosen)
        self.folder = path.parent
        return path

    def _start_folder(self) -> Path:
        if self.folder is not None:
            return self.folder
        from PySide6.QtCore import QStandardPaths

        documents = QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.DocumentsLocation
        )
        return Path(documents) if documents else Path.home()

    async def ask_for_path(self, purpose: str, suggested: Path) -> Path | None:
        """The default `choose_path`: the platform's file dialog, opened with ``open()``."""
        from PySide6.QtWidgets import QFileDialog

        titles = {
            "export": self.tr("Export conversations"),
            "import": self.tr("Import conversations"),
            "backup": self.tr("Back up the conversations"),
            "restore": self.tr("Restore from a backup"),
        }
        filters = {
            "export": {
                ".md": self.tr("Markdown (*.md)"),
                ".json": self.tr("JSON (*.json)"),
                ".html": self.tr("HTML (*.html)"),
            }.get(suggested.suffix, self.tr("All files (*)")),
            "import": self.tr("Exports (*.json *.zip);;All files (*)"),
            "backup": self.tr("Continuo backups (*.db)"),
            "restore": self.tr("Continuo backups (*.db *.sqlite3);;All files (*)"),
        }
        dialog = QFileDialog(self._window, titles[purpose], str(suggested), filters[purpose])
        dialog.setObjectName("archiveFileDialog")
        if purpose in SAVING:
            dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
            dialog.setFileMode(QFileDialog.FileMode.AnyFile)
            dialog.setDefaultSuffix(suggested.suffix.lstrip("."))
            dialog.selectFile(suggested.name)
        else:
            dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        try:
            accepted = await _result_of(dialog)
            files = dialog.selectedFiles() if accepted else []
        finally:
            dialog.deleteLater()
        return Path(files[0]) if files else None

    # ------------------------------------------------------------------ back up

    async def _back_up(self) -> None:
        from engine.storage.backup import backup_database, inspect_backup

        c = self._window.controller
        path = await self._choose("backup", self._start_folder() / backup_file_name())
        if path is None:
            self.finished.emit("backup", DISMISSED, "")
            return
        progress = self._show_progress(self.tr("Backing up the conversations…"))
        result, error, cancelled = await self._run(
            "back up", backup_database(c.storage, path, progress=progress.set_progress)
        )
        if cancelled:
            self._said(
                "backup", CANCELLED, self.tr("The backup was cancelled; no file was written.")
            )
            return
        summary = None
        if error is None:
            # Read back from the file, what it holds: the copy opens as a restore opens it.
            summary, error, _ = await self._run(
                "read the backup", _aio().to_thread(inspect_backup, result)
            )
        if error is not None:
            text = self.tr("The conversations were not backed up.")
            self._tell("backup", FAILED, text, self._sentence(error))
            return
        where = self.tr("The backup is the file {path}").format(path=result)
        if summary is None:  # the read-back was cancelled: the file is complete all the same
            self._tell("backup", DONE, self.tr("The conversations are backed up."), where)
            return
        count = self.conversations(summary.conversations)
        text = self.tr("The conversations are backed up ({count}).").format(count=count)
        self._tell("backup", DONE, text, where)

    # ------------------------------------------------------------------ restore

    async def _restore(self) -> None:
        from engine.storage.backup import inspect_backup

        c = self._window.controller
        data_path = Path(c.storage.path)
        path = await self._choose("restore", self._start_folder())
        if path is None:
            self.finished.emit("restore", DISMISSED, "")
            return

        def check() -> Any:
            if path.exists() and data_path.exists() and path.samefile(data_path):
                raise ValueError("the conversation file itself")
            return inspect_backup(path)

        # Read-only, before anything stops: a file the engine refuses changes nothing.
        summary, error, cancelled = await self._run("check the backup", _aio().to_thread(check))
        if cancelled:
            self.finished.emit("restore", DISMISSED, "")
            return
        if error is not None:
            self._tell(
                "restore",
                REFUSED,
                self.tr("The backup was not restored; your conversations are as they were."),
                self._sentence(error, same_file=data_path),
            )
            return
        if not await self._confirm_restore(path, data_path, summary):
            self.finished.emit("restore", DISMISSED, "")
            return
        self._show_progress(self.tr("Restoring the backup…"), cancellable=False, modal=True)
        aside, error = await self._swap(data_path, path)
        if error is not None:
            from engine import CorruptDatabaseError, NewerSchemaError

            refused = isinstance(error, CorruptDatabaseError | NewerSchemaError | ValueError)
            self._tell(
                "restore",
                REFUSED if refused else FAILED,
                self.tr("The backup was not restored; your conversations are as they were."),
                self._sentence(error, same_file=data_path),
            )
            return
        count = self.conversations(summary.conversations)
        before = (
            self.tr("The conversations you had before are kept in {path}").format(path=aside)
            if aside is not None
            else ""
        )
        self._tell(
            "restore",
            DONE,
            self.tr("The backup is restored ({count}).").format(count=count),
            before,
        )

    async def _confirm_restore(self, path: Path, data_path: Path, summary: Any) -> bool:
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QMessageBox

        count = self.conversations(summary.conversations)
        when = (
            time.strftime("%Y-%m-%d %H:%M", time.localtime(summary.newest))
            if summary.newest is not None
            else self.tr("never")
        )
        box = QMessageBox(self._window)
        box.setObjectName("restoreConfirm")
        box.setIcon(QMessageBox.Icon.Question)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setWindowTitle(self.tr("Restore from a backup"))
        box.setText(
            self.tr(
                "Replace your conversations with the backup's ({count}, last changed {when})?"
            ).format(count=count, when=when)
        )
        box.setInformativeText(
            self.tr(
                "Nothing is deleted: the current conversation file is kept in {folder} as "
                "{name}.before-restore-<date and time>. Answers being written now are stopped "
                "and saved first.\n\nBackup: {path}"
            ).format(folder=data_path.parent, name=data_path.name, path=path)
        )
        box.setStandardButtons(QMessageBox.StandardButton.Cancel)
        restore = box.addButton(self.tr("Restore"), QMessageBox.ButtonRole.DestructiveRole)
        restore.setObjectName("restoreConfirmButton")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        self.dialog = box
        try:
            await _result_of(box)
            return box.clickedButton() is restore
        finally:
            self.dialog = None
            box.deleteLater()

    async def _swap(self, data_path: Path, backup: Path) -> tuple[Path | None, Any]:
        """Close the store, restore, open the restored file; (where the old one went, error).

        The store is opened again whatever happened, even when the window is closing (its
        close then closes the new store): a restore that began always finishes.
        """
        from engine import ContinuoError, SQLiteSessionExtension, SQLiteSessionStorage, finish
        from engine.storage.backup import restore_database

        c = self._window.controller
        running = [t for t in c.requests.running.values() if not t.done()]
        c.requests.stop_all()  # each stored what had arrived of its answer
        if running:
            await _aio().wait(running)
        old = c.storage
        aside: Path | None = None
        error: BaseException | None = None
        try:
            try:
                await c.extension.close()  # its leases; the store is the controller's
            finally:
                await old.close()
            restoring = _aio().to_thread(restore_database, data_path, backup)
            try:
                # A restore that began runs to its end; cancelled (the window closing),
                # its outcome is not waited for, so the cancellation is what is raised.
                aside = await finish(restoring, discard_on_cancel=True)
            except (ContinuoError, OSError, ValueError) as exc:
                error = exc
        finally:
            storage = SQLiteSessionStorage(
                old.path,
                synchronous=old.synchronous,
                lease_stale_after=old.lease_stale_after,
                heartbeat_interval=old.heartbeat_interval,
                lease_host=old.lease_host,
            )
            storage.on_migration_progress = old.on_migration_progress
            c.storage = storage
            c.extension = SQLiteSessionExtension(storage)
        await self._reload_list()
        return aside, error

    async def _reload_list(self, *, reopen: bool = True) -> None:
        """Read the list from the store again; with ``reopen``, show the open conversation
        from it too (the first one when it is gone)."""
        from engine import StorageError

        from . import resume_marks

        c = self._window.controller
        try:
            sessions = await c.storage.list_sessions()
        except StorageError as exc:
            if not reopen:  # the list stays as it was; the failure is said until it works
                c.storage_failed(exc)
                return
            c.storage_failed(exc, at_start=True)  # the restored file cannot be used: a page
            sessions = []
        else:
            c.storage_failed(None)
        c.sessions.set_sessions(sessions)
        c.spawn(resume_marks.scan(c), "resume marks")
        if self._window.search is not None:  # hits of the file as it was are stale
            self._window.search.refresh()
        if not reopen:
            self._window._select_in_list(c.current or "")
            return
        previous = c.current
        ids = [s.id for s in sessions]
        target = previous if previous in ids else (ids[0] if ids else None)
        if target is not None:
            await c.open_session(target)
        else:
            c.conversations.current = None
            c.currentChanged.emit("", None)
            c.resumeChanged.emit("", None, "")
            c.errorChanged.emit("", "", "", "")
        if previous and previous != target:
            c.conversations.forget_unless_shown(previous)
        self._window._select_in_list(c.current or "")

    # ------------------------------------------------------------------ export

    async def _export(self) -> None:
        from engine.archive.export import ExportFormat, export_conversations

        from .models.sessions import session_title

        c = self._window.controller
        sid = c.current
        dialog = ExportDialog(self._window, session_title(c.sessions.info(sid)) if sid else None)
        dialog.choose_format(self._export_format)
        self.dialog = dialog
        try:
            accepted = await _result_of(dialog)
            only_this, fmt = dialog.only_this(), dialog.chosen_format()
        finally:
            self.dialog = None
            dialog.deleteLater()
        if not accepted:
            self.finished.emit("export", DISMISSED, "")
            return
        self._export_format = fmt
        kind = ExportFormat(fmt)
        title = session_title(c.sessions.info(sid)) if only_this and sid else None
        path = await self._choose(
            "export", self._start_folder() / _export_file_name(title, kind.suffix)
        )
        if path is None:
            self.finished.emit("export", DISMISSED, "")
            return
        progress = self._show_progress(self.tr("Exporting the conversations…"))
        ids = [sid] if only_this and sid else None
        report, error, cancelled = await self._run(
            "export",
            export_conversations(c.storage, path, kind, ids, progress=progress.set_progress),
        )
        if cancelled:
            self._said(
                "export", CANCELLED, self.tr("The export was cancelled; no file was written.")
            )
            return
        if error is not None:
            text = self.tr("The conversations were not exported.")
            self._tell("export", FAILED, text, self._sentence(error))
            return
        count = self.conversations(report.conversations)
        messages = self.messages(report.messages)
        self._tell(
            "export",
            DONE,
            self.tr("Exported {count}, {messages}.").format(count=count, messages=messages),
            self.tr("The export is the file {path}").format(path=report.path),
        )

    # ------------------------------------------------------------------ import

    async def _import(self) -> None:
        from engine.archive.importer import import_file

        c = self._window.controller
        path = await self._choose("import", self._start_folder())
        if path is None:
            self.finished.emit("import", DISMISSED, "")
            return
        progress = self._show_progress(self.tr("Importing the conversations…"))
        report, error, cancelled = await self._run(
            "import", import_file(c.storage, path, progress=progress.set_progress)
        )
        # What was stored stays stored (each conversation is imported whole or not at all):
        # the list shows it, after a cancel or a failure too.
        await self._reload_list(reopen=False)
        if cancelled:
            self._said(
                "import",
                CANCELLED,
                self.tr("The import was cancelled; the conversations imported before it stay."),
            )
            return
        if error is not None:
            text = self.tr("The conversations were not imported.")
            self._tell("import", FAILED, text, self._sentence(error))
            return
        self._tell("import", DONE, *self.import_text(report))

    def import_text(self, report: Any) -> tuple[str, str]:
        """What an import says: what was added, then what was not, and why."""
        imported, present, skipped = report.imported, report.already_present, report.skipped
        placeholders, messages = report.placeholders, report.messages
        if imported:
            head = self.tr("Imported {count}, {messages}.").format(
                count=self.conversations(imported),
                messages=self.messages(messages),
            )
        else:
            head = self.tr("No conversation was imported.")
        lines = []
        if present:
            lines.append(
                self.tr("One conversation was already here.")
                if present == 1
                else self.tr("{count} conversations were already here.").format(count=present)
            )
        if placeholders:
            lines.append(
                self.tr(
                    "Pictures or attachments that could not be imported: {count}. A note "
                    "stands in the place of each."
                ).format(count=placeholders)
            )
        if skipped:
            lines.append(
                self.tr("Conversations that could not be imported: {count}").format(
                    count=len(skipped)
                )
            )
            untitled = self.tr("(untitled)")  # not inside the f-string: lupdate would miss it
            for title, reason in skipped[:10]:
                lines.append(f"• {title or untitled}: {reason}")
            if len(skipped) > 10:
                lines.append(self.tr("… and {count} more.").format(count=len(skipped) - 10))
        return head, "\n".join(lines)

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

    def _show_progress(
        self, text: str, *, cancellable: bool = True, modal: bool = False
    ) -> ProgressDialog:
        self._close_progress()
        dialog = ProgressDialog(self._window, text, cancellable=cancellable)
        dialog.cancelRequested.connect(self.cancel)
        if modal:  # the store is swapped meanwhile: nothing else may be asked of it
            from PySide6.QtCore import Qt

            dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.progress = dialog
        dialog.show_soon()
        return dialog

    def _close_progress(self) -> None:
        dialog, self.progress = self.progress, None
        if dialog is not None:
            dialog.cancelRequested.disconnect(self.cancel)
            dialog.done_with()

    def _sentence(self, error: BaseException, same_file: Path | None = None) -> str:
        """The engine's sentence for ``error``, in the window's language."""
        from engine import ContinuoError

        from .errors import describe_error

        if isinstance(error, ValueError) and same_file is not None:
            return self.tr(
                "{path} is the conversation file in use, not a backup. Choose a backup file."
            ).format(path=same_file)
        if isinstance(error, ContinuoError):
            return describe_error(error, self._window.controller.language)[0]
        return str(error)

    def _said(self, action: str, outcome: str, text: str) -> None:
        """Say ``text`` in the status bar (a cancel needs no box to close)."""
        self._close_progress()
        self._window.statusBar().showMessage(text, 8000)
        self.finished.emit(action, outcome, text)

    def _tell(self, action: str, outcome: str, text: str, details: str = "") -> None:
        """End an action with a message box saying ``text`` and ``details``."""
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QMessageBox

        self._close_progress()
        if self.report is not None:
            self.report.done(0)
        box = QMessageBox(self._window)
        box.setObjectName("archiveReport")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setIcon(QMessageBox.Icon.Information if outcome == DONE else QMessageBox.Icon.Warning)
        box.setWindowTitle(
            {
                "export": self.tr("Export"),
                "import": self.tr("Import"),
                "backup": self.tr("Back up"),
                "restore": self.tr("Restore"),
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


async def _result_of(dialog: QDialog) -> int:
    """Open ``dialog`` with ``open()`` and wait for its result (0 when it went away)."""
    done: asyncio.Future[int] = _aio().get_running_loop().create_future()

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
        from PySide6.QtWidgets import QDialogButtonBox, QLabel, QProgressBar, QVBoxLayout

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
        self.buttons = QDialogButtonBox(self)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setObjectName("archiveCancelButton")
        self.cancel_button.clicked.connect(self._cancel)
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


class ExportDialog(QDialog):
    """Export's choices: this conversation or all, and the format; objectName
    ``exportDialog``."""

    def __init__(self, parent: QWidget, current_title: str | None) -> None:
        from PySide6.QtWidgets import (
            QButtonGroup,
            QComboBox,
            QDialogButtonBox,
            QFormLayout,
            QLabel,
            QRadioButton,
            QVBoxLayout,
        )

        super().__init__(parent)
        self.setObjectName("exportDialog")
        self.setWindowTitle(self.tr("Export conversations"))
        layout = QVBoxLayout(self)
        self.this_conversation = QRadioButton(self)
        self.this_conversation.setObjectName("exportThisConversation")
        self.this_conversation.setText(
            self.tr("This conversation: {title}").format(title=current_title)
            if current_title
            else self.tr("This conversation")
        )
        self.this_conversation.setEnabled(current_title is not None)
        self.all_conversations = QRadioButton(self.tr("All conversations"), self)
        self.all_conversations.setObjectName("exportAllConversations")
        group = QButtonGroup(self)
        group.addButton(self.this_conversation)
        group.addButton(self.all_conversations)
        (
            self.this_conversation if current_title is not None else self.all_conversations
        ).setChecked(True)
        self.format = QComboBox(self)
        self.format.setObjectName("exportFormat")
        for text, value in (
            (self.tr("Markdown, to read"), "markdown"),
            (self.tr("JSON, to keep or import again (everything, every version)"), "json"),
            (self.tr("HTML, one page to share"), "html"),
        ):
            self.format.addItem(text, value)
        form = QFormLayout()
        form.addRow(self.tr("Format:"), self.format)
        layout.addWidget(QLabel(self.tr("Export:"), self))
        layout.addWidget(self.this_conversation)
        layout.addWidget(self.all_conversations)
        layout.addLayout(form)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText(self.tr("Export…"))
        ok.setObjectName("exportOkButton")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def choose_format(self, value: str) -> None:
        index = self.format.findData(value)
        if index >= 0:
            self.format.setCurrentIndex(index)

    def chosen_format(self) -> str:
        return str(self.format.currentData())

    def only_this(self) -> bool:
        return bool(self.this_conversation.isChecked())
