"""Search in the real window over a real SQLite file: the list's search finds message text (not
only titles), lists hits with a marked snippet, opens a hit deep in a long conversation with
its page loaded and scrolled to, switches to a hidden version; Ctrl+F finds in the open
conversation with next/previous. Each route is taken more than once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from tests.support.wait import until
from tests.ui.conftest import open_window
from ui.controller import DB_FILE_NAME
from ui.search.hits import HIDDEN_BRANCH_ROLE, MARKS_ROLE, SNIPPET_ROLE

_CTRL = Qt.KeyboardModifier.ControlModifier
_SHIFT = Qt.KeyboardModifier.ShiftModifier


async def _seed(data_dir: Path) -> None:
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="trip", title="Holiday plans")
        await storage.append("trip", "r", UserMessage(id="t1", content="Pack for Oslo"))
        await storage.append("trip", "r", AssistantMessage(id="t2", content="Bring a coat: the weather turns fast."))
        await storage.create_session(session_id="long", title="Long one")
        for i in range(400):  # the match is far above the last page
            content = "the weather in Kyoto, early on" if i == 3 else f"filler message {i}"
            cls = UserMessage if i % 2 == 0 else AssistantMessage
            await storage.append("long", "r", cls(id=f"l{i}", content=content))
        await storage.create_session(session_id="zh", title="中文")
        await storage.append("zh", "r", UserMessage(id="z1", content="今天北京的天气怎么样？"))
        # Two versions of an answer; the shown one does not hold the word.
        await storage.append("zh", "r", AssistantMessage(id="z2", content="Expect drizzle all day"))
        await storage.branch_from("zh", "z1")
        await storage.append("zh", "r", AssistantMessage(id="z3", content="晴天"))
    finally:
        await storage.close()


def _hits(window: Any) -> list[tuple[str, str, bool]]:
    model = window.search.hits
    return [
        (model.hit(r).message_id, model.index(r, 0).data(SNIPPET_ROLE), model.index(r, 0).data(HIDDEN_BRANCH_ROLE))
        for r in range(model.rowCount())
    ]


async def _search(window: Any, text: str) -> None:
    field = window.session_filter
    field.setFocus()
    field.clear()
    if text.isascii():
        QTest.keyClicks(field, text)
    else:  # QTest types ASCII only (it aborts on other keys): an input method's commit
        field.insert(text)
    await until(lambda: window.search.searched == text, what=f"the search for {text!r}")


def _in_viewport(window: Any, view: Any) -> bool:
    transcript = window.transcript
    top = view.mapTo(transcript.widget(), view.rect().topLeft()).y()
    scroll = transcript.verticalScrollBar().value()
    return scroll <= top + 10 and top < scroll + transcript.viewport().height()


async def test_the_list_search_finds_message_text_and_opens_the_hit(tmp_path: Path) -> None:
    await _seed(tmp_path)
    window = await open_window(tmp_path)
    c = window.controller
    for _round in range(2):
        await _search(window, "weather")
        hits = _hits(window)
        assert [h[0] for h in hits] == ["l3", "t2"]  # newest stored first
        assert window.search_results.isVisible() and window.search_label.isVisible()
        # No title holds "weather": the hits take the list's place.
        assert not window.session_list.isVisible()
        assert "found" in window.search_label.text()
        index = window.search.hits.index(1, 0)
        snippet, marks = index.data(SNIPPET_ROLE), index.data(MARKS_ROLE)
        assert [snippet[a:b] for a, b in marks] == ["weather"]
        assert "Holiday plans" in index.data(Qt.ItemDataRole.DisplayRole)
        # A click on the hit deep in the long conversation: its page is loaded, scrolled to, marked.
        rect = window.search_results.visualRect(window.search.hits.index(0, 0))
        QTest.mouseClick(window.search_results.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        await until(
            lambda: c.current == "long"
            and window.transcript.marked_view() is not None
            and "Kyoto" in window.transcript.marked_view().message_text().toPlainText()
        )
        view = window.transcript.marked_view()
        marks = view.message_text().extraSelections()
        assert [m.cursor.selectedText() for m in marks] == ["weather"]
        await until(lambda v=view: _in_viewport(window, v), what="the hit scrolled into view")
        assert c.transcript("long").first_seq <= 4
        # The keyboard's way: Down from the field into the hits, Down, Enter.
        window.session_filter.setFocus()
        QTest.keyClick(window.session_filter, Qt.Key.Key_Down)
        assert QApplication.focusWidget() is window.search_results
        assert window.search_results.currentIndex().row() == 0
        QTest.keyClick(window.search_results, Qt.Key.Key_Down)
        QTest.keyClick(window.search_results, Qt.Key.Key_Return)
        await until(
            lambda: c.current == "trip"
            and window.transcript.marked_view() is not None
            and "coat" in window.transcript.marked_view().message_text().toPlainText()
        )
        # Esc clears the field: the list is back, the hits are gone.
        QTest.keyClick(window.session_filter, Qt.Key.Key_Escape)
        assert window.session_list.isVisible() and not window.search_results.isVisible()


async def test_titles_still_filter_and_hidden_versions_are_said_and_switched_to(tmp_path: Path) -> None:
    await _seed(tmp_path)
    window = await open_window(tmp_path)
    c = window.controller
    await _search(window, "Holiday")  # a title: the list filters, no message holds it
    assert window.session_list.isVisible() and not window.search_results.isVisible()
    await _search(window, "天气")  # two characters of Chinese
    assert [h[0] for h in _hits(window)] == ["z1"]
    await _search(window, "drizzle")  # only on the version not shown
    assert _hits(window) == [("z2", "Expect drizzle all day", True)]
    assert "another version" in window.search.hits.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    window.search_results.choose_row(0)
    await until(lambda: c.current == "zh" and window.transcript.marked_view() is not None)
    assert [i.key for i in c.transcript("zh").items()] == ["z1", "z2"]  # switched to it
    assert (await c.storage.search_messages("drizzle"))[0].on_active_path
    # The list searched again: the hit no longer says it is on another version.
    await until(lambda: _hits(window) == [("z2", "Expect drizzle all day", False)])
    await _search(window, "no such words anywhere")
    assert window.session_list.isVisible() and window.search.hits.rowCount() == 0


async def test_ctrl_f_finds_in_the_open_conversation_with_next_and_previous(tmp_path: Path) -> None:
    await _seed(tmp_path)
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:  # three more hits in the long conversation, one far above the last page
        for i, text in enumerate(["weather again", "and weather once more"]):
            await storage.append("long", "r", UserMessage(id=f"w{i}", content=text))
    finally:
        await storage.close()
    window = await open_window(tmp_path)
    c = window.controller
    await c.open_session("long")
    bar = window.find_bar
    for _round in range(2):
        window.composer.setFocus()
        QTest.keyClick(window.composer, Qt.Key.Key_F, _CTRL)
        assert bar.isVisible() and QApplication.focusWidget() is bar.field
        bar.field.clear()
        QTest.keyClicks(bar.field, "weather")
        bar.flush()
        await until(lambda: bar.count.text() == "3 of 3", what=lambda: bar.count.text())
        await until(lambda: window.transcript.marked_view() is not None)
        assert "once more" in window.transcript.marked_view().message_text().toPlainText()
        QTest.keyClick(bar.field, Qt.Key.Key_Return, _SHIFT)  # previous
        await until(lambda: bar.count.text() == "2 of 3")
        QTest.keyClick(bar.field, Qt.Key.Key_F3, _SHIFT)
        await until(lambda: bar.count.text() == "1 of 3")
        await until(
            lambda: window.transcript.marked_view() is not None
            and "Kyoto" in window.transcript.marked_view().message_text().toPlainText()
        )
        view = window.transcript.marked_view()
        await until(lambda v=view: _in_viewport(window, v), what="the first hit scrolled into view")
        QTest.keyClick(bar.field, Qt.Key.Key_Return)  # next, round the end
        await until(lambda: bar.count.text() == "2 of 3")
        bar.next_button.click()
        await until(lambda: bar.count.text() == "3 of 3")
        bar.next_button.click()
        await until(lambda: bar.count.text() == "1 of 3")
        QTest.keyClick(bar.field, Qt.Key.Key_Escape)  # closes; the marks go
        assert not bar.isVisible() and window.transcript.marked_view() is None
    # Nothing found is said; another conversation is searched when it is shown.
    QTest.keyClick(window.composer, Qt.Key.Key_F, _CTRL)
    bar.field.clear()
    QTest.keyClicks(bar.field, "Oslo")
    bar.flush()
    await until(lambda: bar.count.text() == "No matches")
    await c.open_session("trip")
    await until(lambda: bar.count.text() == "1 of 1")
    bar.close_button.click()
    assert not bar.isVisible()


async def test_an_older_file_is_indexed_at_start_and_the_window_says_so(tmp_path: Path) -> None:
    import sqlite3

    dump = Path(__file__).parents[1] / "engine" / "storage_helpers" / "schema_v4.sql"
    with sqlite3.connect(tmp_path / DB_FILE_NAME) as raw:
        raw.executescript(dump.read_text(encoding="utf-8"))
        raw.executemany(
            "INSERT INTO messages VALUES ('chat-1', ?, 'r', ?, 'user', 0.0, ?, ?)",
            [
                (8 + i, f"x{i}", f'{{"v":1,"type":"user","id":"x{i}","created_at":0.0,'
                 f'"content":"old note {i}"}}', 7 + i)
                for i in range(12_000)
            ],
        )
    raw.close()
    said: list[str] = []
    from ui.app import build_window

    window = build_window(tmp_path, first_run_dialog=False)
    window.statusBar().messageChanged.connect(said.append)
    from tests.ui.conftest import _OPEN_WINDOWS

    _OPEN_WINDOWS.append(window)
    window.show()
    await window.started()
    await until(lambda: "The conversations can now be searched." in said, what=lambda: str(said))
    assert any("Preparing the conversations for search" in s for s in said)
    await _search(window, "old note 11999")
    assert [h[0] for h in _hits(window)] == ["x11999"]


async def test_a_hit_far_up_opens_as_one_page_and_a_send_goes_under_the_latest(
    tmp_path: Path,
) -> None:
    """A hit 2,000 messages up loads one page around it (not 2,000 rows); "show the latest"
    and a message sent from there both bring the end of the conversation back."""
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="far", title="Far")
        for i in range(2000):
            content = "the lighthouse keeper" if i == 10 else f"line {i}"
            cls = UserMessage if i % 2 == 0 else AssistantMessage
            await storage.append("far", "r", cls(id=f"f{i}", content=content))
    finally:
        await storage.close()
    window = await open_window(tmp_path)
    c = window.controller
    for _round in range(2):
        await _search(window, "lighthouse")
        window.search_results.choose_row(0)
        await until(
            lambda: c.current == "far"
            and window.transcript.marked_view() is not None
            and "lighthouse" in window.transcript.marked_view().message_text().toPlainText()
        )
        model = c.transcript("far")
        assert model.newer and model.rowCount() <= 60
        keys = [i.key for i in model.items()]
        assert keys.index("f10") == len(keys) - 20  # the hit, with 19 messages under it
        assert window.search.latest_button.isVisible()
        view = window.transcript.marked_view()
        await until(lambda v=view: _in_viewport(window, v), what="the hit scrolled into view")
        if _round == 0:
            window.search.latest_button.click()
            await until(lambda m=model: not m.newer and m.items()[-1].key == "f1999")
            assert not window.search.latest_button.isVisible()
    # Sending from the page around the hit: the answer goes under the latest message.
    window.session_filter.clear()
    window.composer.setPlainText("And now?")
    window.send_button.click()
    await until(lambda: not model.newer and any(i.text == "And now?" for i in model.items()))
    keys = [i.key for i in model.items()]
    assert keys.index("f1999") < len(keys) - 1


def test_the_hits_model_passes_the_model_tester_and_its_tooltips_are_text(qtmodeltester) -> None:
    from engine.storage.search import SearchHit
    from ui.search.hits import SearchHitsModel

    hostile = SearchHit(
        "s", 2, "m", "tool", 0.0, '<img src="/dev/zero" width=900> & <b>bold</b>', ((0, 4),), False
    )
    plain = SearchHit("s", 1, "q", "user", 0.0, "plain words", ((0, 5),), True)
    model = SearchHitsModel(lambda sid: "<i>Title</i>")
    model.set_hits("img", [hostile, plain])
    qtmodeltester.check(model)
    tip = model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("<qt>") and "<img" not in tip and "&lt;img" in tip
    assert "&lt;i&gt;Title" in tip and "another version" in tip
    other = model.index(1, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "plain words" in other and "<i>" not in other  # the title's tag is text too
    model.clear()
    qtmodeltester.check(model)


async def test_a_search_the_file_refuses_is_said_in_a_sentence(tmp_path: Path) -> None:
    import sqlite3

    await _seed(tmp_path)
    window = await open_window(tmp_path)
    bar = window.statusBar()
    with sqlite3.connect(tmp_path / DB_FILE_NAME) as raw:  # the index is gone: queries fail
        raw.execute("DROP TABLE message_index")
    raw.close()

    def said() -> str:
        return bar.currentMessage()

    for query in ("weather", "weather again"):  # twice: each failure is said
        bar.clearMessage()
        window.session_filter.clear()
        QTest.keyClicks(window.session_filter, query)
        window.search.flush()
        await until(lambda: "conversation file" in said(), what=said)
        assert window.search.hits.rowCount() == 0 and window.session_list.isVisible()
    await window.controller.open_session("trip")
    window.search.open_find()
    bar.clearMessage()
    window.find_bar.field.setText("coat")
    window.find_bar.flush()
    await until(lambda: "conversation file" in said(), what=said)


async def test_an_unbalanced_quote_searches_and_a_pasted_megabyte_is_cut_and_said(
    tmp_path: Path,
) -> None:
    """Typing `"hello` (the closing quote not yet typed) lists what holds it, with no word of
    the disk; a pasted megabyte is cut to the characters a query holds, and the window says
    so, in the list's search and in Ctrl+F's find."""
    from engine.storage.search import MAX_QUERY_CHARS as ENGINE_LIMIT
    from ui.search.window_search import MAX_QUERY_CHARS

    assert MAX_QUERY_CHARS == ENGINE_LIMIT == 1000
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="q", title="Quotes")
        await storage.append("q", "r", UserMessage(id="q1", content='She said "hello there'))
        await storage.append("q", "r", AssistantMessage(id="q2", content="x" * 1200))
    finally:
        await storage.close()
    window = await open_window(tmp_path)
    bar = window.statusBar()
    for _round in range(2):
        bar.clearMessage()
        await _search(window, '"hello')
        assert [h[0] for h in _hits(window)] == ["q1"]
        assert "disk" not in bar.currentMessage() and "file" not in bar.currentMessage()
        # A megabyte pasted: the field holds the first 1,000 characters, which are searched.
        window.session_filter.clear()
        QApplication.clipboard().setText("x" * 1_000_000)
        window.session_filter.paste()
        await until(lambda: window.search.searched == "x" * 1000, what="the cut query searched")
        assert len(window.session_filter.text()) == 1000
        assert [h[0] for h in _hits(window)] == ["q2"]
        assert "first 1,000 characters" in bar.currentMessage()
    await window.controller.open_session("q")
    window.search.open_find()
    bar.clearMessage()
    window.find_bar.field.setText('"hello')
    window.find_bar.flush()
    await until(lambda: [h.message_id for h in window.search.found] == ["q1"], what="find")
    window.find_bar.field.clear()
    window.find_bar.field.paste()
    assert len(window.find_bar.field.text()) == 1000
    assert "first 1,000 characters" in bar.currentMessage()
    window.find_bar.flush()
    await until(lambda: [h.message_id for h in window.search.found] == ["q2"], what="find cut")
