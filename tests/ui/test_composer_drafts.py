"""Unsent text stays with its conversation (issue 20, item 8): typed in A, it followed the
person to B, where Enter would have sent it. Each conversation keeps its own draft — shown
again on return, kept across a restart, in the conversation file — and a new chat or a branch
starts empty. On the real window, the loopback provider and a real SQLite file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import close_window, open_window, seed_provider
from ui.controller import DB_FILE_NAME
from ui.conversation.drafts import DRAFT_KEY
from ui.conversation.items import ItemKind
from ui.settings.store import SettingsStore

pytestmark = pytest.mark.timeout(120)


async def _seed(data_dir: Path) -> None:
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        for sid, title in (("b", "Chat B"), ("a", "Chat A")):  # A is the newest
            await storage.create_session(session_id=sid, title=title)
            await storage.append(sid, "seed", UserMessage(content=f"Question {sid}"))
            await storage.append(sid, "seed", AssistantMessage(content=f"Answer {sid}"))
    finally:
        await storage.close()


async def _stored_draft(data_dir: Path, sid: str) -> Any:
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        info = await storage.get_session(sid)
        return None if info is None else info.metadata.get(DRAFT_KEY)
    finally:
        await storage.close()


async def _click_row(window: Any, title: str) -> None:
    """Open a conversation the way a person does: a click on its row in the list."""
    listed = window.session_list.model()
    row = next(r for r in range(listed.rowCount()) if listed.index(r, 0).data() == title)
    rect = window.session_list.visualRect(listed.index(row, 0))
    QTest.mouseClick(window.session_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    await _shown(window, "a" if title == "Chat A" else "b")


async def _shown(window: Any, sid: str) -> None:
    def shown() -> bool:
        model = window.transcript.model()
        return model is not None and model.session_id == sid == window.controller.current

    await until(shown, what=f"{sid} shown")


def _type(window: Any, text: str) -> None:
    window.composer.setFocus()
    QTest.keyClicks(window.composer, text)


async def _window(tmp_path: Path, provider_server: Any) -> Any:
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    await _shown(window, "a")
    return window


async def test_unsent_text_stays_in_its_conversation_across_switches_and_restarts(
    tmp_path, provider_server
) -> None:
    await _seed(tmp_path)
    window = await _window(tmp_path, provider_server)
    _type(window, "half a thought for A")
    await _click_row(window, "Chat B")
    assert window.composer.toPlainText() == ""
    # Enter in B sends nothing: A's words are not there to be sent.
    QTest.keyClick(window.composer, Qt.Key.Key_Return)
    assert not window.controller.is_running("b") and provider_server.chat_requests() == []
    _type(window, "and one for B")
    await _click_row(window, "Chat A")
    assert window.composer.toPlainText() == "half a thought for A"
    await _click_row(window, "Chat B")
    assert window.composer.toPlainText() == "and one for B"
    _type(window, ", still typing")  # typed just before closing: kept too
    await close_window(window)
    assert await _stored_draft(tmp_path, "a") == "half a thought for A"
    assert await _stored_draft(tmp_path, "b") == "and one for B, still typing"

    store = SettingsStore(tmp_path, use_keychain=False)  # as left: B was the open one
    window = await open_window(tmp_path, settings_store=store)
    await _shown(window, "b")
    assert window.composer.toPlainText() == "and one for B, still typing"
    await _click_row(window, "Chat A")
    assert window.composer.toPlainText() == "half a thought for A"
    assert provider_server.chat_requests() == []


async def test_a_sent_draft_is_gone_and_new_chats_and_branches_start_empty(
    tmp_path, provider_server
) -> None:
    provider_server.script(Turn(text="Answer to the draft."))
    await _seed(tmp_path)
    window = await _window(tmp_path, provider_server)
    _type(window, "kept for later in A")
    window.new_chat_button.click()
    await until(lambda: window.transcript.model().session_id not in ("", "a"), what="a chat")
    assert window.composer.toPlainText() == ""
    await _click_row(window, "Chat A")
    assert window.composer.toPlainText() == "kept for later in A"

    # Branching A: the branch holds A's messages, not A's unsent text.
    model = window.transcript.model()
    answer = next(r for r in model.items() if r.text == "Answer a")
    window.commands.message_action("branch", answer, "")
    await until(lambda: window.transcript.model().session_id not in ("", "a"), what="a branch")
    branch = window.controller.current
    assert window.composer.toPlainText() == ""
    assert await _stored_draft(tmp_path, branch) is None
    await _click_row(window, "Chat A")
    assert window.composer.toPlainText() == "kept for later in A"

    # Sent, the draft is gone: from the composer, the file, and the next start.
    QTest.keyClick(window.composer, Qt.Key.Key_Return)

    def answered() -> bool:
        rows = window.transcript.model().items()
        texts = [r.text for r in rows if r.kind is ItemKind.ASSISTANT]
        return "Answer to the draft." in texts and not window.controller.is_running("a")

    await until(answered, what="the answer")
    assert provider_server.chat_requests()[-1].last_user_text() == "kept for later in A"
    assert window.composer.toPlainText() == ""
    await close_window(window)
    assert await _stored_draft(tmp_path, "a") is None
