"""Random sequences of send, regenerate, edit, switch, Stop, fault, SIGKILL and Resume against
a plain model of the tree (Hypothesis).

Each example drives a real `Agent` on a real SQLite file; a kill runs the operation in a
child process (`tests.engine.tree_child`) and SIGKILLs it mid-answer. After every operation:
the tree's invariants hold (`check_tree`), the stored active path equals the model's
(message types and texts; a text the model cannot know — a resume notice — by type), Resume
is offered exactly when the model says the path was cut off, and no tool ever ran twice.

``make test`` runs a short version; ``make stress`` many more examples.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    BranchError,
    InternalMessage,
    ModelEvent,
    ModelResponse,
    ProviderConnectionError,
    ResumeKind,
    ToolCall,
    ToolMessage,
    UserMessage,
    tool,
)
from engine.storage import SQLiteSessionExtension
from tests.engine.test_message_tree import check_tree
from tests.support.wait import read_line

ROOT = Path(__file__).resolve().parents[2]
SID = "s"


# ---------------------------------------------------------------------------- the plain model


@dataclass
class Node:
    kind: str  # user / assistant / tool / internal
    content: str | None  # None: any text (a resume notice)
    parent: int | None
    partial: bool = False  # an answer cut off (Stop, fault, kill): Resume redoes it


@dataclass
class Tree:
    nodes: list[Node] = field(default_factory=list)
    active: int | None = None

    def add(self, kind: str, content: str | None, partial: bool = False) -> None:
        self.nodes.append(Node(kind, content, self.active, partial))
        self.active = len(self.nodes) - 1

    def path(self) -> list[int]:
        out, at = [], self.active
        while at is not None:
            out.append(at)
            at = self.nodes[at].parent
        return out[::-1]

    def questions(self) -> list[int]:
        return [i for i in self.path() if self.nodes[i].kind == "user"]

    def newest_under(self, top: int) -> int:
        below = {top}
        for i in range(top + 1, len(self.nodes)):
            if self.nodes[i].parent in below:
                below.add(i)
        return max(below)

    def resume_kind(self) -> ResumeKind | None:
        path = self.path()
        if not path:
            return None
        last = self.nodes[path[-1]]
        if last.partial:
            return ResumeKind.RETRY_RESPONSE
        if last.kind in ("user", "internal"):
            return ResumeKind.CALL_MODEL
        return None


# ---------------------------------------------------------------------------- the real side


class Planned:
    """A model that does what the next operation planned: answer, ask for a tool, stream a
    piece then wait (Stop) or fail (fault)."""

    name = "planned"

    def __init__(self) -> None:
        self.plan: tuple[str, ...] = ("text", "?")
        self.streaming = asyncio.Event()

    async def stream(self, request: Any) -> Any:
        kind = self.plan[0]
        if kind == "tool" and not isinstance(request.messages[-1], ToolMessage):
            call = ToolCall(self.plan[1], "act", {"label": self.plan[1]})
            yield ModelEvent.completed(ModelResponse(AssistantMessage(tool_calls=(call,))))
            return
        answer = self.plan[-1]
        yield ModelEvent.text(answer)
        if kind == "stop":
            self.streaming.set()
            await asyncio.Event().wait()  # cancelled by the test
        if kind == "fault":
            raise ProviderConnectionError("the line went dead", provider="planned")
        yield ModelEvent.completed(ModelResponse(AssistantMessage(content=answer)))


RUNS: list[str] = []


@tool
async def act(label: str) -> str:
    """Do something once.

    Args:
        label: which call this is.
    """
    RUNS.append(label)
    return f"done {label}"


OPS = st.one_of(
    st.tuples(st.just("send")),
    st.tuples(st.just("send_tool")),
    st.tuples(st.just("regenerate")),
    st.tuples(st.just("edit"), st.integers(0, 20)),
    st.tuples(st.just("switch"), st.integers(0, 60)),
    st.tuples(st.just("stop")),
    st.tuples(st.just("fault")),
    st.tuples(st.just("resume")),
    st.tuples(st.just("kill"), st.sampled_from(["send", "regenerate", "edit"]), st.integers(0, 20)),
)


class Run:
    def __init__(self, db: Path) -> None:
        self.db = db
        self.tree = Tree()
        self.model = Planned()
        self.count = 0
        self.ext: SQLiteSessionExtension | None = None
        self.agent: Agent | None = None

    async def open(self) -> None:
        self.ext = SQLiteSessionExtension(self.db)
        self.agent = await Agent.create(
            self.model, config=AgentRunConfig(SID), tools=[act], extensions=[self.ext]
        )

    async def close(self) -> None:
        if self.ext is not None:
            await self.ext.close()

    def label(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    async def do(self, op: tuple[Any, ...]) -> None:
        agent, tree = self.agent, self.tree
        assert agent is not None
        name = op[0]
        if name in ("send", "send_tool", "stop", "fault"):
            q, a = self.label("q"), self.label("a")
            if name == "send":
                self.model.plan = ("text", a)
                await agent.run(q)
                tree.add("user", q)
                tree.add("assistant", a)
            elif name == "send_tool":
                call = self.label("call")
                self.model.plan = ("tool", call, a)
                await agent.run(q)
                tree.add("user", q)
                tree.add("assistant", "")
                tree.add("tool", f"done {call}")
                tree.add("assistant", a)
            elif name == "stop":
                self.model.plan = ("stop", a)
                self.model.streaming.clear()
                task = asyncio.create_task(agent.run(q))
                await self.model.streaming.wait()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                tree.add("user", q)
                tree.add("assistant", a, partial=True)
            else:
                self.model.plan = ("fault", a)
                with pytest.raises(ProviderConnectionError):
                    await agent.run(q)
                tree.add("user", q)
                tree.add("assistant", a, partial=True)
        elif name == "regenerate":
            a = self.label("a")
            self.model.plan = ("text", a)
            questions = tree.questions()
            if not questions:
                with pytest.raises(BranchError):
                    await agent.regenerate()
                return
            await agent.regenerate()
            tree.active = questions[-1]
            tree.add("assistant", a)
        elif name == "edit":
            questions = tree.questions()
            if not questions:
                return
            target = questions[op[1] % len(questions)]
            message_id = await self._id_of(target)
            q, a = self.label("q"), self.label("a")
            self.model.plan = ("text", a)
            await agent.edit(message_id, q)
            tree.active = tree.nodes[target].parent
            tree.add("user", q)
            tree.add("assistant", a)
        elif name == "switch":
            if not tree.nodes:
                return
            target = op[1] % len(tree.nodes)
            message_id = await self._id_of(target)
            await agent.switch_to(message_id)
            tree.active = tree.newest_under(target)
        elif name == "resume":
            kind = tree.resume_kind()
            point = await agent.resume_point()
            assert (point.kind if point is not None else None) is kind
            if kind is None:
                return
            a = self.label("a")
            self.model.plan = ("text", a)
            await agent.resume()
            if kind is ResumeKind.RETRY_RESPONSE:
                tree.add("internal", None)
            tree.add("assistant", a)
        elif name == "kill":
            await self.kill(op[1], op[2])

    async def _id_of(self, index: int) -> str:
        """The stored id of the model's node ``index`` (nodes and rows share their order)."""
        import sqlite3

        assert self.ext is not None
        if await self.ext.storage.load_draft(SID) is not None:
            # A killed child's draft is a row once the lease is next taken: take it now.
            lease = await self.ext.storage.acquire_lease(SID)
            await lease.release()
        with sqlite3.connect(self.db) as raw:
            rows = raw.execute(
                "SELECT id FROM messages WHERE session_id = ? ORDER BY seq", (SID,)
            ).fetchall()
        raw.close()
        return str(rows[index][0])

    async def kill(self, how: str, pick: int) -> None:
        tree = self.tree
        args = []
        q = self.label("q")
        if how == "regenerate":
            questions = tree.questions()
            if not questions:
                return
            tree.active = questions[-1]
        elif how == "edit":
            questions = tree.questions()
            if not questions:
                return
            target = questions[pick % len(questions)]
            args = [await self._id_of(target)]
            tree.active = tree.nodes[target].parent
        if how != "regenerate":
            tree.add("user", q)
        child = subprocess.Popen(  # noqa: ASYNC220 (reads go through a thread)
            [sys.executable, "-m", "tests.engine.tree_child", str(self.db), SID, how, q, *args],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            line = await read_line(child.stdout, "the child's draft", seconds=60)
            assert line.strip() == "ready", f"child said {line!r}: {child.stderr.read()}"
            os.kill(child.pid, signal.SIGKILL)
            assert await asyncio.to_thread(child.wait, 30) == -signal.SIGKILL
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            child.stdout.close()  # type: ignore[union-attr]
            child.stderr.close()  # type: ignore[union-attr]
        # The draft becomes the answer it was when the lease is next taken.
        tree.add("assistant", f"{q}-draft", partial=True)

    async def check(self) -> None:
        assert self.ext is not None
        storage = self.ext.storage
        stored = list(await storage.load(SID))
        draft = await storage.load_draft(SID)
        if draft is not None:  # a killed child's answer, not settled yet, on its own branch
            above = await storage.load_tail(SID, 10**6, before_seq=draft.seq)
            stored = [*(r.message for r in above), draft.message]
        assert check_tree(self.db) == [m.id for m in await storage.load(SID)]
        expected = [self.tree.nodes[i] for i in self.tree.path()]
        got = [(_kind(m), m.content) for m in stored]
        want = [(n.kind, n.content) for n in expected]
        assert [k for k, _ in got] == [k for k, _ in want], (got, want)
        for (_, text), (_, wanted) in zip(got, want, strict=True):
            assert wanted is None or text == wanted, (got, want)
        assert len(RUNS) == len(set(RUNS)), f"a tool ran twice: {RUNS}"


def _kind(message: Any) -> str:
    return {
        UserMessage: "user",
        AssistantMessage: "assistant",
        ToolMessage: "tool",
        InternalMessage: "internal",
    }[type(message)]


async def _run(ops: list[tuple[Any, ...]]) -> None:
    RUNS.clear()
    with tempfile.TemporaryDirectory() as folder:
        run = Run(Path(folder) / "tree.sqlite3")
        await run.open()
        try:
            for op in ops:
                await run.do(op)
                await run.check()
        finally:
            await run.close()


def _test(ops: list[tuple[Any, ...]]) -> None:
    asyncio.run(_run(ops))


_SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}


@settings(max_examples=25, **_SETTINGS)  # type: ignore[arg-type]
@given(st.lists(OPS, min_size=1, max_size=8))
def test_random_operations_keep_the_tree_and_lose_nothing(ops: list[tuple[Any, ...]]) -> None:
    _test(ops)


@pytest.mark.stress
@settings(max_examples=400, **_SETTINGS)  # type: ignore[arg-type]
@given(st.lists(OPS, min_size=1, max_size=16))
def test_random_operations_stress(ops: list[tuple[Any, ...]]) -> None:
    _test(ops)
