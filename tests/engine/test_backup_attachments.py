"""Backups hold attachments' bytes (they live in the conversation file, schema 7): a backup
taken with the app running, the conversation then deleted (its bytes with it), the backup
restored — the picture's bytes and the document's original come back byte for byte. Real
SQLite files, a real picture made by Pillow; the file grows by the bytes attached, about.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
from pathlib import Path

import pytest
from PIL import Image

from engine import Blob, DocumentPart, ImagePart, SQLiteSessionStorage, UserMessage
from engine.storage.backup import backup_database, restore_database

from .attach_helpers import make_pdf

pytestmark = pytest.mark.timeout(60)


def noisy_png(side: int = 512) -> Blob:
    """A picture that does not compress: its stored size is about its pixels' bytes."""
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, "PNG")
    return Blob.of(out.getvalue(), "image/png")


async def test_backup_then_restore_keeps_a_pictures_bytes(tmp_path: Path) -> None:
    data = tmp_path / "continuo.sqlite3"
    picture = noisy_png()
    pdf = Blob.of(make_pdf(["Zephyrine mill, page one"]), "application/pdf")
    parts = (
        ImagePart("image/png", 512, 512, picture.size, picture.sha256, name="noise.png"),
        DocumentPart("mill.pdf", pdf.media_type, "Zephyrine mill, page one", pdf.sha256, pages=1),
    )
    storage = SQLiteSessionStorage(data)
    try:
        await storage.append("plain", "r", UserMessage(content="no attachments"))
        await storage.close()
        before = await asyncio.to_thread(lambda: data.stat().st_size)
        storage = SQLiteSessionStorage(data)
        await storage.append(
            "pics", "r", UserMessage(content="look", attachments=parts), blobs=[picture, pdf]
        )
        backup = tmp_path / "backup.sqlite3"
        await backup_database(storage, backup)
        # the file grew by the bytes attached, give or take a few pages (bookkeeping, and
        # free pages the earlier file held)
        grown = await asyncio.to_thread(lambda: backup.stat().st_size) - before
        attached = picture.size + pdf.size
        assert abs(grown - attached) <= 64 * 1024, (grown, attached)
        await storage.delete_session("pics")  # the last reference: the bytes go too
        assert await storage.read_blob(picture.sha256) is None
    finally:
        await storage.close()
    await asyncio.to_thread(restore_database, data, backup)
    storage = SQLiteSessionStorage(data)
    try:
        [message] = await storage.load("pics")
        assert isinstance(message, UserMessage) and message.attachments == parts
        restored = await storage.read_blob(picture.sha256)
        assert restored is not None
        assert hashlib.sha256(restored.data).digest() == hashlib.sha256(picture.data).digest()
        assert restored.data == picture.data and restored.media_type == "image/png"
        assert await storage.read_blob(pdf.sha256) == pdf
        [hit] = await storage.search_messages("zephyrine")  # the document's words, indexed
        assert hit.session_id == "pics"
    finally:
        await storage.close()
