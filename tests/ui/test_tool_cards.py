"""An approval card shows exactly what will run: the real window, a real MCP server, the
loopback provider playing a hostile one.

- Two calls of one answer under one id (``dup``) are two cards, each with its own arguments;
  the one allowed is the one that runs.
- A server's words do not decide the card: its tool's real name and server are always in the
  card's text, its title second; contradictory or missing hints count as destructive, and the
  read-only policy still asks about such a tool.
- Huge or many calls keep the window alive: long arguments are folded ("Show all"), and the
  calls past the cap are one row and never run.
- Esc denies a waiting card from wherever the focus is (the composer included), instead of
  stopping the request; the card takes the focus unless the person is typing.
- After a restart a card is the same card: its name, server, title and hints come from the
  stored call, its state from the start records ("did not run", not "interrupted").
"""

from __future__ import annotations

import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from engine import AssistantMessage, ResumeKind, ToolCall, ToolMessage, ToolOutcome
from engine.calls import MAX_TOOL_CALLS_PER_ANSWER, TOO_MANY_TOOL_TEXT
from engine.mcp import MCPToolset, load_mcp_config
from engine.storage import SQLiteSessionStorage
from tests.support.provider_server import RecordedRequest, ScriptedCall, Turn
from tests.support.wait import until
from tests.ui.conftest import close_window, open_window, seed_provider
from ui.controller import DB_FILE_NAME
from ui.conversation.items import ItemKind, ItemState, ToolEffect, ToolHints
from ui.conversation.tool_card import ARGUMENTS_SHOWN, FoldedCallsView, ToolCardView

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def mcp(tmp_path: Path) -> AsyncIterator[SimpleNamespace]:
    """A real stdio MCP server ``srv`` with the hostile tool too; ``notes`` is the file its
    ``note`` (and ``delete_everything``) write."""
    notes = tmp_path / "notes.txt"
    entry = {"command": sys.executable, "args": [SERVER, "--hostile"], "env": {"MCP_NOTES": str(notes)}}
    configs = load_mcp_config({"mcpServers": {"srv": entry}})
    async with MCPToolset(configs, log_dir=tmp_path / "logs") as toolset:
        tools = await toolset.list_tools()
        yield SimpleNamespace(tools=tools, notes=notes, by_name={t.name: t for t in tools})


def _notes(mcp: SimpleNamespace) -> list[str]:
    return mcp.notes.read_text().splitlines() if mcp.notes.exists() else []


async def _window(tmp_path: Path, provider_server: Any, mcp: Any, policy: str = "ask") -> Any:
    store = await seed_provider(tmp_path, provider_server)
    if policy != "ask":
        settings = await store.load()
        settings.tool_approval = policy
        await store.save(settings)
    window = await open_window(tmp_path, settings_store=store, tools=mcp.tools)
    window.store = store
    return window


def _cards(window: Any) -> list[Any]:
    model = window.transcript.model()
    return [i for i in model.items() if i.kind is ItemKind.TOOL] if model else []


def _view(window: Any, item: Any) -> Any:
    window.transcript.flush()
    return window.transcript.views()[window.transcript.model().items().index(item)]


async def _waiting(window: Any, index: int = -1) -> tuple[Any, ToolCardView]:
    """The card that asks the person now (the ``index``-th card, by default the last)."""
    await until(
        lambda: _cards(window) and _cards(window)[index].state is ItemState.AWAITING_APPROVAL,
        what=lambda: f"a card to ask: {[(c.tool_call_id, c.state) for c in _cards(window)]}",
        seconds=30,
    )
    item = _cards(window)[index]
    view = _view(window, item)
    assert view.waiting
    return item, view


def _send(window: Any, text: str) -> None:
    window.composer.setPlainText(text)
    window.send_button.click()


async def _idle(window: Any) -> None:
    sid = window.controller.current
    await until(lambda: not window.controller.is_running(sid), what="the request to end")


def _visible_text(view: ToolCardView) -> str:
    """What the card says on its face (its labels shown), tooltips aside."""
    labels = (view.name, view.server, view.title, view.effect, view.state, view.question)
    return " ".join(label.text() for label in labels if label.isVisibleTo(view))


# ---------------------------------------------------------------------------- repeated ids


async def test_two_calls_with_one_id_are_two_cards_and_the_allowed_one_runs(
    tmp_path, provider_server, mcp
):
    provider_server.script(
        Turn(
            tool_calls=[
                ScriptedCall("srv__note", {"text": "harmless"}, id="dup"),
                ScriptedCall("srv__note", {"text": "EVIL"}, id="dup"),
            ]
        ),
        Turn(text="One noted, one refused."),
    )
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Note two things.")
    first, first_view = await _waiting(window, 0)
    cards = _cards(window)
    assert len(cards) == 2 and cards[0].key != cards[1].key
    assert '"text": "harmless"' in first_view.arguments.text()
    assert "EVIL" not in first_view.arguments.text()
    first_view.allow_once.click()

    second, second_view = await _waiting(window, 1)
    assert '"text": "EVIL"' in second_view.arguments.text()
    assert "harmless" not in second_view.arguments.text()
    second_view.deny.click()
    await _idle(window)

    assert _notes(mcp) == ["harmless"], "the call allowed is the one that ran"
    assert first.state is ItemState.DONE and first.tool_result == "Noted: harmless"
    assert second.state is ItemState.DENIED and "EVIL" in second.tool_arguments
    assert '"text": "harmless"' in _view(window, first).arguments.text()
    await close_window(window)


# ---------------------------------------------------------------------------- a lying server


async def test_a_lying_tool_shows_its_real_name_and_is_asked_about_under_the_read_only_policy(
    tmp_path, provider_server, mcp
):
    """``delete_everything`` titled "Get the time (read-only)", marked read-only and
    destructive: the card names it and its server, reads it as destructive, and the
    read-only policy does not let it through."""
    provider_server.script(
        Turn(tool_calls=[ScriptedCall("srv__delete_everything", {}, id="c1")]),
        Turn(text="Understood."),
    )
    window = await _window(tmp_path, provider_server, mcp, policy="read_only")
    _send(window, "What time is it?")
    item, view = await _waiting(window)
    face = _visible_text(view)
    assert "delete_everything" in face and "srv" in face
    assert view.name.text() == "delete_everything"
    assert "Get the time (read-only)" in view.title.text() and view.title.isVisibleTo(view)
    assert item.tool_effect is ToolEffect.DESTRUCTIVE and item.tool_hints is ToolHints.CONTRADICTORY
    assert view.effect.text().startswith("⚠") and "Read-only" not in view.effect.text()
    assert "delete_everything from srv" in view.question.text()
    assert view.name.toolTip() == "delete_everything from srv"
    view.deny.click()
    await _idle(window)
    assert _notes(mcp) == [] and item.state is ItemState.DENIED
    await close_window(window)


async def test_the_settings_say_the_server_is_trusted_to_tell_the_truth(
    tmp_path, provider_server, mcp
):
    window = await _window(tmp_path, provider_server, mcp)
    dialog = window.open_settings()
    await until(lambda: dialog.is_loaded, what="the settings to load")
    from PySide6.QtWidgets import QLabel

    note = dialog.findChild(QLabel, "readOnlyTrustNote")
    assert note is not None and "trusted to tell the truth" in note.text()
    dialog.reject()
    await until(lambda: window.settings_dialog is None, what="the dialog to close")
    await close_window(window)


# ---------------------------------------------------------------------------- huge and many


async def test_huge_arguments_are_folded_until_the_person_asks_for_all(
    tmp_path, provider_server, mcp
):
    huge = "x" * 1_000_000
    provider_server.script(
        Turn(tool_calls=[ScriptedCall("srv__note", {"text": huge}, id="c1")], chunk_size=65536),
        Turn(text="Fine."),
    )
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Note a lot.")
    item, view = await _waiting(window)
    assert view.arguments_folded
    assert len(view.arguments.text()) <= ARGUMENTS_SHOWN + 1
    assert view.arguments_more.isVisibleTo(view)
    assert "1,000," in view.arguments_more.text()  # "Show all 1,000,0xx characters"
    view.arguments_more.click()
    assert view.arguments_all is not None and view.arguments_all.isVisibleTo(view)
    assert view.arguments_all.toPlainText() == item.tool_arguments
    assert not view.arguments_folded
    view.deny.click()
    await _idle(window)
    assert _notes(mcp) == []
    await close_window(window)


def _lookup_tool(ran: list[str]) -> Any:
    def lookup(q: str) -> str:
        """Look a word up."""
        ran.append(q)
        return "found"

    return lookup


async def test_too_many_calls_in_one_answer_are_one_row_and_never_run(tmp_path, provider_server):
    count = MAX_TOOL_CALLS_PER_ANSWER + 436
    calls = [ScriptedCall("lookup", {"q": str(n)}, id=f"c{n}") for n in range(count)]
    provider_server.script(Turn(tool_calls=calls, chunk_size=65536), Turn(text="Done."))
    ran: list[str] = []
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store, tools=[_lookup_tool(ran)])
    _send(window, "Look everything up.")

    def answered() -> bool:
        model = window.transcript.model()
        return model is not None and model.rowCount() > 0 and model.items()[-1].text == "Done."

    await until(answered, what="the final answer", seconds=60)
    await _idle(window)

    assert ran == [str(n) for n in range(MAX_TOOL_CALLS_PER_ANSWER)], "the cap applied"
    items = window.transcript.model().items()
    cards = [i for i in items if i.kind is ItemKind.TOOL]
    [folded] = [i for i in items if i.kind is ItemKind.FOLDED_CALLS]
    assert len(cards) == MAX_TOOL_CALLS_PER_ANSWER
    assert all(c.state is ItemState.DONE for c in cards)
    assert folded.folded_total == count - MAX_TOOL_CALLS_PER_ANSWER
    assert folded.state is ItemState.NOT_RUN and folded.folded_names == ["lookup"]
    row = _view(window, folded)
    assert isinstance(row, FoldedCallsView)
    assert "436 more calls" in row.summary.text() and "did not run" in row.summary.text()
    assert items[-1].text == "Done."
    # The model read why: every call answered, those past the cap with the same sentence.
    told = {
        m["tool_call_id"]: m["content"]
        for m in provider_server.chat_requests()[-1].messages()
        if m.get("role") == "tool"
    }
    assert [told[f"c{n}"] for n in range(count)] == [
        *["found"] * MAX_TOOL_CALLS_PER_ANSWER,
        *[TOO_MANY_TOOL_TEXT] * 436,
    ]
    # The window still answers: typing reaches the composer at once.
    window.composer.setFocus()
    QTest.keyClicks(window.composer, "still here")
    assert window.composer.toPlainText() == "still here"
    await close_window(window)

    # Reopened, the same: one row, no card per call past the cap.
    reopened = await open_window(tmp_path, settings_store=store, tools=[_lookup_tool(ran)])
    model = reopened.transcript.model()
    for _ in range(20):  # 500 answers and the asker: about 9 pages of 60
        if not model.has_more:
            break
        await reopened.controller.load_older()
    assert not model.has_more
    rows = model.items()
    assert len([i for i in rows if i.kind is ItemKind.TOOL]) == MAX_TOOL_CALLS_PER_ANSWER
    folds = [i for i in rows if i.kind is ItemKind.FOLDED_CALLS]
    assert len(folds) == 1 and folds[0].folded_total == 436
    assert folds[0].state is ItemState.NOT_RUN
    await close_window(reopened)


# ---------------------------------------------------------------------------- Esc and focus


async def test_esc_in_the_composer_denies_the_waiting_card_and_the_answer_goes_on(
    tmp_path, provider_server, mcp
):
    provider_server.script(
        Turn(tool_calls=[ScriptedCall("srv__note", {"text": "x"}, id="c1")]),
        Turn(text="Then I will not."),
    )
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Note x.")
    item, view = await _waiting(window)
    window.composer.setFocus()
    QTest.keyClick(window.composer, Qt.Key.Key_Escape)
    await _idle(window)
    assert item.state is ItemState.DENIED, "Esc stopped the request instead of denying"
    assert _notes(mcp) == []
    answers = [i for i in window.transcript.model().items() if i.kind is ItemKind.ASSISTANT]
    assert answers[-1].text == "Then I will not."
    told = [m for m in provider_server.chat_requests()[-1].messages() if m.get("role") == "tool"]
    assert told[-1]["content"] == "The person declined to run this tool."
    assert not window.tool_status.escape_denies.active, "Esc is the window's own again"
    await close_window(window)


async def test_the_card_takes_the_focus_unless_the_person_is_typing(
    tmp_path, provider_server, mcp
):
    """After Send (the composer empty) the card takes the focus. While the person types the
    next message, a card that appears leaves the focus and the text where they are; Esc
    there still denies it, and the text stays."""
    provider_server.script(
        Turn(tool_calls=[ScriptedCall("srv__note", {"text": "one"}, id="c1")]),
        Turn(text="Noted."),
    )
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Note one.")
    item, view = await _waiting(window)
    await until(lambda: window.focusWidget() is view, what="the card to take the focus")
    view.allow_once.click()
    await _idle(window)
    assert item.state is ItemState.DONE

    # The provider holds its answer until the person has started typing.
    typing = threading.Event()

    def held(request: RecordedRequest) -> Turn:
        typing.wait(30)
        if request.last_is_tool_result():
            return Turn(text="Not then.")
        return Turn(tool_calls=[ScriptedCall("srv__note", {"text": "two"}, id="c2")])

    provider_server.default = held
    _send(window, "Note two.")
    window.composer.setFocus()
    await until(lambda: len(provider_server.chat_requests()) == 3, what="the request to go")
    QTest.keyClicks(window.composer, "and then")
    typing.set()
    second, second_view = await _waiting(window)
    assert window.focusWidget() is window.composer
    assert window.composer.toPlainText() == "and then"
    QTest.keyClicks(window.composer, " more")
    QTest.keyClick(window.composer, Qt.Key.Key_Escape)
    await _idle(window)
    assert second.state is ItemState.DENIED and _notes(mcp) == ["one"]
    assert window.composer.toPlainText() == "and then more"
    await close_window(window)


# ---------------------------------------------------------------------------- a restart


async def test_after_a_restart_a_card_is_the_same_card(tmp_path, provider_server, mcp):
    """A card allowed and done, then an answer whose calls a killed app left unanswered (one
    never started, one started): reopened in a fresh window over the same data folder, each
    card shows the same name, server, title, hints and the state Resume reads."""
    provider_server.script(
        Turn(tool_calls=[ScriptedCall("srv__note", {"text": "kept"}, id="c1")]),
        Turn(text="Noted."),
    )
    window = await _window(tmp_path, provider_server, mcp)
    _send(window, "Note it.")
    item, view = await _waiting(window)
    view.allow_once.click()
    await _idle(window)
    before = _face(_view(window, item))
    sid = window.controller.current
    await close_window(window)

    # What a process killed at the next card, and while a tool ran, leaves behind.
    note = mcp.by_name["srv__note"]
    asker = AssistantMessage(
        tool_calls=(
            ToolCall("c2", note.name, {"text": "never"}, note.info),
            ToolCall("c3", note.name, {"text": "maybe"}, note.info),
        )
    )
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:
        await storage.append(sid, "killed", asker)
        await storage.record_tool_start(sid, "c3")
    finally:
        await storage.close()

    reopened = await open_window(tmp_path, settings_store=window.store, tools=mcp.tools)
    await until(lambda: reopened.resume_button.isVisible(), what="Resume after the kill")
    point = reopened.resume_bar.point
    assert point.kind is ResumeKind.RECOVER_TOOLS
    cards = {c.tool_call_id: c for c in _cards(reopened)}
    await until(lambda: cards["c2"].state is ItemState.NOT_RUN, what="c2 to say did not run")
    assert _face(_view(reopened, cards["c1"])) == before
    never, maybe = _view(reopened, cards["c2"]), _view(reopened, cards["c3"])
    assert never.state.text() == "did not run" and cards["c2"].state is ItemState.NOT_RUN
    assert maybe.state.text() == "interrupted" and cards["c3"].state is ItemState.INTERRUPTED
    for shown in (never, maybe):
        assert shown.name.text() == "note" and "srv" in shown.server.text()
        assert "Write a note" in shown.title.text()
        assert shown.effect.text() == before[3]
        assert shown.name.toolTip() == "note from srv"
    await close_window(reopened)


def _face(view: ToolCardView) -> tuple[str, ...]:
    return (
        view.name.text(),
        view.server.text(),
        view.title.text(),
        view.effect.text(),
        view.state.text(),
        view.name.toolTip(),
    )


def test_a_result_whose_call_shares_an_id_with_another_answers_its_own_card(qtbot):
    """Stored before ids were made unique: two answers both asking for ``call_0``, and one
    answer asking twice for ``dup``: each result goes to its own card."""
    from engine import StoredMessage
    from ui.conversation.transcript import TranscriptModel

    records = [
        AssistantMessage(tool_calls=(ToolCall("call_0", "a", {"n": 1}),)),
        ToolMessage(tool_call_id="call_0", name="a", content="first"),
        AssistantMessage(
            tool_calls=(
                ToolCall("call_0", "a", {"n": 2}),
                ToolCall("dup", "b", {"text": "harmless"}),
                ToolCall("dup", "b", {"text": "EVIL"}),
            )
        ),
        ToolMessage(tool_call_id="call_0", name="a", content="second"),
        ToolMessage(tool_call_id="dup", name="b", content="for harmless"),
        ToolMessage(
            tool_call_id="dup",
            name="b",
            content="for EVIL",
            success=False,
            outcome=ToolOutcome.DECLINED,
        ),
    ]
    model = TranscriptModel("s")
    model.reset_records([StoredMessage(n + 1, "r", m) for n, m in enumerate(records)], False)
    cards = [i for i in model.items() if i.kind is ItemKind.TOOL]
    assert [(c.tool_arguments.replace("\n", ""), c.tool_result, c.state) for c in cards] == [
        ('{ "n": 1}', "first", ItemState.DONE),
        ('{ "n": 2}', "second", ItemState.DONE),
        ('{ "text": "harmless"}', "for harmless", ItemState.DONE),
        ('{ "text": "EVIL"}', "for EVIL", ItemState.DENIED),
    ]
    assert len({c.key for c in cards}) == 4
