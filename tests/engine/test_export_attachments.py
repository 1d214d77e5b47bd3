"""Attachments through export and import: JSON (version 2) carries their bytes once each and
an import checks every reference; version 1 files still import.

Real SQLite files, real pictures (Pillow) and PDFs (PDFium) made by the tests.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import sqlite3
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from engine import Blob, DocumentPart, ImagePart, UserMessage
from engine.archive import export_conversations, import_file
from engine.archive._attached import BASE64_PIECE
from engine.errors import ArchiveError
from engine.messages import AssistantMessage
from engine.storage.sqlite import SQLiteSessionStorage
from tests.engine.archive_helpers import snapshot
from tests.engine.attach_helpers import make_pdf

ROOT = Path(__file__).resolve().parents[2]


def png(colour: tuple[int, int, int], size: tuple[int, int] = (4, 3)) -> Blob:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return Blob.of(out.getvalue(), "image/png")


def image(blob: Blob, name: str = "shot.png") -> ImagePart:
    with Image.open(io.BytesIO(blob.data)) as opened:
        width, height = opened.size
    return ImagePart(blob.media_type, width, height, blob.size, blob.sha256, name=name)


RED = png((200, 0, 0))
PDF = Blob.of(make_pdf(["The Zephyrine mill", "page two"]), "application/pdf")
DOC = DocumentPart(
    "mill report.pdf", PDF.media_type, "The Zephyrine mill\npage two", PDF.sha256, pages=2
)


def leftovers(folder: Path) -> list[str]:
    """Hidden names in `folder`: a temporary file or folder an export left."""
    return [p.name for p in folder.iterdir() if p.name.startswith(".")]


def blob_rows(path: Path) -> dict[str, tuple[bytes, str]]:
    with sqlite3.connect(path) as raw:
        found = {
            ref: (bytes(data), kind)
            for ref, data, kind in raw.execute("SELECT sha256, data, media_type FROM blobs")
        }
    raw.close()
    return found


@pytest.fixture
async def source(tmp_path: Path) -> Any:
    """Two conversations sharing a picture; one also holds a PDF, asked about twice."""
    s = SQLiteSessionStorage(tmp_path / "source.sqlite3")
    await s.append(
        "a",
        "r",
        UserMessage(id="q1", content="What is this?", attachments=(image(RED), DOC)),
        blobs=[RED, PDF],
    )
    await s.append("a", "r", AssistantMessage(id="a1", content="A red square and a report."))
    await s.append("a", "r", UserMessage(id="q2", content="Again", attachments=(DOC,)))
    await s.append(
        "b",
        "r",
        UserMessage(id="q3", content="Same red", attachments=(image(RED, "again.png"),)),
        blobs=[RED],
    )
    yield s
    await s.close()


@pytest.fixture
async def target(tmp_path: Path) -> Any:
    s = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    yield s
    await s.close()


# ---------------------------------------------------------------------------- JSON


async def test_json_carries_each_blob_once_and_imports_byte_for_byte(
    source: SQLiteSessionStorage, target: SQLiteSessionStorage, tmp_path: Path
) -> None:
    out = tmp_path / "all.json"
    await export_conversations(source, out, "json")
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["version"] == 2
    first, second = document["conversations"]
    # each blob once a conversation, however many messages refer to it, in order of use
    assert [b["sha256"] for b in first["blobs"]] == [RED.sha256, PDF.sha256]
    assert [b["sha256"] for b in second["blobs"]] == [RED.sha256]
    red = first["blobs"][0]
    assert (red["media_type"], red["size"]) == ("image/png", RED.size)
    assert base64.b64decode("".join(red["data"])) == RED.data
    assert out.read_text(encoding="utf-8").count(base64.b64encode(PDF.data).decode()[:40]) == 1

    report = await import_file(target, out)
    assert (report.imported, report.skipped) == (2, ())
    assert snapshot(target.path)["messages"] == snapshot(source.path)["messages"]
    assert blob_rows(target.path) == blob_rows(source.path)
    assert await target.read_blob(PDF.sha256) == PDF
    [question, _, again] = await target.load("a")
    assert question.attachments == (image(RED), DOC) and again.attachments == (DOC,)
    # the imported document is found by its words (schema 8)
    assert {h.message_id for h in await target.search_messages("zephyrine")} == {"q1", "q2"}
    # a second import adds nothing, bytes included
    again_report = await import_file(target, out)
    assert (again_report.imported, again_report.already_present) == (0, 2)


async def test_a_blob_larger_than_one_piece_is_split_and_joined(
    target: SQLiteSessionStorage, tmp_path: Path
) -> None:
    big = Blob.of(bytes(range(256)) * (BASE64_PIECE // 256 * 2 + 7), "application/octet-stream")
    part = DocumentPart("big.bin", big.media_type, "binary", big.sha256)
    first = SQLiteSessionStorage(tmp_path / "first.sqlite3")
    try:
        await first.append("big", "r", UserMessage(content="x", attachments=(part,)), blobs=[big])
        await export_conversations(first, tmp_path / "big.json", "json")
    finally:
        await first.close()
    [conversation] = json.loads((tmp_path / "big.json").read_text())["conversations"]
    pieces = conversation["blobs"][0]["data"]
    assert len(pieces) == 3 and all(len(p) <= BASE64_PIECE for p in pieces)
    await import_file(target, tmp_path / "big.json")
    assert await target.read_blob(big.sha256) == big


def _rewrite(path: Path, change: Any) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        (
            "missing",
            f"an attachment ({PDF.sha256[:12]}) is referred to but its bytes are not in the file",
        ),
        (
            "mismatch",
            f"the bytes given for attachment {PDF.sha256[:12]} are not the bytes its "
            "reference names",
        ),
        ("not_base64", f"the bytes of attachment {PDF.sha256[:12]} are not base64"),
    ],
    ids=["missing", "mismatch", "not_base64"],
)
async def test_a_bad_blob_refuses_its_conversation_whole_and_the_others_come(
    source: SQLiteSessionStorage,
    target: SQLiteSessionStorage,
    tmp_path: Path,
    case: str,
    problem: str,
) -> None:
    out = tmp_path / "all.json"
    await export_conversations(source, out, "json")

    def spoil(document: dict[str, Any]) -> None:
        blobs = document["conversations"][0]["blobs"]
        if case == "missing":
            del blobs[1]
        elif case == "mismatch":
            blobs[1]["data"] = [base64.b64encode(b"%PDF-1.7 other bytes").decode()]
        else:
            blobs[1]["data"] = ["not base64 at all!"]

    _rewrite(out, spoil)
    report = await import_file(target, out)
    assert report.imported == 1
    assert report.skipped == (
        (
            "What is this?",
            f"The conversation 'What is this?' could not be read ({problem}), "
            "so it was not imported.",
        ),
    )
    held = snapshot(target.path)
    assert set(held["sessions"]) == {"b"}  # nothing of "a": no session, message or bytes
    assert {sid for sid, _ in held["messages"]} == {"b"}
    assert set(blob_rows(target.path)) == {RED.sha256}


async def test_a_blob_nothing_refers_to_is_not_stored(
    source: SQLiteSessionStorage, target: SQLiteSessionStorage, tmp_path: Path
) -> None:
    out = tmp_path / "all.json"
    await export_conversations(source, out, "json", ["b"])
    stray = Blob.of(b"not referred to", "text/plain")
    _rewrite(
        out,
        lambda d: d["conversations"][0]["blobs"].append(
            {
                "sha256": stray.sha256,
                "media_type": "text/plain",
                "size": stray.size,
                "data": [base64.b64encode(stray.data).decode()],
            }
        ),
    )
    assert (await import_file(target, out)).imported == 1
    assert set(blob_rows(target.path)) == {RED.sha256}


async def test_a_version_1_file_imports_and_one_referring_to_bytes_is_refused(
    target: SQLiteSessionStorage, tmp_path: Path
) -> None:
    """Version 1 had no "blobs": its conversations import as before; a message of one that
    refers to bytes (a version 1 writer that had attachments) refuses its conversation."""
    plain = {
        "id": "plain",
        "title": "Plain",
        "created_at": 1.0,
        "updated_at": 2.0,
        "metadata": {},
        "active_seq": 1,
        "tool_starts": [],
        "messages": [
            {
                "seq": 1,
                "parent_seq": None,
                "request_id": "r",
                "message": {"v": 1, "type": "user", "id": "u1", "created_at": 1.0, "content": "hi"},
            }
        ],
    }
    attached = json.loads(json.dumps(plain))
    attached["id"], attached["title"] = "pic", "With a picture"
    attached["messages"][0]["message"]["attachments"] = [
        {
            "kind": "image",
            "media_type": "image/png",
            "width": 4,
            "height": 3,
            "size": RED.size,
            "blob": RED.sha256,
        }
    ]
    path = tmp_path / "v1.json"
    path.write_text(
        json.dumps(
            {
                "format": "continuo-export",
                "version": 1,
                "exported_at": 3.0,
                "conversations": [plain, attached],
            }
        ),
        encoding="utf-8",
    )
    report = await import_file(target, path)
    assert report.imported == 1 and [name for name, _ in report.skipped] == ["With a picture"]
    assert "is referred to but its bytes are not in the file" in report.skipped[0][1]
    assert [m.content for m in await target.load("plain")] == ["hi"]
    assert blob_rows(target.path) == {}


async def test_the_documented_example_carries_its_picture(
    target: SQLiteSessionStorage, tmp_path: Path
) -> None:
    doc = (ROOT / "docs" / "export-format.md").read_text(encoding="utf-8")
    example = doc.split("## Example\n\n```json\n", 1)[1].split("\n```", 1)[0]
    path = tmp_path / "example.json"
    path.write_text(example, encoding="utf-8")
    report = await import_file(target, path)
    assert (report.imported, report.messages, report.skipped) == (1, 5, ())
    [question, *_] = await target.load("4f1c9e0a8b7d4c3e9f2a1b0c9d8e7f6a")
    [picture] = question.attachments
    blob = await target.read_blob(picture.blob)
    assert blob is not None and hashlib.sha256(blob.data).hexdigest() == picture.blob
    with Image.open(io.BytesIO(blob.data)) as opened:
        assert opened.size == (picture.width, picture.height) == (1, 1)


# ---------------------------------------------------------------------------- HTML


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        self.text.append(data)


HOSTILE_NAME = '<img src=x onerror=alert(1)>"\u202egnp.exe\nreport.pdf'


async def test_html_embeds_pictures_as_data_urls_and_lists_documents(
    tmp_path: Path,
) -> None:
    storage = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    blue = png((0, 0, 250), (3, 2))
    hostile_doc = DocumentPart(HOSTILE_NAME, "text/csv", "a,b\n1,2", PDF.sha256, rows=1)
    try:
        await storage.append(
            "h",
            "r",
            UserMessage(
                content="Pictures and papers",
                attachments=(
                    image(RED),
                    image(blue, '"><script>alert(2)</script>.png'),
                    DOC,
                    hostile_doc,
                ),
            ),
            blobs=[RED, blue, PDF],
        )
        await storage.append("h", "r", AssistantMessage(content="Seen."))
        out = tmp_path / "page.html"
        await export_conversations(storage, out, "html")
    finally:
        await storage.close()
    page = out.read_text(encoding="utf-8")
    parser = _Tags()
    parser.feed(page)
    parser.close()
    images = [attrs for tag, attrs in parser.tags if tag == "img"]
    # each picture's own stored bytes, as data: URLs; nothing else in the page loads
    assert [a["src"] for a in images] == [
        "data:image/png;base64," + base64.b64encode(b.data).decode() for b in (RED, blue)
    ]
    assert [(a["width"], a["height"]) for a in images] == [("4", "3"), ("3", "2")]
    assert images[1]["alt"] == '"><script>alert(2)</script>.png'  # an attribute's text
    assert not {"script", "iframe", "object", "embed", "link"} & {t for t, _ in parser.tags}
    for tag, attrs in parser.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        if tag != "img":
            assert "src" not in attrs, tag
    assert not re.search(r"<\s*script", page, re.IGNORECASE)
    # the page's policy lets images come from data: only, and nothing else load
    [policy] = [
        a["content"]
        for t, a in parser.tags
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert policy is not None
    rules = dict(rule.strip().split(" ", 1) for rule in policy.split(";"))
    assert rules["img-src"] == "data:" and rules["default-src"] == "'none'"
    # documents listed by name and pages or rows, names as text
    text = "".join(parser.text)
    assert "Document: mill report.pdf (2 pages)" in text
    shown = " ".join(HOSTILE_NAME.replace("\u202e", "").split())  # no direction override
    assert f"Document: {shown} (1 row)" in text
    assert "&lt;img src=x onerror=alert(1)&gt;&quot;" in page


# ---------------------------------------------------------------------------- Markdown


async def test_markdown_writes_the_originals_beside_it_and_links_them(tmp_path: Path) -> None:
    storage = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    other_pdf = Blob.of(make_pdf(["another report"]), "application/pdf")
    text = Blob.of(b"secret plans", "text/plain")
    parts = (
        image(RED, "../../etc/passwd"),  # a picture: its stored type's suffix
        DOC,  # "mill report.pdf"
        DocumentPart("mill report.pdf", "application/pdf", "another", other_pdf.sha256),
        DocumentPart("a/b\\..\\c.txt", "text/plain", "x", text.sha256),
        DocumentPart("..", "text/plain", "x", text.sha256),  # same bytes: the same file
        DocumentPart(".hidden \u202egpj.exe", "application/pdf", "x", PDF.sha256),
    )
    try:
        await storage.append(
            "m",
            "r",
            UserMessage(content="Files", attachments=parts),
            blobs=[RED, PDF, other_pdf, text],
        )
        await storage.append("m", "r", UserMessage(content="The same report", attachments=(DOC,)))
        await storage.append(
            "n", "r", UserMessage(content="Red again", attachments=(image(RED, "red.png"),))
        )
        out = tmp_path / "my chats.md"
        report = await export_conversations(storage, out, "markdown")
    finally:
        await storage.close()
    folder = tmp_path / "my chats_files"
    assert report.folder == folder and report.files == 4
    written = {p.name: p.read_bytes() for p in folder.iterdir()}
    # each original once, under a safe name: no separator, no "..", nothing hidden
    assert written == {
        "passwd.png": RED.data,
        "mill report.pdf": PDF.data,
        "mill report (2).pdf": other_pdf.data,
        "c.txt": text.data,
    }
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in folder.iterdir())
    markdown = out.read_text(encoding="utf-8")
    assert (
        "- Picture: [../../etc/passwd](my%20chats_files/passwd.png) \\(4×3\\)" in markdown
    )
    assert "- Document: [mill report.pdf](my%20chats_files/mill%20report.pdf) \\(2 pages\\)" in (
        markdown
    )
    assert "(my%20chats_files/mill%20report%20%282%29.pdf)" in markdown
    assert "- Document: [..](my%20chats_files/c.txt)" in markdown
    # the same bytes are the same file, in every message and conversation
    assert markdown.count("(my%20chats_files/mill%20report.pdf)") == 3
    assert markdown.count("(my%20chats_files/passwd.png)") == 2
    # every link resolves to a written file inside the folder
    for address in re.findall(r"\]\((my%20chats_files/[^)\s]+)\)", markdown):
        from urllib.parse import unquote

        path = (tmp_path / unquote(address)).resolve()
        assert path.parent == folder.resolve() and path.is_file(), address
    # links only, never an image or raw HTML a viewer would load
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(markdown)
    kinds = {t.type for tok in tokens for t in (tok, *(tok.children or ()))}
    assert "image" not in kinds and "html_inline" not in kinds
    assert leftovers(tmp_path) == []


async def test_markdown_folder_replaces_an_earlier_one_and_is_not_made_without_attachments(
    source: SQLiteSessionStorage, tmp_path: Path
) -> None:
    out = tmp_path / "out.md"
    folder = tmp_path / "out_files"
    folder.mkdir()
    (folder / "stale.txt").write_text("from an earlier export")
    await export_conversations(source, out, "markdown", ["a"])
    assert {p.name for p in folder.iterdir()} == {"shot.png", "mill report.pdf"}
    assert leftovers(tmp_path) == []
    plain = SQLiteSessionStorage(tmp_path / "plain.sqlite3")
    try:
        await plain.append("p", "r", UserMessage(content="no files"))
        report = await export_conversations(plain, tmp_path / "plain.md", "markdown")
    finally:
        await plain.close()
    assert report.folder is None and report.files == 0
    assert not (tmp_path / "plain_files").exists()


async def test_a_failed_markdown_export_leaves_no_folder(
    source: SQLiteSessionStorage, tmp_path: Path
) -> None:
    """A file (not a folder) already holds the folder's name: the export fails, and neither
    the file, the target nor a temporary folder is changed or left."""
    (tmp_path / "out_files").write_text("mine")
    with pytest.raises(ArchiveError) as caught:
        await export_conversations(source, tmp_path / "out.md", "markdown")
    assert caught.value.key == "archive.cannot_write"
    assert (tmp_path / "out_files").read_text() == "mine"
    assert not (tmp_path / "out.md").exists()
    assert leftovers(tmp_path) == []
