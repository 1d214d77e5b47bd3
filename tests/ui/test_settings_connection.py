"""The dialog's Test connection, through the engine's real adapters, against loopback servers.

Success is checked against the shared loopback provider (tests/support/provider_server.py)
in all three protocols. Keys are checked against `KeyCheckingServer`, a small loopback server
that, like the real APIs, answers 401 unless the request carries the expected key.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import Qt

from tests.support.provider_server import ProviderServer
from tests.ui.conftest import next_signal
from ui.settings.dialog import SettingsDialog
from ui.settings.store import ProviderConfig, Settings, SettingsStore

GOOD_KEY = "sk-good-0123456789abcdef-NEVER-LOGGED"
BAD_KEY = "sk-bad-fedcba9876543210-NEVER-LOGGED"


@pytest.fixture(autouse=True)
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def provider_server() -> Iterator[ProviderServer]:
    with ProviderServer() as server:
        yield server


@pytest.fixture
def key_checking_url() -> Iterator[str]:
    """An OpenAI-compatible model list that wants ``Bearer GOOD_KEY``, as the real API does."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.headers.get("Authorization") == f"Bearer {GOOD_KEY}":
                status, body = 200, {"object": "list", "data": [{"id": "gpt-4o-mini"}]}
            else:
                status, body = (
                    401,
                    {
                        "error": {
                            "message": "Incorrect API key provided.",
                            "type": "invalid_request_error",
                            "code": "invalid_api_key",
                        }
                    },
                )
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


async def _dialog_with(qtbot: Any, tmp_path: Any, config: ProviderConfig) -> SettingsDialog:
    store = SettingsStore(tmp_path)
    await store.save(Settings(providers=[config]))
    dialog = SettingsDialog(store, servers=[], environ={})
    qtbot.addWidget(dialog)
    loaded = asyncio.ensure_future(next_signal(dialog.loaded, seconds=20.0))
    dialog.open()
    await loaded
    return dialog


async def _test(qtbot: Any, dialog: SettingsDialog) -> tuple[bool, str]:
    tested = asyncio.ensure_future(next_signal(dialog.connectionTested, seconds=20.0))
    qtbot.mouseClick(dialog.testConnectionButton, Qt.MouseButton.LeftButton)
    ok, message = await tested
    assert dialog.connectionResult.text() == message
    return ok, message


@pytest.mark.parametrize("kind", ["openai", "anthropic", "ollama"])
async def test_connection_lists_models(qtbot, tmp_path, provider_server, kind) -> None:
    url = {
        "openai": provider_server.openai_url,
        "anthropic": provider_server.anthropic_url,
        "ollama": provider_server.ollama_url,
    }[kind]
    config = ProviderConfig(id="p", kind=kind, name="Loopback", base_url=url)
    dialog = await _dialog_with(qtbot, tmp_path, config)

    ok, message = await _test(qtbot, dialog)

    assert ok, message
    assert message.startswith("Connected. 2 model") and "loopback-echo" in message
    listed = [dialog.providerModel.itemText(i) for i in range(dialog.providerModel.count())]
    assert any(name.startswith("loopback-echo") for name in listed)
    assert dialog.providerModel.currentText() == listed[0]  # picked, since none was set


async def test_connection_with_typed_key_before_saving(
    qtbot, tmp_path, key_checking_url, caplog
) -> None:
    caplog.set_level(logging.DEBUG)
    config = ProviderConfig(id="p", kind="openai", name="OpenAI", base_url=key_checking_url)
    dialog = await _dialog_with(qtbot, tmp_path, config)

    qtbot.keyClicks(dialog.providerApiKey, BAD_KEY)
    ok, message = await _test(qtbot, dialog)
    assert not ok
    assert message.startswith("The server refused the API key (HTTP 401).")
    assert "Check that the key is correct" in message

    dialog.providerApiKey.clear()
    qtbot.keyClicks(dialog.providerApiKey, GOOD_KEY)
    ok, message = await _test(qtbot, dialog)
    assert ok and "gpt-4o-mini" in message

    for secret in (GOOD_KEY, BAD_KEY):
        assert secret not in caplog.text
    # Testing saves nothing: the key is written only when the person presses Save.
    assert GOOD_KEY not in (tmp_path / "settings.json").read_text()


async def test_connection_uses_the_saved_key(qtbot, tmp_path, key_checking_url) -> None:
    config = ProviderConfig(id="p", kind="openai", name="OpenAI", base_url=key_checking_url)
    store = SettingsStore(tmp_path)
    await store.set_api_key("p", GOOD_KEY)
    await store.save(Settings(providers=[config]))
    dialog = SettingsDialog(store, servers=[], environ={})
    qtbot.addWidget(dialog)
    loaded = asyncio.ensure_future(next_signal(dialog.loaded, seconds=20.0))
    dialog.open()
    await loaded

    ok, message = await _test(qtbot, dialog)
    assert ok, message


async def test_connection_refused_is_a_readable_sentence(qtbot, tmp_path, refused_url) -> None:
    config = ProviderConfig(id="p", kind="openai", name="Local", base_url=refused_url)
    dialog = await _dialog_with(qtbot, tmp_path, config)

    ok, message = await _test(qtbot, dialog)

    assert not ok
    assert message == (
        f"Could not connect to {refused_url}. Check the address and that the server is running."
    )
    assert dialog.testConnectionButton.isEnabled()
