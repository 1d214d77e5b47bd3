"""Reading ChatGPT's data export: its ``conversations.json``, alone or in the zip ChatGPT sends.

This module owns the translation of ChatGPT's conversation tree into Continuo's: which of
ChatGPT's nodes become messages, how their content becomes text, and how a conversation that
cannot be read is reported. It only reads; `SQLiteSessionStorage.import_conversation` stores
what `read_conversations` yields, one conversation at a time.

Why it is built this way:

- **Streaming.** Exports run to hundreds of megabytes, so the file is parsed incrementally
  (``ijson``), one conversation at a time, straight out of the zip (never extracted). Memory
  holds one conversation, not the export.
- **One bad conversation is one skip.** A conversation whose tree is broken (a parent that is
  missing, parents in a loop, a node that is not an object) becomes an `ImportSkip` saying
  what is wrong, and the others import. Only a file that is not an export at all (not a zip,
  not JSON, not a list of ChatGPT conversations) raises `ArchiveError` — before anything is
  yielded, so nothing of it was imported. JSON that breaks off after some conversations were
  read ends with an `ImportSkip` naming the damage: what came before it is good.
- **Only what the person saw.** ChatGPT's tree holds nodes its own window never shows: the
  empty root, hidden system prompts, the custom-instructions context, its reasoning steps.
  Those are not stored; their children hang from the nearest stored ancestor, so the tree
  keeps every visible version (an edited question stays two siblings).
- **Tool use as text.** ChatGPT's tool calls (browsing, Python, DALL·E...) are not paired
  with results the way Continuo's are, and their tools do not exist here. A `ToolCall` in an
  imported history would make a provider reject the request (tool use without that tool
  defined) and Resume would try to recover it; so a call and its output are stored as
  assistant text — a label naming the tool and a fenced block — which every provider
  accepts and Resume reads as a finished answer. No imported tool ever runs.
- **Pictures come along.** A picture the person sent (an ``image_asset_pointer`` in a user
  message) is read from the zip, where ChatGPT keeps it as a file named after its id
  (`engine.archive._chatgpt_assets`, within limits), and handed on as raw bytes
  (`ImportedConversation.pictures`) for the importer to prepare as an attached picture. One
  the zip does not hold (or a bare ``conversations.json``) becomes a placeholder line
  (``[Image not found in the export: file-abc (1024×768)]``) and is counted
  (`ImportedConversation.missing_pictures`).
- **What cannot be carried is said in place.** Other images (an answer's), audio, files and
  content types this reader does not know become a placeholder line
  (``[Image not imported: file-abc (1024×768)]``) counted in
  `ImportedConversation.placeholders`, so the person sees what is missing where it was.
"""

from __future__ import annotations

import math
import re
import shutil
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from datetime import datetime
from typing import IO, Any, BinaryIO

import ijson  # type: ignore[import-untyped, unused-ignore]

from ..errors import ArchiveError
from ..messages import AssistantMessage, Message, SystemMessage, UserMessage
from ..sentences import Phrase, sentence
from ..text import clean
from ._chatgpt_assets import MAX_CONVERSATION_PICTURE_BYTES, ZipAssets, asset_id
from ._guard import Cancelled, Skipped, StreamGuard, TooDeep, TooLarge, guarded_items
from .records import ImportedConversation, ImportedMessage, ImportedPicture, ImportSkip

__all__ = ["SOURCE", "read_conversations"]

#: `ImportedConversation.source` of everything read here
SOURCE = "chatgpt"

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first entry, or an empty zip
_BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t\r\n"
_CHUNK = 1 << 16
#: the longest JSON escape the surrogate filter must see whole: a surrogate pair
_PAIR_LEN = 12
#: nodes walked between two looks at the stop event
_STOP_EVERY = 1000


def read_conversations(
    source: BinaryIO, *, name: str | None = None, stop: threading.Event | None = None
) -> Iterator[ImportedConversation | ImportSkip]:
    """Yield the conversations of a ChatGPT export, one at a time, in the file's order.

    A conversation larger than `MAX_CONVERSATION_BYTES`, or holding a string longer than
    `MAX_STRING_BYTES`, is passed over unread and reported (`engine.archive._guard`); the
    reading takes time linear in the file.

    Args:
        source: an open binary file: the export's zip, or its ``conversations.json``. It is
            read from its current position and not closed.
        name: the file's name for error sentences (default: ``source.name``).
        stop: when set, reading ends within one read of the file (`Cancelled`).

    Raises (on the first ``next()``, before anything is yielded):
        ArchiveError: ``archive.empty``; ``archive.chatgpt_not_export`` — neither a zip nor
            JSON, JSON that is not a list, or a list whose first item is not a ChatGPT
            conversation (its ``problem`` says which); ``archive.zip_without_conversations``;
            ``archive.bad_zip``; ``archive.damaged`` — the JSON breaks off or is malformed
            before its first conversation (after it, a last `ImportSkip` says so instead);
            ``archive.too_deep`` — it nests lists and objects too deeply for the parser to
            read within bounded memory (`engine.archive._guard`; after the first
            conversation, a last `ImportSkip` too).
        Cancelled: `stop` was set (nothing more is read).
    """
    path = name or _name_of(source)
    with ExitStack() as stack:
        stream, assets = _open(source, path, stack)
        yield from _read(stream, path, stop, assets)


# ---------------------------------------------------------------------------- the file


def _name_of(source: object) -> str:
    name = getattr(source, "name", None)
    return name if isinstance(name, str) and name else "conversations.json"


def _not_export(path: str, problem: str) -> ArchiveError:
    return ArchiveError(
        path,
        key="archive.chatgpt_not_export",
        params={"problem": Phrase(f"archive.chatgpt.{problem}")},
    )


def _detail(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def _open(source: BinaryIO, path: str, stack: ExitStack) -> tuple[_SurrogateFilter, ZipAssets]:
    """The JSON stream of the export (``conversations.json`` itself, or inside the zip), and
    the zip's files for its pictures (none for a bare ``conversations.json``)."""
    start = source.tell() if source.seekable() else None
    magic = b""
    while len(magic) < 4 and (more := source.read(4 - len(magic))):
        magic += more  # a pipe may hand out fewer bytes than asked for
    if magic in _ZIP_MAGIC:
        if start is not None:
            source.seek(start)
            archive_file: IO[bytes] = source
        else:  # zipfile needs to seek: copy the stream aside, in chunks, never whole
            archive_file = stack.enter_context(tempfile.TemporaryFile())
            archive_file.write(magic)
            shutil.copyfileobj(source, archive_file, _CHUNK)
            archive_file.seek(0)
        try:
            archive = stack.enter_context(zipfile.ZipFile(archive_file))
            member = _conversations_member(archive)
            if member is None:
                raise ArchiveError(path, key="archive.zip_without_conversations")
            raw: IO[bytes] = stack.enter_context(archive.open(member))
        except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError) as e:
            raise ArchiveError(path, key="archive.bad_zip", params={"detail": _detail(e)}) from e
        head = b""
        assets = ZipAssets(archive)
    else:
        raw, head = source, magic
        assets = ZipAssets(None)
    return _SurrogateFilter(raw, _first_bytes(raw, head, path)), assets


def _conversations_member(archive: zipfile.ZipFile) -> zipfile.ZipInfo | None:
    """``conversations.json`` at the zip's root, else in the shallowest folder."""
    found = [
        info
        for info in archive.infolist()
        if not info.is_dir()
        and info.filename.replace("\\", "/").rsplit("/", 1)[-1].lower() == "conversations.json"
        and not info.filename.startswith("__MACOSX/")
    ]
    found.sort(key=lambda info: (info.filename.count("/"), info.filename))
    return found[0] if found else None


def _first_bytes(raw: IO[bytes], head: bytes, path: str) -> bytes:
    """Read up to the JSON's first character (past a byte-order mark) and check it."""
    while len(head.lstrip(_WHITESPACE)) < len(_BOM):
        chunk = raw.read(_CHUNK)
        if not chunk:
            break
        head += chunk
    if head.startswith(_BOM):
        head = head[len(_BOM) :]
    first = head.lstrip(_WHITESPACE)[:1]
    if not first:
        raise ArchiveError(path, key="archive.empty")
    if first == b"{":
        raise _not_export(path, "not_list")
    if first != b"[":
        raise _not_export(path, "not_json")
    return head


_ESCAPE = re.compile(
    rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)


_HIGH = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")
# A surrogate escape that may be alone: a high half not followed by a low one, a low half not
# preceded by a high one, or either after an escaped backslash (which is text, not an escape).
# Every branch starts with the backslash (the low half's lookbehind comes after it): the
# regular expression skips to backslashes in C. (With the lookbehind first, it was tried at
# every byte: 1.6 ms a 64 KiB read, 27 s for a 1 GB title.)
_SUSPECT = re.compile(
    rb"\\(?:u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    rb"|u[dD][c-fC-F](?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F])"
    rb"|\\u[dD])"
)


def _fix_escape(match: re.Match[bytes]) -> bytes:
    # An escaped backslash (2 bytes) or a surrogate pair (12) stays; a lone surrogate becomes
    # U+FFFD, the replacement `engine.text.clean` makes everywhere else.
    return b"\\ufffd" if len(match.group(0)) == 6 else match.group(0)


class _SurrogateFilter:
    """The export's bytes with every lone surrogate escape (``"\\ud83d"``) made ``\\ufffd``.

    ChatGPT cuts titles and texts mid-emoji, leaving half of an escaped surrogate pair. The
    fast C parser turns some of those into ``?`` and fails on others (a lone low half is
    invalid UTF-8 for it), which would end the import; the pure Python parser copes but is
    25 times slower. Rewriting them in the byte stream keeps the fast parser. Each chunk is
    rewritten up to its last 12 bytes' first escape (moved back to the start of a pair, and
    of a run of backslashes), so no escape is ever split between two rewrites.
    """

    def __init__(self, raw: IO[bytes], head: bytes) -> None:
        self._raw = raw
        self._pending = head  # read, not yet rewritten: it may end inside an escape
        self._out = b""  # rewritten, not yet handed out
        self._eof = False

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        while not self._out and not self._eof:
            self._fill()
        if size < 0:
            while not self._eof:
                self._fill()
            size = len(self._out)
        chunk, self._out = self._out[:size], self._out[size:]
        return chunk

    def _fill(self) -> None:
        data = self._raw.read(_CHUNK)
        buf = self._pending + data
        if data:
            cut = buf.find(b"\\", max(len(buf) - _PAIR_LEN, 0))
            if cut >= 0:
                if cut >= 6 and _HIGH.fullmatch(buf, cut - 6, cut):
                    cut -= 6  # the second half of a pair: keep the pair together
                while cut > 0 and buf[cut - 1] == 0x5C:  # to the start of its backslash run
                    cut -= 1
                buf, self._pending = buf[:cut], buf[cut:]
            else:
                self._pending = b""
        else:
            self._eof, self._pending = True, b""
        if _SUSPECT.search(buf):  # rare: most text has no surrogate escape, or only pairs
            buf = _ESCAPE.sub(_fix_escape, buf)
        self._out += buf


# What a damaged file raises while it is parsed: the parser's own error, bytes that are not
# UTF-8, a zip member that ends early or fails its check.
_DAMAGE = (ijson.JSONError, UnicodeDecodeError, zipfile.BadZipFile, zlib.error, EOFError)


def _read(
    stream: _SurrogateFilter, path: str, stop: threading.Event | None, assets: ZipAssets
) -> Iterator[ImportedConversation | ImportSkip]:
    count = 0
    checked = False  # the first conversation read whole was looked at: it is ChatGPT's
    items = guarded_items(StreamGuard(stream, items=(), stop=stop), "item")
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except TooDeep as exc:
            if count == 0:
                raise exc.error(path) from exc
            yield ImportSkip(
                None,
                None,
                f"The rest of the file could not be read: after conversation {count}, it is "
                f"nested too deeply ({exc}).",
            )
            return
        except (*_DAMAGE, TooLarge) as exc:
            if count == 0:
                detail = {"detail": _detail(exc)}
                raise ArchiveError(path, key="archive.damaged", params=detail) from exc
            yield ImportSkip(
                None,
                None,
                f"The rest of the file could not be read: its JSON breaks off or is malformed "
                f"after conversation {count} ({_detail(exc)}).",
            )
            return
        count += 1
        if isinstance(item, Skipped):
            yield _passed_over(item, count)
            continue
        if not checked and not (isinstance(item, Mapping) and "mapping" in item):
            # Another program's export (Claude's is also a conversations.json list).
            raise _not_export(path, "not_conversation")
        checked = True
        yield _conversation(item, count, stop, assets)


def _passed_over(skipped: Skipped, count: int) -> ImportSkip:
    """The report of a conversation the guard passed over for its size."""
    number = skipped.number or count
    if skipped.title or skipped.source_id:
        name = repr(skipped.title or skipped.source_id)
    else:
        name = str(Phrase("archive.conversation_number", {"number": number}))
    return ImportSkip(
        skipped.title,
        skipped.source_id,
        sentence("archive.bad_conversation", "en", name=name, problem=skipped.problem),
        number=number,
    )


# ---------------------------------------------------------------------------- one conversation


def _skip(raw: Mapping[str, Any], source_id: str | None, reason: str) -> ImportSkip:
    title = raw.get("title")
    return ImportSkip(clean(title) if isinstance(title, str) else None, source_id, clean(reason))


def _conversation(
    raw: Any, number: int, stop: threading.Event | None = None, assets: ZipAssets | None = None
) -> ImportedConversation | ImportSkip:
    if not isinstance(raw, Mapping):
        return ImportSkip(None, None, f"Entry {number} of the export is not a conversation.")
    sid = raw.get("conversation_id") or raw.get("id")
    source_id = clean(sid) if isinstance(sid, str) and sid else None
    if source_id is None:
        return _skip(raw, None, "It has no conversation id.")
    try:
        return _Tree(raw, source_id, stop, assets or ZipAssets(None)).build()
    except _Broken as broken:
        return _skip(raw, source_id, str(broken))
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        # A shape no export seen so far has: say so rather than end the whole import.
        return _skip(raw, source_id, f"Its data has an unexpected shape ({exc!r}).")


class _Broken(Exception):
    """The conversation's tree cannot be read; the message says why, in a sentence."""


def _short(node_id: str) -> str:
    return repr(node_id if len(node_id) <= 40 else node_id[:37] + "...")


class _Tree:
    """One conversation's ``mapping``, walked parents first into Continuo's numbering."""

    def __init__(
        self,
        raw: Mapping[str, Any],
        source_id: str,
        stop: threading.Event | None = None,
        assets: ZipAssets | None = None,
    ) -> None:
        self.raw = raw
        self.source_id = source_id
        self.stop = stop
        self.assets = assets or ZipAssets(None)
        self.placeholders = 0
        self.dropped_reasoning = 0
        self.pictures: list[tuple[str, str, bytes]] = []  # (node id, asset, bytes) read
        self.missing_pictures = 0  # pictures a user message showed that were not read
        self._picture_budget = MAX_CONVERSATION_PICTURE_BYTES

    def _take_picture(self, node_id: str) -> Callable[[str], bool]:
        """What reads a picture of the user's node `node_id` out of the zip (True: read)."""

        def take(pointer: str) -> bool:
            asset = asset_id(pointer)
            data = self.assets.read(asset, self._picture_budget) if asset else None
            if data is None:
                self.missing_pictures += 1
                return False
            self._picture_budget -= len(data)
            self.pictures.append((node_id, pointer, data))
            return True

        return take

    def build(self) -> ImportedConversation | ImportSkip:
        raw = self.raw
        mapping = raw.get("mapping")
        if not isinstance(mapping, Mapping):
            raise _Broken('It has no message tree (its "mapping" is missing).')
        kids = self._children(mapping)
        times = [t for n in mapping.values() if (t := _time(_message(n).get("create_time")))]
        created = _time(raw.get("create_time")) or (min(times) if times else None)
        updated = _time(raw.get("update_time")) or (max(times) if times else None)
        created = created or updated or 0.0
        updated = max(updated or created, created)

        messages: list[ImportedMessage] = []
        stored_of: dict[str, int | None] = {}  # node -> its nearest stored ancestor-or-self
        has_child: set[int] = set()
        models: dict[int, str] = {}
        seq_of: dict[str, int] = {}  # stored node -> its seq (the pictures' messages)
        # Depth first, parents before children, without recursion (trees are deep).
        # Each entry: node, seq of the nearest stored ancestor, inherited time, reasoning
        # waiting for the next assistant message below.
        stack: list[tuple[str, int | None, float, tuple[str, ...]]] = [
            (root, None, created, ()) for root in reversed(kids.get(None, []))
        ]
        while stack:
            if self.stop is not None and len(stored_of) % _STOP_EVERY == 0 and self.stop.is_set():
                raise Cancelled
            node_id, parent_seq, inherited, reasoning = stack.pop()
            msg = _message(mapping[node_id])
            at = _time(msg.get("create_time")) or inherited
            message, reasoning = self._convert(node_id, msg, at, reasoning)
            if message is not None:
                seq = len(messages) + 1
                messages.append(ImportedMessage(seq, parent_seq, message))
                seq_of[node_id] = seq
                if parent_seq is not None:
                    has_child.add(parent_seq)
                if isinstance(message, AssistantMessage) and message.model:
                    models[seq] = message.model
                parent_seq = seq
            stored_of[node_id] = parent_seq
            children = kids.get(node_id, [])
            if not children and reasoning:
                self.dropped_reasoning += 1  # thinking with no answer after it
            stack.extend((c, parent_seq, at, reasoning) for c in reversed(children))
        if len(stored_of) < len(mapping):
            loop = [n for n in mapping if n not in stored_of]
            names = ", ".join(_short(n) for n in loop[:3])
            raise _Broken(f"Its messages {names} have parents that form a loop.")
        if not messages:
            return _skip(
                raw, self.source_id, "It has no messages to import (only hidden or empty ones)."
            )

        active = self._active(raw.get("current_node"), stored_of, messages, has_child)
        metadata: dict[str, Any] = {"imported_from": SOURCE}
        slug = raw.get("default_model_slug")
        if not (isinstance(slug, str) and slug):
            on_path = _path(messages, active)
            slug = next((models[s] for s in reversed(on_path) if s in models), None)
        if slug:
            metadata["imported_model"] = slug
        if self.dropped_reasoning:
            metadata["imported_reasoning_dropped"] = self.dropped_reasoning
        title = raw.get("title")
        return ImportedConversation(
            source=SOURCE,
            source_id=self.source_id,
            title=title if isinstance(title, str) and title else None,
            created_at=created,
            updated_at=updated,
            messages=tuple(messages),
            active_seq=active,
            metadata=metadata,
            placeholders=self.placeholders,
            pictures=tuple(
                ImportedPicture(seq_of[node], pointer, data)
                for node, pointer, data in self.pictures
                if node in seq_of
            ),
            missing_pictures=self.missing_pictures,
        )

    @staticmethod
    def _children(mapping: Mapping[str, Any]) -> dict[str | None, list[str]]:
        """Each node's children by the ``parent`` links (None: the roots), in the order of
        the parent's ``children`` list; a broken link raises `_Broken`."""
        kids: dict[str | None, list[str]] = {}
        for node_id, node in mapping.items():
            if not isinstance(node, Mapping):
                raise _Broken(f"Its node {_short(node_id)} is not an object.")
            message = node.get("message")
            if message is not None and not isinstance(message, Mapping):
                raise _Broken(f"The message of its node {_short(node_id)} is not an object.")
            parent = node.get("parent")
            if parent is not None and (not isinstance(parent, str) or parent not in mapping):
                raise _Broken(
                    f"Its message {_short(node_id)} names a parent ({_short(str(parent))}) "
                    "that is not in the conversation."
                )
            kids.setdefault(parent, []).append(node_id)
        for parent, found in kids.items():
            listed = mapping[parent].get("children") if parent is not None else None
            if isinstance(listed, list) and len(found) > 1:
                order = {child: i for i, child in enumerate(listed) if isinstance(child, str)}
                found.sort(key=lambda child: order.get(child, len(order)))
        return kids

    @staticmethod
    def _active(
        current: Any,
        stored_of: Mapping[str, int | None],
        messages: list[ImportedMessage],
        has_child: set[int],
    ) -> int:
        """``current_node`` as a stored message (its nearest stored ancestor); without one,
        the newest leaf."""
        if isinstance(current, str):
            seq = stored_of.get(current)
            if seq is not None:
                return seq
        leaves = [m for m in messages if m.seq not in has_child]
        return max(leaves, key=lambda m: (m.message.created_at, m.seq)).seq

    # ------------------------------------------------------------------ one node

    def _convert(
        self, node_id: str, msg: Mapping[str, Any], at: float, reasoning: tuple[str, ...]
    ) -> tuple[Message | None, tuple[str, ...]]:
        """The message a node becomes (None: not stored) and the reasoning passed below it
        (ChatGPT keeps its thinking in nodes of its own, before the answer it belongs to)."""
        if not msg:
            return None, reasoning
        author = _map(msg.get("author"))
        role = _str(author.get("role")) or "assistant"
        content = _map(msg.get("content"))
        kind = content.get("content_type")
        meta = _map(msg.get("metadata"))
        if kind in _HIDDEN_KINDS or meta.get("is_visually_hidden_from_conversation"):
            return None, reasoning  # custom instructions, memory, hidden prompts
        if kind == "thoughts":
            return None, (*reasoning, *_thoughts(content))
        if kind == "reasoning_recap":
            # "Thought for 15s": all there is when ChatGPT kept the reasoning hidden.
            recap = _str(content.get("content")).strip()
            return None, (*reasoning, recap) if recap and not reasoning else reasoning
        # A user's pictures are read from the zip, to be attached; any other node's are not
        # carried (Continuo attaches pictures to user messages only): placeholders.
        take = self._take_picture(node_id) if role == "user" else None
        read_before = len(self.pictures)
        text, marks = _render(kind, content, meta, take)
        self.placeholders += len(marks)
        if not text.strip() and not marks and len(self.pictures) == read_before:
            return None, reasoning  # an empty step (ChatGPT writes many)
        common: dict[str, Any] = {"id": node_id, "created_at": at}
        if role in ("user", "system"):
            if reasoning:
                self.dropped_reasoning += 1  # thinking that no answer followed
            body = _join(text, marks)
            cls = UserMessage if role == "user" else SystemMessage
            return cls(content=body, **common), ()
        recipient = msg.get("recipient")
        if role == "assistant" and recipient not in (None, "", "all"):
            body = _join(f"*Called the tool `{recipient}`:*", _block(kind, text), marks)
        elif role != "assistant":  # a tool's output, or a role this reader does not know
            who = _str(author.get("name")) or role
            body = _join(f"*Output of the tool `{who}`:*", _block(kind, text), marks)
        else:
            body = _join(text, marks)
        slug = _str(meta.get("model_slug"))
        message = AssistantMessage(
            content=body, reasoning="\n\n".join(reasoning), model=slug or None, **common
        )
        return message, ()


_HIDDEN_KINDS = frozenset({"user_editable_context", "model_editable_context"})


def _render(
    kind: Any,
    content: Mapping[str, Any],
    meta: Mapping[str, Any],
    take: Callable[[str], bool] | None = None,
) -> tuple[str, list[str]]:
    """The content as Markdown text, and the placeholder lines for what it cannot carry;
    `take` reads a picture to attach (by its asset pointer; False: not found)."""
    pieces: list[str] = []
    marks: list[str] = []
    images: set[str] = set()
    if kind in ("text", "multimodal_text"):
        for part in content.get("parts") or ():
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, Mapping):
                text, mark = _part(part, images, take)
                pieces.append(text)
                marks.append(mark)
    elif kind == "code":
        pieces.append(_fence(_str(content.get("text")), _language(content.get("language"))))
    elif kind == "execution_output":
        pieces.append(_fence(_str(content.get("text"))))
    elif kind == "tether_browsing_display":
        pieces.append(_str(content.get("result")) or _str(content.get("summary")))
    elif kind == "tether_quote":
        pieces.append(_quote(content))
    elif kind == "system_error":
        pieces.append(f"{_str(content.get('name')) or 'Error'}: {_str(content.get('text'))}")
    else:
        marks.append(f'[Content of type "{kind}" not imported]')
    for attachment in meta.get("attachments") or ():
        if isinstance(attachment, Mapping) and attachment.get("id") not in images:
            label = _str(attachment.get("name")) or _str(attachment.get("id")) or "a file"
            marks.append(f"[Attachment not imported: {label}]")
    return "\n\n".join(p for p in pieces if p.strip()), [m for m in marks if m]


def _join(*parts: str | list[str]) -> str:
    """Paragraphs; a list is placeholder lines, one after another."""
    texts = ["\n".join(p) if isinstance(p, list) else p for p in parts]
    return "\n\n".join(t for t in texts if t.strip())


def _block(kind: Any, text: str) -> str:
    """A tool call's or output's text as a block, verbatim; code, outputs and quotes are
    blocks already."""
    if not text.strip() or kind in ("code", "execution_output", "tether_quote"):
        return text
    return _fence(text)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _message(node: Any) -> Mapping[str, Any]:
    message = node.get("message") if isinstance(node, Mapping) else None
    return message if isinstance(message, Mapping) else {}


def _path(messages: list[ImportedMessage], leaf: int) -> list[int]:
    parents = {m.seq: m.parent_seq for m in messages}
    path: list[int] = []
    seq: int | None = leaf
    while seq is not None:
        path.append(seq)
        seq = parents[seq]
    return path[::-1]


def _time(value: Any) -> float | None:
    """Seconds since the epoch from a number (or a numeric or ISO string); None if absent."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            try:
                value = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
            except ValueError:
                return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
        return number if math.isfinite(number) and number > 0 else None
    return None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _language(value: Any) -> str:
    language = _str(value).strip()
    return "" if language.lower() in ("unknown", "text", "") else language


def _fence(text: str, language: str = "") -> str:
    """A fenced code block holding ``text`` verbatim (a fence longer than any inside)."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"


def _quote(content: Mapping[str, Any]) -> str:
    title, url = _str(content.get("title")), _str(content.get("url"))
    source = f"[{title or url}]({url})" if url else title
    lines = "\n".join(
        f"> {line}" if line else ">" for line in _str(content.get("text")).strip("\n").split("\n")
    )
    return f"{source}\n\n{lines}" if source else lines


def _thoughts(content: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for thought in content.get("thoughts") or ():
        if isinstance(thought, Mapping):
            summary, text = _str(thought.get("summary")), _str(thought.get("content"))
            out.append("\n\n".join(p for p in (f"**{summary}**" if summary else "", text) if p))
    return [t for t in out if t]


def _asset_id(part: Mapping[str, Any]) -> str:
    pointer = _str(part.get("asset_pointer"))
    return pointer.split("://", 1)[-1] if pointer else "unknown"


def _part(
    part: Mapping[str, Any], images: set[str], take: Callable[[str], bool] | None = None
) -> tuple[str, str]:
    """A multimodal part as (text, placeholder line); the ids of images go into ``images``
    (so their entries in the attachments are not announced twice). With `take`, a picture
    is read from the zip (no placeholder) or said not found there."""
    kind = _str(part.get("content_type"))
    if kind == "image_asset_pointer":
        asset = _asset_id(part)
        images.add(asset)
        width, height = part.get("width"), part.get("height")
        size = f" ({width}×{height})" if isinstance(width, int) and isinstance(height, int) else ""
        if take is not None:
            if take(_str(part.get("asset_pointer"))):
                return "", ""
            return "", f"[Image not found in the export: {asset}{size}]"
        return "", f"[Image not imported: {asset}{size}]"
    if kind == "audio_transcription":
        return _str(part.get("text")), ""
    if "audio" in kind or "video" in kind:
        return "", f"[Audio not imported: {_asset_id(part)}]"
    if kind in ("text", "") and isinstance(part.get("text"), str):
        return part["text"], ""
    return "", f'[Content of type "{kind or "unknown"}" not imported]'
