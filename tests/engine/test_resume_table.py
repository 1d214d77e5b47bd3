"""One test per row of the resume table and per error reason, each as after a restart.

Every history is written to a real SQLite file, then a new Agent on a new connection reads
the resume point and resumes, as the app does when a conversation is reopened.
"""

from __future__ import annotations

import pytest

from engine import (
    AgentResumeError,
    AssistantMessage,
    InternalMessage,
    ResumeKind,
    StopInfo,
    StopReason,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    tool,
)
from tests.support.scripted import ScriptedModel, Turn

# What the model reads, pinned here word for word (not imported from the code under test).
# The first is the seed's exact sentence (/work/shared/seed, the resume table's footnote);
# none of them is translated: they go to the model, whatever language the person reads.
INTERRUPTED_TOOL_TEXT = (
    "The process stopped while this tool was running, so it may or may not have completed, "
    "and whatever it changes may or may not have happened. Check the current state before "
    "running it again."
)
RETRY_NOTICE = (
    "Your previous response was cut off before it was complete, so the user did not receive "
    "all of it. Redo that response from the start."
)
CONTINUE_NOTICE = (
    "Your previous response reached the output limit. Continue exactly where it stopped, "
    "without repeating anything already written."
)

RAN: list[str] = []


@tool
def write_file(name: str) -> str:
    """Write a file.

    Args:
        name: the file to write.
    """
    RAN.append(name)
    return f"wrote {name}"


@pytest.fixture(autouse=True)
def _clear_runs() -> None:
    RAN.clear()


CALLS = (
    ToolCall("a", "write_file", {"name": "a.txt"}),
    ToolCall("b", "write_file", {"name": "b.txt"}),
)


async def resume_once(store, history, answer="Resumed.", **agent_kwargs):
    """Seed ``history``, reopen, return (point, final answer, model, stored history)."""
    await store.seed("s", history)
    model = ScriptedModel([Turn(text=answer)])
    agent = await store.agent(model, tools=[write_file], **agent_kwargs)
    point = await agent.resume_point()
    assert point is not None
    final = await agent.resume()
    assert await agent.resume_point() is None, "nothing is left to resume afterwards"
    return point, final, model, await store.history()


async def test_user_message_calls_the_model_and_adds_nothing(store):
    point, final, model, history = await resume_once(store, [UserMessage(content="Hi")])
    assert point.kind is ResumeKind.CALL_MODEL
    assert final.content == "Resumed."
    assert [type(m).__name__ for m in history] == ["UserMessage", "AssistantMessage"]
    assert [m.content for m in model.requests[0].messages] == ["Hi"]


async def test_internal_message_calls_the_model(store):
    point, _, model, history = await resume_once(
        store, [UserMessage(content="Hi"), InternalMessage(content="Go on.", tag="goal")]
    )
    assert point.kind is ResumeKind.CALL_MODEL
    assert len(history) == 3
    assert model.requests[0].messages[-1].content == "Go on."


async def test_all_tool_results_present_calls_the_model_without_rerunning(store):
    history = [
        UserMessage(content="Write both"),
        AssistantMessage(tool_calls=CALLS),
        ToolMessage(tool_call_id="a", name="write_file", content="wrote a.txt"),
        ToolMessage(tool_call_id="b", name="write_file", content="wrote b.txt"),
    ]
    point, final, _, stored = await resume_once(store, history)
    assert point.kind is ResumeKind.CALL_MODEL
    assert point.unanswered_tool_calls == ()
    assert RAN == []
    assert len(stored) == 5 and stored[-1].content == final.content


async def test_paused_step_at_the_limit_calls_the_model_again(store):
    paused = AssistantMessage(
        content="Searching…", stop=StopInfo(StopReason.PAUSED, raw="pause_turn")
    )
    point, _, model, stored = await resume_once(store, [UserMessage(content="Q"), paused])
    assert point.kind is ResumeKind.CALL_MODEL
    assert point.stop is not None and point.stop.reason is StopReason.PAUSED
    assert len(stored) == 3, "the resume adds nothing before calling the model"
    assert model.requests[0].messages[-1].content == "Searching…"


async def test_tool_calls_without_results_are_answered_not_run(store):
    history = [UserMessage(content="Write both"), AssistantMessage(tool_calls=CALLS)]
    point, final, model, stored = await resume_once(store, history)
    assert point.kind is ResumeKind.RECOVER_TOOLS
    assert [c.id for c in point.unanswered_tool_calls] == ["a", "b"]
    assert "write_file" in point.description
    assert RAN == []
    added = stored[2:4]
    assert all(isinstance(m, ToolMessage) and not m.success for m in added)
    assert [m.content for m in added] == [INTERRUPTED_TOOL_TEXT] * 2
    assert final.content == "Resumed."


async def test_interrupted_response_is_kept_and_redone(store):
    partial = AssistantMessage(
        content="Half an ans",
        stop=StopInfo(StopReason.INTERRUPTED, raw="network_error", message="Connection broke."),
    )
    point, final, model, stored = await resume_once(store, [UserMessage(content="Q"), partial])
    assert point.kind is ResumeKind.RETRY_RESPONSE
    assert point.stop == partial.stop
    assert "connection" in point.description.lower()
    notice = stored[2]
    assert isinstance(notice, InternalMessage) and notice.tag == "resume:retry_response"
    assert notice.content == RETRY_NOTICE
    sent = model.requests[0].messages
    assert sent[-2].content == "Half an ans" and sent[-1].content == RETRY_NOTICE
    assert stored[1] == partial, "the partial response is kept as it was"


async def test_max_output_response_is_continued(store):
    cut = AssistantMessage(content="1. a\n2.", stop=StopInfo(StopReason.MAX_OUTPUT, raw="length"))
    point, _, model, stored = await resume_once(store, [UserMessage(content="List"), cut])
    assert point.kind is ResumeKind.CONTINUE_RESPONSE
    assert isinstance(stored[2], InternalMessage) and stored[2].tag == "resume:continue_response"
    assert model.requests[0].messages[-1].content == CONTINUE_NOTICE


@pytest.mark.parametrize(
    ("last", "reason"),
    [
        (AssistantMessage(content="Done."), "completed"),
        (
            AssistantMessage(content="No.", stop=StopInfo(StopReason.REFUSAL, raw="refusal")),
            "refused",
        ),
        (
            AssistantMessage(stop=StopInfo(StopReason.CONTEXT_FULL, raw="context_length_exceeded")),
            "context_full",
        ),
        (AssistantMessage(content="?", stop=StopInfo("weird_new_value")), "unknown_stop"),
        (ToolMessage(tool_call_id="zzz", name="write_file", content="?"), "malformed"),
    ],
)
async def test_nothing_to_resume(store, last, reason):
    await store.seed("s", [UserMessage(content="Q"), last])
    model = ScriptedModel([Turn(text="never")])
    errors = []

    class Hooks:
        async def on_error(self, ctx, error):
            errors.append(error)

        async def before_run(self, ctx):
            raise AssertionError("before_run must not run when there is nothing to resume")

    agent = await store.agent(model, extensions=[Hooks()])
    assert await agent.resume_point() is None
    with pytest.raises(AgentResumeError) as caught:
        await agent.resume()
    assert caught.value.reason == reason
    assert errors == [caught.value], "error hooks run like any failed request"
    assert model.requests == [], "no model is called"
    assert len(await store.history()) == 2, "nothing is written"


@pytest.mark.parametrize(
    "tail",
    [
        # Every asked call is answered, plus one nobody asked for: not "send the results".
        [
            AssistantMessage(tool_calls=CALLS[:1]),
            ToolMessage(tool_call_id="a", name="write_file", content="wrote a.txt"),
            ToolMessage(tool_call_id="zzz", name="write_file", content="?"),
        ],
        # A call is unanswered and the only result answers an unknown id: not "recover a, b".
        [
            AssistantMessage(tool_calls=CALLS),
            ToolMessage(tool_call_id="zzz", name="write_file", content="?"),
        ],
    ],
    ids=["extra_result", "only_unknown_result"],
)
async def test_a_result_for_a_call_the_assistant_never_made_is_malformed(store, tail):
    """The asker is a real assistant with tool calls, so only the id check can refuse this."""
    await store.seed("s", [UserMessage(content="Q"), *tail])
    model = ScriptedModel([Turn(text="never")])
    agent = await store.agent(model)
    assert await agent.resume_point() is None
    with pytest.raises(AgentResumeError) as caught:
        await agent.resume()
    assert caught.value.reason == "malformed"
    assert model.requests == [], "no model is called"
    assert len(await store.history()) == 1 + len(tail), "nothing is written"


async def test_unknown_value_maps_to_other_stop():
    stop = StopInfo("weird_new_value")
    assert stop.reason is StopReason.OTHER and stop.raw == "weird_new_value"


async def test_empty_and_unknown_sessions(store):
    await store.seed("only-system", [SystemMessage(content="be brief")])
    for session in ("never-created", "only-system"):
        agent = await store.agent(ScriptedModel([Turn(text="x")]), session_id=session)
        assert await agent.resume_point() is None
        with pytest.raises(AgentResumeError) as caught:
            await agent.resume()
        assert caught.value.reason == "empty"


async def test_the_seeds_failure_story(store):
    """A failure after the tool ran: resume answers without running the tool again."""
    import httpx

    model = ScriptedModel(
        [
            Turn(tool_calls=[ToolCall("w", "write_file", {"name": "notes.txt"})]),
            Turn(fail_after=0, error=httpx.ConnectError("connection dropped")),
            Turn(text="Done: wrote notes.txt"),
        ]
    )
    agent = await store.agent(model, session_id="failure", tools=[write_file])
    with pytest.raises(httpx.ConnectError):
        await agent.run("Write notes.txt")
    agent = await store.agent(model, session_id="failure", tools=[write_file])  # a restart
    point = await agent.resume_point()
    assert point is not None and point.kind.value == "call_model"
    answer = await agent.resume()
    assert answer.content == "Done: wrote notes.txt"
    assert RAN == ["notes.txt"], "resuming did not run the tool a second time"
    assert await agent.resume_point() is None


async def test_the_seeds_crash_story(store):
    """A crash with one of two results stored: only the missing call is answered."""
    await store.seed(
        "crash",
        [
            UserMessage(content="Write a.txt and b.txt"),
            AssistantMessage(tool_calls=CALLS),
            ToolMessage(tool_call_id="a", name="write_file", content="wrote a.txt", success=True),
        ],
    )

    async def answer(request):
        interrupted = [m for m in request.messages if isinstance(m, ToolMessage) and not m.success]
        return f"{len(interrupted)} tool was interrupted"

    class AnswerModel:
        async def stream(self, request):
            from engine import ModelEvent, ModelResponse

            text = await answer(request)
            yield ModelEvent.completed(ModelResponse(AssistantMessage(content=text)))

    agent = await store.agent(AnswerModel(), session_id="crash", tools=[write_file])
    point = await agent.resume_point()
    assert point is not None and point.kind.value == "recover_tools"
    assert [call.id for call in point.unanswered_tool_calls] == ["b"]
    assert await agent.resume() == (await store.history("crash"))[-1]
    history = await store.history("crash")
    assert history[-1].content == "1 tool was interrupted"
    assert history[2].content == "wrote a.txt", "the arrived result is kept"
    assert RAN == []
    assert await agent.resume_point() is None


async def test_resume_point_reads_a_long_run_of_tool_results(store):
    """The asker can sit further back than one page of the tail."""
    calls = tuple(ToolCall(f"c{i}", "write_file", {"name": f"{i}.txt"}) for i in range(80))
    results = [ToolMessage(tool_call_id=c.id, name=c.name, content="ok") for c in calls[:79]]
    await store.seed(
        "s", [UserMessage(content="many"), AssistantMessage(tool_calls=calls), *results]
    )
    agent = await store.agent(ScriptedModel([Turn(text="x")]))
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
    assert [c.id for c in point.unanswered_tool_calls] == ["c79"]


class ListStore:
    """A host's own storage with only the two required hooks (``restore`` and ``append``).

    The extension API (engine.extensions) makes ``restore_tail`` optional; the agent then
    reads the resume point from the whole history.
    """

    def __init__(self, messages: list) -> None:
        self.messages = list(messages)

    async def restore(self, ctx) -> list:
        return list(self.messages)

    async def append(self, ctx, message) -> None:
        self.messages.append(message)


async def test_a_store_without_restore_tail_reads_the_resume_point() -> None:
    from engine import Agent, AgentRunConfig

    history = [UserMessage(content="Hello?")]
    agent = await Agent.create(
        ScriptedModel([Turn(text="Hi.")]),
        config=AgentRunConfig("s"),
        extensions=[ListStore(history)],
    )
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL
    final = await agent.resume()
    assert final.content == "Hi."
    assert await agent.resume_point() is None
