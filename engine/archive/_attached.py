"""Attachments in exports and imports: their bytes as JSON, as ``data:`` URLs, as files.

* **JSON** (``docs/export-format.md``, version 2): a conversation's ``"blobs"`` list holds the
  bytes its messages refer to, each once, keyed by SHA-256, as base64 in pieces of at most
  `BASE64_PIECE` characters (a string of an export is read up to 16 MB; a document attached
  may be larger). `blob_to_json` writes an entry, `blobs_from_json` reads a conversation's
  list back and checks every byte against its reference.
* **HTML**: a picture as an ``<img>`` whose source is a ``data:`` URL of the stored bytes
  (`image_data_url`), only for the picture types a browser shows and the page's
  Content-Security-Policy allows (``img-src data:``).
* **Markdown**: the originals are written to a folder beside the file, each under a safe
  name (`FileNames`: no path separator, no ``..``, nothing hidden, collisions numbered).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from ..attachments import Attachment, Blob, ImagePart
from ..messages import UserMessage
from ._sink import Folder

__all__ = [
    "BASE64_PIECE",
    "BlobProblem",
    "FileNames",
    "blob_to_json",
    "blobs_from_json",
    "describe_part",
    "part_details",
    "html_attachments",
    "image_data_url",
    "markdown_attachments",
]

#: characters of base64 per piece of a blob's ``"data"`` (1 MiB; 786,432 bytes each)
BASE64_PIECE = 1024 * 1024
_RAW_PIECE = BASE64_PIECE // 4 * 3

#: the picture types an export embeds (what `engine.attach.prepare_image` writes)
_SHOWN_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})


class BlobProblem(Exception):
    """What in a conversation's blobs cannot be accepted (an English phrase)."""


def blob_to_json(blob: Blob) -> dict[str, Any]:
    """The JSON entry of one blob: its reference, type, size and bytes in base64 pieces."""
    data = blob.data
    pieces = [
        base64.b64encode(data[start : start + _RAW_PIECE]).decode("ascii")
        for start in range(0, len(data), _RAW_PIECE)
    ]
    return {"sha256": blob.sha256, "media_type": blob.media_type, "size": blob.size, "data": pieces}


def blobs_from_json(raw: Any, wanted: Iterable[str]) -> tuple[Blob, ...]:
    """The blobs of a conversation's ``"blobs"`` list that its messages refer to (`wanted`).

    Every entry is checked: its bytes must decode and have the SHA-256 it names; every
    reference in `wanted` must have an entry. Entries no message refers to are left out (a
    store keeps no bytes nothing refers to).

    Raises:
        BlobProblem: a reference without bytes, bytes that are not what their reference
            names, an entry that is not one.
    """
    entries = raw if raw is not None else []
    if not isinstance(entries, list):
        raise BlobProblem('its "blobs" is not a list')
    need = dict.fromkeys(wanted)
    found: dict[str, Blob] = {}
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise BlobProblem('an entry of its "blobs" is not an object')
        ref = entry.get("sha256")
        if not isinstance(ref, str):
            raise BlobProblem('an entry of its "blobs" has no "sha256"')
        if ref not in need or ref in found:
            continue
        media_type = entry.get("media_type")
        pieces = entry.get("data")
        if isinstance(pieces, str):
            pieces = [pieces]
        if not isinstance(media_type, str) or not isinstance(pieces, list):
            raise BlobProblem(f"the attachment {ref[:12]} has no media type or no data")
        try:
            data = b"".join(base64.b64decode(piece, validate=True) for piece in pieces)
        except (TypeError, ValueError, binascii.Error) as exc:
            raise BlobProblem(f"the bytes of attachment {ref[:12]} are not base64") from exc
        if hashlib.sha256(data).hexdigest() != ref:
            raise BlobProblem(
                f"the bytes given for attachment {ref[:12]} are not the bytes its reference names"
            )
        found[ref] = Blob(ref, data, media_type)
    missing = [ref for ref in need if ref not in found]
    if missing:
        raise BlobProblem(
            f"an attachment ({missing[0][:12]}) is referred to but its bytes are not in the file"
        )
    return tuple(found[ref] for ref in need)


def image_data_url(part: ImagePart, blob: Blob | None) -> str | None:
    """The ``data:`` URL of a picture's stored bytes, or None when they are missing or not
    a type a page shows (the media type is the stored one, never the file name's)."""
    if blob is None or blob.media_type not in _SHOWN_TYPES:
        return None
    return f"data:{blob.media_type};base64," + base64.b64encode(blob.data).decode("ascii")


def describe_part(part: Attachment) -> str:
    """A part in a few words, for a reading format: ``report.pdf (3 pages)``."""
    default = "picture" if isinstance(part, ImagePart) else "document"
    details = part_details(part)
    return (_one_line(part.name) or default) + (f" {details}" if details else "")


def part_details(part: Attachment) -> str:
    """A part's size in words: ``(4×3)`` for a picture, ``(3 pages)``, ``(159 rows)``."""
    if isinstance(part, ImagePart):
        return f"({part.width}×{part.height})"
    counts = []
    if part.pages is not None:
        counts.append(f"{part.pages:,} page" + ("" if part.pages == 1 else "s"))
    if part.rows is not None:
        counts.append(f"{part.rows:,} row" + ("" if part.rows == 1 else "s"))
    return f"({', '.join(counts)})" if counts else ""


def html_attachments(message: UserMessage, blobs: Mapping[str, Blob]) -> str:
    """A user message's pictures, embedded as ``data:`` URLs of their stored bytes (the only
    images the page's policy lets load), then its documents listed by name and pages; every
    name escaped, shown as text."""
    parts = []
    documents = []
    for part in message.attachments:
        if isinstance(part, ImagePart):
            url = image_data_url(part, blobs.get(part.blob))
            caption = html.escape(describe_part(part))
            if url is None:
                parts.append(f'<p class="note">[picture: {caption}; its bytes are missing]</p>\n')
            else:
                parts.append(
                    f'<figure><img src="{url}" alt="{html.escape(part.name or "picture")}" '
                    f'width="{part.width}" height="{part.height}">'
                    f"<figcaption>{caption}</figcaption></figure>\n"
                )
        else:
            documents.append(f"<li>Document: {html.escape(describe_part(part))}</li>")
    if documents:
        parts.append('<ul class="documents">' + "".join(documents) + "</ul>\n")
    return "".join(parts)


def markdown_attachments(
    message: UserMessage, blobs: Mapping[str, Blob], names: FileNames, folder: Folder
) -> str:
    """A user message's attachments in Markdown: each original written into `folder` (once,
    under a safe name) and linked by a relative address (percent-encoded). Links, never
    images: a viewer that renders the file loads nothing by itself."""
    lines = []
    for part in message.attachments:
        name, new = names.name_for(part)
        blob = blobs.get(part.blob)
        if new and blob is not None:
            folder.write(name, blob.data)
        elif new:  # the bytes were missing from the database: said, never a dead link
            names.missing.add(part.blob)
        kind = "Picture" if isinstance(part, ImagePart) else "Document"
        label = _md_text(_one_line(part.name) or name)
        details = _md_text(part_details(part))
        if part.blob in names.missing:
            lines.append(f"- {kind}: {label} {details} (its bytes are missing)")
        else:
            address = quote(f"{folder.target.name}/{name}")
            lines.append(f"- {kind}: [{label}]({address}) {details}".rstrip())
    return "**Attached:**\n\n" + "\n".join(lines) + "\n\n"


def _md_text(text: str) -> str:
    """A name as Markdown text that shows it as is: no tag, no link, no emphasis."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]()#!|~])", r"\\\1", text)


_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069\u200e\u200f]")


def _one_line(text: str) -> str:
    """A name on one line, without the bidirectional controls that would make it read other
    than it is (``report\u202efdp.exe``)."""
    return " ".join(_BIDI.sub("", text).split())


# Characters never in a written file's name: separators, controls, what Windows refuses, and
# the bidirectional controls that make a name read other than it is.
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|\u202a-\u202e\u2066-\u2069\u200e\u200f]')
_EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/webp": ".webp",
    "image/gif": ".gif",
    "application/pdf": ".pdf",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "text/csv": ".csv",
    "text/tab-separated-values": ".tsv",
    "application/json": ".json",
    "text/html": ".html",
}
_MAX_NAME = 120  # characters of a written name, its suffix included


class FileNames:
    """Safe, distinct file names for the originals written into one folder.

    A name keeps what it can of the attachment's own (a path's last component; letters,
    digits, spaces, single dots inside), loses path separators, control and bidirectional
    characters, runs of dots and leading dots (never ``..``, never hidden), is cut to `_MAX_NAME` characters, and gets a suffix from its media
    type when it has none. The same bytes get the same name; a second file under a name
    already given is numbered (``report (2).pdf``).
    """

    def __init__(self) -> None:
        self._by_ref: dict[str, str] = {}
        self._taken: set[str] = set()
        #: references whose bytes were not in the database (nothing written for them)
        self.missing: set[str] = set()

    def named(self, ref: str) -> bool:
        """True when the bytes of `ref` have a name already (written, or found missing)."""
        return ref in self._by_ref

    def name_for(self, part: Attachment) -> tuple[str, bool]:
        """The file name of `part`'s bytes and whether it is new (to be written)."""
        if part.blob in self._by_ref:
            return self._by_ref[part.blob], False
        stem, suffix = self._split(part)
        name = stem + suffix
        number = 2
        while name.casefold() in self._taken:
            name = f"{stem} ({number}){suffix}"
            number += 1
        self._taken.add(name.casefold())
        self._by_ref[part.blob] = name
        return name, True

    @staticmethod
    def _split(part: Attachment) -> tuple[str, str]:
        raw = unicodedata.normalize("NFC", part.name or "")
        # A name that is a path keeps its last real component ("../../etc/passwd": "passwd");
        # then nothing unsafe is left in it, no run of dots, no leading dot.
        components = [c for c in re.split(r"[/\\]", raw) if c.strip() not in ("", ".", "..")]
        cleaned = _UNSAFE.sub("_", components[-1] if components else "")
        cleaned = re.sub(r"\.{2,}", ".", cleaned).strip().lstrip(".").strip()
        default = "picture" if isinstance(part, ImagePart) else "document"
        stem, dot, suffix = cleaned.rpartition(".")
        if not dot or not stem or not re.fullmatch(r"[A-Za-z0-9]{1,10}", suffix):
            stem, suffix = cleaned, _EXTENSIONS.get(part.media_type, ".bin")
        elif isinstance(part, ImagePart):  # re-encoded when attached: its type, not its name's
            suffix = _EXTENSIONS.get(part.media_type, ".bin")
        else:
            suffix = "." + suffix
        stem = stem.rstrip(". ") or default
        return stem[: _MAX_NAME - len(suffix) - 6], suffix
