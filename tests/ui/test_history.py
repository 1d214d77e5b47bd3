"""Long conversations load page by page: older history loads by itself while it does not fill
the view, and otherwise when the person scrolls to the top — one page per request, never the
same page twice, with the person's place kept.

Each test seeds a real SQLite file with 150 messages in one conversation and opens the real
window over it, in a tall window (a portrait screen) where one page of short messages leaves
nothing to scroll, or at the default size and then made that tall.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from tests.support.wait import until
from tests.ui.conftest import _OPEN_WINDOWS, drain, open_window
from ui.app import build_window
from ui.controller import DB_FILE_NAME, PAGE_SIZE

MESSAGES = 150
TALL = (900, 7000)  #: a window taller than one page of one-line messages (with their action lines)

_LONG = (
    "This answer is long on purpose: every message in this conversation fills several lines "
    "of the transcript, so that one page of sixty of them is far taller than the window and "
    "the view can scroll from the first page on. "
)


def _texts(count: int, long: bool) -> list[str]:
    return [f"message {n}" + (": " + _LONG * 3 if long else "") for n in range(count)]


async def _seed(data_dir: Path, texts: list[str]) -> None:
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="long", title="A long conversation")
        for n, text in enumerate(texts):
            message: Any = (
                UserMessage(content=text) if n % 2 == 0 else AssistantMessage(content=text)
            )
            await storage.append("long", "seed", message)
    finally:
        await storage.close()


async def _open_tall(data_dir: Path) -> Any:
    window = build_window(data_dir, first_run_dialog=False)
    _OPEN_WINDOWS.append(window)  # closed, store and all, at teardown
    window.resize(*TALL)
    window.show()
    await window.started()
    return window


def _shown(window: Any) -> list[str]:
    return [item.text for item in window.transcript.model().items()]


def _settled(window: Any) -> bool:
    """Nothing on its way and the layout done: the view can scroll, or all history is in."""
    view = window.transcript
    model = view.model()
    bar = view.verticalScrollBar()
    return (
        model is not None
        and not view.older_pending()
        and (bar.maximum() > 0 or not model.has_more)
        and len(view.views()) == model.rowCount()
    )


async def test_short_messages_load_older_pages_until_the_view_can_scroll(
    tmp_path: Path,
) -> None:
    texts = _texts(MESSAGES, long=False)
    await _seed(tmp_path, texts)
    window = await _open_tall(tmp_path)
    view = window.transcript
    await until(lambda: len(_shown(window)) > PAGE_SIZE and _settled(window), what="older pages")
    await drain()
    await until(lambda: _settled(window))

    shown = _shown(window)
    bar = view.verticalScrollBar()
    assert bar.maximum() > 0, "the view can scroll now, so the person can ask for more"
    # Each request brought one new page: the latest messages in order, none twice.
    assert view.older_requests >= 1
    assert len(shown) == min(MESSAGES, PAGE_SIZE * (1 + view.older_requests))
    assert shown == texts[-len(shown) :]
    # The person's place is the end of the conversation: the view stayed at the bottom.
    assert bar.value() == bar.maximum()


async def test_long_messages_load_one_page_until_the_person_scrolls_to_the_top(
    tmp_path: Path,
) -> None:
    texts = _texts(MESSAGES, long=True)
    await _seed(tmp_path, texts)
    window = await _open_tall(tmp_path)
    view = window.transcript
    bar = view.verticalScrollBar()
    await until(lambda: _settled(window) and bar.value() == bar.maximum(), what="first page")
    await drain()
    assert _settled(window)
    assert view.older_requests == 0
    assert _shown(window) == texts[-PAGE_SIZE:]

    # The person scrolls to the top, away and back again before the page arrives: one request.
    first = view.views()[0]
    bar.setValue(0)
    bar.setValue(bar.singleStep())
    bar.setValue(0)
    assert view.older_requests == 1 and view.older_pending()
    top = first.mapTo(view.viewport(), QPoint(0, 0)).y()
    await until(lambda: len(_shown(window)) == 2 * PAGE_SIZE, what="the second page")
    await until(lambda: _settled(window))
    await drain()

    assert _shown(window) == texts[-2 * PAGE_SIZE :]
    assert view.older_requests == 1, "the second page fills the view: nothing more is asked"
    # What the person was reading stays where it was, under the page that arrived above it.
    assert first.mapTo(view.viewport(), QPoint(0, 0)).y() == top
    assert bar.value() > 0

    # Scrolling to the top again asks for the last 30 messages, and that is all of them.
    bar.setValue(0)
    await until(lambda: len(_shown(window)) == MESSAGES, what="the last page")
    await until(lambda: _settled(window))
    assert _shown(window) == texts
    assert view.older_requests == 2
    assert not view.model().has_more


async def test_a_window_made_taller_loads_the_older_pages_that_now_fit(tmp_path: Path) -> None:
    texts = _texts(MESSAGES, long=False)
    await _seed(tmp_path, texts)
    window = await open_window(tmp_path)  # the default size: one page fills it
    view = window.transcript
    bar = view.verticalScrollBar()
    await until(lambda: _settled(window) and bar.value() == bar.maximum(), what="first page")
    await drain()
    assert view.older_requests == 0 and len(_shown(window)) == PAGE_SIZE

    window.resize(*TALL)  # the person drags the window taller than the page
    await until(lambda: len(_shown(window)) > PAGE_SIZE and _settled(window), what="more")
    assert _shown(window) == texts[-len(_shown(window)) :]
    assert bar.maximum() > 0 and bar.value() == bar.maximum()


async def test_two_loads_of_the_same_older_page_put_it_in_front_once(tmp_path: Path) -> None:
    texts = _texts(MESSAGES, long=True)
    await _seed(tmp_path, texts)
    window = await open_window(tmp_path)  # the default size: one page of long messages
    await until(lambda: _settled(window), what="the first page shown")
    controller = window.controller
    shown = _shown(window)
    # Two requests for the page before it, in flight at once (a reopening and a scroll).
    added = await asyncio.gather(controller.load_older(), controller.load_older())
    assert sorted(added) == [0, PAGE_SIZE]
    now = _shown(window)
    assert now == texts[len(texts) - len(shown) - PAGE_SIZE :]
    assert len(now) == len(set(now))
