"""Nothing a server sends can hurt (DESIGN.md, "Untrusted input"), through each adapter.

The loopback server plays a hostile provider: a line that never ends, an error body that never
ends, a stream that keeps the connection alive with pings and sends nothing else. Each is
bounded by the server itself (it stops at ``hostile_bytes``, when released, or when the
client hangs up), so a failing client cannot hang the suite.
For each: what the request raises, that it raises soon, and that what arrived before is kept
(stored with stop ``interrupted``, as for any mid-stream fault).

That the client stopped reading is counted on the client's own connection
(tests/support/counting.py), never by what the server managed to send: socket buffers of
several megabytes take in whatever the server writes before the hang-up reaches it, as much
as the load of the moment allows, and that count made these tests fail one run in five on a
busy machine.
"""

from __future__ import annotations

import asyncio

import pytest

from engine import (
    AssistantMessage,
    ProviderResponseError,
    ProviderStatusError,
    ProviderTimeoutError,
    StopReason,
)
from engine.providers.sse import MAX_EVENT_SIZE
from tests.support.counting import CountingBackend, counting_transport
from tests.support.provider_server import Fault, Turn

LONG = "The first part of a long answer, cut off somewhere in the middle."
MB = 1024 * 1024


async def stored_partial(store) -> AssistantMessage:
    history = await store.history()
    last = history[-1]
    assert isinstance(last, AssistantMessage), history
    assert last.stop is not None and last.stop.reason is StopReason.INTERRUPTED
    return last


async def test_a_line_that_never_ends_stops_at_the_cap_and_keeps_the_partial(
    server, make_adapter, protocol, store
) -> None:
    # Before the cap, the whole 8 MB line was read (and then the stream "ended early").
    server.script(
        Turn(text=LONG, chunk_size=4, fault=Fault.HUGE_LINE, fault_after=8, hostile_bytes=8 * MB)
    )
    network = CountingBackend()
    model = make_adapter(
        protocol, max_attempts=1, max_event_size=1 * MB, transport=counting_transport(network)
    )
    agent = await store.agent(model)
    async with asyncio.timeout(20):
        with pytest.raises(ProviderResponseError) as info:
            await agent.run("hi")
    assert "larger than 1 MB" in str(info.value)
    partial = await stored_partial(store)
    assert partial.content and LONG.startswith(partial.content)
    assert partial.stop.raw == "provider_error"
    # Read up to the cap (and at most one socket read of 64 KB past it), then hung up.
    read = network.bytes_read
    assert 1 * MB < read < 1 * MB + 256 * 1024, f"the client read {read} bytes of an 8 MB line"


async def test_the_default_cap_is_16_mb(server, make_adapter, store) -> None:
    assert MAX_EVENT_SIZE == 16 * MB
    server.script(
        Turn(text=LONG, chunk_size=4, fault=Fault.HUGE_LINE, fault_after=4, hostile_bytes=24 * MB)
    )
    # Reading 16 MB brings no model event: allow it more than the fixtures' 1 s between events.
    network = CountingBackend()
    model = make_adapter(
        "openai", max_attempts=1, idle_timeout=30, transport=counting_transport(network)
    )
    assert model.max_event_size == 16 * MB
    agent = await store.agent(model)
    async with asyncio.timeout(60):
        with pytest.raises(ProviderResponseError, match="larger than 16 MB"):
            await agent.run("hi")
    assert (await stored_partial(store)).content
    read = network.bytes_read
    assert 16 * MB < read < 16 * MB + 256 * 1024, f"the client read {read} bytes of a 24 MB line"


async def test_an_endless_error_body_is_read_up_to_64_kb(server, make_adapter, protocol) -> None:
    # Before: the whole body was read into memory (50 MB here, 400 MB in the report).
    server.script(Turn(status=400, fault=Fault.ENDLESS_ERROR, hostile_bytes=50 * MB))
    network = CountingBackend()
    model = make_adapter(protocol, max_attempts=1, transport=counting_transport(network))
    async with asyncio.timeout(20):
        with pytest.raises(ProviderStatusError) as info:
            async for _ in model.stream(_ask()):
                pass
    sentence = str(info.value)
    assert info.value.status == 400
    # The server's words are quoted at most ~300 characters: the sentence stays short,
    # and so does anything that stores it (the window's last error).
    assert "yyyy" in sentence and len(sentence) < 600, len(sentence)
    # 64 KB of the body, and at most one socket read past it.
    read = network.bytes_read
    assert read < 64 * 1024 + 128 * 1024, f"the client read {read} bytes of the error body"


async def test_a_long_error_message_is_quoted_short(server, make_adapter, protocol) -> None:
    server.script(Turn(status=400, error="The request was rejected because " + "z" * 5000))
    model = make_adapter(protocol, max_attempts=1)
    with pytest.raises(ProviderStatusError) as info:
        async for _ in model.stream(_ask()):
            pass
    sentence = str(info.value)
    assert "The request was rejected because" in sentence
    assert "…" in sentence and len(sentence) < 600, len(sentence)


async def test_pings_are_not_progress(server, make_adapter, protocol, store) -> None:
    # Before: every ping reset the read timeout, and the request lived until the server
    # gave up (a minute here; for ever on a real one).
    server.script(
        Turn(text=LONG, chunk_size=4, fault=Fault.PINGS, fault_after=8, delay=0.05),
    )
    model = make_adapter(protocol, max_attempts=1, idle_timeout=0.5)
    agent = await store.agent(model)
    async with asyncio.timeout(10):
        with pytest.raises(ProviderTimeoutError) as info:
            await agent.run("hi")
    assert "0.5 seconds" in str(info.value)
    partial = await stored_partial(store)
    assert partial.content and LONG.startswith(partial.content)
    assert server.wait_for_hostile(1)[0] > 0, "the server sent no pings"


async def test_an_answer_slower_than_the_idle_deadline_in_total_is_not_cut(
    server, make_adapter, protocol
) -> None:
    # The deadline is between events, not for the whole answer.
    server.script(Turn(text="x" * 40, chunk_size=1, delay=0.02))
    model = make_adapter(protocol, max_attempts=1, idle_timeout=0.3)
    events = [event async for event in model.stream(_ask())]
    assert events[-1].response is not None
    assert events[-1].response.message.content == "x" * 40


def _ask():
    from engine.messages import UserMessage
    from engine.model import ModelRequest

    return ModelRequest([UserMessage(content="hi")])


async def test_the_idle_deadline_follows_the_read_timeout_unless_given() -> None:
    from engine.providers import OpenAIChatModel

    async with OpenAIChatModel("m") as default, OpenAIChatModel("m", timeout=300) as slow:
        assert default.idle_timeout == 120.0  # DESIGN.md: 120 s by default
        assert slow.idle_timeout == 300.0  # a slow model allowed longer reads is not cut at 120
    async with OpenAIChatModel("m", timeout=300, idle_timeout=5) as given:
        assert given.idle_timeout == 5


async def test_an_unknown_stop_reason_is_stored_short_and_without_the_key(
    server, make_adapter, protocol, store
) -> None:
    # Before: a 100 KB finish_reason holding the key was stored whole as the stop's raw
    # value and quoted whole in its message.
    from tests.providers.conftest import SECRET_KEY

    server.script(Turn(text=LONG, raw_stop="bad key " + SECRET_KEY + " " + "x" * 100_000))
    model = make_adapter(protocol, max_attempts=1)
    agent = await store.agent(model)
    async with asyncio.timeout(20):
        await agent.run("hi")
    last = (await store.history())[-1]
    assert isinstance(last, AssistantMessage) and last.content == LONG
    stop = last.stop
    assert stop is not None and stop.reason is StopReason.OTHER
    assert stop.raw is not None and stop.raw.startswith("bad key [redacted]")
    assert len(stop.raw) <= 64 and len(stop.message or "") < 400, (stop.raw, stop.message)
    stored = repr(await store.history()) + repr(stop.details)
    assert SECRET_KEY not in stored and "SECRETKEY" not in stored


async def test_a_stop_sequence_is_stored_short_and_without_the_key(
    server, make_adapter, store
) -> None:
    import json

    from tests.providers.conftest import SECRET_KEY

    def sse(data: dict) -> bytes:
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    sequence = SECRET_KEY + " " + "y" * 100_000
    body = (
        sse({"type": "message_start", "message": {"usage": {"input_tokens": 1}}})
        + sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text"}})
        + sse(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hi"},
            }
        )
        + sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "stop_sequence", "stop_sequence": sequence},
            }
        )
        + sse({"type": "message_stop"})
    )
    server.script(Turn(body=body))
    model = make_adapter("anthropic", max_attempts=1)
    events = [event async for event in model.stream(_ask())]
    stop = events[-1].response.stop
    assert stop.details["stop_sequence"].startswith("[redacted]")
    assert len(stop.details["stop_sequence"]) <= 64
    assert "SECRETKEY" not in repr(events[-1].response)


# A body sent a byte at a time: each read is quick (httpx's read timeout never fires), the
# whole never comes. Before, each of these held the request for as long as the server liked.


async def test_a_dripping_error_body_ends_at_the_idle_deadline(
    server, make_adapter, protocol
) -> None:
    server.script(Turn(status=500, fault=Fault.DRIP, delay=0.02))
    model = make_adapter(protocol, max_attempts=1, idle_timeout=0.5)
    async with asyncio.timeout(20):
        with pytest.raises(ProviderTimeoutError) as info:
            async for _ in model.stream(_ask()):
                pass
    assert info.value.key == "provider.slow_body" and "0.5 seconds" in str(info.value)
    assert server.wait_for_hostile(1)[0] > 0, "the server dripped nothing"


async def test_a_dripping_model_list_ends_at_the_idle_deadline(
    server, make_adapter, protocol
) -> None:
    for status in (200, 500):
        server.models_turn = Turn(status=status, fault=Fault.DRIP, delay=0.02)
        model = make_adapter(protocol, idle_timeout=0.5)
        async with asyncio.timeout(20):
            with pytest.raises(ProviderTimeoutError) as info:
                await model.list_models()
        assert info.value.key == "provider.slow_body"


@pytest.mark.parametrize("status", [200, 400])
async def test_a_dripping_unstreamed_repeat_ends_within_its_deadline(
    server, make_adapter, status
) -> None:
    # After an empty stream the request is sent again unstreamed (outside the idle
    # deadline: the whole answer is made first); its body still has a total deadline.
    server.script(Turn(body=b""), Turn(status=status, fault=Fault.DRIP, delay=0.02))
    model = make_adapter("openai", max_attempts=1, idle_timeout=0.5)
    async with asyncio.timeout(20):
        with pytest.raises(ProviderTimeoutError) as info:
            async for _ in model.stream(_ask()):
                pass
    assert info.value.key == "provider.slow_body"
