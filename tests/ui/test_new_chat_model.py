"""A new chat starts with the model Settings names for new conversations ("Use for new
conversations"), not the one picked with "Regenerate with" in another conversation; a
conversation's model choice stays in that conversation, also after a restart (issue 20,
item 4). On the real window, the loopback provider listing two models, a real SQLite file."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import close_window, open_window, seed_provider
from ui.conversation.items import ItemKind

pytestmark = pytest.mark.timeout(120)

ECHO = "loopback-echo — Loopback"  # the default model of Settings
THINK = "loopback-think — Loopback"


def _texts(window: Any) -> list[str]:
    model = window.transcript.model()
    rows = list(model.items()) if model is not None else []
    return [r.text for r in rows if r.kind in (ItemKind.USER, ItemKind.ASSISTANT)]


async def _shows(window: Any, texts: list[str]) -> None:
    def ready() -> bool:
        sid = window.controller.current
        return _texts(window) == texts and not window.controller.is_running(sid)

    await until(ready, what=lambda: f"{texts}, shown: {_texts(window)}")


def _send(window: Any, text: str) -> None:
    window.composer.setPlainText(text)
    window.send_button.click()


async def _listed(window: Any) -> None:
    await until(lambda: window.model_picker.count() == 2, what="both models listed")


async def test_new_chat_takes_the_default_model_not_another_conversations(
    tmp_path, provider_server
):
    provider_server.script(
        Turn(text="First."), Turn(text="Thought again."), Turn(text="New chat's answer.")
    )
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    await _listed(window)
    _send(window, "Question A")
    await _shows(window, ["Question A", "First."])
    first = window.controller.current
    answer = next(r for r in window.transcript.model().items() if r.text == "First.")
    # "Regenerate with" the second model: this conversation keeps it.
    think = window.model_picker.findText(THINK)
    window.commands.message_action(f"regenerate_with:{think}", answer, "")
    await _shows(window, ["Question A", "Thought again."])
    assert provider_server.chat_requests()[-1].body["model"] == "loopback-think"
    assert window.model_picker.currentText() == THINK

    window.new_chat_button.click()
    await until(lambda: window.controller.current not in (None, first), what="the new chat")
    await until(lambda: window.model_picker.currentText() == ECHO, what="the default model")
    _send(window, "Question B")
    await _shows(window, ["Question B", "New chat's answer."])
    assert provider_server.chat_requests()[-1].body["model"] == "loopback-echo"
    second = window.controller.current

    # Each conversation shows its own model when it is opened again, also after a restart.
    await window.controller.open_session(first)
    await until(lambda: window.model_picker.currentText() == THINK, what="A's model")
    await close_window(window)
    window = await open_window(tmp_path, settings_store=store)
    await _listed(window)
    assert window.controller.current == first
    assert window.model_picker.currentText() == THINK
    await window.controller.open_session(second)
    assert window.model_picker.currentText() == ECHO
    window.new_chat_button.click()
    await until(lambda: window.controller.current not in (None, first, second), what="a chat")
    await until(lambda: window.model_picker.currentText() == ECHO, what="the default model")


async def test_a_model_picked_with_no_conversation_shown_is_the_new_ones(
    tmp_path, provider_server
):
    provider_server.script(Turn(text="Answer."))
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    await _listed(window)
    assert window.controller.current is None and window.model_picker.currentText() == ECHO
    picker = window.model_picker
    picker.setCurrentIndex(picker.findText(THINK))
    picker.activated.emit(picker.currentIndex())
    await until(lambda: window.controller.catalog.choice.model == "loopback-think", what="the pick")
    _send(window, "First words")
    await _shows(window, ["First words", "Answer."])
    assert provider_server.chat_requests()[-1].body["model"] == "loopback-think"
    assert picker.currentText() == THINK
