"""Settings opens as often as a person asks for it, by every route, however it was closed.

Each closed dialog is deleted (``deleteLater``); the window used to keep the deleted one and
every later open touched it (``RuntimeError: Internal C++ object (SettingsDialog) already
deleted``), so Settings opened once per run. Here each route (the Settings button, Ctrl+, ,
File › Settings…, the error banner's "Open settings" link) opens it five times in a row, and
each time it is closed by a different key or button (Save, Cancel, Esc, Enter).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from tests.support.wait import until
from tests.ui.conftest import open_window
from ui.settings.dialog import SettingsDialog
from ui.settings.store import SettingsStore


def _open_by_button(window: Any) -> None:
    window.settings_button.click()


def _open_by_shortcut(window: Any) -> None:
    focused = QApplication.focusWidget()
    assert focused is not None and focused.window() is window
    QTest.keyClick(focused, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)


def _open_by_menu(window: Any) -> None:
    # File › Settings… is this action: the menu entry triggers it.
    assert window.menus.settings_action in window.menus.file_menu.actions()
    window.menus.settings_action.trigger()


def _open_by_banner_link(window: Any) -> None:
    assert window.error_banner.isVisible() and 'href="settings"' in window.error_banner.text()
    window.error_banner.linkActivated.emit("settings")


def _close_by_save(dialog: SettingsDialog) -> None:
    dialog.saveButton.click()


def _close_by_cancel(dialog: SettingsDialog) -> None:
    dialog.buttonBox.button(QDialogButtonBox.StandardButton.Cancel).click()


def _close_by_escape(dialog: SettingsDialog) -> None:
    QTest.keyClick(dialog, Qt.Key.Key_Escape)


def _close_by_enter(dialog: SettingsDialog) -> None:
    QTest.keyClick(dialog, Qt.Key.Key_Return)


ROUTES: list[Callable[[Any], None]] = [
    _open_by_button,
    _open_by_shortcut,
    _open_by_menu,
    _open_by_banner_link,
]
CLOSINGS: list[Callable[[SettingsDialog], None]] = [
    _close_by_save,
    _close_by_cancel,
    _close_by_escape,
    _close_by_enter,
    _close_by_save,
]


async def test_settings_opens_again_by_every_route_after_every_way_of_closing(tmp_path) -> None:
    store = SettingsStore(tmp_path, use_keychain=False)  # no provider yet
    window = await open_window(tmp_path, settings_store=store)
    window.activateWindow()
    await until(lambda: QApplication.activeWindow() is window, what="the window active")
    # A message with no provider: the banner offers "Open settings".
    window.composer.setPlainText("Hello before any provider")
    window.send_button.click()
    await until(lambda: window.error_banner.isVisible(), what="the no-provider banner")
    seen: list[SettingsDialog] = []
    for route in ROUTES:
        for close in CLOSINGS:
            # A desktop's window manager gives the window back its focus; offscreen has none.
            window.activateWindow()
            window.composer.setFocus()
            await until(lambda: QApplication.focusWidget() is window.composer, what="focus back")
            route(window)
            dialog = window.settings_dialog
            assert isinstance(dialog, SettingsDialog), route.__name__
            await until(lambda d=dialog: d.isVisible(), what=f"{route.__name__} opens Settings")
            assert all(dialog is not old for old in seen), "a fresh dialog each time"
            seen.append(dialog)
            await until(
                lambda d=dialog: d.is_loaded and d.probeAgainButton.isEnabled(),
                what="the settings loaded and the local servers probed",
            )
            close(dialog)
            await until(
                lambda d=dialog: not shiboken6.isValid(d) or not d.isVisible(),
                what=f"{close.__name__} closes Settings (opened by {route.__name__})",
            )
    assert len(seen) == len(ROUTES) * len(CLOSINGS)
    await window.controller.tasks.wait_idle()
