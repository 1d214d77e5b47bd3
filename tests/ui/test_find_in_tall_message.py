"""Ctrl+F shows the match itself, not only its message (issue 20, item 2).

In a message taller than the view (a 60-line code block above the words), "1 of 1" used to
leave the match below the bottom edge: the view showed the message's top. And a match in the
folded part of a long code block was marked nowhere. Now the view scrolls to the match, and a
folded block holding it opens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from tests.support.wait import until
from tests.ui.conftest import open_window
from ui.common.markdown import FOLD_LINES
from ui.controller import DB_FILE_NAME

_CTRL = Qt.KeyboardModifier.ControlModifier
CODE = "\n".join(f"line_{n} = {n} * 2" for n in range(60))
BELOW = f"```python\n{CODE}\n```\n\nAnd that is how quokka habits are counted."
# the word sits on line 55 of 60: in the folded part (FOLD_LINES are shown until opened)
FOLDED = "```python\n" + CODE.replace("line_55 = 55", "zebrafish = 55") + "\n```\n\nThe end."


async def _window(data_dir: Path, answer: str) -> Any:
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="tall", title="Tall")
        await storage.append("tall", "seed", UserMessage(content="Show me the code"))
        await storage.append("tall", "seed", AssistantMessage(content=answer))
    finally:
        await storage.close()
    window = await open_window(data_dir)
    window.resize(900, 600)
    await until(lambda: len(window.transcript.message_views()) == 2, what="the messages")
    return window


async def _find(window: Any, word: str) -> Any:
    bar = window.find_bar
    window.composer.setFocus()
    QTest.keyClick(window.composer, Qt.Key.Key_F, _CTRL)
    QTest.keyClicks(bar.field, word)
    bar.flush()
    await until(lambda: bar.count.text() == "1 of 1", what=lambda: bar.count.text())
    await until(lambda: window.transcript.marked_view() is not None, what="the marked row")
    return window.transcript.marked_view()


def _match_on_screen(window: Any, view: Any, word: str) -> bool:
    text = view.message_text()
    found = text.document().find(word)
    if found.isNull():
        return False
    marked = [s.cursor.selectedText() for s in text.extraSelections()]
    if word not in marked:
        return False
    start = QTextCursor(found)
    start.setPosition(found.selectionStart())
    rect = text.cursorRect(start)
    top_left = text.viewport().mapTo(window.transcript.viewport(), rect.topLeft())
    shown = QRect(top_left, rect.size())
    return window.transcript.viewport().rect().contains(shown)


async def test_the_match_below_a_tall_code_block_is_scrolled_into_view(tmp_path: Path) -> None:
    window = await _window(tmp_path, BELOW)
    view = window.transcript.message_views()[-1]
    assert view.height() > window.transcript.viewport().height()  # taller than the view
    window.transcript.verticalScrollBar().setValue(0)  # the person reads from the top
    assert not _match_on_screen(window, view, "quokka")
    assert await _find(window, "quokka") is view
    await until(lambda: _match_on_screen(window, view, "quokka"), what="the match on screen")


async def test_a_match_in_a_folded_code_block_opens_the_block(tmp_path: Path) -> None:
    window = await _window(tmp_path, FOLDED)
    view = window.transcript.message_views()[-1]
    assert "zebrafish" not in view.body.toPlainText()  # folded away: line 55 > FOLD_LINES
    assert FOLD_LINES < 55
    assert await _find(window, "zebrafish") is view
    await until(lambda: "zebrafish" in view.body.toPlainText(), what="the block opened")
    await until(lambda: _match_on_screen(window, view, "zebrafish"), what="the match on screen")
