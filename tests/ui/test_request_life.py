"""One request's life as the window shows it: its own error (never an earlier one), a
provider being retried, and an answer that outlives a Settings save.

- An error belongs to its request: a later request clears the kept one, so an answer stopped
  normally with Stop shows no earlier failure, then or when the conversation is reopened.
- A provider that refuses connections: while the adapter retries, the window says so
  ("Retrying in 0.1 s, 2 of 4…"); at the end it says it could not connect, never that
  anything arrived.
- Saving Settings while an answer streams does not close the adapter under it: the answer
  completes whole and is stored; the old adapter is closed once the request ends.
"""

from __future__ import annotations

import re
import socket
from typing import Any

import shiboken6

from engine import AssistantMessage, SQLiteSessionStorage, StopReason
from engine.providers import OpenAIChatModel
from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import open_window, seed_provider
from ui.controller import DB_FILE_NAME
from ui.conversation.items import ItemKind, ItemState
from ui.settings.store import ProviderConfig, Settings, SettingsStore

STORY = "Once upon a time there was a conversation that nobody lost. " * 6


def _answers(window: Any) -> list[Any]:
    model = window.transcript.model()
    return [i for i in model.items() if i.kind is ItemKind.ASSISTANT] if model is not None else []


async def _stored(tmp_path: Any, sid: str) -> list[Any]:
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:
        return await storage.load(sid)
    finally:
        await storage.close()


def _send(window: Any, text: str) -> None:
    window.composer.setPlainText(text)
    window.send_button.click()


async def test_an_error_belongs_to_its_request_a_stopped_one_shows_none(
    tmp_path, provider_server
) -> None:
    provider_server.script(
        Turn(status=401, error="the key was refused"),
        Turn(text=STORY, chunk_size=4, delay=0.02),
    )
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    _send(window, "First question")
    await until(lambda: window.error_banner.isVisible(), what="the first request's error")
    sid = window.controller.current
    await until(lambda: not window.controller.is_running(sid), what="the first request over")
    assert window.controller.conversations.metadata(sid).get("last_error")

    _send(window, "Second question")
    await until(
        lambda: _answers(window) and len(_answers(window)[-1].text) > 20,
        what="the second answer streaming",
    )
    assert not window.error_banner.isVisible()
    window.stop_button.click()
    await until(lambda: not window.controller.is_running(sid), what="the Stop")
    history = await _stored(tmp_path, sid)
    assert isinstance(history[-1], AssistantMessage)
    assert history[-1].stop.reason is StopReason.INTERRUPTED
    await until(lambda: window.resume_button.isVisible(), what="the resume point")
    assert not window.error_banner.isVisible()
    # Reopened (another conversation, then this one again): still no earlier error.
    await window.controller.new_session()
    await window.controller.open_session(sid)
    assert window.controller.current == sid
    assert not window.error_banner.isVisible()
    assert not window.controller.conversations.metadata(sid).get("last_error")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_unreachable_provider_shows_its_retries_then_says_it_could_not_connect(
    tmp_path,
) -> None:
    port = _closed_port()  # nothing listens: every attempt is refused
    url = f"http://127.0.0.1:{port}/v1"
    store = SettingsStore(tmp_path, use_keychain=False)
    config = ProviderConfig(id="gone", kind="openai", name="Gone", base_url=url, default_model="m")
    await store.save(Settings(providers=[config], default_provider_id="gone"))

    async def factory(_config: Any, model: str | None) -> Any:
        return OpenAIChatModel(model or "m", base_url=url, max_attempts=4, retry_backoff=0.1)

    window = await open_window(tmp_path, settings_store=store, model_factory=factory)
    shown: list[tuple[bool, str]] = []
    # Connected after the window's own slot: records what the window shows at each news.
    window.controller.retryChanged.connect(
        lambda _sid, _retry: shown.append(
            (window.retry_label.isVisible(), window.retry_label.text())
        )
    )
    _send(window, "Anyone there?")
    await until(lambda: window.error_banner.isVisible(), what="the final error")
    sid = window.controller.current
    await until(lambda: not window.controller.is_running(sid), what="the request over")
    retries = [text for visible, text in shown if visible]
    assert len(retries) == 3, shown
    for number, text in enumerate(retries, start=2):
        assert re.fullmatch(rf"Retrying in \d+\.\d s, {number} of 4…", text), text
    assert shown[-1] == (False, "")  # cleared when the request ended
    assert not window.retry_label.isVisible()
    banner = window.error_banner.toolTip()
    assert "Could not connect to" in banner, banner
    assert "arrived" not in banner.lower(), banner
    assert _answers(window) == []
    assert window.controller.conversations.metadata(sid)["last_error"]["kept"] == ""


async def test_saving_settings_while_an_answer_streams_lets_it_finish(
    tmp_path, provider_server
) -> None:
    # A slow drip (about 6 s): long enough for Settings to open, load and save meanwhile.
    provider_server.script(Turn(text=STORY, chunk_size=3, delay=0.05))
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    _send(window, "Tell me a story")
    await until(
        lambda: _answers(window) and len(_answers(window)[-1].text) > 10,
        what="the answer streaming",
    )
    sid = window.controller.current
    catalog = window.controller.catalog
    adapter = catalog._adapters[("loopback", "loopback-echo")]  # the one answering

    window.settings_button.click()
    dialog = window.settings_dialog
    await until(
        lambda: dialog.is_loaded and dialog.probeAgainButton.isEnabled(),
        what="the settings loaded and the local servers probed",
    )
    reloaded = catalog.choices
    dialog.saveButton.click()
    await until(
        lambda: not shiboken6.isValid(dialog) or not dialog.isVisible(), what="Settings saved"
    )
    await until(lambda: catalog.choices is not reloaded, what="the settings reloaded")
    assert window.controller.is_running(sid), "the answer was cut off by the reload"
    assert not adapter._client.is_closed  # still in use

    await until(lambda: not window.controller.is_running(sid), seconds=30, what="the answer")
    answer = _answers(window)[-1]
    assert answer.state is ItemState.DONE and answer.text == STORY
    history = await _stored(tmp_path, sid)
    assert history[-1].content == STORY
    assert getattr(history[-1].stop, "reason", None) is not StopReason.INTERRUPTED
    assert not window.error_banner.isVisible()
    assert adapter._client.is_closed  # closed once its request ended
    assert adapter not in catalog._adapters.values()
