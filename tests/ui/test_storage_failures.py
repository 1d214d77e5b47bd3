"""A conversation file that cannot be used is said in the window, by name, until it works.

Every failure is real: a damaged file, a file from a newer schema, a read-only folder (the
app run as ``nobody`` over it, as a person without write access would run it: tests run as
root, whose writes file modes do not stop) and a full disk (a real 1 MB tmpfs when the tests
may mount one, else SQLite's own page limit on the live connection — the same SQLITE_FULL in
the same write path). The helpers are those of the engine's refusal tests.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from tests.engine.test_storage_refusals import (  # noqa: F401 (a fixture)
    AS_ROOT,
    NOBODY,
    disk_filled,
    good_database,
    small_tmpfs,
    workspace,
)
from tests.support.unprivileged import DROP, reachable_by_nobody
from tests.support.wait import until
from tests.ui.conftest import app_env, open_window, seed_provider
from ui.controller import DB_FILE_NAME
from ui.conversation.sessions import SESSION_ID_ROLE

ROOT = Path(__file__).resolve().parents[2]


def _notice_text(window: Any) -> str:
    notice = window.storage_notice
    return " ".join(
        label.text()
        for label in (notice.title, notice.message, notice.advice, notice.file)
        if label.isVisibleTo(notice)
    )


async def test_a_damaged_file_at_start_shows_a_page_naming_it(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE_NAME
    path.write_bytes(b"this is not a database, it is a damaged file " * 200)
    window = await open_window(tmp_path)
    await until(lambda: window.storage_notice.isVisible(), what="the storage notice")
    assert window.storage_notice.is_page and not window.transcript.isVisible()
    text = _notice_text(window)
    assert str(path) in text and "damaged" in text
    assert "backup" in text and "move it aside" in text
    assert window.statusBar().currentMessage() == ""  # not a line that goes away
    # Moving the damaged file aside and pressing Try again brings the (empty) list back.
    path.rename(tmp_path / "damaged.sqlite3")
    window.storage_notice.retry_button.click()
    await until(lambda: not window.storage_notice.isVisible(), what="the notice to go")
    assert window.transcript.isVisible()


async def test_a_file_from_a_newer_continuo_says_update_not_damaged(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE_NAME
    storage = SQLiteSessionStorage(path)
    await storage.append("s", "r", UserMessage(content="kept"))
    await storage.close()
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version = 999")
    raw.close()
    window = await open_window(tmp_path)
    await until(lambda: window.storage_notice.isVisible(), what="the storage notice")
    text = _notice_text(window)
    assert "newer Continuo" in text and str(path) in text
    assert "damaged" not in text and "backup" not in text


async def test_a_read_only_folder_at_start_is_said_as_such_by_the_real_app(
    workspace: Path,  # noqa: F811
) -> None:
    folder = workspace / "data"
    folder.mkdir()
    path = folder / DB_FILE_NAME
    await good_database(path)
    if AS_ROOT:
        os.chown(folder, NOBODY, NOBODY)
    os.chmod(folder, 0o555)
    script = workspace / "notice.smoke"
    script.write_text("wait-visible storageNotice\nquit 0\n", encoding="utf-8")
    home = workspace / "home"
    home.mkdir()
    if AS_ROOT:
        os.chown(home, NOBODY, NOBODY)
    with reachable_by_nobody():  # a fresh clone may sit in a folder only root may enter
        done = await asyncio.to_thread(
            subprocess.run,
            [
                *DROP,
                sys.executable,
                "-m",
                "ui",
                "--data-dir",
                str(folder),
                "--smoke-script",
                str(script),
            ],
            cwd=ROOT,
            env=app_env(HOME=str(home), XDG_RUNTIME_DIR=str(home), PYTHONPATH=str(ROOT)),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("SMOKE visible")]
    assert "read-only" in line and str(folder) in line
    assert "permissions" in line  # the window's words for CHECK_FOLDER
    assert "damaged" not in line and "backup" not in line


async def test_a_full_disk_keeps_the_typed_message_and_says_the_disk_is_full(
    tmp_path: Path, provider_server: Any
) -> None:
    with small_tmpfs(tmp_path / "disk") as mounted:
        data = tmp_path / "disk" / "data"
        store = await seed_provider(data, provider_server)
        storage = SQLiteSessionStorage(data / DB_FILE_NAME)
        await storage.append("s", "r", UserMessage(content="before the disk filled"))
        await storage.append("s", "r", AssistantMessage(content="an answer"))
        await storage.close()
        window = await open_window(data, settings_store=store)
        await until(lambda: window.transcript.model() is not None, what="the conversation")
        free = await disk_filled(window.controller.storage, mounted)
        typed = "Please keep this message. " + "words " * 15_000  # more than the disk has
        window.composer.setPlainText(typed)
        window.send_button.click()
        await until(lambda: window.error_banner.isVisible(), what="the error banner")
        banner = window.error_banner.toolTip()
        assert "is full" in banner and "Free some disk space, then press Send again." in banner
        assert "still in the box below" in banner and "Resume" not in banner
        assert window.composer.toPlainText() == typed
        assert window.commands.sending == "", window.commands.sending[:40]
        # Space freed, Send again: the same text is stored and the composer lets it go.
        await free()
        from tests.support.provider_server import Turn

        provider_server.script(Turn(text="Stored at last."))
        window.send_button.click()
        await until(lambda: window.composer.toPlainText() == "", what="the composer to empty")
        sid = window.controller.current
        await until(lambda: not window.controller.is_running(sid), what="the answer")
        texts = [m.content for m in await window.controller.storage.load(sid)]
        assert typed.strip() in texts
        assert not window.error_banner.isVisible()
        from tests.ui.conftest import close_window

        await close_window(window)


async def test_an_unreadable_conversation_is_listed_as_such_and_opening_it_says_so(
    tmp_path: Path,
) -> None:
    path = tmp_path / DB_FILE_NAME
    storage = SQLiteSessionStorage(path)
    await storage.create_session(session_id="good", title="Good one")
    await storage.append("good", "r", UserMessage(content="fine"))
    await storage.create_session(session_id="row", title="Damaged row")
    await storage.append("row", "r", UserMessage(content="still readable"))
    await storage.create_session(session_id="msg", title="Damaged message")
    await storage.append("msg", "r", UserMessage(content="will be damaged"))
    await storage.close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE sessions SET metadata = '<img src=x>{' WHERE id = 'row'")
    raw.execute("UPDATE messages SET body = 'not json' WHERE session_id = 'msg'")
    raw.commit()
    raw.close()
    window = await open_window(tmp_path)
    sessions = window.controller.sessions
    row = sessions.index(sessions.row_of("row"), 0)
    assert row.data() == "Damaged row (unreadable)"
    tooltip = row.data(0x03)  # ToolTipRole
    assert "its settings (metadata) could not be read" in tooltip
    assert row.data(0x09) is not None  # ForegroundRole: greyed
    good = sessions.index(sessions.row_of("good"), 0)
    assert good.data() == "Good one" and good.data(0x09) is None

    # Opening the conversation whose row is damaged shows its messages and says why.
    await window.controller.open_session("row")
    await until(lambda: window.error_banner.isVisible(), what="the notice")
    assert "damaged" in window.error_banner.toolTip()
    assert [i.text for i in window.transcript.model().items()] == ["still readable"]

    # Opening the one whose message is damaged says so, instead of a failed task.
    await window.controller.open_session("msg")
    assert window.controller.current == "msg"
    await until(lambda: "damaged" in window.error_banner.toolTip(), what="the notice")
    assert "msg" in window.error_banner.toolTip()
    assert window.transcript.model().rowCount() == 0
    assert window.statusBar().currentMessage() == ""
    assert [window.filter_model.index(r, 0).data(SESSION_ID_ROLE) for r in range(3)]
