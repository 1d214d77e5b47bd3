"""Preparing files to attach: pictures for vision models, documents as their text. No Qt.

`prepare_image(path)` returns the picture as it will be stored and sent — orientation
applied (EXIF), every piece of metadata stripped (a photo's GPS position, camera, times:
the bytes are re-encoded from the pixels alone), downscaled to `ImageTarget.long_side` and
re-encoded to fit `ImageTarget.max_bytes` (PNG for screenshots and transparency when it
fits, else WebP or JPEG). A picture over `MAX_IMAGE_PIXELS` (a decompression bomb: a
100,000 × 100,000 PNG of a few KB) is refused from its header; an animated one gives its
first frame, and `PreparedImage.frames` says how many it had.

`extract_document(path)` returns a document's text, whole, as the model will read it: PDF
(PDFium; pages joined by a form feed), plain text and code in any encoding
(charset-normalizer), Markdown, CSV/TSV (with the record count), JSON (checked), HTML (the
text it shows), Word DOCX (its paragraphs, by mammoth) and spreadsheets — XLSX, ODS —
every sheet as CSV under its name (python-calamine, with the row count). The original's
bytes come with it, to store beside the text.

Both are async and read nothing in this process but the file's bytes: every parser runs in
a child process limited in time and memory (`ChildLimits`, `engine.attach._child`), killed
when it overruns or when the caller's task is cancelled. Before anything is read, the file
is checked (`engine.attach._intake`): a link, FIFO, device or folder is refused, and so is a
file over `MAX_FILE_BYTES` (from its size alone) or whose bytes are not what its name says.
Every refusal is an `AttachmentError` with a sentence in English and Chinese.

The results carry the engine's values (`engine.attachments`): the `ImagePart` or
`DocumentPart` for the message and the `Blob` to store with it, in the same append.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..attachments import Blob, DocumentPart, ImagePart
from ..errors import AttachmentError
from ._child import ChildLimits, run_child
from ._intake import KINDS, MAX_FILE_BYTES, read_checked

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_IMAGE_PIXELS",
    "ChildLimits",
    "ExtractedDocument",
    "ImageTarget",
    "PreparedImage",
    "extract_document",
    "prepare_image",
    "supported_suffixes",
]

#: the most pixels a picture may have to be decoded at all (64 million: 8,000 × 8,000)
MAX_IMAGE_PIXELS = 64_000_000

#: the child's operations each function reads files with
_PICTURE_OPS = frozenset({"image"})
_DOCUMENT_OPS = frozenset({"pdf", "text", "table", "json", "html", "docx", "sheet"})

#: the media types a prepared picture may be encoded as
IMAGE_FORMATS = ("image/jpeg", "image/png", "image/webp")


@dataclass(frozen=True, slots=True)
class ImageTarget:
    """What a picture is prepared for: the provider's largest side and size.

    The defaults fit every provider Continuo speaks to (Anthropic reads up to 8,000 pixels a
    side and 5 MB a picture, and resizes beyond 1,568; OpenAI's high detail works on 2,048 ×
    768; Ollama passes the bytes to the model): a long side of 2,048 pixels, 5 MB at most.
    """

    long_side: int = 2048
    max_bytes: int = 5 * 1024 * 1024
    formats: tuple[str, ...] = IMAGE_FORMATS  #: the media types it may be encoded as

    def __post_init__(self) -> None:
        if self.long_side < 1 or self.max_bytes < 1:
            raise ValueError("an image target's long side and size are positive")
        if not self.formats or not set(self.formats) <= set(IMAGE_FORMATS):
            raise ValueError(f"an image target's formats are among {IMAGE_FORMATS}")


@dataclass(frozen=True, slots=True)
class PreparedImage:
    """A picture ready to attach: the part for the message and the bytes to store."""

    part: ImagePart
    blob: Blob
    original_width: int  #: the picture's size as it was in the file (before orientation)
    original_height: int
    frames: int = 1  #: how many frames the file had; more than 1: only the first is kept

    @property
    def animated(self) -> bool:
        """True when the file was animated and only its first frame was kept."""
        return self.frames > 1


@dataclass(frozen=True, slots=True)
class ExtractedDocument:
    """A document ready to attach: its text in the part, its original's bytes to store."""

    part: DocumentPart
    blob: Blob = field(repr=False)


def supported_suffixes() -> tuple[str, ...]:
    """Every file name suffix that can be attached, for a host's file dialog."""
    return tuple(sorted(KINDS))


async def prepare_image(
    path: str | os.PathLike[str],
    *,
    target: ImageTarget | None = None,
    limits: ChildLimits | None = None,
    max_pixels: int = MAX_IMAGE_PIXELS,
) -> PreparedImage:
    """The picture at ``path``, oriented, stripped, downscaled and re-encoded (see the
    module docstring). Cancelling the caller kills the child reading it.

    Raises:
        AttachmentError: the file is refused or could not be read (its sentence says why).
    """
    name = os.fspath(path)
    target = target or ImageTarget()
    _, data = read_checked(name, ops=_PICTURE_OPS)
    options = {
        "long_side": target.long_side,
        "max_bytes": target.max_bytes,
        "formats": list(target.formats),
        "max_pixels": max_pixels,
    }
    header, payload = await run_child(
        "image", data, options, path=name, limits=limits or ChildLimits()
    )
    try:
        media_type = str(header["media_type"])
        if media_type not in target.formats or not payload:
            raise ValueError(media_type)
        blob = Blob.of(payload, media_type)
        part = ImagePart(
            media_type,
            int(header["width"]),
            int(header["height"]),
            blob.size,
            blob.sha256,
            name=os.path.basename(name),
        )
        return PreparedImage(
            part,
            blob,
            int(header["original_width"]),
            int(header["original_height"]),
            max(1, int(header.get("frames", 1))),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise AttachmentError(
            name, key="attach.crashed", params={"detail": "an answer that could not be read"}
        ) from exc


async def extract_document(
    path: str | os.PathLike[str], *, limits: ChildLimits | None = None
) -> ExtractedDocument:
    """The document at ``path``: its whole text (see the module docstring) and its
    original's bytes. Cancelling the caller kills the child reading it.

    Raises:
        AttachmentError: the file is refused or could not be read (its sentence says why).
    """
    name = os.fspath(path)
    kind, data = read_checked(name, ops=_DOCUMENT_OPS)
    header, _ = await run_child(
        kind.op, data, dict(kind.options), path=name, limits=limits or ChildLimits()
    )
    try:
        text = header["text"]
        if not isinstance(text, str):
            raise TypeError(type(text).__name__)
        blob = Blob.of(data, kind.media_type)
        part = DocumentPart(
            os.path.basename(name),
            kind.media_type,
            text,
            blob.sha256,
            pages=header.get("pages"),
            rows=header.get("rows"),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise AttachmentError(
            name, key="attach.crashed", params={"detail": "an answer that could not be read"}
        ) from exc
    return ExtractedDocument(part, blob)
