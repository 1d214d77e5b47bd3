"""The file an export writes: a temporary file beside the target, renamed onto it at the end.

`Sink` writes in chunks of about `CHUNK_BYTES`, creates the file private (0600), fsyncs it and
renames it onto the target in one step, so the target is the old file or the new one, at most
a leftover ``.partial`` that is never read. `discard` removes the temporary file (an error, a
cancel before the rename). `Folder` does the same for the folder of originals a Markdown
export writes beside its file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..errors import ArchiveError
from ..sentences import ErrorAction

__all__ = ["CHUNK_BYTES", "Folder", "Sink"]

#: about how many bytes are gathered before one write to the file
CHUNK_BYTES = 256 * 1024


class Sink:
    """The temporary file beside the target, written in chunks, renamed onto it at the end.

    Every method but `discard` runs in a worker thread, one at a time.
    """

    def __init__(self, target: Path) -> None:
        self.target = target
        self.temp = target.with_name(f".{target.name}.partial-{secrets.token_hex(4)}")
        self._file: IO[bytes] | None = None
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._written = 0
        self.committed = False  #: renamed onto the target: the export is in place

    @property
    def size(self) -> int:
        """The bytes written so far (the file's size, once committed)."""
        return self._written

    def open(self) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        with self._refusals():
            self._file = os.fdopen(os.open(self.temp, flags, 0o600), "wb")

    def add(self, make: Callable[..., str], *args: Any) -> None:
        data = make(*args).encode("utf-8")
        self._pending.append(data)
        self._pending_size += len(data)
        if self._pending_size >= CHUNK_BYTES:
            self._flush()

    def commit(self) -> int:
        """Write what is left, make it durable, put it in place; return its size."""
        assert self._file is not None
        self._flush()
        with self._refusals():
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self.temp, self.target)
        self._file = None
        self.committed = True
        _sync_folder(self.target.parent)
        return self._written

    def discard(self) -> None:
        """Close and remove the temporary file (on the caller's thread: a few system calls)."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
        with contextlib.suppress(OSError):
            self.temp.unlink()

    def _flush(self) -> None:
        if not self._pending:
            return
        assert self._file is not None
        data = b"".join(self._pending)
        self._pending.clear()
        self._pending_size = 0
        with self._refusals():
            self._file.write(data)
        self._written += len(data)

    @contextlib.contextmanager
    def _refusals(self) -> Any:
        try:
            yield
        except OSError as exc:
            raise ArchiveError(
                str(self.target),
                key="archive.cannot_write",
                params={"reason": exc.strerror or str(exc)},
                action=ErrorAction.CHECK_FOLDER,
            ) from exc


def _sync_folder(folder: Path) -> None:
    """fsync the folder so the rename survives a power cut (POSIX; elsewhere a no-op)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class Folder:
    """The folder of originals beside a Markdown export (``<name>_files``), written whole or
    not at all as its file is: files go into a hidden temporary folder beside it, which
    `commit` renames into place (an earlier export's folder of that name is replaced, then
    removed) just before the file's own rename.

    Created on the first `write` only: an export without attachments makes no folder. Every
    method but `discard` runs in a worker thread, one at a time.
    """

    def __init__(self, target: Path) -> None:
        self.target = target.with_name(f"{target.stem}_files")
        self.temp = target.with_name(f".{self.target.name}.partial-{secrets.token_hex(4)}")
        self._made = False
        self.files = 0  #: files written into it
        self.committed = False

    @property
    def made(self) -> bool:
        """True once a file was written (the folder will be put in place)."""
        return self._made

    def write(self, name: str, data: bytes) -> None:
        """Write one original under `name` (a `engine.archive._attached.FileNames` name: no
        separator, never ``..``), private (0600), synced."""
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise ValueError(f"not a plain file name: {name!r}")
        with self._refusals():
            if not self._made:
                os.mkdir(self.temp, 0o700)
                self._made = True
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(self.temp / name, flags, 0o600)
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
        self.files += 1

    def commit(self) -> None:
        """Put the folder in place (nothing when no file was written)."""
        if not self._made:
            return
        with self._refusals():
            if self.target.is_symlink() or (self.target.exists() and not self.target.is_dir()):
                raise FileExistsError(
                    errno.EEXIST, f"{self.target.name} is there and is not a folder"
                )
            old = None
            if self.target.exists():
                old = self.target.with_name(f".{self.target.name}.old-{secrets.token_hex(4)}")
                os.replace(self.target, old)
            os.replace(self.temp, self.target)
        self.committed = True
        _sync_folder(self.target.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def discard(self) -> None:
        """Remove the temporary folder (on the caller's thread)."""
        if self._made and not self.committed:
            shutil.rmtree(self.temp, ignore_errors=True)

    @contextlib.contextmanager
    def _refusals(self) -> Any:
        try:
            yield
        except OSError as exc:
            raise ArchiveError(
                str(self.target),
                key="archive.cannot_write",
                params={"reason": exc.strerror or str(exc)},
                action=ErrorAction.CHECK_FOLDER,
            ) from exc
