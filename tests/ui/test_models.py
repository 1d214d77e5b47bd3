"""The item models pass Qt's model tester, and the conversation list does what a person expects:
newest first, new, rename, delete with confirmation, filter by title, remembered across restarts.
"""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog, QMessageBox

from engine import (
    AgentEvent,
    AssistantMessage,
    SQLiteSessionStorage,
    StoredMessage,
    ToolCall,
    ToolMessage,
    ToolOutcome,
    UserMessage,
)
from tests.support.wait import until
from tests.ui.conftest import close_window, open_window, seed_provider
from ui.controller import DB_FILE_NAME
from ui.conversation.sessions import SESSION_ID_ROLE, SessionFilterModel, SessionListModel
from ui.conversation.transcript import ItemKind, ItemState, TranscriptModel


def test_tool_cards_follow_the_engines_outcome_not_its_words():
    """A card's state comes from ``ToolMessage.outcome``: the same English words with another
    outcome give another state, and reworded results keep theirs."""
    from engine.resume import INTERRUPTED_TOOL_TEXT, NOT_RUN_TOOL_TEXT

    calls = tuple(ToolCall(f"c{i}", "write", {}) for i in range(6))
    results = [
        ToolMessage(
            tool_call_id="c0",
            content="Arrêté pendant l'exécution.",
            success=False,
            outcome=ToolOutcome.INTERRUPTED,
        ),
        ToolMessage(
            tool_call_id="c1", content="Pas lancé.", success=False, outcome=ToolOutcome.NOT_RUN
        ),
        ToolMessage(
            tool_call_id="c2",
            content=INTERRUPTED_TOOL_TEXT,
            success=False,
            outcome=ToolOutcome.FAILED,
        ),
        ToolMessage(
            tool_call_id="c3",
            content=NOT_RUN_TOOL_TEXT,
            success=False,
            outcome=ToolOutcome.DECLINED,
        ),
        ToolMessage(tool_call_id="c4", content="boom", success=False),
        ToolMessage(tool_call_id="c5", content="ok"),
    ]
    records = [StoredMessage(1, "r", AssistantMessage(tool_calls=calls))]
    records += [StoredMessage(i + 2, "r", m) for i, m in enumerate(results)]
    model = TranscriptModel("s")
    model.reset_records(records, has_more=False)
    cards = [i for i in model.items() if i.kind is ItemKind.TOOL]
    assert [c.state for c in cards] == [
        ItemState.INTERRUPTED,
        ItemState.NOT_RUN,
        ItemState.FAILED,
        ItemState.DENIED,
        ItemState.FAILED,
        ItemState.DONE,
    ]


def test_transcript_model_passes_the_model_tester(qtmodeltester):
    model = TranscriptModel("s")
    call = ToolCall("c1", "lookup", {"q": "x"})
    records = [
        StoredMessage(1, "r", UserMessage(content="hi")),
        StoredMessage(2, "r", AssistantMessage(content="let me look", tool_calls=(call,))),
        StoredMessage(3, "r", ToolMessage(tool_call_id="c1", name="lookup", content="found")),
        StoredMessage(4, "r", AssistantMessage(content="done")),
    ]
    model.reset_records(records[2:], has_more=True)
    qtmodeltester.check(model)
    model.prepend_records(records[:2], has_more=False)
    qtmodeltester.check(model)
    for event in (
        AgentEvent.message_appended("s", "r2", UserMessage(content="again")),
        AgentEvent.model_started("s", "r2"),
        AgentEvent.text_delta("s", "r2", "par"),
        AgentEvent.text_delta("s", "r2", "tial"),
    ):
        model.apply_event(event)
    qtmodeltester.check(model)
    assert [i.kind for i in model.items()] == [
        ItemKind.USER,
        ItemKind.ASSISTANT,
        ItemKind.TOOL,
        ItemKind.ASSISTANT,
        ItemKind.USER,
        ItemKind.ASSISTANT,
    ]
    card = model.items()[2]
    assert (
        card.state is ItemState.DONE
        and card.tool_result == "found"
        and '"q": "x"' in card.tool_arguments
    )
    assert model.items()[-1].text == "partial" and model.items()[-1].state is ItemState.STREAMING
    model.finish_request(stopped=True)
    assert model.items()[-1].state is ItemState.STOPPED and model.items()[-1].text == "partial"
    qtmodeltester.check(model)


def test_session_models_pass_the_model_tester(qtmodeltester):
    from engine import SessionInfo

    model = SessionListModel()
    model.set_sessions([SessionInfo(f"s{i}", f"Chat {i}", i, 100 - i) for i in range(5)])
    qtmodeltester.check(model)
    model.upsert(SessionInfo("s3", "Chat 3 renamed", 3, 200))
    assert model.data(model.index(0, 0)) == "Chat 3 renamed"
    model.upsert(SessionInfo("new", None, 300, 300))
    model.remove("s1")
    qtmodeltester.check(model)
    proxy = SessionFilterModel(model)
    proxy.set_query("chat 3")
    qtmodeltester.check(proxy)
    assert proxy.rowCount() == 1 and proxy.index(0, 0).data(SESSION_ID_ROLE) == "s3"


async def _seed(data_dir, titles):
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        for n, title in enumerate(titles):
            await storage.create_session(session_id=f"s{n}", title=title)
            await storage.append(f"s{n}", "r", UserMessage(content=f"question {n}"))
            await storage.append(f"s{n}", "r", AssistantMessage(content=f"answer {n}"))
    finally:
        await storage.close()


async def test_conversation_list_new_rename_delete_filter_and_remembered(tmp_path, provider_server):
    await _seed(tmp_path, ["Holiday plans", "Tax questions", "Recipe ideas"])
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    listed = [window.filter_model.index(r, 0).data() for r in range(window.filter_model.rowCount())]
    assert listed == ["Recipe ideas", "Tax questions", "Holiday plans"]  # newest first
    assert window.controller.current == "s2"

    # Filter by title.
    window.session_filter.setText("tax")
    assert window.filter_model.rowCount() == 1
    window.session_list.setCurrentIndex(window.filter_model.index(0, 0))
    await until(
        lambda: window.transcript.model().session_id == "s1", what="the clicked conversation"
    )
    window.session_filter.clear()
    assert window.filter_model.rowCount() == 3

    # New (Ctrl+N's action): an empty conversation on top, shown.
    window.menus.new_action.trigger()
    await until(lambda: window.controller.sessions.rowCount() == 4)
    new_id = window.controller.sessions.index(0, 0).data(SESSION_ID_ROLE)
    await until(
        lambda: window.transcript.model() and window.transcript.model().session_id == new_id
    )
    assert window.transcript.model().rowCount() == 0

    # Rename (F2's action) through the dialog, opened with open().
    await window.controller.open_session("s1")
    window.menus.rename_action.trigger()
    dialog = window.findChild(QInputDialog, "renameDialog")
    assert dialog is not None and dialog.isVisible() and dialog.textValue() == "Tax questions"
    dialog.setTextValue("Taxes 2026")
    dialog.accept()
    await until(lambda: window.controller.sessions.info("s1").title == "Taxes 2026")

    # Delete asks first; Cancel keeps it, Delete removes it and shows another.
    window.menus.delete_action.trigger()
    box = window.findChild(QMessageBox, "deleteDialog")
    assert box is not None and box.isVisible() and "Taxes 2026" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert window.controller.sessions.row_of("s1") >= 0
    window.menus.delete_action.trigger()
    box = window.findChild(QMessageBox, "deleteDialog")
    delete = next(
        b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole
    )
    delete.click()
    await until(
        lambda: (
            window.controller.sessions.row_of("s1") < 0
            and window.controller.current not in (None, "s1")
        )
    )
    storage = window.controller.storage
    assert await storage.get_session("s1") is None

    # The open conversation is remembered across restarts.
    await window.controller.open_session("s0")
    await close_window(window)
    again = await open_window(tmp_path, settings_store=store)
    assert again.controller.current == "s0"
    assert [i.text for i in again.transcript.model().items()] == ["question 0", "answer 0"]
