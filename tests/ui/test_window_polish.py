"""Polish a daily user notices: dialogs and fields fit their text, the provider list follows
the form as it is edited, the reading column is capped and centred, Copy says "Copied", Enter
while an answer streams says why nothing happens, and Help › About tells the version, the data
folder and the licences of what is bundled. All on the real window over a real SQLite file.
"""

from __future__ import annotations

import asyncio
from importlib import metadata
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QInputDialog, QLineEdit

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import next_signal, open_window, seed_provider
from ui.controller import DB_FILE_NAME
from ui.settings.dialog import SettingsDialog
from ui.settings.store import ProviderConfig, Settings, SettingsStore

LONG_TITLE = "Planning the quarterly infrastructure migration to the new cluster"[:60]


async def _seed(data_dir: Any, title: str = "Backoff helper", answer: str = "Done.") -> None:
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="s", title=title)
        await storage.append("s", "seed", UserMessage(content="Write a retry helper"))
        await storage.append("s", "seed", AssistantMessage(content=answer))
    finally:
        await storage.close()


def _dialogs(name: str) -> list[Any]:
    return [w for w in QApplication.topLevelWidgets() if w.objectName() == name and w.isVisible()]


async def test_rename_dialog_fits_its_title_and_field(tmp_path) -> None:
    await _seed(tmp_path, LONG_TITLE)
    window = await open_window(tmp_path)
    routes = [
        lambda: QTest.keyClick(window.session_list, Qt.Key.Key_F2),
        window.menus.rename_action.trigger,
    ]
    for route in routes * 2:
        window.session_list.setFocus()
        route()
        await until(lambda: _dialogs("renameDialog"), what="the Rename dialog")
        (dialog,) = _dialogs("renameDialog")
        assert isinstance(dialog, QInputDialog)
        metrics = dialog.fontMetrics()
        field = dialog.findChild(QLineEdit)
        assert field.text() == LONG_TITLE
        assert field.width() >= metrics.horizontalAdvance(LONG_TITLE) + 8
        assert dialog.width() >= metrics.horizontalAdvance(dialog.windowTitle()) + 100
        dialog.reject()
        await until(lambda: not _dialogs("renameDialog"))


async def test_api_key_placeholder_fits_in_every_state(qtbot, tmp_path, no_keyring) -> None:
    store = SettingsStore(tmp_path, use_keychain=False)
    config = ProviderConfig(id="p1", kind="openai", name="Groq", base_url="https://x.test/v1")
    await store.set_api_key("p1", "sk-test-not-a-real-key")
    await store.save(Settings(providers=[config], default_provider_id="p1"))
    dialog = SettingsDialog(store, servers=[], environ={})
    qtbot.addWidget(dialog)
    loaded = asyncio.ensure_future(next_signal(dialog.loaded))
    dialog.open()
    if not dialog.is_loaded:
        await loaded
    else:
        loaded.cancel()
    field = dialog.providerApiKey
    margins = 8  # the frame and text margins around the text

    def fits() -> bool:
        text = field.placeholderText()
        return field.width() >= field.fontMetrics().horizontalAdvance(text) + margins

    assert "saved" in field.placeholderText() and fits()
    dialog.forgetKeyButton.click()
    assert "forgotten" in field.placeholderText()
    QApplication.processEvents()
    assert fits()
    dialog.reject()
    await dialog.wait_idle()


async def test_provider_list_follows_name_and_kind_edits_live(qtbot, tmp_path, no_keyring) -> None:
    store = SettingsStore(tmp_path, use_keychain=False)
    configs = [
        ProviderConfig(id="p1", kind="openai", name="Groq", base_url="https://x.test/v1"),
        ProviderConfig(id="p2", kind="openai", name="Local", base_url="http://127.0.0.1:9/v1"),
    ]
    await store.save(Settings(providers=configs, default_provider_id="p1"))
    dialog = SettingsDialog(store, servers=[], environ={})
    qtbot.addWidget(dialog)
    loaded = asyncio.ensure_future(next_signal(dialog.loaded))
    dialog.open()
    if not dialog.is_loaded:
        await loaded
    else:
        loaded.cancel()
    items = dialog.providerList

    def texts() -> list[str]:
        return [items.item(row).text() for row in range(items.count())]

    assert texts() == ["Groq (default)", "Local"]
    dialog.providerName.selectAll()
    QTest.keyClicks(dialog.providerName, "Groq fast")
    assert texts() == ["Groq fast (default)", "Local"]
    dialog.providerName.selectAll()
    QTest.keyClick(dialog.providerName, Qt.Key.Key_Backspace)
    kind = dialog.providerKind
    kind.setCurrentIndex(kind.findData("anthropic"))
    anthropic = kind.currentText()
    assert texts()[0] == f"{anthropic} (default)"
    assert dialog.providerName.text() == anthropic
    # Making the other one the default moves the mark as the box is ticked.
    items.setCurrentRow(1)
    dialog.providerDefault.setChecked(True)
    assert texts() == [anthropic, "Local (default)"]
    dialog.reject()
    await dialog.wait_idle()


async def test_the_reading_column_is_capped_and_centred(tmp_path) -> None:
    await _seed(tmp_path, answer="A line of text that goes on and on. " * 20)
    window = await open_window(tmp_path)
    view = window.transcript
    cap = view.fontMetrics().averageCharWidth() * 90 + 32
    window.resize(2400, 800)
    await until(lambda: view.width() > 2000)
    await until(
        lambda: view.viewport().width() <= cap,
        what=lambda: (
            f"the column capped: {view.viewport().width()} > {cap}, "
            f"margins {view.viewportMargins()}"
        ),
    )
    left, right = view.viewportMargins().left(), view.viewportMargins().right()
    assert left == right and left > 0
    window.resize(700, 600)
    await until(lambda: view.viewportMargins().left() == 0, what="the full width when narrow")


async def test_copy_says_copied(tmp_path) -> None:
    await _seed(tmp_path, answer="Here:\n\n```python\nprint('hi')\n```\n")
    window = await open_window(tmp_path)
    window.activateWindow()
    await until(lambda: window.isActiveWindow(), what="the window active")
    window.transcript.flush()
    await until(lambda: len(window.transcript.views()) >= 2)
    answer = window.transcript.views()[-1]
    for _round in range(2):
        window.statusBar().clearMessage()
        answer.body.linkActivated.emit(QUrl("copy:0"))  # what clicking the Copy link emits
        assert QGuiApplication.clipboard().text() == "print('hi')"
        assert window.statusBar().currentMessage() == "Copied"


async def test_enter_while_an_answer_streams_says_why(tmp_path, provider_server) -> None:
    provider_server.script(Turn(text="word " * 400, chunk_size=4, delay=0.02))
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    QTest.keyClicks(window.composer, "Tell me a story")
    QTest.keyClick(window.composer, Qt.Key.Key_Return)
    sid = None
    await until(
        lambda: (
            window.controller.current and window.controller.is_running(window.controller.current)
        )
    )
    sid = window.controller.current
    # The first message leaves the box once it is stored.
    await until(lambda: window.composer.toPlainText() == "", what="the first message stored")
    QTest.keyClicks(window.composer, "And another")
    QTest.keyClick(window.composer, Qt.Key.Key_Return)
    assert window.composer.toPlainText() == "And another"  # kept
    message = window.statusBar().currentMessage()
    assert "still coming" in message and "Esc" in message
    QTest.keyClick(window.composer, Qt.Key.Key_Escape)
    await until(lambda: not window.controller.is_running(sid))


async def test_about_shows_version_data_folder_and_licences(tmp_path) -> None:
    window = await open_window(tmp_path)
    names = [a.text() for a in window.menus.help_menu.actions()]
    assert "&About Continuo" in names and window.menus.help_menu.title() == "&Help"  # Alt+H, A
    for _round in range(3):  # open, close, open again
        window.menus.help_menu.actions()[0].trigger()
        await until(lambda: _dialogs("aboutDialog"), what="the About dialog")
        (dialog,) = _dialogs("aboutDialog")
        await dialog.wait_read()
        assert dialog.version_label.text() == metadata.version("continuo")
        assert dialog.folder_label.text() == str(tmp_path)
        text = dialog.licences.toPlainText()
        for name, licence in (("PySide6", "LGPL"), ("httpx", "BSD"), ("Qt", "LGPL")):
            line = next(x for x in text.splitlines() if x.split()[0].startswith(name))
            assert licence in line, line
        assert dialog.licences.accessibleName() and dialog.folder_label.accessibleName()
        # Reachable without a mouse: Tab goes from the folder to the list to Close.
        dialog.folder_label.setFocus()
        chain, widget = [], dialog.folder_label
        for _ in range(3):
            widget = widget.nextInFocusChain()
            while widget.focusPolicy() == Qt.FocusPolicy.NoFocus:
                widget = widget.nextInFocusChain()
            chain.append(widget)
        assert dialog.licences in chain
        assert dialog.buttons.button(dialog.buttons.StandardButton.Close) in chain
        QTest.keyClick(dialog, Qt.Key.Key_Escape)
        await until(lambda: not _dialogs("aboutDialog"))


async def test_model_picker_fits_the_narrowest_window(tmp_path, provider_server) -> None:
    model = "qwen2.5-coder-32b-instruct-q4_k_m.gguf"
    store = await seed_provider(tmp_path, provider_server, model=model)
    window = await open_window(tmp_path, settings_store=store)
    picker = window.model_picker
    await until(lambda: picker.count() > 0, what="the model list")
    label = picker.currentText()
    assert label.startswith(model) and label.endswith("Loopback")
    metrics = picker.fontMetrics()
    for size in ((640, 400), (1400, 800), (640, 400)):
        window.resize(*size)
        await until(lambda size=size: window.width() == size[0])
        shown = picker.shown_text()
        # What is drawn fits the box and keeps both ends: the model and the provider.
        assert metrics.horizontalAdvance(shown) <= picker.width()
        assert shown[:6] == label[:6] and shown.endswith("Loopback")
        assert window.settings_button.geometry().right() <= window.width()
    assert picker.full_tooltip().startswith(label)
    # The list that opens shows every label whole.
    assert picker.view().minimumWidth() >= metrics.horizontalAdvance(label)
