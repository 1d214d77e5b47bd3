"""SIGKILL before a tool started and while it ran: resume tells the model which is which.

Each child (`tool_start_child`) runs a request against a real SQLite file, prints a marker at
the instant to kill (a tool waiting for approval, or a tool running) and is killed with
SIGKILL there. The parent then reopens the file as the app does after a restart:

* a call whose approval was pending never started: the resume point says it did not run,
  and resuming answers it ``not_run`` with "The tool did not run: the app stopped before it
  started." — the tool function was never invoked;
* a call that was running may have run: "may or may not have completed", and resuming never
  runs it again (its file holds one line);
* a batch of two killed while the first ran: a mixed description (the first may have run,
  the second did not); killed while the second waited for approval after the first had
  finished: the first keeps its real result, the second did not run.

The resumed agent is given the same tools, writing to the same file: resuming never runs one.

The same with a real MCP server (`mcp_kill_child`): the tool runs in a stdio server started
through `MCPToolset`, the model is the loopback provider; the child is killed once the server
has appended its line and sleeps. Resuming tells the model the tool may or may not have
completed and does not run it; when the model asks again, the approval hook is asked again.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from engine import Extension, ResumeKind, ToolDenial, ToolMessage, ToolOutcome
from engine.mcp import MCPToolset, load_mcp_config
from engine.providers import OpenAIChatModel
from engine.resume import INTERRUPTED_TOOL_TEXT
from tests.engine.mcp_kill_child import server_config
from tests.engine.test_mcp import running
from tests.support import provider_server
from tests.support.provider_server import ProviderServer, ScriptedCall
from tests.support.scripted import ScriptedModel, Turn
from tests.support.wait import read_line, until

ROOT = Path(__file__).resolve().parents[2]
NOT_STARTED = "The tool did not run: the app stopped before it started."


async def run_then_kill(db: Path, session: str, mode: str, ran: Path, marker: str) -> None:
    """Run the child until it prints ``marker``, then SIGKILL it.

    Every wait is the test's own, bounded, in the event loop (a child that never prints the
    marker fails here, naming it, long before pytest's timeout would end the test from a
    signal handler, wherever the interpreter then was).
    """
    proc = await asyncio.to_thread(
        subprocess.Popen,
        [sys.executable, "-m", "tests.engine.tool_start_child", str(db), session, mode, str(ran)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed, waited = False, "it ended first"
    try:
        while line := await read_line(proc.stdout, f"the child's {marker!r}", seconds=60):
            if line.strip() == marker:
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
                break
    except AssertionError as exc:  # the wait's own timeout: say what the child said
        waited = str(exc)
    finally:
        if not killed:
            proc.kill()
        await asyncio.to_thread(proc.wait, 30)
        # Its pipes close with it (it has no children): this read ends.
        stderr = await asyncio.to_thread(proc.stderr.read) if proc.stderr is not None else ""
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert killed, f"the child never printed {marker!r} ({waited}): {stderr}"
    assert proc.returncode == -signal.SIGKILL


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


async def reopen_and_resume(store, session: str, ran: Path):
    """The resume point as the window reads it, then a resume; both after a restart."""

    async def get_time() -> str:
        """The time now."""
        with ran.open("a", encoding="utf-8") as out:
            out.write("get_time again\n")
        return "12:00"

    async def send_mail() -> str:
        """Send the time by mail."""
        with ran.open("a", encoding="utf-8") as out:
            out.write("send_mail again\n")
        return "sent"

    agent = await store.agent(None, session_id=session)
    point = await asyncio.wait_for(agent.resume_point(), 60)  # a hang fails on this line
    model = ScriptedModel([Turn(text="Noted.")])
    resumed = await store.agent(model, session_id=session, tools=[get_time, send_mail])
    await asyncio.wait_for(resumed.resume(), 60)
    answers = [m for m in model.requests[0].messages if isinstance(m, ToolMessage)]
    return point, answers


async def test_kill_while_approval_waits_says_the_tool_did_not_run(store, tmp_path: Path) -> None:
    ran = tmp_path / "ran.txt"
    await run_then_kill(store.path, "s", "approval", ran, "waiting get_time")
    point, answers = await reopen_and_resume(store, "s", ran)
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
    assert [c.name for c in point.not_started] == ["get_time"]
    assert point.description == (
        "The app stopped before the tool get_time started, so it did not run; resuming will "
        "tell the model so."
    )
    assert [(a.name, a.content, a.outcome, a.success) for a in answers] == [
        ("get_time", NOT_STARTED, ToolOutcome.NOT_RUN, False)
    ]
    assert not ran.exists(), "the tool function was never invoked"
    history = await store.history("s")
    assert [type(m).__name__ for m in history] == [
        "UserMessage", "AssistantMessage", "ToolMessage", "AssistantMessage"
    ]


async def test_kill_while_the_tool_runs_says_it_may_have_run(store, tmp_path: Path) -> None:
    ran = tmp_path / "ran.txt"
    await run_then_kill(store.path, "s", "running", ran, "running get_time")
    point, answers = await reopen_and_resume(store, "s", ran)
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
    assert point.not_started == ()
    assert point.description == (
        "The app stopped while the tool get_time ran; resuming will tell the model it may or "
        "may not have finished, without running it again."
    )
    assert [(a.name, a.content, a.outcome) for a in answers] == [
        ("get_time", INTERRUPTED_TOOL_TEXT, ToolOutcome.INTERRUPTED)
    ]
    assert lines(ran) == ["get_time"], "resume never runs the tool again"


async def test_kill_during_the_second_approval_says_which_ran(store, tmp_path: Path) -> None:
    ran = tmp_path / "ran.txt"
    await run_then_kill(store.path, "s", "second", ran, "waiting send_mail")
    point, answers = await reopen_and_resume(store, "s", ran)
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
    # get_time ran and its result was stored; only send_mail is unanswered, and never started.
    assert [c.name for c in point.unanswered_tool_calls] == ["send_mail"]
    assert [c.name for c in point.not_started] == ["send_mail"]
    assert [(a.name, a.content) for a in answers] == [("get_time", "12:00"), ("send_mail", NOT_STARTED)]
    assert lines(ran) == ["get_time"]


async def test_kill_while_the_first_of_two_runs_says_which_may_have_run(
    store, tmp_path: Path
) -> None:
    ran = tmp_path / "ran.txt"
    await run_then_kill(store.path, "s", "batch", ran, "running get_time")
    point, answers = await reopen_and_resume(store, "s", ran)
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
    assert [c.name for c in point.unanswered_tool_calls] == ["get_time", "send_mail"]
    assert [c.name for c in point.not_started] == ["send_mail"]
    assert point.description == (
        "The app stopped while tools ran: get_time may or may not have finished, and "
        "send_mail did not run; resuming will tell the model so, without running any tool "
        "again."
    )
    assert [(a.name, a.content, a.outcome) for a in answers] == [
        ("get_time", INTERRUPTED_TOOL_TEXT, ToolOutcome.INTERRUPTED),
        ("send_mail", NOT_STARTED, ToolOutcome.NOT_RUN),
    ]
    assert lines(ran) == ["get_time"]


class Denials(Extension):
    """The approval a person answers with Deny; it notes each call it is asked about."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict]] = []

    async def before_tool(self, ctx, call):
        self.asked.append((call.name, dict(call.arguments)))
        return ToolDenial("Not again, thanks.")


async def test_kill_while_a_real_mcp_servers_tool_runs(store, tmp_path: Path) -> None:
    ran = tmp_path / "ran.txt"
    name = "srv__append_then_sleep"
    first = ScriptedCall(name, {"path": str(ran), "line": "appended"}, id="call_1")
    again = ScriptedCall(name, {"path": str(ran), "line": "again", "seconds": 0}, id="call_2")
    with ProviderServer(default=provider_server.Turn(text="(unscripted)")) as provider:
        provider.script(provider_server.Turn(text="Noting it.", tool_calls=[first]))
        child = [sys.executable, "-m", "tests.engine.mcp_kill_child", str(store.path), "s"]
        proc = await asyncio.to_thread(
            subprocess.Popen,
            [*child, provider.openai_url],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        server_pid: int | None = None
        try:
            said = await read_line(proc.stdout, "the server's pid")
            assert said.startswith("server "), said or proc.stderr.read()
            server_pid = int(said.split()[1])
            assert (await read_line(proc.stdout, "the approval")).strip() == f"approved {name}"
            # The tool runs: the server appended its line and sleeps (300 s).
            await until(lambda: lines(ran) == ["appended"], "the server's line in the file")
            os.kill(proc.pid, signal.SIGKILL)
            assert await asyncio.to_thread(proc.wait, 30) == -signal.SIGKILL
            # Its stdin closed with the app: the server (FastMCP) leaves by itself, its tool
            # cut short; the SIGKILL below is only for a run where it does not.
            await until(lambda: not running(server_pid), "the killed app's server to leave")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
            if server_pid is not None:  # the killed app's server: its group is ours to end
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(server_pid, signal.SIGKILL)

        point = await (await store.agent(None, session_id="s")).resume_point()
        assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
        assert [c.name for c in point.unanswered_tool_calls] == [name]
        assert point.not_started == ()
        assert point.description == (
            f"The app stopped while the tool {name} ran; resuming will tell the model it may "
            "or may not have finished, without running it again."
        )

        # After a restart: the same server offered again; the model asks again, the person
        # is asked again and denies.
        provider.script(
            provider_server.Turn(text="It may not have worked; once more.", tool_calls=[again]),
            provider_server.Turn(text="Understood, I will leave it."),
        )
        model = OpenAIChatModel("loopback", base_url=provider.openai_url, api_key="sk-test")
        denials = Denials()
        try:
            async with MCPToolset(load_mcp_config(server_config())) as toolset:
                tools = await toolset.list_tools()
                resumed = await store.agent(
                    model, session_id="s", tools=tools, extensions=[denials]
                )
                final = await resumed.resume()
        finally:
            await model.aclose()
        requests = provider.chat_requests()
    assert final.content == "Understood, I will leave it."
    assert denials.asked == [(name, again.arguments)], "the second ask was put to the person"
    # The resume's first request told the model the first call may or may not have run.
    told = [m for m in requests[1].messages() if m.get("role") == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in told] == [("call_1", INTERRUPTED_TOOL_TEXT)]
    assert lines(ran) == ["appended"], "resuming never ran the tool again"
    results = [m for m in await store.history("s") if isinstance(m, ToolMessage)]
    assert [(r.tool_call_id, r.outcome) for r in results] == [
        ("call_1", ToolOutcome.INTERRUPTED),
        ("call_2", ToolOutcome.DECLINED),
    ]
