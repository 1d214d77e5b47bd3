"""What the File menu's report says of attachments, in the real window over a real SQLite file:
a Markdown export names the folder its originals went into, and an import of ChatGPT's export
zip counts the pictures it brought in and the ones it could not find.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from engine import Blob, ImagePart, SQLiteSessionStorage, UserMessage
from tests.ui.conftest import close_window
from tests.ui.test_archive_menu import _choose, _close_report, _export_drive, _trigger, _window
from ui.archive import Outcome
from ui.controller import DB_FILE_NAME

pytestmark = pytest.mark.timeout(120)


def _png(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (6, 4), colour).save(out, "PNG")
    return out.getvalue()


async def test_a_markdown_export_names_the_folder_of_originals(tmp_path, provider_server):
    data = tmp_path / "data"
    data.mkdir()
    red = Blob.of(_png((200, 0, 0)), "image/png")
    part = ImagePart("image/png", 6, 4, red.size, red.sha256, name="<b>red</b>.png")
    seeding = SQLiteSessionStorage(data / DB_FILE_NAME)
    try:
        message = UserMessage(content="What colour?", attachments=(part,))
        await seeding.append("s1", "seed", message, blobs=[red])
    finally:
        await seeding.close()
    window = await _window(data, provider_server)
    target = tmp_path / "out" / "chats.md"
    target.parent.mkdir()
    for _ in range(2):  # the second export replaces the first, folder and all
        _choose(window, target)
        _action, outcome, said = await _trigger(window, "export", _export_drive("all", "markdown"))
        assert outcome == Outcome.DONE, said
        text, details = _close_report(window)
        folder = target.parent / "chats_files"
        assert "1 conversation" in text
        assert f"originals (1) are in the folder {folder}" in details
        [original] = list(folder.iterdir())
        assert original.read_bytes() == red.data
    await close_window(window)


def _picture(pointer: str) -> dict[str, Any]:
    return {
        "content_type": "image_asset_pointer",
        "asset_pointer": pointer,
        "width": 6,
        "height": 4,
        "size_bytes": 100,
    }


def _chatgpt_zip(path: Path) -> None:
    user = {
        "id": "u1",
        "author": {"role": "user", "metadata": {}},
        "create_time": 1_717_000_001.0,
        "content": {
            "content_type": "multimodal_text",
            "parts": [
                _picture("file-service://file-Here1"),
                _picture("file-service://file-Gone2"),
                "Which is brighter?",
            ],
        },
        "status": "finished_successfully",
        "metadata": {},
    }
    conversation = {
        "title": "Two pictures",
        "create_time": 1_717_000_000.0,
        "update_time": 1_717_000_001.0,
        "mapping": {
            "root": {"id": "root", "parent": None, "children": ["u1"], "message": None},
            "u1": {"id": "u1", "parent": "root", "children": [], "message": user},
        },
        "current_node": "u1",
        "conversation_id": "conv-two",
    }
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("conversations.json", json.dumps([conversation]))
        archive.writestr("file-Here1-sunny.png", _png((250, 240, 10)))


async def test_a_chatgpt_import_counts_pictures_brought_in_and_missing(tmp_path, provider_server):
    window = await _window(tmp_path / "data", provider_server)
    export = tmp_path / "chatgpt.zip"
    _chatgpt_zip(export)
    _choose(window, export)
    action, outcome, said = await _trigger(window, "import")
    assert (action, outcome) == ("import", Outcome.DONE), said
    text, details = _close_report(window)
    assert "1 conversation" in text
    assert "Pictures brought in with their messages: 1." in details
    assert "did not hold or that could not be read: 1." in details
    # the missing picture is said once, not again among the other placeholders
    assert "could not be imported" not in details
    await close_window(window)
