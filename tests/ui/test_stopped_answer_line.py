"""A just-stopped answer shows its line and its actions at once (issue 20, item 7).

Before, Stop left the row as the live answer it was while streaming: no Copy, Regenerate or
Branch and no "model · time" line until the conversation was opened again, while an answer
cut off by a fault had them at once.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from engine import SQLiteSessionStorage
from tests.support.provider_server import Fault, Turn
from tests.support.wait import until
from tests.ui.conftest import open_window, seed_provider
from ui.controller import DB_FILE_NAME
from ui.conversation.transcript import ItemKind, ItemState

LONG = "A long answer that keeps going, piece after piece, until the person stops it. " * 20


def _answers(window):
    model = window.transcript.model()
    return [i for i in model.items() if i.kind is ItemKind.ASSISTANT] if model else []


def _view_of(window, item):
    window.transcript.flush()
    return window.transcript.views()[window.transcript.model().items().index(item)]


async def test_a_stopped_answer_shows_its_line_and_actions_at_once(tmp_path, provider_server):
    provider_server.script(
        Turn(text=LONG, chunk_size=4, delay=0.02, fault=Fault.STALL_MIDSTREAM, fault_after=40)
    )
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    QTest.keyClicks(window.composer, "Tell me everything")
    QTest.keyClick(window.composer, Qt.Key.Key_Return)
    await until(lambda: _answers(window) and len(_answers(window)[-1].text) > 20, what="text")
    window.stop_button.click()
    sid = window.controller.current
    await until(lambda: not window.controller.is_running(sid), what="the stop")
    answer = _answers(window)[-1]
    assert answer.state is ItemState.STOPPED

    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:
        stored = (await storage.load(sid))[-1]
    finally:
        await storage.close()
    # The row is the stored message now (its id, so Copy, Regenerate and Branch act on it).
    await until(lambda: _answers(window)[-1].key == stored.id, what="the stored partial's id")
    view = _view_of(window, _answers(window)[-1])
    bar = view.actions_bar
    for button in (bar.copy, bar.regenerate, bar.branch):
        assert button.isVisible(), button.objectName()
    assert bar.meta.isVisible()
    assert bar.meta.text().startswith("loopback-echo · ")  # the model, then the time
    assert "Stopped" in view.status.text()
    # The menu offers the same actions to the keyboard.
    names = {a.objectName() for a in bar.menu_actions(view)}
    assert {"copyMessageAction", "regenerateMessageAction", "branchMessageAction"} <= names


async def test_a_cut_off_and_a_finished_answer_show_theirs_too(tmp_path, provider_server):
    provider_server.script(
        Turn(text="All of it, at once."),
        Turn(text=LONG, chunk_size=8, fault=Fault.RESET, fault_after=5),
    )
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    for question in ("First", "Second"):
        QTest.keyClicks(window.composer, question)
        QTest.keyClick(window.composer, Qt.Key.Key_Return)
        await until(lambda question=question: window.composer.toPlainText() == "", what=question)
        await until(lambda: not window.controller.is_running(window.controller.current))
    finished, cut = _answers(window)[-2:]
    assert finished.state is ItemState.DONE and cut.state is ItemState.INTERRUPTED
    for item in (finished, cut):
        bar = _view_of(window, item).actions_bar
        assert bar.copy.isVisible() and bar.regenerate.isVisible() and bar.branch.isVisible()
        assert bar.meta.text().startswith("loopback-echo")
