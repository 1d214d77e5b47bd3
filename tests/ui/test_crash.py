"""A `kill -9` mid-answer: the app runs as a real subprocess (``python -m ui`` offscreen,
driven by its ``--smoke-script`` hook) against the loopback provider, is SIGKILLed while the
answer streams, and a new window on the same data shows what had streamed (the draft saved
while streaming), offers Resume and completes the answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from engine import (
    AssistantMessage,
    InternalMessage,
    ResumeKind,
    SQLiteSessionStorage,
    StopReason,
    UserMessage,
)
from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import app_env, open_window, read_until, seed_provider
from ui.controller import DB_FILE_NAME
from ui.conversation.transcript import ItemKind, ItemState

ROOT = Path(__file__).resolve().parents[2]
LONG = "Once upon a time, " + "".join(f"part {n} of the story. " for n in range(2000))


def draft_text(db: Path) -> str:
    """The text of the streaming draft in the file ("" without one), read as another process."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT body FROM drafts").fetchall()
    conn.close()
    return json.loads(rows[0][0])["content"] if rows else ""


async def test_sigkill_mid_answer_then_a_new_window_shows_it_and_resumes(tmp_path, provider_server):
    await seed_provider(tmp_path, provider_server)
    provider_server.script(Turn(text=LONG, chunk_size=8, delay=0.01))
    script = tmp_path / "crash.smoke"
    script.write_text("send Tell me a long story\nwait-shown part 40 of\nmark streaming\nhold\n")
    # Popen only starts the process; the reads below go through a thread.
    proc = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, "-m", "ui", "--data-dir", str(tmp_path), "--smoke-script", str(script)],
        cwd=ROOT,
        env=app_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    db = tmp_path / DB_FILE_NAME
    try:
        await read_until(proc, "streaming")
        # Killed once the text the window showed is saved (drafts are about a second apart).
        await until(lambda: "part 40 of" in draft_text(db), what="the streaming draft")
        saved = draft_text(db)
        os.kill(proc.pid, signal.SIGKILL)
        assert await asyncio.to_thread(proc.wait, 30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]

    # What the killed process left: the question, and the draft of the answer it streamed.
    storage = SQLiteSessionStorage(db)
    try:
        sessions = await storage.list_sessions()
        assert len(sessions) == 1
        history = await storage.load(sessions[0].id)
        draft = await storage.load_draft(sessions[0].id)
    finally:
        await storage.close()
    assert [type(m) for m in history] == [UserMessage]
    assert draft is not None and draft.message.content.startswith(saved)

    provider_server.script(Turn(text="Once upon a time, and this time to the end."))
    from ui.settings.store import SettingsStore

    window = await open_window(tmp_path, settings_store=SettingsStore(tmp_path, use_keychain=False))
    assert window.controller.current == sessions[0].id
    await until(lambda: window.resume_button.isVisible(), what="Resume after the crash")
    point = window.resume_bar.point
    assert point.kind is ResumeKind.RETRY_RESPONSE
    assert point.stop.raw == "app_stopped"
    assert window.resume_button.toolTip() == point.description
    # The answer that was streaming when the app was killed is on screen, shown as stopped.
    shown = [i for i in window.transcript.model().items() if i.kind is ItemKind.ASSISTANT]
    assert len(shown) == 1
    assert shown[0].state is ItemState.INTERRUPTED
    assert shown[0].text == draft.message.content and "part 40 of" in shown[0].text
    assert shown[0].key == draft.message.id
    window.resume_button.click()
    sid = sessions[0].id
    await until(
        lambda: not window.controller.is_running(sid) and not window.resume_button.isVisible()
    )
    rows = window.transcript.model().items()
    answers = [i for i in rows if i.kind is ItemKind.ASSISTANT]
    assert answers[-1].state is ItemState.DONE
    assert answers[-1].text == "Once upon a time, and this time to the end."
    assert [(a.key, a.state) for a in answers[:-1]] == [(draft.message.id, ItemState.INTERRUPTED)]
    await until(lambda: window.resume_label.isHidden())
    # The next holder of the lease stored the draft as the answer it was, exactly once.
    storage = SQLiteSessionStorage(db)
    try:
        history = await storage.load(sid)
        assert await storage.load_draft(sid) is None
    finally:
        await storage.close()
    assert [type(m) for m in history] == [
        UserMessage,
        AssistantMessage,
        InternalMessage,
        AssistantMessage,
    ]
    assert history[1] == draft.message and history[1].stop.reason is StopReason.INTERRUPTED
