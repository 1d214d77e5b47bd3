"""`SyncAgent` with a real adapter: what a script leaves open once it is done."""

from __future__ import annotations

from pathlib import Path

from engine import AgentRunConfig, SyncAgent
from engine.providers import OpenAIChatModel
from engine.storage import SQLiteSessionExtension
from tests.support.provider_server import ProviderServer


def test_close_closes_the_models_http_client(server: ProviderServer, tmp_path: Path) -> None:
    """A script that leaves the ``with`` block must not leave the adapter's connections open."""
    model = OpenAIChatModel("loopback-echo", base_url=server.openai_url, api_key="sk-test")
    storage = SQLiteSessionExtension(tmp_path / "continuo.sqlite3")
    with SyncAgent(model, config=AgentRunConfig("s"), extensions=[storage]) as agent:
        assert agent.run("Hello").content == "Hello from the loopback server."
        assert not model._client.is_closed
    assert model._client.is_closed, "the adapter's pooled httpx client is still open"
