"""`@tool` schemas and validation, tool failures the model sees, and lossless message JSON."""

from __future__ import annotations

import enum
import json
from typing import Literal

import pytest

from engine import (
    AgentEventType,
    AssistantMessage,
    InternalMessage,
    StopInfo,
    StopReason,
    SystemMessage,
    ToolCall,
    ToolDefinitionError,
    ToolMessage,
    ToolOutcome,
    UnknownMessageTypeError,
    Usage,
    UserMessage,
    message_from_json,
    message_to_json,
    tool,
)
from engine.tools import ToolArgumentError
from tests.support.scripted import ScriptedModel, Turn


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


@tool
def weather(city: str, days: int = 1, unit: Unit = Unit.C, tags: list[str] | None = None) -> dict:
    """Get the forecast.

    Args:
        city: the city name,
            as people write it.
        days: how many days ahead.
        unit: temperature unit.
        tags: optional labels.
    """
    return {"city": city, "days": days, "unit": unit.value, "tags": tags}


def test_schema_comes_from_hints_and_docstring():
    assert weather.name == "weather"
    assert weather.description == "Get the forecast."
    props = weather.parameters["properties"]
    assert props["city"] == {"type": "string", "description": "the city name, as people write it."}
    assert props["days"] == {"type": "integer", "description": "how many days ahead.", "default": 1}
    assert props["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert props["tags"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}
    assert weather.parameters["required"] == ["city"]


async def test_arguments_are_validated_and_converted():
    result = await weather.invoke({"city": "Oslo", "days": 2.0, "unit": "fahrenheit"})
    assert result == {"city": "Oslo", "days": 2, "unit": "fahrenheit", "tags": None}
    for bad, why in [
        ({}, "missing required argument 'city'"),
        ({"city": 3}, "must be a string"),
        ({"city": "x", "days": "two"}, "must be an integer"),
        ({"city": "x", "unit": "kelvin"}, "must be one of"),
        ({"city": "x", "zzz": 1}, "unexpected argument"),
    ]:
        with pytest.raises(ToolArgumentError, match=why):
            weather.validate(bad)


def test_literal_and_unsupported_types():
    @tool(name="pick", description="Pick one.")
    def pick(mode: Literal["a", "b"]) -> str:
        return mode

    assert pick.parameters["properties"]["mode"] == {"enum": ["a", "b"]}
    with pytest.raises(ToolDefinitionError, match="not supported"):

        @tool
        def broken(x: object) -> None:
            """Nope."""


async def test_failing_and_malformed_calls_become_failed_results_and_the_run_goes_on(store):
    @tool
    async def explode() -> str:
        """Always fails."""
        raise RuntimeError("disk full")

    calls = [
        ToolCall("1", "explode", {}),
        ToolCall("2", "weather", {"city": 5}),
        ToolCall("3", "nope", {}),
        ToolCall("4", "weather", {"city": "Rome"}),
    ]
    model = ScriptedModel([Turn(tool_calls=calls), Turn(text="Summary")])
    agent = await store.agent(model, tools=[explode, weather])
    final = await agent.run("go")
    assert final.content == "Summary"
    results = [m for m in await store.history() if isinstance(m, ToolMessage)]
    assert [r.success for r in results] == [False, False, False, True]
    assert "RuntimeError: disk full" in results[0].content
    assert "Invalid arguments for weather" in results[1].content
    assert "no tool named 'nope'" in results[2].content
    assert json.loads(results[3].content)["city"] == "Rome"
    sent = model.requests[1].messages
    assert [m.tool_call_id for m in sent if isinstance(m, ToolMessage)] == ["1", "2", "3", "4"]


async def test_sync_tools_run_off_the_event_loop(store):
    import threading

    threads = []

    @tool
    def where() -> str:
        """Report the thread."""
        threads.append(threading.current_thread())
        return "ok"

    model = ScriptedModel([Turn(tool_calls=[ToolCall("w", "where", {})]), Turn(text="done")])
    agent = await store.agent(model, tools=[where])
    await agent.run("go")
    assert threads and threads[0] is not threading.main_thread()


MESSAGES = [
    SystemMessage(content="Be brief."),
    UserMessage(content="你好 \u2028 line"),
    InternalMessage(content="Continue.", tag="resume:continue_response"),
    AssistantMessage(
        content="Let me check.",
        reasoning="Thinking…",
        tool_calls=(ToolCall("c1", "weather", {"city": "Oslo", "n": [1, 2]}),),
        usage=Usage(10, 5, 2, 1),
        model="m-1",
        provider_data={"signature": "abc"},
    ),
    AssistantMessage(
        content="cut",
        stop=StopInfo(
            StopReason.INTERRUPTED, "network_error", "Broke.", {"withheld_tool_calls": ["x"]}
        ),
    ),
    ToolMessage(tool_call_id="c1", name="weather", content="sunny", success=False),
    ToolMessage(
        tool_call_id="c2",
        name="write",
        content="stopped",
        success=False,
        outcome=ToolOutcome.NOT_RUN,
    ),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_every_message_type_round_trips_losslessly(message):
    text = message_to_json(message)
    assert message_from_json(text) == message
    assert json.loads(text)["v"] == 1


def test_unknown_types_and_newer_versions_are_refused():
    with pytest.raises(UnknownMessageTypeError, match="'hologram'"):
        message_from_json('{"v":1,"type":"hologram","id":"x","created_at":0}')
    with pytest.raises(UnknownMessageTypeError):
        message_from_json('{"v":99,"type":"user","id":"x","created_at":0,"content":"hi"}')


def test_a_tool_result_says_how_it_ended_in_a_machine_readable_field():
    assert ToolMessage(tool_call_id="a").outcome is ToolOutcome.OK
    assert ToolMessage(tool_call_id="a", success=False).outcome is ToolOutcome.FAILED
    # Written only when it says more than ``success``; an unknown one reads as the default.
    default = json.loads(message_to_json(ToolMessage(tool_call_id="a", success=False)))
    assert "outcome" not in default
    later = '{"v":1,"type":"tool","id":"x","created_at":0,"tool_call_id":"a","success":false,"outcome":"teleported"}'
    assert message_from_json(later).outcome is ToolOutcome.FAILED


def test_content_parts_are_read_as_text():
    parts = '{"v":1,"type":"user","id":"x","created_at":0,"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}'
    assert message_from_json(parts).content == "ab"


def test_messages_have_stable_distinct_ids():
    a, b = UserMessage(content="x"), UserMessage(content="x")
    assert a.id != b.id and message_from_json(message_to_json(a)).id == a.id


async def test_tools_added_after_the_message_is_stored_are_offered_to_the_first_model_call(store):
    """A host adds slow tools once the person's message is stored: the stream waits at that
    event until the next is asked for, so the first model call already offers them."""
    calls = [ToolCall("1", "weather", {"city": "Oslo"})]
    model = ScriptedModel([Turn(tool_calls=calls), Turn(text="Cold.")])
    agent = await store.agent(model)
    assert agent.tools == {}
    kinds = []
    async for event in agent.stream("Weather in Oslo?"):
        kinds.append(event.type)
        if event.type is AgentEventType.MESSAGE_APPENDED and isinstance(event.message, UserMessage):
            assert model.requests == []  # the model is not called yet
            agent.add_tools([weather])
    assert [t.name for t in model.requests[0].tools] == ["weather"]
    results = [m for m in await store.history() if isinstance(m, ToolMessage)]
    assert results[0].success and json.loads(results[0].content)["city"] == "Oslo"
