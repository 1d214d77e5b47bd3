"""File › Back up…: copy the conversation file, consistently, while the window runs.

`BackupFlow` asks where to write ``Continuo backup <date>.db`` and has the engine copy the open
store online (`engine.storage.backup.backup_database`, on its own thread; requests go on
meanwhile) under a progress dialog whose Cancel leaves no file. The copy is then read back as a
restore would open it, and the report says how many conversations it holds. It is given the
store, nothing more.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from ._shared import Action, ArchiveUI, Outcome, aio

if TYPE_CHECKING:
    from engine import SQLiteSessionStorage

__all__ = ["BackupFlow", "backup_file_name"]


def backup_file_name(when: float | None = None) -> str:
    """The name a backup is offered: ``Continuo backup 2026-12-01 2300.db`` (local time)."""
    stamp = time.strftime("%Y-%m-%d %H%M", time.localtime(when))
    return f"Continuo backup {stamp}.db"


class BackupFlow(QObject):
    """Back up… of one window.

    Args:
        ui: the dialogs and the engine's work.
        storage: the conversation store now.
    """

    def __init__(self, ui: ArchiveUI, storage: Callable[[], SQLiteSessionStorage]) -> None:
        super().__init__(ui)
        self._ui = ui
        self._storage = storage

    async def run(self) -> None:
        from engine import backup_database, inspect_backup

        ui = self._ui
        path = await ui.choose(Action.BACKUP, ui.start_folder() / backup_file_name())
        if path is None:
            ui.dismissed(Action.BACKUP)
            return
        progress = ui.show_progress(self.tr("Backing up the conversations…"))
        result, error, cancelled = await ui.run(
            "back up", backup_database(self._storage(), path, progress=progress.set_progress)
        )
        if cancelled:
            ui.said(
                Action.BACKUP,
                Outcome.CANCELLED,
                self.tr("The backup was cancelled; no file was written."),
            )
            return
        summary = None
        if error is None and result is not None:
            # Read back from the file, what it holds: the copy opens as a restore opens it.
            summary, error, _ = await ui.run(
                "read the backup", aio().to_thread(inspect_backup, result)
            )
        if error is not None:
            text = self.tr("The conversations were not backed up.")
            ui.tell(Action.BACKUP, Outcome.FAILED, text, ui.sentence(error))
            return
        where = self.tr("The backup is the file {path}").format(path=result)
        if summary is None:  # the read-back was cancelled: the file is complete all the same
            ui.tell(Action.BACKUP, Outcome.DONE, self.tr("The conversations are backed up."), where)
            return
        count = ui.conversations(summary.conversations)
        text = self.tr("The conversations are backed up ({count}).").format(count=count)
        ui.tell(Action.BACKUP, Outcome.DONE, text, where)
