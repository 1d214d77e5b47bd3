"""The window's own dialogs: Settings (one at a time, however it is asked for) and Help › About.

Each opens with ``open()`` over the window (never a nested ``exec()``), and is forgotten when
it closes (Qt deletes it then: a kept reference would touch a deleted C++ object the next
time). Saving Settings asks the controller to read them again.

Settings is shown once its pages hold the settings it read (in a worker thread): shown at
once, it was an empty frame for over a second on a busy machine. A keychain that takes long
to answer (waiting to be unlocked) does not hide it for long: after `SETTINGS_SHOWN_WITHIN_MS`
it is shown as it is, and fills in as the settings arrive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from ..controller_placeholder import WindowController
    from ..settings.dialog import SettingsDialog
    from .about_dialog import AboutDialog

__all__ = ["SETTINGS_SHOWN_WITHIN_MS", "WindowDialogs"]

#: how long Settings may wait for its settings before it is shown without them
SETTINGS_SHOWN_WITHIN_MS = 600


class WindowDialogs(QObject):
    """The Settings and About dialogs of one window."""

    def __init__(self, window: QWidget, controller: Callable[[], WindowController]) -> None:
        super().__init__(window)
        self._window = window
        self._controller = controller  # the window's controller now (the placeholder first)
        self.settings: SettingsDialog | None = None  #: the Settings dialog while it is open
        self.about: AboutDialog | None = None  #: the About dialog while it is open

    def open_settings(self, first_run: bool = False) -> SettingsDialog | None:
        """Open Settings (or raise the open one); None before the settings can be read."""
        c = self._controller()
        store = c.settings_store
        if store is None:
            return None
        if self.settings is not None:  # open already (a closed one is forgotten)
            self.settings.raise_()
            return self.settings
        from ..settings.dialog import SettingsDialog

        dialog = SettingsDialog(store, self._window, first_run=bool(first_run))
        dialog.settingsChanged.connect(lambda: c.spawn(c.reload_settings(), "reload settings"))
        dialog.finished.connect(lambda _result: self._forget_settings(dialog))
        self.settings = dialog
        if dialog.is_loaded:
            dialog.open()
        else:
            dialog.loaded.connect(lambda: self._show_settings(dialog))
            QTimer.singleShot(SETTINGS_SHOWN_WITHIN_MS, lambda: self._show_settings(dialog))
        return dialog

    def _show_settings(self, dialog: SettingsDialog) -> None:
        """Show Settings (once; not after it was closed or deleted)."""
        if self.settings is dialog and shiboken6.isValid(dialog) and not dialog.isVisible():
            dialog.open()

    def _forget_settings(self, dialog: SettingsDialog) -> None:
        if self.settings is dialog:
            self.settings = None
        dialog.deleteLater()

    def open_tool_settings(self) -> SettingsDialog | None:
        """Open Settings at its Tools page (the Tools button's "Set up tools…")."""
        dialog = self.open_settings()
        if dialog is not None:
            dialog.tabs.setCurrentWidget(dialog.toolsPage)
        return dialog

    def open_about(self) -> AboutDialog:
        """Help › About: the version, the data folder and the bundled parts' licences."""
        from .about_dialog import AboutDialog

        if self.about is not None and self.about.isVisible():
            self.about.raise_()
            return self.about
        c = self._controller()
        dialog = AboutDialog(c.data_dir, self._window, spawn=c.spawn if c.ready else None)
        dialog.finished.connect(lambda _result: setattr(self, "about", None))
        dialog.finished.connect(dialog.deleteLater)
        self.about = dialog
        dialog.open()
        return dialog
