"""ChatGPT's export zip brings its pictures in (`engine.archive._chatgpt_assets`,
`engine.archive._pictures`): a realistic zip built here — ``conversations.json`` beside the
uploaded pictures named after their ids (``file-…-IMG_2041.jpeg`` at the root, a newer
``file_…`` one in a user folder), ChatGPT's other files, a picture it does not hold, a zip
bomb, a member whose name climbs out of the archive and a picture that is a decompression
bomb. Imported into a real SQLite file through `import_file`; the pictures are prepared as
attached ones (the phone photo's GPS position is gone from the stored bytes).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from engine.archive import import_file
from engine.archive._chatgpt_assets import MAX_RATIO, asset_id
from engine.messages import UserMessage
from engine.storage.sqlite import SQLiteSessionStorage

from .attach_helpers import bomb_png, photo_with_gps


def _node(nid: str, parent: str | None, children: list[str], message: Any) -> dict[str, Any]:
    return {"id": nid, "parent": parent, "children": children, "message": message}


def _message(nid: str, role: str, parts: list[Any], at: float, **extra: Any) -> dict[str, Any]:
    return {
        "id": nid,
        "author": {"role": role, "name": extra.pop("name", None), "metadata": {}},
        "create_time": at,
        "content": {"content_type": "multimodal_text", "parts": parts},
        "status": "finished_successfully",
        "metadata": {},
        "recipient": "all",
        **extra,
    }


def _picture(pointer: str, width: int, height: int) -> dict[str, Any]:
    return {
        "content_type": "image_asset_pointer",
        "asset_pointer": pointer,
        "size_bytes": 1234,
        "width": width,
        "height": height,
        "fovea": None,
        "metadata": None,
    }


def _png(size: tuple[int, int], colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


def _conversations() -> list[dict[str, Any]]:
    t = 1_717_000_000.0
    mapping = {
        "root": _node("root", None, ["u1"], None),
        "u1": _node(
            "u1",
            "root",
            ["a1"],
            _message(
                "u1",
                "user",
                [
                    _picture("file-service://file-Ph0to2041xYz", 400, 200),
                    "Where was this photo taken?",
                ],
                t + 1,
            ),
        ),
        "a1": _node(
            "a1",
            "u1",
            ["u2"],
            _message(
                "a1",
                "assistant",
                ["It looks like Paris."],
                t + 2,
                metadata={"model_slug": "gpt-4o"},
            ),
        ),
        "u2": _node(
            "u2",
            "a1",
            ["a2"],
            _message(
                "u2",
                "user",
                [
                    _picture("sediment://file_00000000a1b2c3d4e5f6", 64, 32),  # newer exports
                    _picture("file-service://file-NotInZip99", 800, 600),  # its file is missing
                    _picture("file-service://file-B0mbZip1", 10, 10),  # a zip bomb member
                    _picture("file-service://file-Escape77", 10, 10),  # only under "../"
                    _picture("file-service://file-PixelB0mb", 100_000, 100_000),  # a bomb PNG
                    "And these?",
                ],
                t + 3,
            ),
        ),
        "a2": _node("a2", "u2", ["u3"], _message("a2", "assistant", ["A green strip."], t + 4)),
        # only a picture, no words: still a message
        "u3": _node(
            "u3",
            "a2",
            ["t1"],
            _message("u3", "user", [_picture("file-service://file-Ph0to2041xYz", 400, 200)], t + 5),
        ),
        # a picture the tool made: not the person's, a placeholder as before
        "t1": _node(
            "t1",
            "u3",
            [],
            _message(
                "t1",
                "tool",
                [_picture("sediment://file_dalle000", 1024, 1024)],
                t + 6,
                name="dalle.text2im",
            ),
        ),
    }
    return [
        {
            "title": "Photos from the trip",
            "create_time": t,
            "update_time": t + 6,
            "mapping": mapping,
            "current_node": "t1",
            "conversation_id": "conv-photos",
            "default_model_slug": "gpt-4o",
        }
    ]


def _export_zip(path: Path) -> dict[str, bytes]:
    photo = photo_with_gps()
    strip = _png((64, 32), (20, 200, 40))
    files = {
        "conversations.json": json.dumps(_conversations()).encode(),
        "chat.html": b"<html><body>ChatGPT's own page</body></html>",
        "message_feedback.json": b"[]",
        "user.json": b'{"id": "user-abc"}',
        "file-Ph0to2041xYz-IMG_2041.jpeg": photo,
        "user-abc/file_00000000a1b2c3d4e5f6-5d2c9a.png": strip,
        "../file-Escape77-outside.png": strip,
        "file-PixelB0mb-huge.png": bomb_png(),
        "file_dalle000-cat.webp": strip,
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 5, 29, 12, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
        # 64 MiB of zeros: inflates about a thousand times
        archive.writestr("file-B0mbZip1-zeros.png", bytes(64 * 1024 * 1024))
    return files


@pytest.fixture
async def storage(tmp_path: Path) -> Any:
    s = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    yield s
    await s.close()


async def test_a_chatgpt_zip_brings_its_pictures_and_counts_the_missing(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    path = tmp_path / "chatgpt-export.zip"
    _export_zip(path)
    with zipfile.ZipFile(path) as archive:  # the bomb is what it claims to be
        bomb = archive.getinfo("file-B0mbZip1-zeros.png")
        assert bomb.file_size > MAX_RATIO * bomb.compress_size
    report = await import_file(storage, path)
    assert (report.imported, report.skipped) == (1, ())
    # the photo (twice: one file, one blob) and the strip came; the missing one, the zip
    # bomb, the escaped one and the pixel bomb did not
    assert (report.pictures, report.pictures_missing) == (3, 4)
    [sid] = [s.id for s in await storage.list_sessions()]
    u1, _, u2, _, u3, tool = await storage.load(sid)
    assert isinstance(u1, UserMessage) and isinstance(u2, UserMessage)
    [photo] = u1.attachments
    assert u1.content == "Where was this photo taken?"
    assert photo.name == "file-Ph0to2041xYz.jpg" and (photo.width, photo.height) == (200, 400)
    stored = await storage.read_blob(photo.blob)
    assert stored is not None and stored.media_type == photo.media_type
    with Image.open(io.BytesIO(stored.data)) as image:
        assert image.size == (200, 400)  # turned upright by its orientation, as attached
        assert image.getexif().get_ifd(0x8825) == {}
    assert b"GPS" not in stored.data and b"PhoneMaker" not in stored.data
    [strip] = u2.attachments
    assert (strip.width, strip.height) == (64, 32)
    assert u2.content == (
        "And these?\n\n"
        "[Image not found in the export: file-NotInZip99 (800×600)]\n"
        "[Image not found in the export: file-B0mbZip1 (10×10)]\n"
        "[Image not found in the export: file-Escape77 (10×10)]\n\n"
        "[Image not imported: file-PixelB0mb (it could not be read)]"
    )
    assert isinstance(u3, UserMessage) and u3.attachments[0].blob == photo.blob
    assert "[Image not imported: file_dalle000 (1024×1024)]" in tool.content
    # one row of bytes for the photo sent twice, and one for the strip
    assert len({part.blob for m in (u1, u2, u3) for part in m.attachments}) == 2


def test_asset_pointers_name_the_file_ids() -> None:
    assert asset_id("file-service://file-Ph0to2041xYz") == "file-Ph0to2041xYz"
    assert asset_id("sediment://file_00000000a1b2c3") == "file_00000000a1b2c3"
    assert asset_id("file-service://../../etc/passwd") is None
    assert asset_id("") is None
