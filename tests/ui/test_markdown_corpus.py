"""The window renders nested lists and CJK tables as the HTML export does (issue 20, item 20).

A small corpus of answers (nested bullets, tight and loose, under bullets and numbers; tables
with Chinese and Latin rows) is stored, shown in the window and exported to HTML by the
engine. The window's documents hold the same lists (each item at the same depth) and the same
tables (each cell in the same row and column) as the export; and, laid out, a nested bullet
sits just right of its parent's text with no blank line before it, and a table row holding
Chinese is no taller than one holding Latin text, its cells' lines on one baseline.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from PySide6.QtGui import QTextBlock, QTextCursor, QTextDocument, QTextTable

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage
from engine.archive import export_conversations
from tests.support.wait import until
from tests.ui.conftest import open_window
from ui.controller import DB_FILE_NAME

CORPUS = [
    "Steps:\n\n- parent one\n  - child a\n  - child b\n- parent two\n",
    "Loose:\n\n- parent one\n\n  - child a\n  - child b\n\n- parent two\n",
    "1. **Install** the tool\n   - with pip\n   - or with uv\n2. Configure it\n",
    "1. First\n\n   - detail\n\n2. Second\n",
    "- level one\n  - level two\n    - level three\n- back to one\n",
    "- 第一项\n  - 子项目：中文内容\n- 第二项\n",
    (
        "| name | 名字 | note |\n|---|---|---:|\n| apple | 苹果很好吃 | 1 |\n"
        "| pear | pear | 2 |\n| 中文 | 中文内容 | 三 |\n| plain | text | 4 |\n"
    ),
]

Structure = list[tuple[str, Any]]  # ("item", (depth, text)) and ("table", rows of cell texts)


def _squash(text: str) -> str:
    return " ".join(text.replace("\u200b", "").split())


class _ExportReader(HTMLParser):
    """The lists and tables of each assistant section of the export."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[Structure] = []
        self._in_answer = False
        self._depth = 0
        self._items: list[list[str]] = []  # the open items' own text
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "section":
            self._in_answer = ("class", "assistant") in attrs
            if self._in_answer:
                self.answers.append([])
        elif not self._in_answer:
            return
        elif tag in ("ul", "ol"):
            if self._items:  # the parent's own text ends where its nested list begins
                self._close_item()
            self._depth += 1
        elif tag == "li":
            self._items.append([])
        elif tag == "table":
            self._table = []
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def _close_item(self) -> None:
        words = self._items[-1]
        if words is not None and _squash("".join(words)):
            self.answers[-1].append(("item", (self._depth, _squash("".join(words)))))
        self._items[-1] = None  # type: ignore[call-overload]

    def handle_endtag(self, tag: str) -> None:
        if not self._in_answer:
            return
        if tag == "li":
            if self._items[-1] is not None:
                self._close_item()
            self._items.pop()
        elif tag in ("ul", "ol"):
            self._depth -= 1
        elif tag in ("td", "th") and self._cell is not None and self._table is not None:
            self._table[-1].append(_squash("".join(self._cell)))
            self._cell = None
        elif tag == "table" and self._table is not None:
            self.answers[-1].append(("table", self._table))
            self._table = None
        elif tag == "section":
            self._in_answer = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        elif self._items and self._items[-1] is not None:
            self._items[-1].append(data)


def _window_structure(document: QTextDocument) -> Structure:
    found: Structure = []
    block = document.begin()
    while block.isValid():
        table = _table_of(document, block)
        if table is not None:
            rows = [
                [_cell_text(document, table, r, c) for c in range(table.columns())]
                for r in range(table.rows())
            ]
            found.append(("table", rows))
            block = document.findBlock(table.lastPosition() + 1)
            continue
        listed = block.textList()
        if listed is not None and _squash(block.text()):
            found.append(("item", (listed.format().indent(), _squash(block.text()))))
        block = block.next()
    return found


def _table_of(document: QTextDocument, block: QTextBlock) -> QTextTable | None:
    return QTextCursor(block).currentTable()


def _cell_text(document: QTextDocument, table: QTextTable, row: int, column: int) -> str:
    cell = table.cellAt(row, column)
    cursor = QTextCursor(document)
    cursor.setPosition(cell.firstPosition())
    cursor.setPosition(cell.lastPosition(), QTextCursor.MoveMode.KeepAnchor)
    return _squash(cursor.selectedText())


def _lines(document: QTextDocument, block: QTextBlock) -> tuple[float, float, float, float]:
    """(text x, first line top, last line bottom, first baseline) of a laid-out block."""
    layout = block.layout()
    origin = document.documentLayout().blockBoundingRect(block).topLeft()
    first, last = layout.lineAt(0), layout.lineAt(layout.lineCount() - 1)
    top = origin.y() + first.y()
    return (
        origin.x() + first.x(),
        top,
        origin.y() + last.y() + last.height(),
        top + first.ascent(),
    )


async def _shown_and_exported(tmp_path: Path) -> tuple[list[Any], list[Structure]]:
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="corpus", title="Corpus")
        for n, text in enumerate(CORPUS):
            await storage.append("corpus", "seed", UserMessage(content=f"Example {n}"))
            await storage.append("corpus", "seed", AssistantMessage(content=text))
        await export_conversations(storage, tmp_path / "corpus.html", "html", ["corpus"])
    finally:
        await storage.close()
    reader = _ExportReader()
    reader.feed((tmp_path / "corpus.html").read_text(encoding="utf-8"))
    window = await open_window(tmp_path)
    await until(lambda: len(window.transcript.message_views()) == 2 * len(CORPUS))
    answers = window.transcript.message_views()[1::2]
    return answers, reader.answers


async def test_lists_and_tables_hold_what_the_export_holds(tmp_path: Path) -> None:
    answers, exported = await _shown_and_exported(tmp_path)
    assert len(exported) == len(CORPUS)
    for view, expected in zip(answers, exported, strict=True):
        assert _window_structure(view.body.document()) == expected


async def test_a_nested_bullet_sits_just_right_of_its_parent(tmp_path: Path) -> None:
    answers, _ = await _shown_and_exported(tmp_path)
    checked = 0
    for view in answers:
        document = view.body.document()
        line = view.body.fontMetrics().height()
        block = document.begin()
        while block.isValid() and block.next().isValid():
            below = block.next()
            if block.textList() is not None and below.textList() is not None:
                depth, next_depth = (b.textList().format().indent() for b in (block, below))
                if next_depth == depth + 1:  # a nested item right under its parent
                    x, _, bottom, _ = _lines(document, block)
                    child_x, child_top, _, _ = _lines(document, below)
                    shift = child_x - x
                    assert line <= shift <= 2 * line, (block.text(), below.text(), shift, line)
                    gap = child_top - bottom
                    assert gap <= line / 4, (block.text(), below.text(), gap)  # no blank line
                    checked += 1
            block = below
    assert checked >= 6


async def test_a_row_with_chinese_is_as_tall_as_the_others_and_aligned(tmp_path: Path) -> None:
    answers, _ = await _shown_and_exported(tmp_path)
    view = answers[-1]
    document = view.body.document()
    table = next(
        t for t in (QTextCursor(b).currentTable() for b in _blocks(document)) if t is not None
    )
    baselines: list[list[float]] = []
    for row in range(table.rows()):
        cells = [table.cellAt(row, column) for column in range(table.columns())]
        blocks = [document.findBlock(cell.firstPosition()) for cell in cells]
        baselines.append([_lines(document, block)[3] for block in blocks])
        lefts = [_lines(document, block)[0] for block in blocks]
        assert lefts == sorted(lefts)  # the cells in their columns' order
    for row, line in enumerate(baselines):
        assert max(line) - min(line) < 0.5, (row, line)  # one baseline across the row
    steps = [b[0] - a[0] for a, b in zip(baselines, baselines[1:], strict=False)]
    # every row after the header the same height, whether it holds Chinese or not
    assert max(steps[1:]) - min(steps[1:]) < 0.5, steps


def _blocks(document: QTextDocument) -> list[QTextBlock]:
    found = []
    block = document.begin()
    while block.isValid():
        found.append(block)
        block = block.next()
    return found
