"""Versions in the real window: regenerate, edit and resend, "‹ n/m ›", copy, branch into a new
chat, the message menu by keyboard, and Resume on a branch — over the loopback provider and a
real SQLite file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest

from engine.storage import SQLiteSessionStorage
from tests.support.provider_server import Fault, Turn
from tests.support.wait import until
from tests.ui.conftest import close_window, open_window, seed_provider
from ui.controller import DB_FILE_NAME
from ui.conversation.items import ItemKind
from ui.conversation.message_views import AnswerView, UserView

pytestmark = pytest.mark.timeout(120)


async def _window(tmp_path: Path, provider_server: Any) -> Any:
    store = await seed_provider(tmp_path, provider_server)
    return await open_window(tmp_path, settings_store=store)


def _rows(window: Any) -> list[Any]:
    model = window.transcript.model()
    return list(model.items()) if model is not None else []


def _texts(window: Any) -> list[str]:
    return [r.text for r in _rows(window) if r.kind in (ItemKind.USER, ItemKind.ASSISTANT)]


def _view(window: Any, item: Any) -> Any:
    window.transcript.flush()
    return window.transcript.views()[_rows(window).index(item)]


def _row(window: Any, text: str) -> Any:
    return next(r for r in _rows(window) if r.text == text)


async def _shows(window: Any, texts: list[str]) -> None:
    def ready() -> bool:
        sid = window.controller.current
        return _texts(window) == texts and not window.controller.is_running(sid)

    await until(ready, what=lambda: f"{texts}, shown: {_texts(window)}")


def _send(window: Any, text: str) -> None:
    window.composer.setPlainText(text)
    window.send_button.click()


async def _stored(tmp_path: Path, sid: str) -> list[str]:
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:
        return [m.content for m in await storage.load(sid)]
    finally:
        await storage.close()


async def test_regenerate_then_switch_between_the_versions(tmp_path, provider_server):
    provider_server.script(Turn(text="First answer."), Turn(text="Second answer."))
    window = await _window(tmp_path, provider_server)
    _send(window, "Tell me something.")
    await _shows(window, ["Tell me something.", "First answer."])
    first = _row(window, "First answer.")
    view = _view(window, first)
    assert isinstance(view, AnswerView)
    bar = view.actions_bar
    assert bar.regenerate.isVisibleTo(bar) and not bar.edit.isVisibleTo(bar)
    assert not bar.previous.isVisibleTo(bar)  # no versions yet
    # The answer's quiet line: the model and the tokens the provider reported.
    assert "loopback-echo" in bar.meta.text() and "34 tokens" in bar.meta.text()

    bar.regenerate.click()
    await _shows(window, ["Tell me something.", "Second answer."])
    # (the rows are read back from the store when the request ends: look them up anew)
    await until(lambda: _row(window, "Second answer.").versions == (1, 2), what="the switcher: 2/2")
    second = _row(window, "Second answer.")
    bar2 = _view(window, second).actions_bar
    assert bar2.version_label.text() == "2/2" and bar2.version_label.isVisibleTo(bar2)
    assert bar2.previous.isEnabled() and not bar2.next.isEnabled()
    # The model read the question only, not the first answer.
    sent = provider_server.chat_requests()[-1].messages()
    assert [m["role"] for m in sent] == ["user"]

    # ‹ shows the first version, › the second again; each is what the store's path says.
    bar2.previous.click()
    await _shows(window, ["Tell me something.", "First answer."])
    sid = window.controller.current
    assert await _stored(tmp_path, sid) == ["Tell me something.", "First answer."]
    back = _view(window, _row(window, "First answer.")).actions_bar
    await until(lambda: back.version_label.text() == "1/2", what="1/2")
    back.next.click()
    await _shows(window, ["Tell me something.", "Second answer."])
    assert await _stored(tmp_path, sid) == ["Tell me something.", "Second answer."]
    await close_window(window)

    # Reopened, the conversation shows the version last chosen, with its switcher.
    window = await _window(tmp_path, provider_server)
    await _shows(window, ["Tell me something.", "Second answer."])
    await until(lambda: _row(window, "Second answer.").versions == (1, 2), what="2/2 again")
    await close_window(window)


async def test_edit_and_resend_keeps_the_old_question_as_a_version(tmp_path, provider_server):
    provider_server.script(Turn(text="About cats."), Turn(text="About dogs."))
    window = await _window(tmp_path, provider_server)
    _send(window, "Tell me about cats.")
    await _shows(window, ["Tell me about cats.", "About cats."])
    question = _row(window, "Tell me about cats.")
    view = _view(window, question)
    assert isinstance(view, UserView)
    # Open and cancel twice (button, then Esc): nothing changes.
    for cancel in ("button", "esc"):
        view.actions_bar.edit.click()
        assert view.editing and view.editor.toPlainText() == "Tell me about cats."
        assert view.editor.hasFocus()
        if cancel == "button":
            view.cancel_edit.click()
        else:
            QTest.keyClick(view.editor, Qt.Key.Key_Escape)
        assert not view.editing and view.text.isVisibleTo(view)
    assert len(provider_server.chat_requests()) == 1

    view.actions_bar.edit.click()
    view.editor.setPlainText("Tell me about dogs.")
    view.send_edit.click()
    await _shows(window, ["Tell me about dogs.", "About dogs."])
    await until(
        lambda: _row(window, "Tell me about dogs.").versions == (1, 2), what="the question's 2/2"
    )
    edited = _row(window, "Tell me about dogs.")
    sent = provider_server.chat_requests()[-1].messages()
    assert [m["content"] for m in sent] == ["Tell me about dogs."]
    # The first question, with its answer, is one click away.
    _view(window, edited).actions_bar.previous.click()
    await _shows(window, ["Tell me about cats.", "About cats."])
    await close_window(window)


async def test_copy_a_message_and_branch_into_a_new_chat(tmp_path, provider_server):
    provider_server.script(Turn(text="**Bold** answer."), Turn(text="Later."))
    window = await _window(tmp_path, provider_server)
    _send(window, "One.")
    await _shows(window, ["One.", "**Bold** answer."])
    _send(window, "Two.")
    await _shows(window, ["One.", "**Bold** answer.", "Two.", "Later."])
    answer = _row(window, "**Bold** answer.")
    bar = _view(window, answer).actions_bar
    bar.copy.click()
    assert QGuiApplication.clipboard().text() == "**Bold** answer."  # the Markdown itself
    first_sid = window.controller.current

    bar.branch.click()
    await until(
        lambda: window.controller.current not in (None, first_sid), what="the new chat to open"
    )
    await _shows(window, ["One.", "**Bold** answer."])
    new_sid = window.controller.current
    assert window.controller.sessions.rowCount() == 2
    assert await _stored(tmp_path, new_sid) == ["One.", "**Bold** answer."]
    assert await _stored(tmp_path, first_sid) == ["One.", "**Bold** answer.", "Two.", "Later."]
    await close_window(window)


async def test_the_keyboard_reaches_a_messages_actions_through_its_menu(tmp_path, provider_server):
    provider_server.script(Turn(text="An answer."), Turn(text="Another answer."))
    window = await _window(tmp_path, provider_server)
    _send(window, "A question.")
    await _shows(window, ["A question.", "An answer."])
    transcript = window.transcript
    transcript.setFocus()
    QTest.keyClick(transcript, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    answer_view = _view(window, _row(window, "An answer."))
    assert transcript.focused_message() is answer_view
    QTest.keyClick(QGuiApplication.focusObject(), Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert transcript.focused_message() is _view(window, _row(window, "A question."))
    QTest.keyClick(QGuiApplication.focusObject(), Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert transcript.focused_message() is answer_view
    QTest.keyClick(QGuiApplication.focusObject(), Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    menu = answer_view.context_menu
    names = [a.objectName() for a in menu.actions() if a.objectName().endswith("MessageAction")]
    assert names == ["copyMessageAction", "regenerateMessageAction", "branchMessageAction"]
    regenerate = next(a for a in menu.actions() if a.objectName() == "regenerateMessageAction")
    menu.close()
    regenerate.trigger()
    await _shows(window, ["A question.", "Another answer."])
    await close_window(window)


async def test_resume_is_offered_on_the_branch_that_was_cut_off(tmp_path, provider_server):
    provider_server.script(
        Turn(text="A whole answer."),
        Turn(text="A regenerated answer that breaks off", fault=Fault.RESET, fault_after=3),
        Turn(text="The regenerated answer, whole."),
    )
    window = await _window(tmp_path, provider_server)
    _send(window, "Question.")
    await _shows(window, ["Question.", "A whole answer."])
    _view(window, _row(window, "A whole answer.")).actions_bar.regenerate.click()
    await until(lambda: window.resume_button.isVisible(), what="Resume after the cut")

    def cut_answer() -> Any:
        return next(r for r in _rows(window) if r.kind is ItemKind.ASSISTANT)

    await until(lambda: cut_answer().versions == (1, 2), what="2/2 on the cut answer")
    cut = cut_answer()

    # The first version is whole: no Resume there; back on the cut one, Resume again.
    _view(window, cut).actions_bar.previous.click()
    await _shows(window, ["Question.", "A whole answer."])
    await until(lambda: not window.resume_button.isVisible(), what="no Resume on version 1")
    _view(window, _row(window, "A whole answer.")).actions_bar.next.click()
    await until(lambda: window.resume_button.isVisible(), what="Resume on version 2 again")
    window.resume_button.click()
    await until(
        lambda: (
            "The regenerated answer, whole." in _texts(window)
            and not window.controller.is_running(window.controller.current)
        ),
        what="the resumed answer",
    )
    sid = window.controller.current
    stored = await _stored(tmp_path, sid)
    assert stored[0] == "Question." and stored[-1] == "The regenerated answer, whole."
    assert "A whole answer." not in stored
    await close_window(window)


async def test_regenerate_with_another_model_from_the_arrow(tmp_path, provider_server):
    provider_server.script(Turn(text="From echo."), Turn(text="From think."))
    window = await _window(tmp_path, provider_server)
    await until(lambda: window.model_picker.count() == 2, what="both models listed")
    _send(window, "Question.")
    await _shows(window, ["Question.", "From echo."])
    bar = _view(window, _row(window, "From echo.")).actions_bar
    bar.models_menu.aboutToShow.emit()  # what opening the arrow's menu does first
    entries = {a.text(): a for a in bar.models_menu.actions() if a.objectName()}
    think = next(a for label, a in entries.items() if "loopback-think" in label)
    think.trigger()
    await _shows(window, ["Question.", "From think."])
    assert provider_server.chat_requests()[-1].body["model"] == "loopback-think"
    assert "loopback-think" in window.model_picker.currentText()  # the conversation keeps it
    await close_window(window)


def test_an_answer_of_another_day_says_its_date(qtbot) -> None:
    """An imported history's answers are years old: their line says the date, not only
    the time; today's say the time."""
    import time

    from PySide6.QtCore import QDateTime, QLocale

    from ui.conversation.items import TranscriptItem
    from ui.conversation.message_actions import MessageActions

    bar = MessageActions(ItemKind.ASSISTANT)
    qtbot.addWidget(bar)
    old = 1705317540.0  # 2024-01-15
    item = TranscriptItem(ItemKind.ASSISTANT, "a", model="gpt-4", created_at=old)
    day = QLocale().toString(QDateTime.fromSecsSinceEpoch(int(old)).date(), QLocale.FormatType.ShortFormat)
    clock = time.strftime("%H:%M", time.localtime(old))
    assert bar.meta_text(item) == f"gpt-4 · {day} {clock}"
    now = time.time()
    item.created_at = now
    assert bar.meta_text(item) == f"gpt-4 · {time.strftime('%H:%M', time.localtime(now))}"
