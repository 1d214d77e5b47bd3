"""A narrow window (issue 20, item 12): at 640x480 an answer's line (model, time, tokens) made
the transcript's column wider than the view, so "Branch", a tool card's state and inline code
were drawn past the right edge, and the conversation list kept its 260 pixels. Rows reflow
to the width; the list gives way first, folds away below a width with a button that brings
it back; the width the person gives it is kept across starts. On the real window over a real
SQLite file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QLabel, QToolButton, QWidget

from engine import (
    AssistantMessage,
    SQLiteSessionStorage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from tests.support.wait import until
from tests.ui.conftest import close_window, open_window, seed_provider
from ui.controller import DB_FILE_NAME
from ui.window.side_split import SIDEBAR_WIDTH

TOOL = "notes__search_every_file_for_a_pattern"
MODEL = "llama3.1-8b-instruct-q4_K_M-with-a-long-name"


async def _seed(data_dir: Path) -> None:
    call = ToolCall("call_1", TOOL, {"pattern": "backoff", "folder": "~/notes/some/deep/folder"})
    usage = Usage(input_tokens=12345, output_tokens=6789)
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="old", title="An older chat")
        await storage.append("old", "seed", UserMessage(content="Hello"))
        await storage.create_session(session_id="s", title="Backoff helper")
        for message in (
            UserMessage(content="Where did I write about backoff? Show me a helper."),
            AssistantMessage(content="Let me look.", tool_calls=(call,), model=MODEL, usage=usage),
            ToolMessage(tool_call_id="call_1", name=TOOL, content="notes: 'backoff'", success=False),
            AssistantMessage(
                content="Use `asyncio.wait_for(some_really_long_function_name_here(arg))` here.",
                model=MODEL,
                usage=usage,
            ),
        ):
            await storage.append("s", "seed", message)
    finally:
        await storage.close()


def _past_the_edge(window: Any) -> list[str]:
    """The shown widgets of the transcript drawn past the view's right edge."""
    transcript = window.transcript
    viewport = transcript.viewport()
    column = transcript.widget()
    past = []
    for widget in column.findChildren(QWidget):
        if not widget.isVisibleTo(column) or widget.width() <= 0:
            continue
        right = widget.mapTo(viewport, QPoint(widget.width(), 0)).x()
        if right > viewport.width():
            past.append(f"{type(widget).__name__}#{widget.objectName()} ends at {right}")
    return past


async def _window(data_dir: Path, **kwargs: Any) -> Any:
    window = await open_window(data_dir, **kwargs)
    await until(lambda: len(window.transcript.views()) == 4, what="the four rows")
    return window


async def _sized(window: Any, width: int, height: int = 480) -> None:
    window.resize(width, height)
    await until(lambda: window.width() == width, what=f"{width} wide")
    window.transcript.flush()


async def test_rows_reflow_to_a_narrow_window(tmp_path) -> None:
    await _seed(tmp_path)
    window = await _window(tmp_path)
    for width in (1100, 640, 1100, 640):
        await _sized(window, width)
        await until(
            lambda: not _past_the_edge(window),
            what=lambda w=width: f"every row inside the view at {w}: {_past_the_edge(window)}",
        )
    viewport = window.transcript.viewport()
    assert window.transcript.widget().width() <= viewport.width()
    # What fell off is whole: every "Branch", the tool card's state, the answer's line.
    branches = [
        b for b in window.transcript.widget().findChildren(QToolButton, "branchButton")
        if b.isVisibleTo(window.transcript.widget())
    ]
    assert len(branches) == 3
    state = window.transcript.widget().findChild(QLabel, "toolState")
    assert state.text() and state.width() >= state.sizeHint().width()
    meta = [m for m in window.transcript.widget().findChildren(QLabel, "answerMeta") if m.text()]
    assert meta and all(MODEL in m.text() for m in meta)
    assert all(m.width() <= viewport.width() for m in meta)
    # The tool's long name gives way, its whole name still said in the tooltip.
    name = window.transcript.widget().findChild(QLabel, "toolName")
    assert name.text() == TOOL


async def test_the_list_gives_way_first_then_folds_behind_a_button(tmp_path) -> None:
    await _seed(tmp_path)
    window = await _window(tmp_path)
    splitter, sidebar, button = window.splitter, window.sidebar, window.splitter.button
    await _sized(window, 1100)
    await until(lambda: splitter.sizes()[0] == SIDEBAR_WIDTH, what="the list's width")
    assert not button.isVisible()

    await _sized(window, 640)
    await until(lambda: splitter.sizes()[0] < SIDEBAR_WIDTH, what="the list giving way")
    assert sidebar.isVisible() and not button.isVisible()
    assert splitter.sizes()[1] >= splitter.conversation_minimum()
    assert splitter.sizes()[0] >= splitter.sidebar_minimum()

    await _sized(window, 520)
    await until(lambda: not sidebar.isVisible(), what="the list folded away")
    assert button.isVisible() and window.header.isAncestorOf(button)
    assert button.accessibleName() == "Conversations"
    assert not _past_the_edge(window)

    button.click()
    assert sidebar.isVisible() and window.session_list.hasFocus()
    # Picking a conversation folds the list again, and shows that conversation.
    row = window.filter_model.index_of("old")
    window.session_list.setCurrentIndex(row)
    await until(lambda: window.controller.current == "old", what="the picked conversation")
    assert not sidebar.isVisible() and button.isVisible()

    await _sized(window, 1100)
    await until(lambda: sidebar.isVisible(), what="the list back")
    assert splitter.sizes()[0] == SIDEBAR_WIDTH and not button.isVisible()


async def test_the_lists_width_is_kept_across_starts(tmp_path, provider_server) -> None:
    await _seed(tmp_path)
    store = await seed_provider(tmp_path, provider_server)
    window = await _window(tmp_path, settings_store=store)
    await _sized(window, 1200, 760)
    splitter = window.splitter
    splitter.moveSplitter(330, 1)  # what dragging the handle does
    await until(lambda: splitter.sizes()[0] == 330, what="the dragged width")
    await close_window(window)
    saved = json.loads((tmp_path / "settings.json").read_text(encoding="utf-8"))
    assert saved["sidebar_width"] == 330

    window = await _window(tmp_path, settings_store=store)
    await _sized(window, 1200, 760)
    await until(lambda: window.splitter.sizes()[0] == 330, what="the kept width")
    # A narrower window than it allows: the list gives way, the choice is still kept.
    await _sized(window, 700)
    await until(lambda: window.splitter.sizes()[0] < 330, what="giving way")
    await _sized(window, 1200)
    await until(lambda: window.splitter.sizes()[0] == 330, what="the kept width again")
