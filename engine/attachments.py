"""Attachments: the pictures and documents a user message carries, and the bytes behind them.

A `UserMessage` holds an ordered tuple of parts beside its text: an `ImagePart` (a picture
as prepared for models: its media type, pixel size and byte size) or a `DocumentPart` (a
file's extracted text, exactly what the model reads, with its name, media type and pages or
rows). Neither holds bytes: each names them by ``blob``, the SHA-256 of the bytes in hex.
The bytes travel beside the message as a `Blob` (`engine.store.SessionStore.append`'s
``blobs``) and are stored once, content-addressed, in the message's own transaction — so a
picture attached to many messages, or kept by many branches, is one row, and a message is
never stored without its bytes.

JSON form of a part (inside the message's ``"attachments"`` list; absent when there are
none, so a message without attachments is written as before)::

    {"kind": "image", "media_type": "image/png", "width": 640, "height": 480,
     "size": 12345, "blob": "<sha256 hex>", "name": "screenshot.png"}
    {"kind": "document", "name": "report.pdf", "media_type": "application/pdf",
     "pages": 3, "text": "...", "blob": "<sha256 hex>"}

``name`` of an image, ``pages`` and ``rows`` of a document are written only when set.
Reading refuses a part that is not one of these (`ValueError`: a damaged row is reported as
such by the storage, never guessed at).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .text import clean

__all__ = [
    "Attachment",
    "AttachmentKind",
    "Blob",
    "DocumentPart",
    "ImagePart",
    "attachment_from_dict",
    "attachment_to_dict",
    "blob_refs",
    "check_blobs",
]

_SHA256 = re.compile(r"[0-9a-f]{64}")


class AttachmentKind(StrEnum):
    """What a part is, as its JSON's ``kind`` says."""

    IMAGE = "image"
    DOCUMENT = "document"


def _check_ref(ref: Any) -> str:
    if not isinstance(ref, str) or not _SHA256.fullmatch(ref):
        raise ValueError(f"a blob reference is a SHA-256 in lower-case hex, not {ref!r}")
    return ref


def _check_count(name: str, value: Any, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} is a count (an integer of 0 or more), not {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class ImagePart:
    """A picture as it goes to a model: already oriented, stripped and re-encoded."""

    media_type: str  #: of the stored bytes ("image/jpeg", "image/png", "image/webp")
    width: int  #: in pixels
    height: int
    size: int  #: the stored bytes' length
    blob: str  #: SHA-256 (hex) of the stored bytes
    name: str = ""  #: the file name it came from ("" for a pasted picture)

    def __post_init__(self) -> None:
        object.__setattr__(self, "media_type", clean(str(self.media_type)))
        object.__setattr__(self, "name", clean(str(self.name)))
        for name in ("width", "height", "size"):
            _check_count(name, getattr(self, name))
        _check_ref(self.blob)

    @property
    def kind(self) -> AttachmentKind:
        return AttachmentKind.IMAGE


@dataclass(frozen=True, slots=True)
class DocumentPart:
    """A document: its text as extracted when attached (what the model reads, whole) and
    a reference to its original bytes."""

    name: str  #: the file name it came from
    media_type: str  #: of the original ("application/pdf", "text/csv", ...)
    text: str  #: the extracted text
    blob: str  #: SHA-256 (hex) of the original bytes
    pages: int | None = None  #: a paged document's page count
    rows: int | None = None  #: a table's row count (CSV/TSV)

    def __post_init__(self) -> None:
        for name in ("name", "media_type", "text"):
            object.__setattr__(self, name, clean(str(getattr(self, name))))
        _check_count("pages", self.pages, optional=True)
        _check_count("rows", self.rows, optional=True)
        _check_ref(self.blob)

    @property
    def kind(self) -> AttachmentKind:
        return AttachmentKind.DOCUMENT


#: one part of a message's attachments
Attachment = ImagePart | DocumentPart


@dataclass(frozen=True, slots=True)
class Blob:
    """Bytes a message refers to, keyed by their SHA-256; made with `Blob.of`."""

    sha256: str
    data: bytes
    media_type: str

    def __post_init__(self) -> None:
        _check_ref(self.sha256)
        if hashlib.sha256(self.data).hexdigest() != self.sha256:
            raise ValueError("a blob's bytes do not have the SHA-256 it names")

    def __repr__(self) -> str:  # never the bytes
        return f"Blob({self.sha256[:12]}…, {len(self.data)} bytes, {self.media_type!r})"

    @classmethod
    def of(cls, data: bytes, media_type: str) -> Blob:
        """The blob of ``data``: its reference computed from the bytes."""
        return cls(hashlib.sha256(data).hexdigest(), bytes(data), media_type)

    @property
    def size(self) -> int:
        return len(self.data)


def attachment_to_dict(part: Attachment) -> dict[str, Any]:
    """The JSON form of one part (see the module)."""
    if isinstance(part, ImagePart):
        data: dict[str, Any] = {
            "kind": AttachmentKind.IMAGE.value,
            "media_type": part.media_type,
            "width": part.width,
            "height": part.height,
            "size": part.size,
            "blob": part.blob,
        }
        if part.name:
            data["name"] = part.name
        return data
    data = {"kind": AttachmentKind.DOCUMENT.value, "name": part.name, "media_type": part.media_type}
    if part.pages is not None:
        data["pages"] = part.pages
    if part.rows is not None:
        data["rows"] = part.rows
    data["text"] = part.text
    data["blob"] = part.blob
    return data


def _text_field(data: Mapping[str, Any], name: str, default: str | None = None) -> str:
    value = data.get(name, default)
    if not isinstance(value, str):
        raise ValueError(f"an attachment's {name} is text, not {value!r}")
    return value


def attachment_from_dict(data: Any) -> Attachment:
    """The part `attachment_to_dict` wrote.

    Raises:
        ValueError: ``data`` is not such a part (an unknown kind, a missing field).
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"an attachment is an object, not {type(data).__name__}")
    kind = data.get("kind")
    if kind == AttachmentKind.IMAGE:
        return ImagePart(
            media_type=_text_field(data, "media_type"),
            width=data.get("width"),  # type: ignore[arg-type]  # checked by the part
            height=data.get("height"),  # type: ignore[arg-type]
            size=data.get("size"),  # type: ignore[arg-type]
            blob=data.get("blob"),  # type: ignore[arg-type]
            name=_text_field(data, "name", ""),
        )
    if kind == AttachmentKind.DOCUMENT:
        return DocumentPart(
            name=_text_field(data, "name"),
            media_type=_text_field(data, "media_type"),
            text=_text_field(data, "text"),
            blob=data.get("blob"),  # type: ignore[arg-type]
            pages=data.get("pages"),
            rows=data.get("rows"),
        )
    raise ValueError(f"an attachment of kind {kind!r} is not one this version reads")


def blob_refs(parts: Iterable[Attachment]) -> list[str]:
    """The blob references of ``parts``, each once, in order."""
    return list(dict.fromkeys(part.blob for part in parts))


def check_blobs(parts: Iterable[Attachment], blobs: Iterable[Blob]) -> None:
    """Refuse bytes that none of ``parts`` refers to (a store is given only the bytes of
    the messages it stores: nothing it keeps is unreferenced).

    Raises:
        ValueError: a blob no part refers to.
    """
    wanted = set(blob_refs(parts))
    stray = [blob.sha256[:12] for blob in blobs if blob.sha256 not in wanted]
    if stray:
        raise ValueError(
            f"blobs {', '.join(stray)} are not referred to by the appended messages' attachments"
        )
