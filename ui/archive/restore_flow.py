"""File › Restore from a backup…: put a backup in place of the conversation file.

Restore swaps the conversation file under the running window, as a person expects of it (no
restart). `RestoreFlow` asks for the backup and checks it first, read-only
(`engine.storage.backup.inspect_backup`), so a file the engine refuses (damaged, from a newer
Continuo, the conversation file itself, no Continuo backup at all: said as such) is refused
before anything stops. Then it asks (``restoreConfirm``: how many conversations, last
changed when, where the current file is kept), and has the host replace the store: requests
stop (their partial answers are stored), the store closes, `restore_database` puts the backup
in place (the current file moved aside, never deleted), a new store opens the restored file,
and the list and the open conversation are read from it. It is given the store and the host's
way to replace it, nothing more.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from ._shared import Action, ArchiveUI, Outcome, aio

if TYPE_CHECKING:
    from engine import BackupSummary, SQLiteSessionStorage

__all__ = ["RestoreFlow"]

ReplaceStore = Callable[[Callable[[], Path | None]], Awaitable[Path | None]]


class RestoreFlow(QObject):
    """Restore… of one window.

    Args:
        ui: the dialogs and the engine's work.
        storage: the conversation store now (its file is what is replaced).
        replace_store: `ui.archive.ArchiveHost.replace_store`.
    """

    def __init__(
        self,
        ui: ArchiveUI,
        storage: Callable[[], SQLiteSessionStorage],
        replace_store: ReplaceStore,
    ) -> None:
        super().__init__(ui)
        self._ui = ui
        self._storage = storage
        self._replace_store = replace_store

    async def run(self) -> None:
        from engine import inspect_backup

        ui = self._ui
        data_path = Path(self._storage().path)
        path = await ui.choose(Action.RESTORE, ui.start_folder())
        if path is None:
            ui.dismissed(Action.RESTORE)
            return

        def check() -> BackupSummary:
            if path.exists() and data_path.exists() and path.samefile(data_path):
                raise ValueError("the conversation file itself")
            return inspect_backup(path)

        # Read-only, before anything stops: a file the engine refuses changes nothing.
        summary, error, cancelled = await ui.run("check the backup", aio().to_thread(check))
        if cancelled:
            ui.dismissed(Action.RESTORE)
            return
        if error is not None or summary is None:
            ui.tell(
                Action.RESTORE,
                Outcome.REFUSED,
                self._refused(error),
                ui.sentence(error, same_file=data_path) if error else "",
            )
            return
        if not await self._confirm(path, data_path, summary):
            ui.dismissed(Action.RESTORE)
            return
        ui.show_progress(self.tr("Restoring the backup…"), cancellable=False, modal=True)
        aside, error = await self._swap(data_path, path)
        if error is not None:
            from engine import CorruptDatabaseError, NewerSchemaError

            refused = isinstance(error, CorruptDatabaseError | NewerSchemaError | ValueError)
            ui.tell(
                Action.RESTORE,
                Outcome.REFUSED if refused else Outcome.FAILED,
                self._refused(error),
                ui.sentence(error, same_file=data_path),
            )
            return
        count = ui.conversations(summary.conversations)
        before = (
            self.tr("The conversations you had before are kept in {path}").format(path=aside)
            if aside is not None
            else ""
        )
        ui.tell(
            Action.RESTORE,
            Outcome.DONE,
            self.tr("The backup is restored ({count}).").format(count=count),
            before,
        )

    def _refused(self, error: BaseException | None) -> str:
        """The first line of a refusal: a file that is no backup at all is said to be so."""
        from engine import NotABackupError

        if isinstance(error, NotABackupError):
            return self.tr("The chosen file is not a Continuo backup. Nothing changed.")
        return self.tr("The backup was not restored; your conversations are as they were.")

    async def _swap(
        self, data_path: Path, backup: Path
    ) -> tuple[Path | None, BaseException | None]:
        """Replace the store with the backup: (where the old file went, the engine's error)."""
        from engine import ContinuoError, restore_database

        try:
            return await self._replace_store(lambda: restore_database(data_path, backup)), None
        except (ContinuoError, OSError, ValueError) as exc:
            return None, exc

    async def _confirm(self, path: Path, data_path: Path, summary: BackupSummary) -> bool:
        from PySide6.QtWidgets import QMessageBox

        from ..common.dialog_buttons import confirm_box

        ui = self._ui
        count = ui.conversations(summary.conversations)
        when = (
            time.strftime("%Y-%m-%d %H:%M", time.localtime(summary.newest))
            if summary.newest is not None
            else self.tr("never")
        )
        box, restore = confirm_box(
            ui.parent_widget,
            "restoreConfirm",
            title=self.tr("Restore from a backup"),
            text=self.tr(
                "Replace your conversations with the backup's ({count}, last changed {when})?"
            ).format(count=count, when=when),
            informative=self.tr(
                "Nothing is deleted: the current conversation file is kept in {folder} as "
                "{name}.before-restore-<date and time>. Answers being written now are stopped "
                "and saved first.\n\nBackup: {path}"
            ).format(folder=data_path.parent, name=data_path.name, path=path),
            action=self.tr("Restore"),
            icon=QMessageBox.Icon.Question,
        )
        restore.setObjectName("restoreConfirmButton")
        try:
            await ui.ask(box)
            return box.clickedButton() is restore
        finally:
            box.deleteLater()
