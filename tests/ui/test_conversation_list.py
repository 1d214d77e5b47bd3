"""The conversation list a daily user reads: date sections, a mark on conversations waiting for
Resume, one empty "New conversation" however often Ctrl+N is pressed, the open conversation in
the window's title, and a filter that never switches the open conversation.

Each test opens the real window over a real SQLite file seeded as earlier runs left it (the
dates are set in the file, as days of use would have).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QLocale, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QStyleOptionViewItem

from engine import (
    AssistantMessage,
    SQLiteSessionStorage,
    StopInfo,
    StopReason,
    UserMessage,
)
from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import drain, open_window, seed_provider
from ui.common.i18n import install_translator
from ui.controller import DB_FILE_NAME
from ui.conversation.sessions import SECTION_ROLE, SESSION_ID_ROLE, WAITING_ROLE

DAY = 86400.0
_CTRL = Qt.KeyboardModifier.ControlModifier
_CUT = StopInfo(StopReason.INTERRUPTED, raw="network_error", message="The connection broke.")


async def _seed(data_dir: Path, rows: list[tuple[str, str, float, str]]) -> None:
    """Conversations ``(id, title, age in days, ending)``; ending is "done", "cut" or "empty"."""
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        for sid, title, _age, ending in rows:
            await storage.create_session(session_id=sid, title=title)
            if ending == "empty":
                continue
            await storage.append(sid, "seed", UserMessage(content=f"About {title}"))
            stop = _CUT if ending == "cut" else None
            await storage.append(sid, "seed", AssistantMessage(content="Half an answer", stop=stop))
    finally:
        await storage.close()
    now = time.time()
    with sqlite3.connect(data_dir / DB_FILE_NAME) as db:
        for sid, _title, age, _ending in rows:
            db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now - age * DAY, sid))


def _rows(window: Any, role: int = Qt.ItemDataRole.DisplayRole) -> list[Any]:
    model = window.filter_model
    return [model.index(row, 0).data(role) for row in range(model.rowCount())]


async def _new_chat_done(controller: Any) -> None:
    await until(lambda: not any(t.get_name() == "new chat" for t in controller.tasks))


async def _settled(controller: Any) -> None:
    """Let the tasks the last key started run (an "open" would switch the conversation)."""
    await drain()
    await until(lambda: not any(t.get_name() == "open" for t in controller.tasks))


def _month(age_days: float) -> str:
    day = dt.datetime.fromtimestamp(time.time() - age_days * DAY, dt.UTC).astimezone().date()
    name = QLocale().standaloneMonthName(day.month, QLocale.FormatType.LongFormat)
    return f"{name} {day.year}"


async def test_the_list_is_grouped_by_date_in_the_windows_language(tmp_path, qapp) -> None:
    rows = [
        ("a", "Today's plan", 0, "done"),
        ("b", "Yesterday's notes", 1, "done"),
        ("c", "Early this week", 4, "done"),
        ("d", "Trip to Lisbon", 40, "done"),
        ("e", "Sourdough", 41, "done"),
    ]
    await _seed(tmp_path, rows)
    window = await open_window(tmp_path)
    assert _rows(window) == [r[1] for r in rows]
    headers = _rows(window, SECTION_ROLE)
    assert headers == ["Today", "Yesterday", "Previous 7 days", _month(40), ""]
    # A row that starts a section is drawn taller: its header sits above it.
    delegate, option = window.session_list.itemDelegate(), QStyleOptionViewItem()
    window.session_list.initViewItemOption(option)
    model = window.filter_model
    assert (
        delegate.sizeHint(option, model.index(3, 0)).height()
        > delegate.sizeHint(option, model.index(4, 0)).height()
    )
    # Filtered, the first row shown carries its section's header.
    window.session_filter.setText("sourdough")
    assert _rows(window, SECTION_ROLE) == [_month(41)]
    window.session_filter.clear()

    install_translator(qapp, "zh_CN")
    try:
        await until(
            lambda: _rows(window, SECTION_ROLE)[:3] == ["今天", "昨天", "过去 7 天"],
            what=lambda: str(_rows(window, SECTION_ROLE)),
        )
        assert _rows(window, SECTION_ROLE)[3].endswith("月")  # "2026年10月"
        assert window.filter_model.index(0, 0).data(WAITING_ROLE) is False
    finally:
        install_translator(qapp, "en")
    await until(lambda: _rows(window, SECTION_ROLE)[0] == "Today")


async def test_conversations_waiting_for_resume_are_marked(tmp_path, provider_server) -> None:
    await _seed(
        tmp_path,
        [
            ("open", "Finished", 0, "done"),
            ("cut", "Cut off", 1, "cut"),
            ("asked", "Never answered", 2, "empty"),
        ],
    )
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    await storage.append("asked", "seed", UserMessage(content="Hello?"))
    await storage.close()
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    sessions = window.controller.sessions
    # Read after start-up, off its path: the open conversation is shown first.
    await until(lambda: sessions.is_waiting("cut") and sessions.is_waiting("asked"))
    assert not sessions.is_waiting("open")
    waiting = dict(zip(_rows(window, SESSION_ID_ROLE), _rows(window, WAITING_ROLE), strict=True))
    assert waiting == {"open": False, "cut": True, "asked": True}
    row = sessions.row_of("cut")
    tooltip = sessions.index(row, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "Waiting for Resume" in tooltip
    assert "Waiting for Resume" in sessions.index(row, 0).data(Qt.ItemDataRole.AccessibleTextRole)

    # Resumed, the mark goes.
    provider_server.script(Turn(text="The rest of the answer."))
    await window.controller.open_session("cut")
    await until(lambda: window.resume_button.isVisible(), what="Resume")
    window.resume_button.click()
    await until(lambda: not sessions.is_waiting("cut"), what="the mark gone")
    await until(lambda: not window.controller.is_running("cut"))
    assert not sessions.is_waiting("cut")


async def test_new_chat_reuses_an_empty_conversation_by_every_route(tmp_path) -> None:
    await _seed(tmp_path, [("old", "Earlier talk", 1, "done")])
    window = await open_window(tmp_path)
    c = window.controller
    assert c.current == "old"

    def count() -> int:
        return c.sessions.rowCount()

    routes = [
        ("shortcut", lambda: QTest.keyClick(window.composer, Qt.Key.Key_N, _CTRL)),
        ("button", window.new_chat_button.click),
        ("menu", window.menus.new_action.trigger),
    ]
    window.activateWindow()
    window.composer.setFocus()
    await until(lambda: QApplication.focusWidget() is window.composer)
    routes[0][1]()
    await until(lambda: count() == 2 and c.current != "old", what="a new conversation")
    empty = c.current
    for _name, route in routes * 2:
        route()
        await until(lambda: c.current == empty)
        await _new_chat_done(c)
        assert count() == 2, _name
    # From a conversation with messages, New chat goes back to the empty one.
    await c.open_session("old")
    for _name, route in routes:
        await c.open_session("old")
        route()
        await until(lambda: c.current == empty, what=_name)
        await _new_chat_done(c)
        assert count() == 2, _name
    # Once the empty one has a message, a new one is made.
    storage = c.storage
    await storage.append(empty, "seed", UserMessage(content="now it has one"))
    window.menus.new_action.trigger()
    await until(lambda: count() == 3)


async def test_the_window_title_names_the_open_conversation(tmp_path) -> None:
    await _seed(tmp_path, [("a", "Backoff helper", 0, "done"), ("b", "Dinner", 1, "done")])
    window = await open_window(tmp_path)
    assert window.windowTitle() == "Backoff helper — Continuo"
    await window.controller.open_session("b")
    assert window.windowTitle() == "Dinner — Continuo"
    await window.controller.rename_session("b", "Dinner for six")
    assert window.windowTitle() == "Dinner for six — Continuo"
    window.menus.new_action.trigger()
    await until(lambda: window.windowTitle() == "New conversation — Continuo")
    await window.controller.delete_session("a")
    await window.controller.delete_session("b")
    await window.controller.delete_session(window.controller.current)
    assert window.windowTitle() == "Continuo"


async def test_the_filter_never_switches_the_open_conversation(tmp_path) -> None:
    await _seed(
        tmp_path,
        [("alpha", "Alpha plan", 0, "done"), ("beta", "Beta test", 1, "done")],
    )
    window = await open_window(tmp_path)
    c = window.controller
    assert c.current == "alpha"
    field = window.session_filter
    empty_label = window.session_list.findChild(QLabel, "sessionListEmpty")
    for _round in range(2):
        field.setFocus()
        QTest.keyClicks(field, "beta")
        assert _rows(window) == ["Beta test"]
        await _settled(c)
        assert c.current == "alpha"  # typing did not open Beta
        assert not empty_label.isVisible()
        QTest.keyClicks(field, "zz")
        assert _rows(window) == []
        assert empty_label.isVisible() and empty_label.text() == "No matches"
        await _settled(c)
        assert c.current == "alpha"
        QTest.keyClick(field, Qt.Key.Key_Escape)  # Esc clears it
        assert field.text() == ""
        assert not empty_label.isVisible()
        current = window.session_list.currentIndex()
        assert current.data(SESSION_ID_ROLE) == "alpha"  # the selection is back
        assert window.session_list.selectionModel().isSelected(current)
        await _settled(c)
        assert c.current == "alpha"
    # Ctrl+Shift+F (Conversation › Search all conversations) reaches the field from the
    # composer (Ctrl+F finds in the open conversation: tests/ui/test_search.py).
    window.composer.setFocus()
    QTest.keyClick(window.composer, Qt.Key.Key_F, _CTRL | Qt.KeyboardModifier.ShiftModifier)
    assert QApplication.focusWidget() is field
    QTest.keyClicks(field, "zz")
    QTest.keyClick(field, Qt.Key.Key_Escape)
    assert field.text() == "" and c.current == "alpha"
    # Choosing a filtered row still opens it.
    QTest.keyClicks(field, "beta")
    index = window.filter_model.index(0, 0)
    rect = window.session_list.visualRect(index)
    QTest.mouseClick(window.session_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    await until(lambda: c.current == "beta")
