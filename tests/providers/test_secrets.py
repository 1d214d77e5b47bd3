"""The API key never appears in an error, a repr, a log line or a stored message.

The loopback server is scripted to echo the key back in its error text (as OpenAI's
"Incorrect API key provided: sk-..." does), and every log record of every logger (httpx and
httpcore included, at DEBUG) is captured while requests succeed, retry and fail.
"""

from __future__ import annotations

import logging
import traceback

import pytest

from engine.errors import ProviderError
from engine.messages import UserMessage
from engine.model import ModelRequest
from tests.providers.conftest import SECRET_KEY
from tests.support.provider_server import Fault, Turn


def ask() -> ModelRequest:
    return ModelRequest([UserMessage(content="hi")])


def everything_about(error: BaseException) -> str:
    """The error's text, repr, args and the whole formatted chain with its causes."""
    parts = [str(error), repr(error), *map(str, error.args)]
    parts += traceback.format_exception(error)
    return "\n".join(parts)


ECHOES = [
    Turn(status=401, error=f"Incorrect API key provided: {SECRET_KEY}."),
    Turn(status=403, error=f"Key {SECRET_KEY} may not use this model"),
    Turn(status=400, error=f"bad request from key {SECRET_KEY}"),
    Turn(status=429, error=f"rate limited for {SECRET_KEY}", retry_after="3600"),
    Turn(status=500, error=f"crash while handling {SECRET_KEY[:12]}***{SECRET_KEY[-4:]}"),
]


@pytest.mark.parametrize("turn", ECHOES, ids=lambda t: str(t.status))
async def test_errors_never_contain_the_key(server, make_adapter, protocol, turn) -> None:
    server.script(*[turn] * 4)
    model = make_adapter(protocol)
    with pytest.raises(ProviderError) as info:
        async for _ in model.stream(ask()):
            pass
    text = everything_about(info.value)
    assert SECRET_KEY not in text
    assert SECRET_KEY[-12:] not in text
    assert str(info.value).endswith(".")  # a sentence, with what to do


async def test_error_event_echoing_the_key_is_scrubbed(server, make_adapter) -> None:
    server.script(Turn(sample="compat/groq-error-event.sse"))
    model = make_adapter("openai", api_key="get_something_by_name")  # a key that IS echoed
    with pytest.raises(ProviderError) as info:
        async for _ in model.stream(ask()):
            pass
    assert "get_something_by_name" not in everything_about(info.value)
    assert "[redacted]" in str(info.value)


async def test_reprs_never_contain_the_key(make_adapter, protocol) -> None:
    model = make_adapter(protocol)
    assert SECRET_KEY not in repr(model)
    assert SECRET_KEY not in str(model)


async def test_logs_never_contain_the_key(server, make_adapter, protocol, caplog) -> None:
    caplog.set_level(logging.DEBUG)  # every logger: ours, httpx, httpcore
    server.script(
        Turn(status=503),
        Turn(text="fine"),
        Turn(text="partial answer", fault=Fault.RESET, fault_after=4, chunk_size=2),
        Turn(status=401),
    )
    model = make_adapter(protocol)
    async for _ in model.stream(ask()):
        pass
    for _ in range(2):
        with pytest.raises(ProviderError):
            async for _ in model.stream(ask()):
                pass
    await model.list_models()
    assert caplog.records, "nothing was logged, so nothing was checked"
    assert any("retrying" in r.getMessage() for r in caplog.records)
    logged = "\n".join(f"{r.getMessage()} {r.args!r} {r.exc_text or ''}" for r in caplog.records)
    assert SECRET_KEY not in logged


async def test_stored_messages_never_contain_the_key(server, make_adapter, store) -> None:
    # An error text that echoes the key ends up in the stored partial's stop message.
    server.script(Turn(sample="compat/groq-error-event.sse"))
    model = make_adapter("openai", api_key="get_something_by_name", max_attempts=1)
    agent = await store.agent(model)
    with pytest.raises(ProviderError):
        await agent.run("hi")
    stored = await store.history()
    assert stored[-1].stop is not None
    assert "get_something_by_name" not in repr(stored)
