"""The model picker follows the settings while the settings dialog is still open.

Each save in the dialog (Apply, or a one-click add on the first-run page) makes the window
reload its settings and list every provider's models again, so the picker shows a provider's
models the moment it is added, and keeps the model the person picked when it still exists.
The providers are loopback servers (tests/support/provider_server.py) serving ``/v1/models``.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from PySide6.QtCore import Qt

from tests.support.provider_server import ProviderServer
from tests.support.wait import until
from tests.ui.conftest import close_window, next_signal, open_window, seed_provider
from ui.settings.store import ProviderConfig, SettingsStore


def _picker(window: Any) -> list[str]:
    picker = window.model_picker
    return [picker.itemText(i) for i in range(picker.count())]


async def _add_provider(qtbot: Any, window: Any, dialog: Any, name: str, url: str) -> None:
    """Add an OpenAI-compatible provider by hand and press Apply; wait for the window's reload."""
    dialog.tabs.setCurrentWidget(dialog.providersPage)
    qtbot.mouseClick(dialog.addProviderButton, Qt.MouseButton.LeftButton)
    dialog.providerName.clear()
    qtbot.keyClicks(dialog.providerName, name)
    dialog.providerBaseUrl.clear()
    qtbot.keyClicks(dialog.providerBaseUrl, url)
    reloaded = asyncio.ensure_future(next_signal(window.controller.modelsChanged))
    qtbot.mouseClick(dialog.applyButton, Qt.MouseButton.LeftButton)
    await reloaded


async def test_picker_lists_a_new_providers_models_while_settings_is_open(
    qtbot, tmp_path, provider_server
) -> None:
    store = SettingsStore(tmp_path, use_keychain=False)
    window = await open_window(tmp_path, settings_store=store)
    assert _picker(window) == []
    qtbot.mouseClick(window.settings_button, Qt.MouseButton.LeftButton)
    dialog = window.settings_dialog
    await until(
        lambda: dialog.is_loaded and dialog.probeAgainButton.isEnabled(),
        what="the settings to load and the local servers to be probed",
    )

    await _add_provider(qtbot, window, dialog, "Loopback", provider_server.openai_url)
    assert dialog.isVisible()  # Apply saved without closing
    assert _picker(window) == ["loopback-echo — Loopback", "loopback-think — Loopback"]
    assert window.model_picker.currentText() == "loopback-echo — Loopback"

    # The person picks the second model, then adds another provider without closing Settings.
    window.model_picker.setFocus()
    qtbot.keyClick(window.model_picker, Qt.Key.Key_Down)
    assert window.model_picker.currentText() == "loopback-think — Loopback"
    await until(lambda: window.controller.catalog.choice.model == "loopback-think", what="the choice")
    with ProviderServer(models=("other-model",)) as other:
        await _add_provider(qtbot, window, dialog, "Other", other.openai_url)
        assert dialog.isVisible()
        assert _picker(window) == [
            "loopback-echo — Loopback",
            "loopback-think — Loopback",
            "other-model — Other",
        ]
        assert window.model_picker.currentText() == "loopback-think — Loopback"  # kept

        # Removing the chosen model's provider falls back to one that exists.
        dialog.providerList.setCurrentRow(0)
        assert dialog.providerName.text() == "Loopback"
        qtbot.mouseClick(dialog.removeProviderButton, Qt.MouseButton.LeftButton)
        reloaded = asyncio.ensure_future(next_signal(window.controller.modelsChanged))
        qtbot.mouseClick(dialog.applyButton, Qt.MouseButton.LeftButton)
        await reloaded
        assert _picker(window) == ["other-model — Other"]
        assert window.model_picker.currentText() == "other-model — Other"
        dialog.reject()


async def test_settings_saved_during_the_first_model_listing_leave_the_newest_list(
    qtbot, tmp_path, provider_server
) -> None:
    """A save while the window is still listing models at start (the first-run dialog's
    one-click add can do that): the older listing must not overwrite the newer list, and no
    adapter may be left with an open connection (pytest reports an unclosed socket)."""
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    controller = window.controller
    with ProviderServer(models=("other-model",)) as other:
        settings = await store.load()
        settings.providers.append(
            ProviderConfig(id="other", kind="openai", name="Other", base_url=other.openai_url)
        )
        await store.save(settings)
        # What the window does on the dialog's settingsChanged, while "list models" runs.
        assert any(t.get_name() == "list models" for t in controller.tasks)
        await controller.spawn(controller.reload_settings(), "reload settings")
        await until(
            lambda: not any(t.get_name() == "list models" for t in controller.tasks),
            what="the first listing to end",
        )
        assert _picker(window) == [
            "loopback-echo — Loopback",
            "loopback-think — Loopback",
            "other-model — Other",
        ]
        await close_window(window)
        gc.collect()  # an adapter dropped without closing would warn of its socket here
