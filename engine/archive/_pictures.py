"""Pictures an import brought along, prepared as attached ones before the conversation is stored.

A reader of another program's export (`engine.archive.chatgpt`) hands over the bytes of the
pictures its user messages showed (`ImportedConversation.pictures`), as the source held them.
`attach_pictures` prepares each exactly as a picture the person attaches
(`engine.attach.prepare_image`, in a child process limited in time and memory: oriented,
every piece of metadata stripped, downscaled, decompression bombs refused), adds it to its
message's attachments and its bytes to the conversation's blobs, so the conversation is then
stored whole in one transaction like any other. A picture that cannot be prepared (not a
picture, damaged, a bomb) is counted as not found and a placeholder line says so in its
message.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

from ..attach import prepare_image
from ..attachments import Attachment, Blob
from ..errors import AttachmentError
from ..messages import UserMessage
from ._thread import in_thread
from .records import ImportedConversation, ImportedMessage

__all__ = ["attach_pictures"]

#: the suffix a picture's bytes are prepared under (the intake checks the bytes against it)
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", ".png"),
    (b"\xff\xd8\xff", ".jpg"),
    (b"GIF87a", ".gif"),
    (b"GIF89a", ".gif"),
)


def _suffix(data: bytes) -> str | None:
    for magic, suffix in _MAGIC:
        if data.startswith(magic):
            return suffix
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    return None


def _write(folder: str, name: str, data: bytes) -> Path:
    path = Path(folder) / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(data)
    return path


async def attach_pictures(conversation: ImportedConversation) -> ImportedConversation:
    """`conversation` with its pictures prepared and attached (see the module); the same
    object when it brought none."""
    if not conversation.pictures:
        return conversation
    parts: dict[int, list[Attachment]] = {}
    failed: dict[int, list[str]] = {}
    blobs: dict[str, Blob] = {blob.sha256: blob for blob in conversation.blobs}
    with tempfile.TemporaryDirectory(prefix="continuo-import-") as folder:
        for number, picture in enumerate(conversation.pictures):
            suffix = _suffix(picture.data)
            asset = picture.source.split("://", 1)[-1][:80] or "picture"
            if suffix is None:
                failed.setdefault(picture.seq, []).append(asset)
                continue
            name = f"{number}-{asset}{suffix}"
            path = await in_thread(
                _write, folder, "".join(c for c in name if c not in "/\\"), picture.data
            )
            try:
                prepared = await prepare_image(path)
            except AttachmentError:
                failed.setdefault(picture.seq, []).append(asset)
                continue
            part = dataclasses.replace(prepared.part, name=asset + suffix)
            parts.setdefault(picture.seq, []).append(part)
            blobs.setdefault(prepared.blob.sha256, prepared.blob)
    messages = []
    for item in conversation.messages:
        message = item.message
        if isinstance(message, UserMessage) and (item.seq in parts or item.seq in failed):
            lines = [
                f"[Image not imported: {asset} (it could not be read)]"
                for asset in failed.get(item.seq, [])
            ]
            content = "\n\n".join(p for p in (message.content, "\n".join(lines)) if p.strip())
            message = dataclasses.replace(
                message,
                content=content,
                attachments=(*message.attachments, *parts.get(item.seq, [])),
            )
            item = ImportedMessage(item.seq, item.parent_seq, message, item.request_id)
        messages.append(item)
    unread = sum(len(v) for v in failed.values())
    return dataclasses.replace(
        conversation,
        messages=tuple(messages),
        blobs=tuple(blobs.values()),
        pictures=(),
        placeholders=conversation.placeholders + unread,
        missing_pictures=conversation.missing_pictures + unread,
    )
