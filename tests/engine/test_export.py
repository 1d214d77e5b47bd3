"""Export: Markdown, JSON and HTML files written whole or not at all, safe, and streamed.

Real SQLite files in ``tmp_path``; the CLI runs in real subprocesses.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import tracemalloc
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from engine.archive import ExportFormat, export_conversations
from engine.archive import _sink as sink_module
from engine.archive.export import EXPORT_FORMAT, EXPORT_VERSION, public_metadata
from engine.errors import ArchiveError, StorageError, UnknownMessageTypeError
from engine.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from engine.storage.sqlite import SQLiteSessionStorage
from tests.engine.archive_helpers import (
    METADATA,
    SECRET,
    SECRET_TOO,
    big_conversation,
    files_in,
    seed,
)

ROOT = Path(__file__).resolve().parents[2]
FORMATS = list(ExportFormat)


@pytest.fixture
async def storage(tmp_path: Path) -> Any:
    s = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    yield s
    await s.close()


async def export(storage: SQLiteSessionStorage, path: Path, fmt: ExportFormat, *ids: str) -> str:
    await export_conversations(storage, path, fmt, list(ids) or None)
    return await asyncio.to_thread(path.read_text, encoding="utf-8")


# ---------------------------------------------------------------------------- JSON


async def test_json_holds_every_branch_with_its_place_settings_and_tool_starts(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    out = tmp_path / "all.json"
    before = time.time()
    report = await export_conversations(storage, out, "json")
    after = time.time()
    document = json.loads(out.read_text(encoding="utf-8"))

    assert (document["format"], document["version"]) == (EXPORT_FORMAT, EXPORT_VERSION)
    assert before <= document["exported_at"] <= after  # when it was written
    assert [c["id"] for c in document["conversations"]] == ["trip", "hostile", "empty"]
    trip = document["conversations"][0]
    assert [m["seq"] for m in trip["messages"]] == [1, 2, 3, 4, 5, 6, 7]
    assert [m["parent_seq"] for m in trip["messages"]] == [None, 1, 2, 3, 4, 2, 6]
    assert trip["active_seq"] == 5  # the shown version is not the newest branch
    assert [m["request_id"] for m in trip["messages"]] == ["r1"] * 5 + ["r2"] * 2
    assert trip["tool_starts"] == [
        {
            "tool_call_id": "call-1",
            "started_at": pytest.approx(trip["tool_starts"][0]["started_at"]),
        }
    ]
    answer = trip["messages"][2]["message"]
    assert answer["usage"] == {
        "input_tokens": 120,
        "output_tokens": 30,
        "reasoning_tokens": 10,
        "cache_read_tokens": 100,
    }
    assert trip["messages"][4]["message"]["stop"] == {"reason": "max_output", "raw": "length"}
    assert trip["metadata"] == public_metadata(METADATA)
    assert document["conversations"][2]["messages"] == []
    assert document["conversations"][2]["active_seq"] is None
    assert (report.conversations, report.messages) == (3, 11)
    assert report.path == out and report.bytes == out.stat().st_size


async def test_json_is_one_line_per_message(storage: SQLiteSessionStorage, tmp_path: Path) -> None:
    await seed(storage)
    text = await export(storage, tmp_path / "trip.json", ExportFormat.JSON, "trip")
    lines = text.splitlines()
    assert lines[0].startswith('{"format": "continuo-export", "version": 2,')
    assert sum(line.startswith('{"seq": ') for line in lines) == 7


async def test_only_the_asked_conversations_in_the_order_asked(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    text = await export(storage, tmp_path / "two.json", ExportFormat.JSON, "empty", "trip", "empty")
    assert [c["id"] for c in json.loads(text)["conversations"]] == ["empty", "trip"]


async def test_an_unknown_conversation_writes_nothing(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    out = tmp_path / "x.json"
    with pytest.raises(StorageError, match="no-such") as caught:
        await export_conversations(storage, out, "json", ["trip", "no-such"])
    assert caught.value.key == "storage.missing"
    assert not out.exists() and files_in(tmp_path) == set()


async def test_an_empty_database_exports_an_empty_list(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    for fmt in FORMATS:
        report = await export_conversations(storage, tmp_path / f"none.{fmt}", fmt)
        assert (report.conversations, report.messages) == (0, 0)
    document = json.loads((tmp_path / "none.json").read_text())
    assert document["conversations"] == []


# ---------------------------------------------------------------------------- Markdown


async def test_markdown_shows_the_active_path_and_says_what_else_exists(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    text = await export(storage, tmp_path / "trip.md", ExportFormat.MARKDOWN, "trip")

    assert "# A trip to Lyon" in text
    assert "Model: gpt-4.1" in text and "(openai)" not in text  # an id, not a name
    assert (
        "This is the version of the conversation Continuo shows (5 messages). 1 other version "
        "(2 messages on other branches) is not included; a JSON export keeps every version."
    ) in text
    assert "A shorter plan" not in text  # the other branch
    assert text.index("## System") < text.index("## You") < text.index("## Assistant (gpt-4.1)")
    # reasoning in a quoted block, the answer's Markdown as is
    assert "> **Reasoning**\n>\n> The person wants a plan.\n>\n> Check the weather first." in text
    assert "Morning: Fourvière. Afternoon: the old town…" in text
    # tool calls and results as fenced code blocks
    assert '**Tool call:** `weather`\n\n```json\n{\n  "city": "Lyon",\n  "days": [\n' in text
    # the result holds a fence of its own: the block's fence is longer
    assert "### Tool result: `weather` (done)\n\n````\n```\nsunny, 24°C\n```\n````\n" in text
    # the cut answer noted in one plain line
    assert "\nStopped: The answer reached the output limit; resuming continues it.\n" in text
    # images become links: nothing is loaded when a viewer renders the file
    assert "![" not in text and "[image: map](/dev/zero)" in text


async def test_markdown_keeps_image_syntax_inside_code(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    from engine.messages import AssistantMessage

    content = "Write:\n\n```md\n![alt](pic.png)\n```\n\nand ![](x.png)"
    await storage.append("c", "r", AssistantMessage(content=content))
    text = await export(storage, tmp_path / "c.md", ExportFormat.MARKDOWN)
    assert "```md\n![alt](pic.png)\n```\n\nand [image](x.png)" in text


async def test_markdown_notes_a_stopped_answer(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    text = await export(storage, tmp_path / "h.md", ExportFormat.MARKDOWN, "hostile")
    assert "\nStopped: You stopped this answer before it finished.\n" in text
    assert "This is the version of the conversation Continuo shows (4 messages)." in text
    assert "other version" not in text
    # what the export writes itself (title, model) never carries a live tag; messages are
    # kept as they were written
    assert "# &lt;script&gt;alert('title')&lt;/script&gt;\n" in text
    assert '## Assistant (&lt;script&gt;"model"&lt;/script&gt;)\n' in text
    empty = await export(storage, tmp_path / "e.md", ExportFormat.MARKDOWN, "empty")
    assert "# Untitled conversation\n" in empty and "This conversation has no messages." in empty


def _loading(markdown: str) -> list[str]:
    """What in `markdown` a viewer that renders Markdown with raw HTML would load or run
    (CommonMark, as markdown-it reads it): raw HTML and images, but the export's own
    comment at the top."""
    from markdown_it import MarkdownIt

    found = []
    for token in MarkdownIt("commonmark").enable(["table"]).parse(markdown):
        for t in (token, *(token.children or ())):
            if t.type in ("html_block", "html_inline", "image"):
                found.append(t.content or str(t.attrs.get("src")))
    own = re.compile(r"<!-- Exported from Continuo on [^<>]* -->\n")
    return [f for f in found if not own.fullmatch(f)]


async def test_markdown_loads_nothing_even_where_raw_html_renders(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)  # "hostile": <script>, <img onerror>, <iframe>, <svg>, <style>...
    question = (
        "Why does `Vec<T>` break <b>here</b>? <img src=https://example.com/pixel.png>\n\n"
        "```html\n<img src=https://example.com/in-code.png>\n```\n\n![a [b]](https://e.x/1.png)"
    )
    await storage.append("code", "r", UserMessage(content=question))
    # An answer cut inside a code block, then a message whose own block would close it and
    # turn what it holds as code into page content.
    await storage.append("code", "r", AssistantMessage(content="Look:\n\n```\ncut off"))
    await storage.append(
        "code", "r", UserMessage(content="```\n<img src=https://example.com/after.png>\n```")
    )
    text = await export(storage, tmp_path / "all.md", ExportFormat.MARKDOWN)
    assert _loading(text) == []
    assert "&lt;script>alert(1)&lt;/script>\n\n&lt;img src=x onerror=alert(1)>" in text
    # Text is kept as written where it loads nothing: code blocks, inline code, plain text.
    assert "Why does `Vec<T>` break &lt;b>here&lt;/b>? &lt;img src=https://example.com/" in text
    assert "```html\n<img src=https://example.com/in-code.png>\n```" in text
    assert "## Assistant\n\nLook:\n\n```\ncut off\n```\n\n" in text  # closed where it ends
    assert "```\n<img src=https://example.com/after.png>\n```" in text
    assert "Morning: Fourvière. Afternoon: the old town…" in text


async def test_a_tool_name_cannot_leave_its_code_span(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    name = "x` <img src=https://example.com/t.png> `y"
    await storage.append(
        "t", "r", AssistantMessage(content="", tool_calls=(ToolCall("c1", name, {}),))
    )
    await storage.append("t", "r", ToolMessage(tool_call_id="c1", name=name, content="done"))
    text = await export(storage, tmp_path / "t.md", ExportFormat.MARKDOWN)
    assert _loading(text) == []
    assert f"**Tool call:** `` {name} ``" in text and f"### Tool result: `` {name} `` (done)" in text


#: links whose address could run or load something, in each way Markdown writes a link
_UNSAFE_LINKS = [
    "[click](javascript:alert(1))",
    "[Mixed](JaVaScRiPt:alert(2))",
    "[spelled](java&#115;cript:alert(3))",
    "[bracketed](<javascript:alert(4)>)",
    "[next line](\njavascript:alert(5))",
    "[spaced]( data:text/html,<b>hi</b> )",
    "[basic](vbscript:msgbox(6))",
    "[local](file:///etc/passwd)",
    "<javascript:alert(7)>",
    "<vbscript:msgbox(8)>",
    "![pixel](data:image/png;base64,iVBORw0KGgo=)",
    "![tracker](javascript:alert(9))",
    "[a reference][evil]\n\n[evil]: javascript:alert(10)",
    "[collapsed][]\n\n[collapsed]: data:text/html,hi",
    "[shortcut]\n\n[shortcut]:\n  vbscript:msgbox(11)",
    "[outer [inner](javascript:alert(12)) text](https://example.com/fine)",
]


def _unsafe_in(markdown: str) -> list[str]:
    """Every link, image or link definition in `markdown` whose address is not http, https
    or mailto, as a CommonMark reader that takes every address as a link sees it."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    env: dict[str, Any] = {}
    addresses = []
    for token in md.parse(markdown, env):
        for t in token.children or ():
            if t.type == "link_open":
                addresses.append(str(t.attrs["href"]))
            elif t.type == "image":
                addresses.append(str(t.attrs["src"]))
    addresses += [str(ref["href"]) for ref in (env.get("references") or {}).values()]
    return [a for a in addresses if not re.match(r"(https?|mailto):|#", a, re.IGNORECASE)]


@pytest.mark.parametrize("where", ["user", "assistant", "title"])
async def test_markdown_writes_links_that_could_run_as_text(
    storage: SQLiteSessionStorage, tmp_path: Path, where: str
) -> None:
    """javascript:, data:, vbscript: and file: links stay readable but are no links (as in
    the HTML export); http, https and mailto links stay links; code stays as written."""
    safe = "[docs](https://example.com/docs) <https://example.com/auto> [mail](mailto:a@b.c)"
    code = "`[x](javascript:alert(0))` and\n\n```\n[y](javascript:alert(0))\n```"
    for number, link in enumerate(_UNSAFE_LINKS):
        text = f"Before {link} after.\n\n{safe}\n\n{code}"
        sid = f"c{number}"
        if where == "title":
            await storage.create_session(sid, title=link.replace("\n", " "))
            await storage.append(sid, "r", UserMessage(content="hello"))
        elif where == "user":
            await storage.append(sid, "r", UserMessage(content=text))
        else:
            await storage.append(sid, "r", AssistantMessage(content=text))
    markdown = await export(storage, tmp_path / "links.md", ExportFormat.MARKDOWN)

    assert _unsafe_in(markdown) == []
    assert _loading(markdown) == []
    # Written as text: what the link was is still there to read.
    for needle in ("javascript:alert(1)", "data:text/html", "vbscript:msgbox(6)", "file:///etc"):
        assert needle in markdown
    if where != "title":
        live = re.findall(r"\((https://example\.com/docs|mailto:a@b\.c)\)", markdown)
        assert len(live) == 2 * len(_UNSAFE_LINKS)
        # (the message whose link held raw HTML, <b>, has every tag start escaped once the
        # link is undone: its autolink too)
        assert markdown.count("<https://example.com/auto>") == len(_UNSAFE_LINKS) - 1
        assert markdown.count("`[x](javascript:alert(0))`") == len(_UNSAFE_LINKS)
        assert markdown.count("```\n[y](javascript:alert(0))\n```") == len(_UNSAFE_LINKS)


# ---------------------------------------------------------------------------- HTML


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    handle_startendtag = handle_starttag


_FORBIDDEN_TAGS = {
    "script", "img", "iframe", "object", "embed", "link", "base", "form", "input", "svg",
    "math", "video", "audio", "source", "frame", "frameset", "applet", "button", "textarea",
}  # fmt: skip


async def test_html_runs_nothing_and_loads_nothing(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    page = await export(storage, tmp_path / "all.html", ExportFormat.HTML)

    parser = _Tags()
    parser.feed(page)
    parser.close()
    names = [tag for tag, _ in parser.tags]
    assert not _FORBIDDEN_TAGS & set(names), _FORBIDDEN_TAGS & set(names)
    assert names.count("style") == 1  # the page's own, in <head>
    hrefs = []
    for tag, attrs in parser.tags:
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            assert name not in ("src", "style", "srcset", "action", "formaction"), (tag, name)
            if name == "href":
                hrefs.append(value)
    assert hrefs and all(re.match(r"https://|mailto:|#", h or "") for h in hrefs), hrefs
    assert "https://example.com/" in hrefs
    assert "https://example.com/cat.png" in hrefs  # an image, as a link
    # said to the browser too: nothing but the inline style may load or run
    policy = next(
        dict(attrs)["content"]
        for tag, attrs in parser.tags
        if tag == "meta" and dict(attrs).get("http-equiv") == "Content-Security-Policy"
    )
    assert policy is not None and policy.startswith("default-src 'none';")
    # raw, whatever a lenient parser would make of it
    assert not re.search(r"<\s*script", page, re.IGNORECASE)
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", page, re.IGNORECASE)
    # the text is all there, shown rather than run
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "[x](javascript:alert(1))" in page  # a refused link stays as text
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in page


async def test_html_renders_markdown_and_folds_reasoning(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    page = await export(storage, tmp_path / "trip.html", ExportFormat.HTML, "trip")
    assert "<h2>Assistant (gpt-4.1)</h2>" in page
    assert "<details><summary>Reasoning</summary>" in page
    assert "<p>Tool call: <code>weather</code></p>" in page
    assert "<pre><code>{\n  &quot;city&quot;: &quot;Lyon&quot;" in page
    assert '<p class="stop">Stopped: The answer reached the output limit' in page
    assert "A shorter plan" not in page


# ---------------------------------------------------------------------------- secrets


@pytest.mark.parametrize("fmt", FORMATS)
async def test_no_secret_leaves_in_any_format(
    storage: SQLiteSessionStorage, tmp_path: Path, fmt: ExportFormat
) -> None:
    await seed(storage)
    out = tmp_path / f"all.{fmt}"
    await export_conversations(storage, out, fmt)
    data = out.read_bytes()
    assert SECRET.encode() not in data and b"SECRETxY4n" not in data
    assert SECRET_TOO.encode() not in data and b"tok-live" not in data
    if fmt is ExportFormat.JSON:
        metadata = json.loads(data)["conversations"][0]["metadata"]
        assert metadata == {
            "provider_id": "openai",
            "model": "gpt-4.1",
            "tool_servers_off": ["files"],
            "system_prompt": "Be brief.",
            "nested": {"kept": 1},
            "note": "pasted by mistake: [redacted]",
        }


def test_secret_looking_names() -> None:
    kept = {"provider_id": 1, "model": 2, "tool_servers_off": 3, "last_error": {"kept": 4}}
    dropped = {"api_key": 1, "apiKey": 2, "Authorization": 3, "refresh_TOKEN": 4, "password": 5,
               "client_secret": 6}  # fmt: skip
    assert public_metadata({**kept, **dropped}) == kept


# ---------------------------------------------------------------------------- whole or nothing


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_cancelled_export_leaves_the_target_as_it_was(
    storage: SQLiteSessionStorage, tmp_path: Path, fmt: ExportFormat
) -> None:
    await storage.import_conversation(big_conversation(1500))
    target = tmp_path / "out"
    target.write_text("the earlier export")
    calls: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        calls.append((done, total))
        if len(calls) == 1:
            task.cancel()

    task = asyncio.create_task(export_conversations(storage, target, fmt, progress=progress))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert calls == [(500, 1500)]
    assert target.read_text() == "the earlier export"
    assert files_in(tmp_path) == {"out"}  # no partial file left beside it


async def test_a_cancel_after_the_final_rename_leaves_the_export_standing(
    storage: SQLiteSessionStorage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rename is the line: cancelled during the last step (after the rename, while the
    folder is synced), the export is done and says so; it does not claim no file was written."""
    await seed(storage)
    target = tmp_path / "out.md"
    target.write_text("the earlier export")
    loop = asyncio.get_running_loop()
    sync_folder = sink_module._sync_folder

    def sync_then_cancel(folder: Path) -> None:  # in the commit's worker thread
        sync_folder(folder)
        loop.call_soon_threadsafe(task.cancel)  # reaches the task before the step's end does

    monkeypatch.setattr(sink_module, "_sync_folder", sync_then_cancel)
    task = asyncio.ensure_future(export_conversations(storage, target, "markdown"))
    report = await task
    assert not task.cancelled() and task.cancelling() == 0
    assert report.path == target and report.bytes == target.stat().st_size > 0
    assert target.read_text().startswith("<!-- Exported from Continuo on ")
    assert files_in(tmp_path) == {"out.md"}


@pytest.mark.parametrize("fmt", FORMATS)
async def test_an_unreadable_message_fails_the_export_and_leaves_the_target(
    storage: SQLiteSessionStorage, tmp_path: Path, fmt: ExportFormat
) -> None:
    await storage.import_conversation(big_conversation(1500))
    db = sqlite3.connect(storage.path)
    with db:
        db.execute(
            "UPDATE messages SET body = ? WHERE seq = 1200",
            ('{"v": 1, "type": "hologram", "id": "x", "created_at": 1}',),
        )
    db.close()
    target = tmp_path / "out"
    target.write_text("the earlier export")
    with pytest.raises(UnknownMessageTypeError, match="hologram"):
        await export_conversations(storage, target, fmt)
    assert target.read_text() == "the earlier export"
    assert files_in(tmp_path) == {"out"}


async def test_a_folder_that_is_not_there_is_one_sentence(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    target = tmp_path / "gone" / "out.md"
    with pytest.raises(ArchiveError) as caught:
        await export_conversations(storage, target, "markdown")
    assert caught.value.key == "archive.cannot_write"
    assert str(caught.value).startswith(f"The export could not be written to {target}: ")
    assert files_in(tmp_path) == set()


async def test_a_target_that_is_a_folder_is_refused_and_cleaned_up(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    (tmp_path / "out").mkdir()
    with pytest.raises(ArchiveError, match="could not be written"):
        await export_conversations(storage, tmp_path / "out", "json")
    assert files_in(tmp_path) == {"out"} and not any((tmp_path / "out").iterdir())


async def test_the_database_itself_is_never_the_target(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    before = storage.path.read_bytes()
    for name in ("continuo.sqlite3", "continuo.sqlite3-wal"):
        with pytest.raises(ArchiveError) as caught:
            await export_conversations(storage, tmp_path / name, "json")
        assert str(caught.value) == (
            f"The export could not be written to {tmp_path / name}: it is the conversation "
            "file itself. Nothing was changed there; choose another place or free some space, "
            "then export again."
        )
    assert storage.path.read_bytes() == before and files_in(tmp_path) == set()
    await export_conversations(storage, tmp_path / "continuo.sqlite3.json", "json")  # a neighbour


async def test_the_file_is_private(storage: SQLiteSessionStorage, tmp_path: Path) -> None:
    await seed(storage)
    await export_conversations(storage, tmp_path / "a.html", "html")
    assert (tmp_path / "a.html").stat().st_mode & 0o777 == 0o600


# ---------------------------------------------------------------------------- streaming


async def test_a_big_export_streams(storage: SQLiteSessionStorage, tmp_path: Path) -> None:
    """20,000 messages: pages of 500, written as they come, memory flat from page to page."""
    await storage.import_conversation(big_conversation(20_000, words=3))
    out = tmp_path / "big.json"
    calls: list[int] = []
    partial_sizes: list[int] = []
    memory: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        calls.append(done)
        # written as it goes: the partial file beside the target grows, the target waits
        assert not out.exists()
        partial_sizes.extend(p.stat().st_size for p in tmp_path.glob(".big.json.partial-*"))
        # twenty pages in the middle, traced: what they leave behind, and their peak
        if len(calls) == 10:
            tracemalloc.start()
        elif len(calls) == 30:
            memory.append(tracemalloc.get_traced_memory())
            tracemalloc.stop()

    try:
        report = await export_conversations(storage, out, "json", progress=progress)
    finally:
        tracemalloc.stop()
    assert report.messages == 20_000 and calls == list(range(500, 20_001, 500))
    size = out.stat().st_size
    assert size > 4_000_000
    assert len(partial_sizes) == len(calls) and partial_sizes == sorted(partial_sizes)
    assert 0 < partial_sizes[-1] < size
    # Twenty pages hold over 2 MB of JSON: kept, it would show here. What does stay is at
    # most one chunk waiting to be written (CHUNK_BYTES) and the page at hand.
    [(kept, peak)] = memory
    assert kept < 1_000_000 and peak < 2_000_000, (kept, peak)
    with out.open(encoding="utf-8") as lines:
        assert sum(1 for line in lines if line.startswith('{"seq": ')) == 20_000


# ---------------------------------------------------------------------------- the CLI


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m <args>``, reporting at the end whether Qt was imported."""
    code = (
        "import runpy, sys\n"
        f"sys.argv = {list(args)!r}\n"
        "try:\n"
        "    runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)\n"
        "except SystemExit as exit:\n"
        "    status = exit.code\n"
        "print('QT' if any(m.split('.')[0] == 'PySide6' for m in sys.modules) else 'NO-QT',\n"
        "      file=sys.stderr)\n"
        "sys.exit(status)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "LANG": "C.UTF-8", "LC_ALL": "", **(env or {})},
        timeout=60,
    )


def _error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    lines = done.stderr.splitlines()
    assert lines[-1] == "NO-QT"
    return lines[:-1]


async def test_cli_exports_without_qt(storage: SQLiteSessionStorage, tmp_path: Path) -> None:
    await seed(storage)
    await storage.close()
    out = tmp_path / "out.md"
    done = _run("engine.export", "--format", "markdown", "--database", str(storage.path), str(out))
    assert done.returncode == 0, done.stderr
    assert _error_lines(done) == []
    assert re.fullmatch(
        rf"Exported 3 conversations \(9 messages\) to {re.escape(str(out))} \([\d.,]+ (KB|bytes)\)\.\n",
        done.stdout,
    )
    assert out.read_text().startswith("<!-- Exported from Continuo")


async def test_cli_finds_the_database_like_the_app(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    await storage.close()
    out = tmp_path / "trip.json"
    by_env = _run(
        "engine.export", "--format", "json", "--session", "trip", str(out),
        env={"CONTINUO_DATA_DIR": str(tmp_path)},
    )  # fmt: skip
    assert by_env.returncode == 0, by_env.stderr
    assert [c["id"] for c in json.loads(out.read_text())["conversations"]] == ["trip"]
    by_option = _run(
        "engine.export", "--format", "html", "--data-dir", str(tmp_path), str(tmp_path / "a.html"),
        env={"CONTINUO_DATA_DIR": str(tmp_path / "elsewhere")},
    )  # fmt: skip
    assert by_option.returncode == 0, by_option.stderr
    assert "Exported 3 conversations" in by_option.stdout


def test_cli_errors_are_one_sentence(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.sqlite3"
    done = _run(
        "engine.export", "--format", "json", "--database", str(missing), str(tmp_path / "o")
    )
    assert done.returncode == 1
    assert _error_lines(done) == [
        f"There is no conversation file at {missing}, so there is nothing to export."
    ]
    assert not missing.exists() and not (tmp_path / "o").exists()


async def test_cli_unknown_session_and_chinese(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    await seed(storage)
    await storage.close()
    args = ("engine.export", "--format", "json", "--database", str(storage.path))
    done = _run(*args, "--session", "nope", str(tmp_path / "o.json"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert _error_lines(done) == [
        f"There is no conversation 'nope' in {storage.path}; it may have been deleted."
    ]
    chinese = _run(*args, str(tmp_path / "gone" / "o.json"), env={"LANG": "zh_CN.UTF-8"})
    assert chinese.returncode == 1
    (line,) = _error_lines(chinese)
    assert line.startswith(f"无法把导出内容写入 {tmp_path / 'gone' / 'o.json'}：")


def test_the_default_database_is_the_apps(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The engine repeats the window's path logic (it must not import ui/): pinned here."""
    from engine.export import default_database
    from ui.app import default_data_dir, resolve_data_dir
    from ui.controller import DB_FILE_NAME

    monkeypatch.delenv("CONTINUO_DATA_DIR", raising=False)
    assert default_database() == default_data_dir() / DB_FILE_NAME
    monkeypatch.setenv("CONTINUO_DATA_DIR", str(tmp_path / "x"))
    assert default_database() == resolve_data_dir(None) / DB_FILE_NAME
    assert default_database(tmp_path / "y") == resolve_data_dir(str(tmp_path / "y")) / DB_FILE_NAME
