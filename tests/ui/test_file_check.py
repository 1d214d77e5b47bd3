"""The conversation file's full check in the window: after the list, never before it.

Real files and real processes, as in the engine's tests (tests/engine/test_integrity.py):
an unclean exit is a child appending to the data folder's file killed with SIGKILL, and the
damage is noise written over pages far from what the list reads. The check is held in its
thread (its ``pause`` hook) to see what the window shows while it runs.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_integrity import damage_far_pages, fold_wal, written_file
from tests.engine.test_storage_crash import kill_while_appending
from tests.support.wait import until
from tests.ui.conftest import open_window
from ui.controller import DB_FILE_NAME

pytestmark = pytest.mark.timeout(90)


def _notice_text(window: Any) -> str:
    notice = window.storage_notice
    return " ".join(
        label.text()
        for label in (notice.title, notice.message, notice.advice, notice.file)
        if label.isVisibleTo(notice)
    )


def _starts(window: Any) -> list[bool]:
    """Each check the window runs from now on: whether the person asked for it."""
    seen: list[bool] = []
    window.controller.file_check.started.connect(seen.append)
    return seen


async def _after_start_done(window: Any) -> None:
    """Wait for the start-up's check task (it may decide there is nothing to check)."""
    tasks = [t for t in window.controller.tasks if t.get_name() == "file check"]
    await asyncio.gather(*tasks)


async def test_after_an_unclean_exit_the_list_comes_first_then_the_damage(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE_NAME
    await written_file(path)
    await kill_while_appending(path, "appending", after=3)  # the app killed mid-answer
    fold_wal(path)
    damage_far_pages(path)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        held.set()
        release.wait(60)

    def prepare(window: Any) -> None:
        window.controller.file_check.pause = hold

    try:
        window = await open_window(tmp_path, prepare=prepare)
        await until(held.is_set, what="the check to begin")
        # The check runs and cannot end: the list is there, and nothing is said yet.
        assert window.controller.file_check.running
        assert window.session_list.model().rowCount() == 3
        assert window.session_list.isVisible() and not window.storage_notice.isVisible()
        assert window.composer.isEnabled()
    finally:
        release.set()
    await until(lambda: window.storage_notice.isVisible(), what="the damage to be told")
    text = _notice_text(window)
    assert "damaged" in text and str(path) in text and "backup" in text
    # A banner above the conversation, not a page: the list and the transcript stay.
    assert not window.storage_notice.is_page and window.transcript.isVisible()
    assert window.storage_notice.restore_button.isVisible()
    assert window.session_list.model().rowCount() == 3
    # Try again reads the file once more: still damaged, still said.
    starts = _starts(window)
    window.storage_notice.retry_button.click()
    await until(lambda: starts == [True], what="a second check")
    await until(lambda: not window.controller.file_check.running, what="the check to end")
    assert window.storage_notice.isVisible() and "damaged" in _notice_text(window)


async def test_a_clean_start_checks_nothing_until_asked(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE_NAME
    await written_file(path)  # closed cleanly
    damage_far_pages(path)  # damage no start-up read would meet
    starts: list[bool] = []

    def prepare(window: Any) -> None:
        window.controller.file_check.started.connect(starts.append)

    window = await open_window(tmp_path, prepare=prepare)
    await _after_start_done(window)
    assert starts == [] and not window.storage_notice.isVisible()
    assert window.session_list.model().rowCount() == 2
    # Help › Check the conversation file reads every page, and finds it.
    assert window.menus.check_file_action in window.menus.help_menu.actions()
    window.menus.check_file_action.trigger()
    await until(lambda: window.storage_notice.isVisible(), what="the damage to be told")
    assert starts == [True] and "damaged" in _notice_text(window)
    assert window.statusBar().currentMessage() == ""  # the notice says it, not a passing line


async def test_asked_on_a_sound_file_it_says_so(tmp_path: Path) -> None:
    await written_file(tmp_path / DB_FILE_NAME, messages=20)
    window = await open_window(tmp_path)
    window.menus.check_file_action.trigger()
    await until(
        lambda: "no damage found" in window.statusBar().currentMessage(),
        what="the check's result",
    )
    assert not window.storage_notice.isVisible()
