"""The app's own MCP servers: ``mcp.json`` in the data folder, a real stdio server, the window.

Nothing is handed to the window as ``tools=``: the servers come from ``<data dir>/mcp.json``
as a person leaves it (by the Tools page or by copying the file from another app). They start
when a request first needs them, their tools reach the model, a card asks before each call,
each conversation chooses its servers, and quitting ends them.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine import ResumeKind
from engine.mcp import MCPServerState
from tests.support.provider_server import ScriptedCall, Turn
from tests.support.wait import until
from tests.ui.conftest import app_env, close_window, open_window, read_until, seed_provider
from tests.ui.test_approvals import _card, _idle, _send, _waiting_card
from ui.conversation.items import ItemState
from ui.tools.tool_servers import OFF_KEY

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(120)


def _write_mcp_json(data_dir: Path, servers: dict[str, Any]) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def _srv(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": [SERVER],
        "env": {"MCP_NOTES": str(tmp_path / "notes.txt")},
        **extra,
    }


def _notes(tmp_path: Path) -> list[str]:
    path = tmp_path / "notes.txt"
    return path.read_text().splitlines() if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _window(tmp_path: Path, provider_server: Any) -> Any:
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    window.store = store
    await until(lambda: window.controller.tool_servers.names() != [] or not _has_file(tmp_path))
    return window


async def _answered(window: Any, text: str) -> None:
    """Wait until the shown conversation's last row is this answer and its request ended."""

    def done() -> bool:
        model = window.transcript.model()
        rows = model.items() if model is not None else []
        sid = window.controller.current
        return bool(rows) and rows[-1].text == text and not window.controller.is_running(sid)

    await until(done, what=f"the answer {text!r}")


def _has_file(data_dir: Path) -> bool:
    return (data_dir / "mcp.json").exists()


async def test_a_server_in_mcp_json_starts_on_first_need_its_tool_asks_and_runs_and_quit_ends_it(
    tmp_path, provider_server
):
    _write_mcp_json(tmp_path, {"srv": _srv(tmp_path)})
    provider_server.script(
        Turn(tool_calls=[ScriptedCall("srv__note", {"text": "hello"}, id="call_1")]),
        Turn(text="Noted."),
        Turn(tool_calls=[ScriptedCall("srv__pid", {}, id="call_2")]),
        Turn(text="That is its pid."),
    )
    window = await _window(tmp_path, provider_server)
    servers = window.controller.tool_servers
    # Read, not started: the window opened without running anything.
    assert servers.names() == ["srv"]
    assert servers.state("srv") is MCPServerState.NOT_STARTED
    assert not (tmp_path / "logs" / "mcp-srv.log").exists()
    button = window.tool_server_button
    assert button.isVisible() and button.text() == "Tools"

    _send(window, "Write hello in the notes.")
    item, view = await _waiting_card(window, "call_1")
    assert servers.state("srv") is MCPServerState.RUNNING
    # The model was offered the server's tools under their sanitised names.
    offered = provider_server.chat_requests()[0].tool_names()
    assert {"srv__note", "srv__echo", "srv__get_weather_now"} <= set(offered)
    assert view.name.text() == "note" and item.tool_server == "srv"
    assert "Write a note" in view.title.text()
    assert _notes(tmp_path) == []
    view.allow_once.click()
    await _idle(window)
    assert item.state is ItemState.DONE and _notes(tmp_path) == ["hello"]
    # Its stderr went to its log in the data folder.
    assert "hello from" in (tmp_path / "logs" / "mcp-srv.log").read_text()

    # The same running server answers the next request (no second start).
    _send(window, "What is your pid?")
    second, view2 = await _waiting_card(window, "call_2")
    view2.allow_once.click()
    await _idle(window)
    pid = int(second.tool_result)
    assert _alive(pid)
    assert len(servers.tools_of("srv")) >= 10

    await close_window(window)
    await until(lambda: not _alive(pid), what="the server to end with the app")


async def test_each_conversation_chooses_its_servers_and_keeps_the_choice(
    tmp_path, provider_server
):
    _write_mcp_json(tmp_path, {"srv": _srv(tmp_path), "other": _srv(tmp_path)})
    provider_server.script(Turn(text="One."), Turn(text="Two."), Turn(text="Three."))
    window = await _window(tmp_path, provider_server)
    button = window.tool_server_button
    assert button.isVisible()
    _send(window, "First, with every server.")
    await _answered(window, "One.")
    sid = window.controller.current
    names = provider_server.chat_requests()[0].tool_names()
    assert "srv__echo" in names and "other__echo" in names

    # Switch srv off for this conversation from the header's menu.
    action = button.action_for("srv")
    assert action is not None and action.isChecked()
    action.trigger()
    assert button.text() == "Tools 1/2"
    await until(
        lambda: window.controller.conversations.metadata(sid).get(OFF_KEY) == ["srv"],
        what="the choice to be kept",
    )
    _send(window, "Second, without srv.")
    await _answered(window, "Two.")
    names = provider_server.chat_requests()[1].tool_names()
    assert "srv__echo" not in names and "other__echo" in names
    await close_window(window)

    # Reopened: the conversation remembers; a new conversation is offered both.
    window = await _window(tmp_path, provider_server)
    button = window.tool_server_button
    await until(lambda: button.offered() == ["other"], what="the conversation to reopen")
    assert window.controller.current == sid and button.text() == "Tools 1/2"
    window.new_chat_button.click()
    await until(lambda: button.offered() == ["srv", "other"], what="the new conversation")
    assert window.controller.current != sid and button.text() == "Tools"
    _send(window, "Third, in a new conversation.")
    await _answered(window, "Three.")
    names = provider_server.chat_requests()[2].tool_names()
    assert "srv__echo" in names and "other__echo" in names
    await close_window(window)


async def test_a_server_that_cannot_start_is_said_and_the_answer_comes_without_its_tools(
    tmp_path, provider_server
):
    _write_mcp_json(
        tmp_path,
        {"broken": {"command": str(tmp_path / "no-such-program")}, "srv": _srv(tmp_path)},
    )
    provider_server.script(Turn(text="Answered all the same."))
    window = await _window(tmp_path, provider_server)
    _send(window, "Hello.")
    await _answered(window, "Answered all the same.")
    names = provider_server.chat_requests()[0].tool_names()
    assert "srv__echo" in names and not any(n.startswith("broken__") for n in names)
    servers = window.controller.tool_servers
    assert servers.state("broken") is MCPServerState.FAILED
    assert servers.failure("broken")
    message = window.statusBar().currentMessage()
    assert "broken" in message and "could not start" in message
    await close_window(window)


async def test_settings_tools_page_shows_the_running_server_and_a_disabled_one_is_not_offered(
    tmp_path, provider_server
):
    _write_mcp_json(tmp_path, {"srv": _srv(tmp_path)})
    provider_server.script(Turn(text="With tools."), Turn(text="Without tools."))
    window = await _window(tmp_path, provider_server)
    _send(window, "Hello.")
    await _answered(window, "With tools.")
    servers = window.controller.tool_servers
    assert servers.state("srv") is MCPServerState.RUNNING

    # The Tools button's "Set up tools…" opens Settings at the Tools page.
    window.tool_server_button.setup_action.trigger()
    dialog = window.settings_dialog
    assert dialog is not None
    page = dialog.toolsPage
    assert dialog.tabs.currentWidget() is page
    await until(lambda: page.is_loaded, what="the Tools page to load")
    page.toolServerList.setCurrentRow(0)
    assert "running" in page.toolServerState.text().lower()
    assert page.toolServerTools.count() >= 10

    # Switched off and saved: the server stops being offered (and is stopped).
    item = page.toolServerList.item(0)
    item.setCheckState(item.checkState().__class__.Unchecked)
    dialog.saveButton.click()
    await until(lambda: servers.names() == [], what="the server to be switched off", seconds=30)
    await until(lambda: window.settings_dialog is None, what="the dialog to close")
    assert not window.tool_server_button.isVisible()
    _send(window, "Hello again.")
    await _answered(window, "Without tools.")
    assert provider_server.chat_requests()[1].tool_names() == []
    assert json.loads((tmp_path / "mcp.json").read_text())["mcpServers"]["srv"]["disabled"]
    await close_window(window)


async def test_a_conversation_with_a_card_waiting_is_not_stuck_after_the_servers_change(
    tmp_path, provider_server
):
    """Saving Settings while a tool waits for its card keeps the old server until the call is
    over: the allowed call still runs on it."""
    _write_mcp_json(tmp_path, {"srv": _srv(tmp_path)})
    provider_server.script(
        Turn(tool_calls=[ScriptedCall("srv__note", {"text": "kept"}, id="call_1")]),
        Turn(text="Noted."),
    )
    window = await _window(tmp_path, provider_server)
    _send(window, "Note it.")
    _item, view = await _waiting_card(window, "call_1")
    # Another server is added meanwhile (as the Tools page would write it).
    _write_mcp_json(tmp_path, {"srv": _srv(tmp_path), "second": _srv(tmp_path)})
    await window.controller.tool_servers.reload()
    assert window.controller.tool_servers.names() == ["srv", "second"]
    view.allow_once.click()
    await _idle(window)
    assert _card(window, "call_1").state is ItemState.DONE
    assert _notes(tmp_path) == ["kept"]
    await close_window(window)


# ---------------------------------------------------------------------------- as a person would


def _uvx_shim(folder: Path) -> None:
    """A ``uvx`` on PATH that runs the named tool from this venv (uv itself would fetch it from
    PyPI first; the tool is the published mcp-server-time, installed by the test extra)."""
    folder.mkdir(exist_ok=True)
    program = folder / "uvx"
    venv_bin = Path(sys.executable).parent
    program.write_text(f'#!/bin/sh\ntool="$1"; shift\nexec "{venv_bin}/$tool" "$@"\n')
    program.chmod(0o755)


async def test_the_time_preset_answers_what_time_it_is_in_tokyo(
    tmp_path, provider_server, monkeypatch
):
    """Add the time server from its preset, ask, approve, read the answer."""
    bin_dir = tmp_path / "bin"
    _uvx_shim(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    provider_server.script(
        Turn(
            tool_calls=[
                ScriptedCall("time__get_current_time", {"timezone": "Asia/Tokyo"}, id="call_1")
            ]
        ),
        Turn(text="It is evening in Tokyo."),
    )
    window = await _window(tmp_path, provider_server)
    assert not window.tool_server_button.isVisible()  # no server yet
    dialog = window.open_settings()
    dialog.tabs.setCurrentWidget(dialog.toolsPage)
    page = dialog.toolsPage
    await until(lambda: page.is_loaded and page.found is not None, what="the presets")
    assert page.presetButtons["time"].isEnabled()
    page.presetButtons["time"].click()
    dialog.saveButton.click()
    servers = window.controller.tool_servers
    await until(lambda: servers.names() == ["time"], what="the time server to be read")
    await until(lambda: window.settings_dialog is None, what="the dialog to close")
    assert window.tool_server_button.isVisible()

    _send(window, "What time is it in Tokyo?")
    item, view = await _waiting_card(window, "call_1")
    assert item.tool_server == "time" and '"timezone": "Asia/Tokyo"' in view.arguments.text()
    assert item.tool_effect.value == "read_only"  # mcp-server-time says so
    view.allow_once.click()
    await _answered(window, "It is evening in Tokyo.")
    assert item.state is ItemState.DONE
    result = json.loads(item.tool_result)
    assert result["timezone"] == "Asia/Tokyo" and result["datetime"]
    told = [
        m["content"] for m in provider_server.chat_requests()[1].messages() if m["role"] == "tool"
    ]
    assert json.loads(told[0])["timezone"] == "Asia/Tokyo"
    await close_window(window)


async def test_sigkill_while_an_mcp_tool_runs_resume_says_it_may_have_run_and_never_reruns_it(
    tmp_path, provider_server
):
    """The real app (``python -m ui``) on a data folder with mcp.json: the tool is approved and
    running (it appended its line, then sleeps) when the app is killed. Reopened, Resume's
    tooltip names the tool that may have run; Resume tells the model, the tool never runs
    again."""
    data = tmp_path / "data"
    await seed_provider(data, provider_server)
    _write_mcp_json(data, {"srv": _srv(tmp_path)})
    lines = tmp_path / "lines.txt"
    arguments = {"path": str(lines), "line": "appended once"}
    provider_server.script(
        Turn(tool_calls=[ScriptedCall("srv__append_then_sleep", arguments, id="call_1")])
    )
    script = tmp_path / "kill.smoke"
    script.write_text(
        "painted\nsend Append a line, please.\nwait-visible allowOnceButton\n"
        "click allowOnceButton\nwait-visible toolElapsed\nmark running\nhold\n"
    )
    env = app_env(PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    # Popen only starts the process; the reads go through a thread.
    proc = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, "-m", "ui", "--data-dir", str(data), "--smoke-script", str(script)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        await read_until(proc, "running")
        await until(lambda: lines.exists() and lines.read_text() == "appended once\n")
        os.kill(proc.pid, signal.SIGKILL)
        assert await asyncio.to_thread(proc.wait, 30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]

    provider_server.script(Turn(text="It may have run; I will not run it again by myself."))
    window = await _window(data, provider_server)
    await until(lambda: window.resume_button.isVisible(), what="Resume after the kill")
    point = window.resume_bar.point
    assert point.kind is ResumeKind.RECOVER_TOOLS
    assert "srv__append_then_sleep" in point.description
    assert "may or may not" in point.description
    assert window.resume_button.toolTip() == point.description
    window.resume_button.click()
    await _answered(window, "It may have run; I will not run it again by myself.")
    assert _card(window, "call_1").state is ItemState.INTERRUPTED
    assert lines.read_text() == "appended once\n", "the tool ran again"
    await close_window(window)


# ---------------------------------------------------------------------------- edges


async def test_a_server_switched_off_for_the_conversation_is_never_started(
    tmp_path, provider_server
):
    hold = tmp_path / "slow.pid"
    slow = _srv(tmp_path, args=[SERVER, "--hold-start", str(hold)])
    _write_mcp_json(tmp_path, {"srv": _srv(tmp_path), "slow": slow})
    provider_server.script(Turn(text="Without slow."), Turn(text="Checked."))
    window = await _window(tmp_path, provider_server)
    window.new_chat_button.click()
    button = window.tool_server_button
    await until(lambda: button.isEnabled(), what="a conversation to choose servers for")
    button.action_for("slow").trigger()
    _send(window, "Hello.")
    await _answered(window, "Without slow.")
    servers = window.controller.tool_servers
    assert servers.state("srv") is MCPServerState.RUNNING
    assert servers.state("slow") is MCPServerState.NOT_STARTED and not hold.exists()
    names = provider_server.chat_requests()[0].tool_names()
    assert "srv__echo" in names and not any(n.startswith("slow__") for n in names)
    await close_window(window)


async def test_stop_while_the_servers_start_ends_the_request_and_the_start(
    tmp_path, provider_server
):
    hold = tmp_path / "hold.pid"
    _write_mcp_json(tmp_path, {"held": _srv(tmp_path, args=[SERVER, "--hold-start", str(hold)])})
    window = await _window(tmp_path, provider_server)
    starting: list[bool] = []
    window.controller.tool_servers.starting.connect(lambda _sid, on: starting.append(on))
    _send(window, "Hello.")
    await until(lambda: hold.exists() and hold.read_text(), what="the server's held start")
    pid = int(hold.read_text())
    # The message is stored before the servers start; the window says they are starting.
    assert starting == [True]
    assert window.statusBar().currentMessage() == "Starting the tool servers…"
    rows = window.transcript.model().items()
    assert [r.text for r in rows] == ["Hello."]
    window.stop_button.click()
    sid = window.controller.current
    await until(lambda: not window.controller.is_running(sid), what="the request to stop")
    await until(lambda: not _alive(pid), what="the held start to end with the request")
    assert provider_server.chat_requests() == []  # the model was never asked
    assert window.statusBar().currentMessage() != "Starting the tool servers…"
    await close_window(window)


async def test_a_card_asks_about_the_requests_own_tool_after_the_servers_changed(
    tmp_path, provider_server
):
    """Another listing (a save in Settings) replaced the servers while a request runs: its
    next call of a tool it was given still asks first."""
    _write_mcp_json(tmp_path, {"srv": _srv(tmp_path)})
    provider_server.script(
        Turn(tool_calls=[ScriptedCall("srv__echo", {"text": "one"}, id="call_1")]),
        Turn(tool_calls=[ScriptedCall("srv__note", {"text": "two"}, id="call_2")]),
        Turn(text="Both done."),
    )
    window = await _window(tmp_path, provider_server)
    _send(window, "Echo, then note.")
    _item, view = await _waiting_card(window, "call_1")
    # The server is switched off in mcp.json and the file read again: the app's current
    # servers no longer have srv, the running request still holds it.
    _write_mcp_json(tmp_path, {"srv": {**_srv(tmp_path), "disabled": True}})
    await window.controller.reload_settings()
    await until(lambda: window.controller.tool_servers.names() == [], what="mcp.json read again")
    assert window.controller.tool_servers.find_tool("srv__note") is None
    view.allow_once.click()
    second, view2 = await _waiting_card(window, "call_2")
    assert _notes(tmp_path) == [], "the second call ran without asking"
    view2.allow_once.click()
    await _answered(window, "Both done.")
    assert second.state is ItemState.DONE and _notes(tmp_path) == ["two"]
    await close_window(window)


def test_a_server_named_with_an_ampersand_keeps_it_in_the_menu(qtbot):
    from ui.tools.tool_server_menu import ToolServerButton

    button = ToolServerButton()
    qtbot.addWidget(button)
    button.set_servers(["R&D", "plain"], ["R&D"], "a-conversation")
    action = button.action_for("R&D")
    assert action is not None and action.iconText() == "R&D"  # not "RD" with a shortcut
    assert action.isChecked() and not button.action_for("plain").isChecked()
    assert button.text() == "Tools 1/2" and button.isEnabled()
    toggled: list[tuple[str, str, bool]] = []
    button.offerChanged.connect(lambda *args: toggled.append(args))
    button.action_for("plain").trigger()
    assert toggled == [("a-conversation", "plain", True)] and button.text() == "Tools"
