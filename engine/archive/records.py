"""What an import hands to storage: one conversation of another file or program, whole.

Each reader (Continuo's own JSON, ChatGPT's export) turns its source into
`ImportedConversation` values; `SQLiteSessionStorage.import_conversation` stores one in a
single transaction, so a conversation is imported whole or not at all. Messages carry the
numbering of Continuo's tree (``seq``, ``parent_seq``): a reader of another program's tree
numbers its nodes parents first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..attachments import Blob
from ..messages import Message

__all__ = ["ImportSkip", "ImportedConversation", "ImportedMessage", "ImportedPicture"]


@dataclass(frozen=True, slots=True)
class ImportedMessage:
    """One message of an imported conversation, at its place in the tree."""

    seq: int  #: 1, 2, 3... in the conversation; a parent always has a smaller seq
    parent_seq: int | None  #: None for a root
    message: Message
    request_id: str = "import"


@dataclass(frozen=True, slots=True)
class ImportedPicture:
    """A picture another program's export held for a user message, as read (not yet
    prepared: `engine.archive.importer` prepares it as an attached picture, or counts it as
    not found)."""

    seq: int  #: the user message it belongs to
    source: str  #: how the source named it (ChatGPT's asset pointer)
    data: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class ImportedConversation:
    """A conversation as read from a source, ready to be stored whole.

    ``(source, source_id)`` names it in its source; a second import of the same pair adds
    nothing.
    """

    source: str  #: "continuo" or "chatgpt"
    source_id: str  #: the conversation's id in the source
    title: str | None
    created_at: float
    updated_at: float
    messages: tuple[ImportedMessage, ...]  #: parents before children
    active_seq: int | None  #: the active leaf (None: the empty path)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: the session id to store it under (Continuo's own export keeps its ids); None: a new one
    session_id: str | None = None
    #: tool calls that started running, (tool_call_id, started_at), so that Resume never runs
    #: an imported call again
    tool_starts: tuple[tuple[str, float], ...] = ()
    #: parts the reader could not carry (images, attachments, unknown content), replaced by a
    #: placeholder line in the text
    placeholders: int = 0
    #: the bytes its messages' attachments refer to, each once (checked against their
    #: SHA-256 by `Blob`); stored in the conversation's own transaction
    blobs: tuple[Blob, ...] = ()
    #: pictures read for its user messages, to prepare and attach before it is stored
    pictures: tuple[ImportedPicture, ...] = ()
    #: pictures its messages showed that the source did not hold (each a placeholder line)
    missing_pictures: int = 0


@dataclass(frozen=True, slots=True)
class ImportSkip:
    """A conversation of the source that a reader could not turn into an
    `ImportedConversation`; the import goes on with the others and reports it."""

    title: str | None  #: its title in the source, when it could be read
    source_id: str | None  #: its id in the source, when it could be read
    reason: str  #: one sentence saying why, in English (what the report shows)
    #: its place among the source's conversations (1: the first), when neither its title
    #: nor its id could be read (one passed over for its size: `engine.archive._guard`)
    number: int | None = None
