"""A new version is one transaction: a real child process edits or regenerates and is
SIGKILLed just before, or just after, the write that stores the version's first message.

Before it, nothing of the version may show: the path is the one the person had (all four
messages, nothing to resume). After it, the version is stored and shown: the edited question
ends the path (Resume answers it), or the new answer's draft settles under the question it
answers. The file is read as the kill left it (plain SQL) before any storage opens it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine import AssistantMessage, ResumeKind, StopReason, UserMessage
from tests.engine.test_message_tree import check_tree
from tests.engine.version_kill_child import EDITED
from tests.support.scripted import ScriptedModel, Turn
from tests.support.wait import read_line

ROOT = Path(__file__).resolve().parents[2]
ASKED = ["Question one", "Answer one", "Question two", "Answer two"]


def _stored_ids(db: Path) -> list[str]:
    """Every message id of session ``s``, in the order stored."""
    with sqlite3.connect(db) as raw:
        rows = raw.execute("SELECT id FROM messages WHERE session_id = 's' ORDER BY seq").fetchall()
    raw.close()
    return [str(row[0]) for row in rows]


async def _kill_child(db: Path, op: str, which: str, when: str) -> None:
    child = subprocess.Popen(  # noqa: ASYNC220 (reads go through a thread)
        [sys.executable, "-m", "tests.engine.version_kill_child", str(db), op, which, when],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = await read_line(child.stdout, "the child to block", seconds=60)
        assert line.strip() == "blocked", f"child said {line!r}: {child.stderr.read()}"  # type: ignore[union-attr]
        os.kill(child.pid, signal.SIGKILL)
        assert await asyncio.to_thread(child.wait, 30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()  # type: ignore[union-attr]
        child.stderr.close()  # type: ignore[union-attr]


@pytest.mark.parametrize("which", ["first", "later"])
@pytest.mark.parametrize("op", ["edit", "regenerate"])
async def test_a_kill_before_the_version_is_stored_leaves_the_path_as_it_was(store, op, which):
    await _kill_child(store.path, op, which, "before")
    path = check_tree(store.path)  # as the kill left the file
    history = await store.history()
    assert [m.content for m in history] == ASKED
    assert path == [m.id for m in history]
    storage = store.extension().storage
    assert await storage.count_all_messages("s") == 4
    agent = await store.agent(ScriptedModel([Turn(text="unused")]))
    assert await agent.resume_point() is None


@pytest.mark.parametrize("which", ["first", "later"])
async def test_a_kill_after_the_edited_question_is_stored_shows_it_and_resume_answers_it(
    store, which
):
    await _kill_child(store.path, "edit", which, "after")
    path = check_tree(store.path)
    history = await store.history()
    assert path == [m.id for m in history]
    kept = [] if which == "first" else ASKED[:2]
    assert [m.content for m in history] == [*kept, EDITED]
    storage = store.extension().storage
    assert await storage.count_all_messages("s") == 5
    original = (await storage.siblings("s", history[-1].id))[0]
    assert original != history[-1].id  # the edited question stays beside the new one
    agent = await store.agent(ScriptedModel([Turn(text="The edited answer.")]))
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL
    final = await agent.resume()
    assert [m.content for m in await store.history()] == [*kept, EDITED, final.content]


@pytest.mark.parametrize("which", ["first", "later"])
async def test_a_kill_after_the_new_answer_streamed_settles_it_under_its_question(store, which):
    await _kill_child(store.path, "regenerate", which, "after")
    # Nothing of the new answer is a message yet: the path is the one the person had.
    assert check_tree(store.path) == [m.id for m in await store.history()]
    question = 0 if which == "first" else 2
    storage = store.extension().storage
    draft = await storage.load_draft("s")
    assert draft is not None and draft.message.content == "A new answer, streaming"
    # Read-only, the draft shows on its own branch: its question, then the draft.
    shown = await storage.load_tail("s", 10, before_seq=draft.seq)
    assert [r.message.content for r in shown] == ASKED[: question + 1]
    agent = await store.agent(ScriptedModel([Turn(text="The new answer, whole.")]))
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE
    # Taking the lease stores the draft under the question, as the path's end.
    lease = await storage.acquire_lease("s")
    await lease.release()
    history = await store.history()
    assert check_tree(store.path) == [m.id for m in history]
    assert [m.content for m in history] == [*ASKED[: question + 1], "A new answer, streaming"]
    cut = history[-1]
    assert isinstance(cut, AssistantMessage) and cut.stop is not None
    assert cut.stop.reason is StopReason.INTERRUPTED
    assert isinstance(history[-2], UserMessage)
    old_answer = _stored_ids(store.path)[question + 1]
    assert await storage.siblings("s", cut.id) == [old_answer, cut.id]
