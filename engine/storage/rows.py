"""Rows of the conversation file read back as the engine's values, damage told, not raised
where one row must not hide the rest.

Text is read as bytes (``CAST(... AS BLOB)``): sqlite3 raises a generic error at fetch time
on text that is not UTF-8, naming neither the file nor the damage, so these functions decode
it themselves and say which conversation or message is unreadable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CorruptDatabaseError, UnknownMessageTypeError
from ..extensions import StoredMessage
from ..messages import message_from_json

__all__ = [
    "HOLDER_COLUMNS",
    "ROW_COLUMNS",
    "SESSION_COLUMNS",
    "SessionInfo",
    "json_object",
    "session_info",
    "stored",
]

#: a lease holder's columns, as `engine.storage.lease.LeaseHolder` takes them
HOLDER_COLUMNS = "host, boot_id, pid, process_started, acquired_at, heartbeat_at"
#: a message row as `stored` reads it
ROW_COLUMNS = "m.seq, m.request_id, CAST(m.body AS BLOB)"
#: a conversation's row as `session_info` reads it: one row with text that is not UTF-8
#: would otherwise hide every conversation (it is marked instead)
SESSION_COLUMNS = (
    "CAST(id AS BLOB), CAST(title AS BLOB), typeof(title), created_at, updated_at, "
    "CAST(metadata AS BLOB)"
)


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One conversation as listed: its id, title and times (seconds since the epoch)."""

    id: str
    title: str | None  #: None until set, or taken from the first user message
    created_at: float
    updated_at: float  #: bumped by every append; the conversation list sorts on it
    metadata: dict[str, Any] = field(default_factory=dict)
    #: None when the row reads well; else what in it is damaged (its fields then hold what
    #: could be read: an unreadable title is None, unreadable metadata is empty)
    unreadable: str | None = None


def stored(row: Any, session_id: str, path: Path) -> StoredMessage:
    """The message of a `ROW_COLUMNS` row.

    Raises:
        UnknownMessageTypeError: a type (or format) this version cannot read.
        CorruptDatabaseError: the body is not a message.
    """
    seq, request_id, body = row
    try:
        if isinstance(body, bytes):
            body = body.decode("utf-8")
        message = message_from_json(body)
    except UnknownMessageTypeError as exc:
        raise UnknownMessageTypeError(exc.type_name, str(path)) from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptDatabaseError(
            str(path), f"message {seq} of conversation {session_id!r} is unreadable"
        ) from exc
    return StoredMessage(seq, request_id, message)


def session_info(row: Any, path: Path) -> SessionInfo:
    """The `SessionInfo` of a `SESSION_COLUMNS` row; a damaged field is reported, not raised."""
    raw_id, raw_title, title_type, created_at, updated_at, raw_metadata = row
    damaged: list[str] = []
    sid, _ = _decoded(raw_id)
    title, readable = _decoded(raw_title)
    if title_type not in ("text", "null") or not readable:
        # A title that is not text is dropped; text that is not UTF-8 is shown with
        # replacement characters, and the row is marked.
        damaged.append("its title")
        title = title if title_type == "text" else None
    times: list[float] = []
    for name, value in (("creation time", created_at), ("update time", updated_at)):
        if isinstance(value, int | float) and not isinstance(value, bool):
            times.append(float(value))
        else:
            damaged.append(f"its {name}")
            times.append(0.0)
    metadata, readable = _decoded(raw_metadata)
    try:
        if not readable:
            raise CorruptDatabaseError(str(path), "metadata that is not UTF-8")
        meta = json_object(metadata or "", str(sid), path)
    except CorruptDatabaseError:
        damaged.append("its settings (metadata)")
        meta = {}
    unreadable = (" and ".join(damaged) + " could not be read") if damaged else None
    return SessionInfo(str(sid), title, times[0], times[1], meta, unreadable)


def json_object(text: str | bytes | None, session_id: str, path: Path) -> dict[str, Any]:
    """A conversation's metadata as a dict.

    Raises:
        CorruptDatabaseError: it is not a JSON object.
    """
    try:
        value = json.loads(text or "{}")
    except (ValueError, TypeError):
        value = None
    if not isinstance(value, dict):
        raise CorruptDatabaseError(
            str(path), f"the metadata of conversation {session_id!r} is unreadable"
        )
    return value


def _decoded(value: Any) -> tuple[str | None, bool]:
    """``value`` (bytes read with CAST AS BLOB, or None) as text, and whether it was UTF-8."""
    if value is None:
        return None, True
    if not isinstance(value, bytes):
        return str(value), True
    try:
        return value.decode("utf-8"), True
    except UnicodeDecodeError:
        return value.decode("utf-8", errors="replace"), False
