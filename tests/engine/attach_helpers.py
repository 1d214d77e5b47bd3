"""Small real files for the attachment tests, made by the tests themselves."""

from __future__ import annotations

import ctypes
import io
import struct
import zlib

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_raw  # type: ignore[import-untyped]
from PIL import Image


def make_pdf(pages: list[str]) -> bytes:
    """A real PDF with one line of text a page, written by PDFium itself."""
    pdf = pdfium.PdfDocument.new()
    font = pdfium_raw.FPDFText_LoadStandardFont(pdf.raw, b"Helvetica")
    for text in pages:
        page = pdf.new_page(300, 200)
        obj = pdfium_raw.FPDFPageObj_CreateTextObj(pdf.raw, font, 12.0)
        encoded = (text + "\x00").encode("utf-16-le")
        buffer = ctypes.create_string_buffer(encoded, len(encoded))
        pdfium_raw.FPDFText_SetText(obj, ctypes.cast(buffer, ctypes.POINTER(pdfium_raw.FPDF_WCHAR)))
        pdfium_raw.FPDFPageObj_Transform(obj, 1, 0, 0, 1, 20, 100)
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
