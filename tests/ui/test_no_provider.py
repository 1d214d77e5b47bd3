"""A message written before any provider exists is kept, shown, and answered once one does.

It used to vanish: the composer emptied and nothing was shown or stored. Now the engine stores
the message (the model call then fails with "no provider"), the banner says to add one, the
text leaves the composer only once stored, and after a provider is added in Settings the
banner clears and Resume answers the waiting message. A message the store refuses stays in
the composer.
"""

from __future__ import annotations

from typing import Any

import shiboken6

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from tests.support.wait import until
from tests.ui.conftest import open_window
from ui.controller import DB_FILE_NAME
from ui.conversation.items import ItemKind, ItemState
from ui.settings.store import SettingsStore

QUESTION = "Hello before any provider exists"


def _rows(window: Any, kind: ItemKind) -> list[Any]:
    model = window.transcript.model()
    return [i for i in model.items() if i.kind is kind] if model is not None else []


async def _stored(tmp_path: Any, sid: str) -> list[Any]:
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:
        return await storage.load(sid)
    finally:
        await storage.close()


async def _add_provider_in_settings(window: Any, server: Any) -> None:
    """Add an OpenAI-compatible provider at ``server`` the way a person does, and Save."""
    window.settings_button.click()
    dialog = window.settings_dialog
    await until(
        lambda: dialog.is_loaded and dialog.probeAgainButton.isEnabled(),
        what="the settings loaded and the local servers probed",
    )
    page = dialog.providersPage
    dialog.tabs.setCurrentWidget(page)
    page.addProviderButton.click()
    page.providerName.setText("Loopback")
    page.providerBaseUrl.setText(server.openai_url)
    page.providerModel.setCurrentText("loopback-echo")
    reloaded = window.controller.catalog.choices
    dialog.saveButton.click()
    await until(
        lambda: not shiboken6.isValid(dialog) or not dialog.isVisible(),
        what="Settings saved and closed",
    )
    await until(
        lambda: window.controller.catalog.choices is not reloaded and window.controller.providers(),
        what="the window to reload the settings",
    )


async def test_a_message_sent_before_any_provider_waits_and_is_answered_after_one_is_added(
    tmp_path, provider_server
) -> None:
    store = SettingsStore(tmp_path, use_keychain=False)  # no provider yet
    window = await open_window(tmp_path, settings_store=store)
    window.composer.setPlainText(QUESTION)
    window.send_button.click()

    # Stored and shown, and only then gone from the composer; the banner says what to do.
    await until(lambda: window.error_banner.isVisible(), what="the no-provider banner")
    sid = window.controller.current
    assert sid
    assert [r.text for r in _rows(window, ItemKind.USER)] == [QUESTION]
    assert _rows(window, ItemKind.ASSISTANT) == []
    history = await _stored(tmp_path, sid)
    assert [type(m) for m in history] == [UserMessage] and history[0].content == QUESTION
    assert window.composer.toPlainText() == ""
    banner = window.error_banner.toolTip()
    assert "No model provider" in banner and 'href="settings"' in window.error_banner.text()
    # The message waits for Resume (the engine's call_model point).
    await until(lambda: window.resume_button.isVisible(), what="Resume offered")

    await _add_provider_in_settings(window, provider_server)
    await until(lambda: not window.error_banner.isVisible(), what="the banner to clear")

    window.resume_button.click()
    await until(
        lambda: (
            not window.controller.is_running(sid)
            and [r.state for r in _rows(window, ItemKind.ASSISTANT)] == [ItemState.DONE]
        ),
        what="Resume to answer the waiting message",
    )
    answer = _rows(window, ItemKind.ASSISTANT)[0].text
    assert QUESTION in answer and "loopback provider" in answer
    history = await _stored(tmp_path, sid)
    assert [type(m) for m in history] == [UserMessage, AssistantMessage]
    assert provider_server.requests[-1].last_user_text() == QUESTION
    assert not window.error_banner.isVisible()
    # Reopening it shows no error either (the kept one was the earlier request's).
    assert not window.controller.conversations.metadata(sid).get("last_error")


async def test_a_message_the_store_refuses_stays_in_the_composer(tmp_path, provider_server) -> None:
    from tests.ui.conftest import seed_provider

    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    sid = await window.controller.new_session()
    # Another holder (a second connection, as another window) has the conversation's lease.
    other = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    lease = await other.acquire_lease(sid)
    try:
        window.composer.setPlainText(QUESTION)
        window.send_button.click()
        await until(lambda: window.error_banner.isVisible(), what="the refusal said")
        assert not window.controller.is_running(sid)
        assert window.composer.toPlainText() == QUESTION
        assert await _stored(tmp_path, sid) == []
        assert provider_server.requests == [] or all(
            r.protocol is None for r in provider_server.requests
        )
    finally:
        await lease.release()
        await other.close()
