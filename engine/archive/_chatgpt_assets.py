"""The pictures of a ChatGPT export zip: found by their ``asset_pointer``, read within limits.

ChatGPT's conversations name an uploaded picture by an asset pointer
(``"file-service://file-AbC123"``, or ``"sediment://file_00000000abc"`` in newer exports); the
zip holds its bytes as a file whose name starts with that id (``file-AbC123-IMG_1234.jpeg``,
at the root or in a folder). `ZipAssets.read` finds that file and reads its bytes, never
extracting anything to disk, and refuses what could hurt:

* a member whose name is absolute, holds ``..``, or is a link, is never used (nothing is
  written to disk, but such a name means the zip was not made by ChatGPT);
* a member larger than `MAX_PICTURE_BYTES` as declared, or that inflates more than
  `MAX_RATIO` times its compressed size (a zip bomb), is not read; the bytes are read in
  chunks and reading stops past the limit whatever the header said;
* a conversation's pictures together are read up to `MAX_CONVERSATION_PICTURE_BYTES`.

A picture refused or not found is counted by the reader as not found (a placeholder line says
so where it was). What is read is still only bytes: `engine.archive.importer` prepares each
picture as an attached one is (`engine.attach.prepare_image`, in a child process: oriented,
metadata stripped, downscaled, decompression bombs refused).
"""

from __future__ import annotations

import re
import stat
import zipfile
import zlib

from ..attach import MAX_FILE_BYTES

__all__ = ["MAX_CONVERSATION_PICTURE_BYTES", "MAX_PICTURE_BYTES", "MAX_RATIO", "ZipAssets"]

#: the largest picture read from an export (the largest file that can be attached)
MAX_PICTURE_BYTES = MAX_FILE_BYTES
#: the most a picture's member may inflate (pictures are compressed already: ~1x)
MAX_RATIO = 100
#: the pictures of one conversation, together
MAX_CONVERSATION_PICTURE_BYTES = 256 * 1024 * 1024
_CHUNK = 1 << 16

#: the id an asset pointer names, and the start of the file name that holds it
_ASSET_ID = re.compile(r"file[-_][A-Za-z0-9]+")


def asset_id(pointer: str) -> str | None:
    """The file id of an asset pointer (``file-service://file-AbC123`` → ``file-AbC123``)."""
    found = _ASSET_ID.fullmatch(pointer.split("://", 1)[-1].strip())
    return found.group(0) if found else None


def _safe(info: zipfile.ZipInfo) -> bool:
    name = info.filename.replace("\\", "/")
    if info.is_dir() or name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return False
    if any(part == ".." for part in name.split("/")) or name.startswith("__MACOSX/"):
        return False
    return not stat.S_ISLNK(info.external_attr >> 16)


class ZipAssets:
    """The files of an export zip, by the asset id their names start with."""

    def __init__(self, archive: zipfile.ZipFile | None) -> None:
        self._archive = archive
        self._index: dict[str, zipfile.ZipInfo] | None = None

    def _by_id(self) -> dict[str, zipfile.ZipInfo]:
        if self._index is None:  # built on the first picture: a zip without any pays nothing
            self._index = {}
            for info in self._archive.infolist() if self._archive is not None else ():
                if not _safe(info):
                    continue
                found = _ASSET_ID.match(info.filename.replace("\\", "/").rsplit("/", 1)[-1])
                if found:
                    self._index.setdefault(found.group(0), info)
        return self._index

    def read(self, asset: str, budget: int) -> bytes | None:
        """The bytes of the file holding `asset`, or None: not in the zip, refused (see the
        module), or more than `budget` bytes (what the conversation may still read)."""
        info = self._by_id().get(asset)
        if info is None or self._archive is None:
            return None
        limit = min(MAX_PICTURE_BYTES, budget)
        if info.file_size > limit:
            return None
        if info.file_size > _CHUNK and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            return None
        chunks: list[bytes] = []
        size = 0
        try:
            with self._archive.open(info) as member:
                while chunk := member.read(_CHUNK):
                    size += len(chunk)
                    if size > limit:  # the header lied: stop here
                        return None
                    chunks.append(chunk)
        except (
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            OSError,
            RuntimeError,
            NotImplementedError,
        ):
            return None
        return b"".join(chunks)
