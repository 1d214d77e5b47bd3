"""The file an export writes: a temporary file beside the target, renamed onto it at the end.

`Sink` writes in chunks of about `CHUNK_BYTES`, creates the file private (0600), fsyncs it and
renames it onto the target in one step, so the target is the old file or the new one, at most
a leftover ``.partial`` that is never read. `discard` removes the temporary file (an error, a
cancel before the rename).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..errors import ArchiveError
from ..sentences import ErrorAction

__all__ = ["CHUNK_BYTES", "Sink"]

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
