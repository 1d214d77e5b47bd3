"""Documents to attach (`engine.attach.extract_document`) and the reader child's limits.

Real files made here, read by the real child process. A hostile file — one that hangs the
reader, exhausts its memory, crashes it, or is cut short — ends with a sentence, never with
the caller: the child is killed (SIGKILL) on timeout and when the caller is cancelled.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from engine import AttachmentError
from engine.attach import MAX_FILE_BYTES, ChildLimits, extract_document, prepare_image
from engine.attach._child import run_child

from .attach_helpers import make_pdf, pdf_with_a_cycle, written_pdf

CHILD = [sys.executable, str(Path(__file__).with_name("attach_child.py"))]


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# ------------------------------------------------------------------------------- formats


async def test_a_pdf_gives_every_page_text_and_keeps_its_original(tmp_path: Path) -> None:
    data = make_pdf(["Hello page one", "Second page here", "Third"])
    document = await extract_document(write(tmp_path, "report.pdf", data))
    part = document.part
    assert part.text == "Hello page one\fSecond page here\fThird"
    assert part.pages == 3 and part.rows is None
    assert part.media_type == "application/pdf" and part.name == "report.pdf"
    assert document.blob.data == data and part.blob == hashlib.sha256(data).hexdigest()


async def test_a_truncated_pdf_is_refused_and_the_caller_carries_on(tmp_path: Path) -> None:
    data = make_pdf(["Hello page one", "Second page here"])
    with pytest.raises(AttachmentError) as caught:
        await extract_document(write(tmp_path, "cut.pdf", data[: len(data) // 2]))
    assert caught.value.key == "attach.unreadable"
    assert "cut.pdf" in str(caught.value) and "cut.pdf" in caught.value.sentence("zh_CN")
    assert (await extract_document(write(tmp_path, "whole.pdf", data))).part.pages == 2


async def test_a_pdf_whose_page_tree_holds_itself_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AttachmentError) as caught:
        await extract_document(write(tmp_path, "loop.pdf", pdf_with_a_cycle()))
    assert caught.value.key == "attach.unreadable" and "loop.pdf" in str(caught.value)


async def test_a_10000_page_pdf_is_read_whole(tmp_path: Path) -> None:
    # Hostile by size alone: every page's text arrives, in order, within the reader's limits
    # (under a second here; the reader's time limit is far above it).
    data = written_pdf([f"page {n}" for n in range(1, 10_001)])
    part = (await extract_document(write(tmp_path, "long.pdf", data))).part
    assert part.pages == 10_000
    texts = part.text.split("\f")
    assert len(texts) == 10_000 and texts[0] == "page 1" and texts[-1] == "page 10000"
    assert texts == [f"page {n}" for n in range(1, 10_001)]


@pytest.mark.parametrize(
    ("encoding", "text"),
    [
        ("utf-8", "Plain text, café, 中文"),
        ("gb18030", "这是一个用 GB18030 编码的中文文本文件，内容足够长以便识别编码。" * 3),
        ("utf-16", "UTF-16 text with a byte order mark: naïve façade"),
        (
            "latin-1",
            "Die Straße ist schön, aber die Brücke über den Fluss ist gesperrt. Größere "
            "Fahrzeuge müssen außen herum fahren.",
        ),
    ],
)
async def test_text_in_any_encoding_is_read_as_text(
    tmp_path: Path, encoding: str, text: str
) -> None:
    document = await extract_document(write(tmp_path, "notes.txt", text.encode(encoding)))
    assert document.part.text == text
    assert document.part.media_type == "text/plain"


async def test_code_and_markdown_are_kept_whole(tmp_path: Path) -> None:
    code = "def main() -> None:\n    print('hi')\n"
    assert (await extract_document(write(tmp_path, "main.py", code.encode()))).part.text == code
    markdown = "# Title\n\n- one\n- two\n"
    document = await extract_document(write(tmp_path, "README.md", markdown.encode()))
    assert document.part.text == markdown and document.part.media_type == "text/markdown"


async def test_a_csv_is_kept_whole_with_its_row_count(tmp_path: Path) -> None:
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(["id", "note"])
    for number in range(159):
        writer.writerow([number, "two\nlines" if number == 7 else f"row {number}"])
    text = out.getvalue()
    document = await extract_document(write(tmp_path, "data.csv", text.encode()))
    assert document.part.text == text  # all 159 records, nothing cut
    assert document.part.rows == 160  # the header line included
    tsv = "a\tb\n1\t2\n3\t4\n"
    document = await extract_document(write(tmp_path, "data.tsv", tsv.encode()))
    assert document.part.rows == 3 and document.part.media_type == "text/tab-separated-values"


async def test_json_is_checked_and_kept_as_written(tmp_path: Path) -> None:
    text = json.dumps({"a": [1, 2, {"b": "ç"}]}, indent=2, ensure_ascii=False)
    document = await extract_document(write(tmp_path, "data.json", text.encode()))
    assert document.part.text == text
    with pytest.raises(AttachmentError) as caught:
        await extract_document(write(tmp_path, "broken.json", b'{"a": [1, 2'))
    assert caught.value.key == "attach.unreadable" and "JSON" in str(caught.value)


async def test_html_gives_only_the_text_it_shows(tmp_path: Path) -> None:
    page = (
        b"<html><head><title>Report</title><style>p{color:red}</style>"
        b"<script>alert('x')</script></head><body><h1>Results</h1>"
        b"<p>First &amp; <b>bold</b> line.</p><div>Second</div>"
        b"<img src='http://example.invalid/track.png'></body></html>"
    )
    document = await extract_document(write(tmp_path, "page.html", page))
    assert document.part.text == "Report\n\nResults\n\nFirst & bold line.\n\nSecond"


async def test_binary_bytes_named_as_text_are_refused(tmp_path: Path) -> None:
    with pytest.raises(AttachmentError) as caught:
        await extract_document(write(tmp_path, "notes.txt", b"\x7fELF\x02\x01\x01" + bytes(64)))
    assert caught.value.key == "attach.wrong_type"
    with pytest.raises(AttachmentError) as caught:
        await extract_document(write(tmp_path, "fake.pdf", b"MZ\x90\x00 not a pdf"))
    assert caught.value.key == "attach.wrong_type" and "PDF" in str(caught.value)


# ------------------------------------------------------------------------------- refusals


async def test_a_symlink_is_refused_even_to_a_good_file(tmp_path: Path) -> None:
    target = write(tmp_path, "real.txt", b"hello")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with pytest.raises(AttachmentError) as caught:
        await extract_document(link)
    assert caught.value.key == "attach.not_regular"
    assert "link.txt" in str(caught.value) and str(tmp_path) not in str(caught.value)


async def test_a_fifo_a_folder_and_a_device_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)  # no writer: opening it to read would block forever
    folder = tmp_path / "folder.txt"
    folder.mkdir()
    for path in (fifo, folder, Path("/dev/zero")):
        with pytest.raises(AttachmentError) as caught:
            await extract_document(path)
        assert caught.value.key == "attach.not_regular", path


async def test_a_file_over_the_limit_is_refused_from_its_size_alone(tmp_path: Path) -> None:
    huge = tmp_path / "huge.csv"
    huge.touch()
    os.truncate(huge, 2 * 1024 * 1024 * 1024)  # a sparse 2 GB file: nothing to read
    os.chmod(huge, 0)  # and unreadable: any attempt to read it would fail differently
    try:
        with pytest.raises(AttachmentError) as caught:
            await extract_document(huge)
    finally:
        os.chmod(huge, 0o600)
    assert caught.value.key == "attach.too_large"
    assert "'huge.csv' is 2 GB, more than the 64 MB" in str(caught.value)
    assert "2 GB" in caught.value.sentence("zh_CN")
    assert MAX_FILE_BYTES == 64 * 1024 * 1024


async def test_a_missing_file_or_an_unknown_type_is_said_so(tmp_path: Path) -> None:
    with pytest.raises(AttachmentError) as caught:
        await extract_document(tmp_path / "gone.txt")
    assert caught.value.key == "attach.missing"
    with pytest.raises(AttachmentError) as caught:
        await extract_document(write(tmp_path, "setup.exe", b"MZ"))
    assert caught.value.key == "attach.unsupported" and ".exe" in str(caught.value)


# ------------------------------------------------------------------------------- the child


def children_of_this_process() -> set[int]:
    """The live child processes of this test process running the test child."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == os.getpid() and state != "Z" and b"attach_child.py" in cmdline:
            found.add(int(entry))
    return found


def wait_until(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    """Block until ``condition()`` holds (run in a thread: the event loop goes on); the
    limit only ends a hang."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the condition never held")
        time.sleep(0.02)


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_a_hanging_reader_is_killed_on_timeout() -> None:
    limits = ChildLimits(timeout=1.0, command=CHILD)
    with pytest.raises(AttachmentError) as caught:
        await run_child("hang", b"data", {}, path="/x/slow.pdf", limits=limits)
    assert caught.value.key == "attach.timeout"
    assert "slow.pdf" in str(caught.value) and "1 seconds" in str(caught.value)
    assert children_of_this_process() == set()  # killed and reaped


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_cancelling_the_caller_kills_the_reader() -> None:
    limits = ChildLimits(timeout=600.0, command=CHILD)
    task = asyncio.create_task(run_child("hang", b"", {}, path="slow.pdf", limits=limits))
    await asyncio.to_thread(wait_until, lambda: bool(children_of_this_process()))
    (pid,) = children_of_this_process()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not alive(pid)  # killed and reaped, not left a zombie


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_AS is POSIX")
async def test_a_reader_out_of_memory_is_stopped_by_its_limit() -> None:
    limits = ChildLimits(timeout=60.0, memory=512 * 1024 * 1024, command=CHILD)
    with pytest.raises(AttachmentError) as caught:
        await run_child("hog", b"", {}, path="big.pdf", limits=limits)
    assert caught.value.key == "attach.out_of_memory"
    assert "needed more than 512 MB of memory" in str(caught.value)


async def test_a_crashing_reader_is_a_sentence_not_a_crash_of_the_caller() -> None:
    limits = ChildLimits(timeout=60.0, command=CHILD)
    with pytest.raises(AttachmentError) as caught:
        await run_child("crash", b"", {}, path="bad.pdf", limits=limits)
    assert caught.value.key == "attach.crashed" and "SIGSEGV" in str(caught.value)
    assert "SIGSEGV" in caught.value.sentence("zh_CN")


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_AS is POSIX")
async def test_the_real_reader_limits_its_memory() -> None:
    """The worker sets RLIMIT_AS on itself: a picture too big to decode under a small limit
    is stopped, not allowed to take the machine's memory."""
    from PIL import Image

    image = Image.new("RGB", (7000, 7000), (1, 2, 3))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    options = {
        "long_side": 2048,
        "max_bytes": 5_000_000,
        "formats": ["image/png"],
        "max_pixels": 64_000_000,
    }
    with pytest.raises(AttachmentError) as caught:
        await run_child(
            "image",
            buffer.getvalue(),
            options,
            path="large.png",
            limits=ChildLimits(memory=160 * 1024 * 1024),
        )
    assert caught.value.key == "attach.out_of_memory"
    # With the default limit the same picture is prepared.
    header, payload = await run_child(
        "image", buffer.getvalue(), options, path="large.png", limits=ChildLimits()
    )
    assert header["width"] == 2048 and payload.startswith(b"\x89PNG")


async def test_an_unknown_answer_from_the_child_is_a_crash(tmp_path: Path) -> None:
    liar = tmp_path / "liar.py"
    liar.write_text(
        "import sys, json\n"
        "sys.stdin.buffer.read()\n"
        "print(json.dumps({'error': 'storage.corrupt', 'params': {}}))\n"
    )
    limits = ChildLimits(command=[sys.executable, str(liar)])
    with pytest.raises(AttachmentError) as caught:
        await run_child("text", b"x", {}, path="a.txt", limits=limits)
    assert caught.value.key == "attach.crashed"
    # prepare_image goes through the same checks: a picture still needs a picture file.
    with pytest.raises(AttachmentError):
        await prepare_image(write(tmp_path, "x.png", b"not a png"))
