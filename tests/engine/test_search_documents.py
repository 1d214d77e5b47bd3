"""Search reads attached documents (schema version 8): a word only a document's extracted
text holds finds the user message that carries it, in a real SQLite file, from the moment
the message is saved; a version 7 file (the frozen dump) holding documents already is
indexed again by the migration; the index always agrees with the messages (FTS5's own
integrity check against its content).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine import AssistantMessage, Blob, DocumentPart, ImagePart, UserMessage
from engine.extensions import ROOT
from engine.storage import SQLiteSessionStorage
from engine.storage.migrations import SCHEMA_VERSION

from .test_storage_versions import build

DUMPS = Path(__file__).parent / "storage_helpers"
REPORT = Blob.of(b"%PDF-1.7 the quarterly report", "application/pdf")
TABLE = Blob.of("城市,人口\n上海,2487\n".encode(), "text/csv")
PICTURE = Blob.of(b"\x89PNG\r\n\x1a\n zephyr", "image/png")


def report(text: str = "Revenue of the Zephyrine mill rose 12%") -> DocumentPart:
    return DocumentPart("report.pdf", REPORT.media_type, text, REPORT.sha256, pages=3)


def index_agrees(path: Path) -> None:
    """FTS5's integrity check: the index holds exactly the text of every message row."""
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO message_index(message_index, rank) VALUES ('integrity-check', 1)")
    raw.close()


@pytest.fixture
async def storage(tmp_path: Path):
    store = SQLiteSessionStorage(tmp_path / "docs.sqlite3")
    try:
        yield store
    finally:
        await store.close()


async def test_a_word_only_in_a_document_finds_its_message(storage) -> None:
    message = UserMessage(content="Summarise this, please", attachments=(report(),))
    await storage.append("s", "r", message, blobs=[REPORT])
    await storage.append("s", "r", AssistantMessage(content="It rose."))
    [hit] = await storage.search_messages("zephyrine")
    assert (hit.session_id, hit.seq, hit.message_id) == ("s", 1, message.id)
    assert "Zephyrine" in hit.snippet  # the snippet shows the document's words
    assert [hit.snippet[a:b] for a, b in hit.marks] == ["Zephyrine"]
    # every term, the message's own text and its document's together
    assert [h.seq for h in await storage.search_messages("summarise mill")] == [1]
    assert await storage.search_messages("zephyrine nowhere") == []
    # the picture's bytes are never text: only documents are read
    await storage.append(
        "s",
        "r",
        UserMessage(
            content="a photo",
            attachments=(
                ImagePart("image/png", 1, 1, PICTURE.size, PICTURE.sha256, name="zephyr.png"),
            ),
        ),
        blobs=[PICTURE],
    )
    assert [h.seq for h in await storage.search_messages("zephyr")] == [1]
    index_agrees(storage.path)


async def test_short_words_of_a_document_are_found_by_the_scan(storage) -> None:
    table = DocumentPart("城市.csv", TABLE.media_type, TABLE.data.decode(), TABLE.sha256, rows=2)
    await storage.append(
        "zh", "r", UserMessage(content="看看这个表", attachments=(table,)), blobs=[TABLE]
    )
    assert [h.seq for h in await storage.search_messages("上海")] == [1]  # two characters
    assert [h.seq for h in await storage.search_messages("人口 2487")] == [1]


async def test_two_documents_and_a_branch_are_all_searched(storage) -> None:
    second = DocumentPart("notes.txt", "text/plain", "Meet at the obelisk", REPORT.sha256)
    first = UserMessage(content="one", attachments=(report(), second))
    await storage.append("s", "r", first, blobs=[REPORT])
    edited = UserMessage(content="two", attachments=(report("Only the granary"),))
    await storage.append("s", "r", edited, parent=ROOT)  # an edited first question
    assert [h.seq for h in await storage.search_messages("obelisk")] == [1]
    [granary] = await storage.search_messages("granary")
    assert granary.seq == 2 and granary.on_active_path
    [mill] = await storage.search_messages("zephyrine")
    assert mill.seq == 1 and not mill.on_active_path  # found on the other version too
    index_agrees(storage.path)


async def test_deleting_the_conversation_takes_its_documents_out_of_the_index(storage) -> None:
    await storage.append(
        "gone", "r", UserMessage(content="x", attachments=(report(),)), blobs=[REPORT]
    )
    await storage.append("kept", "r", UserMessage(content="the Zephyrine in passing"))
    await storage.delete_session("gone")
    assert [h.session_id for h in await storage.search_messages("zephyrine")] == ["kept"]
    index_agrees(storage.path)


async def test_bodies_the_trigger_cannot_read_never_refuse_a_write(tmp_path: Path) -> None:
    """Attachments that are not a list, parts that are not objects, a document whose text is
    not text: indexed as the message's own text only, never an error in the trigger."""
    path = tmp_path / "odd.sqlite3"
    store = SQLiteSessionStorage(path)
    await store.append("s", "r", UserMessage(content="first"))
    await store.close()
    bodies = [
        {"attachments": "zephyrine"},
        {"attachments": ["zephyrine", 3, None]},
        {"attachments": [{"kind": "document", "text": ["zephyrine"]}]},
        {"attachments": [{"kind": "image", "text": "zephyrine"}]},
    ]
    with sqlite3.connect(path) as raw:
        for seq, extra in enumerate(bodies, start=10):
            body = {
                "v": 1,
                "type": "user",
                "id": f"u{seq}",
                "created_at": 1.0,
                "content": f"odd {seq}",
                **extra,
            }
            raw.execute(
                "INSERT INTO messages (session_id, seq, request_id, id, type, created_at, body) "
                "VALUES ('s', ?, 'r', ?, 'user', 1.0, ?)",
                (seq, f"u{seq}", json.dumps(body)),
            )
    raw.close()
    store = SQLiteSessionStorage(path)
    try:
        assert await store.search_messages("zephyrine") == []
        assert len(await store.search_messages("odd")) == 4
    finally:
        await store.close()
    index_agrees(path)


async def test_a_version_7_file_holding_documents_is_indexed_again(tmp_path: Path) -> None:
    """The frozen version 7 dump, given a message with a document the way version 7 wrote it
    (its index then read only the message's text): opened, the migration indexes the
    document, the other messages stay found, and new messages are indexed the new way."""
    path = tmp_path / "v7.sqlite3"
    build(DUMPS / "schema_v7.sql", path)
    body = {
        "v": 1,
        "type": "user",
        "id": "u8",
        "created_at": 1764400007.0,
        "content": "Look at the report",
        "attachments": [
            {
                "kind": "document",
                "name": "report.pdf",
                "media_type": "application/pdf",
                "pages": 3,
                "text": "Revenue of the Zephyrine mill",
                "blob": REPORT.sha256,
            }
        ],
    }
    with sqlite3.connect(path) as raw:
        raw.execute(
            "INSERT INTO blobs VALUES (?, ?, ?, ?)",
            (REPORT.sha256, REPORT.data, REPORT.size, REPORT.media_type),
        )
        raw.execute(
            "INSERT INTO messages (session_id, seq, request_id, id, type, created_at, body, "
            "parent_seq) VALUES ('chat-1', 8, 'req-2', 'u8', 'user', 1764400007.0, ?, 7)",
            (json.dumps(body),),
        )
        # as version 7 indexed it: the message's own text only
        assert raw.execute(
            "SELECT COUNT(*) FROM message_index WHERE message_index MATCH '\"zephyrine\"'"
        ).fetchone() == (0,)
    raw.close()
    storage = SQLiteSessionStorage(path)
    try:
        [hit] = await storage.search_messages("zephyrine")
        assert (hit.session_id, hit.seq) == ("chat-1", 8)
        assert [h.seq for h in await storage.search_messages("files")] == [4, 1]
        await storage.append(
            "chat-1", "r", UserMessage(content="again", attachments=(report("the granary ledger"),))
        )
        assert [h.seq for h in await storage.search_messages("granary")] == [9]
    finally:
        await storage.close()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    raw.close()
    index_agrees(path)
