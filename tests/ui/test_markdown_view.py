"""How an answer's Markdown is drawn: streamed as finished, long code folded, dark follows.

- Streaming renders completed blocks once and re-renders only the growing one; after the
  last delta (and once complete) the view must equal a fresh render of the same text.
- Long code blocks fold behind "Show all N lines", huge code is not highlighted, and an
  unbroken run of text gets places to wrap.
- Switching to the dark theme redraws code blocks already on screen.
"""

from __future__ import annotations

import random
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QGuiApplication, QTextDocument
from PySide6.QtWidgets import QApplication

from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import open_window, seed_provider
from ui.common.markdown import BREAK_RUN, FOLD_LINES, HIGHLIGHT_LIMIT, TEXT_LIMIT, render_markdown
from ui.common.theme import apply_palette
from ui.conversation.items import ItemKind, ItemState, TranscriptItem
from ui.conversation.message_views import AnswerView

CORPUS = [
    # A numbered list, then paragraphs: they became list items while streaming.
    "Steps:\n\n1. First step\n2. Second step\n\n3. A link and [text](https://a.example)\n\n"
    "A paragraph after the list.\n\n- 51 words\n- more\n\nThe end.\n",
    # Nested lists, a loose list, a list after a paragraph inside an item.
    "- a\n  - b\n    - c\n\n- d\n\n  continued in d\n\n- e\n\nafter\n",
    # Quotes, with a list inside and a paragraph after.
    "> quoted line\n> more\n\n> another quote\n> - with a list\n\nPlain again.\n",
    # Headings, a table, code, mixed.
    "# Title\n\nIntro *em* **strong** `code`.\n\n## Table\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "```python\ndef f():\n    return 1\n```\n\n~~~\nplain fence\n~~~\n\n### After code\n\ntext\n",
    # An ordered list starting at 3 after a paragraph, and a code block inside a list item.
    "Intro\n\n3. three\n4. four\n\nMiddle\n\n5. five\n\n- item\n\n  ```\n  code in item\n  ```\n\n"
    "- next\n\nLast line",
    # Indented code after a paragraph, a thematic break, a setext heading.
    "para\n\n    indented code\n    more\n\n---\n\nSetext\n======\n\nend\n",
]


def _blocks(*documents: QTextDocument) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for document in documents:
        if document.isEmpty():
            continue
        block = document.begin()
        while block.isValid():
            fmt = block.blockFormat()
            listed = block.textList()
            out.append(
                (
                    block.text().strip(),
                    listed.format().style() if listed else None,
                    listed.itemNumber(block) if listed else None,
                    fmt.indent(),
                    fmt.leftMargin(),
                    fmt.topMargin(),
                    fmt.bottomMargin(),
                )
            )
            block = block.next()
    return out


def _answer(text: str, state: ItemState) -> TranscriptItem:
    return TranscriptItem(ItemKind.ASSISTANT, "a", state, parts=[text])


def _fresh(qtbot: Any, text: str) -> AnswerView:
    view = AnswerView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.refresh(_answer(text, ItemState.DONE))
    return view


def _streamed(qtbot: Any, text: str, rng: random.Random) -> tuple[AnswerView, TranscriptItem]:
    view = AnswerView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    item = _answer("", ItemState.STREAMING)
    at = 0
    while at < len(text):
        step = rng.randint(1, 12)
        item.parts.append(text[at : at + step])
        at += step
        item.version += 1
        view.refresh(item)
    return view, item


def test_streamed_markdown_equals_a_fresh_render(qtbot) -> None:
    for number, text in enumerate(CORPUS):
        for seed in range(4):
            rng = random.Random(number * 100 + seed)
            fresh = _fresh(qtbot, text)
            view, item = _streamed(qtbot, text, rng)
            # After the last delta: the finished blocks and the growing one, as one render.
            assert _blocks(view.body.document(), view.tail.document()) == _blocks(
                fresh.body.document()
            ), (number, seed)
            item.state = ItemState.DONE
            item.version += 1
            view.refresh(item)
            assert view.body.toHtml() == fresh.body.toHtml(), (number, seed)
            assert view.code_blocks == fresh.code_blocks


def test_a_long_code_block_folds_and_opens(qtbot) -> None:
    lines = [f"line_{n} = {n}" for n in range(1000)]
    code = "\n".join(lines) + "\n"
    view = _fresh(qtbot, f"Here:\n\n```python\n{code}```\n\nAfter.")
    shown = view.body.toPlainText()
    assert "Show all 1000 lines" in shown
    assert f"line_{FOLD_LINES - 1} = " in shown and f"line_{FOLD_LINES} = " not in shown
    assert "After." in shown
    assert view.code_blocks == [code]  # Copy still copies all of it
    view.body.linkActivated.emit(QUrl("copy:0"))
    assert QGuiApplication.clipboard().text() == code.rstrip("\n")
    view.body.linkActivated.emit(QUrl("expand:0"))
    opened = view.body.toPlainText()
    assert "line_999 = 999" in opened and "Show all" not in opened
    # A single huge line folds too.
    view = _fresh(qtbot, "```\n" + "x" * 200_000 + "\n```\n")
    assert len(view.body.toPlainText()) < 10_000
    assert "Show all 1 lines" in view.body.toPlainText()


def test_a_huge_answer_shows_its_beginning_until_asked(qtbot) -> None:
    text = "Start " + "QUJD" * 75_000 + " end"
    view = _fresh(qtbot, text)
    shown = view.body.toPlainText().replace("\u200b", "")
    assert f"Show all {len(text)} characters" in shown
    assert len(shown) < TEXT_LIMIT + 1000 and "end" not in shown.split("Show all")[0]
    view.body.linkActivated.emit(QUrl("more:"))
    shown = view.body.toPlainText().replace("\u200b", "")
    assert text in shown and "Show all" not in shown


def test_huge_code_is_not_highlighted_and_long_words_can_wrap() -> None:
    small = render_markdown("```python\nx = 1\n```\n", expanded={0})
    assert "<span style=" in small.html
    big = "\n".join(f"value_{n} = {n}" for n in range(HIGHLIGHT_LIMIT // 8)) + "\n"
    rendered = render_markdown(f"```python\n{big}```\n", expanded={0})
    assert "<span style=" not in rendered.html and "value_1 = 1" in rendered.html
    word = "a" * 300_000
    html = render_markdown(f"Start {word} end", whole=True).html
    runs = html.split("Start ", 1)[1].split(" end", 1)[0].split("\u200b")
    assert "".join(runs) == word
    assert max(len(r) for r in runs) <= BREAK_RUN


async def test_code_blocks_on_screen_follow_a_switch_to_dark(tmp_path, provider_server) -> None:
    app = QApplication.instance()
    saved = (app.palette(), app.styleSheet(), app.property("continuoTheme"))
    saved_scheme = app.property("continuoScheme")
    apply_palette(app, "light")
    try:
        provider_server.script(Turn(text="Code:\n\n```\nprint('hi')\n```\n", chunk_size=50))
        store = await seed_provider(tmp_path, provider_server)
        window = await open_window(tmp_path, settings_store=store)
        window.composer.setPlainText("code please")
        window.send_button.click()
        model = window.transcript.model

        def answered() -> bool:
            items = model().items() if model() else []
            return any(
                i.kind is ItemKind.ASSISTANT and i.state is ItemState.DONE for i in items
            ) and not window.controller.is_running(window.controller.current)

        await until(answered, what="the answer")
        window.transcript.flush()
        view = window.transcript.views()[-1]
        assert isinstance(view, AnswerView)
        assert "#f4f5f7" in view.body.toHtml()
        apply_palette(app, "dark")
        await until(lambda: "#272822" in view.body.toHtml(), what="a dark code block")
        assert "#f4f5f7" not in view.body.toHtml()
        apply_palette(app, "light")
        await until(lambda: "#f4f5f7" in view.body.toHtml(), what="a light code block again")
    finally:
        app.setPalette(saved[0])
        app.setStyleSheet(saved[1])
        app.setProperty("continuoTheme", saved[2])
        app.setProperty("continuoScheme", saved_scheme)
