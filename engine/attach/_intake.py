"""Taking a file in for attaching: what it is by its name, refused before anything is read.

Checks, in this order, before one byte of content is read:

1. ``lstat``: a symbolic link, a folder, a FIFO, a socket or a device is refused
   (``attach.not_regular``): a FIFO would block the reader, a device never end, and a link
   could name a file the person never chose;
2. the size ``lstat`` gives against `MAX_FILE_BYTES` (``attach.too_large``);
3. the name's suffix must be a type that is read (``attach.unsupported``);

then the file is opened without following links and without blocking (``O_NOFOLLOW |
O_NONBLOCK``), checked again on the open descriptor (it is the same regular file, still
within the limit: a file swapped or grown in between is refused), and read up to the limit.
Last, its first bytes must be what its suffix says (``attach.wrong_type``): a picture's or a
PDF's signature; for text, no executable's or archive's signature.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import AttachmentError, size_phrase

__all__ = ["MAX_FILE_BYTES", "FileKind", "kind_of", "read_checked"]

#: the largest file attached (64 MB): a bigger one is refused from its size alone, unread
MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileKind:
    """How a file is read, by its suffix."""

    op: str  #: the child's operation (`engine.attach._worker.OPS`)
    media_type: str  #: the original's media type
    label: str  #: what the type is called in a sentence ("PNG")
    options: tuple[tuple[str, str], ...] = ()


_PICTURES = {
    ".png": FileKind("image", "image/png", "PNG"),
    ".jpg": FileKind("image", "image/jpeg", "JPEG"),
    ".jpeg": FileKind("image", "image/jpeg", "JPEG"),
    ".gif": FileKind("image", "image/gif", "GIF"),
    ".webp": FileKind("image", "image/webp", "WebP"),
}
_CODE = (
    ".py .js .mjs .ts .tsx .jsx .c .h .cc .cpp .hpp .rs .go .java .kt .rb .php .swift .cs "
    ".sh .bash .zsh .ps1 .sql .css .scss .toml .yaml .yml .ini .cfg .conf .xml .log .tex .rst "
    ".lua .r .pl .scala .dart .vue .svelte .diff .patch .env .properties .gradle .cmake"
).split()
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
_DOCUMENTS = {
    ".pdf": FileKind("pdf", "application/pdf", "PDF"),
    ".txt": FileKind("text", "text/plain", ".txt"),
    ".md": FileKind("text", "text/markdown", "Markdown"),
    ".markdown": FileKind("text", "text/markdown", "Markdown"),
    ".csv": FileKind("table", "text/csv", "CSV", (("delimiter", "comma"),)),
    ".tsv": FileKind("table", "text/tab-separated-values", "TSV", (("delimiter", "tab"),)),
    ".json": FileKind("json", "application/json", "JSON"),
    ".html": FileKind("html", "text/html", "HTML"),
    ".htm": FileKind("html", "text/html", "HTML"),
    ".docx": FileKind("docx", _DOCX, "Word (DOCX)"),
    ".xlsx": FileKind("sheet", _XLSX, "Excel (XLSX)"),
    ".ods": FileKind("sheet", "application/vnd.oasis.opendocument.spreadsheet", "ODS"),
    **{suffix: FileKind("text", "text/plain", suffix) for suffix in _CODE},
}
KINDS: dict[str, FileKind] = {**_PICTURES, **_DOCUMENTS}

#: the signatures a picture or a PDF must start with (a PDF's may follow a little junk)
_SIGNATURES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    # Word, Excel and OpenDocument files are zip packages.
    _DOCX: (b"PK\x03\x04",),
    _XLSX: (b"PK\x03\x04",),
    "application/vnd.oasis.opendocument.spreadsheet": (b"PK\x03\x04",),
}
#: what a text file never starts with: executables, archives, pictures, PDFs
_NOT_TEXT = (
    b"\x7fELF",
    b"MZ",
    b"\xca\xfe\xba\xbe",
    b"\xfe\xed\xfa\xce",
    b"\xfe\xed\xfa\xcf",
    b"\xce\xfa\xed\xfe",
    b"\xcf\xfa\xed\xfe",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"7z\xbc\xaf\x27\x1c",
    b"Rar!",
    b"%PDF-",
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF8",
    b"\x00asm",
)


def kind_of(path: str | os.PathLike[str]) -> FileKind:
    """How the file is read, by its name.

    Raises:
        AttachmentError: ``attach.unsupported``.
    """
    suffix = Path(path).suffix.lower()
    kind = KINDS.get(suffix)
    if kind is None:
        raise AttachmentError(
            os.fspath(path), key="attach.unsupported", params={"kind": suffix or "?"}
        )
    return kind


def _refuse_unless_regular(path: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise AttachmentError(path, key="attach.not_regular")


def _refuse_if_too_large(path: str, size: int, limit: int) -> None:
    if size > limit:
        raise AttachmentError(
            path,
            key="attach.too_large",
            params={"size": size_phrase(size), "limit": size_phrase(limit)},
        )


def read_checked(
    path: str | os.PathLike[str],
    *,
    ops: frozenset[str] | None = None,
    limit: int = MAX_FILE_BYTES,
) -> tuple[FileKind, bytes]:
    """The file's kind and bytes, after every check of the module docstring; with ``ops``,
    a kind read by another operation is refused as ``attach.unsupported`` at step 3.

    Raises:
        AttachmentError: the file is refused; nothing of it was read unless the refusal is
            ``attach.wrong_type`` (its first bytes were).
    """
    name = os.fspath(path)
    try:
        info = os.lstat(name)
    except OSError as exc:
        raise AttachmentError(
            name, key="attach.missing", params={"detail": exc.strerror or type(exc).__name__}
        ) from exc
    _refuse_unless_regular(name, info.st_mode)
    _refuse_if_too_large(name, info.st_size, limit)
    kind = kind_of(name)
    if ops is not None and kind.op not in ops:
        raise AttachmentError(name, key="attach.unsupported", params={"kind": kind.label})
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:  # ELOOP: it became a link since lstat
        raise AttachmentError(
            name, key="attach.missing", params={"detail": exc.strerror or type(exc).__name__}
        ) from exc
    try:
        opened = os.fstat(fd)
        _refuse_unless_regular(name, opened.st_mode)
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            raise AttachmentError(name, key="attach.not_regular")  # swapped since lstat
        _refuse_if_too_large(name, opened.st_size, limit)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1024 * 1024, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew while being read
                _refuse_if_too_large(name, total, limit)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    _check_signature(name, kind, data)
    return kind, data


def _check_signature(path: str, kind: FileKind, data: bytes) -> None:
    """Refuse bytes that are not what the file's name says."""
    head = data[:1024]
    if kind.media_type == "image/webp":
        ok = head[:4] == b"RIFF" and head[8:12] == b"WEBP"
    elif kind.media_type in _SIGNATURES:
        ok = head.startswith(_SIGNATURES[kind.media_type])
    elif kind.op == "pdf":
        ok = b"%PDF-" in head
    else:
        ok = not head.startswith(_NOT_TEXT)
    if not ok:
        raise AttachmentError(path, key="attach.wrong_type", params={"kind": kind.label})
