"""The messages by keyboard from the composer, where the focus is (issue 20, item 11).

Alt+Up in the composer enters the transcript at the last message and Alt+Down from the last
message goes back; Shift+F10 in the composer opens the last message's menu. The focused
message wears a frame in the palette's highlight colour (a caret alone was all there was),
and its menu holds what can be done: none of the text widget's disabled entries ("Copy Link
Location" with no link under the cursor, "Copy" with nothing selected).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from tests.support.wait import until
from tests.ui.conftest import open_window
from ui.controller import DB_FILE_NAME


async def _window(data_dir: Path) -> Any:
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="links", title="Links")
        for message in (
            UserMessage(content="Where are the docs?"),
            AssistantMessage(content="In [the manual](https://example.com/manual), part two."),
        ):
            await storage.append("links", "seed", message)
    finally:
        await storage.close()
    window = await open_window(data_dir)
    await until(lambda: len(window.transcript.message_views()) == 2, what="the two messages")
    window.activateWindow()
    await until(lambda: QApplication.activeWindow() is window, what="the window active")
    window.composer.setFocus()
    await until(lambda: window.composer.hasFocus(), what="the composer focused")
    return window


def _frame_colour(view: Any) -> Any:
    # The middle of the row's left edge, where the frame is drawn.
    return view.grab().toImage().pixelColor(1, view.height() // 2)


async def test_alt_arrows_move_between_the_composer_and_the_messages(tmp_path: Path) -> None:
    window = await _window(tmp_path)
    question, answer = window.transcript.message_views()
    highlight = answer.palette().color(QPalette.ColorRole.Highlight)
    assert _frame_colour(answer) != highlight

    QTest.keyClick(window.composer, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert window.transcript.focused_message() is answer
    assert _frame_colour(answer) == highlight  # the focused message is framed
    assert _frame_colour(question) != highlight

    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert window.transcript.focused_message() is question
    assert _frame_colour(question) == highlight and _frame_colour(answer) != highlight

    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert window.transcript.focused_message() is answer
    # Below the last message is the composer again.
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert QApplication.focusWidget() is window.composer
    assert _frame_colour(answer) != highlight


async def test_shift_f10_in_the_composer_opens_the_last_messages_menu(tmp_path: Path) -> None:
    window = await _window(tmp_path)
    answer = window.transcript.message_views()[-1]
    QTest.keyClick(window.composer, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    await until(lambda: getattr(answer, "context_menu", None) is not None, what="the menu")
    menu = answer.context_menu
    await until(menu.isVisible, what="the menu shown")
    assert window.transcript.focused_message() is answer
    entries = [a for a in menu.actions() if not a.isSeparator()]
    assert [a.text() for a in entries if not a.isEnabled()] == []  # no greyed-out entries
    assert not any("Link Location" in a.text() for a in entries)
    names = [a.objectName() for a in entries if a.objectName().endswith("MessageAction")]
    assert names == ["copyMessageAction", "regenerateMessageAction", "branchMessageAction"]
    menu.close()


async def test_a_click_into_a_message_draws_no_frame(tmp_path: Path) -> None:
    # The frame is for the keyboard: a click (to select text) shows the caret only, also
    # after the message's menu opened and closed.
    window = await _window(tmp_path)
    answer = window.transcript.message_views()[-1]
    highlight = answer.palette().color(QPalette.ColorRole.Highlight)
    QTest.mouseClick(answer.body.viewport(), Qt.MouseButton.LeftButton)
    await until(lambda: window.transcript.focused_message() is answer, what="the click's focus")
    assert _frame_colour(answer) != highlight
    menu = window.transcript.open_message_menu()
    await until(menu.isVisible, what="the menu")
    menu.close()
    await until(lambda: not menu.isVisible(), what="the menu closed")
    await until(lambda: window.transcript.focused_message() is answer, what="the focus back")
    assert _frame_colour(answer) != highlight
