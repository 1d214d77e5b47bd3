"""A search hit's first line at the list's width (issue 20, item 3), in the real window over a
real SQLite file: the title elides, never the date or "(on another version)"; the date is in
the person's locale's format, never the bare "C" locale's "3 12 2026".

Before, the title, the date and the note were one string elided at the right: at the
default sidebar width a hit read "Explain quokka habits · 12/3/2…" and the note was gone.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QDate, QDateTime, QLocale
from PySide6.QtGui import QFont, QFontMetrics

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from tests.support.wait import until
from tests.ui.conftest import open_window
from ui.controller import DB_FILE_NAME
from ui.search.results import _PAD

TITLE = "Explain quokka habits in the wild, at night and in captivity"
WHEN = QDateTime(QDate(2026, 12, 3), QDateTime.currentDateTime().time()).toSecsSinceEpoch()


@pytest.fixture
def c_locale() -> Iterator[None]:
    """Qt's default locale left as the bare "C" one, as `make screenshots` had it."""
    before = QLocale()
    QLocale.setDefault(QLocale.c())
    yield
    QLocale.setDefault(before)


async def _seed(data_dir: Path) -> None:
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="q", title=TITLE)
        ask = UserMessage(id="u", content="Where do quokkas sleep?", created_at=WHEN)
        await storage.append("q", "r", ask)
        # The only answer that holds the word is on the version not shown.
        await storage.append(
            "q", "r", AssistantMessage(id="a1", content="Quokka burrows are rare.", created_at=WHEN)
        )
        await storage.branch_from("q", "u")
        await storage.append("q", "r", AssistantMessage(id="a2", content="In thickets.", created_at=WHEN))
    finally:
        await storage.close()


def _expected_date() -> str:
    system = QLocale.system()
    locale = (
        system
        if system.language() != QLocale.Language.C
        else QLocale(QLocale.Language.English, QLocale.Country.UnitedStates)
    )
    return locale.toString(QDate(2026, 12, 3), QLocale.FormatType.ShortFormat)


def _heads(window: Any) -> list[tuple[str, str, str, int, int]]:
    """Each hit's first line as the list draws it: (title, what follows it, the second line,
    the width the first line takes, the width there is)."""
    view = window.search_results
    delegate = view.itemDelegate()
    font = view.font()
    bold = QFont(font)
    bold.setBold(True)
    heads = []
    for row in range(view.model().rowCount()):
        index = view.model().index(row, 0)
        width = view.visualRect(index).width() - 2 * _PAD
        title, tail, second = delegate.head(font, width, index)
        used = QFontMetrics(bold).horizontalAdvance(title) + QFontMetrics(font).horizontalAdvance(tail)
        heads.append((title, tail, second, used, width))
    return heads


async def _search(window: Any, text: str) -> None:
    window.session_filter.setText(text)
    window.search.flush()
    await until(lambda: window.search.searched == text, what=f"the search for {text!r}")
    await until(window.search_results.isVisible, what="the hits listed")


async def test_the_title_elides_never_the_date_or_the_note(tmp_path: Path, c_locale: None) -> None:
    await _seed(tmp_path)
    window = await open_window(tmp_path)
    await _search(window, "quokka")
    note = "(on another version)"
    date = _expected_date()
    assert date != "3 12 2026"
    # The model's one-line text says the date in that format (before: the "C" locale's).
    assert all(
        window.search.hits.index(r, 0).data().endswith(f" · {date}")
        for r in range(window.search.hits.rowCount())
    )

    # At the default sidebar width: the title gives way, the date and the note are whole;
    # the note on the second line rather than leave a title of a few letters.
    heads = _heads(window)
    assert all(h[1].startswith(f" · {date}") for h in heads), heads
    with_note = [h for h in heads if note in h[1] + h[2]]
    assert len(with_note) == 1 and note in (with_note[0][1].removeprefix(f" · {date} "), with_note[0][2])
    for title, _tail, _second, used, width in heads:
        assert title.endswith("…") and TITLE.startswith(title[:-1]) and used <= width
        assert len(title) > 10, title  # enough of it to tell conversations apart

    # Wide: the note stays beside the date.
    view = window.search_results
    row = next(r for r, h in enumerate(heads) if note in h[1] + h[2])
    index = view.model().index(row, 0)
    title, tail, second = view.itemDelegate().head(view.font(), 2000, index)
    assert (title, tail, second) == (TITLE, f" · {date} {note}", "")

    # Far narrower than the list ever is: the date and the note take the second line, whole.
    tail_width = QFontMetrics(view.font()).horizontalAdvance(f" · {date} {note}")
    title, tail, second = view.itemDelegate().head(view.font(), tail_width // 2, index)
    assert (tail, second) == ("", f"{date} {note}")
