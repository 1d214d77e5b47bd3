"""What the person asks of the conversations: send, stop, Resume, a new chat, rename, delete, and
each message's actions (copy, a new version, a switch between versions, a branch).

`ConversationCommands` turns each into controller work (an owned task) and says in the status
bar why one cannot run now. It is given the widgets it reads and the controller as a
`WindowController` (the placeholder until the real one arrives, so every command is valid
from the first paint on): never the whole window. Dialogs it opens (Rename, Delete) open with
``open()`` over the window, never a nested ``exec()``.

The composer keeps a message until it is stored: `sending` remembers the text given to the
controller, and `input_stored` lets it go (or leaves it, when it could not be stored).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

if TYPE_CHECKING:
    from PySide6.QtWidgets import QInputDialog, QLineEdit, QPlainTextEdit, QWidget

    from ..controller_placeholder import WindowController
    from .items import TranscriptItem
    from .model_picker import ModelPicker

__all__ = ["CommandWidgets", "ConversationCommands"]


@dataclass(frozen=True, slots=True)
class CommandWidgets:
    """The window's widgets the commands read and write (built by the window)."""

    window: QWidget  # the dialogs' parent
    composer: QPlainTextEdit
    model_picker: ModelPicker  # "Regenerate with" picks one of its models
    session_filter: QLineEdit  # cleared so a new chat shows in the list
    say: Callable[[str, int], None]  # a line in the status bar, for milliseconds


class ConversationCommands(QObject):
    """The conversation commands of one window (see the module docstring)."""

    def __init__(
        self,
        widgets: CommandWidgets,
        controller: Callable[[], WindowController],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._w = widgets
        self._controller = controller  # the window's controller now (the placeholder first)
        #: the message given to the controller and not yet stored: the composer keeps it
        self.sending = ""

    # ------------------------------------------------------------------ the composer

    def send(self, text: str) -> None:
        """Send ``text``; it stays in the composer until it is stored (`input_stored`)."""
        c = self._controller()
        if not text.strip() or self.sending:
            return  # a message on its way stays in the composer until it is stored
        if c.is_running(c.current or ""):
            self._w.say(self.tr("An answer is still coming; press Esc to stop it."), 5000)
            return
        if c.send(text) is not None:
            self.sending = text.strip()

    def input_stored(self, text: str, stored: bool) -> None:
        """The message sent is stored (the composer lets it go) or not (it stays)."""
        if text != self.sending:
            return
        self.sending = ""
        composer = self._w.composer
        typed = composer.toPlainText().strip()
        if stored and typed.startswith(text):
            composer.setPlainText(typed[len(text) :].lstrip())  # what was typed since
        elif not stored:
            composer.setFocus()

    def message_stored(self, _session_id: str, text: str) -> None:
        if self._w.composer.toPlainText().strip() == text.strip():
            self._w.composer.clear()

    def stop(self) -> None:
        self._controller().stop()

    def resume(self) -> bool:
        """Carry on where the conversation stopped; False when it cannot now."""
        return self._controller().resume() is not None

    def load_older(self) -> None:
        """The transcript was scrolled to its top: put the page before it in front."""
        c = self._controller()
        c.spawn(c.load_older(), "older")

    # ------------------------------------------------------------------ the list

    def new_chat(self) -> None:
        """Open an empty conversation (the open or newest one if it has no message yet)."""
        c = self._controller()

        async def run() -> None:
            await c.open_empty()
            if self._w.session_filter.text():
                self._w.session_filter.clear()  # show it in the list

        c.spawn(run(), "new chat")
        self._w.composer.setFocus()

    def rename_current(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        c = self._controller()
        sid = c.current
        if not sid:
            return
        info = c.session_info(sid)
        dialog = QInputDialog(self._w.window)
        dialog.setObjectName("renameDialog")
        dialog.setWindowTitle(self.tr("Rename conversation"))
        dialog.setLabelText(self.tr("Title:"))
        dialog.setTextValue((info.title if info is not None else None) or "")
        self._fit_rename(dialog)
        dialog.textValueSelected.connect(
            lambda title: c.spawn(c.rename_session(sid, title), "rename")
        )
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def _fit_rename(self, dialog: QInputDialog) -> None:
        """Size the Rename dialog so its title bar and its field show their whole text."""
        from PySide6.QtWidgets import QLineEdit

        metrics = dialog.fontMetrics()
        screen = self._w.window.screen()
        cap = int(screen.availableGeometry().width() * 0.8) if screen is not None else 1200
        field = dialog.findChild(QLineEdit)
        text_width = metrics.horizontalAdvance(dialog.textValue() or "M" * 30) + 32
        if field is not None:
            field.setMinimumWidth(min(text_width, cap - 48))
        # A title bar needs room for the title and the window buttons beside it.
        width = max(metrics.horizontalAdvance(dialog.windowTitle()) + 160, text_width + 48, 360)
        dialog.resize(min(width, cap), dialog.sizeHint().height())

    def delete_current(self) -> None:
        from ..common.dialog_buttons import confirm_box
        from .sessions import session_title

        c = self._controller()
        sid = c.current
        if not sid:
            return
        box, delete = confirm_box(
            self._w.window,
            "deleteDialog",
            title=self.tr("Delete conversation"),
            text=self.tr("Delete “{title}”? This cannot be undone.").format(
                title=session_title(c.session_info(sid))
            ),
            action=self.tr("Delete"),
        )

        def done(_result: int) -> None:
            if box.clickedButton() is delete:
                c.spawn(c.delete_session(sid), "delete")
            box.deleteLater()

        box.finished.connect(done)
        box.open()

    # ------------------------------------------------------------------ a message's actions

    def message_action(self, action: str, item: TranscriptItem, text: str) -> None:
        """A message's action (`ui.conversation.message_actions`): copy, a new version, a switch
        between versions, a branch into a new chat."""
        from PySide6.QtGui import QGuiApplication

        c = self._controller()
        if action == "copy":
            QGuiApplication.clipboard().setText(item.text)
            self._w.say(self.tr("Message copied"), 3000)
            return
        sid = c.current
        if sid and c.is_running(sid):
            self._w.say(self.tr("Wait for the answer to finish, or stop it, first."), 5000)
            return
        if action == "regenerate":
            c.regenerate(item.key)
        elif action.startswith("regenerate_with:"):
            self._regenerate_with(item, int(action.split(":", 1)[1]))
        elif action == "edit":
            c.edit(item.key, text)
        elif action in ("previous", "next"):
            step = -1 if action == "previous" else 1
            c.spawn(c.switch_version(item.key, step), "switch version")
        elif action == "branch":
            c.spawn(c.branch_into_new_chat(item.key), "branch into a new chat")

    def _regenerate_with(self, item: TranscriptItem, index: int) -> None:
        """Regenerate with the picker's ``index``th model, which the conversation keeps."""
        from ..settings.model_catalog import ModelChoice

        picker = self._w.model_picker
        choice = picker.itemData(index)
        if not isinstance(choice, ModelChoice):
            return
        picker.setCurrentIndex(index)
        c = self._controller()

        async def run() -> None:
            await c.choose_model(choice)
            c.regenerate(item.key)

        c.spawn(run(), "regenerate with another model")

    def pick_model(self, index: int) -> None:
        """The person chose the picker's ``index``th model."""
        from ..settings.model_catalog import ModelChoice

        choice: Any = self._w.model_picker.itemData(index)
        if isinstance(choice, ModelChoice):
            c = self._controller()
            c.spawn(c.choose_model(choice), "choose model")
