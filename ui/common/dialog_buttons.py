"""The buttons of the window's dialogs, built one way.

- `button_row`: the row that ends a dialog (OK / Cancel, Save / Apply / Cancel, Close): a
  `QDialogButtonBox` in the platform's order, each button given its stable objectName (tests
  and accessibility tools find them by it), accepted and rejected wired to the dialog.
- `confirm_box`: a question whose default answer is Cancel and whose other button names what
  will happen ("Delete", "Restore", "Open example.com"). Not opened here: the caller opens it
  with ``open()`` (never a nested ``exec()`` inside the qasync loop) and reads
  ``clickedButton()``.
- `named_button`: a push button with its objectName and what a click does (the rows of
  Add / Remove / Edit beside a list).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMessageBox, QPushButton, QWidget

__all__ = ["Standard", "button_row", "confirm_box", "named_button"]

Standard = QDialogButtonBox.StandardButton


def button_row(
    dialog: QDialog,
    buttons: Mapping[QDialogButtonBox.StandardButton, str],
    *,
    accepted: Callable[[], object] | None = None,
    rejected: Callable[[], object] | None = None,
    name: str = "",
) -> QDialogButtonBox:
    """The row of ``buttons`` (a standard button → its objectName, "" for none) for ``dialog``.

    A button with the accept role (OK, Save) emits ``accepted``, which runs ``accepted`` (by
    default the dialog's ``accept``); one with the reject role (Cancel, Close) runs
    ``rejected`` (by default ``reject``). Other roles (Apply) are the caller's to connect:
    ``row.button(Standard.Apply).clicked``. The row is not put in a layout.
    """
    row = QDialogButtonBox(dialog)
    if name:
        row.setObjectName(name)
    for standard, object_name in buttons.items():
        button = row.addButton(standard)
        if object_name:
            button.setObjectName(object_name)
    row.accepted.connect(accepted if accepted is not None else dialog.accept)
    row.rejected.connect(rejected if rejected is not None else dialog.reject)
    return row


def confirm_box(
    parent: QWidget,
    name: str,
    *,
    title: str,
    text: str,
    action: str,
    informative: str = "",
    icon: QMessageBox.Icon = QMessageBox.Icon.Warning,
    role: QMessageBox.ButtonRole = QMessageBox.ButtonRole.DestructiveRole,
) -> tuple[QMessageBox, QPushButton]:
    """A question (objectName ``name``) with Cancel, the default, and the ``action`` button.

    Its texts are plain text (they may hold a title or a host from elsewhere). Returns the
    box and the action's button; the caller opens the box with ``open()``.
    """
    box = QMessageBox(parent)
    box.setObjectName(name)
    box.setIcon(icon)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setWindowTitle(title)
    box.setText(text)
    if informative:
        box.setInformativeText(informative)
    box.setStandardButtons(QMessageBox.StandardButton.Cancel)
    button = box.addButton(action, role)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box, button


def named_button(parent: QWidget, name: str, clicked: Callable[[], object]) -> QPushButton:
    """A push button named ``name`` that runs ``clicked`` (its text is set on retranslate)."""
    button = QPushButton(parent)
    button.setObjectName(name)
    button.clicked.connect(lambda _checked=False: clicked())
    return button
