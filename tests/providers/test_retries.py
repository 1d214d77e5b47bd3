"""Retries: only before any output, bounded, honouring Retry-After; never after output began.

The server counts every request it sees, so each test asserts how many attempts were made.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import socket
import time

import pytest

from engine.errors import (
    ErrorAction,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderRateLimitError,
    ProviderResponseError,
    ProviderStatusError,
    ProviderTimeoutError,
)
from engine.messages import UserMessage
from engine.model import ModelEventKind, ModelRequest
from engine.providers.base import parse_retry_after
from tests.support.language import english_words
from tests.support.provider_server import Fault, ScriptedCall, Turn

OK = Turn(text="Recovered.")


def ask() -> ModelRequest:
    return ModelRequest([UserMessage(content="hi")])


async def run(model) -> list:
    return [event async for event in model.stream(ask())]


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
async def test_transient_statuses_are_retried(server, make_adapter, status) -> None:
    server.script(Turn(status=status), OK)
    events = await run(make_adapter("openai"))
    assert events[-1].response.message.content == "Recovered."
    assert len(server.chat_requests()) == 2


async def test_anthropic_overloaded_529_is_retried(server, make_adapter) -> None:
    server.script(Turn(status=529, error="Overloaded"), OK)
    events = await run(make_adapter("anthropic"))
    assert events[-1].response.message.content == "Recovered."
    assert len(server.chat_requests()) == 2


async def test_retry_after_seconds_is_honoured(server, make_adapter, protocol) -> None:
    server.script(Turn(status=429, retry_after="1"), OK)
    events = await run(make_adapter(protocol))
    assert events[-1].response.message.content == "Recovered."
    first, second = server.chat_requests()
    assert second.received_at - first.received_at >= 0.95


async def test_retry_after_beyond_the_cap_fails_at_once(server, make_adapter, protocol) -> None:
    server.script(Turn(status=429, retry_after="3600"), OK)
    model = make_adapter(protocol, retry_after_cap=30)
    with pytest.raises(ProviderRateLimitError) as info:
        await run(model)
    assert len(server.chat_requests()) == 1
    assert info.value.retry_after == 3600
    assert info.value.status == 429
    assert "Try again in 3600 seconds (after " in str(info.value)


async def test_retry_after_http_date_beyond_the_cap(server, make_adapter) -> None:
    when = email.utils.formatdate(time.time() + 7200, usegmt=True)
    server.script(Turn(status=503, retry_after=when), OK)
    with pytest.raises(ProviderStatusError) as info:
        await run(make_adapter("openai", retry_after_cap=60))
    assert len(server.chat_requests()) == 1
    assert info.value.status == 503
    assert "Try again in 7" in str(info.value)  # about 7200 seconds


@pytest.mark.parametrize(
    ("turn", "retryable", "retry_after"),
    [
        (Turn(status=503, retry_after="2"), True, 2.0),
        (Turn(status=503, retry_after="3600"), False, 3600.0),  # past the cap: not retried
        (Turn(status=500), True, None),
        (Turn(status=400), False, None),
        (Turn(status=401, retry_after="2"), False, 2.0),  # a refused key is never retried
    ],
)
async def test_a_status_error_says_whether_and_when_to_retry(
    server, make_adapter, turn, retryable, retry_after
) -> None:
    server.script(turn)
    with pytest.raises(ProviderStatusError) as info:
        await run(make_adapter("openai", max_attempts=1, retry_after_cap=60))
    assert (info.value.retryable, info.value.retry_after) == (retryable, retry_after)


def test_provider_errors_take_retryable_and_retry_after_when_built() -> None:
    # Given at construction, keyword-only, defaulted: never set on the error afterwards.
    plain = ProviderResponseError("bad")
    assert (plain.retryable, plain.retry_after) == (False, None)
    status = ProviderStatusError("busy", status=503, retryable=True, retry_after=2.5)
    assert (status.retryable, status.retry_after, status.status) == (True, 2.5, 503)
    limited = ProviderRateLimitError("slow down", retry_after=9.0, retryable=True)
    assert (limited.retryable, limited.retry_after, limited.status) == (True, 9.0, 429)
    with pytest.raises(TypeError):
        ProviderTimeoutError("late", "the provider")  # everything but the message by name


def test_parse_retry_after_forms() -> None:
    now = 1_000_000.0
    date = email.utils.formatdate(now + 120, usegmt=True)
    assert parse_retry_after({"retry-after": "5"}, now) == 5.0
    assert parse_retry_after({"retry-after": "1.5"}, now) == 1.5
    assert parse_retry_after({"retry-after": date}, now) == pytest.approx(120, abs=1)
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}, now) == 0.25
    assert parse_retry_after({"retry-after": "soon"}, now) is None
    assert parse_retry_after({}, now) is None


async def test_attempts_are_bounded(server, make_adapter, protocol) -> None:
    server.script(*[Turn(status=503)] * 5)
    with pytest.raises(ProviderStatusError) as info:
        await run(make_adapter(protocol))
    assert info.value.status == 503
    assert len(server.chat_requests()) == 4  # max_attempts=4 requests in all
    assert "Try again in a moment" in str(info.value)


async def test_max_attempts_one_means_no_retry(server, make_adapter) -> None:
    server.script(Turn(status=500), OK)
    with pytest.raises(ProviderStatusError):
        await run(make_adapter("ollama", max_attempts=1))
    assert len(server.chat_requests()) == 1


async def test_total_retry_time_is_bounded(server, make_adapter) -> None:
    # Waiting 1 s would pass the 0.3 s budget: fail now rather than sleep past it.
    server.script(Turn(status=429, retry_after="1"), OK)
    with pytest.raises(ProviderRateLimitError):
        await run(make_adapter("openai", max_retry_time=0.3))
    assert len(server.chat_requests()) == 1


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors_are_never_retried(server, make_adapter, protocol, status) -> None:
    server.script(Turn(status=status), OK)
    with pytest.raises(ProviderAuthError) as info:
        await run(make_adapter(protocol))
    assert len(server.chat_requests()) == 1
    assert info.value.status == status
    assert "Check" in str(info.value) and "key" in str(info.value)
    assert "Settings" not in str(info.value), "the engine names no part of a host"
    assert info.value.action is ErrorAction.CHECK_KEY


async def test_401_wording(server, make_adapter) -> None:
    server.script(Turn(status=401))
    with pytest.raises(ProviderAuthError) as info:
        await run(make_adapter("anthropic"))
    assert str(info.value) == "Anthropic refused the API key (401). Check the key."
    assert info.value.sentence("zh_CN") == "Anthropic 拒绝了 API 密钥（401）。请检查密钥。"


async def test_bad_request_is_not_retried(server, make_adapter, protocol) -> None:
    server.script(Turn(status=400, error="temperature must be at most 2"), OK)
    with pytest.raises(ProviderStatusError) as info:
        await run(make_adapter(protocol))
    assert len(server.chat_requests()) == 1
    assert "rejected the request (400): temperature must be at most 2." in str(info.value)


async def test_unknown_ollama_model_says_how_to_pull_it(server, make_adapter) -> None:
    server.script(Turn(status=404, error="model 'llama9' not found"))
    with pytest.raises(ProviderStatusError, match="ollama pull llama9") as info:
        await run(make_adapter("ollama", model="llama9"))
    error = info.value
    assert error.action is ErrorAction.CHECK_MODEL and not error.retryable
    # A catalog sentence (before, English words pasted over the error's own): the same in
    # English whichever way it is asked for, and Chinese in Chinese.
    assert error.key == "provider.no_model.ollama"
    assert error.sentence("en") == str(error)
    assert str(error) == (
        "Ollama has no model 'llama9' (404): model 'llama9' not found. "
        "Download it with `ollama pull llama9`, or pick another model."
    )
    chinese = error.sentence("zh_CN")
    assert "ollama pull llama9" in chinese and "下载" in chinese
    said = "model 'llama9' not found"
    assert english_words(chinese, said, "ollama pull llama9", "Ollama", "'llama9'") == []


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_connection_refused_is_retried_then_explained(make_adapter, protocol) -> None:
    url = f"http://127.0.0.1:{closed_port()}" + ("/v1" if protocol == "openai" else "")
    model = make_adapter(protocol, base_url=url)
    with pytest.raises(ProviderConnectionError) as info:
        await run(model)
    assert "Could not connect to" in str(info.value)
    if protocol == "ollama":
        assert "ollama serve" in str(info.value)


@pytest.mark.parametrize(
    "fault", [Fault.REFUSE, Fault.STALL_HEADERS, Fault.RESET, Fault.MALFORMED, Fault.ERROR_EVENT]
)
async def test_faults_before_any_output(server, make_adapter, protocol, fault) -> None:
    # Nothing reached the caller, so a connection fault is retried, and so is an error
    # event that says the server is in trouble (OpenAI server_error, Anthropic overloaded);
    # a malformed event, or Ollama's error line, is reported rather than repeated.
    server.script(Turn(text="never seen", fault=fault, fault_after=0), OK)
    model = make_adapter(protocol, timeout=0.3)
    if fault is Fault.MALFORMED or (fault is Fault.ERROR_EVENT and protocol == "ollama"):
        with pytest.raises(ProviderResponseError):
            await run(model)
        assert len(server.chat_requests()) == 1
        return
    events = await run(model)
    assert events[-1].response.message.content == "Recovered."
    assert len(server.chat_requests()) == 2


AFTER_OUTPUT = {
    Fault.RESET: ProviderConnectionError,
    Fault.STALL_MIDSTREAM: ProviderTimeoutError,
    Fault.ERROR_EVENT: ProviderResponseError,
    Fault.MALFORMED: ProviderResponseError,
}


@pytest.mark.parametrize("fault", list(AFTER_OUTPUT))
async def test_no_retry_after_output_began(server, make_adapter, protocol, fault) -> None:
    server.script(
        Turn(text="abcdefghijklmnopqrstuvwxyz", chunk_size=2, fault=fault, fault_after=6), OK
    )
    model = make_adapter(protocol, timeout=0.3)
    seen = []
    with pytest.raises(AFTER_OUTPUT[fault]):
        async for event in model.stream(ask()):
            seen.append(event)
    assert len(server.chat_requests()) == 1
    assert seen and all(e.kind is ModelEventKind.TEXT for e in seen)
    assert "".join(e.delta for e in seen).startswith("ab")


async def test_tool_arguments_cut_mid_json(server, make_adapter, protocol) -> None:
    server.script(
        Turn(
            text="Calling.",
            tool_calls=[ScriptedCall("get_weather", {"city": "Reykjavik", "unit": "celsius"})],
            fault=Fault.CUT_TOOL_ARGS,
        ),
        OK,
    )
    model = make_adapter(protocol)
    seen = []
    with pytest.raises((ProviderConnectionError, ProviderResponseError)) as info:
        async for event in model.stream(ask()):
            seen.append(event)
    assert len(server.chat_requests()) == 1
    assert any(e.kind is ModelEventKind.TEXT for e in seen)
    assert info.value.action in (ErrorAction.RESUME, ErrorAction.CHECK_CONNECTION)
    assert "kept" not in str(info.value), "only the host knows whether what arrived was saved"


async def test_stalled_stream_is_released_when_the_server_closes(make_adapter, protocol) -> None:
    # A stall never outlives the server: closing it resets the connection at once.
    from tests.support.provider_server import ProviderServer

    with ProviderServer(stall_limit=30) as server:
        server.script(
            Turn(text="waiting" * 4, chunk_size=2, fault=Fault.STALL_MIDSTREAM, fault_after=6)
        )
        model = make_adapter(
            protocol,
            base_url=server.openai_url if protocol == "openai" else server.url,
            timeout=30,
            max_attempts=1,
        )
        stream = model.stream(ask())
        first = await anext(stream)
        assert first.kind in (ModelEventKind.TEXT, ModelEventKind.REASONING)
        server.close()
        # Released by close(), a hang-up: the 30 s timeout would be a ProviderTimeoutError.
        with pytest.raises(ProviderConnectionError):
            async for _ in stream:
                pass


async def test_break_after_the_stop_arrived_keeps_the_answer(
    server, make_adapter, protocol
) -> None:
    # The stop arrived; only the trailing usage / message_stop / [DONE] is lost to a reset.
    from tests.support.provider_server import render

    turn = Turn(text="All of it.", chunk_size=4, fault=Fault.RESET)
    events = render(turn, protocol, {"stream_options": {"include_usage": True}})
    turn.fault_after = len(events) - (2 if protocol == "openai" else 1)
    if protocol == "ollama":
        turn.fault_after = len(events) - 1  # NDJSON: the done line itself is cut: not whole
    server.script(turn, OK)
    model = make_adapter(protocol, max_attempts=1)
    if protocol == "ollama":
        with pytest.raises(ProviderConnectionError):
            await run(model)
        return
    result = await run(model)
    assert result[-1].response.message.content == "All of it."
    assert result[-1].response.message.stop is None
    assert len(server.chat_requests()) == 1


async def test_status_errors_render_in_the_language_asked(server, make_adapter) -> None:
    server.script(Turn(status=429, error="Slow down"))
    with pytest.raises(ProviderRateLimitError) as info:
        await run(make_adapter("openai", max_attempts=1))
    who = str(info.value).split(" is limiting")[0]
    assert (
        str(info.value)
        == f"{who} is limiting requests (429): Slow down. Wait a moment and try again."
    )
    # A server without a name of its own is named by its address, in Chinese words too.
    chinese_who = who.removeprefix("The server at ") + " 上的服务器"
    assert (
        info.value.sentence("zh_CN")
        == f"{chinese_who} 正在限制请求（429）: Slow down. 请稍等片刻后重试。"
    )
    assert info.value.action is ErrorAction.WAIT


async def test_a_connect_timeout_names_the_connect_timeout(make_adapter) -> None:
    # A listener whose backlog is full: the handshake never completes, as for a host that
    # drops packets. Before: "no data for 30 seconds" (the read timeout), never reached.
    import httpx

    from engine import ProviderTimeoutError

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    waiting = []
    try:
        for _ in range(4):
            client = socket.socket()
            client.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                client.connect(("127.0.0.1", port))
            waiting.append(client)
        model = make_adapter(
            "openai",
            base_url=f"http://127.0.0.1:{port}/v1",
            timeout=httpx.Timeout(30.0, connect=0.25),
            max_attempts=1,
        )
        async with asyncio.timeout(20):
            with pytest.raises(ProviderTimeoutError) as info:
                await run(model)
    finally:
        for client in waiting:
            client.close()
        listener.close()
    assert info.value.key == "provider.connect_timeout"
    assert f"127.0.0.1:{port}" in str(info.value) and "within 0.25 seconds" in str(info.value)
    assert "30 seconds" not in str(info.value)
