"""The settings dialog, driven as a person would: type, pick, click, and look at the files.

Runs on the qasync loop of tests/ui/conftest.py. Waiting is on the dialog's signals (never a
nested Qt loop, never a sleep). The keychain is `DictKeyring`, a real keyring backend that
keeps secrets in memory, because a headless machine has no OS keychain.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QApplication, QPushButton

from tests.support.wait import until
from tests.ui.conftest import next_signal
from ui.common.i18n import _INSTALLED, install_translator, installed_language
from ui.settings.dialog import SettingsDialog
from ui.settings.first_run import LocalServer
from ui.settings.store import KEYRING_SERVICE, ProviderConfig, Settings, SettingsStore

SECRET = "sk-dialog-0123456789abcdef-NEVER-LOGGED"
ENV_SECRET = "sk-env-abcdef0123456789-NEVER-LOGGED"


@pytest.fixture
def restore_look(qapp: QApplication) -> Iterator[None]:
    """Saving the dialog applies the theme and language to the app; give the next test a
    plain one, in English."""
    style, palette, sheet = qapp.style().name(), qapp.palette(), qapp.styleSheet()
    yield
    install_translator(qapp, "en")
    if style:
        qapp.setStyle(style)
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)
    qapp.setProperty("continuoTheme", None)
    qapp.setProperty("continuoScheme", None)
    qapp.setProperty("continuoFusion", None)


@pytest.fixture
def ollama_port() -> Iterator[int]:
    """A loopback server answering Ollama's model list."""
    body = json.dumps({"models": [{"name": "llama3.2:3b"}]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            found = self.path == "/api/tags"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body) if found else 0))
            self.end_headers()
            if found:
                self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join(5)


async def open_dialog(qtbot: Any, store: SettingsStore, **kw: Any) -> SettingsDialog:
    kw.setdefault("servers", [])
    kw.setdefault("environ", {})
    dialog = SettingsDialog(store, **kw)
    qtbot.addWidget(dialog)
    loaded = asyncio.ensure_future(next_signal(dialog.loaded))
    dialog.open()
    if not dialog.is_loaded:
        await loaded
    else:
        loaded.cancel()
    return dialog


def click(qtbot: Any, button: QPushButton) -> None:
    assert button.isVisible() and button.isEnabled(), button.objectName()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


async def save(qtbot: Any, dialog: SettingsDialog) -> None:
    changed = asyncio.ensure_future(next_signal(dialog.settingsChanged))
    click(qtbot, dialog.saveButton)
    await changed


def file_mode(path: os.PathLike[str]) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def fill_provider(qtbot: Any, dialog: SettingsDialog, kind: str, name: str, url: str) -> None:
    dialog.providerKind.setCurrentIndex(dialog.providerKind.findData(kind))
    dialog.providerName.clear()
    qtbot.keyClicks(dialog.providerName, name)
    dialog.providerBaseUrl.clear()
    qtbot.keyClicks(dialog.providerBaseUrl, url)


async def test_add_provider_key_goes_to_keychain(
    qtbot, tmp_path, dict_keyring, caplog, restore_look
) -> None:
    caplog.set_level(logging.DEBUG)
    store = SettingsStore(tmp_path)
    dialog = await open_dialog(qtbot, store)
    assert dialog.objectName() == "settingsDialog"
    assert not dialog.keychainWarning.isVisible()
    # With nothing configured the dialog opens on what it found; add one by hand instead.
    assert dialog.tabs.currentWidget() is dialog.firstRunPage
    click(qtbot, dialog.addByHandButton)
    assert dialog.tabs.currentWidget() is dialog.providersPage
    fill_provider(qtbot, dialog, "anthropic", "Work Claude", "https://api.anthropic.com")
    qtbot.keyClicks(dialog.providerApiKey, SECRET)
    dialog.providerModel.setEditText("claude-sonnet-4-5")
    await save(qtbot, dialog)

    assert not dialog.isVisible()  # Save closes the dialog
    settings = await SettingsStore(tmp_path).load()
    (provider,) = settings.providers
    assert (provider.kind, provider.name, provider.base_url, provider.default_model) == (
        "anthropic",
        "Work Claude",
        "https://api.anthropic.com",
        "claude-sonnet-4-5",
    )
    assert provider.key_in_keychain is True
    assert settings.default_provider_id == provider.id
    assert dict_keyring.secrets == {(KEYRING_SERVICE, provider.id): SECRET}
    assert SECRET not in (tmp_path / "settings.json").read_text()
    assert SECRET not in caplog.text


async def test_without_keychain_key_goes_to_0600_file_and_dialog_warns(
    qtbot, tmp_path, no_keyring, caplog, restore_look
) -> None:
    caplog.set_level(logging.DEBUG)
    store = SettingsStore(tmp_path)
    dialog = await open_dialog(qtbot, store)
    assert dialog.keychainWarning.isVisible()
    assert str(store.path) in dialog.keychainWarning.text()

    dialog.tabs.setCurrentWidget(dialog.providersPage)
    click(qtbot, dialog.addProviderButton)
    fill_provider(qtbot, dialog, "openai", "DeepSeek", "https://api.deepseek.com/v1")
    qtbot.keyClicks(dialog.providerApiKey, SECRET)
    await save(qtbot, dialog)

    path = tmp_path / "settings.json"
    assert file_mode(path) == 0o600
    (provider,) = (await store.load()).providers
    assert provider.key_in_keychain is False
    assert json.loads(path.read_text())["api_keys"] == {provider.id: SECRET}
    assert SECRET not in caplog.text


async def test_edit_keeps_key_when_field_left_empty_and_remove_forgets_it(
    qtbot, tmp_path, dict_keyring, restore_look
) -> None:
    store = SettingsStore(tmp_path)
    config = ProviderConfig(
        id="p1", kind="openai", name="Groq", base_url="https://api.groq.com/openai/v1"
    )
    await store.set_api_key("p1", SECRET)
    await store.save(Settings(providers=[config], default_provider_id="p1"))

    dialog = await open_dialog(qtbot, store)
    assert dialog.providerName.text() == "Groq"
    assert dialog.providerApiKey.text() == ""  # a saved key is never shown
    assert "saved" in dialog.providerApiKey.placeholderText()
    dialog.providerName.clear()
    qtbot.keyClicks(dialog.providerName, "Groq fast")
    await save(qtbot, dialog)
    assert (await store.load()).providers[0].name == "Groq fast"
    assert await store.get_api_key("p1") == SECRET

    dialog = await open_dialog(qtbot, store)
    click(qtbot, dialog.forgetKeyButton)
    assert "forgotten" in dialog.providerApiKey.placeholderText()
    assert not dialog.forgetKeyButton.isEnabled()
    await save(qtbot, dialog)
    assert await store.get_api_key("p1") is None
    assert (await store.load()).providers[0].key_in_keychain is False

    await store.set_api_key("p1", SECRET)
    dialog = await open_dialog(qtbot, store)
    click(qtbot, dialog.removeProviderButton)
    assert dialog.providerList.count() == 0
    await save(qtbot, dialog)
    assert (await store.load()).providers == []
    assert dict_keyring.secrets == {}


async def test_first_run_page_offers_what_it_found_and_one_click_adds_it(
    qtbot, tmp_path, dict_keyring, ollama_port, caplog, restore_look
) -> None:
    caplog.set_level(logging.DEBUG)
    store = SettingsStore(tmp_path)
    dialog = SettingsDialog(
        store,
        servers=[LocalServer("Ollama", "ollama", ollama_port)],
        environ={"OPENAI_API_KEY": ENV_SECRET},
        first_run=True,
    )
    qtbot.addWidget(dialog)
    found = asyncio.ensure_future(next_signal(dialog.discoveryFinished))
    dialog.open()
    await found
    assert dialog.tabs.currentWidget() is dialog.firstRunPage
    buttons = {b.property("source"): b for b in dialog.findChildren(QPushButton, "addFoundButton")}
    assert set(buttons) == {f"127.0.0.1:{ollama_port}", "OPENAI_API_KEY"}
    if not dialog.is_loaded:
        await next_signal(dialog.loaded)

    changed = asyncio.ensure_future(next_signal(dialog.settingsChanged))
    click(qtbot, buttons[f"127.0.0.1:{ollama_port}"])
    await changed
    assert dialog.isVisible()  # adding from this page does not close the dialog
    assert buttons[f"127.0.0.1:{ollama_port}"].text() == "Added"
    (ollama,) = (await store.load()).providers
    assert (ollama.kind, ollama.base_url, ollama.default_model) == (
        "ollama",
        f"http://127.0.0.1:{ollama_port}",
        "llama3.2:3b",
    )

    changed = asyncio.ensure_future(next_signal(dialog.settingsChanged))
    click(qtbot, buttons["OPENAI_API_KEY"])
    await changed
    settings = await store.load()
    assert [p.kind for p in settings.providers] == ["ollama", "openai"]
    openai = settings.providers[1]
    assert openai.key_in_keychain and await store.get_api_key(openai.id) == ENV_SECRET
    assert settings.default_provider_id == ollama.id  # the first one added stays default
    assert ENV_SECRET not in caplog.text
    assert ENV_SECRET not in (tmp_path / "settings.json").read_text()


async def test_corrupt_settings_file_is_shown_and_moved_aside_only_on_consent(
    qtbot, tmp_path, no_keyring, restore_look
) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"providers": [ broken')
    before = path.read_bytes()
    store = SettingsStore(tmp_path)
    dialog = await open_dialog(qtbot, store)

    assert dialog.saveError.isVisible() and str(path) in dialog.saveError.text()
    assert dialog.moveAsideButton.isVisible()
    # Saving does not write over the damaged file.
    click(qtbot, dialog.addByHandButton)
    failed = asyncio.ensure_future(next_signal(dialog.saved, seconds=1.0))
    click(qtbot, dialog.saveButton)
    await until(lambda: not dialog.is_saving, "the save to finish")
    assert not failed.done()
    failed.cancel()
    assert path.read_bytes() == before and dialog.isVisible()

    changed = asyncio.ensure_future(next_signal(dialog.settingsChanged))
    click(qtbot, dialog.moveAsideButton)
    await changed
    (aside,) = [p for p in tmp_path.iterdir() if p.name.startswith("settings.json.broken-")]
    assert aside.read_bytes() == before
    assert len((await store.load()).providers) == 1


async def test_language_and_theme_are_saved(qtbot, qapp, tmp_path, no_keyring, restore_look):
    store = SettingsStore(tmp_path)
    dialog = await open_dialog(qtbot, store)
    dialog.tabs.setCurrentWidget(dialog.appearancePage)
    assert [dialog.languageCombo.itemText(i) for i in range(3)][1:] == ["English", "简体中文"]
    dialog.languageCombo.setCurrentIndex(dialog.languageCombo.findData("zh_CN"))
    dialog.themeCombo.setCurrentIndex(dialog.themeCombo.findData("dark"))
    await save(qtbot, dialog)
    settings = await store.load()
    assert (settings.language, settings.theme) == ("zh_CN", "dark")
    assert qapp.property("continuoScheme") == "dark"


async def test_apply_saves_and_keeps_the_dialog_open_in_the_new_language(
    qtbot, qapp, tmp_path, no_keyring, restore_look
):
    store = SettingsStore(tmp_path)
    dialog = await open_dialog(qtbot, store)
    dialog.tabs.setCurrentWidget(dialog.appearancePage)
    assert dialog.applyButton.text() == "Apply"
    dialog.languageCombo.setCurrentIndex(dialog.languageCombo.findData("zh_CN"))
    changed = asyncio.ensure_future(next_signal(dialog.settingsChanged))
    click(qtbot, dialog.applyButton)
    await changed
    assert dialog.isVisible()  # Apply does not close
    assert (await store.load()).language == "zh_CN"
    assert installed_language() == "zh_CN"
    await until(lambda: dialog.applyButton.text() == "应用")  # Qt's own button, too
    assert dialog.tabs.tabText(2) == "语言与外观"
    # Saving the language already in effect installs nothing again (same translators).
    installed = list(_INSTALLED)
    dialog.tabs.setCurrentWidget(dialog.firstRunPage)
    click(qtbot, dialog.addByHandButton)
    await save(qtbot, dialog)
    assert len((await store.load()).providers) == 1
    assert installed_language() == "zh_CN"
    assert all(a is b for a, b in zip(_INSTALLED, installed, strict=True))


class _Emitter(QObject):
    changed = Signal()


def test_emitting_dialog_signals_keeps_bool_refcounts() -> None:
    """PySide6 6.12.0 drops a reference to True on every Python-side ``emit()`` and
    ``disconnect()``; on Python 3.11 the app then aborts ("bool_dealloc") after a few
    thousand signals. This pins a PySide6 without that bug (6.11.3 is fine)."""
    emitter = _Emitter()
    received: list[int] = []

    def slot() -> None:
        received.append(1)

    emitter.changed.connect(slot)
    before = sys.getrefcount(True), sys.getrefcount(False)
    for _ in range(200):
        emitter.changed.emit()
    emitter.changed.disconnect(slot)
    assert len(received) == 200
    assert (sys.getrefcount(True), sys.getrefcount(False)) == before


async def test_save_keeps_what_the_window_saved_meanwhile(
    qtbot, tmp_path, no_keyring, restore_look
) -> None:
    store = SettingsStore(tmp_path)
    dialog = await open_dialog(qtbot, store)
    # While the dialog is open, the window records the open conversation and its geometry.
    window_side = await SettingsStore(tmp_path).load()
    window_side.last_session_id = "conversation-42"
    window_side.window_geometry = "AdnQywAD"
    await SettingsStore(tmp_path).save(window_side)

    dialog.tabs.setCurrentWidget(dialog.providersPage)
    click(qtbot, dialog.addProviderButton)
    await save(qtbot, dialog)

    settings = await store.load()
    assert len(settings.providers) == 1
    assert (settings.last_session_id, settings.window_geometry) == (
        "conversation-42",
        "AdnQywAD",
    )


async def test_closing_and_deleting_the_dialog_mid_save_still_saves(
    qtbot, tmp_path, dict_keyring, ollama_port, restore_look
) -> None:
    store = SettingsStore(tmp_path)
    dialog = SettingsDialog(
        store, servers=[LocalServer("Ollama", "ollama", ollama_port)], environ={}
    )
    found = asyncio.ensure_future(next_signal(dialog.discoveryFinished))
    dialog.open()
    await found
    if not dialog.is_loaded:
        await next_signal(dialog.loaded)
    (button,) = dialog.findChildren(QPushButton, "addFoundButton")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    # The window deletes its dialog once it is closed; the save must neither be lost
    # nor touch the deleted widgets (the loop fixture fails the test on any such error).
    dialog.reject()
    dialog.deleteLater()
    del dialog, button

    async def saved() -> bool:
        return bool((await SettingsStore(tmp_path).load()).providers)

    await until(saved, "the provider to be saved")
