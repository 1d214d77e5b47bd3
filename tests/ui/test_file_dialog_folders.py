"""Where the window's file dialogs open (issue 20, item 19): in the person's Documents folder
(or home, when there is none), then in the folder last used, never in the folder the app was
launched from (the source checkout under ``make run``).

The real window and its real Qt file dialogs (not the platform's: those cannot be driven
offscreen), with HOME pointed at a folder of the test's own and the working folder elsewhere.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QLineEdit

from tests.support.wait import until
from tests.ui.conftest import open_window, seed_provider
from tests.ui.test_archive_menu import _chat, _close_report, _outcome

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A home of the test's own, a launch folder that is not it, and no folder remembered."""
    home = tmp_path / "home"
    launch = tmp_path / "launch"
    elsewhere = tmp_path / "elsewhere"
    for folder in (home, launch, elsewhere):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))  # no user-dirs.dirs there
    monkeypatch.chdir(launch)
    monkeypatch.setattr("ui.common.file_dialogs._LAST", [])
    return {"home": home, "launch": launch, "elsewhere": elsewhere}


async def _file_dialog(window: Any) -> QFileDialog:
    def shown() -> bool:
        dialog = window.findChild(QFileDialog, "archiveFileDialog")
        return dialog is not None and dialog.isVisible()

    await until(shown, what="the file dialog")
    return window.findChild(QFileDialog, "archiveFileDialog")


def _opened_in(dialog: QFileDialog) -> Path:
    return Path(dialog.directory().absolutePath()).resolve()


async def _window(tmp_path: Path, provider_server: Any) -> Any:
    store = await seed_provider(tmp_path / "data", provider_server)
    window = await open_window(tmp_path / "data", settings_store=store)
    await _chat(window, "Worth keeping", "Yes.", provider_server)
    return window


@pytest.mark.parametrize("documents", [True, False], ids=["documents", "no documents folder"])
async def test_archive_dialogs_open_in_documents_then_where_the_last_file_was_chosen(
    tmp_path, provider_server, places, documents
):
    if documents:
        (places["home"] / "Documents").mkdir()
    first = places["home"] / "Documents" if documents else places["home"]
    window = await _window(tmp_path, provider_server)
    actions = window.menus.archive_actions

    # Back up…: the first dialog opens in Documents (or home), not the launch folder.
    outcome = _outcome(window)
    actions.backup_action.trigger()
    dialog = await _file_dialog(window)
    assert _opened_in(dialog) == first.resolve() != places["launch"].resolve()
    target = places["elsewhere"] / "kept.db"
    name = dialog.findChild(QLineEdit, "fileNameEdit")
    name.setText(str(target))  # a file in another folder, typed as a person may
    QTest.keyClick(name, Qt.Key.Key_Return)
    await asyncio.wait_for(outcome, 60)
    _close_report(window)
    assert target.is_file()

    # Restore…: the next dialog opens where the backup was written.
    outcome = _outcome(window)
    actions.restore_action.trigger()
    dialog = await _file_dialog(window)
    assert _opened_in(dialog) == places["elsewhere"].resolve()
    dialog.reject()
    await asyncio.wait_for(outcome, 60)


async def test_settings_file_and_folder_dialogs_open_in_documents_then_the_last_folder(
    tmp_path, provider_server, places
):
    documents = places["home"] / "Documents"
    documents.mkdir()
    window = await _window(tmp_path, provider_server)
    window.settings_button.click()
    dialog = window.settings_dialog
    await until(
        lambda: dialog.is_loaded and dialog.probeAgainButton.isEnabled(),
        what="the settings to load and the local servers to be probed",
    )
    dialog.tabs.setCurrentWidget(dialog.toolsPage)
    page = dialog.toolsPage

    # Tools › Import from a file…: Documents first.
    page.importFileButton.click()
    assert page.fileDialog is not None and page.fileDialog.isVisible()
    assert _opened_in(page.fileDialog) == documents.resolve()
    page.fileDialog.reject()

    # A server's working folder, empty: Documents too; the folder chosen is remembered.
    page.addServerButton.click()
    editor = page.editor
    assert editor is not None and editor.serverCwd.text() == ""
    editor.browseCwdButton.click()
    assert editor.folderDialog is not None and editor.folderDialog.isVisible()
    assert _opened_in(editor.folderDialog) == documents.resolve()
    editor.folderDialog.selectFile(str(places["elsewhere"]))
    editor.folderDialog.accept()
    assert editor.serverCwd.text() == str(places["elsewhere"])
    editor.reject()

    # Import from a file… again: where the last folder was chosen.
    page.importFileButton.click()
    assert _opened_in(page.fileDialog) == places["elsewhere"].resolve()
    page.fileDialog.reject()
    dialog.reject()
    await until(lambda: window.settings_dialog is None, what="the settings to close")
