"""A `kill -9` mid-answer: the app runs as a real subprocess (``python -m ui`` offscreen,
driven by its ``--smoke-script`` hook) against the loopback provider, is SIGKILLed while the
answer streams, and a new window on the same data offers Resume and completes the answer.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from engine import ResumeKind, SQLiteSessionStorage, UserMessage
from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import app_env, open_window, read_until, seed_provider
from ui.controller import DB_FILE_NAME
from ui.models.transcript import ItemKind, ItemState

ROOT = Path(__file__).resolve().parents[2]
LONG = "Once upon a time, " + "the answer went on and on. " * 200


async def test_sigkill_mid_answer_then_a_new_window_resumes(tmp_path, provider_server):
    await seed_provider(tmp_path, provider_server)
    provider_server.script(Turn(text=LONG, chunk_size=4, delay=0.02))
    script = tmp_path / "crash.smoke"
    script.write_text("send Tell me a long story\nwait-shown Once upon\nmark streaming\nhold\n")
    # Popen only starts the process; the reads below go through a thread.
    proc = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, "-m", "ui", "--data-dir", str(tmp_path), "--smoke-script", str(script)],
        cwd=ROOT,
        env=app_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        await read_until(proc, "streaming")
        os.kill(proc.pid, signal.SIGKILL)
        assert await asyncio.to_thread(proc.wait, 30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]

    # What the killed process left: the question, and no answer (only the unfinished step is lost).
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:
        sessions = await storage.list_sessions()
        assert len(sessions) == 1
        history = await storage.load(sessions[0].id)
    finally:
        await storage.close()
    assert [type(m) for m in history] == [UserMessage]

    provider_server.script(Turn(text="Once upon a time, and this time to the end."))
    from ui.settings import SettingsStore

    window = await open_window(tmp_path, settings_store=SettingsStore(tmp_path, use_keychain=False))
    assert window.controller.current == sessions[0].id
    await until(lambda: window.resume_button.isVisible(), what="Resume after the crash")
    point = window._current_point
    assert point.kind is ResumeKind.CALL_MODEL
    assert window.resume_button.toolTip() == point.description
    window.resume_button.click()
    sid = sessions[0].id
    await until(
        lambda: not window.controller.is_running(sid) and not window.resume_button.isVisible()
    )
    rows = window.transcript.model().items()
    answers = [i for i in rows if i.kind is ItemKind.ASSISTANT]
    assert answers[-1].state is ItemState.DONE
    assert answers[-1].text == "Once upon a time, and this time to the end."
    await until(lambda: window.resume_label.isHidden())
