"""Word documents and spreadsheets to attach: DOCX by mammoth, XLSX and ODS by calamine.

Real packages written here (tests/engine/attach_helpers.py: content types, relationships,
the main part, as Word and Excel require), read by the real reader child. A file that only
says it is one — or a package whose part inflates without end — is refused with a sentence.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from engine import AttachmentError
from engine.attach import extract_document, supported_suffixes

from .attach_helpers import make_docx, make_ods, make_xlsx


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


async def test_a_word_document_gives_its_paragraphs_and_tables(tmp_path: Path) -> None:
    data = make_docx(
        ["Quarterly report", "Sales rose <sharply> & steadily.", "中文段落"],
        table=[["Region", "Units"], ["North", "12"]],
    )
    document = await extract_document(write(tmp_path, "report.docx", data))
    part = document.part
    assert part.text.splitlines() == [
        "Quarterly report",
        "Sales rose <sharply> & steadily.",
        "中文段落",
        "Region",
        "Units",
        "North",
        "12",
    ]
    assert part.media_type.endswith("wordprocessingml.document") and part.name == "report.docx"
    assert part.pages is None and part.rows is None
    assert document.blob.data == data and part.blob == hashlib.sha256(data).hexdigest()


async def test_a_workbook_gives_every_sheet_whole_with_its_rows(tmp_path: Path) -> None:
    """Every row of every sheet, none cut: a 159-row table is 159 rows to the model."""
    rows: list[list[object]] = [["Region", "Units", "Price"]]
    rows += [[f"R{i}", i, i + 0.5] for i in range(1, 159)]
    data = make_xlsx([("Sales", rows), ('Notes, "quoted"', [["a, b", 'say "hi"']])])
    part = (await extract_document(write(tmp_path, "sales.xlsx", data))).part
    sales, notes = part.text.split("\n\n# Sheet: ")
    lines = sales.splitlines()
    assert lines[0] == "# Sheet: Sales" and lines[1] == "Region,Units,Price"
    assert lines[2] == "R1,1,1.5" and lines[-1] == "R158,158,158.5"  # 1, not 1.0
    assert len(lines) == 1 + 159
    assert notes.splitlines() == ['Notes, "quoted"', '"a, b","say ""hi"""']
    assert part.rows == 160 and part.pages is None
    assert part.media_type.endswith("spreadsheetml.sheet")


async def test_an_opendocument_spreadsheet_is_read_like_a_workbook(tmp_path: Path) -> None:
    data = make_ods("Budget", [["Item", "Cost"], ["Rent", 1200], ["Food", 310.25]])
    part = (await extract_document(write(tmp_path, "budget.ods", data))).part
    assert part.text.splitlines() == ["# Sheet: Budget", "Item,Cost", "Rent,1200", "Food,310.25"]
    assert part.rows == 3 and part.media_type == "application/vnd.oasis.opendocument.spreadsheet"


def test_the_file_dialog_offers_word_and_spreadsheets() -> None:
    assert {".docx", ".xlsx", ".ods"} <= set(supported_suffixes())


@pytest.mark.parametrize("name", ["fake.docx", "fake.xlsx", "fake.ods"])
async def test_text_named_as_an_office_file_is_refused_unread(tmp_path: Path, name: str) -> None:
    with pytest.raises(AttachmentError) as caught:
        await extract_document(write(tmp_path, name, b"just some text, not a package\n" * 10))
    assert caught.value.key == "attach.wrong_type" and name in str(caught.value)


async def test_a_zip_that_is_not_a_word_document_is_unreadable(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("hello.txt", "not a document")
    for name in ("other.docx", "other.xlsx"):
        with pytest.raises(AttachmentError) as caught:
            await extract_document(write(tmp_path, name, buffer.getvalue()))
        assert caught.value.key == "attach.unreadable", name
        assert name in str(caught.value) and name in caught.value.sentence("zh_CN")


async def test_a_truncated_workbook_is_refused_and_the_next_one_read(tmp_path: Path) -> None:
    data = make_xlsx([("Only", [["a", 1], ["b", 2]])])
    with pytest.raises(AttachmentError) as caught:
        await extract_document(write(tmp_path, "cut.xlsx", data[: len(data) // 2]))
    assert caught.value.key == "attach.unreadable"
    assert (await extract_document(write(tmp_path, "whole.xlsx", data))).part.rows == 2


async def test_a_word_document_that_inflates_without_end_is_stopped(tmp_path: Path) -> None:
    """A zip bomb inside a DOCX: 1 GB of one paragraph's text in ~1 MB, refused from the
    sizes its package states (binding: the zip reader stops a part at its stated size)."""
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as package:
        package.writestr(
            "[Content_Types].xml",
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Override PartName="/word/document.xml" ContentType="application/vnd.'
            'openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        )
        package.writestr(
            "_rels/.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
            'officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
            "</Relationships>",
        )
        with package.open("word/document.xml", "w") as part:
            part.write(f'<w:document xmlns:w="{w}"><w:body><w:p><w:r><w:t>'.encode())
            block = b"A" * (1024 * 1024)
            for _ in range(1024):
                part.write(block)
            part.write(b"</w:t></w:r></w:p></w:body></w:document>")
    assert len(buffer.getvalue()) < 8 * 1024 * 1024
    with pytest.raises(AttachmentError) as caught:
        await extract_document(write(tmp_path, "bomb.docx", buffer.getvalue()))
    assert caught.value.key == "attach.unpacks_too_large"
    assert "'bomb.docx' would unpack to 1 GB, more than the 256 MB" in str(caught.value)
    assert "1 GB" in caught.value.sentence("zh_CN")
