"""A file an older version left with a conversation's path cut short opens whole, and the
window says what it restored.

The broken state is made with SQL as a killed older version left it: the conversation's
messages stored, its path emptied (an edit of the first question cut between its two writes),
and the lease row of the process that died. The real window opens the file: the conversation
shows all its messages again and the status bar says so, in English and in Chinese.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from engine.storage.lease import ProcessIdentity
from tests.support.wait import until
from tests.ui.conftest import open_window
from ui.common.i18n import install_translator
from ui.controller import DB_FILE_NAME
from ui.conversation.transcript import ItemKind

SENTENCES = {
    "en": "Restored the conversation “Capitals” to its newest messages (the app had stopped "
    "while changing it).",
    "zh_CN": "已将对话“Capitals”恢复到最新的消息（应用在修改它时停止了）。",
}


def _dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


async def _broken_file(data_dir: Path) -> Path:
    db = data_dir / DB_FILE_NAME
    storage = SQLiteSessionStorage(db)
    try:
        for message in (
            UserMessage(content="Capital of France?"),
            AssistantMessage(content="Paris."),
            UserMessage(content="And Italy?"),
            AssistantMessage(content="Rome."),
        ):
            await storage.append("s", "r", message)
        await storage.rename_session("s", "Capitals")
    finally:
        await storage.close()
    here = ProcessIdentity.current()
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE sessions SET active_seq = NULL WHERE id = 's'")
        raw.execute(
            "INSERT INTO leases (session_id, host, boot_id, pid, process_started, token, "
            "acquired_at, heartbeat_at) VALUES ('s', ?, ?, ?, NULL, 'killed', ?, ?)",
            (here.host, here.boot_id, _dead_pid(), time.time(), time.time()),
        )
    raw.close()
    return db


@pytest.mark.parametrize("language", ["en", "zh_CN"])
async def test_a_path_cut_short_is_mended_on_open_and_the_window_says_so(
    qapp, tmp_path, language
):
    await _broken_file(tmp_path)
    install_translator(qapp, language)
    try:
        window = await open_window(tmp_path)
        assert window.controller.current == "s"
        await until(
            lambda: window.statusBar().currentMessage() == SENTENCES[language],
            what=lambda: f"the sentence, not {window.statusBar().currentMessage()!r}",
        )
        items = window.transcript.model().items()
        shown = [i.text for i in items if i.kind in (ItemKind.USER, ItemKind.ASSISTANT)]
        assert shown == ["Capital of France?", "Paris.", "And Italy?", "Rome."]
    finally:
        install_translator(qapp, "en")
