"""Fixtures for the provider tests: the loopback server and one adapter per wire protocol.

`adapter` is parametrised over the three protocols, so a test that takes it runs against
OpenAI Chat Completions, Anthropic Messages and Ollama alike. Adapters are built with a tiny
backoff (retries do not slow the suite) and a generous read timeout, which is also their idle
deadline: it only ends a hang. It was 1 s, and on a loaded machine an answer that was slow to
come (a 16 MB event, a redaction) failed as a timeout; a test of a stall sets its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.providers import AnthropicModel, OllamaModel, OpenAIChatModel
from engine.providers.base import HTTPModel
from tests.support.provider_server import ProviderServer, Turn
from tests.support.store import Store

#: a key that must never appear in an error, log line or repr
SECRET_KEY = "sk-test-SECRETKEY-0123456789abcdef"

ADAPTERS: dict[str, type[HTTPModel]] = {
    "openai": OpenAIChatModel,
    "anthropic": AnthropicModel,
    "ollama": OllamaModel,
}


def base_url(server: ProviderServer, protocol: str) -> str:
    return {
        "openai": server.openai_url,
        "anthropic": server.anthropic_url,
        "ollama": server.ollama_url,
    }[protocol]


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    # A quick default answer; the slow friendly echo is for people (tested in test_server).
    with ProviderServer(default=Turn(text="Hello from the loopback server.")) as running:
        yield running


@pytest.fixture
async def make_adapter(
    server: ProviderServer,
) -> AsyncIterator[Callable[..., HTTPModel]]:
    """Build adapters against the loopback server; all are closed after the test."""
    made: list[HTTPModel] = []

    def make(protocol: str, model: str = "loopback-echo", **kwargs: Any) -> HTTPModel:
        options: dict[str, Any] = {
            "base_url": base_url(server, protocol),
            "api_key": SECRET_KEY,
            "timeout": 60.0,
            "retry_backoff": 0.01,
        }
        options.update(kwargs)
        adapter = ADAPTERS[protocol](model, **options)
        made.append(adapter)
        return adapter

    yield make
    for adapter in made:
        await adapter.aclose()


@pytest.fixture(params=sorted(ADAPTERS))
def protocol(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def adapter(protocol: str, make_adapter: Callable[..., HTTPModel]) -> HTTPModel:
    return make_adapter(protocol)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = Store(tmp_path / "continuo.sqlite3")
    yield opened
    await opened.close()
