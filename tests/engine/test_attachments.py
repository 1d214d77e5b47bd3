"""Attachments as values: a user message's pictures and documents, and their lossless JSON.

A message without attachments keeps the JSON it had before attachments existed, byte for
byte (the frozen dumps' rows are the proof), and every stored message reads back unchanged.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

import pytest

from engine import (
    AttachmentKind,
    Blob,
    DocumentPart,
    ImagePart,
    UserMessage,
    message_from_dict,
    message_from_json,
    message_to_json,
)
from engine.messages import message_to_dict

DUMPS = sorted((Path(__file__).parent / "storage_helpers").glob("schema_v*.sql"))
PNG_REF = hashlib.sha256(b"png bytes").hexdigest()
PDF_REF = hashlib.sha256(b"%PDF-1.7").hexdigest()


def parts() -> tuple[ImagePart | DocumentPart, ...]:
    return (
        ImagePart("image/png", 640, 480, 9, PNG_REF, name="whiteboard.png"),
        DocumentPart("report.pdf", "application/pdf", "第一页\nPage one", PDF_REF, pages=2),
        DocumentPart("rows.csv", "text/csv", "a,b\n1,2\n", PDF_REF, rows=2),
        ImagePart("image/jpeg", 1, 1, 9, PNG_REF),
    )


def test_a_message_with_attachments_round_trips_in_order() -> None:
    message = UserMessage(id="u", created_at=1.5, content="look", attachments=parts())
    back = message_from_json(message_to_json(message))
    assert back == message
    assert isinstance(back, UserMessage)
    assert [p.kind for p in back.attachments] == [
        AttachmentKind.IMAGE,
        AttachmentKind.DOCUMENT,
        AttachmentKind.DOCUMENT,
        AttachmentKind.IMAGE,
    ]
    data = message_to_dict(message)
    assert data["attachments"][0] == {
        "kind": "image",
        "media_type": "image/png",
        "width": 640,
        "height": 480,
        "size": 9,
        "blob": PNG_REF,
        "name": "whiteboard.png",
    }
    assert data["attachments"][2]["rows"] == 2 and "pages" not in data["attachments"][2]


def test_a_message_without_attachments_keeps_its_exact_json() -> None:
    message = UserMessage(id="m1", created_at=1764400000.0, content="List the files")
    assert message_to_json(message) == (
        '{"v":1,"type":"user","id":"m1","created_at":1764400000.0,"content":"List the files"}'
    )
    assert message.attachments == ()


@pytest.mark.parametrize("dump", DUMPS, ids=[d.stem for d in DUMPS])
def test_every_stored_user_message_reads_and_writes_back_byte_identical(dump: Path) -> None:
    db = sqlite3.connect(":memory:")
    db.executescript(dump.read_text(encoding="utf-8"))
    bodies = [r[0] for r in db.execute("SELECT body FROM messages WHERE type = 'user'")]
    db.close()
    assert bodies
    for body in bodies:
        message = message_from_json(body)
        assert isinstance(message, UserMessage) and message.attachments == ()
        assert message_to_json(message) == body


@pytest.mark.parametrize(
    "part",
    [
        "not an object",
        {"kind": "video", "blob": PNG_REF},
        {"kind": "image", "media_type": "image/png", "width": 1, "height": 1, "size": 1},
        {
            "kind": "image",
            "media_type": "image/png",
            "width": -1,
            "height": 1,
            "size": 1,
            "blob": PNG_REF,
        },
        {
            "kind": "image",
            "media_type": "image/png",
            "width": True,
            "height": 1,
            "size": 1,
            "blob": PNG_REF,
        },
        {
            "kind": "image",
            "media_type": "image/png",
            "width": 1,
            "height": 1,
            "size": 1,
            "blob": PNG_REF.upper(),
        },
        {"kind": "document", "name": "a", "media_type": "text/plain", "blob": PDF_REF},
        {"kind": "document", "name": 3, "media_type": "text/plain", "text": "", "blob": PDF_REF},
    ],
)
def test_a_damaged_part_is_refused_not_guessed(part: object) -> None:
    data = {
        "v": 1,
        "type": "user",
        "id": "u",
        "created_at": 1.0,
        "content": "x",
        "attachments": [part],
    }
    with pytest.raises(ValueError):
        message_from_dict(data)


def test_attachments_that_are_not_a_list_are_refused() -> None:
    data = {
        "v": 1,
        "type": "user",
        "id": "u",
        "created_at": 1.0,
        "content": "x",
        "attachments": "oops",
    }
    with pytest.raises(ValueError, match="list"):
        message_from_dict(data)


def test_a_blob_is_named_by_its_bytes_and_never_shows_them() -> None:
    blob = Blob.of(b"secret picture bytes", "image/png")
    assert blob.sha256 == hashlib.sha256(b"secret picture bytes").hexdigest()
    assert blob.size == 20
    assert "secret" not in repr(blob) and re.search(r"20 bytes", repr(blob))
    with pytest.raises(ValueError, match="SHA-256"):
        Blob(PNG_REF, b"other bytes", "image/png")


def test_parts_are_frozen() -> None:
    part = parts()[0]
    with pytest.raises(AttributeError):
        part.width = 2  # type: ignore[misc]
