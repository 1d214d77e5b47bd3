"""Hiding credentials in text that a person, a log or a file may see.

Whatever a server says can quote the key it was sent, and whatever a person typed as a base
URL can carry one. A provider adapter passes every server text and every URL it shows
through a `Redactor` before it reaches an error sentence, a stop message, stop details, a
log line or a repr; `JSONLExtension` passes error texts through `redact_urls`. Hidden, each replaced by ``[redacted]``:

- URL userinfo (``http://user:sk-...@host``) and the values of key-like parameters
  (``key=``, ``api_key=``, ``api-key=``, ``token=``, ``access_token=``, ``secret=``...);
- anything shaped like a well-known API key (``sk-...``, ``gsk_...``, ``AIza...``);
- HTTP Basic credentials (``Basic <base64 of user:password>``: what a key in a base URL's
  userinfo is sent as, and what a server echoing the ``Authorization`` header says back);
- echoes of a configured secret: the secret in any letter case, with spaces inserted
  anywhere, a word that shares its first or last eight characters (a shortened or masked
  echo such as ``gsk_SECRETde****4321``), or a masked word (``*``, ``•``, ``…``) that shares
  its first or last four; and a configured secret written in base64 (standard or URL-safe,
  alone or inside a longer base64 text such as ``user:secret``'s, at any alignment).

A secret shorter than eight characters is hidden only where it appears whole (any case):
its fragments are too common to hide without hiding ordinary words.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Iterable

__all__ = ["REDACTED", "Redactor", "redact_urls", "shorten"]

REDACTED = "[redacted]"

#: ``scheme://userinfo@`` in any text; the userinfo (user, password or both) goes
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#]*@")

#: ``name=value`` where the name says it holds a credential (query strings, forms, prose)
_KEY_VALUE = re.compile(
    r"(?i)(?<![a-z0-9])((?:[a-z0-9]+[_-])*(?:key|apikey|token|secret|password|passwd|pwd|"
    r"signature|sig|auth|credentials?)=)[^&\s\"'#<>,;]+"
)

#: the shapes of well-known API keys (OpenAI echoes them shortened: "sk-abc***xyz")
_KEYLIKE = re.compile(
    r"\b(?:(?:sk|rk|pk)-[A-Za-z0-9_\-*.]{4,}|(?:gsk|xai|hf|ghp|gho|github_pat|sk_live|"
    r"sk_test)[-_][A-Za-z0-9_\-*.]{8,}|AIza[0-9A-Za-z_\-]{20,})"
)

#: ``Basic <credentials>`` (an ``Authorization`` header's value, echoed); hidden when the
#: credentials are base64 of ``user:password``
_BASIC = re.compile(r"(?i)\b(basic)(\s+)([A-Za-z0-9+/_\-]{4,}={0,2})")

#: a run of base64 (standard or URL-safe), long enough to hold part of a key
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{8,}={0,2}")

#: the marks servers and people use to mask the middle of a key
_MASK = re.compile(r"\*|•|…|\.\.\.")

_LONG = 8  #: characters a long secret's echo must share at either end
_MASKED = 4  #: characters a masked echo must share at either end


def _is_basic_credential(token: str) -> bool:
    """Whether `token` is base64 (standard or URL-safe) of ``user:password``, what HTTP
    Basic auth sends ("Basic usage", "Basic auth" are words, not credentials)."""
    data = (token + "=" * (-len(token) % 4)).encode("ascii")
    try:
        decoded = base64.b64decode(data.replace(b"-", b"+").replace(b"_", b"/"), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _hide_basic(text: str) -> str:
    def hide(match: re.Match[str]) -> str:
        if _is_basic_credential(match.group(3)):
            return match.group(1) + match.group(2) + REDACTED
        return match.group(0)

    return _BASIC.sub(hide, text)


def _base64_cores(secret: str) -> tuple[str, ...]:
    """What any base64 text holding `secret` holds, whatever the bytes before it: for each of
    the three alignments, the characters made of the secret's bits only (standard and
    URL-safe alphabets)."""
    raw = secret.encode("utf-8")
    cores = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        start = -(-8 * shift // 6)  # the first character made only of the secret's bits
        end = 8 * (shift + len(raw)) // 6  # past the last one
        core = encoded[start:end]
        cores.add(core)
        cores.add(core.replace("+", "-").replace("/", "_"))
    return tuple(sorted(cores, key=len, reverse=True))


def redact_urls(text: str) -> str:
    """Hide URL userinfo and key-like ``name=value`` values; needs no configured secret."""
    if "@" in text:
        text = _USERINFO.sub(rf"\1{REDACTED}@", text)
    if "=" in text:
        text = _KEY_VALUE.sub(rf"\1{REDACTED}", text)
    if "asic" in text:
        text = _hide_basic(text)
    return text


def shorten(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a word when one is near, marked with "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 3 // 4:
        cut = cut[:space]
    return cut.rstrip(" ,.;:") + "…"


class Redactor:
    """Hides the given secrets (and the generic shapes above) in text.

    Work and memory are linear in the text: one compiled pattern per secret finds it in any
    case with spaces anywhere (no per-character index map, no lower-cased copy, whose
    positions drift from the text's where a character's lower case is longer, e.g. "İ").

    Args:
        secrets: the credentials to hide; None and empty values are skipped.
    """

    __slots__ = ("_cores", "_patterns", "_secrets")

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        given = {s.strip() for s in secrets if s and s.strip()}
        found = {"".join(s.split()).lower() for s in given}
        # Longest first, so a secret containing another is hidden whole.
        self._secrets = tuple(sorted(found, key=len, reverse=True))
        self._patterns = tuple(_secret_pattern(secret) for secret in self._secrets)
        # Base64 is case-sensitive: its forms are made from the secrets as given. A short
        # secret's would be too short to tell from ordinary base64.
        self._cores = frozenset(
            core for secret in given if len(secret) >= _LONG for core in _base64_cores(secret)
        )

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"  # never the secrets themselves

    @property
    def longest(self) -> int:
        """The length of the longest secret (0 with none)."""
        return len(self._secrets[0]) if self._secrets else 0

    def __call__(self, text: str) -> str:
        """Return ``text`` with every credential replaced by ``[redacted]``."""
        text = redact_urls(text)
        if self._cores:
            text = self._hide_base64(text)
        for pattern in self._patterns:
            text = pattern.sub(REDACTED, text)
        if self._secrets:
            text = self._hide_echoes(text)
        return _KEYLIKE.sub(REDACTED, text)

    def _hide_base64(self, text: str) -> str:
        """Each base64 run holding a secret in base64 (at any alignment), hidden whole.
        (Pieces are kept only around a hit, as in `_hide_echoes`.)"""
        pieces: list[str] = []
        done = 0
        for match in _BASE64_RUN.finditer(text):
            run = match.group()
            if any(core in run for core in self._cores):
                pieces += (text[done : match.start()], REDACTED)
                done = match.end()
        if not pieces:
            return text
        pieces.append(text[done:])
        return "".join(pieces)

    def _hide_echoes(self, text: str) -> str:
        # Only the words that echo a secret are collected: re.sub with a function would
        # hold a piece per word of the text (millions for a large server message).
        pieces: list[str] = []
        done = 0
        for match in _ECHO_WORD.finditer(text):
            hidden = self._word(match)
            if hidden is not None:
                pieces += (text[done : match.start()], hidden)
                done = match.end()
        if not pieces:
            return text
        pieces.append(text[done:])
        return "".join(pieces)

    def _word(self, match: re.Match[str]) -> str | None:
        """The word's replacement if it echoes a secret, else None."""
        word = match.group()
        core = word.rstrip(".:!?")  # sentence punctuation after an echo stays
        if core == REDACTED or len(core) < _MASKED:
            return None
        lowered = core.lower()
        masked = _MASK.search(core) is not None
        for secret in self._secrets:
            if _echoes(lowered, secret, masked):
                return REDACTED + word[len(core) :]
        return None


#: a word, as far as an echo of a key goes (keys hold no spaces, quotes or brackets), long
#: enough to be one (`_MASKED` characters at least)
_ECHO_WORD = re.compile(r"[^\s\"'<>()\[\]{},;]{" + str(_MASKED) + ",}")


def _secret_pattern(secret: str) -> re.Pattern[str]:
    """The (lower-cased, space-free) secret in any case; a long one with spaces anywhere.

    A short secret is hidden only whole: its fragments are too common.
    """
    if len(secret) < _LONG:
        return re.compile(re.escape(secret), re.IGNORECASE)
    return re.compile(r"\s*".join(map(re.escape, secret)), re.IGNORECASE)


def _echoes(word: str, secret: str, masked: bool) -> bool:
    """Whether a (lower-cased) word is a partial or masked echo of a (lower-cased) secret."""
    if len(secret) < _LONG:
        return False
    if len(word) >= _LONG and (word.startswith(secret[:_LONG]) or word.endswith(secret[-_LONG:])):
        return True
    return masked and (word.startswith(secret[:_MASKED]) or word.endswith(secret[-_MASKED:]))


class URLFilter(logging.Filter):
    """A logging filter hiding URL userinfo and key-like values in a record's message.

    Installed on httpx's logger by the adapters: httpx logs each request's URL at INFO.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        hidden = redact_urls(message)
        if hidden != message:
            record.msg, record.args = hidden, None
        return True


def install_url_filter() -> None:
    """Put `URLFilter` on httpx's logger once (the adapters and MCP's HTTP client use it)."""
    httpx_log = logging.getLogger("httpx")
    if not any(isinstance(f, URLFilter) for f in httpx_log.filters):
        httpx_log.addFilter(URLFilter())
