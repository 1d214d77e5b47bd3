"""Reading a Continuo JSON export (``docs/export-format.md``) back, one conversation at a time.

`read_conversations` turns a file written by `engine.archive.export` into
`ImportedConversation` values that keep every id: a conversation comes back under its own
session id, with its branches, shown version, settings and tool start records.

It reads with ``ijson``, so only one conversation is in memory at a time, in two passes:

1. the whole file is checked first, without building anything: it must be JSON, say
   ``"format": "continuo-export"`` (before its ``"conversations"``), and have a ``version``
   this code reads. A file that fails — not JSON, another program's, newer, cut short —
   raises `ArchiveError` naming the file and the first problem, before any conversation is
   handed out, so an import of it changes nothing;
2. then each conversation is read and handed out. One whose content cannot be read (a
   message of a type this version does not know, a missing field) becomes an `ImportSkip`
   saying why; the others still come.

Both passes read through `engine.archive._guard.StreamGuard`: in time linear in the file,
without nesting that would exhaust memory, and passing over a conversation larger than
`MAX_CONVERSATION_BYTES` or holding a string longer than `MAX_STRING_BYTES` (an
`ImportSkip` naming it). With a `stop` event, setting it ends the reading within one read
(`Cancelled`), whatever the conversation being read.

Blocking: run it in a worker thread (`engine.archive.importer` does).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO

import ijson  # type: ignore[import-untyped, unused-ignore]

from ..attachments import blob_refs
from ..errors import ArchiveError, ContinuoError
from ..messages import attachments_of, message_from_dict
from ..sentences import ErrorAction, Phrase, sentence
from ._attached import BlobProblem, blobs_from_json
from ._guard import (
    Cancelled,
    Skipped,
    StreamGuard,
    TooDeep,
    TooLarge,
    guarded_events,
    guarded_items,
)
from .export import EXPORT_FORMAT, EXPORT_VERSION
from .records import ImportedConversation, ImportedMessage, ImportSkip

__all__ = ["PASSES", "SOURCE", "read_conversations"]

#: the ``source`` of conversations read here (the ``imports`` record's)
SOURCE = "continuo"

#: how many times `read_conversations` reads the file through (progress counts both)
PASSES = 2

_SCALARS = frozenset({"string", "number", "boolean", "null"})


def read_conversations(
    file: BinaryIO, name: str | None = None, *, stop: threading.Event | None = None
) -> Iterator[ImportedConversation | ImportSkip]:
    """Yield each conversation of the export in `file` (binary, seekable), in file order.

    Args:
        name: the file's name for sentences (default: ``file.name``).
        stop: when set, reading ends within one read of the file (`Cancelled`).

    Raises:
        ArchiveError: the file is not a complete Continuo export this version reads
            (``archive.empty``, ``archive.not_continuo``, ``archive.newer``,
            ``archive.damaged``), or nests too deeply to be read within bounded memory
            (``archive.too_deep``, `engine.archive._guard`); raised before the first
            conversation is yielded; ``archive.too_large``: a string longer than
            `MAX_STRING_BYTES` outside the conversations.
        Cancelled: `stop` was set (nothing more is read).
    """
    path = name if name is not None else str(getattr(file, "name", "the file"))
    start = file.tell()
    _check(file, path, stop)
    file.seek(start)
    guard = StreamGuard(file, items=("conversations",), stop=stop)
    try:
        for raw in guarded_items(guard, "conversations.item"):
            yield _too_large(raw) if isinstance(raw, Skipped) else _conversation(raw, stop)
    except ijson.JSONError as exc:  # the file changed since it was checked
        raise _damaged(path, exc, file) from exc
    except (TooDeep, TooLarge) as exc:
        raise exc.error(path) from exc


def _too_large(skipped: Skipped) -> ImportSkip:
    """The `ImportSkip` of a conversation the guard passed over."""
    name = (
        repr(skipped.title or skipped.source_id)
        if skipped.title or skipped.source_id
        else (str(Phrase("archive.conversation_number", {"number": skipped.number})))
    )
    return ImportSkip(
        title=skipped.title,
        source_id=skipped.source_id,
        reason=sentence("archive.bad_conversation", "en", name=name, problem=skipped.problem),
        number=skipped.number,
    )


def _check(file: BinaryIO, path: str, stop: threading.Event | None) -> None:
    """Read the whole file once, building nothing; raise at its first problem."""
    found_format: Any = None
    version: Any = None
    header_done = False
    events = guarded_events(StreamGuard(file, items=("conversations",), stop=stop))
    try:
        first = next(events, None)
        if first is None:
            raise ArchiveError(path, key="archive.empty")
        if first[:2] != ("", "start_map"):
            raise _not_continuo(path, "it is not a JSON object")
        for prefix, event, value in events:
            if header_done:
                continue  # only the syntax of the rest is checked
            if prefix == "format" and event in _SCALARS:
                found_format = value
            elif prefix == "version" and event in _SCALARS:
                version = value
            elif prefix == "" and event == "map_key" and value == "conversations":
                _check_header(path, found_format, version)
                header_done = True
                if next(events, (None, None, None))[1] != "start_array":
                    raise ArchiveError(
                        path,
                        key="archive.damaged",
                        params={"detail": 'its "conversations" is not a list'},
                    )
    except ijson.JSONError as exc:
        if header_done:
            raise _damaged(path, exc, file) from exc
        raise _not_continuo(path, "it is not JSON") from exc
    except (TooDeep, TooLarge) as exc:
        raise exc.error(path) from exc
    if not header_done:
        _check_header(path, found_format, version)
        raise ArchiveError(
            path, key="archive.damaged", params={"detail": 'it has no "conversations" list'}
        )


def _check_header(path: str, found_format: Any, version: Any) -> None:
    if found_format != EXPORT_FORMAT:
        detail = (
            'it has no "format" before its conversations'
            if found_format is None
            else f'its "format" is {found_format!r}, not {EXPORT_FORMAT!r}'
        )
        raise _not_continuo(path, detail)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _not_continuo(path, f'its "version" is {version!r}, not a whole number')
    if version > EXPORT_VERSION:
        raise ArchiveError(
            path,
            key="archive.newer",
            params={"found": version, "supported": EXPORT_VERSION},
            action=ErrorAction.UPDATE_APP,
        )


def _not_continuo(path: str, detail: str) -> ArchiveError:
    return ArchiveError(path, key="archive.not_continuo", params={"detail": detail})


def _damaged(path: str, exc: ijson.JSONError, file: BinaryIO) -> ArchiveError:
    words = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "premature EOF" in words:
        words = "it ends part-way (it may have been cut short)"
    try:
        where = f" (around byte {file.tell():,})"
    except (OSError, ValueError):
        where = ""
    return ArchiveError(path, key="archive.damaged", params={"detail": words + where})


# ---------------------------------------------------------------------------- conversations


class _Unreadable(Exception):
    """What in a conversation of the export cannot be read (an English phrase)."""


#: messages converted between two looks at the stop event
_STOP_EVERY = 1000


def _conversation(raw: Any, stop: threading.Event | None) -> ImportedConversation | ImportSkip:
    """The conversation `raw` (as ijson built it), or why it cannot be imported.

    Raises:
        Cancelled: `stop` was set (looked at every `_STOP_EVERY` messages).
    """
    title = raw.get("title") if isinstance(raw, dict) else None
    sid = raw.get("id") if isinstance(raw, dict) else None
    title = title if isinstance(title, str) else None
    sid = sid if isinstance(sid, str) and sid else None
    try:
        if not isinstance(raw, dict):
            raise _Unreadable("it is not a JSON object")
        if sid is None:
            raise _Unreadable('it has no "id"')
        metadata = raw.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise _Unreadable('its "metadata" is not an object')
        active = raw.get("active_seq")
        if active is not None and not _is_int(active):
            raise _Unreadable('its "active_seq" is not a whole number')
        messages = tuple(_messages(_list(raw, "messages"), stop))
        # Every reference its messages make must come with its bytes, and every byte must be
        # what its reference names (version 2's "blobs"; a version 1 file has none, so a
        # message of it that refers to bytes refuses the conversation). Whole or nothing.
        wanted = blob_refs(attachments_of(item.message for item in messages))
        blobs = blobs_from_json(raw.get("blobs"), wanted)
        return ImportedConversation(
            source=SOURCE,
            source_id=sid,
            session_id=sid,
            title=title,
            created_at=_number(raw, "created_at"),
            updated_at=_number(raw, "updated_at"),
            messages=messages,
            active_seq=active,
            metadata=dict(metadata),
            tool_starts=tuple(_tool_start(item) for item in _list(raw, "tool_starts")),
            blobs=blobs,
        )
    except (_Unreadable, BlobProblem) as exc:
        problem = str(exc)
    name = repr(title or sid) if title or sid else "(without a title or id)"
    return ImportSkip(
        title=title,
        source_id=sid,
        reason=sentence("archive.bad_conversation", "en", name=name, problem=problem),
    )


def _messages(items: list[Any], stop: threading.Event | None) -> Iterator[ImportedMessage]:
    for number, item in enumerate(items):
        if stop is not None and number % _STOP_EVERY == 0 and stop.is_set():
            raise Cancelled
        yield _message(item)


def _message(item: Any) -> ImportedMessage:
    if not isinstance(item, dict):
        raise _Unreadable("one of its messages is not a JSON object")
    seq: Any = item.get("seq")
    parent: Any = item.get("parent_seq")
    request_id: Any = item.get("request_id")
    if not _is_int(seq):
        raise _Unreadable('a message has no whole-number "seq"')
    if parent is not None and not _is_int(parent):
        raise _Unreadable(f'message {seq} has a "parent_seq" that is not a whole number')
    if not isinstance(request_id, str):
        raise _Unreadable(f'message {seq} has no "request_id"')
    body = item.get("message")
    if not isinstance(body, dict):
        raise _Unreadable(f"message {seq} has no message object")
    try:
        message = message_from_dict(body)
    except ContinuoError as exc:  # a type (or format version) this version does not know
        raise _Unreadable(f"message {seq}: {exc}") from exc
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _Unreadable(f"message {seq} cannot be read ({_what(exc)})") from exc
    return ImportedMessage(seq=seq, parent_seq=parent, message=message, request_id=request_id)


def _tool_start(item: Any) -> tuple[str, float]:
    call = item.get("tool_call_id") if isinstance(item, dict) else None
    if not isinstance(call, str):
        raise _Unreadable('a tool start record has no "tool_call_id"')
    return call, _number(item, "started_at")


def _number(raw: dict[str, Any], key: str) -> float:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Unreadable(f'its "{key}" is not a number')
    return float(value)


def _list(raw: dict[str, Any], key: str) -> list[Any]:
    value = raw.get(key, [])
    if not isinstance(value, list):
        raise _Unreadable(f'its "{key}" is not a list')
    return value


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _what(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"the field {exc.args[0]!r} is missing"
    return str(exc) or type(exc).__name__
