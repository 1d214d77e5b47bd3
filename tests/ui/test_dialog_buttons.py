"""`ui.common.dialog_buttons`: the button row, confirmation and named button every dialog uses."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QMessageBox, QWidget

from ui.common.dialog_buttons import Standard, button_row, confirm_box, named_button


def test_a_button_row_names_its_buttons_and_ends_the_dialog(qtbot: Any) -> None:
    dialog = QDialog()
    qtbot.addWidget(dialog)
    row = button_row(dialog, {Standard.Ok: "someOkButton", Standard.Cancel: ""}, name="row")
    assert row.objectName() == "row"
    assert dialog.findChild(QWidget, "someOkButton") is row.button(Standard.Ok)
    dialog.open()
    row.button(Standard.Ok).click()
    assert dialog.result() == QDialog.DialogCode.Accepted and not dialog.isVisible()
    dialog.open()
    row.button(Standard.Cancel).click()
    assert dialog.result() == QDialog.DialogCode.Rejected and not dialog.isVisible()


def test_a_button_row_runs_the_given_slots_and_leaves_apply_to_the_caller(qtbot: Any) -> None:
    dialog = QDialog()
    qtbot.addWidget(dialog)
    said: list[str] = []
    row = button_row(
        dialog,
        {Standard.Save: "saveIt", Standard.Apply: "applyIt", Standard.Cancel: ""},
        accepted=lambda: said.append("save"),
        rejected=lambda: said.append("cancel"),
    )
    dialog.open()
    row.button(Standard.Save).click()
    row.button(Standard.Apply).click()  # no role the row answers: the caller connects it
    row.button(Standard.Cancel).click()
    assert said == ["save", "cancel"]
    assert dialog.isVisible(), "the given slots decide whether the dialog closes"


def test_a_confirmation_defaults_to_cancel_and_shows_text_as_text(qtbot: Any) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    box, delete = confirm_box(
        parent, "askFirst", title="Delete", text="Delete “<b>x</b>”?", action="Delete"
    )
    assert box.objectName() == "askFirst" and box.parent() is parent
    assert box.textFormat() == Qt.TextFormat.PlainText and box.text() == "Delete “<b>x</b>”?"
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    assert box.buttonRole(delete) == QMessageBox.ButtonRole.DestructiveRole
    box.open()
    delete.click()
    assert box.clickedButton() is delete


def test_a_named_button_runs_its_slot_without_the_checked_flag(qtbot: Any) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    clicks: list[int] = []
    button = named_button(parent, "countButton", lambda: clicks.append(1))
    assert parent.findChild(QWidget, "countButton") is button
    button.click()
    button.click()
    assert clicks == [1, 1]
