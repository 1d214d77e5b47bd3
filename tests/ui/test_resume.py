"""The Resume button, as the design card says: every resumable ending offers it, with the
engine's own description as its tooltip; finished, refused, context-full and empty
conversations do not; clicking it streams the continuation from the loopback provider.

Each conversation is stored with real `SQLiteSessionStorage` before the window opens, as a
previous run of the app would have left it.
"""

from __future__ import annotations

import pytest

from engine import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    ResumeKind,
    SQLiteSessionExtension,
    SQLiteSessionStorage,
    StopInfo,
    StopReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from tests.support.wait import until
from tests.ui.conftest import open_window, seed_provider
from ui.controller import DB_FILE_NAME
from ui.conversation.transcript import ItemKind, ItemState

CALL = ToolCall("call_1", "write_file", {"path": "notes.txt"})

#: name → (messages, expected kind or None)
HISTORIES = {
    "unanswered-user-message": ([UserMessage(content="What is 2+2?")], ResumeKind.CALL_MODEL),
    "tool-results-all-present": (
        [
            UserMessage(content="Write the notes"),
            AssistantMessage(tool_calls=(CALL,)),
            ToolMessage(tool_call_id="call_1", name="write_file", content="written"),
        ],
        ResumeKind.CALL_MODEL,
    ),
    "paused-at-limit": (
        [
            UserMessage(content="Search the web"),
            AssistantMessage(
                content="Searching", stop=StopInfo(StopReason.PAUSED, raw="pause_turn")
            ),
        ],
        ResumeKind.CALL_MODEL,
    ),
    "tool-calls-without-results": (
        [UserMessage(content="Write the notes"), AssistantMessage(tool_calls=(CALL,))],
        ResumeKind.RECOVER_TOOLS,
    ),
    "interrupted-response": (
        [
            UserMessage(content="Tell me a story"),
            AssistantMessage(
                content="Once upon a time",
                stop=StopInfo(
                    StopReason.INTERRUPTED,
                    raw="network_error",
                    message="The connection to the provider broke before the answer finished.",
                ),
            ),
        ],
        ResumeKind.RETRY_RESPONSE,
    ),
    "max-output": (
        [
            UserMessage(content="List the primes"),
            AssistantMessage(
                content="2, 3, 5, 7", stop=StopInfo(StopReason.MAX_OUTPUT, raw="length")
            ),
        ],
        ResumeKind.CONTINUE_RESPONSE,
    ),
    "finished": ([UserMessage(content="Hi"), AssistantMessage(content="Hello!")], None),
    "refused": (
        [
            UserMessage(content="Do something bad"),
            AssistantMessage(content="", stop=StopInfo(StopReason.REFUSAL, raw="refusal")),
        ],
        None,
    ),
    "context-full": (
        [
            UserMessage(content="A very long question"),
            AssistantMessage(
                content="", stop=StopInfo(StopReason.CONTEXT_FULL, raw="context_length_exceeded")
            ),
        ],
        None,
    ),
    "empty": ([], None),
}


async def _store(data_dir, name: str):
    """Store one conversation; return (session id, the engine's own resume point)."""
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        sid = f"s-{name}"
        await storage.create_session(session_id=sid, title=name)
        for message in HISTORIES[name][0]:
            await storage.append(sid, "earlier-run", message)
        agent = Agent(None, AgentRunConfig(sid), extensions=[SQLiteSessionExtension(storage)])
        point = await agent.resume_point()
    finally:
        await storage.close()
    return sid, point


@pytest.mark.parametrize("name", [n for n, (_, kind) in HISTORIES.items() if kind is not None])
async def test_resumable_conversation_offers_resume_and_clicking_completes_it(
    tmp_path, provider_server, name
):
    sid, point = await _store(tmp_path, name)
    assert point is not None and point.kind is HISTORIES[name][1]
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)

    assert window.controller.current == sid
    await until(lambda: window.resume_button.isVisible(), what="the Resume button")
    assert window.resume_button.toolTip() == point.description
    assert window.resume_label.isVisible() and window.resume_label.text()
    assert not window.error_banner.isVisible()

    rows = window.transcript.model()
    before = len([i for i in rows.items() if i.kind is ItemKind.ASSISTANT])
    window.resume_button.click()
    assert not window.resume_button.isVisible()
    await until(lambda: window.stop_button.isVisible(), what="the request to start")
    await until(lambda: not window.controller.is_running(sid), what="the resumed answer")
    answers = [i for i in rows.items() if i.kind is ItemKind.ASSISTANT]
    assert len(answers) == before + 1
    assert answers[-1].state is ItemState.DONE and answers[-1].text
    assert len(provider_server.chat_requests()) == 1
    # Polled again afterwards: the conversation finished, so nothing is offered.
    await until(lambda: window.resume_label.isHidden())
    assert not window.resume_button.isVisible()
    assert not window.error_banner.isVisible()
    if HISTORIES[name][1] is ResumeKind.RECOVER_TOOLS:
        card = next(i for i in rows.items() if i.kind is ItemKind.TOOL)
        assert card.state is ItemState.INTERRUPTED
    if HISTORIES[name][1] in (ResumeKind.RETRY_RESPONSE, ResumeKind.CONTINUE_RESPONSE):
        notices = [i for i in rows.items() if i.kind is ItemKind.NOTICE]
        assert [n.tag for n in notices] == [f"resume:{HISTORIES[name][1].value}"]
        view = window.transcript.views()[rows.items().index(notices[0])]
        assert view.objectName() == "noticeDivider"


@pytest.mark.parametrize("name", [n for n, (_, kind) in HISTORIES.items() if kind is None])
async def test_conversation_with_nothing_to_resume_offers_no_button(
    tmp_path, provider_server, name
):
    sid, point = await _store(tmp_path, name)
    assert point is None
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    assert window.controller.current == sid
    # The resume point is read while opening; started() returns after it was announced.
    assert not window.resume_button.isVisible()
    assert not window.resume_label.isVisible()
    assert provider_server.chat_requests() == []


async def test_switching_conversations_polls_each_one(tmp_path, provider_server):
    cut, cut_point = await _store(tmp_path, "interrupted-response")
    done, _ = await _store(tmp_path, "finished")
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    await window.controller.open_session(done)
    assert not window.resume_button.isVisible()
    await window.controller.open_session(cut)
    assert window.resume_button.isVisible()
    assert window.resume_button.toolTip() == cut_point.description
    await window.controller.open_session(done)
    assert not window.resume_button.isVisible()


@pytest.mark.parametrize("started", [False, True])
async def test_the_line_beside_resume_says_whether_the_tool_ran(tmp_path, provider_server, started):
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="s-tool", title="tool")
        await storage.append("s-tool", "earlier-run", UserMessage(content="Write the notes"))
        await storage.append("s-tool", "earlier-run", AssistantMessage(tool_calls=(CALL,)))
        if started:
            await storage.record_tool_start("s-tool", CALL.id)
    finally:
        await storage.close()
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    await until(lambda: window.resume_button.isVisible(), what="the Resume button")
    if started:
        assert window.resume_label.text() == "The app stopped while a tool was running."
        assert "may or may not" in window.resume_button.toolTip()
    else:
        assert window.resume_label.text() == (
            "The app stopped before the tool started, so it did not run."
        )
        assert "did not run" in window.resume_button.toolTip()
