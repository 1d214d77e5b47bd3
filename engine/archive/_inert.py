"""Message text as Markdown that loads and runs nothing, for the Markdown export.

A Markdown export is read in viewers that render it, most with raw HTML on. What a message
says is kept as written where it is plain; what could load or run something when rendered is
written as text instead: raw HTML (a ``<`` that starts a tag becomes ``&lt;``), images
(made links), links whose address is not ``http``/``https``/``mailto`` (``javascript:``,
``data:``, ``vbscript:``, ``file:``...: inline, autolinks, images, reference links and their
definitions), and a code fence a message leaves open (closed, so the next message's fence
cannot turn what was checked as code into content). The HTML export keeps the same links
live (`SAFE_SCHEMES`).

markdown-it (CommonMark) is the judge: it is asked only about text with a tag, an image, a
bracket with a colon or a fence in it, and every change is checked by reading the text again.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML
    from markdown_it.token import Token
    from markdown_it.utils import OptionsDict

__all__ = ["SAFE_SCHEMES", "SCHEME", "Inert", "markdown_renderer"]

#: the schemes an export's links may have (the HTML export checks these too)
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
#: a URL's scheme, lower-cased, at its start
SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")

_IMAGE = re.compile(r"!\[([^\]\n]*)\](?=[(\[])")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _images_as_links(text: str) -> str:
    """Markdown image syntax turned into links (outside code blocks): an export loads
    nothing by itself, not even when opened in a viewer that renders Markdown (`Inert`
    makes sure of it, and of raw HTML)."""
    if "![" not in text:
        return text
    lines = text.split("\n")
    fence: str | None = None
    for number, line in enumerate(lines):
        opened = _FENCE_OPEN.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
        elif "![" in line:
            lines[number] = _IMAGE.sub(
                lambda m: f"[image: {m.group(1)}]" if m.group(1) else "[image]", line
            )
    return "\n".join(lines)


# What could load something in a viewer that renders Markdown: raw HTML (which CommonMark
# passes through: ``<img src=https://...>``) and images.
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")  # a tag, comment, declaration or autolink
_TOP_FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})", re.MULTILINE)
_LOADING = frozenset({"html_block", "html_inline", "image"})
_END_PROBE = "\n\n<!-- -->\n"  # raw HTML after a text: shows whether the text left code open


def _defused(text: str) -> str:
    """`text` with nothing that starts a tag or an image: ``<b`` made ``&lt;b``, ``![``
    made ``!\\[``."""
    return _TAG_START.sub("&lt;", text).replace("![", "!\\[")


def _defused_line(line: str) -> str:
    """`_defused`, but a ``<`` inside an inline code span on the line stays (`Vec<T>`).

    The spans are told apart simply (a run of backticks to the next run as long): where
    that is wrong, markdown-it still finds the tag afterwards, and `Inert` escapes it.
    """
    if "`" not in line:
        return _defused(line)
    parts = re.split(r"(`+)", line)
    out: list[str] = []
    number = 0
    while number < len(parts):
        part = parts[number]
        if part.startswith("`") and part in parts[number + 1 :]:
            end = parts.index(part, number + 1)
            out.append(part + "".join(parts[number + 1 : end]).replace("![", "!\\[") + part)
            number = end + 1
            continue
        out.append(_defused(part))
        number += 1
    return "".join(out)


def _loads(tokens: Sequence[Token]) -> bool:
    return any(
        t.type in _LOADING or any(c.type in _LOADING for c in t.children or ()) for t in tokens
    )


def _defused_outside_code(text: str, tokens: Sequence[Token]) -> str:
    """`_defused` on each line of `text` that is not in a code block of `tokens`."""
    code: set[int] = set()
    for token in tokens:
        if token.type in ("fence", "code_block") and token.map:
            code.update(range(*token.map))
    lines = text.split("\n")
    return "\n".join(line if n in code else _defused_line(line) for n, line in enumerate(lines))


class Inert:
    """Message text as Markdown that loads nothing, even in a viewer that renders Markdown
    with raw HTML (most do), and that leaves no code block open over what follows it.

    Text is kept as written where it is plain: images become links (`_images_as_links`), and
    markdown-it (CommonMark) is asked only about text with a tag, an image or a fence left.
    Where it finds raw HTML or an image, each ``<`` that starts a tag and each ``![`` outside
    code blocks is escaped (inside them text shows as written; if the escaping changed what
    is code, everywhere). A fence the text leaves open is closed: the next message's fence
    cannot end it, turning what was checked as code into text.
    """

    def __init__(self) -> None:
        self._md: MarkdownIt | None = None  # CommonMark, raw HTML on: it is what is looked for
        self._blocks: MarkdownIt | None = None  # the same, blocks only (three times faster)

    def __call__(self, text: str) -> str:
        text = _images_as_links(text)
        # "![" left: an image may use a link definition in another message.
        risky = _TAG_START.search(text) is not None or "![" in text
        # A link whose address has a scheme (or an entity that could spell its colon).
        linked = "[" in text and (":" in text or "&" in text)
        if not (risky or linked or _TOP_FENCE.search(text)):
            return text
        if self._md is None or self._blocks is None:
            from markdown_it import MarkdownIt  # imported by an export that needs it only

            self._md = MarkdownIt("commonmark")
            # Every address is taken as a link (markdown-it's own check would leave a
            # javascript: link as text, which other viewers make live): they are judged here.
            self._md.validateLink = lambda url: True  # type: ignore[method-assign]
            self._blocks = MarkdownIt("commonmark").disable("inline")
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # markdown-it's lines
        if risky or linked:
            # Links first: a tag inside a link's address ([x](data:,<b>)) is not HTML until
            # the link is undone.
            text = self._unlinked(text)
            risky = _TAG_START.search(text) is not None or "![" in text
        if risky:
            tokens = self._md.parse(text)
            if _loads(tokens) or "![" in text:
                text = _defused_outside_code(text, tokens)
                tokens = self._md.parse(text)
                if _loads(tokens) or _defused_outside_code(text, tokens) != text:
                    text = _defused(text)
            text = self._unlinked(text)  # (escaping a tag never makes a link: checked)
        if _TOP_FENCE.search(text):
            tokens = self._blocks.parse(text + _END_PROBE)
            if tokens[-1].type != "html_block":  # the probe was taken into an open fence
                fences = [t for t in tokens if t.type == "fence" and t.level == 0]
                if fences:
                    text += "\n" + fences[-1].markup
        return text

    def _unlinked(self, text: str) -> str:
        """`text` with every link to an address outside `SAFE_SCHEMES` written as text.

        The links are found by markdown-it (inline links, autolinks, images, reference links
        and their definitions); each is undone in the text where it is written (the ``]`` that
        ends its text or label escaped, the ``<`` of an autolink made ``&lt;``). Whatever that
        misses, by markdown-it's second reading, loses every ``[``, ``]`` and ``<``.
        """
        assert self._md is not None
        env: dict[str, Any] = {}
        tokens = self._md.parse(text, env)
        if not _unsafe_links(tokens, env):
            return text
        text = _unlinked_outside_code(text, tokens)
        env = {}
        tokens = self._md.parse(text, env)
        if _unsafe_links(tokens, env):
            text = _defused(text).replace("[", "\\[").replace("]", "\\]")
        return text


#: where a link's address starts: after ``](`` (an inline link or image) or ``]:`` (a link
#: definition), spaces, one line break and a ``<`` allowed; and an autolink's ``<scheme:``
_DESTINATION = re.compile(r"\](?:\([ \t]*\n?[ \t]*<?|:[ \t]*\n?[ \t]*<?)")
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.\-]{1,31}:")
#: what browsers drop from an address before they read its scheme
_IGNORED_IN_URL = re.compile(r"[\x00-\x20\x7f]")


def _unsafe_address(address: str) -> bool:
    """Whether a link to `address` (as written, or as markdown-it normalised it) could run
    or load something: its scheme, read as a browser reads it, is not a `SAFE_SCHEMES` one.
    Addresses without a scheme (``#part``, ``notes.md``) only open a page."""
    from urllib.parse import unquote

    plain = _IGNORED_IN_URL.sub("", unquote(html.unescape(address))).lower()
    scheme = SCHEME.match(plain)
    return scheme is not None and scheme.group(1) not in SAFE_SCHEMES


def _unsafe_links(tokens: Sequence[Token], env: Mapping[str, Any]) -> bool:
    """Whether markdown-it found a link, image or link definition to an unsafe address."""
    for token in tokens:
        for child in token.children or ():
            if child.type == "link_open" and _unsafe_address(str(child.attrs.get("href", ""))):
                return True
            if child.type == "image" and _unsafe_address(str(child.attrs.get("src", ""))):
                return True
    references = env.get("references") or {}
    return any(_unsafe_address(str(ref.get("href", ""))) for ref in references.values())


def _code_spans(line: str, start: int) -> list[tuple[int, int]]:
    """The inline code spans of a line (told apart as `_defused_line` does), as offsets of
    the text the line starts at `start` in."""
    spans: list[tuple[int, int]] = []
    for opened in re.finditer(r"`+", line):
        if spans and opened.start() < spans[-1][1] - start:
            continue  # inside the span found before
        closing = re.compile(rf"(?<!`){opened.group()}(?!`)")
        closed = closing.search(line, opened.end())
        if closed is not None:
            spans.append((start + opened.start(), start + closed.end()))
    return spans


def _unlinked_outside_code(text: str, tokens: Sequence[Token]) -> str:
    """`text` with each link to an unsafe address, outside code, undone where it is written:
    the ``]`` before its address escaped (``[x\\](javascript:…)`` is text, and so is a
    definition ``[x\\]: data:…``), an autolink's ``<`` made ``&lt;``."""
    code_lines: set[int] = set()
    for token in tokens:
        if token.type in ("fence", "code_block") and token.map:
            code_lines.update(range(*token.map))
    protected: list[tuple[int, int]] = []
    offset = 0
    for number, line in enumerate(text.split("\n")):
        if number in code_lines:
            protected.append((offset, offset + len(line)))
        elif "`" in line:
            protected += _code_spans(line, offset)
        offset += len(line) + 1

    def in_code(at: int) -> bool:
        return any(start <= at < end for start, end in protected)

    cuts: dict[int, str] = {}
    for found in _DESTINATION.finditer(text):
        address = text[found.end() : found.end() + 200].split(")")[0].split(">")[0]
        address = address.split(" ")[0].split("\n")[0]
        if not in_code(found.start()) and _unsafe_address(address):
            cuts[found.start()] = "\\]"
    for found in _AUTOLINK.finditer(text):
        if not in_code(found.start()) and _unsafe_address(found.group()[1:]):
            cuts[found.start()] = "&lt;"
    if not cuts:
        return text
    pieces: list[str] = []
    done = 0
    for at in sorted(cuts):
        pieces += (text[done:at], cuts[at])
        done = at + 1
    pieces.append(text[done:])
    return "".join(pieces)


# The HTML export's renderer ---------------------------------------------------------


def _safe_link(url: str) -> bool:
    """Links an export keeps: http, https, mailto and in-page anchors. markdown-it's own
    check refuses javascript:, vbscript:, file: and most data:; this refuses relative
    paths too, which would open local files from a page opened from disk."""
    url = url.strip().lower()
    if url.startswith("#"):
        return True
    scheme = SCHEME.match(url)
    return scheme is not None and scheme.group(1) in SAFE_SCHEMES


def _image_as_link(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any
) -> str:
    token = tokens[idx]
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    label = html.escape(f"[image: {alt}]" if alt else "[image]")
    return f'<a href="{html.escape(str(token.attrs.get("src", "")))}">{label}</a>'


def markdown_renderer() -> MarkdownIt:
    """The HTML export's Markdown renderer: CommonMark with tables and strikethrough, no raw
    HTML, only `_safe_link` links, images as links."""
    from markdown_it import MarkdownIt  # imported by the HTML export only

    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"]
    )
    md.validateLink = _safe_link  # type: ignore[method-assign]
    md.add_render_rule("image", _image_as_link)
    return md
