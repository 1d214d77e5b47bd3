"""The window's menus: File, Conversation and Help, their actions and shortcuts.

`WindowMenus` builds the actions (each runs what `MenuSlots` gives it: the window's parts, never
the window itself), puts them in the menu bar and sets their words. File's Export, Import,
Back up and Restore are `ui.archive.ArchiveActions`', installed before Settings. Rename and
Delete are also the conversation list's context menu (Delete's shortcut only there, so it
never deletes a conversation while the person edits text).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QWidget

__all__ = ["MenuSlots", "WindowMenus"]


@dataclass(frozen=True, slots=True)
class MenuSlots:
    """What each menu command runs."""

    new_chat: Callable[[], Any]
    rename: Callable[[], Any]
    delete: Callable[[], Any]
    settings: Callable[[], Any]
    find: Callable[[], Any]  # find in the open conversation
    search: Callable[[], Any]  # search all conversations (the list's field)
    write: Callable[[], Any]  # the focus to the composer
    quit: Callable[[], Any]
    about: Callable[[], Any]
    check_file: Callable[[], Any]


class WindowMenus(QObject):
    """The menu bar of one window and its actions (see the module docstring)."""

    def __init__(self, window: QMainWindow, slots: MenuSlots, session_list: QWidget) -> None:
        super().__init__(window)
        from ..archive import ArchiveActions  # Export, Import, Back up, Restore

        def action(shortcut: Any, slot: Callable[[], Any]) -> QAction:
            act = QAction(window)
            if shortcut is not None:
                act.setShortcut(QKeySequence(shortcut))
                act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.triggered.connect(slot)
            window.addAction(act)
            return act

        keys = QKeySequence.StandardKey
        self.new_action = action(keys.New, slots.new_chat)
        self.rename_action = action(Qt.Key.Key_F2, slots.rename)
        self.delete_action = action(keys.Delete, slots.delete)
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        session_list.addAction(self.rename_action)
        session_list.addAction(self.delete_action)
        self.settings_action = action(keys.Preferences, slots.settings)
        if self.settings_action.shortcut().isEmpty():
            self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        self.find_action = action(keys.Find, slots.find)
        self.search_action = action(QKeySequence("Ctrl+Shift+F"), slots.search)
        self.focus_composer_action = action(QKeySequence("Ctrl+L"), slots.write)
        self.quit_action = action(keys.Quit, slots.quit)
        self.about_action = action(None, slots.about)
        self.check_file_action = action(None, slots.check_file)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        bar = window.menuBar()
        self.file_menu = bar.addMenu("")
        self.file_menu.setObjectName("fileMenu")
        for act in (self.new_action, self.settings_action, self.quit_action):
            self.file_menu.addAction(act)
        self.archive_actions = ArchiveActions(window)
        self.archive_actions.install(self.file_menu, before=self.settings_action)
        self.chat_menu = bar.addMenu("")
        self.chat_menu.setObjectName("conversationMenu")
        for act in (
            self.rename_action,
            self.delete_action,
            self.find_action,
            self.search_action,
            self.focus_composer_action,
        ):
            self.chat_menu.addAction(act)
        self.help_menu = bar.addMenu("")
        self.help_menu.setObjectName("helpMenu")
        self.help_menu.addAction(self.about_action)
        self.help_menu.addAction(self.check_file_action)

    def conversation_shown(self, session_id: str) -> None:
        """Rename and Delete act on the shown conversation: none, nothing to act on."""
        self.rename_action.setEnabled(bool(session_id))
        self.delete_action.setEnabled(bool(session_id))

    def retranslate(self) -> None:
        for act, text in (
            (self.new_action, self.tr("&New chat")),
            (self.rename_action, self.tr("&Rename…")),
            (self.delete_action, self.tr("&Delete…")),
            (self.settings_action, self.tr("&Settings…")),
            (self.find_action, self.tr("&Find in this conversation")),
            (self.search_action, self.tr("&Search all conversations")),
            (self.focus_composer_action, self.tr("Write a &message")),
            (self.quit_action, self.tr("&Quit")),
            (self.about_action, self.tr("&About Continuo")),
            (self.check_file_action, self.tr("&Check the conversation file")),
        ):
            act.setText(text)
        self.file_menu.setTitle(self.tr("&File"))
        self.chat_menu.setTitle(self.tr("&Conversation"))
        self.help_menu.setTitle(self.tr("&Help"))
        self.archive_actions.retranslate()
