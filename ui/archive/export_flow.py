"""File › Export…: this conversation or all, in Markdown, JSON or HTML, to a file.

`ExportFlow` asks which conversations and which format (`ExportDialog`, objectName
``exportDialog``; the scope and the format of the last export are offered again, both or
neither), then the file (named after the conversation's title, or ``Continuo export <date>``),
and has the engine write it (`engine.export_conversations`, on its own thread) under a
progress dialog whose Cancel leaves no file. It is given the store, the open conversation and
the providers' names, nothing more.

The file's name has the last word on the format: a name typed with ``.md``, ``.json`` or
``.html`` is written in that format (``all.html`` is a page, whatever the list said), a name
with no extension gets the chosen format's, and a name with another extension keeps it and is
written in the chosen format. Whenever the file's name and the list disagreed, the report says
which format was written and why.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QDialog

from ._shared import Action, ArchiveUI, Outcome

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from engine import ExportFormat, SQLiteSessionStorage

__all__ = ["ExportDialog", "ExportFlow", "export_file_name"]

# A file name's characters no file system takes (and control characters).
_UNSAFE = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*]+')
# What counts as a file name's extension ("v1.2 notes" has none).
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}")


def export_file_name(title: str | None, suffix: str, when: float | None = None) -> str:
    """A conversation's title as a file name, or ``Continuo export 2026-12-01 2300``."""
    name = _UNSAFE.sub(" ", title or "").strip(" .")[:80].strip()
    if not name:
        name = "Continuo export " + time.strftime("%Y-%m-%d %H%M", time.localtime(when))
    return name + suffix


class ExportFlow(QObject):
    """Export… of one window.

    Args:
        ui: the dialogs and the engine's work.
        storage: the conversation store now.
        shown: the open conversation (id, title), or None.
        provider_names: the providers' names by id (the export names a provider so).
    """

    def __init__(
        self,
        ui: ArchiveUI,
        storage: Callable[[], SQLiteSessionStorage],
        shown: Callable[[], tuple[str, str] | None],
        provider_names: Callable[[], dict[str, str]],
    ) -> None:
        super().__init__(ui)
        self._ui = ui
        self._storage = storage
        self._shown = shown
        self._provider_names = provider_names
        # The last export's format and scope ("all" or not), offered again together.
        self._last: tuple[ExportFormat, bool] | None = None

    async def run(self) -> None:
        from engine import export_conversations

        ui = self._ui
        shown = self._shown()
        dialog = ExportDialog(ui.parent_widget, shown[1] if shown else None)
        if self._last is not None:
            dialog.choose_format(self._last[0])
            dialog.choose_all(self._last[1])
        try:
            accepted = await ui.ask(dialog)
            only_this, chosen = dialog.only_this(), dialog.chosen_format()
        finally:
            dialog.deleteLater()
        if not accepted:
            ui.dismissed(Action.EXPORT)
            return
        title = shown[1] if only_this and shown else None
        picked = await ui.choose(
            Action.EXPORT, ui.start_folder() / export_file_name(title, chosen.suffix)
        )
        if picked is None:
            ui.dismissed(Action.EXPORT)
            return
        path, kind, why = self.file_and_format(picked, chosen)
        self._last = (kind, not only_this)
        progress = ui.show_progress(self.tr("Exporting the conversations…"))
        ids = [shown[0]] if only_this and shown else None
        report, error, cancelled = await ui.run(
            "export",
            export_conversations(
                self._storage(),
                path,
                kind,
                ids,
                progress=progress.set_progress,
                provider_names=self._provider_names(),
            ),
        )
        if cancelled:
            ui.said(
                Action.EXPORT,
                Outcome.CANCELLED,
                self.tr("The export was cancelled; no file was written."),
            )
            return
        if error is not None or report is None:
            text = self.tr("The conversations were not exported.")
            ui.tell(Action.EXPORT, Outcome.FAILED, text, ui.sentence(error) if error else "")
            return
        where = self.tr("The export is the file {path}").format(path=report.path)
        if report.folder is not None and report.files:
            where += "\n" + self.tr(
                "The attached files' originals ({count}) are in the folder {folder}"
            ).format(count=report.files, folder=report.folder)
        ui.tell(
            Action.EXPORT,
            Outcome.DONE,
            self.tr("Exported {count}, {messages}.").format(
                count=ui.conversations(report.conversations),
                messages=ui.messages(report.messages),
            ),
            f"{where}\n\n{why}" if why else where,
        )

    def file_and_format(self, picked: Path, chosen: ExportFormat) -> tuple[Path, ExportFormat, str]:
        """The file to write, its format, and what to say when the two disagreed with the
        format chosen in the list ("" when they agree): see the module docstring."""
        from engine import ExportFormat

        suffix = picked.suffix if _EXTENSION.fullmatch(picked.suffix) else ""
        said = ExportFormat.for_suffix(suffix)
        if said is chosen:
            return picked, chosen, ""
        if said is not None:
            return (
                picked,
                said,
                self.tr(
                    "It is written as {format}, as its name ends in {suffix} ({chosen} was chosen "
                    "in the list)."
                ).format(
                    format=self.format_name(said),
                    suffix=picked.suffix,
                    chosen=self.format_name(chosen),
                ),
            )
        if not suffix:  # "notes", "v1.2 notes": the chosen format's extension is added
            return picked.with_name(picked.name + chosen.suffix), chosen, ""
        return (
            picked,
            chosen,
            self.tr("It is written as {format}, though its name ends in {suffix}.").format(
                format=self.format_name(chosen), suffix=picked.suffix
            ),
        )

    def format_name(self, kind: ExportFormat) -> str:
        from engine import ExportFormat

        return {
            ExportFormat.MARKDOWN: self.tr("Markdown"),
            ExportFormat.JSON: self.tr("JSON"),
            ExportFormat.HTML: self.tr("HTML"),
        }[kind]


class ExportDialog(QDialog):
    """Export's choices: this conversation or all, and the format; objectName
    ``exportDialog``."""

    def __init__(self, parent: QWidget, current_title: str | None) -> None:
        from PySide6.QtWidgets import (
            QButtonGroup,
            QComboBox,
            QFormLayout,
            QLabel,
            QRadioButton,
            QVBoxLayout,
        )

        from engine import ExportFormat

        from ..common.dialog_buttons import Standard, button_row

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
            (self.tr("Markdown, to read"), ExportFormat.MARKDOWN),
            (
                self.tr("JSON, to keep or import again (everything, every version)"),
                ExportFormat.JSON,
            ),
            (self.tr("HTML, one page to share"), ExportFormat.HTML),
        ):
            self.format.addItem(text, value.value)
        form = QFormLayout()
        form.addRow(self.tr("Format:"), self.format)
        layout.addWidget(QLabel(self.tr("Export:"), self))
        layout.addWidget(self.this_conversation)
        layout.addWidget(self.all_conversations)
        layout.addLayout(form)
        self.buttons = button_row(self, {Standard.Ok: "exportOkButton", Standard.Cancel: ""})
        self.buttons.button(Standard.Ok).setText(self.tr("Export…"))
        layout.addWidget(self.buttons)

    def choose_format(self, value: ExportFormat | str) -> None:
        index = self.format.findData(str(value))
        if index >= 0:
            self.format.setCurrentIndex(index)

    def choose_all(self, every: bool) -> None:
        """Offer all conversations (``every``) or the open one (when there is one)."""
        if every or not self.this_conversation.isEnabled():
            self.all_conversations.setChecked(True)
        else:
            self.this_conversation.setChecked(True)

    def chosen_format(self) -> ExportFormat:
        from engine import ExportFormat

        return ExportFormat(self.format.currentData())

    def only_this(self) -> bool:
        return bool(self.this_conversation.isChecked())
