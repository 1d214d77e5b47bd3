"""The child process that reads untrusted files: pictures with Pillow, PDFs with PDFium.

Runs as ``python -I <this file> --memory N --cpu S`` (or the bundle's executable with
`WORKER_FLAG`), started by `engine.attach._child`. Before it imports any parser it limits
itself: address space (``RLIMIT_AS``: a parser that allocates without end gets MemoryError,
or dies, alone), processor time (``RLIMIT_CPU``: a backstop behind the parent's timeout),
no core files and no files written (``RLIMIT_CORE``, ``RLIMIT_FSIZE``). A crash, a hang or
an exhausted limit ends this process only; the parent turns it into `AttachmentError`.

Protocol, on the standard streams: the parent writes one JSON line (``{"op": ..., "options":
{...}}``) and then the file's bytes to end of input; the child writes one JSON line (the
result, or ``{"error": key, "params": {...}}``) and then the result's bytes, if any (a
re-encoded picture). Self-contained on purpose (the standard library and the parsing
libraries only): it never imports the engine, so a child starts in a tenth of a second.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import sys
import warnings
import zipfile
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

#: the argument that makes the bundle's executable run this instead of the window
WORKER_FLAG = "--continuo-attach-worker"


class Refusal(Exception):
    """A file this worker refuses, with the catalog key and parameters to say why."""

    def __init__(self, key: str, **params: Any) -> None:
        super().__init__(key)
        self.key = key
        self.params = params


Result = tuple[dict[str, Any], bytes]


# ------------------------------------------------------------------------------- pictures


def prepare_image(data: bytes, options: dict[str, Any]) -> Result:
    """Decode, orient, strip, downscale and re-encode a picture (see `engine.attach.images`)."""
    from PIL import Image, ImageOps

    max_pixels = int(options["max_pixels"])
    long_side = int(options["long_side"])
    max_bytes = int(options["max_bytes"])
    formats = list(options["formats"])
    # Opening reads the header only; the size is checked here, before one pixel is decoded
    # (Pillow's own check at open would refuse without saying the size). Pillow's check is
    # then on again, an error rather than a warning, for any frame decoded later.
    Image.MAX_IMAGE_PIXELS = None
    image = Image.open(io.BytesIO(data))
    width, height = image.size
    if width * height > max_pixels:
        raise Refusal("attach.bomb", width=width, height=height, limit=max_pixels // 1_000_000)
    Image.MAX_IMAGE_PIXELS = max_pixels
    warnings.simplefilter("error", Image.DecompressionBombWarning)
    frames = int(getattr(image, "n_frames", 1) or 1)
    source_format = image.format or ""
    image.seek(0)  # an animated picture: its first frame only (said in the result)
    image.load()
    oriented = ImageOps.exif_transpose(image) or image
    has_alpha = oriented.mode in ("RGBA", "LA", "PA") or (
        oriented.mode == "P" and "transparency" in oriented.info
    )
    pixels = oriented.convert("RGBA" if has_alpha else "RGB")
    pixels.thumbnail((long_side, long_side), Image.Resampling.LANCZOS)
    # A new image from the pixels alone: no EXIF (GPS, camera, times), ICC, XMP or text
    # chunks can ride along into the encoded bytes, whatever the encoder copies from info.
    clean = Image.frombytes(pixels.mode, pixels.size, pixels.tobytes())
    encoded, media_type = _encode_within(clean, formats, has_alpha, source_format, max_bytes)
    result = {
        "media_type": media_type,
        "width": encoded[1][0],
        "height": encoded[1][1],
        "original_width": width,
        "original_height": height,
        "frames": frames,
        "source_format": source_format,
    }
    return result, encoded[0]


def _encode_within(
    image: Any, formats: list[str], alpha: bool, source: str, max_bytes: int
) -> tuple[tuple[bytes, tuple[int, int]], str]:
    """The picture encoded in the first format that fits ``max_bytes``, downscaled by steps
    when none does: lossless PNG for a screenshot or a picture with transparency when it fits,
    else WebP (keeps transparency) or JPEG (photographs)."""
    from PIL import Image

    order: list[str] = []
    if alpha:
        order = ["image/png", "image/webp"]
    elif source in ("PNG", "GIF", "BMP"):
        order = ["image/png", "image/jpeg", "image/webp"]
    else:
        order = ["image/jpeg", "image/webp", "image/png"]
    order = [f for f in order if f in formats] or list(formats)
    for _ in range(12):
        for media_type in order:
            if alpha and media_type == "image/jpeg":
                continue
            for quality in (85, 70, 55) if media_type != "image/png" else (0,):
                buffer = io.BytesIO()
                if media_type == "image/png":
                    image.save(buffer, "PNG", optimize=True)
                elif media_type == "image/webp":
                    image.save(buffer, "WEBP", quality=quality, method=4)
                else:
                    image.save(buffer, "JPEG", quality=quality, optimize=True)
                if buffer.tell() <= max_bytes:
                    return (buffer.getvalue(), image.size), media_type
        if min(image.size) <= 16:
            break
        image = image.resize(
            (max(1, image.width * 3 // 4), max(1, image.height * 3 // 4)),
            Image.Resampling.LANCZOS,
        )
    raise Refusal("attach.over_budget", limit=max_bytes)


# ------------------------------------------------------------------------------- documents


def extract_pdf(data: bytes, options: dict[str, Any]) -> Result:
    """The text of every page (pages joined by a form feed), and the page count."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]  # no type information

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise Refusal("attach.unreadable", detail=str(exc)) from exc
    texts = []
    try:
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            texts.append(textpage.get_text_bounded())
            textpage.close()
            page.close()
    except pdfium.PdfiumError as exc:
        raise Refusal("attach.unreadable", detail=str(exc)) from exc
    finally:
        pages = len(document)
        document.close()
    text = "\f".join(t.replace("\r\n", "\n").replace("\r", "\n") for t in texts)
    return {"text": text, "pages": pages}, b""


def decode_text(data: bytes) -> str:
    """The bytes as text: UTF-8 (with or without a BOM) when they are, else the encoding
    charset-normalizer finds (GB18030, UTF-16, Latin-1, ...); `Refusal` when none fits."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise Refusal("attach.not_text")
    return str(best)


def extract_text(data: bytes, options: dict[str, Any]) -> Result:
    """Plain text, code, Markdown: the decoded text, whole."""
    return {"text": decode_text(data)}, b""


def extract_table(data: bytes, options: dict[str, Any]) -> Result:
    """CSV or TSV: the decoded text, whole, and its record count (a header line included;
    a record may span lines inside quotes)."""
    text = decode_text(data)
    delimiter = "\t" if options.get("delimiter") == "tab" else ","
    try:
        rows = sum(1 for _ in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:
        raise Refusal("attach.unreadable", detail=str(exc)) from exc
    return {"text": text, "rows": rows}, b""


def extract_json(data: bytes, options: dict[str, Any]) -> Result:
    """JSON: the decoded text, whole, once it is known to be JSON."""
    text = decode_text(data)
    try:
        json.loads(text)
    except ValueError as exc:
        raise Refusal("attach.unreadable", detail=f"not JSON: {exc}") from exc
    return {"text": text}, b""


class _HTMLText(HTMLParser):
    """The text a page shows: no scripts, styles or markup; blocks on lines of their own."""

    _SKIP = frozenset({"script", "style", "template", "noscript", "svg"})
    _BLOCK = frozenset(
        {
            "p",
            "div",
            "br",
            "li",
            "tr",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "section",
            "article",
            "header",
            "footer",
            "pre",
            "blockquote",
            "table",
            "ul",
            "ol",
            "title",
        }
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skipping += 1
        if tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1
        if tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)

    def text(self) -> str:
        lines = (" ".join(line.split()) for line in "".join(self.parts).splitlines())
        out: list[str] = []
        for line in lines:
            if line or (out and out[-1]):
                out.append(line)
        return "\n".join(out).strip()


def extract_html(data: bytes, options: dict[str, Any]) -> Result:
    """HTML: the text it shows (never fetched, never run: nothing but the text is kept)."""
    parser = _HTMLText()
    parser.feed(decode_text(data))
    parser.close()
    return {"text": parser.text()}, b""


#: the most a zip package (DOCX, XLSX, ODS) may unpack to, all parts together (256 MB)
MAX_UNPACKED = 256 * 1024 * 1024


def _refuse_zip_bomb(data: bytes) -> None:
    """Refuse a package whose parts say they unpack to more than `MAX_UNPACKED`. The sizes
    in its directory bind mammoth (Python's zip reader stops a part at its stated size); a
    part that lies to calamine's own reader meets the child's memory and time limits."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            size = sum(info.file_size for info in package.infolist())
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise Refusal("attach.unreadable", detail=f"not a zip package: {exc}") from exc
    if size > MAX_UNPACKED:
        raise Refusal("attach.unpacks_too_large", size=size, limit=MAX_UNPACKED)


def extract_docx(data: bytes, options: dict[str, Any]) -> Result:
    """Word (DOCX): the text of its paragraphs, tables' cells included, one per line (mammoth's
    raw text: pure Python over the standard library's zip and XML readers, no lxml)."""
    import mammoth  # type: ignore[import-untyped]  # no type information

    _refuse_zip_bomb(data)
    try:
        result = mammoth.extract_raw_text(io.BytesIO(data))
    except (KeyError, ValueError, zipfile.BadZipFile) as exc:  # not a Word package
        raise Refusal("attach.unreadable", detail=f"{type(exc).__name__}: {exc}") from exc
    lines = str(result.value).replace("\r\n", "\n").splitlines()
    # mammoth ends every paragraph with a blank line: one paragraph a line reads better.
    text = "\n".join(line for line in (line.rstrip() for line in lines) if line)
    return {"text": text}, b""


def _cell(value: Any) -> str:
    """A spreadsheet cell as a person reads it: 12 not 12.0, a date without midnight."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, datetime.datetime) and value.time() == datetime.time():
        return value.date().isoformat()
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return str(value)  # text, other numbers, durations (``1 day, 2:00:00``)


def extract_sheet(data: bytes, options: dict[str, Any]) -> Result:
    """Spreadsheets (XLSX, ODS): every sheet whole, as CSV under its name, and the rows
    of all sheets counted (python-calamine: a Rust reader, no formulas run, nothing fetched)."""
    import python_calamine as calamine

    _refuse_zip_bomb(data)
    try:
        book = calamine.CalamineWorkbook.from_filelike(io.BytesIO(data))
        sheets = [(name, book.get_sheet_by_name(name).to_python()) for name in book.sheet_names]
    except calamine.PasswordError as exc:
        raise Refusal("attach.unreadable", detail="the file is protected by a password") from exc
    except (calamine.CalamineError, ValueError) as exc:
        raise Refusal("attach.unreadable", detail=f"{type(exc).__name__}: {exc}") from exc
    parts: list[str] = []
    rows = 0
    for name, cells in sheets:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for row in cells:
            writer.writerow([_cell(value) for value in row])
        rows += len(cells)
        parts.append(f"# Sheet: {name}\n{out.getvalue()}")
    return {"text": "\n".join(parts).rstrip("\n"), "rows": rows}, b""


#: what the child can be asked to do
OPS: dict[str, Callable[[bytes, dict[str, Any]], Result]] = {
    "image": prepare_image,
    "pdf": extract_pdf,
    "text": extract_text,
    "table": extract_table,
    "json": extract_json,
    "html": extract_html,
    "docx": extract_docx,
    "sheet": extract_sheet,
}


def _limit(memory: int, cpu: int) -> None:
    try:
        import resource
    except ImportError:  # Windows: the parent's timeout is the only limit
        return
    for name, value in (
        ("RLIMIT_AS", memory),
        ("RLIMIT_CPU", cpu),
        ("RLIMIT_CORE", 0),
        ("RLIMIT_FSIZE", 0),
    ):
        which = getattr(resource, name, None)
        if which is None or value <= 0 and name in ("RLIMIT_AS", "RLIMIT_CPU"):
            continue
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass  # a hard limit already lower: it holds anyway


def _reply(header: dict[str, Any], payload: bytes = b"") -> None:
    out = sys.stdout.buffer
    out.write(json.dumps(header).encode() + b"\n")
    out.write(payload)
    out.flush()


def main(argv: list[str] | None = None) -> int:
    """Limit this process, read one request, answer it; 0 when an answer was written."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == WORKER_FLAG:
        args = args[1:]
    memory = int(args[args.index("--memory") + 1]) if "--memory" in args else 0
    cpu = int(args[args.index("--cpu") + 1]) if "--cpu" in args else 0
    _limit(memory, cpu)
    try:
        request = json.loads(sys.stdin.buffer.readline())
        data = sys.stdin.buffer.read()
        op = OPS[request["op"]]
        header, payload = op(data, dict(request.get("options") or {}))
    except Refusal as refusal:
        _reply({"error": refusal.key, "params": refusal.params})
    except MemoryError:
        _reply({"error": "attach.out_of_memory", "params": {}})
    except Exception as exc:  # noqa: BLE001 - any parser failure is the file's, told as such
        detail = f"{type(exc).__name__}: {exc}"[:300]
        _reply({"error": "attach.unreadable", "params": {"detail": detail}})
    else:
        _reply(header, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
