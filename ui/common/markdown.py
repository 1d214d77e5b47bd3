"""Assistant text as HTML for Qt's rich-text views: Markdown by markdown-it-py, code by Pygments.

Qt's `QTextBrowser` understands a subset of HTML 4 and inline ``style`` attributes, not CSS
classes, so Pygments writes inline styles (``noclasses``) and code blocks are wrapped in a
one-cell table that carries the background colour. Raw HTML in the model's text is escaped
(``html: False``): a model's output is data, not markup.

Each code block gets a "Copy" link ``copy:N`` above it, N counting code blocks from
``code_start`` so that a message rendered in several pieces (while it streams) numbers its
blocks once; `Rendered.code_blocks` holds their text for the clipboard.

The text is a stranger's (DESIGN.md, "Untrusted input"), so the HTML holds nothing Qt would
fetch or obey:

- an image is shown as its alt text and its address, never as ``<img>``: Qt would read the
  path (``/dev/zero`` filled memory until the app was killed; a FIFO hung the window);
- a link's address is not in the HTML either: a link is ``link:N`` (counted from
  ``link_start`` like code blocks) and `Rendered.links` says where it goes and what its text
  was, so the view can show the target and ask before a link whose text names another host;
  a link's ``title`` is dropped (Qt shows it as a rich-text tooltip);
- size is bounded: a code block over `FOLD_LINES` lines or `FOLD_CHARS` characters shows its
  beginning and a "Show all N lines" link ``expand:N`` (`expanded` lists the blocks opened),
  code over `HIGHLIGHT_LIMIT` characters is not coloured, and an unbroken run of more than
  `BREAK_RUN` characters gets a break opportunity (U+200B) every `BREAK_RUN` characters:
  Qt's line breaking of a 300,000-character word took seconds, of a 2 MB one minutes.

Streaming (`StreamSplitter`): a growing answer is cut at the last blank line outside a code
fence. Everything before the cut is complete Markdown blocks that no later text can change
(rendered once and appended); only the text after it is re-rendered as it grows. The splitter
scans each new line once, so its cost is linear in the length of the answer.
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

# markdown-it and pygments load on the first render, not at start-up: the window paints
# before any message needs them (DESIGN.md: heavy imports wait until after the first paint).
if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML
    from pygments.formatters.html import HtmlFormatter

__all__ = [
    "BREAK_RUN",
    "FOLD_CHARS",
    "FOLD_LINES",
    "HIGHLIGHT_LIMIT",
    "TEXT_LIMIT",
    "Link",
    "Rendered",
    "StreamSplitter",
    "breakable",
    "named_host",
    "tooltip_text",
    "render_markdown",
    "wait_warm",
    "warm_up",
]

FOLD_LINES = 40  # a longer code block shows this many lines until opened
FOLD_CHARS = 6000  # ... or this many characters (one huge line is long too)
HIGHLIGHT_LIMIT = 20_000  # characters of code above which Pygments is not asked
TEXT_LIMIT = 100_000  # characters of one piece shown until the person asks for all
BREAK_RUN = 64  # the longest run of text without a place to wrap
_ZWSP = "\u200b"
_UNBROKEN = re.compile(rf"\S{{{BREAK_RUN + 1},}}")

_LIGHT_STYLE = "default"
_DARK_STYLE = "monokai"
_CODE_BG = {False: "#f4f5f7", True: "#272822"}
_LINK = {False: "#2f6fd6", True: "#8ab4f8"}


@dataclass(frozen=True, slots=True)
class Link:
    """Where a link in rendered text goes, and the text it was shown with."""

    target: str  # the address as the Markdown gave it (normalised by markdown-it)
    text: str  # the link's text, as plain text


@dataclass(slots=True)
class Rendered:
    """One rendered piece of Markdown."""

    html: str
    code_blocks: list[str] = field(default_factory=list)  # text of each block, for Copy
    links: list[Link] = field(default_factory=list)  # the target of each ``link:N``


def tooltip_text(text: str) -> str:
    """``text`` as a tooltip shows it: escaped rich text.

    Qt guesses whether a tooltip is HTML (`Qt.mightBeRichText`), and HTML in a tooltip loads
    its images; escaped and marked as rich text, outside text is always shown as it is.
    """
    if "<" not in text:
        return text  # no tag, so Qt shows it as plain text, entities and all
    return "<qt>" + html.escape(text).replace("\n", "<br>") + "</qt>"


_NAMED_HOST = re.compile(
    r"^\s*(?:[a-z][a-z0-9+.-]*://)?(?:[^\s/@]*@)?"
    r"((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9]|\d{1,3}(?:\.\d{1,3}){3})"
    r"(?::\d+)?(?:[/?#]\S*)?\s*$",
    re.IGNORECASE,
)


def named_host(text: str) -> str | None:
    """The host a link's text names when the text is an address (``https://bank.example/x``,
    ``bank.example``), lower-case; None for other text ("the docs")."""
    match = _NAMED_HOST.match(text.replace(_ZWSP, ""))
    return match.group(1).lower().removeprefix("www.") if match else None


def breakable(text: str) -> str:
    """``text`` with a zero-width space every `BREAK_RUN` characters of each unbroken run."""
    if len(text) <= BREAK_RUN:
        return text

    def split(match: re.Match[str]) -> str:
        run = match.group(0)
        return _ZWSP.join(run[i : i + BREAK_RUN] for i in range(0, len(run), BREAK_RUN))

    return _UNBROKEN.sub(split, text)


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
    if not lang or len(code) > HIGHLIGHT_LIMIT:
        return html.escape(code)
    try:
        lexer: Any = get_lexer_by_name(lang)
    except ClassNotFound:
        return html.escape(code)
    return highlight(code, lexer, _formatter(dark))


_TABLE_OPEN = re.compile(r"<table>")


def render_markdown(
    text: str,
    *,
    dark: bool = False,
    code_start: int = 0,
    copy_label: str = "Copy",
    link_start: int = 0,
    expand_label: str = "Show all {count} lines",
    expanded: Collection[int] = (),
    whole: bool = False,
    more_label: str = "Show all {count} characters",
    cell_line: int = 0,
) -> Rendered:
    """Render Markdown to Qt rich-text HTML.

    Args:
        text: the Markdown source (raw HTML in it is shown as text).
        dark: colour code for a dark palette.
        code_start: number of the first code block's Copy link.
        copy_label: the (translated) text of the Copy links.
        link_start: number of the first ``link:N``.
        expand_label: the (translated) text of a folded block's link; ``{count}`` is its
            number of lines.
        expanded: numbers of the code blocks shown whole, however long.
        whole: render all of ``text`` even above `TEXT_LIMIT` characters; otherwise only
            its beginning is, followed by a ``more:`` link labelled ``more_label``
            (``{count}``: the text's length). Qt takes seconds to lay out megabytes.
        more_label: the (translated) text of that link.
        cell_line: the height in pixels of every line in a table cell (0: each line's own).
            Qt makes a line as tall as its tallest font, and a CJK fallback font is taller
            than the Latin one: a row holding Chinese grew taller than the others and its
            text sat lower than its neighbours'. One fixed height puts them on one baseline.

    Returns:
        The HTML, the text of each code block and the target of each link, in order.
    """
    more = ""
    if not whole and len(text) > TEXT_LIMIT:
        cut = text.rfind("\n", 0, TEXT_LIMIT)
        more = (
            f'<p><a href="more:" style="color:{_LINK[dark]}">'
            f"{html.escape(more_label.format(count=len(text)))}</a></p>"
        )
        text = text[: cut if cut > TEXT_LIMIT // 2 else TEXT_LIMIT]
    with _rendering:
        rendered = _render(
            text,
            dark,
            code_start,
            copy_label,
            link_start,
            expand_label,
            frozenset(expanded),
            cell_line,
        )
    if more:
        rendered.html += more
    return rendered


def _render(
    text: str,
    dark: bool,
    code_start: int,
    copy_label: str,
    link_start: int,
    expand_label: str,
    expanded: frozenset[int],
    cell_line: int = 0,
) -> Rendered:
    parser = _parser()
    tokens = parser.parse(text)
    blocks: list[str] = []
    links: list[Link] = []
    bg = _CODE_BG[dark]
    link_colour = _LINK[dark]

    def fence(tokens: Any, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        code = token.content
        lang = (token.info or "").strip().split(" ")[0] if token.type == "fence" else ""
        number = code_start + len(blocks)
        blocks.append(code)
        shown, fold = _folded(code) if number not in expanded else (code, "")
        body = _highlighted(breakable(shown), lang, dark).rstrip("\n")
        caption = html.escape(lang) + "&nbsp;&nbsp;" if lang else ""
        more = ""
        if fold:
            label = html.escape(expand_label.format(count=fold))
            more = (
                f'<tr><td style="font-size:small"><a href="expand:{number}" '
                f'style="color:{link_colour}">{label}</a></td></tr>'
            )
        return (
            f'<table width="100%" cellspacing="0" cellpadding="6" '
            f'style="background-color:{bg}; margin-top:4px; margin-bottom:6px">'
            f'<tr><td align="right" style="font-size:small; color:#888888">{caption}'
            f'<a href="copy:{number}" style="color:{link_colour}">{html.escape(copy_label)}</a>'
            f"</td></tr>"
            f'<tr><td><pre style="margin:0; white-space:pre-wrap">{body}</pre></td></tr>'
            f"{more}</table>\n"
        )

    def image(tokens: Any, idx: int, options: Any, env: Any) -> str:
        # Never an <img>: its alt text and where it points, as a link.
        token = tokens[idx]
        alt = renderer.renderInlineAsText(token.children or [], options, env)
        src = str(token.attrGet("src") or "")
        return _link_html(Link(src, alt or src), f"{alt} ({_short(src)})" if alt else src)

    def link_open(tokens: Any, idx: int, options: Any, env: Any) -> str:
        depth, close = 0, idx + 1
        while close < len(tokens):
            kind = tokens[close].type
            if kind == "link_close" and depth == 0:
                break
            depth += {"link_open": 1, "link_close": -1}.get(kind, 0)
            close += 1
        words = renderer.renderInlineAsText(tokens[idx + 1 : close], options, env)
        number = link_start + len(links)
        links.append(Link(str(tokens[idx].attrGet("href") or ""), words))
        return f'<a href="link:{number}" style="color:{link_colour}">'

    def _link_html(link: Link, shown: str) -> str:
        number = link_start + len(links)
        links.append(link)
        return (
            f'<a href="link:{number}" style="color:{link_colour}">'
            f"{html.escape(breakable(shown))}</a>"
        )

    def text_rule(tokens: Any, idx: int, options: Any, env: Any) -> str:
        return html.escape(breakable(tokens[idx].content), quote=False)

    def code_inline(tokens: Any, idx: int, options: Any, env: Any) -> str:
        return f"<code>{html.escape(breakable(tokens[idx].content), quote=False)}</code>"

    def paragraph_open(tokens: Any, idx: int, options: Any, env: Any) -> str:
        # An item's paragraph right above its nested list (a loose list): no space under
        # it, so the nested bullets follow their parent as in a tight list. Qt adds the
        # paragraph's margin to the list's, where a browser would collapse them.
        token = tokens[idx]
        after = tokens[idx + 3] if idx + 3 < len(tokens) else None
        if (
            not token.hidden
            and token.level > 0
            and after is not None
            and after.type in ("bullet_list_open", "ordered_list_open")
        ):
            return '<p style="margin-bottom:0px">'
        return renderer.renderToken(tokens, idx, options, env)

    def cell_open(tokens: Any, idx: int, options: Any, env: Any) -> str:
        opened = renderer.renderToken(tokens, idx, options, env)
        return opened + f'<p style="line-height:{cell_line}px; -qt-line-height-type:fixed">'

    def cell_close(tokens: Any, idx: int, options: Any, env: Any) -> str:
        return "</p>" + renderer.renderToken(tokens, idx, options, env)

    renderer = cast("RendererHTML", parser.renderer)  # the parser's default renderer
    # Plain functions, not the renderer's methods: markdown-it calls a rule with the same
    # four arguments either way.
    rules: dict[str, Any] = {
        "fence": fence,
        "code_block": fence,
        "image": image,
        "link_open": link_open,
        "text": text_rule,
        "code_inline": code_inline,
        "paragraph_open": paragraph_open,
    }
    if cell_line > 0:
        rules.update(td_open=cell_open, th_open=cell_open, td_close=cell_close)
        rules["th_close"] = cell_close
    saved = {name: renderer.rules.get(name) for name in rules}
    renderer.rules.update(rules)
    try:
        out = renderer.render(tokens, parser.options, {})
    finally:
        for name, rule in saved.items():
            if rule is None:
                renderer.rules.pop(name, None)
            else:
                renderer.rules[name] = rule
    # Qt draws no table borders from CSS; the attributes do it. The margins part a table
    # from a list above it (Qt gave it none: the table touched the last item).
    out = _TABLE_OPEN.sub(
        '<table border="1" cellspacing="0" cellpadding="4" '
        'style="margin-top:6px; margin-bottom:6px">',
        out,
    )
    # No whitespace around the blocks: Qt keeps a trailing newline as a space at the end of
    # the last paragraph, and a piece appended while streaming would differ from one render.
    return Rendered(out.strip(), blocks, links)


def _folded(code: str) -> tuple[str, int]:
    """The beginning of a long code block and its number of lines (0: not folded)."""
    lines = code.count("\n") + (not code.endswith("\n"))
    if lines <= FOLD_LINES and len(code) <= FOLD_CHARS:
        return code, 0
    end = -1
    for _ in range(FOLD_LINES):
        end = code.find("\n", end + 1)
        if end < 0:
            break
    shown = code[: end + 1] if 0 <= end < FOLD_CHARS else code[:FOLD_CHARS]
    return shown.rstrip("\n") + "\n", lines


def _short(address: str, limit: int = 120) -> str:
    return address if len(address) <= limit else address[: limit - 1] + "…"


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")


class StreamSplitter:
    """Finds where the completed part of a growing Markdown text ends.

    Feed it the text as it grows (`feed` takes only the new part). `boundary` is an offset
    into the whole text: ``text[:boundary]`` is a run of finished blocks, ``text[boundary:]``
    is the block still growing.

    A blank line outside a code fence ends a block, but whether the block is finished is
    known only from the line after it: an indented line continues a list item, and a list
    item after a list (even after a paragraph inside it) continues that list and may turn it
    loose. So the cut is made when the next line arrives and starts a new block at the left
    margin that cannot belong to the list before it. Cut anywhere else, the streamed answer
    rendered differently from the finished one (paragraphs after a list became list items).
    """

    def __init__(self) -> None:
        self._pending = ""  # the current, unfinished line
        self._offset = 0  # length of the text fed so far, up to the start of _pending
        self._fence: str | None = None  # the open fence's marker, when inside one
        self._fence_at_margin = False  # the open fence started at column 0
        self._candidate: int | None = None  # offset after the last blank line, not yet cut
        self._list = False  # a list item began since the last cut
        self.boundary = 0

    def feed(self, delta: str) -> int:
        """Take the newly arrived text; return the (possibly advanced) boundary."""
        if "\n" not in delta:
            self._pending += delta
            return self.boundary
        lines = (self._pending + delta).split("\n")
        self._pending = lines.pop()
        for line in lines:
            start = self._offset
            self._offset += len(line) + 1
            self._scan(line, start)
        return self.boundary

    def _cut(self, at: int) -> None:
        self.boundary = at
        self._candidate = None
        self._list = False

    def _scan(self, line: str, start: int) -> None:
        match = _FENCE.match(line)
        if self._fence is not None:
            if (
                match
                and match.group(1)[0] == self._fence[0]
                and len(match.group(1)) >= len(self._fence)
                and not line.strip().lstrip(self._fence[0])
            ):
                self._fence = None
                if self._fence_at_margin and not self._list:
                    self._cut(self._offset)  # a closed fence is a finished block on its own
            return
        if not line.strip():
            if self._candidate is None:
                self._candidate = self._offset
            return
        if self._candidate is not None:
            at_margin = not line[:1].isspace()
            is_item = bool(_LIST_ITEM.match(line))
            if at_margin and not (is_item and self._list):
                self._cut(self._candidate)
            else:
                self._candidate = None
        if _LIST_ITEM.match(line):
            self._list = True
        if match:
            self._fence = match.group(1)
            self._fence_at_margin = not line[:1].isspace()
