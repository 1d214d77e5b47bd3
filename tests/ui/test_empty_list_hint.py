"""The first start's empty conversation list says what will appear there and how to start
(issue 20, item 13): it showed a blank list. The hint waits for the list to be read, gives
way to "No matches" while a filter is typed and to the rows once there are any, and is not
shown when the conversation file cannot be read. On the real window over a real SQLite file."""

from __future__ import annotations

from typing import Any

from tests.support.wait import until
from tests.ui.conftest import open_window
from ui.controller import DB_FILE_NAME


def _hint(window: Any) -> str:
    label = window.session_list.empty_label
    return label.text() if label.isVisibleTo(window) else ""


async def test_the_first_starts_empty_list_says_how_to_start(tmp_path) -> None:
    before: list[str] = []
    window = await open_window(tmp_path, prepare=lambda w: before.append(_hint(w)))
    assert before == [""]  # nothing said before the list is read
    await until(lambda: _hint(window), what="the hint")
    assert _hint(window).startswith("Your conversations will appear here")
    assert "Ctrl+N" in _hint(window)
    label = window.session_list.empty_label
    assert label.wordWrap() and label.height() >= label.heightForWidth(label.width())
    assert window.session_list.accessibleDescription() == _hint(window)

    window.session_filter.setText("quokka")
    assert _hint(window) == "No matches"
    window.session_filter.clear()
    assert _hint(window).startswith("Your conversations will appear here")

    window.new_chat_button.click()
    await until(lambda: window.controller.sessions.rowCount() == 1, what="the new chat")
    assert _hint(window) == ""
    await window.controller.delete_session(window.controller.current)
    assert _hint(window).startswith("Your conversations will appear here")


async def test_no_hint_when_the_file_cannot_be_read(tmp_path) -> None:
    (tmp_path / DB_FILE_NAME).write_bytes(b"this is not a database, it is a damaged file " * 200)
    window = await open_window(tmp_path)
    assert window.storage_notice.is_page
    assert _hint(window) == ""
