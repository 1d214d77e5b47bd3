"""The window end to end with a scripted model: sending, streaming, tool cards, Stop."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel

from tests.conftest import connection_threads
from tests.support.scripted import ScriptedModel, Turn
from tests.support.wait import until
from tests.ui.conftest import close_window
from ui.app import build_window
from ui.conversation.transcript import ItemKind, ItemState


def _window(tmp_path, model, tools=()):
    async def factory(config, model_id):
        return model

    window = build_window(tmp_path, model_factory=factory, tools=tools, first_run_dialog=False)
    window.show()
    return window


async def test_send_streams_and_finishes(tmp_path, qtbot):
    gate = asyncio.Event()
    model = ScriptedModel(
        [Turn(text="Hello **world**, this is a streamed answer.", chunks=6, gate=gate)]
    )
    window = _window(tmp_path, model)
    qtbot.addWidget(window)
    await window.started()
    QTest.keyClicks(window.composer, "Hi there")
    QTest.keyClick(window.composer, Qt.Key.Key_Return)
    await until(
        lambda: window.transcript.model() is not None and window.transcript.model().streaming
    )
    rows = window.transcript.model()
    await until(lambda: any(i.kind is ItemKind.ASSISTANT and i.text for i in rows.items()))
    assert window.stop_button.isVisible()
    partial = [i for i in rows.items() if i.kind is ItemKind.ASSISTANT][0].text
    assert partial and partial != "Hello **world**, this is a streamed answer."
    gate.set()
    await until(lambda: not window.controller.is_running(window.controller.current))
    answer = [i for i in rows.items() if i.kind is ItemKind.ASSISTANT][-1]
    assert answer.state is ItemState.DONE
    assert answer.text == "Hello **world**, this is a streamed answer."
    window.transcript.flush()
    view = window.transcript.views()[-1]
    assert "world" in view.body.toPlainText()
    assert not window.resume_button.isVisible()
    await close_window(window)


async def test_an_empty_conversation_says_how_to_begin_until_the_first_message(
    tmp_path, qtbot
) -> None:
    model = ScriptedModel([Turn(text="Hello.")])
    window = _window(tmp_path, model)
    qtbot.addWidget(window)
    await window.started()
    hint = window.findChild(QLabel, "emptyHint")
    assert hint is not None and hint.isVisible()
    assert "Resume" in hint.text()
    QTest.keyClicks(window.composer, "Hi")
    QTest.keyClick(window.composer, Qt.Key.Key_Return)
    await until(lambda: not hint.isVisible(), what="the hint gone once a message is shown")
    await until(lambda: not window.controller.is_running(window.controller.current))
    await window.controller.new_session()  # a new, empty conversation shows it again
    await until(hint.isVisible, what="the hint in the new conversation")
    await close_window(window)


async def test_a_close_cancelled_midway_still_closes_the_store(tmp_path, qtbot):
    # The test loop's shutdown once cancelled a window's close while it waited for its
    # tasks: the conversation file stayed open, and its connection's thread kept the test
    # process from exiting after the suite had passed.
    before = connection_threads()
    window = _window(tmp_path, ScriptedModel([]))
    qtbot.addWidget(window)
    await window.started()
    opened = connection_threads() - before
    assert opened, "the window opened its conversation file"
    never = asyncio.Event()
    window.controller.spawn(never.wait(), "waits until cancelled")
    closing = asyncio.ensure_future(window.controller.close())
    await until(lambda: window.controller._closed, what="the close under way")
    closing.cancel()
    await asyncio.wait({closing})
    for thread in opened:
        await asyncio.to_thread(thread.join, 10)
    assert not any(t.is_alive() for t in opened), "the file was left open"
