"""Branch into a new chat names the new chat after its own path (issue 20, item 9): after the
first question was edited, "Explain quokka habits (branch)" named a chat with no quokka in it.
A title the person gave stays the branch's. On the real window, the loopback provider and a
real SQLite file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import open_window, seed_provider
from ui.conversation.items import ItemKind

pytestmark = pytest.mark.timeout(120)


def _texts(window: Any) -> list[str]:
    model = window.transcript.model()
    rows = list(model.items()) if model is not None else []
    return [r.text for r in rows if r.kind in (ItemKind.USER, ItemKind.ASSISTANT)]


def _row(window: Any, text: str) -> Any:
    return next(r for r in window.transcript.model().items() if r.text == text)


def _view(window: Any, text: str) -> Any:
    window.transcript.flush()
    rows = list(window.transcript.model().items())
    return window.transcript.views()[rows.index(_row(window, text))]


async def _shows(window: Any, texts: list[str]) -> None:
    def ready() -> bool:
        sid = window.controller.current
        return _texts(window) == texts and not window.controller.is_running(sid)

    await until(ready, what=lambda: f"{texts}, shown: {_texts(window)}")


def _title(window: Any) -> str:
    return window.controller.session_info(window.controller.current).title or ""


async def _branch_at(window: Any, answer: str) -> None:
    before = window.controller.current
    _view(window, answer).actions_bar.branch.click()
    await until(lambda: window.controller.current not in (None, before), what="the branch")
    await until(lambda: answer in _texts(window), what="the branch's messages")


async def _edited_chat(tmp_path: Path, provider_server: Any) -> Any:
    provider_server.script(Turn(text="About quokkas."), Turn(text="About wombats."))
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    window.composer.setPlainText("Explain quokka habits")
    window.send_button.click()
    await _shows(window, ["Explain quokka habits", "About quokkas."])
    view = _view(window, "Explain quokka habits")
    view.actions_bar.edit.click()
    view.editor.setPlainText("Describe wombat burrows")
    view.send_edit.click()
    await _shows(window, ["Describe wombat burrows", "About wombats."])
    assert _title(window) == "Explain quokka habits"  # the conversation keeps its title
    return window


async def test_a_branch_after_an_edited_first_question_is_named_after_its_own_path(
    tmp_path, provider_server
):
    window = await _edited_chat(tmp_path, provider_server)
    await _branch_at(window, "About wombats.")
    assert _title(window) == "Describe wombat burrows (branch)"
    listed = window.sidebar.session_list.model()
    titles = [listed.index(r, 0).data() for r in range(listed.rowCount())]
    assert "Describe wombat burrows (branch)" in titles
    assert not any("quokka" in t and "branch" in t for t in titles)


async def test_a_branch_of_the_unedited_path_and_of_a_renamed_chat_keep_the_title(
    tmp_path, provider_server
):
    window = await _edited_chat(tmp_path, provider_server)
    first = window.controller.current
    # Back on the first version: its branch is the quokka chat's.
    _view(window, "Describe wombat burrows").actions_bar.previous.click()
    await _shows(window, ["Explain quokka habits", "About quokkas."])
    await _branch_at(window, "About quokkas.")
    assert _title(window) == "Explain quokka habits (branch)"
    # A title the person chose is kept, whichever version is shown.
    await window.controller.open_session(first)
    await window.controller.rename_session(first, "Marsupial notes")
    await _shows(window, ["Explain quokka habits", "About quokkas."])
    _view(window, "Explain quokka habits").actions_bar.next.click()
    await _shows(window, ["Describe wombat burrows", "About wombats."])
    await _branch_at(window, "About wombats.")
    assert _title(window) == "Marsupial notes (branch)"
