"""Hooks and their order, JSONL records, goal mode, the client wrappers and the public API."""

from __future__ import annotations

import asyncio
import json

import pytest

import engine
from engine import (
    AgentClient,
    AgentResumeError,
    AssistantMessage,
    Extension,
    Goal,
    GoalVerdict,
    InternalMessage,
    JSONLExtension,
    ModelEvent,
    ModelResponse,
    StopInfo,
    StopReason,
    SyncAgent,
    ToolCall,
    ToolDenial,
    ToolMessage,
    ToolOutcome,
    UserMessage,
    tool,
)
from engine.storage import SQLiteSessionExtension
from tests.engine.conftest import types_of
from tests.support.language import english_words
from tests.support.scripted import ScriptedModel, Turn


class Recorder(Extension):
    def __init__(self, log: list) -> None:
        self.log = log

    async def on_message(self, ctx, message):
        self.log.append(("on_message", ctx.input_message.content, len(ctx.messages)))

    async def before_run(self, ctx):
        self.log.append(("before_run", ctx.input_message, type(ctx.messages[-1]).__name__))

    async def after_run(self, ctx, result):
        self.log.append(("after_run", result.content))

    async def on_error(self, ctx, error):
        self.log.append(("on_error", type(error).__name__))

    async def before_model(self, ctx, request):
        self.log.append(("before_model",))

    async def after_model(self, ctx, response):
        self.log.append(("after_model",))

    async def before_tool(self, ctx, call):
        self.log.append(("before_tool", call.name))
        return ToolDenial("Not today.") if call.name == "danger" else None

    async def after_tool(self, ctx, call, result):
        self.log.append(("after_tool", call.name, result.success))


@tool
def safe() -> str:
    """Harmless."""
    return "fine"


@tool
def danger() -> str:
    """Must not run."""
    raise AssertionError("a denied tool ran")


async def test_hook_order_on_run_and_denial(store):
    log: list = []
    calls = [ToolCall("1", "safe", {}), ToolCall("2", "danger", {})]
    model = ScriptedModel([Turn(tool_calls=calls), Turn(text="Done")])
    agent = await store.agent(model, tools=[safe, danger], extensions=[Recorder(log)])
    await agent.run("hello")
    assert log == [
        ("on_message", "hello", 0),
        ("before_run", agent_input := log[1][1], "UserMessage"),
        ("before_model",),
        ("after_model",),
        ("before_tool", "safe"),
        ("after_tool", "safe", True),
        ("before_tool", "danger"),
        ("after_tool", "danger", False),
        ("before_model",),
        ("after_model",),
        ("after_run", "Done"),
    ]
    assert agent_input.content == "hello"
    denied = [m for m in await store.history() if isinstance(m, ToolMessage)][1]
    assert denied.content == "The person declined: Not today."
    assert denied.outcome is ToolOutcome.DECLINED


async def test_a_denial_without_a_reason_says_only_that_the_person_declined(store):
    class Decliner(Extension):
        async def before_tool(self, ctx, call):
            return ToolDenial() if call.name == "danger" else ToolDenial("  ")

    calls = [ToolCall("1", "danger", {}), ToolCall("2", "safe", {})]
    model = ScriptedModel([Turn(tool_calls=calls), Turn(text="Done")])
    agent = await store.agent(model, tools=[safe, danger], extensions=[Decliner()])
    await agent.run("hello")
    results = [m for m in await store.history() if isinstance(m, ToolMessage)]
    assert [m.content for m in results] == ["The person declined to run this tool."] * 2
    assert {m.outcome for m in results} == {ToolOutcome.DECLINED}
    # The model's next request carries the same words.
    sent = model.requests[-1].messages
    assert [m.content for m in sent if isinstance(m, ToolMessage)] == [
        "The person declined to run this tool."
    ] * 2


async def test_hooks_on_resume_and_on_errors(store):
    log: list = []
    await store.seed(
        "s",
        [
            UserMessage(content="q"),
            AssistantMessage(content="cut", stop=StopInfo(StopReason.INTERRUPTED, raw="cancelled")),
        ],
    )
    agent = await store.agent(ScriptedModel([Turn(text="again")]), extensions=[Recorder(log)])
    await agent.resume()
    assert log[0] == ("before_run", None, "InternalMessage"), "no on_message; input is None"
    assert log[-1] == ("after_run", "again")
    log.clear()
    with pytest.raises(AgentResumeError):
        await agent.resume()
    assert log == [("on_error", "AgentResumeError")], "nothing to resume: on_error only"


async def test_stream_resume_emits_the_same_event_types_and_ends_with_run_completed(store):
    await store.seed(
        "s", [UserMessage(content="q"), AssistantMessage(tool_calls=(ToolCall("1", "safe", {}),))]
    )
    agent = await store.agent(ScriptedModel([Turn(text="ok")]), tools=[safe])
    events = [e async for e in agent.stream_resume()]
    assert types_of(events) == [
        "message_appended",
        "model_started",
        "text_delta",
        "message_appended",
        "model_completed",
        "run_completed",
    ]
    assert isinstance(events[0].message, ToolMessage)
    assert {e.request_id for e in events} == {events[0].request_id}


async def test_jsonl_records_each_request_and_resumed_turns_start_at_the_user_message(
    store, tmp_path
):
    path = tmp_path / "requests.jsonl"
    model = ScriptedModel([Turn(text="one", stop="max_output"), Turn(text=" two")])
    agent = await store.agent(model, extensions=[JSONLExtension(path)])
    await agent.run("count")
    await agent.resume()
    with pytest.raises(AgentResumeError):
        await agent.resume()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 3
    first, resumed, failed = lines
    assert first["outcome"] == {"status": "completed", "stop": {"reason": "max_output"}}
    assert [m["type"] for m in first["messages"]] == ["user", "assistant"]
    assert resumed["resumed"] is True
    assert [m["type"] for m in resumed["messages"]] == [
        "user",
        "assistant",
        "internal",
        "assistant",
    ]
    assert failed["outcome"]["status"] == "error" and failed["outcome"]["reason"] == "completed"
    assert first["session_id"] == "s" and first["request_id"] != resumed["request_id"]
    assert first["started_at"] <= first["ended_at"]


async def test_goal_mode_continues_until_met_and_is_bounded(store):
    seen = []

    def judge(goal, answer, messages):
        seen.append(answer.content)
        return answer.content == "three" or "Keep going."

    model = ScriptedModel([Turn(text="one"), Turn(text="two"), Turn(text="three")])
    agent = await store.agent(model)
    final = await agent.run("count", goal=Goal("reach three", judge, max_rounds=5))
    assert final.content == "three" and seen == ["one", "two", "three"]
    nudges = [m for m in await store.history() if isinstance(m, InternalMessage)]
    assert [(n.tag, n.content) for n in nudges] == [("goal", "Keep going.")] * 2

    bounded = ScriptedModel([Turn(text="never enough")])
    agent = await store.agent(bounded, session_id="b")
    await agent.run("x", goal=Goal("impossible", lambda *a: False, max_rounds=2))
    assert len(bounded.requests) == 3


async def test_goal_evaluated_by_a_model(store):
    class Judge:
        def __init__(self):
            self.replies = ["CONTINUE: add an example", "DONE"]

        async def stream(self, request):
            text = self.replies.pop(0)
            yield ModelEvent.completed(ModelResponse(AssistantMessage(content=text)))

    model = ScriptedModel([Turn(text="draft"), Turn(text="draft with example")])
    agent = await store.agent(model)
    final = await agent.run("write", goal=Goal("include an example", Judge()))
    assert final.content == "draft with example"
    assert model.requests[1].messages[-1].content == "add an example"


async def test_a_resume_never_rearms_the_goal(store):
    import httpx

    judged = []

    async def judge(goal, answer, messages):
        judged.append(answer.content)
        return GoalVerdict(False, "more")

    model = ScriptedModel(
        [
            Turn(text="first"),
            Turn(text="sec", chunks=2, fail_after=1, error=httpx.ReadError("x")),
            Turn(text="resumed answer"),
        ]
    )
    agent = await store.agent(model)
    with pytest.raises(httpx.ReadError):
        await agent.run("go", goal=Goal("g", judge, max_rounds=3))
    final = await agent.resume()
    assert final.content == "resumed answer"
    assert judged == ["first"], "the resumed request is not judged again"


async def test_agent_client_calls_back_for_every_event(store):
    await store.seed("s", [UserMessage(content="q")])
    seen = []
    client = AgentClient(await store.agent(ScriptedModel([Turn(text="hi")])), on_event=seen.append)
    assert (await client.resume_point()).kind.value == "call_model"
    assert (await client.resume()).content == "hi"
    assert types_of(seen)[-1] == "run_completed"
    assert await client.resume_point() is None
    events = [e async for e in client.stream("again")]
    assert events == seen[-len(events) :]


def test_sync_agent_runs_and_resumes(tmp_path):
    path = tmp_path / "sync.sqlite3"
    model = ScriptedModel([Turn(text="cut", stop="max_output"), Turn(text=" rest")])
    with SyncAgent(
        model, config=engine.AgentRunConfig("sync"), extensions=[SQLiteSessionExtension(path)]
    ) as agent:
        assert agent.run("write").stop.reason is StopReason.MAX_OUTPUT
        assert agent.resume_point().kind.value == "continue_response"
        events = list(agent.stream_resume())
        assert events[-1].type.value == "run_completed"
        assert agent.resume_point() is None
    with SyncAgent(
        ScriptedModel([Turn(text="x")]),
        config=engine.AgentRunConfig("sync"),
        extensions=[SQLiteSessionExtension(path)],
    ) as again:
        with pytest.raises(AgentResumeError):
            again.resume()


async def test_a_busy_conversation_in_memory_is_said_in_chinese() -> None:
    # Before: the holder was "request r-1 in this process" inside the Chinese sentence.
    gate = asyncio.Event()
    model = ScriptedModel([Turn(text="slow answer", chunks=2, gate=gate)])
    agent = engine.Agent(model, config=engine.AgentRunConfig("memory"))
    first = agent.stream("one")
    async for event in first:
        if event.type.value == "text_delta":
            break
    with pytest.raises(engine.AgentBusyError) as caught:
        await agent.run("two")
    assert "in this process" in str(caught.value)
    chinese = caught.value.sentence("zh_CN")
    assert "本进程中的请求" in chinese
    assert not english_words(chinese, caught.value.holder.params["request_id"], "memory")
    gate.set()
    async for _ in first:
        pass


async def test_a_second_concurrent_request_in_this_process_is_refused(store):
    gate = asyncio.Event()
    model = ScriptedModel([Turn(text="slow answer", chunks=2, gate=gate)])
    agent = await store.agent(model)
    first = agent.stream("one")
    async for event in first:
        if event.type.value == "text_delta":
            break
    with pytest.raises(engine.AgentBusyError) as caught:
        await agent.run("two")
    assert str(caught.value.holder)
    holder = caught.value.holder
    assert not english_words(caught.value.sentence("zh_CN"), holder.host, repr(holder.host))
    gate.set()
    async for _ in first:
        pass
    assert (await agent.run("three")).content == "slow answer"


def test_public_api_is_curated_and_sorted():
    public = {n for n in dir(engine) if not n.startswith("_")} - {
        "agent",
        "archive",
        "attach",
        "attachments",
        "calls",
        "export",
        "client",
        "drafts",
        "errors",
        "events",
        "extensions",
        "goal",
        "jsonl",
        "mcp",
        "messages",
        "model",
        "providers",
        "redaction",
        "resume",
        "sentences",
        "stop",
        "storage",
        "store",
        "text",
        "tools",
    }
    assert engine.__all__ == sorted(engine.__all__)
    assert set(engine.__all__) == public
    for name in (
        "Agent",
        "AgentRunConfig",
        "ResumePoint",
        "ResumeKind",
        "SQLiteSessionExtension",
        "JSONLExtension",
        "AgentClient",
        "SyncAgent",
        "Goal",
        "RetryInfo",
        "tool",
        # what the window uses, from `engine` itself (an import-linter contract holds it)
        "IMPORTED_SYSTEM_PROMPT",
        "Phrase",
        "sentence",
        "has_sentence",
        "join_sentences",
        "BackupSummary",
        "backup_database",
        "inspect_backup",
        "restore_database",
    ):
        assert name in engine.__all__


async def test_jsonl_usage_counts_only_the_request_own_steps(store, tmp_path):
    from engine import Usage

    path = tmp_path / "usage.jsonl"
    model = ScriptedModel(
        [Turn(text="a", stop="max_output", usage=Usage(10, 5)), Turn(text="b", usage=Usage(20, 7))]
    )
    agent = await store.agent(model, extensions=[JSONLExtension(path)])
    await agent.run("count")
    await agent.resume()
    first, resumed = [json.loads(line) for line in path.read_text().splitlines()]
    assert first["usage"]["output_tokens"] == 5
    assert resumed["usage"]["output_tokens"] == 7, "earlier steps are not counted again"


async def test_jsonl_redacts_credentials_in_foreign_error_text(store, tmp_path):
    path = tmp_path / "errors.jsonl"

    class Leaky:
        async def stream(self, request):
            raise RuntimeError("GET https://example.invalid/v1?key=sk-secret-123&x=1 failed")
            yield  # pragma: no cover - makes this an async generator

    agent = await store.agent(Leaky(), extensions=[JSONLExtension(path)])
    with pytest.raises(RuntimeError):
        await agent.run("hi")
    text = path.read_text()
    assert "sk-secret-123" not in text and "key=[redacted]" in text
