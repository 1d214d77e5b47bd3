"""Checking that a sentence said in Chinese holds no English words.

Engine sentences quote paths, host names, ids and a server's own words as they are; the rest
of a Chinese sentence must be Chinese (before, parameters such as a lease holder or a
refusal's reason were rendered in English and put into the Chinese template).
"""

from __future__ import annotations

import re

__all__ = ["english_words"]

_WORD = re.compile(r"[A-Za-z]{2,}")


def english_words(text: str, *names: object) -> list[str]:
    """The English-looking words of ``text`` once each of ``names`` (paths, ids) is taken out."""
    for name in sorted(map(str, names), key=len, reverse=True):
        text = text.replace(name, "")
    return _WORD.findall(text)
