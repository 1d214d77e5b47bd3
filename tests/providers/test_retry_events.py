"""Retries are news a host can show, and an unreachable provider says "Could not connect".

Against the loopback server (a connection reset before any answer, `Fault.REFUSE`) and a
closed port: each adapter yields `ModelEvent.retrying` before every new attempt, the agent
passes it on as MODEL_RETRYING, and the request then fails with "Could not connect to …" and
stores no partial (nothing arrived, so nothing is said to be saved).
"""

from __future__ import annotations

import socket

import pytest

from engine import (
    AgentEvent,
    AgentEventType,
    AssistantMessage,
    ModelEventKind,
    ModelRequest,
    ProviderConnectionError,
    RetryInfo,
    UserMessage,
)
from tests.support.provider_server import Fault, Turn


def ask() -> ModelRequest:
    return ModelRequest([UserMessage(content="hi")])


def closed_url(protocol: str) -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}" + ("/v1" if protocol == "openai" else "")


async def collect(model) -> tuple[list, BaseException | None]:
    events = []
    try:
        async for event in model.stream(ask()):
            events.append(event)
    except ProviderConnectionError as exc:
        return events, exc
    return events, None


def check_retries(retries: list, attempts: int) -> None:
    assert [r.attempt for r in retries] == list(range(2, attempts + 1))
    assert all(r.attempts == attempts for r in retries)
    assert all(r.delay > 0 for r in retries)
    assert all(isinstance(r.error, ProviderConnectionError) for r in retries)
    assert all(str(r.error).startswith("Could not connect to") for r in retries)


@pytest.mark.parametrize("where", ["closed_port", "refused"])
async def test_each_retry_is_an_event_then_could_not_connect(
    server, make_adapter, protocol, where
) -> None:
    if where == "refused":
        server.script(*[Turn(fault=Fault.REFUSE)] * 4)
        model = make_adapter(protocol, max_attempts=4)
    else:
        model = make_adapter(protocol, max_attempts=4, base_url=closed_url(protocol))
    events, error = await collect(model)

    assert error is not None, "the request fails once every attempt did"
    assert str(error).startswith("Could not connect to"), str(error)
    assert "broke" not in str(error)
    assert [e.kind for e in events] == [ModelEventKind.RETRYING] * 3
    check_retries([e.retry for e in events], 4)
    if where == "refused":
        assert len(server.chat_requests()) == 4
        assert error.key == "provider.connect.no_answer"


async def test_a_retry_that_succeeds_announces_itself_first(server, make_adapter, protocol) -> None:
    server.script(Turn(status=503), Turn(text="Recovered."))
    events, error = await collect(make_adapter(protocol, max_attempts=3))
    assert error is None
    assert events[0].kind is ModelEventKind.RETRYING
    assert (events[0].retry.attempt, events[0].retry.attempts) == (2, 3)
    assert [e.kind for e in events[1:]].count(ModelEventKind.RETRYING) == 0
    assert events[-1].response.message.content == "Recovered."


async def test_a_single_attempt_announces_no_retry(make_adapter, protocol) -> None:
    events, error = await collect(
        make_adapter(protocol, max_attempts=1, base_url=closed_url(protocol))
    )
    assert events == [] and error is not None


@pytest.mark.parametrize("where", ["closed_port", "refused"])
async def test_the_agent_passes_retries_on_and_stores_no_partial(
    server, make_adapter, store, where
) -> None:
    if where == "refused":
        server.script(*[Turn(fault=Fault.REFUSE)] * 4)
        model = make_adapter("openai", max_attempts=4)
    else:
        model = make_adapter("openai", max_attempts=4, base_url=closed_url("openai"))
    agent = await store.agent(model)
    events: list[AgentEvent] = []
    with pytest.raises(ProviderConnectionError) as info:
        async for event in agent.stream("Is anyone there?"):
            events.append(event)

    assert str(info.value).startswith("Could not connect to")
    kinds = [e.type for e in events]
    assert kinds == [
        AgentEventType.MESSAGE_APPENDED,  # the question
        AgentEventType.MODEL_STARTED,
        *[AgentEventType.MODEL_RETRYING] * 3,
        AgentEventType.MODEL_STOPPED,
    ]
    retrying = [e for e in events if e.type is AgentEventType.MODEL_RETRYING]
    check_retries([e.retry for e in retrying], 4)
    assert all(e.error is e.retry.error for e in retrying)
    assert events[-1].message is None, "nothing arrived: no partial to announce"
    appended = [e.message for e in events if e.type is AgentEventType.MESSAGE_APPENDED]
    assert not any(isinstance(m, AssistantMessage) for m in appended)
    assert [type(m) for m in await store.history()] == [UserMessage]


async def test_the_agent_answer_after_a_retry_is_whole(server, make_adapter, store) -> None:
    server.script(Turn(fault=Fault.REFUSE), Turn(text="Here now."))
    agent = await store.agent(make_adapter("anthropic", max_attempts=2))
    events = [event async for event in agent.stream("Is anyone there?")]
    kinds = [e.type for e in events]
    assert kinds.index(AgentEventType.MODEL_RETRYING) < kinds.index(AgentEventType.TEXT_DELTA)
    history = await store.history()
    assert [type(m) for m in history] == [UserMessage, AssistantMessage]
    assert history[-1].content == "Here now." and history[-1].stop is None


def test_a_retrying_event_needs_its_retry() -> None:
    error = ProviderConnectionError("gone")
    event = AgentEvent.model_retrying("s", "r", RetryInfo(2, 4, 0.4, error))
    assert (event.retry.attempt, event.retry.attempts, event.retry.delay) == (2, 4, 0.4)
    assert event.error is error and event.message is None
    with pytest.raises(ValueError, match="model_retrying event needs retry"):
        AgentEvent(AgentEventType.MODEL_RETRYING, "s", "r", error=error)
