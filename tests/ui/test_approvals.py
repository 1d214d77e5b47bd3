"""Approving MCP tool calls in the real window: a real stdio MCP server, the loopback provider.

The window's tools come from a real `MCPToolset` around tests/support/mcp_server.py. Its
``note`` tool (it "may change things") appends a line to a file, so the tests see whether it
ran; ``echo`` says it is read-only. The model's requests are read on the loopback server.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QPushButton

from engine import ResumeKind, ToolMessage, ToolOutcome
from engine.mcp import MCPToolset, load_mcp_config
from engine.resume import NOT_STARTED_TOOL_TEXT
from engine.storage import SQLiteSessionStorage
from tests.support.provider_server import ScriptedCall, Turn
from tests.support.wait import until
from tests.ui.conftest import (
    app_env,
    close_window,
    next_signal,
    open_window,
    read_until,
    seed_provider,
)
from tests.ui.test_untrusted_text import _images
from ui.controller import DB_FILE_NAME
from ui.conversation.items import ItemKind, ItemState, ToolEffect, TranscriptItem
from ui.conversation.tool_card import ToolCardView
from ui.settings.approval_settings import ApprovalSettings

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def mcp(tmp_path: Path) -> AsyncIterator[SimpleNamespace]:
    """A real stdio MCP server ``srv``; ``notes`` is the file its ``note`` tool writes."""
    notes = tmp_path / "notes.txt"
    entry = {
        "command": sys.executable,
        "args": [SERVER],
        "env": {"MCP_NOTES": str(notes), "MCP_MARKER": str(tmp_path / "hang")},
    }
    configs = load_mcp_config({"mcpServers": {"srv": entry}})
    async with MCPToolset(configs, log_dir=tmp_path / "logs") as toolset:
        tools = await toolset.list_tools()
        yield SimpleNamespace(tools=tools, notes=notes, hang=tmp_path / "hang")


def _note_turn(text: str, call_id: str) -> Turn:
    return Turn(tool_calls=[ScriptedCall("srv__note", {"text": text}, id=call_id)])


def _notes(mcp: SimpleNamespace) -> list[str]:
    return mcp.notes.read_text().splitlines() if mcp.notes.exists() else []


def _cards(window: Any) -> list[Any]:
    model = window.transcript.model()
    return [i for i in model.items() if i.kind is ItemKind.TOOL] if model else []


def _card(window: Any, call_id: str) -> Any:
    return next((c for c in _cards(window) if c.tool_call_id == call_id), None)


def _view(window: Any, item: Any) -> ToolCardView:
    window.transcript.flush()
    view = window.transcript.views()[window.transcript.model().items().index(item)]
    assert isinstance(view, ToolCardView)
    return view


def _send(window: Any, text: str) -> None:
    window.composer.setPlainText(text)
    window.send_button.click()


async def _waiting_card(window: Any, call_id: str) -> tuple[Any, ToolCardView]:
    """Wait until the card of ``call_id`` asks the person; return it and its view."""
    await until(
        lambda: (
            (c := _card(window, call_id)) is not None and c.state is ItemState.AWAITING_APPROVAL
        ),
        what=lambda: f"the card of {call_id} to ask: {[(c.tool_call_id, c.state) for c in _cards(window)]}",
        seconds=30,  # a real MCP server may have to start first, on a loaded machine
    )
    item = _card(window, call_id)
    view = _view(window, item)
    assert view.waiting and view.approval.isVisibleTo(view)
    return item, view


async def _idle(window: Any) -> None:
    sid = window.controller.current
    await until(lambda: not window.controller.is_running(sid), what="the request to end")


def _tool_results(request: Any) -> list[str]:
    return [m.get("content") for m in request.messages() if m.get("role") == "tool"]


async def _stored_results(data_dir: Path, sid: str) -> list[ToolMessage]:
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        messages = await storage.load(sid)
    finally:
        await storage.close()
    return [m for m in messages if isinstance(m, ToolMessage)]


async def _window(tmp_path: Path, provider_server: Any, mcp: Any, policy: str = "ask") -> Any:
    store = await seed_provider(tmp_path, provider_server)
    if policy != "ask":
        settings = await store.load()
        settings.tool_approval = policy
        await store.save(settings)
    window = await open_window(tmp_path, settings_store=store, tools=mcp.tools)
    window.store = store
    return window


# ---------------------------------------------------------------------------- answers


async def test_allow_once_runs_the_tool_and_the_next_call_asks_again(
    tmp_path, provider_server, mcp
):
    provider_server.script(
        _note_turn("first", "call_1"),
        Turn(text="Noted once."),
        _note_turn("second", "call_2"),
        Turn(text="Noted twice."),
    )
    window = await _window(tmp_path, provider_server, mcp)
    window.composer.setFocus()
    _send(window, "Note something.")
    item, view = await _waiting_card(window, "call_1")

    # What the card says: the tool's real name and server, its title second, its
    # arguments, what it may do.
    assert view.name.text() == "note" and item.tool_server == "srv"
    assert "srv" in view.server.text() and view.server.isVisibleTo(view)
    assert view.title.isVisibleTo(view) and "Write a note" in view.title.text()
    assert view.name.toolTip() == "note from srv"
    assert item.tool_effect is ToolEffect.CHANGES
    assert view.effect.text() == view.effect_text(ToolEffect.CHANGES)
    assert view.effect.isVisibleTo(view)
    assert view.arguments.isVisibleTo(view) and '"text": "first"' in view.arguments.text()
    assert view.state.text() == view.state_text(ItemState.AWAITING_APPROVAL)
    # The conversation says it waits; the card takes the focus (the composer is empty
    # after Send), is announced and reachable by Tab.
    assert window.approval_label.isVisible() and window.approval_label.text()
    await until(lambda: window.focusWidget() is view, what="the card to take the focus")
    assert "waits for your approval" in view.accessibleName()
    assert _reachable_by_tab(window.transcript, view.allow_once)
    assert _reachable_by_tab(window.transcript, view.deny_reason)
    assert _notes(mcp) == [], "the tool ran before the person answered"

    view.allow_once.click()
    await _idle(window)
    assert item.state is ItemState.DONE and item.tool_result == "Noted: first"
    assert view.state.text() == view.state_text(ItemState.DONE)
    assert not view.waiting and not window.approval_label.isVisible()
    assert not view.ticking, "the elapsed time is counted only while the tool runs"
    assert _notes(mcp) == ["first"]
    assert window.controller.approvals.pending() == []

    # Allowed once: the next call asks again.
    _send(window, "Again.")
    second, view2 = await _waiting_card(window, "call_2")
    view2.allow_once.click()
    await _idle(window)
    assert second.state is ItemState.DONE and _notes(mcp) == ["first", "second"]
    saved = json.loads(window.store.path.read_text())
    assert saved.get("always_allowed", []) == []
    await close_window(window)


async def test_always_allow_is_saved_and_revoking_it_in_settings_asks_again(
    tmp_path, provider_server, mcp
):
    provider_server.script(
        _note_turn("one", "call_1"),
        Turn(text="Noted."),
        _note_turn("two", "call_2"),
        Turn(text="Noted without asking."),
        _note_turn("three", "call_3"),
        Turn(text="Asked again."),
    )
    window = await _window(tmp_path, provider_server, mcp)
    asked: list[str] = []
    window.controller.approvals.waitingChanged.connect(
        lambda sid, waiting: asked.append(sid) if waiting else None
    )
    _send(window, "Note one.")
    item, view = await _waiting_card(window, "call_1")
    view.always_allow.click()
    await _idle(window)
    assert item.state is ItemState.DONE and _notes(mcp) == ["one"]

    def saved_pairs() -> list[dict[str, str]]:
        return json.loads(window.store.path.read_text()).get("always_allowed", [])

    await until(lambda: saved_pairs() == [{"server": "srv", "tool": "note"}], what="the save")
    assert len(asked) == 1

    # The next call runs without a card asking.
    _send(window, "Note two.")
    await _idle(window)
    assert _card(window, "call_2").state is ItemState.DONE
    assert len(asked) == 1 and _notes(mcp) == ["one", "two"]

    # Settings › Tool approval lists it; Revoke and Save take it off.
    dialog = window.open_settings()
    await until(lambda: dialog.is_loaded, what="the settings to load")
    page = dialog.findChild(ApprovalSettings, "approvalSettings")
    assert page is not None and page.always_allowed() == [("srv", "note")]
    assert page.ask_every.isChecked()
    revoke = page.findChild(QPushButton, "revokeButton")
    assert revoke is not None
    revoke.click()
    assert page.always_allowed() == [] and page.empty.isVisibleTo(page)
    page.allow_read_only.click()  # saved with the same Save (`note` is not read-only)
    reloaded = next_signal(window.controller.settingsLoaded)
    dialog.saveButton.click()
    await reloaded
    assert saved_pairs() == []
    assert json.loads(window.store.path.read_text())["tool_approval"] == "read_only"
    assert window.controller.settings.always_allowed == []
    assert window.controller.settings.tool_approval == "read_only"
    await until(lambda: window.settings_dialog is None, what="the dialog to close")

    # Opened again, the list stays empty.
    dialog = window.open_settings()
    await until(lambda: dialog.is_loaded, what="the settings to load again")
    page = dialog.findChild(ApprovalSettings, "approvalSettings")
    assert page.always_allowed() == [] and page.findChild(QPushButton, "revokeButton") is None
    assert page.allow_read_only.isChecked() and page.policy() == "read_only"
    dialog.reject()
    await until(lambda: window.settings_dialog is None, what="the dialog to close")

    # And the tool asks again.
    _send(window, "Note three.")
    third, view3 = await _waiting_card(window, "call_3")
    assert len(asked) == 2
    view3.allow_once.click()
    await _idle(window)
    assert third.state is ItemState.DONE and _notes(mcp) == ["one", "two", "three"]
    await close_window(window)


async def test_deny_with_a_reason_tells_the_model_and_the_tool_never_runs(
    tmp_path, provider_server, mcp
):
    provider_server.script(_note_turn("secret", "call_1"), Turn(text="Understood."))
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Note a secret.")
    item, view = await _waiting_card(window, "call_1")
    view.deny_reason.setText("  not on Sundays ")
    view.deny.click()
    await _idle(window)
    assert item.state is ItemState.DENIED
    assert view.state.text() == view.state_text(ItemState.DENIED) == "denied"
    assert _notes(mcp) == []
    last = provider_server.chat_requests()[-1]
    assert _tool_results(last) == ["The person declined: not on Sundays"]
    stored = await _stored_results(tmp_path, window.controller.current)
    assert [m.outcome for m in stored] == [ToolOutcome.DECLINED]
    await close_window(window)


async def test_esc_on_the_card_denies(tmp_path, provider_server, mcp):
    provider_server.script(_note_turn("x", "call_1"), Turn(text="Fine."))
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Note x.")
    item, view = await _waiting_card(window, "call_1")
    QTest.keyClick(view.deny_reason, Qt.Key.Key_Escape)
    await _idle(window)
    assert item.state is ItemState.DENIED and _notes(mcp) == []
    last = provider_server.chat_requests()[-1]
    assert _tool_results(last) == ["The person declined to run this tool."]
    await close_window(window)


async def test_enter_on_the_card_never_allows(tmp_path, provider_server, mcp):
    provider_server.script(_note_turn("x", "call_1"), Turn(text="Fine."))
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Note x.")
    item, view = await _waiting_card(window, "call_1")
    question = item.approval
    for button in (view.allow_once, view.always_allow, view.deny):
        assert not button.isDefault() and not button.autoDefault()
    for target in (view.allow_once, view.always_allow, view, view.deny_reason):
        for key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            target.setFocus()
            QTest.keyClick(target, key)
    # An answer is given at once (the future is set by the click itself): none was.
    assert not question.answered and view.waiting and item.state is ItemState.AWAITING_APPROVAL
    assert window.controller.is_running(window.controller.current)
    # Enter in the reason box with a reason denies with it.
    view.deny_reason.setText("no")
    QTest.keyClick(view.deny_reason, Qt.Key.Key_Return)
    assert question.answered
    await _idle(window)
    assert item.state is ItemState.DENIED and _notes(mcp) == []
    assert _tool_results(provider_server.chat_requests()[-1]) == ["The person declined: no"]
    await close_window(window)


async def test_stop_while_a_card_waits_answers_did_not_run(tmp_path, provider_server, mcp):
    provider_server.script(_note_turn("never", "call_1"), Turn(text="(not reached)"))
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Note it.")
    item, view = await _waiting_card(window, "call_1")
    assert window.stop_button.isVisible()
    window.stop_button.click()
    await _idle(window)
    assert item.state is ItemState.NOT_RUN and item.approval is None
    assert view.state.text() == view.state_text(ItemState.NOT_RUN) == "did not run"
    assert not view.waiting and not window.approval_label.isVisible()
    assert window.controller.approvals.pending() == []
    assert not window.stop_button.isVisible() and window.send_button.isVisible()
    assert _notes(mcp) == []
    assert len(provider_server.chat_requests()) == 1, "the model was asked again after Stop"
    stored = await _stored_results(tmp_path, window.controller.current)
    assert [m.outcome for m in stored] == [ToolOutcome.NOT_RUN]
    await close_window(window)


async def test_read_only_policy_lets_read_only_tools_through_and_asks_for_others(
    tmp_path, provider_server, mcp
):
    provider_server.script(
        Turn(
            tool_calls=[
                ScriptedCall("srv__echo", {"text": "**bold** <b>raw</b>"}, id="call_1"),
                ScriptedCall("srv__note", {"text": "kept"}, id="call_2"),
            ]
        ),
        Turn(text="Both done."),
    )
    window = await _window(tmp_path, provider_server, mcp, policy="read_only")
    asked: list[str] = []
    window.controller.approvals.waitingChanged.connect(
        lambda sid, waiting: asked.append(sid) if waiting else None
    )
    _send(window, "Echo, then note.")
    note, view = await _waiting_card(window, "call_2")
    echo = _card(window, "call_1")
    assert echo.state is ItemState.DONE and echo.tool_effect is ToolEffect.READ_ONLY
    assert len(asked) == 1
    view.allow_once.click()
    await _idle(window)
    assert note.state is ItemState.DONE and _notes(mcp) == ["kept"]

    # The result is untrusted text rendered like an answer: Markdown, HTML shown as text.
    echo_view = _view(window, echo)
    assert not echo_view.result.isVisibleTo(echo_view)
    echo_view.result_toggle.click()
    assert echo_view.result.isVisibleTo(echo_view)
    shown = echo_view.result.toPlainText()
    assert "<b>raw</b>" in shown and "**" not in shown
    await close_window(window)


async def test_a_running_card_counts_seconds_and_stop_interrupts_it(tmp_path, provider_server, mcp):
    provider_server.script(
        Turn(tool_calls=[ScriptedCall("srv__hang", {}, id="call_1")]), Turn(text="(not reached)")
    )
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Hang.")
    item, view = await _waiting_card(window, "call_1")
    assert not view.ticking
    view.allow_once.click()
    await until(lambda: mcp.hang.exists(), what="the tool to start")
    assert item.state is ItemState.RUNNING and item.started_at is not None
    assert view.ticking and view.elapsed.isVisibleTo(view) and view.elapsed.text().endswith("s")
    window.stop_button.click()
    await _idle(window)
    assert item.state is ItemState.INTERRUPTED
    assert not view.ticking and not view.elapsed.isVisibleTo(view)
    await close_window(window)


async def test_closing_the_window_while_a_card_waits_closes_and_the_call_did_not_run(
    tmp_path, provider_server, mcp
):
    provider_server.script(_note_turn("never", "call_1"), Turn(text="(not reached)"))
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Note it.")
    await _waiting_card(window, "call_1")
    sid = window.controller.current
    await close_window(window)  # fails after 15 s if closing hangs
    assert window.controller.closed
    assert _notes(mcp) == []
    stored = await _stored_results(tmp_path, sid)
    assert [m.outcome for m in stored] == [ToolOutcome.NOT_RUN]

    reopened = await open_window(tmp_path, settings_store=window.store, tools=mcp.tools)
    assert reopened.controller.current == sid
    card = _card(reopened, "call_1")
    assert card is not None and card.state is ItemState.NOT_RUN
    assert _view(reopened, card).state.text() == "did not run"
    await close_window(reopened)


def _reachable_by_tab(start: Any, target: Any, steps: int = 400) -> bool:
    widget = start
    for _ in range(steps):
        widget = widget.nextInFocusChain()
        if widget is target:
            return True
        if widget is start:
            return False
    return False


# ---------------------------------------------------------------------------- a kill


async def test_sigkill_while_a_card_waits_then_resume_says_the_tool_did_not_run(
    tmp_path, provider_server, mcp
):
    """The app is killed (SIGKILL) while a card waits: the reopened window's Resume says the
    tool did not run, and Resume tells the model so without running it; asked again, the
    card asks again."""
    store = await seed_provider(tmp_path, provider_server)
    provider_server.script(_note_turn("before the kill", "call_1"))
    # Popen only starts the process; the reads go through a thread.
    proc = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, "-m", "tests.ui.approval_kill_child", str(tmp_path), str(mcp.notes)],
        cwd=ROOT,
        env=app_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        await read_until(proc, "waiting")
        os.kill(proc.pid, signal.SIGKILL)
        assert await asyncio.to_thread(proc.wait, 30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
    assert _notes(mcp) == []

    provider_server.script(Turn(text="It did not run; shall I try again?"))
    window = await open_window(tmp_path, settings_store=store, tools=mcp.tools)
    await until(lambda: window.resume_button.isVisible(), what="Resume after the kill")
    point = window.resume_bar.point
    assert point.kind is ResumeKind.RECOVER_TOOLS
    assert "did not run" in point.description and "srv__note" in point.description
    assert window.resume_button.toolTip() == point.description
    card = _card(window, "call_1")
    assert card is not None

    window.resume_button.click()
    await _idle(window)
    assert card.state is ItemState.NOT_RUN and _notes(mcp) == []
    told = _tool_results(provider_server.chat_requests()[-1])
    assert told == [NOT_STARTED_TOOL_TEXT]

    # The person asks again: the model calls the tool again, and the card asks again.
    provider_server.script(_note_turn("again", "call_2"), Turn(text="Noted."))
    _send(window, "Try again.")
    again, view = await _waiting_card(window, "call_2")
    view.allow_once.click()
    await _idle(window)
    assert again.state is ItemState.DONE and _notes(mcp) == ["again"]
    await close_window(window)


# ---------------------------------------------------------------------------- results


def test_a_huge_result_is_folded_rendered_only_when_opened_and_loads_nothing(qtbot, tmp_path):
    picture = tmp_path / "p.png"
    image = QImage(4, 4, QImage.Format.Format_RGB32)
    image.fill(0xFF0000)
    assert image.save(str(picture))
    huge = f"![a]({picture}) <img src='{picture}'> **bold**\n\n" + "word " * 30_000
    item = TranscriptItem(
        ItemKind.TOOL, "c1", ItemState.DONE, tool_name="srv__echo", tool_result=huge
    )
    view = ToolCardView()
    qtbot.addWidget(view)
    view.refresh(item)
    view.show()
    assert view.result_toggle.isVisibleTo(view) and not view.result_toggle.isChecked()
    assert view.result.document().isEmpty(), "a folded result is not rendered"
    view.result_toggle.click()
    shown = view.result.toPlainText()
    assert "<img src=" in shown and "bold" in shown and "**" not in shown
    assert _images(view.result.document()) == []
    assert len(shown) < len(huge), "only the beginning of a huge result is laid out"
    view._link_activated(QUrl("more:"))
    assert len(view.result.toPlainText()) > len(shown)
    assert _images(view.result.document()) == []
    view.result_toggle.click()
    assert not view.result.isVisibleTo(view)


async def test_answering_by_keyboard_leaves_the_focus_on_a_visible_widget(
    tmp_path, provider_server, mcp
):
    provider_server.script(_note_turn("typed", "call_1"), Turn(text="Noted."))
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Note it.")
    item, view = await _waiting_card(window, "call_1")
    view.allow_once.setFocus()
    QTest.keyClick(view.allow_once, Qt.Key.Key_Space)  # a button's own key: it answers
    assert item.approval is None or item.approval.answered
    await until(lambda: item.state is not ItemState.AWAITING_APPROVAL, what="the answer")
    # The buttons are hidden now: the focus is not left on one of them.
    focus = window.focusWidget()
    assert focus is not None and focus.isVisibleTo(window), focus
    await _idle(window)
    assert item.state is ItemState.DONE and _notes(mcp) == ["typed"]
    await close_window(window)
