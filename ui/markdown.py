"""Assistant text as HTML for Qt's rich-text views: Markdown by markdown-it-py, code by Pygments.

Qt's `QTextBrowser` understands a subset of HTML 4 and inline ``style`` attributes, not CSS
classes, so Pygments writes inline styles (``noclasses``) and code blocks are wrapped in a
one-cell table that carries the background colour. Raw HTML in the model's text is escaped
(``html: False``): a model's output is data, not markup.

Each code block gets a "Copy" link ``copy:N`` above it, N counting code blocks from
``code_start`` so that a message rendered in several pieces (while it streams) numbers its
blocks once; `Rendered.code_blocks` holds their text for the clipboard.

Streaming (`StreamSplitter`): a growing answer is cut at the last blank line outside a code
fence. Everything before the cut is complete Markdown blocks that no later text can change
(rendered once and appended); only the text after it is re-rendered as it grows. The splitter
scans each new line once, so its cost is linear in the length of the answer.
"""

from __future__ import annotations

import html
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

# markdown-it and pygments load on the first render, not at start-up: the window paints
# before any message needs them (DESIGN.md: heavy imports wait until after the first paint).
if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from pygments.formatters.html import HtmlFormatter

__all__ = ["Rendered", "StreamSplitter", "render_markdown", "wait_warm", "warm_up"]

_LIGHT_STYLE = "default"
_DARK_STYLE = "monokai"
_CODE_BG = {False: "#f4f5f7", True: "#272822"}
_LINK = {False: "#2f6fd6", True: "#8ab4f8"}


@dataclass(slots=True)
class Rendered:
    """One rendered piece of Markdown."""

    html: str
    code_blocks: list[str] = field(default_factory=list)  #: text of each block, for Copy


_warming: threading.Thread | None = None
# One render at a time, the warm-up's included: the parser is shared and its code-block rule
# is swapped for each render, and Pygments' lexer cache is filled as lexers are first asked
# for. Imports stay outside the lock (Python's import locks order them), so a render waits
# for a module it needs, not for the whole warm-up. HtmlFormatter is imported from its own
# module: ``pygments.formatters`` finds it through a lazy module attribute that is not
# thread-safe (a render during the warm-up failed with "cannot import name 'HtmlFormatter'").
_rendering = threading.RLock()


def warm_up() -> None:
    """Load markdown-it and Pygments in a worker thread, once.

    Called when the first message row appears: loading them takes tens of milliseconds, and
    on the event loop that froze the window just as the first answer began to stream. The
    thread yields the interpreter every few milliseconds, so the window keeps ticking; a
    render that comes before it is done waits only for the rest of the import.
    """
    global _warming
    if _warming is None:
        _warming = threading.Thread(target=_load, name="markdown-warm-up", daemon=True)
        _warming.start()


def wait_warm(timeout: float | None = None) -> None:
    """Block until the warm-up (started now if it was not) is done; for a worker thread."""
    warm_up()
    assert _warming is not None
    _warming.join(timeout)


def _load() -> None:
    import markdown_it  # noqa: F401 (imported for their side effect: loaded once, here)
    import pygments.formatters.html  # noqa: F401
    import pygments.lexers  # noqa: F401
    import pygments.lexers.python  # noqa: F401

    render_markdown("*warm* up\n\n```python\nx = 1\n```\n", dark=False)
    _formatter(True)


@lru_cache(maxsize=2)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # CommonMark plus the GFM pieces people expect from chat apps: tables, strikethrough.
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
        ["table", "strikethrough"]
    )


@lru_cache(maxsize=4)
def _formatter(dark: bool) -> HtmlFormatter[str]:
    from pygments.formatters.html import HtmlFormatter

    return HtmlFormatter(noclasses=True, nowrap=True, style=_DARK_STYLE if dark else _LIGHT_STYLE)


def _highlighted(code: str, lang: str, dark: bool) -> str:
    from pygments import highlight
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    # A block without a language is shown as plain text. Guessing (pygments' guess_lexer)
    # imports every one of its ~600 lexers to ask each: about a second, and some 50,000
    # objects that every full garbage collection then walks while answers stream. Models
    # label their code blocks; a guess is often wrong anyway.
    if not lang:
        return html.escape(code)
    try:
        lexer: Any = get_lexer_by_name(lang)
    except ClassNotFound:
        return html.escape(code)
    return highlight(code, lexer, _formatter(dark))


_TABLE_OPEN = re.compile(r"<table>")
_CELL = re.compile(r"<(t[hd])( style=\"[^\"]*\")?>")


def render_markdown(
    text: str, *, dark: bool = False, code_start: int = 0, copy_label: str = "Copy"
) -> Rendered:
    """Render Markdown to Qt rich-text HTML.

    Args:
        text: the Markdown source (raw HTML in it is shown as text).
        dark: colour code for a dark palette.
        code_start: number of the first code block's Copy link.
        copy_label: the (translated) text of the Copy links.

    Returns:
        The HTML and the text of each code block, in order.
    """
    with _rendering:
        return _render(text, dark, code_start, copy_label)


def _render(text: str, dark: bool, code_start: int, copy_label: str) -> Rendered:
    parser = _parser()
    tokens = parser.parse(text)
    blocks: list[str] = []
    bg = _CODE_BG[dark]

    def fence(tokens: Any, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        code = token.content
        lang = (token.info or "").strip().split(" ")[0] if token.type == "fence" else ""
        number = code_start + len(blocks)
        blocks.append(code)
        body = _highlighted(code, lang, dark).rstrip("\n")
        caption = html.escape(lang) + "&nbsp;&nbsp;" if lang else ""
        return (
            f'<table width="100%" cellspacing="0" cellpadding="6" '
            f'style="background-color:{bg}; margin-top:4px; margin-bottom:6px">'
            f'<tr><td align="right" style="font-size:small; color:#888888">{caption}'
            f'<a href="copy:{number}" style="color:{_LINK[dark]}">{html.escape(copy_label)}</a>'
            f"</td></tr>"
            f'<tr><td><pre style="margin:0; white-space:pre-wrap">{body}</pre></td></tr></table>\n'
        )

    renderer = parser.renderer
    saved = {name: renderer.rules.get(name) for name in ("fence", "code_block")}
    renderer.rules["fence"] = fence
    renderer.rules["code_block"] = fence
    try:
        out = renderer.render(tokens, parser.options, {})
    finally:
        for name, rule in saved.items():
            renderer.rules[name] = rule
    # Qt draws no table borders from CSS; the attributes do it.
    out = _TABLE_OPEN.sub('<table border="1" cellspacing="0" cellpadding="4">', out)
    return Rendered(out, blocks)


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class StreamSplitter:
    """Finds where the completed part of a growing Markdown text ends.

    Feed it the text as it grows (`feed` takes only the new part). `boundary` is an offset
    into the whole text: ``text[:boundary]`` is a run of finished blocks (it ends after a
    blank line outside any code fence), ``text[boundary:]`` is the block still growing.
    """

    def __init__(self) -> None:
        self._pending = ""  #: the current, unfinished line
        self._offset = 0  #: length of the text fed so far, up to the start of _pending
        self._fence: str | None = None  #: the open fence's marker, when inside one
        self._previous_blank = False
        self.boundary = 0

    def feed(self, delta: str) -> int:
        """Take the newly arrived text; return the (possibly advanced) boundary."""
        if "\n" not in delta:
            self._pending += delta
            return self.boundary
        lines = (self._pending + delta).split("\n")
        self._pending = lines.pop()
        for line in lines:
            self._offset += len(line) + 1
            self._scan(line)
        return self.boundary

    def _scan(self, line: str) -> None:
        match = _FENCE.match(line)
        if self._fence is not None:
            if (
                match
                and match.group(1)[0] == self._fence[0]
                and len(match.group(1)) >= len(self._fence)
                and not line.strip().lstrip(self._fence[0])
            ):
                self._fence = None
                # A closed fence is a finished block on its own.
                self.boundary = self._offset
            return
        if match:
            self._fence = match.group(1)
            return
        blank = not line.strip()
        if blank:
            self.boundary = self._offset
        self._previous_blank = blank
