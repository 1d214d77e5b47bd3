"""Changing the language in Settings changes the open window at once, without a restart.

A conversation is stored with real `SQLiteSessionStorage` first (a tool call that finished, an
answer the person stopped, an error that points to Settings, and an untitled conversation),
then the window opens in English, the person picks 简体中文 in Settings and presses Apply,
and every string we look at — buttons, menus, placeholders, the stopped answer's status line,
the tool card's state, the Resume text, the dialog's own tabs — reads in Chinese; then back.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QWidget

from engine import (
    AssistantMessage,
    SQLiteSessionStorage,
    StopInfo,
    StopReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from tests.support.wait import until
from tests.ui.conftest import WINDOW_OBJECT_NAMES, next_signal, open_window, seed_provider
from ui.common.i18n import install_translator
from ui.controller import DB_FILE_NAME
from ui.conversation.sessions import SESSION_ID_ROLE

CALL = ToolCall("call_1", "write_file", {"path": "notes.txt"})
HISTORY = [
    UserMessage(content="Write the notes"),
    AssistantMessage(tool_calls=(CALL,)),
    ToolMessage(tool_call_id="call_1", name="write_file", content="written"),
    UserMessage(content="Show me a loop"),
    AssistantMessage(
        content="Here is one:\n\n```python\nfor i in range(3):\n    print(i)\n```\n\nAnd then",
        stop=StopInfo(StopReason.INTERRUPTED, raw="cancelled"),  # Stop was pressed
    ),
]
ERROR = "The provider refused the API key. Check the key in Settings."

#: The widgets DESIGN.md names; each must have an accessible name in every language.
DESIGN_NAMES = (*WINDOW_OBJECT_NAMES, "settingsDialog")
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def english(qapp: QApplication) -> Iterator[None]:
    """Start in English and leave the app in English (and its own look) for the next test."""
    install_translator(qapp, "en")
    style, palette, sheet = qapp.style().name(), qapp.palette(), qapp.styleSheet()
    yield
    install_translator(qapp, "en")
    if style:
        qapp.setStyle(style)
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)
    for name in ("continuoTheme", "continuoScheme", "continuoFusion"):
        qapp.setProperty(name, None)


async def _stored_conversation(data_dir: Any, server: Any) -> Any:
    store = await seed_provider(data_dir, server)
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="s-untitled")
        await storage.create_session(session_id="s-story", title="Loops")
        for message in HISTORY:
            await storage.append("s-story", "earlier-run", message)
        await storage.update_metadata(
            "s-story", {"last_error": {"message": ERROR, "action": "settings"}}
        )
    finally:
        await storage.close()
    settings = await store.load()
    settings.last_session_id = "s-story"
    await store.save(settings)
    return store


def _rows(window: Any) -> tuple[Any, Any]:
    window.transcript.flush()
    views = window.transcript.views()
    (answer,) = [v for v in views if v.property("state") == "stopped"]
    (card,) = [v for v in views if v.objectName() == "toolCard"]
    return answer, card


def _untitled_title(window: Any) -> str:
    model = window.session_list.model()
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        if index.data(SESSION_ID_ROLE) == "s-untitled":
            return str(index.data(Qt.ItemDataRole.DisplayRole))
    raise AssertionError("the untitled conversation is not listed")


async def _open_settings(window: Any) -> Any:
    window.settings_button.click()
    dialog = window.settings_dialog
    assert dialog is not None
    # Shown once its settings are read; loaded, and done looking for local servers (a probe
    # cancelled as the test ends would finish outside the event loop).
    await until(
        lambda: dialog.isVisible() and dialog.is_loaded and dialog.probeAgainButton.isEnabled(),
        what="the settings to load and the local servers to be probed",
    )
    dialog.tabs.setCurrentWidget(dialog.appearancePage)
    return dialog


async def _choose_language(
    qtbot: Any, window: Any, dialog: Any, language: str, button: Any
) -> None:
    """Pick a language and press ``button``; return once the window has reloaded settings
    and listed the models again (so no request is in flight when the test ends)."""
    dialog.languageCombo.setCurrentIndex(dialog.languageCombo.findData(language))
    # The window's side of a save (Save also closes and deletes the dialog meanwhile).
    changed = asyncio.ensure_future(next_signal(window.controller.modelsChanged))
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    await changed


def _english_everywhere(window: Any) -> None:
    answer, card = _rows(window)
    assert window.windowTitle() == "Loops — Continuo"  # the open conversation, then the app
    assert window.send_button.text() == "Send"
    assert window.new_chat_button.text() == "New chat"
    assert (window.menus.file_menu.title(), window.menus.chat_menu.title()) == (
        "&File",
        "&Conversation",
    )
    assert window.menus.settings_action.text() == "&Settings…"
    assert window.composer.placeholderText().startswith("Write a message…")
    assert window.session_filter.placeholderText() == "Search conversations"
    assert answer.status.text() == "⚠ Stopped. The partial answer above is saved."
    assert ">Copy<" in answer.body.toHtml()
    assert card.state.text() == "done"
    assert window.resume_button.text() == "Resume"
    assert window.resume_label.text() == window.resume_bar.resume_text(window.resume_bar.point)
    assert "Open settings" in window.error_banner.text()
    assert _untitled_title(window) == "New conversation"


async def test_saving_a_language_switches_the_open_window_and_dialog_at_once(
    qtbot, tmp_path, provider_server, english
) -> None:
    store = await _stored_conversation(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    await until(lambda: window.resume_button.isVisible(), what="the Resume row")
    _english_everywhere(window)
    english_resume = window.resume_label.text()

    dialog = await _open_settings(window)
    assert dialog.tabs.tabText(0) == "Providers"
    await _choose_language(qtbot, window, dialog, "zh_CN", dialog.applyButton)
    # Apply keeps the dialog open; the new language arrives with Qt's LanguageChange event.
    await until(lambda: window.send_button.text() == "发送", what="the window in Chinese")

    answer, card = _rows(window)
    assert window.windowTitle() == "Loops — Continuo"
    assert window.new_chat_button.text() == "新对话"
    assert window.stop_button.text() == "停止"
    assert (window.menus.file_menu.title(), window.menus.chat_menu.title()) == (
        "文件(&F)",
        "对话(&C)",
    )
    assert window.menus.settings_action.text() == QCoreApplication.translate(
        "WindowMenus", "&Settings…"
    )
    assert CJK.search(window.menus.settings_action.text())
    assert window.composer.placeholderText() == "输入消息…（Enter 发送，Shift+Enter 换行）"
    assert answer.status.text() == "⚠ 已停止。上面的部分回答已保存。"
    assert ">复制<" in answer.body.toHtml() and ">Copy<" not in answer.body.toHtml()
    assert card.state.text() == "已完成"
    assert window.resume_label.text() == "“继续”会重新写这个回答。" != english_resume
    assert "打开设置" in window.error_banner.text()
    assert ERROR in window.error_banner.text()  # the controller's sentence stays as it was made
    assert _untitled_title(window) == "新对话"
    # The dialog itself, still open.
    assert dialog.isVisible()
    assert [dialog.tabs.tabText(i) for i in range(3)] == ["服务商", "在本机发现", "语言与外观"]
    assert dialog.windowTitle() == "设置"
    assert dialog.testConnectionButton.text() == "测试连接"
    assert dialog.languageCombo.itemText(0) == "跟随系统"
    assert CJK.search(dialog.discoveryStatus.text())  # "nothing found" on this machine
    # Every visible button of the window and the dialog speaks Chinese (names of things,
    # like a tool's, are not translated).
    for top in (window, dialog):
        for button in top.findChildren(QAbstractButton):
            if button.isVisible() and button.text():
                assert CJK.search(button.text()), (button.objectName(), button.text())

    await _choose_language(qtbot, window, dialog, "en", dialog.saveButton)
    await until(lambda: window.send_button.text() == "Send", what="the window in English")
    assert not shiboken6.isValid(dialog) or not dialog.isVisible()  # Save closes the dialog
    _english_everywhere(window)
    assert (await store.load()).language == "en"


async def test_design_widgets_have_accessible_names_in_both_languages(
    qapp, tmp_path, provider_server, english
) -> None:
    store = await _stored_conversation(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    # The models are listed (no request left in flight when the test ends).
    await until(lambda: window.model_picker.count() == 2, what="the models to be listed")
    dialog = await _open_settings(window)

    def names() -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for name in DESIGN_NAMES:
            widgets = window.findChildren(QWidget, name)
            assert widgets, f"no widget named {name}"
            found[name] = [w.accessibleName() for w in widgets]
        return found

    english_names = names()
    for name, accessible in english_names.items():
        assert all(accessible), (name, accessible)

    install_translator(qapp, "zh_CN")
    await until(lambda: window.send_button.accessibleName() == "发送", what="Chinese names")
    chinese_names = names()
    for name, accessible in chinese_names.items():
        assert all(accessible), (name, accessible)
        assert all(CJK.search(a) for a in accessible), (name, accessible)
    assert chinese_names != english_names
    dialog.reject()
