"""Exporting conversations to one file: Markdown to read, JSON to keep, HTML to share.

`export_conversations` writes one conversation, several, or every one, in an `ExportFormat`:

* **JSON** is lossless: every message of every branch, with its place in the tree, the
  conversation's settings, its shown version and its tool start records. Its schema is
  versioned and documented in ``docs/export-format.md``; `engine.archive.continuo_json`
  reads it back.
* **Markdown** and **HTML** show the version of each conversation that Continuo shows (the
  active path), and say how many other versions were left out. They speak as the window
  does (`engine.archive._reading`): providers by name, tool outcomes in words, Resume's
  notice as its caption and the answer it redid as the earlier attempt. HTML is one self-contained
  file that runs nothing and loads nothing: no scripts, no event attributes, no external
  resources (a Content-Security-Policy says so to the browser too), all text escaped,
  assistant Markdown rendered without raw HTML, links only to ``http``/``https``/``mailto``,
  images in messages shown as links. The pictures a person attached are embedded from their
  stored bytes as ``data:`` URLs (the policy's ``img-src data:``: the only images it loads),
  and documents are listed by name and pages (`engine.archive._attached`). Markdown keeps the same links live and no others: a link, an
  autolink, a link definition or an image whose address is ``javascript:``, ``data:``,
  ``vbscript:``, ``file:``... is written as text (`engine.archive._inert`).

Invariants:

* Nothing is built whole in memory: messages are read a page at a time
  (`engine.storage.transfer`), formatted, and written in chunks of about `CHUNK_BYTES`.
* Formatting and writing run in a worker thread, one hop a page, so the window's loop keeps
  running; `progress` is called on the caller's loop between pages.
* The target is written whole or not at all: the export goes to a temporary file beside it
  (``.name.partial-<random>``), is flushed and fsynced, then renamed onto it. On any error,
  and on cancellation, the temporary file is removed and the target is as it was. The rename
  is the line: a cancel before the final rename leaves nothing; after it, the export stands
  (`export_conversations` returns its report, declining the cancel). The last step (flush,
  fsync, rename) runs in a thread that cannot be stopped, so a cancel that arrives during it
  finds the rename done.
* No secret leaves: conversation metadata loses every key whose name looks like a
  credential (`is_secret_name`), and key-shaped values are redacted (`engine.redaction`).
* The file is created private (0600), like the database it comes from.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..attachments import Blob, ImagePart, blob_refs
from ..errors import ArchiveError, StorageError
from ..messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    attachments_of,
    message_to_dict,
)
from ..redaction import Redactor
from ..sentences import ErrorAction, Phrase, describe_stop
from ..storage.backup import is_database_file
from ..storage.transfer import ArchivedMessage, ArchivedSession
from ._attached import FileNames, blob_to_json, html_attachments, markdown_attachments
from ._inert import Inert, markdown_renderer
from ._reading import Attempts, Group, model_line, notice_caption, outcome_words
from ._sink import CHUNK_BYTES, Folder, Sink
from ._thread import in_thread

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

    from ..storage.sqlite import SQLiteSessionStorage

__all__ = [
    "CHUNK_BYTES",
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "ExportFormat",
    "ExportProgress",
    "ExportReport",
    "export_conversations",
    "is_secret_name",
    "public_metadata",
]

#: the ``"format"`` of a Continuo JSON export, and the schema version this code writes
EXPORT_FORMAT = "continuo-export"
EXPORT_VERSION = 2


#: ``progress(done_messages, total_messages)``, called on the caller's loop
ExportProgress = Callable[[int, int], None]


class ExportFormat(StrEnum):
    """What an export is written as."""

    MARKDOWN = "markdown"  #: to read: the shown version of each conversation
    JSON = "json"  #: to keep or import: everything, lossless (docs/export-format.md)
    HTML = "html"  #: to share: one self-contained page that runs and loads nothing

    @property
    def suffix(self) -> str:
        """The usual file name suffix (``.md``, ``.json``, ``.html``)."""
        return {"markdown": ".md", "json": ".json", "html": ".html"}[self.value]

    @classmethod
    def for_suffix(cls, suffix: str) -> ExportFormat | None:
        """The format a file name's ``suffix`` says (``.md``, ``.markdown``, ``.json``,
        ``.html``, ``.htm``; any case), or None for any other."""
        return _BY_SUFFIX.get(suffix.lower())


_BY_SUFFIX = {
    ".md": ExportFormat.MARKDOWN,
    ".markdown": ExportFormat.MARKDOWN,
    ".json": ExportFormat.JSON,
    ".html": ExportFormat.HTML,
    ".htm": ExportFormat.HTML,
}


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What an export wrote."""

    conversations: int
    messages: int  #: messages written (in Markdown and HTML, those of the shown versions)
    path: Path
    bytes: int  #: the file's size
    #: originals written into the folder beside a Markdown export (`folder`)
    files: int = 0
    #: that folder (``<name>_files``), or None when no file went into one
    folder: Path | None = None


_SECRET_NAME = re.compile(r"key|token|secret|password|authorization", re.IGNORECASE)
_REDACT = Redactor()


def is_secret_name(name: str) -> bool:
    """True when a metadata key's name looks like it holds a credential (``api_key``,
    ``accessToken``, ``Authorization``...): such a key is never exported."""
    return _SECRET_NAME.search(name) is not None


def public_metadata(value: Any) -> Any:
    """`value` without the keys that look like credentials (at any depth), and with
    key-shaped strings (``sk-...``) redacted: what an export may show of metadata."""
    if isinstance(value, Mapping):
        return {str(k): public_metadata(v) for k, v in value.items() if not is_secret_name(str(k))}
    if isinstance(value, list | tuple):
        return [public_metadata(v) for v in value]
    if isinstance(value, str):
        return _REDACT(value)
    return value


async def export_conversations(
    storage: SQLiteSessionStorage,
    path: str | os.PathLike[str],
    fmt: ExportFormat | str,
    session_ids: Iterable[str] | None = None,
    *,
    progress: ExportProgress | None = None,
    provider_names: Mapping[str, str] | None = None,
) -> ExportReport:
    """Write the conversations `session_ids` (None: every one, oldest first) to `path`.

    Args:
        fmt: an `ExportFormat` or its value (``"markdown"``, ``"json"``, ``"html"``).
        provider_names: the name of each provider the host knows, by its id: Markdown and
            HTML name a conversation's provider so (and leave an unknown one out); JSON keeps
            the id, as stored.
        progress: called with (messages written, messages to write) after each page, on
            the caller's loop. The total is counted first; a message appended meanwhile may
            make the count end a little above it.

    Raises:
        ArchiveError: ``archive.cannot_write`` — the file could not be written (the folder
            is missing or read-only, the disk is full, it is the database itself); the
            target is unchanged.
        StorageError: ``storage.missing`` for an id with no conversation (nothing is
            written), or the database's own faults (an unreadable message): the target is
            unchanged.
        ValueError: `fmt` is not a format.
        asyncio.CancelledError: the task was cancelled before the final step; the target
            is unchanged. A cancel that arrives during that step (which ends with the rename)
            is declined: the export stands, and its report is returned.
    """
    kind = ExportFormat(fmt)
    target = Path(path)
    if is_database_file(target, storage.path):
        raise ArchiveError(
            str(target),
            key="archive.cannot_write",
            params={"reason": Phrase("archive.reason.is_database")},
        )
    known = await storage.archived_session_ids()
    if session_ids is None:
        ids = known
    else:
        ids = list(dict.fromkeys(session_ids))  # each once, in the order given
        present = set(known)
        for sid in ids:
            if sid not in present:
                raise StorageError(
                    key="storage.missing",
                    params={"session_id": repr(sid), "path": str(storage.path)},
                    action=ErrorAction.NONE,
                )
    if kind is ExportFormat.JSON:
        total = await storage.count_every_message(ids)
    else:
        total = 0
        for sid in ids:
            total += await storage.count_messages(sid)
    names = dict(provider_names or {})
    folder = Folder(target) if kind is ExportFormat.MARKDOWN else None
    formatter = _Markdown(names, folder) if folder is not None else _FORMATS[kind](names)
    sink = Sink(target)
    done = conversations = 0
    try:
        await in_thread(sink.open)
        await in_thread(sink.add, formatter.begin, time.time())
        for sid in ids:
            session = await storage.archived_session(sid)
            if session is None:
                continue  # deleted since the export began
            if kind is ExportFormat.JSON:
                head = _Head(session, 0, 0, 0)
                pages = storage.archived_messages(sid)
            else:
                seqs = await storage.active_path_seqs(sid)
                every = await storage.count_all_messages(sid)
                others = await storage.count_other_versions(sid)
                head = _Head(session, len(seqs), every - len(seqs), others)
                pages = storage.archived_path(sid, seqs)
            await in_thread(sink.add, formatter.conversation, head)
            async with contextlib.aclosing(pages):  # its read ends here, even on an error
                async for page in pages:
                    await _write_page(storage, sink, formatter, page)
                    done += len(page)
                    if progress is not None:
                        progress(done, max(total, done))
            for ref in formatter.trailing_refs():  # JSON: each blob once, after the messages
                blob = await storage.read_blob(ref)
                if blob is None:
                    raise _missing_blob(ref, storage.path)
                await in_thread(sink.add, formatter.blob, blob)
            await in_thread(sink.add, formatter.end_conversation)
            conversations += 1
        await in_thread(sink.add, formatter.end)
        await in_thread(_commit, sink, folder)
    except asyncio.CancelledError:
        if not sink.committed:
            sink.discard()
            if folder is not None:
                folder.discard()
            raise
        # Cancelled after the rename: the file is in place, whole, so the export is done.
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
    except BaseException:
        sink.discard()
        if folder is not None:
            folder.discard()
        raise
    made = folder is not None and folder.made
    return ExportReport(
        conversations,
        done,
        target,
        sink.size,
        files=folder.files if folder is not None else 0,
        folder=folder.target if folder is not None and made else None,
    )


def _commit(sink: Sink, folder: Folder | None) -> None:
    """The last step, in one worker thread: the folder of originals in place, then the file."""
    if folder is not None:
        folder.commit()
    sink.commit()


async def _write_page(
    storage: SQLiteSessionStorage, sink: Sink, formatter: _Format, page: Sequence[ArchivedMessage]
) -> None:
    """Write one page; a message whose attachments' bytes the format shows is written on its
    own, with only its bytes read (one message's pictures in memory at a time)."""
    run: list[ArchivedMessage] = []
    for item in page:
        refs = formatter.wants(item.message)
        if not refs:
            run.append(item)
            continue
        if run:
            await in_thread(sink.add, formatter.messages, run, {})
            run = []
        blobs: dict[str, Blob] = {}
        for ref in refs:
            blob = await storage.read_blob(ref)
            if blob is not None:  # a reading format says the bytes are missing
                blobs[ref] = blob
        await in_thread(sink.add, formatter.messages, [item], blobs)
    if run:
        await in_thread(sink.add, formatter.messages, run, {})


def _missing_blob(ref: str, path: Path) -> StorageError:
    return StorageError(
        key="storage.missing_blob",
        params={"ref": ref[:12], "path": str(path)},
        action=ErrorAction.NONE,
    )


# ---------------------------------------------------------------------------- the file


# ---------------------------------------------------------------------------- formats


@dataclass(frozen=True, slots=True)
class _Head:
    """A conversation about to be written, and what of it a reading format leaves out."""

    session: ArchivedSession
    shown: int  #: messages on the active path
    hidden: int  #: messages on other branches
    other_versions: int  #: leaves other than the active one


class _Format(Protocol):
    """One export format: text for each part of the file, in the order written."""

    def begin(self, exported_at: float) -> str: ...

    def conversation(self, head: _Head) -> str: ...

    def wants(self, message: Message) -> Sequence[str]:
        """The blobs whose bytes writing `message` needs (given to `messages` with it)."""
        ...

    def messages(self, page: Sequence[ArchivedMessage], blobs: Mapping[str, Blob]) -> str: ...

    def trailing_refs(self) -> Sequence[str]:
        """The blobs to write after the conversation's messages (`blob`), each once."""
        ...

    def blob(self, blob: Blob) -> str: ...

    def end_conversation(self) -> str: ...

    def end(self) -> str: ...


class _Json:
    """The lossless format: one JSON document, one line per message (docs/export-format.md)."""

    def __init__(self, _provider_names: Mapping[str, str]) -> None:
        self._first_conversation = True
        self._first_message = True
        self._refs: dict[str, None] = {}  # the conversation's blob references, in order
        self._blobs_written = 0

    def begin(self, exported_at: float) -> str:
        head = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "exported_at": exported_at}
        return _dumps(head)[:-1] + ', "conversations": [\n'

    def conversation(self, head: _Head) -> str:
        s = head.session
        fields = {
            "id": s.id,
            "title": s.title,
            "created_at": s.created_at,
            "updated_at": s.updated_at,
            "metadata": public_metadata(s.metadata),
            "active_seq": s.active_seq,
            "tool_starts": [{"tool_call_id": call, "started_at": at} for call, at in s.tool_starts],
        }
        lead = "" if self._first_conversation else ",\n"
        self._first_conversation, self._first_message = False, True
        self._refs, self._blobs_written = {}, 0
        return lead + _dumps(fields)[:-1] + ', "messages": [\n'

    def wants(self, message: Message) -> Sequence[str]:
        return ()  # the bytes come once each, after the messages

    def messages(self, page: Sequence[ArchivedMessage], blobs: Mapping[str, Blob]) -> str:
        for ref in blob_refs(attachments_of(item.message for item in page)):
            self._refs[ref] = None
        lines = [
            _dumps(
                {
                    "seq": item.seq,
                    "parent_seq": item.parent_seq,
                    "request_id": item.request_id,
                    "message": message_to_dict(item.message),
                }
            )
            for item in page
        ]
        lead = "" if self._first_message or not lines else ",\n"
        self._first_message = self._first_message and not lines
        return lead + ",\n".join(lines)

    def trailing_refs(self) -> Sequence[str]:
        return list(self._refs)

    def blob(self, blob: Blob) -> str:
        lead = '\n], "blobs": [\n' if not self._blobs_written else ",\n"
        self._blobs_written += 1
        return lead + _dumps(blob_to_json(blob))

    def end_conversation(self) -> str:
        return "\n]}" if self._blobs_written else '\n], "blobs": []}'

    def end(self) -> str:
        return "\n]}\n"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def _versions_line(head: _Head) -> str:
    """The line saying which version of the conversation a reading format shows."""
    if not head.shown and not head.hidden:
        return "This conversation has no messages."
    shown = f"This is the version of the conversation Continuo shows ({_plural(head.shown, 'message')})."
    if not head.other_versions and not head.hidden:
        return shown
    verb = "is" if head.other_versions == 1 else "are"
    return (
        f"{shown} {_plural(head.other_versions, 'other version')} "
        f"({_plural(head.hidden, 'message')} on other branches) {verb} not included; "
        "a JSON export keeps every version."
    )


def _stop_line(message: AssistantMessage) -> str | None:
    """One sentence for an answer that did not end normally (cut, stopped, failed)."""
    if message.stop is None or message.stop.ok:
        return None
    return "Stopped: " + (describe_stop(message.stop, "en") or message.stop.reason.value)


def _arguments(arguments: Mapping[str, Any]) -> str:
    return json.dumps(dict(arguments), ensure_ascii=False, indent=2, default=str)


def _one_line(text: str) -> str:
    return " ".join(text.split())


class _Calls:
    """The calls of the last answer that asked for tools, so a result is named as its call
    is: by the tool's real name and its server (`ToolCall.info`), as the window's card."""

    def __init__(self) -> None:
        self._by_id: dict[str, ToolCall] = {}

    def asked(self, message: AssistantMessage) -> None:
        if message.tool_calls:
            self._by_id = {call.id: call for call in message.tool_calls}

    def of(self, result: ToolMessage) -> ToolCall:
        found = self._by_id.get(result.tool_call_id)
        return found if found is not None else ToolCall(result.tool_call_id, result.name)


def _md_tool(call: ToolCall, titled: bool = True) -> str:
    """A call's tool in Markdown: ``note`` from ``srv`` (with ``titled``, its server's title
    after it, as its words); the app's own tools by name."""
    info = call.info
    if info is None:
        return _code_span(call.name)
    text = f"{_code_span(info.tool)} from {_code_span(info.server)}"
    if titled and info.title and info.title != info.tool:
        text += f" ({_code_span(info.title)}, says its server)"
    return text


def _html_tool(call: ToolCall, titled: bool = True) -> str:
    info = call.info
    if info is None:
        return f"<code>{html.escape(call.name)}</code>"
    text = f"<code>{html.escape(info.tool)}</code> from <code>{html.escape(info.server)}</code>"
    if titled and info.title and info.title != info.tool:
        text += f" (“{html.escape(_one_line(info.title))}”, says its server)"
    return text


# Markdown ------------------------------------------------------------------------------


def _code_span(text: str) -> str:
    """`text` (a tool's name) as an inline code span that no backtick in it can end."""
    text = _one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest else f"{fence}{text}{fence}"


def _fenced(text: str, language: str = "") -> str:
    """`text` in a fenced code block whose fence no run of backticks in it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}\n"


def _inline(text: str) -> str:
    """Text of our own making (a title, a model's name) as Markdown that shows it as is: a
    viewer that renders raw HTML in Markdown must not meet a tag there, nor a link."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("[", "\\[").replace("]", "\\]")


def _quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.split("\n"))


class _Markdown:
    """Readable Markdown: the shown version, headings per speaker, tools as code blocks.

    Like the HTML, it loads nothing when a viewer renders it: every text of a message goes
    through `Inert`, what the export writes itself through `_inline` or a code block.
    """

    def __init__(self, provider_names: Mapping[str, str], folder: Folder | None = None) -> None:
        self._folder = folder
        self._files = FileNames()  # one name for each original, across the whole export
        self._blobs: Mapping[str, Blob] = {}  # the bytes of the message being written
        self._first = True
        self._inert = Inert()
        self._calls = _Calls()
        self._names = provider_names
        self._attempts = Attempts()

    def begin(self, exported_at: float) -> str:
        return f"<!-- Exported from Continuo on {_when(exported_at)} -->\n\n"

    def conversation(self, head: _Head) -> str:
        s = head.session
        lead = "" if self._first else "\n---\n\n"
        self._first = False
        lines = [
            f"# {_inline(_one_line(s.title or '') or 'Untitled conversation')}",
            "",
            f"Started {_when(s.created_at)}, last changed {_when(s.updated_at)}.",
        ]
        settings = model_line(s.metadata, self._names)
        if settings:
            lines.append(_inline(settings))
        lines += ["", _versions_line(head), "", ""]
        return lead + "\n".join(lines)

    def wants(self, message: Message) -> Sequence[str]:
        if self._folder is None or not isinstance(message, UserMessage):
            return ()
        return [ref for ref in blob_refs(message.attachments) if not self._files.named(ref)]

    def messages(self, page: Sequence[ArchivedMessage], blobs: Mapping[str, Blob]) -> str:
        self._blobs = blobs  # a user message is written in this call (see `_Html.messages`)
        try:
            return self._groups(self._attempts.feed(item.message for item in page))
        finally:
            self._blobs = {}

    def trailing_refs(self) -> Sequence[str]:
        return ()

    def blob(self, blob: Blob) -> str:
        return ""

    def _groups(self, groups: Sequence[Group]) -> str:
        parts = []
        for messages, earlier in groups:
            text = "".join(self._message(m) for m in messages)
            if earlier is not None:  # folded in the window: marked and set apart here
                text = _quoted(f"**Earlier attempt ({earlier})**\n\n{text.rstrip()}") + "\n\n"
            parts.append(text)
        return "".join(parts)

    def _message(self, m: Message) -> str:
        inert = self._inert
        if isinstance(m, UserMessage):
            attached = ""
            if m.attachments and self._folder is not None:
                attached = markdown_attachments(m, self._blobs, self._files, self._folder)
            return f"## You\n\n{inert(m.content)}\n\n{attached}"
        if isinstance(m, AssistantMessage):
            parts = ["## Assistant" + (f" ({_inline(m.model)})" if m.model else "") + "\n\n"]
            if m.reasoning:
                parts.append(_quoted("**Reasoning**\n\n" + inert(m.reasoning)) + "\n\n")
            if m.content:
                parts.append(inert(m.content) + "\n\n")
            self._calls.asked(m)
            for call in m.tool_calls:
                arguments = _fenced(_arguments(call.arguments), "json")
                parts.append(f"**Tool call:** {_md_tool(call)}\n\n{arguments}\n")
            stop = _stop_line(m)
            if stop:
                parts.append(f"{_inline(_one_line(stop))}\n\n")
            return "".join(parts)
        if isinstance(m, ToolMessage):
            outcome = outcome_words(m)
            name = _md_tool(self._calls.of(m), titled=False)
            return f"### Tool result: {name} ({_inline(outcome)})\n\n{_fenced(m.content)}\n"
        if isinstance(m, InternalMessage):  # meant for the model: the window's caption
            caption = _one_line(notice_caption(m))
            return f"*— {_inline(caption)} —*\n\n" if caption else ""
        if isinstance(m, SystemMessage):
            return f"## System\n\n{inert(m.content)}\n\n"
        return ""

    def end_conversation(self) -> str:
        return self._groups(self._attempts.flush())

    def end(self) -> str:
        return ""


# HTML ----------------------------------------------------------------------------------

#: nothing but the inline style below may load or run (a second wall behind the escaping)
_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)

_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 46em; margin: 2em auto; padding: 0 1em;
       color: #1d1d1f; background: #fff; }
h1 { font-size: 1.5em; margin-top: 2.5em; } h2 { font-size: 1.05em; margin: 1.6em 0 .4em; }
h3 { font-size: .95em; margin: 1.2em 0 .3em; color: #555; }
.meta, .stop, .note { color: #666; font-size: .9em; }
.plain { white-space: pre-wrap; overflow-wrap: anywhere; }
pre { background: #f4f4f6; padding: .6em .8em; overflow-x: auto; border-radius: 6px; }
code { font-family: ui-monospace, monospace; font-size: .9em; }
details { margin: .4em 0; color: #555; } summary { cursor: default; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .2em .5em; }
hr { margin: 3em 0; border: 0; border-top: 1px solid #ddd; }
figure { margin: .6em 0; } figure img { max-width: 100%; height: auto; border-radius: 6px; }
figcaption, ul.documents { color: #555; font-size: .9em; }
"""


def _text(text: str, css: str = "plain") -> str:
    return f'<div class="{css}">{html.escape(text)}</div>\n'


def _pre(text: str) -> str:
    return f"<pre><code>{html.escape(text)}</code></pre>\n"


class _Html:
    """One self-contained page; every piece of text escaped or rendered without raw HTML."""

    def __init__(self, provider_names: Mapping[str, str]) -> None:
        self._md: MarkdownIt | None = None
        self._first = True
        self._calls = _Calls()
        self._names = provider_names
        self._attempts = Attempts()
        self._blobs: Mapping[str, Blob] = {}  # the bytes of the message being written

    def begin(self, exported_at: float) -> str:
        self._md = markdown_renderer()  # here, in the worker thread: its import takes a while
        return (
            '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">\n'
            '<meta name="referrer" content="no-referrer">\n'
            f"<title>Continuo conversations, exported {_when(exported_at)}</title>\n"
            f"<style>{_STYLE}</style>\n</head>\n<body>\n"
            f'<p class="meta">Exported from Continuo on {_when(exported_at)}.</p>\n'
        )

    def conversation(self, head: _Head) -> str:
        s = head.session
        lead = "" if self._first else "<hr>\n"
        self._first = False
        title = _one_line(s.title or "") or "Untitled conversation"
        meta = [f"Started {_when(s.created_at)}, last changed {_when(s.updated_at)}."]
        settings = model_line(s.metadata, self._names)
        if settings:
            meta.append(settings)
        meta.append(_versions_line(head))
        lines = "".join(f'<p class="meta">{html.escape(line)}</p>\n' for line in meta)
        return f"{lead}<article>\n<h1>{html.escape(title)}</h1>\n{lines}"

    def wants(self, message: Message) -> Sequence[str]:
        if not isinstance(message, UserMessage):
            return ()
        return blob_refs(p for p in message.attachments if isinstance(p, ImagePart))

    def messages(self, page: Sequence[ArchivedMessage], blobs: Mapping[str, Blob]) -> str:
        # A user message is written in this call (only answers are held back by `Attempts`),
        # so the bytes given with it are needed only now.
        self._blobs = blobs
        try:
            return self._groups(self._attempts.feed(item.message for item in page))
        finally:
            self._blobs = {}

    def trailing_refs(self) -> Sequence[str]:
        return ()

    def blob(self, blob: Blob) -> str:
        return ""

    def _groups(self, groups: Sequence[Group]) -> str:
        parts = []
        for messages, earlier in groups:
            text = "".join(self._message(m) for m in messages)
            if earlier is not None:  # folded, as the window folds it
                summary = html.escape(f"Earlier attempt ({earlier})")
                text = f'<details class="earlier"><summary>{summary}</summary>\n{text}</details>\n'
            parts.append(text)
        return "".join(parts)

    def _message(self, m: Message) -> str:
        if isinstance(m, UserMessage):
            attached = html_attachments(m, self._blobs)
            return f'<section class="user">\n<h2>You</h2>\n{_text(m.content)}{attached}</section>\n'
        if isinstance(m, AssistantMessage):
            who = "Assistant" + (f" ({m.model})" if m.model else "")
            parts = [f'<section class="assistant">\n<h2>{html.escape(who)}</h2>\n']
            if m.reasoning:
                parts.append(
                    f"<details><summary>Reasoning</summary>\n{_text(m.reasoning)}</details>\n"
                )
            if m.content and self._md is not None:
                parts.append(self._md.render(m.content))
            self._calls.asked(m)
            for call in m.tool_calls:
                parts.append(f"<p>Tool call: {_html_tool(call)}</p>\n")
                parts.append(_pre(_arguments(call.arguments)))
            stop = _stop_line(m)
            if stop:
                parts.append(f'<p class="stop">{html.escape(stop)}</p>\n')
            return "".join(parts) + "</section>\n"
        if isinstance(m, ToolMessage):
            outcome = outcome_words(m)
            name = _html_tool(self._calls.of(m), titled=False)
            heading = f"Tool result: {name} ({html.escape(outcome)})"
            return f'<section class="tool">\n<h3>{heading}</h3>\n{_pre(m.content)}</section>\n'
        if isinstance(m, InternalMessage):  # meant for the model: the window's caption
            caption = _one_line(notice_caption(m))
            return f'<p class="note">— {html.escape(caption)} —</p>\n' if caption else ""
        if isinstance(m, SystemMessage):
            return f'<section class="system">\n<h2>System</h2>\n{_text(m.content)}</section>\n'
        return ""

    def end_conversation(self) -> str:
        return self._groups(self._attempts.flush()) + "</article>\n"

    def end(self) -> str:
        return "</body>\n</html>\n"


_FORMATS: dict[ExportFormat, Callable[[Mapping[str, str]], _Format]] = {
    ExportFormat.JSON: _Json,
    ExportFormat.MARKDOWN: _Markdown,
    ExportFormat.HTML: _Html,
}
