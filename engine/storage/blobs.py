"""`Blobs`: the SQLite store's part that keeps attachments' bytes, in the same file.

Invariants (schema version 7, `engine.storage.migrations`):

* Bytes are stored once, keyed by their SHA-256 (``blobs``): the same picture attached twice,
  or kept by many branches and forks, is one row.
* They are written inside the transaction of the append that stores the message referring
  to them (`stage`, called by `engine.storage.history.History`): a message is never stored
  without its bytes, and bytes never without a message (bytes no message of the append
  refers to are refused before anything is written).
* A message may refer to bytes already stored (an edit resent, a regenerate): they need not
  be passed again; a reference to bytes neither passed nor stored is refused
  (``storage.missing_blob``) and nothing is written.
* ``blob_refs`` says which message refers to which blob; triggers on ``messages`` keep it in
  every write's transaction, and the last reference's deletion deletes the bytes. Messages
  are deleted only with their conversation (`engine.storage.sessions`), so that is when a
  blob goes: deleting one of two conversations sharing a picture keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from ..attachments import Blob, blob_refs, check_blobs
from ..errors import CorruptDatabaseError, ErrorAction, StorageError
from ..messages import Message, attachments_of
from .core import StorageCore

__all__ = ["Blobs"]


class Blobs:
    """Attachments' bytes on the core's connections."""

    def __init__(self, core: StorageCore) -> None:
        self._core = core

    @staticmethod
    def check(messages: Sequence[Message], blobs: Sequence[Blob]) -> None:
        """Refuse bytes no message of the append refers to, before any write begins
        (`engine.attachments.check_blobs`: `ValueError`)."""
        check_blobs(attachments_of(messages), blobs)

    async def stage(
        self, db: aiosqlite.Connection, messages: Sequence[Message], blobs: Sequence[Blob]
    ) -> None:
        """Inside the append's transaction (on the writer ``db``): store ``blobs`` (bytes
        already stored are kept as they are), then make sure every blob ``messages`` refer
        to is stored.

        Raises:
            StorageError: ``storage.missing_blob``: a message refers to bytes neither passed
                nor stored; the transaction is rolled back, nothing is written.
        """
        if blobs:
            await db.executemany(
                "INSERT OR IGNORE INTO blobs (sha256, data, size, media_type) VALUES (?, ?, ?, ?)",
                [(b.sha256, b.data, b.size, b.media_type) for b in blobs],
            )
        refs = blob_refs(attachments_of(messages))
        if not refs:
            return
        given = {b.sha256 for b in blobs}
        unknown = [ref for ref in refs if ref not in given]
        if not unknown:
            return
        marks = ", ".join("?" * len(unknown))
        found = {
            row[0]
            for row in await db.execute_fetchall(
                f"SELECT sha256 FROM blobs WHERE sha256 IN ({marks})", unknown
            )
        }
        missing = [ref for ref in unknown if ref not in found]
        if missing:
            raise StorageError(
                key="storage.missing_blob",
                params={"ref": missing[0][:12], "path": str(self._core.path)},
                action=ErrorAction.NONE,
            )

    async def read_blob(self, sha256: str) -> Blob | None:
        """The stored bytes of a reference, or None when none are stored.

        Raises:
            CorruptDatabaseError: the stored bytes no longer have their SHA-256 (damage).
        """
        rows = await self._core.read(
            "SELECT data, media_type FROM blobs WHERE sha256 = ?", (sha256,)
        )
        if not rows:
            return None
        data, media_type = rows[0]
        try:
            return Blob(sha256, bytes(data), str(media_type))
        except (ValueError, TypeError) as exc:
            raise CorruptDatabaseError(
                str(self._core.path), f"the bytes of attachment {sha256[:12]}"
            ) from exc
