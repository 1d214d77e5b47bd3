"""Versions on a message tree: regenerate, edit, switch, siblings, fork — in a real SQLite file
(and the in-memory store), with the tree's invariants checked after every operation.

The invariants (`check_tree`, read with plain SQL): every parent is an earlier message of the
same session; the active leaf is a stored message of the session (or NULL for the empty
path); the stored history equals the path walked by hand from the active leaf.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine import (
    Agent,
    AgentBusyError,
    AgentRunConfig,
    AssistantMessage,
    BranchError,
    MessageNotFoundError,
    ProviderResponseError,
    ResumeKind,
    StopInfo,
    StopReason,
    ToolCall,
    UserMessage,
    tool,
)
from engine.extensions import InMemoryHistory
from engine.storage import SQLiteSessionExtension
from tests.engine.test_store_contract import leave_draft
from tests.engine.test_store_contract import path as contract_path
from tests.support.scripted import ScriptedModel, Turn

RUNS: list[str] = []
ROOT = Path(__file__).resolve().parents[2]


@tool
async def write_file(name: str) -> str:
    """Write a file.

    Args:
        name: the file.
    """
    RUNS.append(name)
    return f"wrote {name}"


@pytest.fixture(autouse=True)
def _clear_runs() -> None:
    RUNS.clear()


def check_tree(db: Path, session_id: str = "s") -> list[str]:
    """Check the tree's invariants on the file; return the active path's message ids."""
    with sqlite3.connect(db) as raw:
        rows = raw.execute(
            "SELECT seq, parent_seq, id FROM messages WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ).fetchall()
        active = raw.execute(
            "SELECT active_seq FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
    raw.close()
    by_seq = {seq: (parent, mid) for seq, parent, mid in rows}
    for seq, (parent, _mid) in by_seq.items():
        assert parent is None or (parent in by_seq and parent < seq), (seq, parent)
    leaf = active[0] if active else None
    assert leaf is None or leaf in by_seq, f"the active leaf {leaf} is not a stored message"
    path: list[str] = []
    while leaf is not None:
        parent, mid = by_seq[leaf]
        path.append(mid)
        leaf = parent
    return path[::-1]


def ids(messages: list[Any]) -> list[str]:
    return [m.id for m in messages]


def texts(messages: list[Any]) -> list[str]:
    return [m.content for m in messages]


async def test_regenerate_answers_the_last_question_again_beside_the_old_answer(store):
    calls = (ToolCall("c1", "write_file", {"name": "a.txt"}),)
    model = ScriptedModel(
        [Turn(tool_calls=calls), Turn(text="Wrote it."), Turn(text="A second answer.")]
    )
    agent = await store.agent(model, tools=[write_file])
    await agent.run("Write a.txt")
    first = await store.history()
    assert texts(first)[-1] == "Wrote it." and RUNS == ["a.txt"]
    assert check_tree(store.path) == ids(first)

    final = await agent.regenerate()
    assert final.content == "A second answer."
    history = await store.history()
    # The new answer is a sibling of the old one; the old branch (call, result, answer) stays.
    assert ids(history) == [first[0].id, final.id]
    assert check_tree(store.path) == ids(history)
    ext = store.extension()
    assert await ext.storage.siblings("s", final.id) == [first[1].id, final.id]
    assert await ext.storage.count_all_messages("s") == 5
    # No tool of the old branch ran again, and the model read only the question.
    assert RUNS == ["a.txt"]
    assert [type(m).__name__ for m in model.requests[-1].messages] == ["UserMessage"]
    # Switching back shows the old branch whole.
    assert await agent.switch_to(first[1].id) == first[-1].id
    assert await store.history() == first
    assert check_tree(store.path) == ids(first)
    versions = await ext.storage.versions("s", [1, 2, 5])
    assert versions == {2: (0, 2), 5: (1, 2)}


async def test_edit_sends_a_new_question_beside_the_old_one_and_keeps_both(store):
    model = ScriptedModel(
        [Turn(text="Paris."), Turn(text="Rome is the capital."), Turn(text="Madrid.")]
    )
    agent = await store.agent(model)
    await agent.run("Capital of France?")
    await agent.run("And Italy?")
    before = await store.history()
    italy = before[2]
    final = await agent.edit(italy.id, "And Spain?")
    assert final.content == "Madrid."
    history = await store.history()
    assert texts(history) == ["Capital of France?", "Paris.", "And Spain?", "Madrid."]
    assert check_tree(store.path) == ids(history)
    storage = store.extension().storage
    assert await storage.siblings("s", italy.id) == [italy.id, history[2].id]
    # The model saw the path only: no word of Italy.
    sent = [m.content for m in model.requests[-1].messages]
    assert sent == ["Capital of France?", "Paris.", "And Spain?"]

    # Editing the very first question starts a second root.
    model.turns.append(Turn(text="Berlin."))
    await agent.edit(before[0].id, "Capital of Germany?")
    assert texts(await store.history()) == ["Capital of Germany?", "Berlin."]
    assert await storage.siblings("s", before[0].id) == [
        before[0].id,
        (await store.history())[0].id,
    ]
    check_tree(store.path)

    with pytest.raises(BranchError) as caught:
        await agent.edit(before[1].id, "answers cannot be edited")
    assert caught.value.reason == "not_a_question"
    assert "Only a message the person wrote" in str(caught.value)
    with pytest.raises(MessageNotFoundError):
        await agent.edit("no-such-id", "?")
    check_tree(store.path)


async def test_switch_to_takes_the_newest_leaf_and_is_refused_while_a_request_runs(store):
    gate, asked = asyncio.Event(), asyncio.Event()

    class Slow:
        name = "slow"

        async def stream(self, request):
            from engine import ModelEvent, ModelResponse

            asked.set()  # the request holds the lease while the model is asked
            await gate.wait()
            yield ModelEvent.completed(ModelResponse(AssistantMessage(content="late")))

    model = ScriptedModel([Turn(text="one"), Turn(text="two"), Turn(text="three")])
    agent = await store.agent(model)
    await agent.run("Q")
    await agent.regenerate()
    await agent.regenerate()
    history = await store.history()
    question = history[0]
    storage = store.extension().storage
    answers = await storage.siblings("s", history[1].id)
    assert len(answers) == 3
    # Switching to a message takes the newest leaf under it; to the question: its newest.
    assert await agent.switch_to(answers[0]) == answers[0]
    assert texts(await store.history()) == ["Q", "one"]
    assert await agent.switch_to(question.id) == answers[2]
    assert texts(await store.history()) == ["Q", "three"]

    busy = await store.agent(Slow())
    running = asyncio.create_task(busy.run("another"))
    try:
        await asked.wait()
        assert await storage.lease_holder("s") is not None
        with pytest.raises(AgentBusyError):
            await agent.switch_to(answers[1])
    finally:
        gate.set()
        await running
    check_tree(store.path)


async def test_resume_follows_the_branch_shown(store):
    """An answer cut off on one branch: switching away hides Resume (that branch is
    complete), switching back offers it again, and resuming completes that branch."""
    cut = StopInfo(StopReason.INTERRUPTED, raw="network_error")
    await store.seed(
        "s",
        [
            UserMessage(id="q", content="Tell me a story"),
            AssistantMessage(id="a1", content="Once upon a time, the end."),
        ],
    )
    model = ScriptedModel([Turn(text="Long ago", stop=cut), Turn(text="Long ago, it ended well.")])
    agent = await store.agent(model)
    with pytest.raises(ProviderResponseError):  # a step stopped "interrupted"
        await agent.regenerate()
    cut_branch = await store.history()
    assert cut_branch[-1].stop is not None
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE

    assert await agent.switch_to("a1") == "a1"
    assert await agent.resume_point() is None  # that branch ended in a full answer
    assert await agent.switch_to(cut_branch[-1].id) == cut_branch[-1].id
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE
    final = await agent.resume()
    assert final.content == "Long ago, it ended well."
    history = await store.history()
    assert history[:2] == cut_branch and history[-1].id == final.id
    assert check_tree(store.path) == ids(history)


async def test_fork_copies_the_path_into_a_new_conversation(store):
    model = ScriptedModel([Turn(text="A"), Turn(text="B"), Turn(text="C")])
    agent = await store.agent(model)
    for question in ("one", "two", "three"):
        await agent.run(question)
    history = await store.history()
    storage = store.extension().storage
    await storage.update_metadata(
        "s", {"model": "m", "system_prompt": "Be brief.", "last_error": {"message": "401"}}
    )
    new_id = await storage.fork_session("s", history[3].id, title="Forked")
    forked = await storage.load(new_id)
    assert forked == history[:4]
    info = await storage.get_session(new_id)
    assert info is not None and info.title == "Forked"
    assert info.metadata == {"model": "m", "system_prompt": "Be brief."}
    assert check_tree(store.path, new_id) == ids(forked)
    # The original is untouched; the fork carries on alone.
    assert await store.history() == history
    fork_agent = await store.agent(ScriptedModel([Turn(text="D")]), session_id=new_id)
    await fork_agent.run("four")
    assert texts(await storage.load(new_id))[-2:] == ["four", "D"]
    assert await store.history() == history
    with pytest.raises(MessageNotFoundError):
        await storage.fork_session("s", "nope")


async def test_regenerate_with_no_question_is_refused(store):
    agent = await store.agent(ScriptedModel([Turn(text="x")]))
    with pytest.raises(BranchError) as caught:
        await agent.regenerate()
    assert caught.value.reason == "no_question"
    assert caught.value.sentence("zh_CN") == "这个对话里没有可以重新回答的问题。"


async def test_the_in_memory_store_keeps_versions_too():
    model = ScriptedModel([Turn(text="one"), Turn(text="two"), Turn(text="three")])
    agent = Agent(model, AgentRunConfig("m"))
    assert isinstance(agent.store, InMemoryHistory)
    await agent.run("Q1")
    first = await agent.store.restore(_ctx("m"))
    await agent.regenerate()
    second = await agent.store.restore(_ctx("m"))
    assert texts(second) == ["Q1", "two"] and second[0] == first[0]
    await agent.edit(first[0].id, "Q2")
    assert texts(await agent.store.restore(_ctx("m"))) == ["Q2", "three"]
    assert await agent.switch_to(first[1].id) == first[1].id
    assert await agent.store.restore(_ctx("m")) == first


def _ctx(session_id: str) -> Any:
    from engine.extensions import RunContext

    return RunContext(session_id, "read", None)


async def test_deep_branched_tree_reads_only_its_tail(tmp_path: Path):
    """load_tail walks up from the leaf: a page is the same whatever lies on other branches."""
    from engine.storage import SQLiteSessionStorage

    storage = SQLiteSessionStorage(tmp_path / "deep.sqlite3", synchronous="OFF")
    try:
        previous = None
        for i in range(300):
            message = UserMessage(id=f"u{i}", content=f"q{i}")
            await storage.append("s", "r", message)
            if i % 3 == 0 and previous is not None:
                # a branch of two messages beside, then back to the main line
                await storage.branch_from("s", previous)
                await storage.append("s", "r", AssistantMessage(id=f"x{i}", content="side"))
                await storage.append("s", "r", UserMessage(id=f"y{i}", content="side"))
                await storage.branch_from("s", message.id)
            previous = message.id
        tail = await storage.load_tail("s", 10)
        assert [r.message.id for r in tail] == [f"u{i}" for i in range(290, 300)]
        older = await storage.load_tail("s", 5, before_seq=tail[0].seq)
        assert [r.message.id for r in older] == [f"u{i}" for i in range(285, 290)]
        assert await storage.count_messages("s") == 300
        assert await storage.count_all_messages("s") == 300 + 2 * 99
    finally:
        await storage.close()
    assert check_tree(tmp_path / "deep.sqlite3")[-1] == "u299"


async def test_regenerate_an_earlier_answer_branches_at_its_own_question(store):
    model = ScriptedModel([Turn(text="A1"), Turn(text="A2"), Turn(text="A1 again")])
    agent = await store.agent(model)
    await agent.run("Q1")
    await agent.run("Q2")
    first = await store.history()
    final = await agent.regenerate(first[1].id)
    assert final.content == "A1 again"
    assert texts(await store.history()) == ["Q1", "A1 again"]
    storage = store.extension().storage
    assert await storage.siblings("s", final.id) == [first[1].id, final.id]
    assert check_tree(store.path) == ids(await store.history())
    # Back to the first answer's branch: it still goes on to Q2 and A2.
    assert await agent.switch_to(first[1].id) == first[3].id
    assert await store.history() == first


async def test_sigkill_during_a_regenerate_resumes_on_the_new_branch(store):
    """A real child process regenerates and is SIGKILLed mid-answer: its draft becomes the
    new branch's cut-off answer, Resume completes that branch, the old answer stays."""
    import os
    import signal
    import subprocess
    import sys

    from tests.support.wait import read_line

    await store.seed(
        "s", [UserMessage(id="q", content="Question"), AssistantMessage(id="a1", content="Old")]
    )
    child = subprocess.Popen(  # noqa: ASYNC220 (reads go through a thread)
        [
            sys.executable,
            "-m",
            "tests.engine.tree_child",
            str(store.path),
            "s",
            "regenerate",
            "new",
        ],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert (await read_line(child.stdout, "the child's draft", seconds=60)).strip() == "ready"
        os.kill(child.pid, signal.SIGKILL)
        assert await asyncio.to_thread(child.wait, 30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()  # type: ignore[union-attr]
    model = ScriptedModel([Turn(text="New, whole.")])
    agent = await store.agent(model)
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE
    final = await agent.resume()
    assert final.content == "New, whole."
    history = await store.history()
    assert history[0].id == "q" and history[1].content == "new-draft"
    assert history[-1].id == final.id
    storage = store.extension().storage
    assert await storage.siblings("s", history[1].id) == ["a1", history[1].id]
    assert check_tree(store.path) == ids(history)


async def test_a_new_version_that_stores_nothing_leaves_the_old_one_shown(store):
    """A regenerate whose provider refuses before any output, and an edit whose hook fails
    before the new question is stored, never move the path: the old version stays shown."""
    from engine import Extension, ProviderAuthError

    class Refusing:
        name = "refusing"

        async def stream(self, request):
            raise ProviderAuthError("no", provider="test", status=401)
            yield  # an async generator

    agent = await store.agent(ScriptedModel([Turn(text="Old answer.")]))
    await agent.run("Question")
    before = await store.history()
    refusing = await store.agent(Refusing())
    with pytest.raises(ProviderAuthError):
        await refusing.regenerate()
    assert await store.history() == before
    assert check_tree(store.path) == ids(before)

    class Failing(Extension):
        async def on_message(self, ctx, message):
            raise RuntimeError("a hook failed")

    failing = await store.agent(ScriptedModel([Turn(text="x")]), extensions=[Failing()])
    with pytest.raises(RuntimeError):
        await failing.edit(before[0].id, "Another question")
    assert await store.history() == before
    assert check_tree(store.path) == ids(before)


async def test_a_fork_keeps_the_start_records_of_its_own_calls_only(store):
    """Resume in the forked chat still knows which of its calls started; calls of other
    branches are not copied."""
    calls = (ToolCall("on-path", "write_file", {"name": "a"}),)
    model = ScriptedModel([Turn(tool_calls=calls), Turn(text="Done."), Turn(text="Again.")])
    agent = await store.agent(model, tools=[write_file])
    await agent.run("Write a")
    history = await store.history()
    storage = store.extension().storage
    await storage.record_tool_start("s", "elsewhere")  # a call of another branch
    new_id = await storage.fork_session("s", history[-1].id)
    assert await storage.started_tool_calls(new_id, ["on-path", "elsewhere"]) == {"on-path"}


async def test_fork_holds_a_dead_process_answer(tmp_path: Path) -> None:
    # The window shows a dead process's draft as the message it becomes; branching from it
    # settles it first (under the lease), so the copy holds that answer.
    ext = SQLiteSessionExtension(tmp_path / "continuo.sqlite3")
    try:
        await leave_draft(ext)
        new_id = await ext.fork("s", "d", title="Copy")
        assert [m.id for m in await ext.storage.load(new_id)] == ["q", "d"]
        assert await contract_path(ext) == ["q", "d"], "settled in the source too"
        info = await ext.storage.get_session(new_id)
        assert info is not None and info.title == "Copy"
        assert await ext.storage.lease_holder("s") is None, "the lease was given back"
    finally:
        await ext.close()
