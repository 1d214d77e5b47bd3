"""An interrupted answer is told once, and the attempt Resume redid is folded away.

A Stop and a network fault mid-answer (a real loopback server that resets the connection):
the answer's row says what happened and whether what arrived is saved; the error banner stays
hidden (Resume is all that helps); the line beside Resume says what Resume does, its tooltip
the engine's sentence in the window's language. After Resume, the cut-off attempt is a folded
"Earlier attempt" row that opens on click and on Enter.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from engine import (
    AssistantMessage,
    InternalMessage,
    SQLiteSessionStorage,
    StopInfo,
    StopReason,
    UserMessage,
)
from tests.support.provider_server import Fault, Turn
from tests.support.wait import until
from tests.ui.conftest import open_window, seed_provider
from ui.common.i18n import install_translator
from ui.controller import DB_FILE_NAME
from ui.conversation.transcript import ItemKind, ItemState
from ui.conversation.transcript_view import _tab_stops

STORY = "Once upon a time there was a conversation that nobody lost. " * 8


def _answers(window: Any) -> list[Any]:
    model = window.transcript.model()
    return [i for i in model.items() if i.kind is ItemKind.ASSISTANT] if model else []


def _view(window: Any, item: Any) -> Any:
    window.transcript.flush()
    return window.transcript.views()[window.transcript.model().items().index(item)]


def _visible_notices(window: Any, answer_view: Any) -> list[str]:
    labels = [answer_view.status, window.error_banner, window.resume_label]
    return [label.text() for label in labels if label.isVisible()]


async def test_a_network_fault_mid_answer_is_one_notice_and_resume_folds_the_attempt(
    qapp, tmp_path, provider_server
) -> None:
    provider_server.script(Turn(text=STORY, chunk_size=6, fault=Fault.RESET, fault_after=6))
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    window.composer.setPlainText("Tell me a story")
    window.send_button.click()
    await until(lambda: window.resume_button.isVisible(), what="Resume")
    (answer,) = _answers(window)
    assert answer.state is ItemState.INTERRUPTED
    view = _view(window, answer)
    assert view.status.text() == (
        "⚠ The connection to the provider broke before the answer finished. What arrived is saved."
    )
    assert not window.error_banner.isVisible()
    assert window.resume_label.text() == "Resume writes the answer again."
    notices = _visible_notices(window, view)
    assert sum("broke" in n or "cut off" in n for n in notices) == 1, notices
    tooltip = window.resume_button.toolTip()
    assert tooltip.startswith("The connection broke before the answer finished")

    # The tooltip and the short line follow the window's language.
    install_translator(qapp, "zh_CN")
    try:
        await until(lambda: window.resume_button.toolTip() != tooltip, what="a Chinese tooltip")
        assert "连接断开" in window.resume_button.toolTip()
        assert window.resume_label.text() != "Resume writes the answer again."
    finally:
        install_translator(qapp, "en")
    await until(lambda: window.resume_button.toolTip() == tooltip, what="English again")

    # Resume redoes it: the cut-off attempt folds into one "Earlier attempt" line.
    provider_server.script(Turn(text="The whole story, told again."))
    window.resume_button.click()
    sid = window.controller.current
    await until(
        lambda: not window.controller.is_running(sid) and len(_answers(window)) == 2,
        what="the redone answer",
    )
    earlier, redone = _answers(window)
    assert earlier.earlier and not redone.earlier
    view = _view(window, earlier)
    assert view.attempt_toggle.isVisible()
    assert view.attempt_toggle.text() == "Earlier attempt (cut off)"
    assert not view.content.isVisible() and not view.status.isVisible()
    assert not _view(window, redone).attempt_toggle.isVisible()
    view.attempt_toggle.click()
    assert view.content.isVisible() and answer.text[:20] in view.body.toPlainText()
    view.attempt_toggle.click()
    assert not view.content.isVisible()


async def test_a_stop_is_one_notice(tmp_path, provider_server) -> None:
    provider_server.script(Turn(text=STORY * 4, chunk_size=4, delay=0.02))
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    window.composer.setPlainText("Tell me a long story")
    window.send_button.click()
    await until(lambda: _answers(window) and len(_answers(window)[-1].text) > 20, what="text")
    window.stop_button.click()
    await until(lambda: window.resume_button.isVisible(), what="Resume")
    (answer,) = _answers(window)
    view = _view(window, answer)
    assert view.status.text() == "⚠ Stopped. The partial answer above is saved."
    assert not window.error_banner.isVisible()
    assert window.resume_label.text() == "Resume writes the answer again."
    assert window.resume_button.toolTip().startswith("The answer was stopped before it finished")


async def test_an_earlier_attempt_reopened_from_the_store_is_folded_and_opens_with_enter(
    tmp_path, provider_server
) -> None:
    store = await seed_provider(tmp_path, provider_server)
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    cut = StopInfo(StopReason.INTERRUPTED, raw="cancelled")
    for message in (
        UserMessage(content="Question"),
        AssistantMessage(content="A half answer that was stopped", stop=cut),
        InternalMessage(content="Redo it.", tag="resume:retry_response"),
        AssistantMessage(content="The whole answer."),
    ):
        await storage.append("s", "r", message)
    await storage.close()
    window = await open_window(tmp_path, settings_store=store)
    await until(lambda: len(_answers(window)) == 2, what="the conversation")
    earlier, whole = _answers(window)
    view = _view(window, earlier)
    await until(lambda: view.attempt_toggle.isVisible(), what="the folded attempt")
    assert view.attempt_toggle.text() == "Earlier attempt (stopped)"
    assert not view.content.isVisible()
    # Keyboard: the toggle is a Tab stop of the transcript, and Enter opens it.
    assert view.attempt_toggle in _tab_stops(view)
    assert view.attempt_toggle.focusPolicy() & Qt.FocusPolicy.TabFocus
    QTest.keyClick(view.attempt_toggle, Qt.Key.Key_Return)
    assert view.content.isVisible()
    assert "A half answer" in view.body.toPlainText()
    QTest.keyClick(view.attempt_toggle, Qt.Key.Key_Enter)
    assert not view.content.isVisible()
    assert not _view(window, whole).attempt_toggle.isVisible()
