"""Importing a file of conversations: a Continuo JSON export or a ChatGPT data export.

`import_file` looks at the file's first bytes to tell what it is, reads it with the matching
reader, and stores each conversation with `SQLiteSessionStorage.import_conversation`:

====================================  ==================================================
the file starts with                  read by
====================================  ==================================================
``{`` (a JSON object)                 `engine.archive.continuo_json`
``PK`` (a zip) or ``[`` (a JSON list)  `engine.archive.chatgpt` (``conversations.json``)
====================================  ==================================================

Invariants:

* Each conversation is stored whole or not at all (one transaction), and only once: a
  conversation imported before (its source and id are recorded) is counted as already
  present, so importing the same file twice adds nothing.
* A file that is none of these, or that its reader refuses (another program's JSON, a newer
  export, a Continuo export cut short), raises `ArchiveError` before anything is stored.
  (A ChatGPT export that breaks off part-way keeps the conversations before the break: its
  reader reports the break as a skip; see `engine.archive.chatgpt`.)
* A conversation a reader cannot read, or whose messages do not form a tree, is skipped and
  reported; the others are still imported.
* Parsing blocks, so the reader runs in a worker thread, a batch of conversations a hop;
  the loop only stores. `progress(bytes read, bytes to read)` is called on the caller's
  loop after each batch (a file read through twice counts twice).
* Cancelling the task stops the import at once: the reader looks at a stop event at every
  read of the file (64 KiB) and every thousand messages it converts, so a conversation
  being parsed is left where it is (`engine.archive._guard`). Those already stored stay
  (each is whole), the one being stored is finished first, and no report is made.
* One conversation is read within bounds: a string longer than `MAX_STRING_BYTES` (16 MB)
  or a conversation larger than `MAX_CONVERSATION_BYTES` (256 MB) is not read; it is
  skipped and named in the report (its title or id, else its place in the file), in time
  linear in the file.
* A picture a reader brought along (ChatGPT's zip holds them) is prepared as an attached
  one before its conversation is stored (`engine.archive._pictures`); the report counts the
  pictures imported and those not found.
* Progress is also told while the bytes are read (every `_PROGRESS_BYTES`), so a long
  conversation moves the bar too.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import ArchiveError, StorageError
from ..sentences import ErrorAction
from ._guard import MAX_CONVERSATION_BYTES, MAX_STRING_BYTES
from ._pictures import attach_pictures
from ._thread import in_thread
from .records import ImportedConversation, ImportSkip

if TYPE_CHECKING:
    from ..storage.sqlite import SQLiteSessionStorage

__all__ = [
    "MAX_CONVERSATION_BYTES",
    "MAX_STRING_BYTES",
    "ImportProgress",
    "ImportReport",
    "import_file",
]

#: ``progress(bytes_read, bytes_to_read)``, called on the caller's loop
ImportProgress = Callable[[int, int], None]

#: messages parsed per hop to the worker thread (a batch ends after the conversation that
#: reaches it), and conversations at most
_BATCH_MESSAGES = 2000
_BATCH_CONVERSATIONS = 64
#: bytes read between two progress reports from the reading thread
_PROGRESS_BYTES = 4 * 1024 * 1024

_BOM = b"\xef\xbb\xbf"
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_NO_NAME = "(a conversation without a title or id)"


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did."""

    imported: int  #: conversations added
    already_present: int  #: conversations imported before (or whose id is taken): not added
    #: conversations not imported: (their title, or id, and a sentence saying why)
    skipped: tuple[tuple[str, str], ...]
    placeholders: int  #: parts of imported messages replaced by a placeholder line
    messages: int  #: messages added
    #: pictures brought in with their messages (prepared as attached ones)
    pictures: int = 0
    #: pictures the messages showed that the file did not hold or that could not be read
    #: (each a placeholder line where it was; counted in `placeholders` too)
    pictures_missing: int = 0


async def import_file(
    storage: SQLiteSessionStorage,
    path: str | os.PathLike[str],
    *,
    progress: ImportProgress | None = None,
) -> ImportReport:
    """Import every conversation of the file at `path` into `storage`.

    Raises:
        ArchiveError: the file cannot be read, or is not a whole Continuo or ChatGPT export
            (nothing was stored).
        StorageError: the database refused a write (the disk is full...): the conversations
            stored before it stay.
        asyncio.CancelledError: the task was cancelled; the conversations stored before it
            stay, and there is no report.
    """
    stop = threading.Event()
    source = await in_thread(_open, Path(path), stop, stop=stop)
    if progress is not None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        source.counter.on_read = lambda count: loop.call_soon_threadsafe(
            _tell, progress, stop, task, count, source.total
        )
    imported = already = placeholders = messages = done = pictures = missing = 0
    skipped: list[tuple[str, str]] = []
    try:
        while True:
            batch = await in_thread(_take, source.items, stop=stop)
            if not batch:
                break
            for item in batch:
                if isinstance(item, ImportSkip):
                    skipped.append((_name_of(item), item.reason))
                    continue
                brought, unfound = len(item.pictures), item.missing_pictures
                item = await attach_pictures(item)
                try:
                    stored = await storage.import_conversation(item)
                except StorageError as exc:
                    if exc.key not in ("archive.bad_tree", "storage.missing_blob"):
                        raise
                    skipped.append((item.title or item.source_id, str(exc)))
                    continue
                if stored is None:
                    already += 1
                else:
                    imported += 1
                    messages += len(item.messages)
                    placeholders += item.placeholders
                    pictures += brought - (item.missing_pictures - unfound)
                    missing += item.missing_pictures
            if progress is not None:
                done = min(source.counter.count, source.total)
                progress(done, source.total)
    finally:
        source.close()
    if progress is not None and done < source.total:
        progress(source.total, source.total)  # the reader stopped short of a last read
    return ImportReport(
        imported, already, tuple(skipped), placeholders, messages, pictures, missing
    )


def _tell(
    progress: ImportProgress,
    stop: threading.Event,
    task: asyncio.Task[Any] | None,
    count: int,
    total: int,
) -> None:
    """A progress report from the reading thread, on the loop (none once cancelled).

    The reader may queue two reports before the loop runs either; when the first one
    cancels the import, the second runs before the task has seen its cancellation (and
    before `stop` is set), so the task's own cancelling count is asked too.
    """
    if stop.is_set() or (task is not None and task.cancelling()):
        return
    progress(min(count, total), total)


def _name_of(skip: ImportSkip) -> str:
    """How the report names a conversation it skipped: its title, its id, its place."""
    if skip.title or skip.source_id:
        return skip.title or skip.source_id or _NO_NAME
    if skip.number is not None:
        return f"(conversation {skip.number} of the file)"
    return _NO_NAME


def _take(items: Iterator[ImportedConversation | ImportSkip]) -> list[Any]:
    """The next batch of the reader's conversations ([] at the end); in the worker thread."""
    batch: list[Any] = []
    size = 0
    for item in items:
        batch.append(item)
        size += len(item.messages) if isinstance(item, ImportedConversation) else 1
        if size >= _BATCH_MESSAGES or len(batch) >= _BATCH_CONVERSATIONS:
            break
    return batch


# ---------------------------------------------------------------------------- the file


class _Counting(io.RawIOBase):
    """A binary file that counts the bytes read through it (for progress)."""

    def __init__(self, inner: IO[bytes]) -> None:
        super().__init__()
        self._inner = inner
        self.count = 0
        #: called (in the reading thread) each time another `_PROGRESS_BYTES` were read
        self.on_read: Callable[[int], object] | None = None
        self._told = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._inner.seekable()

    def readinto(self, buffer: Any) -> int:
        data = self._inner.read(len(buffer))
        buffer[: len(data)] = data
        self.count += len(data)
        if self.on_read is not None and self.count - self._told >= _PROGRESS_BYTES:
            self._told = self.count
            self.on_read(self.count)
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._inner.seek(offset, whence)

    def tell(self) -> int:
        return self._inner.tell()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._inner.close()
        super().close()


@dataclass(slots=True)
class _Source:
    """An opened file, its reader and what closes them."""

    items: Iterator[ImportedConversation | ImportSkip]
    counter: _Counting
    total: int  #: bytes the reader reads in all
    closers: list[Callable[[], object]] = field(default_factory=list)

    def close(self) -> None:
        close = getattr(self.items, "close", None)
        for step in ([close] if callable(close) else []) + self.closers[::-1]:
            with contextlib.suppress(Exception):
                step()


def _open(path: Path, stop: threading.Event) -> _Source:
    """Open the file, tell what it is and start its reader; in the worker thread."""
    name = str(path)
    try:
        info = os.stat(path)  # never opens: a pipe would block the open
    except OSError as exc:
        raise _unreadable(name, exc) from exc
    if not stat.S_ISREG(info.st_mode):
        raise ArchiveError(name, key="archive.not_a_file")
    if info.st_size == 0:
        raise ArchiveError(name, key="archive.empty")
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise _unreadable(name, exc) from exc
    counter = _Counting(raw)
    file = io.BufferedReader(counter)
    try:
        head = file.peek(4096)[:4096]
        if head[:4] in _ZIP_MAGIC:
            first = b"PK"
        else:
            body = head[len(_BOM) :] if head.startswith(_BOM) else head
            first = body.lstrip(b" \t\r\n")[:1]
        # The readers (and ijson) are imported when a file is read: `import engine`, which
        # the window does at start, does not pay for them.
        if first == b"{":
            from . import continuo_json

            items = continuo_json.read_conversations(file, name, stop=stop)
            return _Source(items, counter, info.st_size * continuo_json.PASSES, [file.close])
        if first in (b"PK", b"["):
            # The ChatGPT reader opens the zip itself, checks that the JSON is a list of
            # its conversations, and says what else it found (archive.chatgpt_*).
            from .chatgpt import read_conversations as read_chatgpt

            items = read_chatgpt(file, name=name, stop=stop)
            return _Source(items, counter, info.st_size, [file.close])
        raise ArchiveError(name, key="archive.unknown_format")
    except OSError as exc:
        file.close()
        raise _unreadable(name, exc) from exc
    except BaseException:
        file.close()
        raise


def _unreadable(name: str, exc: OSError) -> ArchiveError:
    return ArchiveError(
        name,
        key="archive.unreadable",
        params={"reason": exc.strerror or str(exc)},
        action=ErrorAction.CHECK_FOLDER,
    )
