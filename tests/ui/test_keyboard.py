"""The window by keyboard alone: Tab and Shift+Tab reach every part in reading order (a long
conversation is one stop, not one per message), and the shortcuts work as key presses.

Keys go through `QTest.keyClick` to whichever widget has focus, as a person's would; nothing
calls a slot or triggers an action directly. (Esc stopping an answer from the composer is
tested in test_streaming.py.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QInputDialog, QWidget

from engine import AssistantMessage, SQLiteSessionStorage, ToolCall, ToolMessage, UserMessage
from tests.support.scripted import ScriptedModel, Turn
from tests.support.wait import until
from tests.ui.conftest import open_window
from ui.controller import DB_FILE_NAME

#: Tab from the conversation filter visits these, in this order, and comes back.
READING_ORDER = (
    "sessionFilter",
    "sessionList",
    "modelPicker",
    "transcript",
    "composer",
    "sendButton",
    "newChatButton",
)


async def _seed(data_dir: Path) -> None:
    call = ToolCall("call_1", "search_notes", {"query": "backoff"})
    messages: list[Any] = []
    for n in range(20):
        messages += [UserMessage(content=f"question {n}"), AssistantMessage(content=f"answer {n}")]
    messages += [
        UserMessage(
            content="Where did I write about backoff? See [the notes](https://example.com)"
        ),
        AssistantMessage(content="Let me look.", tool_calls=(call,)),
        ToolMessage(tool_call_id="call_1", name="search_notes", content="notes/2026-03.md"),
        AssistantMessage(content="In your March notes: [open](https://example.com/march)."),
    ]
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="old", title="Older chat")
        await storage.append("old", "seed", UserMessage(content="hello"))
        await storage.create_session(session_id="notes", title="Backoff notes")
        for message in messages:
            await storage.append("notes", "seed", message)
    finally:
        await storage.close()


async def _settings(data_dir: Path) -> Any:
    from ui.settings.store import ProviderConfig, Settings, SettingsStore

    store = SettingsStore(data_dir, use_keychain=False)
    config = ProviderConfig(
        id="local", kind="openai", name="Local", base_url="http://127.0.0.1:9/v1",
        default_model="scripted",
    )  # fmt: skip
    await store.save(Settings(providers=[config], default_provider_id="local"))
    return store


async def _keyboard_window(data_dir: Path) -> Any:
    await _seed(data_dir)
    model = ScriptedModel([Turn(text="An answer.")])

    async def factory(config: Any, model_id: str | None) -> Any:
        return model

    window = await open_window(
        data_dir, settings_store=await _settings(data_dir), model_factory=factory
    )
    await until(lambda: window.model_picker.count() > 0, what="the model picker filled")
    await until(lambda: window.transcript.model() is not None and window.transcript.views())
    window.activateWindow()
    await until(lambda: QApplication.activeWindow() is window, what="the window active")
    return window


def _focused() -> QWidget:
    widget = QApplication.focusWidget()
    assert widget is not None, "nothing has keyboard focus"
    return widget


def _press(key: Qt.Key, modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    QTest.keyClick(_focused(), key, modifier)


async def _cycle(key: Qt.Key, modifier: Qt.KeyboardModifier, start: QWidget) -> list[QWidget]:
    """Press the key until focus comes back to ``start``; the widgets visited on the way."""
    visited: list[QWidget] = []
    for _ in range(60):
        _press(key, modifier)
        await until(lambda: QApplication.focusWidget() is not None)
        if _focused() is start:
            return visited
        visited.append(_focused())
    raise AssertionError(f"focus never came back: {[w.objectName() for w in visited]}")


async def test_tab_and_shift_tab_reach_every_part_in_reading_order(tmp_path: Path) -> None:
    window = await _keyboard_window(tmp_path)
    _press(  # Search all conversations
        Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    start = _focused()
    assert start is window.session_filter

    forward = [start, *await _cycle(Qt.Key.Key_Tab, Qt.KeyboardModifier.NoModifier, start)]
    names = [w.objectName() for w in forward]
    assert [n for n in names if n in READING_ORDER] == list(READING_ORDER), names
    # The 44 messages are one stop (the transcript); the tool card's Result button is one
    # more, between the transcript and the composer.
    assert len(forward) <= len(READING_ORDER) + 4, names
    card = window.transcript.views()[-2]
    assert card.objectName() == "toolCard"
    result = forward[names.index("transcript") + 1]
    assert result.parent() is card and result.isVisible()
    assert names.index("transcript") < forward.index(result) < names.index("composer")
    # Every stop shows where focus is, and says what it is to a screen reader.
    for widget in forward:
        assert widget.isVisible() and widget.isEnabled(), widget.objectName()
    for name in READING_ORDER:
        assert window.findChild(QWidget, name).accessibleName(), name

    # Shift+Tab goes the same way back.
    backward = [start, *await _cycle(Qt.Key.Key_Tab, Qt.KeyboardModifier.ShiftModifier, start)]
    assert backward == [forward[0], *reversed(forward[1:])]


async def test_transcript_scrolls_by_keyboard(tmp_path: Path) -> None:
    window = await _keyboard_window(tmp_path)
    view = window.transcript
    view.setFocus()
    bar = view.verticalScrollBar()
    await until(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), what="at the end")
    _press(Qt.Key.Key_PageUp)
    assert 0 <= bar.value() < bar.maximum()
    _press(Qt.Key.Key_PageDown)
    assert bar.value() == bar.maximum()


async def test_shortcuts_work_from_the_keyboard(tmp_path: Path) -> None:
    window = await _keyboard_window(tmp_path)
    sessions = window.controller.sessions
    window.session_list.setFocus()
    assert window.controller.current == "notes"

    # Ctrl+L: write a message, from wherever focus is.
    _press(Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert _focused() is window.composer

    # F2: rename the open conversation in a dialog typed into and accepted with Enter.
    window.session_list.setFocus()
    _press(Qt.Key.Key_F2)
    dialog = window.findChild(QInputDialog, "renameDialog")
    assert dialog is not None and dialog.isVisible()
    await until(lambda: _focused().window() is dialog, what="focus in the rename dialog")
    _press(Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(_focused(), "Retry notes")
    _press(Qt.Key.Key_Return)
    await until(lambda: sessions.info("notes").title == "Retry notes", what="the new title")
    await until(lambda: window.findChild(QInputDialog) is None, what="the dialog gone")
    # A desktop's window manager gives the window back its focus; offscreen has none.
    window.activateWindow()
    await until(lambda: QApplication.focusWidget() is window.session_list, what="focus back")

    # Ctrl+N: a new, empty conversation, shown, with the composer ready to type in.
    count = sessions.rowCount()
    window.session_list.setFocus()
    _press(Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    await until(lambda: sessions.rowCount() == count + 1, what="a new conversation")
    await until(lambda: window.controller.current not in (None, "notes", "old"))
    await until(lambda: window.transcript.model().rowCount() == 0)
    assert _focused() is window.composer

    # Typed and sent with Enter alone.
    QTest.keyClicks(_focused(), "Hello by keyboard")
    _press(Qt.Key.Key_Return)
    model = window.transcript.model()
    await until(lambda: [i.text for i in model.items()] == ["Hello by keyboard", "An answer."])
