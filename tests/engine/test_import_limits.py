"""Files from elsewhere cannot hold an import: one string, one conversation, one Cancel.

A crafted export held an import for hours (time grew with the square of one string's length:
ijson's parser starts a token over at each read that ends inside it) and Cancel waited for the
conversation being parsed. Here, with real files: a conversation holding a string over
`MAX_STRING_BYTES`, or larger than `MAX_CONVERSATION_BYTES`, is skipped and named while the
others are imported; the reading hands each string to the parser once, whole (linear work,
counted), in bounded memory; and a stop set mid-conversation ends the reading within a read.
No test here measures time: `make bench` prints the figures.
"""

from __future__ import annotations

import asyncio
import io
import json
import threading
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest

from engine.archive import _guard as guard_module
from engine.archive import import_file
from engine.archive._guard import (
    CHUNK,
    MAX_CONVERSATION_BYTES,
    MAX_STRING_BYTES,
    Cancelled,
    StreamGuard,
    guarded_items,
)
from engine.archive.chatgpt import read_conversations as read_chatgpt
from engine.archive.continuo_json import read_conversations as read_continuo
from engine.archive.records import ImportedConversation, ImportSkip
from engine.errors import ArchiveError
from engine.storage.sqlite import SQLiteSessionStorage

pytestmark = pytest.mark.timeout(120)

MB = 1024 * 1024


def _conversation(sid: str, title: str, messages: int = 2, text: str = "hello") -> dict[str, Any]:
    return {
        "id": sid,
        "title": title,
        "created_at": 1.0,
        "updated_at": 2.0,
        "metadata": {},
        "active_seq": messages or None,
        "tool_starts": [],
        "messages": [
            {
                "seq": n + 1,
                "parent_seq": n or None,
                "request_id": "r",
                "message": {
                    "v": 1,
                    "type": "user",
                    "id": f"{sid}-{n}",
                    "created_at": 1.0,
                    "content": text,
                },
            }
            for n in range(messages)
        ],
    }


def _export(path: Path, *conversations: dict[str, Any] | str) -> Path:
    """A Continuo export; a conversation given as text is written as it is."""
    parts = [c if isinstance(c, str) else json.dumps(c) for c in conversations]
    head = '{"format": "continuo-export", "version": 1, "conversations": ['
    path.write_text(head + ",\n".join(parts) + "]}", encoding="utf-8")
    return path


def _chatgpt(cid: str, title: str) -> dict[str, Any]:
    node = {
        "id": "n1",
        "parent": "root",
        "children": [],
        "message": {
            "id": "n1",
            "author": {"role": "user"},
            "create_time": 1.0,
            "content": {"content_type": "text", "parts": ["hello"]},
        },
    }
    return {
        "title": title,
        "create_time": 1.0,
        "update_time": 2.0,
        "mapping": {"root": {"id": "root", "parent": None, "children": ["n1"]}, "n1": node},
        "current_node": "n1",
        "conversation_id": cid,
    }


@pytest.fixture
async def storage(tmp_path: Path) -> Any:
    s = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    yield s
    await s.close()


# ---------------------------------------------------------------------------- the limits


@pytest.mark.parametrize("where", ["title", "message", "number"])
async def test_a_string_over_the_limit_skips_its_conversation_and_names_it(
    storage: SQLiteSessionStorage, tmp_path: Path, where: str
) -> None:
    assert MAX_STRING_BYTES == 16 * MB
    long = "x" * (MAX_STRING_BYTES + 1)
    if where == "title":  # the id comes before it: the conversation is named by its id
        big: dict[str, Any] | str = _conversation("big-id", long)
        named = "big-id"
    elif where == "message":  # the title comes before it
        big = _conversation("big-id", "Big one", text=long)
        named = "Big one"
    else:  # a number as long: the parser would hold it as long as a string
        big = json.dumps(_conversation("big-id", "Big number"))[:-1] + ', "n": 1' + "0" * (
            MAX_STRING_BYTES + 1
        ) + "}"
        named = "Big number"
    path = _export(
        tmp_path / "big.json", _conversation("a", "First"), big, _conversation("c", "Third")
    )
    report = await import_file(storage, path)
    assert (report.imported, report.messages) == (2, 4)
    [(name, reason)] = report.skipped
    assert name == named
    assert "longer than 16 MB" in reason and "not imported" in reason
    assert [s.title for s in await storage.list_sessions()] == ["Third", "First"]


async def test_a_conversation_over_the_limit_is_skipped_and_named(
    storage: SQLiteSessionStorage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit is 256 MB; scaled down here to 1 MB so the file stays small."""
    assert MAX_CONVERSATION_BYTES == 256 * MB
    monkeypatch.setattr(guard_module, "MAX_CONVERSATION_BYTES", 1 * MB)
    many = _conversation("many", "Many messages", messages=8000)  # about 1.2 MB as written
    assert len(json.dumps(many)) > MB
    path = _export(
        tmp_path / "many.json",
        _conversation("a", "First"),
        many,
        _conversation("c", "Third", messages=3000),  # under it
    )
    report = await import_file(storage, path)
    assert (report.imported, report.messages) == (2, 3002)
    [(name, reason)] = report.skipped
    assert name == "Many messages" and "larger than 1 MB" in reason


async def test_a_huge_title_in_a_small_zip_is_skipped_in_bounded_memory(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    """A zip of a few hundred KB holding a ChatGPT conversation with a 256 MB title (ChatGPT
    writes the title first, the id last: it is named by its place). The import reads past it
    keeping nothing of it, and imports the conversations around it."""
    path = tmp_path / "export.zip"
    head = json.dumps(_chatgpt("c1", "Before")).encode()
    tail = json.dumps(_chatgpt("c3", "After")).encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("conversations.json", "w", force_zip64=True) as member:
            member.write(b"[" + head + b', {"title": "')
            block = b"x" * MB
            for _ in range(256):
                member.write(block)
            member.write(b'", "mapping": {}, "conversation_id": "huge"}, ' + tail + b"]")
    assert path.stat().st_size < 2 * MB
    tracemalloc.start()
    try:
        report = await import_file(storage, path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.imported == 2
    [(name, reason)] = report.skipped
    assert name == "(conversation 2 of the file)" and "longer than 16 MB" in reason
    assert peak < MAX_STRING_BYTES + 16 * MB, f"{peak / MB:.0f} MB"


async def test_a_string_over_the_limit_outside_the_conversations_refuses_the_file(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    path = tmp_path / "header.json"
    path.write_text(
        '{"format": "continuo-export", "version": 1, "note": "'
        + "x" * (MAX_STRING_BYTES + 1)
        + '", "conversations": []}',
        encoding="utf-8",
    )
    with pytest.raises(ArchiveError) as caught:
        await import_file(storage, path)
    assert caught.value.key == "archive.too_large"
    assert "longer than 16 MB" in str(caught.value) and str(path) in str(caught.value)
    assert caught.value.sentence("zh_CN") != str(caught.value)
    assert await storage.list_sessions() == []


# ---------------------------------------------------------------------------- linear work


class _Recorded(StreamGuard):
    """The guard, recording what each read hands the parser."""

    pieces: list[bytes]

    def read(self, size: int = -1, /) -> bytes:
        piece = super().read(size)
        self.pieces.append(piece)
        return piece


def _ends_inside_a_token(pieces: list[bytes]) -> list[int]:
    """The reads that end inside a string (or a number): the parser would start it over."""
    inside, escaped, cut = False, False, []
    for number, piece in enumerate(pieces):
        for byte in piece:
            if escaped:
                escaped = False
            elif inside and byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                inside = not inside
        if piece and (inside or piece[-1:].isdigit()):
            cut.append(number)
    return cut


def test_each_string_is_handed_to_the_parser_once_and_whole(tmp_path: Path) -> None:
    """What made the time quadratic: reads that end inside a long string (the parser starts
    the string over at each). The guard hands a 12 MB string (escapes in it) out in the read
    that finishes it, and every byte once."""
    text = ('a "quoted" line\\ ' * 800_000)[: 12 * MB]
    path = _export(
        tmp_path / "long.json",
        _conversation("a", "First", text=text),
        _conversation("b", "Second", messages=3000, text="short " * 20),
    )
    data = path.read_bytes()
    with path.open("rb") as file:
        guard = _Recorded(file, items=("conversations",))
        guard.pieces = []
        items = list(guarded_items(guard, "conversations.item"))
    assert [item["id"] for item in items] == ["a", "b"]
    assert items[0]["messages"][0]["message"]["content"] == text
    assert b"".join(guard.pieces) == data  # every byte once, in order
    assert _ends_inside_a_token(guard.pieces) == []
    assert max(map(len, guard.pieces)) >= len(json.dumps(text))  # the string, whole
    assert len(guard.pieces) <= len(data) // CHUNK + 3  # one read a chunk, no more


# ---------------------------------------------------------------------------- Cancel


class _StopsAt(io.RawIOBase):
    """A real file that sets `stop` once `at` bytes were read through it (in the second
    read through when `second`), and counts what is read after."""

    def __init__(self, path: Path, stop: threading.Event, at: int, second: bool = False) -> None:
        super().__init__()
        self._file = path.open("rb")
        self._stop, self._at, self._second = stop, at, second
        self.read_total = 0
        self.after_stop = 0
        self._passes = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self._passes += 1
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def readinto(self, buffer: Any) -> int:
        data = self._file.read(len(buffer))
        buffer[: len(data)] = data
        if self._stop.is_set():
            self.after_stop += len(data)
        elif self._file.tell() >= self._at and (self._passes > 0 or not self._second):
            self._stop.set()
        return len(data)

    def close(self) -> None:
        self._file.close()
        super().close()


@pytest.mark.parametrize("second", [False, True], ids=["checking", "reading"])
def test_a_stop_ends_the_reading_mid_conversation(tmp_path: Path, second: bool) -> None:
    """One conversation of about 6 MB: the stop is set in its middle (in the first read
    through, which checks the file, or in the second, which builds it). The reader raises
    `Cancelled` having read at most a read more, never the rest of the conversation."""
    path = _export(tmp_path / "one.json", _conversation("one", "One", messages=40_000))
    size = path.stat().st_size
    assert size > 5 * MB
    stop = threading.Event()
    source = _StopsAt(path, stop, size // 2, second)
    with pytest.raises(Cancelled):
        for _item in read_continuo(source, "one.json", stop=stop):
            pass
    assert stop.is_set()
    assert source.after_stop <= 2 * CHUNK, source.after_stop


def test_a_stop_ends_a_chatgpt_reading_inside_a_long_string(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    long = _chatgpt("c1", "x" * (12 * MB))
    path.write_text(json.dumps([long]), encoding="utf-8")
    stop = threading.Event()
    source = _StopsAt(path, stop, 4 * MB)
    with pytest.raises(Cancelled):
        list(read_chatgpt(source, name="conversations.json", stop=stop))
    assert source.after_stop <= 2 * CHUNK, source.after_stop


async def test_cancel_ends_an_import_mid_conversation(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    """Cancelled at the first progress report (told while the bytes are read, every 4 MB):
    the import ends there, mid-conversation, with nothing stored and nothing more told."""
    path = _export(
        tmp_path / "one.json",
        _conversation("one", "One", messages=60_000),
        _conversation("two", "Two"),
    )
    total = 2 * path.stat().st_size  # read through twice
    told: list[tuple[int, int]] = []
    cancelled = asyncio.Event()

    def progress(done: int, of: int) -> None:
        told.append((done, of))
        if not cancelled.is_set():
            cancelled.set()
            task.cancel()

    task = asyncio.ensure_future(import_file(storage, path, progress=progress))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert told and told[0][0] < total // 2, told  # in the first read through, at the start
    assert len(told) == 1, "nothing more is told once cancelled"
    assert await storage.list_sessions() == []
    # The file is not held open: a second import of it goes through whole.
    report = await import_file(storage, path)
    assert (report.imported, report.messages) == (2, 60_002)


def test_what_an_import_skips_for_its_size_says_so_in_every_language() -> None:
    from engine.sentences import sentence

    for key in ("archive.too_large.string", "archive.too_large.conversation"):
        english = sentence(key, "en", limit="16 MB")
        assert "16 MB" in english and "16 MB" in sentence(key, "zh_CN", limit="16 MB")
    assert isinstance(ImportSkip(None, None, "r", number=3).number, int)
    assert ImportedConversation  # the reader's types are those import_file stores


# ---------------------------------------------------------------------------- the guard itself


class _Dribble(io.RawIOBase):
    """Bytes handed out a few at a time (as a pipe or a zip member may): every boundary a
    string, an escape, a key or a number can be cut at."""

    def __init__(self, data: bytes, rng: Any) -> None:
        super().__init__()
        self._data, self._pos, self._rng = data, 0, rng

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1, /) -> bytes:
        piece = self._data[self._pos : self._pos + self._rng.randint(1, 40)]
        self._pos += len(piece)
        return piece


def _random_text(rng: Any) -> str:
    return "".join(rng.choice('ab"\\\n\u00e9\u2028{[]}:, \U0001f600') for _ in range(rng.randint(0, 12)))


def _random_value(rng: Any, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.3:
        return rng.choice([_random_text(rng), rng.randint(-(10**6), 10**6), 0.5, True, None])
    if roll < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {_random_text(rng): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


@pytest.mark.parametrize("items", [("conversations",), ()], ids=["continuo", "root list"])
def test_the_guard_changes_nothing_but_what_it_skips(
    items: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the reads' sizes: under the limits, every byte reaches the parser once and
    the same conversations come out; over them (scaled down to a few bytes), each
    conversation comes whole, or as a `Skipped` in its place, and the others are intact."""
    import random

    from engine.archive._guard import Skipped

    rng = random.Random(18)
    for limits in (False, True):
        if limits:
            monkeypatch.setattr(guard_module, "MAX_STRING_BYTES", 20)
            monkeypatch.setattr(guard_module, "MAX_CONVERSATION_BYTES", 60)
        for _trial in range(300):
            conversations = [
                {"id": _random_text(rng)[:3], "x": _random_value(rng)}
                if rng.random() < 0.85
                else _random_value(rng)
                for _ in range(rng.randint(0, 5))
            ]
            if items:
                document: Any = {"format": "continuo-export", "conversations": conversations}
            else:
                document = conversations
            text = json.dumps(document, ensure_ascii=rng.random() < 0.5).encode()
            guard = _Recorded(_Dribble(text, rng), items=items)
            guard.pieces = []
            found = list(guarded_items(guard, "conversations.item" if items else "item"))
            expected = json.loads(text)
            expected = expected["conversations"] if items else expected
            assert len(found) == len(expected), text
            if not limits:
                assert b"".join(guard.pieces) == text
                assert _ends_inside_a_token(guard.pieces) == [], text
            for got, want in zip(found, expected, strict=True):
                assert isinstance(got, Skipped) or got == want, (text, got, want)
            if not limits:
                assert not any(isinstance(got, Skipped) for got in found)


async def test_a_report_queued_before_the_cancel_is_seen_is_not_told() -> None:
    """The reading thread can queue two reports before the loop runs either; the first
    cancels the import, the second must not be told (the task has not yet woken to its
    cancellation, so `stop` is still clear). Found when CI told two reports."""
    from engine.archive.importer import _tell

    told: list[tuple[int, int]] = []
    stop = threading.Event()
    task = asyncio.ensure_future(asyncio.Event().wait())
    _tell(lambda d, t: told.append((d, t)), stop, task, 1, 10)
    task.cancel()  # cancelled, not yet run: stop is still clear
    _tell(lambda d, t: told.append((d, t)), stop, task, 2, 10)
    assert told == [(1, 10)]
    with pytest.raises(asyncio.CancelledError):
        await task
