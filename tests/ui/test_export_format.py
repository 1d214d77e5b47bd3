"""File › Export…: the format follows the file's name, and the dialog remembers the scope and
the format together (issue 20, item 1), in the real window over a real SQLite file.

Before, JSON chosen in the list and ``all.html`` typed in the file dialog wrote JSON into
``all.html`` and said it was done; and the format was offered again while the scope went back
to "This conversation". Only the file dialog's answer is given (`choose_path`, as in
tests/ui/test_archive_menu.py), except in the last test, which drives Qt's own dialog.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QLineEdit, QPushButton

from tests.support.wait import until
from tests.ui.conftest import open_window, seed_provider
from tests.ui.test_archive_menu import _chat, _choose, _close_report, _export_drive, _trigger
from ui.archive import ExportDialog, Outcome

pytestmark = pytest.mark.timeout(120)


async def _window(tmp_path: Path, provider_server: Any) -> Any:
    store = await seed_provider(tmp_path / "data", provider_server)
    window = await open_window(tmp_path / "data", settings_store=store)
    await _chat(window, "First chat", "One.", provider_server)
    await _chat(window, "Second chat", "Two.", provider_server)
    return window


def _kind(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if text.startswith("<!DOCTYPE html>"):
        return "html"
    if text.startswith("<!-- Exported from Continuo"):
        return "markdown"
    json.loads(text)
    return "json"


async def test_the_name_typed_decides_the_format_and_a_mismatch_is_said(tmp_path, provider_server):
    window = await _window(tmp_path, provider_server)

    # JSON chosen, "all.html" typed: a page is written, and the report says why.
    target = tmp_path / "all.html"
    _choose(window, target)
    _action, outcome, said = await _trigger(window, "export", _export_drive("all", "json"))
    assert outcome == Outcome.DONE, said
    assert _kind(target) == "html"
    text, details = _close_report(window)
    assert "2 conversations" in text
    assert "written as HTML" in details and ".html" in details and "JSON" in details, details

    # The name's extension and the list agree: nothing more is said.
    target = tmp_path / "kept.json"
    _choose(window, target)
    await _trigger(window, "export", _export_drive("all", "json"))
    assert _kind(target) == "json"
    assert "written as" not in _close_report(window)[1]

    # No extension typed: the chosen format's is added.
    _choose(window, tmp_path / "notes")
    await _trigger(window, "export", _export_drive("this", "markdown"))
    assert _kind(tmp_path / "notes.md") == "markdown"
    assert not (tmp_path / "notes").exists()
    assert str(tmp_path / "notes.md") in _close_report(window)[1]

    # Another extension: kept, written in the chosen format, and said.
    target = tmp_path / "notes.txt"
    _choose(window, target)
    await _trigger(window, "export", _export_drive("this", "markdown"))
    assert _kind(target) == "markdown"
    details = _close_report(window)[1]
    assert "written as Markdown" in details and ".txt" in details, details


async def test_the_scope_and_the_format_are_offered_again_together(tmp_path, provider_server):
    window = await _window(tmp_path, provider_server)
    actions = window.menus.archive_actions
    dialog_seen: list[tuple[bool, str]] = []

    async def look_then_accept(actions: Any) -> None:
        await until(lambda: isinstance(actions.dialog, ExportDialog), what="the export dialog")
        dialog = actions.dialog
        await until(dialog.isVisible, what="the export dialog shown")
        dialog_seen.append((dialog.only_this(), str(dialog.chosen_format())))
        dialog.findChild(QPushButton, "exportOkButton").click()

    # All of them as HTML (by the name typed, JSON in the list): offered again as such.
    _choose(window, tmp_path / "all.html")
    await _trigger(window, "export", _export_drive("all", "json"))
    _close_report(window)
    _choose(window, tmp_path / "again.html")
    await _trigger(window, "export", look_then_accept)
    _close_report(window)
    assert dialog_seen[-1] == (False, "html")
    assert "First chat" in (tmp_path / "again.html").read_text(encoding="utf-8")

    # This conversation as Markdown: offered again as such.
    _choose(window, tmp_path / "this.md")
    await _trigger(window, "export", _export_drive("this", "markdown"))
    _close_report(window)
    _choose(window, tmp_path / "this again.md")
    await _trigger(window, "export", look_then_accept)
    _close_report(window)
    assert dialog_seen[-1] == (True, "markdown")
    assert actions.busy is False


async def test_qts_file_dialog_offers_the_chosen_format_and_adds_its_extension(
    tmp_path, provider_server
):
    window = await _window(tmp_path, provider_server)
    window.menus.archive_actions.folder = tmp_path

    async def drive(actions: Any) -> None:
        await _export_drive("all", "html")(actions)
        await until(
            lambda: (d := window.findChild(QFileDialog, "archiveFileDialog")) and d.isVisible(),
            what="the file dialog",
        )
        dialog = window.findChild(QFileDialog, "archiveFileDialog")
        assert dialog.selectedNameFilter() == "HTML (*.html)"
        assert dialog.nameFilters() == ["Markdown (*.md)", "JSON (*.json)", "HTML (*.html)"]
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        name.setText("shared")  # no extension typed
        QTest.keyClick(name, Qt.Key.Key_Return)

    _action, outcome, said = await _trigger(window, "export", drive)
    assert outcome == Outcome.DONE, said
    _close_report(window)
    assert _kind(tmp_path / "shared.html") == "html"
