"""Small real files for the attachment tests, made by the tests themselves."""

from __future__ import annotations

import ctypes
import io
import struct
import zipfile
import zlib
from xml.sax.saxutils import escape, quoteattr

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_raw  # type: ignore[import-untyped]
from PIL import Image


def make_pdf(pages: list[str]) -> bytes:
    """A real PDF written by PDFium itself, each page's text (its lines split at ``\\n``)
    one text object a line."""
    pdf = pdfium.PdfDocument.new()
    font = pdfium_raw.FPDFText_LoadStandardFont(pdf.raw, b"Helvetica")
    for text in pages:
        lines = text.split("\n")
        height = 40 + 14 * len(lines)
        page = pdf.new_page(500, height)
        for n, line in enumerate(lines):
            obj = pdfium_raw.FPDFPageObj_CreateTextObj(pdf.raw, font, 12.0)
            encoded = (line + "\x00").encode("utf-16-le")
            buffer = ctypes.create_string_buffer(encoded, len(encoded))
            wide = ctypes.cast(buffer, ctypes.POINTER(pdfium_raw.FPDF_WCHAR))
            pdfium_raw.FPDFText_SetText(obj, wide)
            pdfium_raw.FPDFPageObj_Transform(obj, 1, 0, 0, 1, 20, height - 20 - 14 * n)
            pdfium_raw.FPDFPage_InsertObject(page.raw, obj)
        pdfium_raw.FPDFPage_GenerateContent(page.raw)
        page.close()
    out = io.BytesIO()
    pdf.save(out)
    pdf.close()
    return out.getvalue()


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def bomb_png(side: int = 100_000) -> bytes:
    """A PNG of a few KB whose header says ``side`` × ``side`` pixels (1-bit grey): decoded,
    it would need over a gigabyte. Its data holds the first rows only."""
    row = b"\x00" + b"\x00" * ((side + 7) // 8)
    data = zlib.compress(row * 64, 9)
    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", data)
        + _chunk(b"IEND", b"")
    )


#: a GPS position (Paris) written into the test photo's EXIF
GPS = {1: "N", 2: (48.0, 51.0, 29.0), 3: "E", 4: (2.0, 17.0, 40.0)}


def photo_with_gps(width: int = 400, height: int = 200, orientation: int = 6) -> bytes:
    """A JPEG photo with an EXIF orientation and a GPS position, as a phone writes one. Its
    left half is red, its right half blue (to tell which way it was turned)."""
    image = Image.new("RGB", (width, height), (255, 0, 0))
    image.paste((0, 0, 255), (width // 2, 0, width, height))
    exif = Image.Exif()
    exif[0x0112] = orientation  # Orientation
    exif[0x010F] = "PhoneMaker"  # Make
    exif.get_ifd(0x8825).update(GPS)  # the GPS IFD
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif.tobytes(), quality=90)
    return out.getvalue()


def animated_gif(frames: int = 3) -> bytes:
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)]
    images = [Image.new("RGB", (32, 16), colours[i % 4]) for i in range(frames)]
    out = io.BytesIO()
    images[0].save(out, "GIF", save_all=True, append_images=images[1:], duration=100, loop=0)
    return out.getvalue()


def pdf_with_a_cycle() -> bytes:
    """A hand-written PDF whose page tree holds itself (``/Kids [2 0 R ...]`` in object 2)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] >>",
    ]
    out = b"%PDF-1.7\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    trailer = b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
    return out + trailer % (len(objects) + 1, xref)


def written_pdf(pages: list[str]) -> bytes:
    """A hand-written PDF with one line of text a page (Helvetica, one content stream each):
    fast for thousands of pages, where PDFium's own page insertion slows with each page."""
    count = len(pages)
    kids = b" ".join(b"%d 0 R" % (4 + 2 * n) for n in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % count,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for n, text in enumerate(pages):
        line = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = b"BT /F1 12 Tf 20 100 Td (" + line.encode("latin-1") + b") Tj ET"
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * n)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    chunks = [b"%PDF-1.7\n"]
    size = len(chunks[0])
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(size)
        chunk = b"%d 0 obj\n" % number + body + b"\nendobj\n"
        chunks.append(chunk)
        size += len(chunk)
    chunks.append(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    chunks.extend(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
    chunks.append(trailer % (len(objects) + 1, size))
    return b"".join(chunks)


# ------------------------------------------------------------------------ office packages
# Minimal but complete Office Open XML packages (ECMA-376 part 2: content types, package
# relationships, the main part), written with the standard library: what Word and Excel
# themselves require of a file, so the readers see real packages, not fragments.

_CT = "http://schemas.openxmlformats.org/package/2006/content-types"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_OFFICE_DOC = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
_WORKSHEET = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"
_SHEET_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'


def _package(main: str, parts: dict[str, tuple[str | None, str]]) -> bytes:
    """A zip package of ``parts`` (name: content type or None for plain XML, body), ``main``
    being the part the package relationship points at."""
    overrides = "".join(
        f'<Override PartName="/{name}" ContentType="{kind}"/>'
        for name, (kind, _) in parts.items()
        if kind is not None
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr(
            "[Content_Types].xml",
            f'{_XML}<Types xmlns="{_CT}">'
            f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            f'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            f"{overrides}</Types>",
        )
        package.writestr(
            "_rels/.rels",
            f'{_XML}<Relationships xmlns="{_RELS}"><Relationship Id="rId1" '
            f'Type="{_OFFICE_DOC}" Target="{main}"/></Relationships>',
        )
        for name, (_, body) in parts.items():
            package.writestr(name, body)
    return buffer.getvalue()


def make_docx(paragraphs: list[str], table: list[list[str]] | None = None) -> bytes:
    """A Word document: one paragraph per string, then a table (rows of cells) if given."""
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

    def para(text: str) -> str:
        return f'<w:p><w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r></w:p>'

    body = "".join(para(text) for text in paragraphs)
    if table:
        rows = "".join(
            "<w:tr>" + "".join(f"<w:tc>{para(cell)}</w:tc>" for cell in row) + "</w:tr>"
            for row in table
        )
        body += f"<w:tbl>{rows}</w:tbl>"
    document = f'{_XML}<w:document xmlns:w="{w}"><w:body>{body}</w:body></w:document>'
    kind = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    return _package("word/document.xml", {"word/document.xml": (kind, document)})


def make_xlsx(sheets: list[tuple[str, list[list[object]]]]) -> bytes:
    """A workbook: each sheet's rows of cells (text as inline strings, numbers as numbers)."""
    names = "".join(
        f'<sheet name={quoteattr(name)} sheetId="{i}" r:id="rId{i}"/>'
        for i, (name, _) in enumerate(sheets, 1)
    )
    workbook = (
        f'{_XML}<workbook xmlns="{_SHEET_NS}" xmlns:r="{_R_NS}"><sheets>{names}</sheets></workbook>'
    )
    links = "".join(
        f'<Relationship Id="rId{i}" Type="{_WORKSHEET}" Target="worksheets/sheet{i}.xml"/>'
        for i in range(1, len(sheets) + 1)
    )
    worksheet_kind = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
    kind = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
    parts: dict[str, tuple[str | None, str]] = {
        "xl/workbook.xml": (kind, workbook),
        "xl/_rels/workbook.xml.rels": (
            None,
            f'{_XML}<Relationships xmlns="{_RELS}">{links}</Relationships>',
        ),
    }
    for i, (_, rows) in enumerate(sheets, 1):
        cells = []
        for r, row in enumerate(rows, 1):
            line = []
            for c, value in enumerate(row):
                ref = f"{chr(65 + c)}{r}"
                if isinstance(value, str):
                    line.append(f'<c r="{ref}" t="inlineStr"><is><t>{escape(value)}</t></is></c>')
                else:
                    line.append(f'<c r="{ref}"><v>{value}</v></c>')
            cells.append(f'<row r="{r}">{"".join(line)}</row>')
        sheet = f'{_XML}<worksheet xmlns="{_SHEET_NS}"><sheetData>{"".join(cells)}</sheetData></worksheet>'
        parts[f"xl/worksheets/sheet{i}.xml"] = (worksheet_kind, sheet)
    return _package("xl/workbook.xml", parts)


def make_ods(name: str, rows: list[list[object]]) -> bytes:
    """An OpenDocument spreadsheet (ODF 1.2 package: mimetype first and stored, manifest,
    content) with one sheet of text and number cells."""
    office = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
    table_ns = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
    text_ns = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
    cells = []
    for row in rows:
        line = []
        for value in row:
            if isinstance(value, str):
                line.append(
                    f'<table:table-cell office:value-type="string"><text:p>{escape(value)}'
                    "</text:p></table:table-cell>"
                )
            else:
                line.append(
                    f'<table:table-cell office:value-type="float" office:value="{value}">'
                    f"<text:p>{value}</text:p></table:table-cell>"
                )
        cells.append(f"<table:table-row>{''.join(line)}</table:table-row>")
    content = (
        f'{_XML}<office:document-content xmlns:office="{office}" xmlns:table="{table_ns}" '
        f'xmlns:text="{text_ns}" office:version="1.2"><office:body><office:spreadsheet>'
        f"<table:table table:name={quoteattr(name)}>{''.join(cells)}</table:table>"
        "</office:spreadsheet></office:body></office:document-content>"
    )
    mime = "application/vnd.oasis.opendocument.spreadsheet"
    manifest = (
        f'{_XML}<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:'
        'manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" '
        f'manifest:media-type="{mime}"/><manifest:file-entry manifest:full-path="content.xml" '
        'manifest:media-type="text/xml"/></manifest:manifest>'
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr(zipfile.ZipInfo("mimetype"), mime, compress_type=zipfile.ZIP_STORED)
        package.writestr("META-INF/manifest.xml", manifest)
        package.writestr("content.xml", content)
    return buffer.getvalue()
