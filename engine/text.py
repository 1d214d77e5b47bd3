"""Text is always storable: surrogates never reach storage, events or a provider.

A Python ``str`` may hold UTF-16 surrogates (U+D800–U+DFFF) that UTF-8 cannot encode: JSON
escapes decode to them (``"\\ud83d"``), and a provider that splits an emoji's escaped pair
across two stream events sends ``"\\ud83d"`` in one and ``"\\ude00"`` in the next. Written
as is, SQLite's UTF-8 encoding raises `UnicodeEncodeError` and nothing is stored.

This module owns the two rules that prevent it:

- `clean` joins each high + low surrogate pair into the character it encodes and replaces
  every lone surrogate with U+FFFD (the replacement character). Messages, stop texts,
  titles and metadata pass through it where they are built, so nothing else needs to care.
- `TextJoiner` does the same for a stream of deltas, incrementally: a delta that ends in a
  high surrogate keeps it back until the next delta says whether its low half follows.

Both cost nothing for ASCII text (CPython knows a string is ASCII) and one regular-expression
scan for other text without surrogates (the usual case).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REPLACEMENT", "TextJoiner", "clean", "clean_data"]

#: what a lone surrogate becomes
REPLACEMENT = "\ufffd"

_SURROGATE = re.compile("[\ud800-\udfff]")
_HIGH_FIRST, _HIGH_LAST = 0xD800, 0xDBFF


def clean(text: str) -> str:
    """Return ``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD."""
    if text.isascii() or _SURROGATE.search(text) is None:  # isascii() is O(1) in CPython
        return text
    # UTF-16 round trip: "surrogatepass" writes each surrogate as its code unit, so a pair
    # decodes to the character it encodes and a lone unit decodes (with "replace") to U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_data(value: Any) -> Any:
    """`clean` every string (keys too) in JSON-like data: dicts, lists, tuples, scalars."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, Mapping):
        return {clean_data(k): clean_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_data(v) for v in value]
    return value


def _ends_high(text: str) -> bool:
    return bool(text) and _HIGH_FIRST <= ord(text[-1]) <= _HIGH_LAST


class TextJoiner:
    """Joins streamed text deltas into storable pieces.

    `feed` returns what can be shown and stored now; a trailing high surrogate is held back
    until the next delta (which may start with its low half). `flush` ends the stream: a
    high surrogate still held becomes U+FFFD.
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def feed(self, delta: str) -> str:
        """Take one delta; return the storable text it completes (maybe "")."""
        if self._held:
            delta = self._held + delta
            self._held = ""
        if delta.isascii() or _SURROGATE.search(delta) is None:
            return delta
        if _ends_high(delta):
            self._held = delta[-1]
            delta = delta[:-1]
        return clean(delta)

    def flush(self) -> str:
        """End the stream: return what is still held, as U+FFFD (or "")."""
        held, self._held = self._held, ""
        return clean(held)

    @property
    def pending(self) -> bool:
        """True while a high surrogate waits for its low half."""
        return bool(self._held)
