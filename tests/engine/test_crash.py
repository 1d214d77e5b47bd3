"""SIGKILL at several instants of a real request, then integrity, resume, and no tool run twice.

A child process runs a request with a slowly streaming model and slow tools against a real
SQLite file and stops at a named instant; the parent kills it with SIGKILL there (no clean-up
runs, as with `kill -9`), checks the file with ``PRAGMA integrity_check``, reopens it with a new
Agent, resumes, and reads the run log to prove that no tool ran twice.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine import AgentBusyError, ResumeKind, ToolMessage, tool
from tests.support.scripted import ScriptedModel, Turn
from tests.support.wait import read_line

ROOT = Path(__file__).resolve().parents[2]


class Child:
    def __init__(self, db: Path, session: str, instant: str, runlog: Path) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.engine.crash_child",
                str(db),
                session,
                instant,
                str(runlog),
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    async def wait_ready(self) -> str:
        line = await read_line(self.proc.stdout, "the child to reach its instant")
        assert line.startswith("ready"), f"child said {line!r}; stderr: {self.proc.stderr.read()}"
        return line.split()[1]

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        assert self.proc.wait(timeout=10) == -signal.SIGKILL
        self.proc.stdin.close()
        self.proc.stdout.close()
        self.proc.stderr.close()


def integrity(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def starts(runlog: Path) -> list[str]:
    if not runlog.exists():
        return []
    return [line.split()[1] for line in runlog.read_text().splitlines() if line.startswith("start")]


@pytest.mark.parametrize(
    ("instant", "kind", "unanswered"),
    [
        ("mid-stream", ResumeKind.CALL_MODEL, []),
        ("mid-tool", ResumeKind.RECOVER_TOOLS, ["a", "b"]),
        ("between-results", ResumeKind.RECOVER_TOOLS, ["b"]),
    ],
)
async def test_kill_then_resume(tmp_path, store, instant, kind, unanswered):
    db, runlog = store.path, tmp_path / "runs.log"
    child = Child(db, "crash", instant, runlog)
    assert await child.wait_ready() == instant
    child.kill()
    assert integrity(db) == "ok"
    before = starts(runlog)

    @tool
    def write_file(name: str) -> str:
        """Write a file.

        Args:
            name: the file.
        """
        with open(runlog, "a") as handle:
            handle.write(f"start {name}\n")
        return f"wrote {name}"

    model = ScriptedModel([Turn(text="Checked the files; all done.")])
    agent = await store.agent(model, session_id="crash", tools=[write_file])
    point = await agent.resume_point()
    assert point is not None and point.kind is kind
    assert [c.id for c in point.unanswered_tool_calls] == unanswered
    final = await agent.resume()
    assert final.content == "Checked the files; all done."
    assert await agent.resume_point() is None
    after = starts(runlog)
    assert after == before, "the resume ran no tool"
    assert len(after) == len(set(after)), "no tool ran twice"
    history = await store.history("crash")
    ids = [m.tool_call_id for m in history if isinstance(m, ToolMessage)]
    assert len(ids) == len(set(ids)), "each call answered once"
    if instant == "between-results":
        assert history[2].content == "wrote a.txt", "the result that arrived is kept"
    assert integrity(db) == "ok"


async def test_second_process_is_refused_then_resumes_right_after_a_kill(tmp_path, store):
    child = Child(store.path, "shared", "holding-lease", tmp_path / "runs.log")
    await child.wait_ready()
    model = ScriptedModel([Turn(text="Answered after the crash.")])
    agent = await store.agent(model, session_id="shared")
    with pytest.raises(AgentBusyError) as caught:
        await agent.run("me too")
    assert str(child.proc.pid) in str(caught.value.holder)
    assert str(child.proc.pid) in str(caught.value)
    child.kill()
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL
    final = await agent.resume()  # no waiting for a heartbeat to go stale
    assert final.content == "Answered after the crash."


@pytest.mark.stress
@pytest.mark.parametrize("round_", range(30))
async def test_kill_then_resume_many_times(tmp_path, store, round_):
    """`make stress`: the kill/resume cycle repeated across the instants, one file per round."""
    instant, kind, unanswered = [
        ("mid-stream", ResumeKind.CALL_MODEL, []),
        ("mid-tool", ResumeKind.RECOVER_TOOLS, ["a", "b"]),
        ("between-results", ResumeKind.RECOVER_TOOLS, ["b"]),
    ][round_ % 3]
    await test_kill_then_resume(tmp_path, store, instant, kind, unanswered)
