"""The File menu's archive actions: Export…, Import…, Back up… and Restore….

`ArchiveActions` owns the four actions (`install` puts them into the File menu) and runs one
flow at a time as a window task, the four actions disabled meanwhile. It is built with the
window's widgets, given only its parent widget; the window's controller, when it arrives, is
given as an `ArchiveHost` (`attach`), and each flow receives only the parts it needs. Until
then every action does nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Signal

from ._shared import ArchiveHost, ArchiveUI

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDialog, QMenu, QMessageBox, QWidget

    from engine import SQLiteSessionStorage

    from ._shared import ProgressDialog

__all__ = ["ArchiveActions"]


class ArchiveActions(QObject):
    """The File menu's Export…, Import…, Back up… and Restore… of one window.

    Tests drive the file dialogs through `choose_path`, and read `progress` (the dialog shown
    while an action runs), `dialog` (the export choices or the restore confirmation) and
    `report` (the message box that ends it).
    """

    # an action ended: (`Action`, `Outcome`, the text the person was shown)
    finished = Signal(str, str, str)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        from PySide6.QtGui import QAction

        self._parent = parent
        self.ui = ArchiveUI(parent)
        self.ui.finished.connect(self.finished)
        self.export_action = QAction(parent)
        self.import_action = QAction(parent)
        self.backup_action = QAction(parent)
        self.restore_action = QAction(parent)
        for act, name, slot in (
            (self.export_action, "exportAction", self.export),
            (self.import_action, "importAction", self.import_),
            (self.backup_action, "backupAction", self.back_up),
            (self.restore_action, "restoreAction", self.restore),
        ):
            act.setObjectName(name)
            act.triggered.connect(slot)
        self._host: ArchiveHost | None = None
        self._flows: dict[str, Callable[[], Coroutine[Any, Any, None]]] = {}
        self._flow: asyncio.Task[Any] | None = None  # the action running (one at a time)
        parent.installEventFilter(self)
        self.retranslate()

    def attach(self, host: ArchiveHost) -> None:
        """The window's controller arrived: the flows, each given what it needs."""
        from .backup_flow import BackupFlow
        from .export_flow import ExportFlow
        from .import_flow import ImportFlow
        from .restore_flow import RestoreFlow

        def storage() -> SQLiteSessionStorage:  # the store now: a restore replaces it
            return host.storage

        ui = self.ui
        ui.host = host
        self._host = host
        self._flows = {
            "export": ExportFlow(ui, storage, host.shown, host.provider_names).run,
            "import": ImportFlow(ui, storage, lambda: host.reload(reopen=False)).run,
            "backup": BackupFlow(ui, storage).run,
            "restore": RestoreFlow(ui, storage, host.replace_store).run,
        }

    # ------------------------------------------------------------------ what tests reach

    @property
    def choose_path(self) -> Callable[[str, Path], Path | None | Awaitable[Path | None]]:
        """The file dialog's seam (`ArchiveUI.choose_path`)."""
        return self.ui.choose_path

    @choose_path.setter
    def choose_path(
        self, choose: Callable[[str, Path], Path | None | Awaitable[Path | None]]
    ) -> None:
        self.ui.choose_path = choose

    @property
    def folder(self) -> Path | None:
        """Where the last file was chosen (the file dialog starts there)."""
        return self.ui.folder

    @folder.setter
    def folder(self, folder: Path | None) -> None:
        self.ui.folder = folder

    @property
    def progress(self) -> ProgressDialog | None:
        return self.ui.progress

    @property
    def report(self) -> QMessageBox | None:
        return self.ui.report

    @property
    def dialog(self) -> QDialog | None:
        return self.ui.dialog

    # ------------------------------------------------------------------ the menu

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        # The window is closing: a question still open is answered "no" at once, so that
        # closing does not wait for the action's task behind it.
        if watched is self._parent and event.type() == QEvent.Type.Close:
            self.ui.close_open_questions()
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
        return self._start("export")

    def import_(self) -> asyncio.Task[Any] | None:
        """Import…: a Continuo or ChatGPT export's conversations join the list (a task)."""
        return self._start("import")

    def back_up(self) -> asyncio.Task[Any] | None:
        """Back up…: copy the conversation file, consistently, while the window runs."""
        return self._start("backup")

    def restore(self) -> asyncio.Task[Any] | None:
        """Restore…: put a backup in place of the conversation file, after confirming."""
        return self._start("restore")

    def cancel(self) -> bool:
        """Cancel the running action's work (the progress dialog's Cancel)."""
        return self.ui.cancel()

    # ------------------------------------------------------------------ running

    def _start(self, name: str) -> asyncio.Task[Any] | None:
        host = self._host
        if host is None or not host.usable() or self.busy:
            if host is not None and self.busy:
                host.say(
                    self.tr("Wait for the export, import or backup under way to finish."), 5000
                )
            return None
        self._enable(False)
        self._flow = host.spawn(self._guarded(self._flows[name]()), f"archive: {name}")
        return self._flow

    async def _guarded(self, flow: Coroutine[Any, Any, None]) -> None:
        try:
            await flow
        finally:
            self.ui.close_progress()
            self._enable(True)

    def _enable(self, enabled: bool) -> None:
        for act in (
            self.export_action,
            self.import_action,
            self.backup_action,
            self.restore_action,
        ):
            act.setEnabled(enabled)
