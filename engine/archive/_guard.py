"""A guard on a JSON file's bytes before ijson reads them: no nesting that would exhaust memory.

ijson's readers (``items``, ``parse``) keep, for every open list or object, its whole prefix
(``item.mapping.a.message...``: the keys leading to it). Their memory grows with the square
of the nesting depth, and with the length of those keys: an 80 KB file nested 20,000 levels
takes about 1 GB, one nested 100,000 levels gets the process killed, and so does one nested
only 200 levels whose keys are 50 KB long each (a 10 MB file, 2 GB).

`DepthGuard` reads the bytes ijson is about to parse, following strings (and their
backslash escapes) across reads, and raises `TooDeep` — before ijson sees it — at the first
list or object nested more than `MAX_DEPTH` levels, or whose keys on the way there add up to
more than `MAX_KEY_BYTES`. That bounds the prefixes ijson can hold to about 13 MB (200
levels of 64 KiB). No export comes near: a ChatGPT message's text is 7 levels deep, a
Continuo message's tool arguments 9, plus whatever they hold.

Speed: escapes are neutralised and strings skipped by regular expressions (in C); Python
runs once per bracket, not per byte or string: about 0.06 s for a 30 MB ChatGPT export,
whose reading takes 0.55 s.
"""

from __future__ import annotations

import re
from typing import Protocol

from ..errors import ArchiveError
from ..sentences import Phrase

__all__ = ["MAX_DEPTH", "MAX_KEY_BYTES", "DepthGuard", "TooDeep"]

#: the deepest a list or object may be nested (the outermost one is level 1)
MAX_DEPTH = 200
#: how many bytes the keys leading to one list or object may add up to (as written, quoted)
MAX_KEY_BYTES = 64 * 1024

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


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


class DepthGuard:
    """A binary stream that hands out ``raw``'s bytes up to the first list or object nested
    too deeply, then raises `TooDeep` (so the parser yields what ends before it first)."""

    def __init__(self, raw: _Readable) -> None:
        self._raw = raw
        self._offset = 0  # bytes handed out so far
        self._adds: list[int] = []  # per open list or object: the bytes its key adds
        self._maps: list[bool] = []  # per open list or object: True for an object
        self._key_bytes = 0  # the sum of `_adds`
        self._last = 0  # the length of the last string after the last bracket (a key?)
        self._in_string = False  # the last read ended inside a string...
        self._escaped = False  # ...just after a backslash (the next byte is escaped)
        self._refusal: TooDeep | None = None

    def read(self, size: int = -1, /) -> bytes:
        if self._refusal is not None:
            raise self._refusal
        data = self._raw.read(size)
        if data:
            try:
                self._scan(data)
            except TooDeep as refusal:
                self._refusal = refusal
                data = data[: refusal.offset - self._offset]  # what comes before it
                if not data:
                    raise
            self._offset += len(data)
        return data

    def _scan(self, data: bytes) -> None:
        if self._escaped:  # the last read ended with a backslash: this first byte is escaped
            data = _NEUTRAL[:1] + data[1:]
        if b"\\" in data:
            data = _ESCAPE.sub(_NEUTRAL, data)
            self._escaped = data.endswith(b"\\")  # a backslash left alone escapes the next read
        else:
            self._escaped = False
        start = 0
        if self._in_string:  # the last read ended inside a string: find where it closes
            end = data.find(b'"')
            if end < 0:
                self._last += len(data)
                return
            self._in_string = False
            self._last += end + 1
            start = end + 1
        adds, maps, key_bytes = self._adds, self._maps, self._key_bytes
        # The last string before the first bracket, if that bracket has no key in this read:
        # the key a previous read ended with (``"name":`` | ``{``), else nothing.
        carried = self._last
        for token in _TOKEN.finditer(data, start):
            kind = token.lastindex
            if kind == _CLOSE:
                if adds:
                    key_bytes -= adds.pop()
                    maps.pop()
            elif kind == _OPEN_MAP or kind == _OPEN_LIST:  # a list or an object opens...
                add = 0
                if maps and maps[-1]:  # ...in an object: the key leading to it counts
                    key = token.span(_KEY)
                    if key[0] >= 0:
                        add = key[1] - key[0]
                    elif data.find(b'"', token.start(), token.end()) < 0:
                        add = carried
                key_bytes += add
                adds.append(add)
                maps.append(kind == _OPEN_MAP)
                if len(adds) > MAX_DEPTH or key_bytes > MAX_KEY_BYTES:
                    self._refuse(len(adds) > MAX_DEPTH, self._offset + token.end() - 1)
            else:  # the end of the read: what the next read's first bracket may need
                tail = token.start()
                if kind == _CUT:  # inside a string, so far this long
                    self._in_string = True
                    self._last = token.end() - token.start(_CUT)
                elif (close := data.rfind(b'"', tail)) >= 0:  # a string after the last bracket
                    self._last = close - data.rfind(b'"', tail, close) + 1
                else:
                    self._last = carried  # the one before this read, if it had no bracket
                break
            carried = 0
        self._key_bytes = key_bytes

    @staticmethod
    def _refuse(levels: bool, offset: int) -> None:
        if levels:
            raise TooDeep(Phrase("archive.too_deep.levels", {"limit": MAX_DEPTH}), offset)
        raise TooDeep(Phrase("archive.too_deep.keys", {"limit": f"{MAX_KEY_BYTES:,}"}), offset)
