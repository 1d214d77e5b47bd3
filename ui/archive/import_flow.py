"""File › Import…: a Continuo or ChatGPT export's conversations join the list.

`ImportFlow` asks for the file and has the engine store its conversations
(`engine.import_file`, each whole or not at all, on its own thread) under a progress dialog.
What was stored stays stored, after a cancel or a failure too, so the list is read again in
every case. The report says what was added, what was already here, and what could not be
imported and why. It is given the store and a way to read the list again, nothing more.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from ._shared import Action, ArchiveUI, Outcome

if TYPE_CHECKING:
    from engine import ImportReport, SQLiteSessionStorage

__all__ = ["ImportFlow"]


class ImportFlow(QObject):
    """Import… of one window.

    Args:
        ui: the dialogs and the engine's work.
        storage: the conversation store now.
        reload: read the conversation list from the store again.
    """

    def __init__(
        self,
        ui: ArchiveUI,
        storage: Callable[[], SQLiteSessionStorage],
        reload: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(ui)
        self._ui = ui
        self._storage = storage
        self._reload = reload

    async def run(self) -> None:
        from engine import import_file

        ui = self._ui
        path = await ui.choose(Action.IMPORT, ui.start_folder())
        if path is None:
            ui.dismissed(Action.IMPORT)
            return
        progress = ui.show_progress(self.tr("Importing the conversations…"))
        report, error, cancelled = await ui.run(
            "import", import_file(self._storage(), path, progress=progress.set_progress)
        )
        # What was stored stays stored (each conversation is imported whole or not at all):
        # the list shows it, after a cancel or a failure too.
        await self._reload()
        if cancelled:
            ui.said(
                Action.IMPORT,
                Outcome.CANCELLED,
                self.tr("The import was cancelled; the conversations imported before it stay."),
            )
            return
        if error is not None or report is None:
            text = self.tr("The conversations were not imported.")
            ui.tell(Action.IMPORT, Outcome.FAILED, text, ui.sentence(error) if error else "")
            return
        ui.tell(Action.IMPORT, Outcome.DONE, *self.report_text(report))

    def report_text(self, report: ImportReport) -> tuple[str, str]:
        """What an import says: what was added, then what was not, and why."""
        ui = self._ui
        imported, present, skipped = report.imported, report.already_present, report.skipped
        if imported:
            head = self.tr("Imported {count}, {messages}.").format(
                count=ui.conversations(imported),
                messages=ui.messages(report.messages),
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
        if report.pictures:
            lines.append(
                self.tr("Pictures brought in with their messages: {count}.").format(
                    count=report.pictures
                )
            )
        if report.pictures_missing:
            lines.append(
                self.tr(
                    "Pictures the export did not hold or that could not be read: {count}. "
                    "A note stands in the place of each."
                ).format(count=report.pictures_missing)
            )
        # The missing pictures are counted among the placeholders too: say the rest once.
        others = report.placeholders - report.pictures_missing
        if others > 0:
            lines.append(
                self.tr(
                    "Pictures or attachments that could not be imported: {count}. A note "
                    "stands in the place of each."
                ).format(count=others)
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
