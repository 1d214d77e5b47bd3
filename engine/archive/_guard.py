"""A guard on a JSON file's bytes before ijson reads them: bounded memory, linear time, and a
way out at once.

`StreamGuard` reads the bytes ijson is about to parse, following strings (and their backslash
escapes) across reads, and keeps four promises ijson cannot keep by itself:

* **No nesting that exhausts memory.** ijson's readers keep, for every open list or object,
  its whole prefix (the keys leading to it): their memory grows with the square of the
  nesting depth and with the length of those keys (an 80 KB file nested 20,000 levels took
  about 1 GB). The guard raises `TooDeep` — before ijson sees it — at the first list or object
  nested more than `MAX_DEPTH` levels, or whose keys on the way add up to more than
  `MAX_KEY_BYTES`: ijson's prefixes stay under about 13 MB.
* **Linear time.** ijson's C parser (yajl) starts a token over from its first byte each time
  a read ends inside it: one string of n bytes cost time in n² (8 MB 2 s, 32 MB 16.7 s; a 1 MB
  zip holding a 1 GB title ran for hours). The guard never ends a read inside a string, a
  number or a literal: it holds the unfinished token back and hands it out whole with the
  read that finishes it.
* **Bounded conversations.** Given where the file's list of conversations is (`items`), the
  guard knows where each conversation starts and ends. One holding a string (or number)
  longer than `MAX_STRING_BYTES`, or longer itself than `MAX_CONVERSATION_BYTES`, is passed
  over unread: its bytes stop reaching ijson, the rest of it is skipped (counting brackets,
  nothing kept), and `Skipped` is raised, naming it (its title or id when they come before
  the overflow, else its place in the file). `StreamGuard.resume` then hands a new parser the
  brackets that open the list again, and the next conversation. A string over the limit
  outside any conversation (in the file's header) is `TooLarge`: the file is refused.
* **Cancel at once.** With a `stop` event, every read (and every step of a skip) checks it
  and raises `Cancelled`: an import ends within a read (64 KiB), not after the conversation
  being parsed.

Speed: escapes are neutralised and strings skipped by regular expressions (in C); Python
runs once per bracket and once per read, not per byte or string: about 0.06 s for a 30 MB
ChatGPT export, whose reading takes 0.55 s.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import ijson  # type: ignore[import-untyped, unused-ignore]

from ..errors import ArchiveError
from ..sentences import Phrase
from ..text import clean

__all__ = [
    "CHUNK",
    "MAX_CONVERSATION_BYTES",
    "MAX_DEPTH",
    "MAX_KEY_BYTES",
    "MAX_STRING_BYTES",
    "Cancelled",
    "Skipped",
    "StreamGuard",
    "TooDeep",
    "TooLarge",
    "guarded_events",
    "guarded_items",
    "size_text",
]

#: the deepest a list or object may be nested (the outermost one is level 1)
MAX_DEPTH = 200
#: how many bytes the keys leading to one list or object may add up to (as written, quoted)
MAX_KEY_BYTES = 64 * 1024
#: the longest string (or number, or literal) an import reads, in bytes as written (its
#: quotes and escapes included): 16 MiB
MAX_STRING_BYTES = 16 * 1024 * 1024
#: the largest conversation an import reads, in bytes as written: 256 MiB
MAX_CONVERSATION_BYTES = 256 * 1024 * 1024
#: bytes read from the file at a time
CHUNK = 64 * 1024
#: the first bytes of each conversation kept to name it if it is skipped
_HEAD_BYTES = 64 * 1024
#: the text of the last string of a read is kept for the next read up to this length (the
#: key of the list of conversations may be cut between two reads)
_SHORT = 256

# An escaped backslash or quote inside a string. Each is made two neutral bytes before the
# bytes are read for tokens, so that every quote left is a string's edge. (Pairs are taken
# from the left, as JSON does: in ``\\\"`` the first two are a pair, the last two a quote.)
_ESCAPE = re.compile(rb'\\[\\"]')
_NEUTRAL = b"__"
# JSON's white space, and what follows a key that leads to a list or an object.
_WS = rb"[ \t\r\n]*+"
_TO_CONTAINER = _WS + rb":" + _WS + rb"[\[{]"
# One match a bracket outside strings. First, skipped in C: bytes outside strings and whole
# strings (every quote left is a string's edge), but not a key that leads to a list or an
# object (``"name": {``): that is group 1, then the bracket: ``{`` group 2, ``[`` group 3,
# ``]`` or ``}`` group 4. Or, at the end of the read, a string cut off by it (group 5), or
# nothing. Every match attempt succeeds, so nothing is scanned twice.
_TOKEN = re.compile(
    rb'(?:[^"\[\]{}]++|"[^"]*+"(?!' + _TO_CONTAINER + rb"))*+"
    rb'(?:("[^"]*+")' + _WS + rb":" + _WS + rb")?"
    rb'(?:(\{)|(\[)|([\]}])|("[^"]*+)?\Z)'
)
_KEY, _OPEN_MAP, _OPEN_LIST, _CLOSE, _CUT = 1, 2, 3, 4, 5
# The same without keys, for a conversation being skipped: ``[`` or ``{`` group 1, ``]`` or
# ``}`` group 2, a string cut off by the end of the read group 3.
_SKIP_TOKEN = re.compile(rb'(?:[^"\[\]{}]++|"[^"]*+")*+(?:([\[{])|([\]}])|("[^"]*+)?\Z)')
# A number or a literal (true, false, null) running to the end of a read: it may go on.
_BARE_END = re.compile(rb'[^ \t\r\n\[\]{},:"]+\Z')
# Where a number or a literal ends.
_DELIMITER = re.compile(rb'[ \t\r\n\[\]{},:"]')
# A key and its string value near the start of a conversation (to name a skipped one).
_NAMED = re.compile(rb'"((?:[^"\\]|\\.)*)"[ \t\r\n]*:[ \t\r\n]*(?:("(?:[^"\\]|\\.)*")|[\[{])')


def size_text(size: int) -> str:
    """A byte count as a person reads a limit: "16 MB", "256 MB"."""
    return f"{size / (1024 * 1024):g} MB" if size >= 1024 * 1024 else f"{size:,} bytes"


class TooDeep(Exception):
    """The JSON nests too deeply for ijson to read it within bounded memory."""

    def __init__(self, problem: Phrase, offset: int) -> None:
        super().__init__(f"{problem}, around byte {offset:,}")
        self.problem = problem
        self.offset = offset  #: where the list or object that goes too deep begins

    def error(self, path: str) -> ArchiveError:
        """The import's refusal of the file `path` (``archive.too_deep``)."""
        return ArchiveError(
            path,
            key="archive.too_deep",
            params={"problem": self.problem, "offset": f"{self.offset:,}"},
        )


class TooLarge(Exception):
    """A string (or number) longer than `MAX_STRING_BYTES` outside any conversation."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"a text longer than {size_text(MAX_STRING_BYTES)}, at byte {offset:,}")
        self.offset = offset  #: where it begins

    def error(self, path: str) -> ArchiveError:
        """The import's refusal of the file `path` (``archive.too_large``)."""
        return ArchiveError(
            path,
            key="archive.too_large",
            params={"limit": size_text(MAX_STRING_BYTES), "offset": f"{self.offset:,}"},
        )


class Cancelled(Exception):
    """The import was cancelled: seen in the byte stream, so reading stopped at once."""


class Skipped(Exception):
    """A conversation over a limit was passed over, unread (see the module docstring).

    Call `StreamGuard.resume` and read on with a new parser.
    """

    def __init__(
        self,
        number: int | None,
        title: str | None,
        source_id: str | None,
        problem: Phrase,
        offset: int,
    ) -> None:
        super().__init__(f"{problem} (conversation {number}, around byte {offset:,})")
        self.number = number  #: its place among the file's conversations (None: not one)
        self.title = title  #: its title, when it comes before what is too large
        self.source_id = source_id  #: its id, likewise
        self.problem = problem  #: what is too large (``archive.too_large.*``)
        self.offset = offset  #: where what is too large begins (or ends: a conversation)


def guarded_items(guard: StreamGuard, prefix: str) -> Iterator[Any]:
    """ijson's ``items(guard, prefix)``, going on past each conversation the guard passes
    over: that one comes as its `Skipped` (an item, not raised), then the next ones."""
    while True:
        try:
            yield from ijson.items(guard, prefix, use_float=True)
            return
        except Skipped as skipped:
            yield skipped
            guard.resume()


def guarded_events(guard: StreamGuard) -> Iterator[tuple[str, str, Any]]:
    """ijson's ``parse(guard)`` events, going on past each conversation the guard passes
    over (the events of the brackets that open the list again come once more)."""
    while True:
        try:
            yield from ijson.parse(guard, use_float=True)
            return
        except Skipped:
            guard.resume()


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


@dataclass(slots=True)
class _Skip:
    """A conversation (or an entry of the list) being passed over."""

    found: Skipped  #: raised once it is passed
    depth: int  #: the lists and objects of it still open (0: a string or number of the list)


class StreamGuard:
    """A binary stream that hands out ``raw``'s bytes to ijson under the promises of the
    module docstring.

    Args:
        raw: the file's bytes (``read(size)``).
        items: where the file's conversations are: ``()`` for a list at the root (ChatGPT's
            ``conversations.json``), ``("conversations",)`` for that key of the root object
            (Continuo's export), None when the file has no conversations to pass over (then
            any string over the limit is `TooLarge`).
        stop: when set, the next read raises `Cancelled`.
    """

    def __init__(
        self,
        raw: _Readable,
        *,
        items: tuple[str, ...] | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        if items is not None and len(items) > 1:
            raise ValueError("the conversations must be the root list or one key of the root")
        self._raw = raw
        self._stop = stop
        # where the conversations are
        self._items_depth = None if items is None else len(items) + 1
        self._items_key = json.dumps(items[0]).encode() if items else None
        self._prefix = b'{"%s":[' % items[0].encode() if items else b"["
        self._in_items = False
        # the structure read so far
        self._adds: list[int] = []  # per open list or object: the bytes its key adds
        self._maps: list[bool] = []  # per open list or object: True for an object
        self._key_bytes = 0  # the sum of `_adds`
        self._last = 0  # the length of the last string after the last bracket (a key?)
        self._last_text: bytes | None = b""  # ...and its text, when short
        self._in_string = False  # the last read ended inside a string...
        self._escaped = False  # ...just after a backslash (the next byte is escaped)
        self._bare = 0  # the last read ended in a number or literal this long (0: not)
        self._token = 0  # the length of the string the last read ended in, so far
        # bytes
        self._pos = 0  # the file offset of the next byte read from `raw`
        self._held: list[bytes] = []  # an unfinished token, held back from ijson
        self._unread = b""  # the end of the last read from `raw`, not yet looked at
        self._unread_scan: bytes | None = None  # ...already made neutral (a skip's first)
        self._strip = False  # the comma after a skipped conversation is still to come
        self._out = b""  # to hand out before anything else (the brackets after a skip)
        # conversations
        self._number = 0  # conversations begun so far
        self._conv_at: int | None = None  # where the open conversation began
        self._head = bytearray()  # its first bytes (to name it)
        self._head_end = 0  # the file offset the head reaches
        self._skip: _Skip | None = None  # the conversation being passed over
        self._refusal: Exception | None = None  # raised by every read from now on

    # ------------------------------------------------------------------ the stream

    def read(self, size: int = -1, /) -> bytes:
        if size == 0:
            return b""
        while True:
            if self._refusal is not None:
                raise self._refusal
            if self._skip is not None:
                raise self._pass_over()
            self._check_stop()
            if self._out:
                out, self._out = self._out, b""
                return out
            data, self._unread = (self._unread, b"") if self._unread else (self._read(), b"")
            if not data:  # the end: an unfinished token goes as it is (ijson says "cut short")
                out = b"".join(self._held)
                self._held = []
                return out
            out = self._feed(data)
            if out:
                return out

    def resume(self) -> None:
        """After `Skipped`: the next read hands out the brackets that open the list of
        conversations again, so that a new parser reads on from the next one."""
        self._out = self._prefix

    def _read(self) -> bytes:
        data = self._raw.read(CHUNK)
        self._pos += len(data)
        return data

    def _check_stop(self) -> None:
        if self._stop is not None and self._stop.is_set():
            raise Cancelled

    # ------------------------------------------------------------------ reading

    def _neutral(self, data: bytes) -> bytes:
        """`data` with each escaped backslash or quote made neutral (same length)."""
        if self._escaped:  # the last read ended with a backslash: this first byte is escaped
            data = _NEUTRAL[:1] + data[1:]
        if b"\\" in data:
            data = _ESCAPE.sub(_NEUTRAL, data)
            self._escaped = data.endswith(b"\\")  # a backslash left alone escapes the next read
        else:
            self._escaped = False
        return data

    def _feed(self, data: bytes) -> bytes:
        """Look at the next bytes of the file; return what ijson may have of them now."""
        base = self._pos - len(data)
        scan = self._neutral(data)
        if self._strip:  # the comma after a skipped conversation goes with it
            first = len(scan) - len(scan.lstrip(b" \t\r\n"))
            if first < len(scan):
                self._strip = False
                if scan[first] == 0x2C:  # ","
                    data = data[:first] + b" " + data[first + 1 :]
                    scan = scan[:first] + b" " + scan[first + 1 :]
        start = 0
        if self._in_string:  # the last read ended inside a string: where does it close?
            end = scan.find(b'"')
            grown = self._token + (len(scan) if end < 0 else end + 1)
            if grown > MAX_STRING_BYTES:
                return self._too_large(data, scan, self._token_start(base))
            if end < 0:
                self._token = grown
                self._held.append(data)
                return b""
            self._in_string = False
            self._last = grown
            held = b"".join(self._held)
            self._last_text = held + data[: end + 1] if grown <= _SHORT else None
            start = end + 1
        elif self._bare:  # the last read ended in a number or literal: where does it end?
            found = _DELIMITER.search(scan)
            grown = self._bare + (len(scan) if found is None else found.start())
            if grown > MAX_STRING_BYTES:
                return self._too_large(data, scan, self._token_start(base))
            if found is None:
                self._bare = grown
                self._held.append(data)
                return b""
            self._bare = 0
            start = found.start()
        cut = len(data)
        adds, maps, key_bytes = self._adds, self._maps, self._key_bytes
        # The last string before the first bracket, if that bracket has no key in this read:
        # the key a previous read ended with (``"name":`` | ``{``), else nothing.
        carried, carried_text = self._last, self._last_text
        for token in _TOKEN.finditer(scan, start):
            kind = token.lastindex
            if kind == _CLOSE:
                if adds:
                    key_bytes -= adds.pop()
                    maps.pop()
                    self._closed(len(adds))
            elif kind == _OPEN_MAP or kind == _OPEN_LIST:  # a list or an object opens...
                add, key = 0, None
                if maps and maps[-1]:  # ...in an object: the key leading to it counts
                    span = token.span(_KEY)
                    if span[0] >= 0:
                        add, key = span[1] - span[0], scan[span[0] : span[1]]
                    elif scan.find(b'"', token.start(), token.end()) < 0:
                        add, key = carried, carried_text
                at = token.end() - 1
                self._opened(len(adds), kind == _OPEN_LIST, key, data, at, base)
                key_bytes += add
                adds.append(add)
                maps.append(kind == _OPEN_MAP)
                if len(adds) > MAX_DEPTH or key_bytes > MAX_KEY_BYTES:
                    self._key_bytes = key_bytes
                    return self._too_deep(len(adds) > MAX_DEPTH, data, base, at)
            else:  # the end of the read: what the next read's first bracket may need
                tail = token.start()
                if kind == _CUT:  # inside a string, so far this long
                    cut = token.start(_CUT)
                    self._in_string = True
                    self._token = len(scan) - cut
                elif (close := scan.rfind(b'"', tail)) >= 0:  # a string after the last bracket
                    opening = scan.rfind(b'"', tail, close)
                    self._last = close - opening + 1
                    self._last_text = data[opening : close + 1] if self._last <= _SHORT else None
                else:
                    self._last, self._last_text = carried, carried_text
                if kind != _CUT and (bare := _BARE_END.search(scan, tail)) is not None:
                    cut = bare.start()  # a number or literal the next read may go on with
                    self._bare = len(scan) - cut
                break
            carried, carried_text = 0, b""
        self._key_bytes = key_bytes
        self._grow_head(data, base)
        if self._conv_at is not None and self._pos - self._conv_at > MAX_CONVERSATION_BYTES:
            return self._conversation_too_large()
        out = b"".join((*self._held, data[:cut])) if self._held else data[:cut]
        self._held = [data[cut:]] if cut < len(data) else []
        return out

    def _token_start(self, base: int) -> int:
        """The file offset where the token held back began."""
        return base - sum(map(len, self._held))

    # ------------------------------------------------------------------ conversations

    def _opened(
        self, depth: int, is_list: bool, key: bytes | None, data: bytes, at: int, base: int
    ) -> None:
        """A list or object opens at `data[at]`, inside `depth` others."""
        if self._items_depth is None:
            return
        if self._in_items and depth == self._items_depth:
            self._number += 1
            self._conv_at = base + at
            self._head = bytearray(data[at : at + _HEAD_BYTES])
            self._head_end = self._conv_at + len(self._head)
        elif not self._in_items and is_list and depth == self._items_depth - 1:
            # The list of conversations: the root list, or the root object's key.
            self._in_items = depth == 0 or (
                len(self._maps) == 1 and self._maps[0] and key == self._items_key
            )

    def _closed(self, depth: int) -> None:
        """A list or object closed; `depth` are still open."""
        if self._items_depth is None:
            return
        if self._conv_at is not None and depth == self._items_depth:
            self._conv_at = None
        elif self._in_items and depth == self._items_depth - 1:
            self._in_items = False

    def _grow_head(self, data: bytes, base: int) -> None:
        if self._conv_at is None or len(self._head) >= _HEAD_BYTES:
            return
        start = self._head_end - base  # where in this read the head goes on
        if 0 <= start < len(data):
            more = data[start : start + _HEAD_BYTES - len(self._head)]
            self._head += more
            self._head_end += len(more)

    def _name(self) -> tuple[str | None, str | None]:
        """The title and id of the open conversation, read from its first bytes up to its
        first nested list or object (where Continuo and ChatGPT write them)."""
        found: dict[bytes, str] = {}
        for match in _NAMED.finditer(bytes(self._head), 1):
            if match.group(2) is None:
                break  # a list or an object: past the conversation's own fields
            key = match.group(1)
            if key in (b"title", b"id", b"conversation_id") and key not in found:
                try:
                    value = json.loads(match.group(2))
                except ValueError:
                    continue
                if isinstance(value, str) and value:
                    found[key] = clean(value[:200])
        return found.get(b"title"), found.get(b"id") or found.get(b"conversation_id")

    # ------------------------------------------------------------------ limits

    def _too_deep(self, levels: bool, data: bytes, base: int, at: int) -> bytes:
        if levels:
            problem = Phrase("archive.too_deep.levels", {"limit": MAX_DEPTH})
        else:
            problem = Phrase("archive.too_deep.keys", {"limit": f"{MAX_KEY_BYTES:,}"})
        self._refusal = TooDeep(problem, base + at)
        out = b"".join((*self._held, data[:at]))  # what comes before it
        self._held = []
        return out

    def _too_large(self, data: bytes, scan: bytes, at: int) -> bytes:
        """A string or number past `MAX_STRING_BYTES`, beginning at file offset `at`."""
        problem = Phrase("archive.too_large.string", {"limit": size_text(MAX_STRING_BYTES)})
        depth = len(self._adds) - (self._items_depth or 0)
        if self._items_depth is None or not self._in_items or depth < 0:
            self._refusal = TooLarge(at)
            self._held = []
            return b""
        return self._pass(problem, at, depth, data, scan)

    def _conversation_too_large(self) -> bytes:
        """The open conversation is past `MAX_CONVERSATION_BYTES`: pass over the rest."""
        problem = Phrase(
            "archive.too_large.conversation", {"limit": size_text(MAX_CONVERSATION_BYTES)}
        )
        assert self._conv_at is not None
        depth = len(self._adds) - (self._items_depth or 0)
        # This read was looked at whole (nothing of it goes out): the skip goes on after it.
        self._held = []
        self._skip = _Skip(self._skipped(problem, self._conv_at), depth)
        return b""

    def _pass(self, problem: Phrase, at: int, depth: int, data: bytes, scan: bytes) -> bytes:
        """Pass over the open conversation (or the entry of the list at depth 0) from where
        its string or number went over the limit: nothing more of it reaches ijson."""
        self._held = []
        self._skip = _Skip(self._skipped(problem, at), depth)
        # This read goes on with the token that went over: the skip looks at it first.
        self._unread, self._unread_scan = data, scan
        return b""

    def _skipped(self, problem: Phrase, at: int) -> Skipped:
        if self._conv_at is None:
            return Skipped(None, None, None, problem, at)
        title, source_id = self._name()
        return Skipped(self._number, title, source_id, problem, at)

    def _pass_over(self) -> Skipped:
        """Read past the conversation being passed over (counting brackets, keeping nothing);
        return what to raise. The bytes after it are the next read's."""
        skip = self._skip
        assert skip is not None
        depth = skip.depth
        while True:
            self._check_stop()
            if self._unread_scan is not None:  # the read the skip began in, looked at
                data, scan = self._unread, self._unread_scan
                self._unread, self._unread_scan = b"", None
            else:
                data, self._unread = (self._unread, b"") if self._unread else (self._read(), b"")
                scan = self._neutral(data)
            if not data:
                break  # the file ends inside it: the next parser says the file is cut short
            start = 0
            if self._in_string:
                end = scan.find(b'"')
                if end < 0:
                    continue
                self._in_string = False
                start = end + 1
                if depth == 0:  # an entry of the list that was only this string
                    self._unread = data[start:]
                    break
            elif self._bare:
                found = _DELIMITER.search(scan)
                if found is None:
                    continue
                self._bare = 0
                start = found.start()
                if depth == 0:
                    self._unread = data[start:]
                    break
            ended = None
            for token in _SKIP_TOKEN.finditer(scan, start):
                if token.lastindex == 1:
                    depth += 1
                elif token.lastindex == 2:
                    depth -= 1
                    if depth == 0:
                        ended = token.end()
                        break
                else:
                    self._in_string = token.lastindex == 3
                    break
            if ended is not None:
                self._unread = data[ended:]
                break
        # Back to the list of conversations: what was open inside the skipped one is gone.
        items = self._items_depth or 0
        del self._adds[items:], self._maps[items:]
        self._key_bytes = sum(self._adds)
        self._in_string = self._escaped = False
        self._bare = self._token = self._last = 0
        self._last_text = b""
        self._conv_at = None
        self._strip = True
        self._skip = None
        return skip.found
