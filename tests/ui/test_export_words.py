"""Exports speak like the window (issue 20, item 10), in the real window over a real SQLite
file and the loopback provider: the provider by the name the person gave it, never its internal
id; Resume's notice as the window's caption, never the instruction meant for the model; the
answer Resume redid marked as the earlier attempt, as the window folds it; a tool that did not
run said in words, never as the raw state id "not_run". JSON keeps everything as stored.

A cut-off answer and a request stopped before its tool ran are stored as an earlier run of the
app left them; Resume is clicked in the window; File › Export… writes each format.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from engine import (
    AssistantMessage,
    SQLiteSessionStorage,
    StopInfo,
    StopReason,
    ToolCall,
    ToolMessage,
    ToolOutcome,
    UserMessage,
)
from engine.resume import NOT_RUN_TOOL_TEXT, RETRY_NOTICE
from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import open_window
from tests.ui.test_archive_menu import _choose, _close_report, _export_drive, _trigger
from ui.archive import Outcome
from ui.controller import DB_FILE_NAME
from ui.conversation.transcript import ItemKind
from ui.settings.store import ProviderConfig, Settings, SettingsStore

PROVIDER_ID = "6631ebadf5d24a1b9c"  # as the window makes them: nothing a reader should see
CALL = ToolCall("call_1", "write_file", {"path": "notes.txt"})

pytestmark = pytest.mark.timeout(120)


async def _settings(data_dir: Path, server: Any) -> SettingsStore:
    store = SettingsStore(data_dir, use_keychain=False)
    config = ProviderConfig(
        id=PROVIDER_ID,
        kind="openai",
        name="Home server",
        base_url=server.openai_url,
        default_model="loopback-echo",
    )
    await store.save(Settings(providers=[config], default_provider_id=PROVIDER_ID))
    return store


async def _seed(data_dir: Path) -> None:
    meta = {"provider_id": PROVIDER_ID, "model": "loopback-echo"}
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="notes", title="Write the notes", metadata=meta)
        await storage.append("notes", "run-1", UserMessage(content="Write the notes"))
        await storage.append("notes", "run-1", AssistantMessage(tool_calls=(CALL,)))
        await storage.append(
            "notes",
            "run-1",
            ToolMessage(
                tool_call_id=CALL.id,
                name=CALL.name,
                content=NOT_RUN_TOOL_TEXT,
                success=False,
                outcome=ToolOutcome.NOT_RUN,
            ),
        )
        await storage.append("notes", "run-1", AssistantMessage(content="I did not write them."))
        # The newest: the one the window opens, with the Resume button.
        await storage.create_session(session_id="story", title="A story", metadata=meta)
        await storage.append("story", "run-2", UserMessage(content="Tell me a story"))
        cut = StopInfo(
            StopReason.INTERRUPTED,
            raw="network_error",
            message="The connection to the provider broke before the answer finished.",
        )
        await storage.append(
            "story", "run-2", AssistantMessage(content="Once upon a time", stop=cut)
        )
    finally:
        await storage.close()


async def _export(window: Any, target: Path, fmt: str) -> str:
    _choose(window, target)
    _action, outcome, said = await _trigger(window, "export", _export_drive("all", fmt))
    assert outcome == Outcome.DONE, said
    _close_report(window)
    return await asyncio.to_thread(target.read_text, encoding="utf-8")


async def test_exports_say_what_the_window_says(tmp_path, provider_server):
    data = tmp_path / "data"
    await _seed(data)
    store = await _settings(data, provider_server)
    window = await open_window(data, settings_store=store)
    assert window.controller.current == "story"

    # Resume redoes the cut-off answer, in the window.
    provider_server.script(Turn(text="There was a quokka."))
    await until(lambda: window.resume_button.isVisible(), what="the Resume button")
    window.resume_button.click()
    rows = window.transcript.model()
    await until(
        lambda: [i.text for i in rows.items() if i.kind is ItemKind.ASSISTANT][-1:]
        == ["There was a quokka."]
        and not window.controller.is_running("story"),
        what="the resumed answer",
    )
    items = list(rows.items())
    views = window.transcript.views()
    notice = next(i for i in items if i.kind is ItemKind.NOTICE)
    caption = views[items.index(notice)].caption.text()
    earlier = next(i for i in items if i.kind is ItemKind.ASSISTANT and i.earlier)
    toggle = views[items.index(earlier)].attempt_toggle.text()
    assert caption and toggle == "Earlier attempt (cut off)"
    # The window's words for the tool that did not run.
    await window.controller.open_session("notes")
    await until(lambda: any(i.kind is ItemKind.TOOL for i in window.transcript.model().items()))
    rows = window.transcript.model()
    card = next(i for i in rows.items() if i.kind is ItemKind.TOOL)
    card_view = window.transcript.views()[list(rows.items()).index(card)]
    card_words = card_view.state_text(card.state)
    assert card_words == "did not run"

    for fmt, name in (("markdown", "all.md"), ("html", "all.html")):
        text = await _export(window, tmp_path / name, fmt)
        assert PROVIDER_ID not in text, fmt
        assert text.count("Model: loopback-echo (Home server)") == 2, fmt
        assert RETRY_NOTICE not in text and "Continuo:" not in text, fmt
        assert caption in text, fmt
        assert "Earlier attempt (cut off)" in text, fmt
        # The earlier attempt comes before the caption, the new answer after it.
        assert text.index("Once upon a time") < text.index(caption)
        assert text.index(caption) < text.index("There was a quokka.")
        assert "not_run" not in text and f"({card_words})" in text, fmt
    page = (tmp_path / "all.html").read_text(encoding="utf-8")
    assert '<details class="earlier"><summary>Earlier attempt (cut off)</summary>' in page

    # JSON keeps what it needs to be lossless: the id, the notice, the raw outcome.
    every = json.loads(await _export(window, tmp_path / "all.json", "json"))
    conversations = {c["id"]: c for c in every["conversations"]}
    assert conversations["story"]["metadata"]["provider_id"] == PROVIDER_ID
    bodies = [m["message"] for m in conversations["story"]["messages"]]
    assert any(b.get("content") == RETRY_NOTICE for b in bodies)
    outcomes = [m["message"].get("outcome") for m in conversations["notes"]["messages"]]
    assert "not_run" in outcomes
