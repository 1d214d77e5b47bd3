"""Full-text search over every message of every conversation, on every branch.

Since schema version 5 the file holds ``message_index``, an FTS5 table with the trigram
tokenizer over what the window shows of each message (``engine.storage.migrations``); since
version 8 a user message's attached documents are read too (their extracted text, after the
message's own), so a word only a document holds finds the message that carries it. The
triggers that keep it run inside each append's own transaction, so a message is findable
the moment it is saved, and never before.

How a query is read:

* Only its first `MAX_QUERY_CHARS` characters are searched: the trigram index reads a term as
  a phrase of all its trigrams, so a pasted megabyte took seconds of the storage thread (a
  host says so when it cuts what was typed).
* It is split on white space into terms; a message is a hit when it holds every term,
  anywhere, case-insensitively (ASCII and the other scripts the tokenizer folds). A term of
  three characters or more is looked up in the index (a trigram phrase: a substring match,
  which is how Chinese, written without spaces, is found). A shorter term ("天气", "Go")
  cannot be: when every term is short, the messages are scanned, newest first, and the scan
  stops at the first `limit` hits (its cost grows with how rare the terms are; `make bench`
  prints it).
* Hits come newest stored first (the messages' rowid order, which the index reads in order,
  so a query stops after `limit` hits instead of ranking every match).
* A snippet is cut from the text around the first match (`SNIPPET_CHARS`), its white space
  folded, with the position of each term's matches in it, so a view can mark them.

Whether a hit is on the branch a conversation shows is told for each hit
(``on_active_path``): choosing one that is not means switching to its branch first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..text import clean
from .core import StorageCore
from .migrations import INDEXED_TEXT
from .tree import FROM_ACTIVE, path_sql

__all__ = [
    "MAX_QUERY_CHARS",
    "SNIPPET_CHARS",
    "MessageSearch",
    "SearchHit",
    "TitleQuery",
    "casefold",
    "search_terms",
]

#: the characters of a query that are searched; the rest is left out
MAX_QUERY_CHARS = 1000

#: about how many characters of a message a snippet shows
SNIPPET_CHARS = 160
_BEFORE_MATCH = 50  # of them, how many come before the first match
_SHORTEST_INDEXED = 3  # the trigram tokenizer finds substrings of this length or more
_MESSAGE_TYPES = ("user", "assistant", "tool", "system")  # what the index holds

# The text of a message row, as the index reads it: its own, then its documents' (schema 8).
_TEXT = INDEXED_TEXT.format(row="m")

_HIT_COLUMNS = f"m.rowid, m.session_id, m.seq, m.id, m.type, m.created_at, {_TEXT}"

# Which of the given seqs (a JSON array) lie on the path from the active leaf up, walking only
# down to the smallest of them (a parent's seq is always smaller than its child's).
_ON_PATH = """
WITH RECURSIVE up(seq) AS (
    SELECT active_seq FROM sessions WHERE id = :sid
    UNION ALL
    SELECT m.parent_seq FROM up JOIN messages m ON m.session_id = :sid AND m.seq = up.seq
    WHERE m.parent_seq IS NOT NULL AND m.parent_seq < m.seq AND m.parent_seq >= :lowest
)
SELECT seq FROM up WHERE seq IN (SELECT value FROM json_each(:seqs))
"""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One message that holds every term of a query."""

    session_id: str
    seq: int
    message_id: str
    type_name: str  #: "user", "assistant", "tool" or "system"
    created_at: float
    snippet: str  #: the text around the first match, white space folded
    #: where the terms occur in `snippet`: (start, end) character offsets, in order
    marks: tuple[tuple[int, int], ...]
    #: True when the message is on the branch the conversation shows
    on_active_path: bool


def search_terms(query: str) -> list[str]:
    """The terms of a query: its words, without duplicates (case-insensitively).

    Only the first `MAX_QUERY_CHARS` characters of the query count. They are made storable
    text first, as every message is: a lone surrogate becomes U+FFFD (`engine.text.clean`;
    it is not UTF-8, so SQLite cannot take it) and NUL characters are dropped (the full-text
    index's query syntax ends at one), so whatever is typed or pasted searches instead of
    failing.
    """
    seen: dict[str, str] = {}
    for word in clean(query[:MAX_QUERY_CHARS]).replace("\x00", "").split():
        seen.setdefault(word.casefold(), word)
    return list(seen.values())


def _pattern(terms: Iterable[str]) -> re.Pattern[str]:
    # Longest first, so that "weather" is marked whole where "we" also matches.
    ordered = sorted(set(terms), key=len, reverse=True)
    return re.compile("|".join(re.escape(t) for t in ordered), re.IGNORECASE)


def _snippet(text: str, pattern: re.Pattern[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    first = pattern.search(text)
    start = max(0, first.start() - _BEFORE_MATCH) if first is not None else 0
    piece = text[start : start + SNIPPET_CHARS + _BEFORE_MATCH]
    folded = " ".join(piece.split())
    if len(folded) > SNIPPET_CHARS:
        folded = folded[:SNIPPET_CHARS].rstrip() + "…"
    if start > 0:
        folded = "…" + folded
    marks = tuple((m.start(), m.end()) for m in pattern.finditer(folded))
    return folded, marks


def _match_expression(terms: Iterable[str]) -> str:
    # Each term a quoted phrase ("" escapes a quote): FTS5's query syntax (AND, NEAR, *, -)
    # in what a person types is taken literally.
    return " AND ".join('"' + t.replace('"', '""') + '"' for t in terms)


def casefold(value: object) -> str | None:
    """SQL ``casefold(x)``: Python's full case folding, for every script (registered on
    every connection of the storage)."""
    return value.casefold() if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class TitleQuery:
    """The one rule of a title search: a title matches when, case-folded with Python's full
    folding (`casefold`: "Straße" holds "STRASSE", "İ" is "i̇"), it holds every term of the
    query, anywhere.

    `MessageSearch.search_titles` has SQLite apply it (``instr(casefold(title), term)`` for
    each term); a host filtering titles it already holds (the window's conversation list)
    calls `matches`, so the two never disagree. A query without terms matches every title
    here (a filter shows all), while `search_titles` finds nothing for it.
    """

    #: the query's terms (`search_terms`), case-folded
    terms: tuple[str, ...]

    @classmethod
    def parse(cls, query: str) -> TitleQuery:
        """The terms of `query` (its first `MAX_QUERY_CHARS` characters), case-folded."""
        return cls(tuple(term.casefold() for term in search_terms(query)))

    def matches(self, title: str | None) -> bool:
        """True when `title` holds every term (a missing title holds none)."""
        folded = casefold(title) or ""
        return all(term in folded for term in self.terms)


class MessageSearch:
    """The search of the SQLite store: reads only, on the core's read connections (a search
    that scans never delays a write)."""

    def __init__(self, core: StorageCore) -> None:
        self._core = core

    async def search_messages(
        self, query: str, *, limit: int = 50, session_id: str | None = None
    ) -> list[SearchHit]:
        """Return up to `limit` messages holding every term of `query`, newest first.

        Every branch is searched; `SearchHit.on_active_path` tells which hits the
        conversation shows. With `session_id`, only that conversation is searched.
        An empty query finds nothing; only its first `MAX_QUERY_CHARS` characters count.

        Raises:
            StorageError: the file could not be read (the disk, damage).
            QueryError: SQLite could not run the search (never the disk's or the file's
                fault).
        """
        terms = search_terms(query)
        if not terms or limit <= 0:
            return []
        long_terms = [t for t in terms if len(t) >= _SHORTEST_INDEXED]
        short_terms = [t for t in terms if len(t) < _SHORTEST_INDEXED]
        params: dict[str, Any] = {"limit": limit}
        where = [f"m.type IN {_MESSAGE_TYPES!r}"]
        for number, term in enumerate(short_terms):
            # casefold() is Python's, registered on every connection (SQLite's lower() folds
            # ASCII only, so "Über" would never meet "über").
            params[f"s{number}"] = term.casefold()
            where.append(f"instr(casefold({_TEXT}), :s{number}) > 0")
        if session_id is not None:
            params["sid"] = session_id
            where.append("m.session_id = :sid")
        if long_terms:
            params["match"] = _match_expression(long_terms)
            # The index is read newest first and joined a row at a time (CROSS JOIN keeps
            # it outermost): the query stops at `limit` hits.
            sql = (
                f"SELECT {_HIT_COLUMNS} FROM message_index i CROSS JOIN messages m "
                "ON m.rowid = i.rowid WHERE message_index MATCH :match AND "
                + " AND ".join(where)
                + " ORDER BY i.rowid DESC LIMIT :limit"
            )
        else:
            sql = (
                f"SELECT {_HIT_COLUMNS} FROM messages m WHERE "
                + " AND ".join(where)
                + " ORDER BY m.rowid DESC LIMIT :limit"
            )
        rows = await self._core.read(sql, params)
        pattern = _pattern(terms)
        on_path = await self._on_active_path(rows)
        hits = []
        for _rowid, sid, seq, message_id, type_name, created_at, text in rows:
            snippet, marks = _snippet(str(text or ""), pattern)
            hits.append(
                SearchHit(
                    session_id=sid,
                    seq=int(seq),
                    message_id=message_id,
                    type_name=type_name,
                    created_at=float(created_at),
                    snippet=snippet,
                    marks=marks,
                    on_active_path=(sid, int(seq)) in on_path,
                )
            )
        return hits

    async def find_on_path(self, session_id: str, query: str) -> list[SearchHit]:
        """Return the messages the conversation shows (its active path) that hold every
        term of `query`, in the order they are shown (oldest first)."""
        hits = await self.search_messages(query, limit=2**31, session_id=session_id)
        return sorted((h for h in hits if h.on_active_path), key=lambda h: h.seq)

    async def search_titles(self, query: str, *, limit: int = 50) -> list[str]:
        """Return the ids of conversations whose title holds every term of `query`, the most
        recently updated first (`TitleQuery`'s rule)."""
        terms = TitleQuery.parse(query).terms
        if not terms:
            return []
        params: dict[str, Any] = {"limit": limit}
        where = []
        for number, term in enumerate(terms):  # `TitleQuery.matches`, in SQL
            params[f"t{number}"] = term
            where.append(f"instr(casefold(title), :t{number}) > 0")
        rows = await self._core.read(
            "SELECT id FROM sessions WHERE "
            + " AND ".join(where)
            + " ORDER BY updated_at DESC, rowid DESC LIMIT :limit",
            params,
        )
        return [row[0] for row in rows]

    async def path_depth(self, session_id: str, seq: int) -> int | None:
        """How many messages of the active path lie from the active leaf up to (and
        including) message `seq`; None when `seq` is not on the active path."""
        rows = await self._core.read(
            """
            WITH RECURSIVE up(seq, depth) AS (
                SELECT active_seq, 1 FROM sessions WHERE id = :sid
                UNION ALL
                SELECT m.parent_seq, up.depth + 1 FROM up
                JOIN messages m ON m.session_id = :sid AND m.seq = up.seq
                WHERE m.parent_seq IS NOT NULL AND m.parent_seq < m.seq
                    AND m.parent_seq >= :seq
            )
            SELECT depth FROM up WHERE seq = :seq
            """,
            {"sid": session_id, "seq": seq},
        )
        return int(rows[0][0]) if rows else None

    async def path_seq_at(self, session_id: str, depth: int) -> int | None:
        """The seq of the message `depth` steps up the active path (1: the active leaf);
        None when the path is shorter."""
        if depth < 1:
            return None
        rows = await self._core.read(
            path_sql(start=FROM_ACTIVE, columns="path.seq, path.depth") + " LIMIT 1",
            {"sid": session_id, "limit": depth},
        )
        return int(rows[0][0]) if rows and int(rows[0][1]) == depth else None

    async def _on_active_path(self, rows: list[Any]) -> set[tuple[str, int]]:
        by_session: dict[str, list[int]] = {}
        for row in rows:
            by_session.setdefault(row[1], []).append(int(row[2]))
        found: set[tuple[str, int]] = set()
        for sid, seqs in by_session.items():
            result = await self._core.read(
                _ON_PATH, {"sid": sid, "lowest": min(seqs), "seqs": json.dumps(seqs)}
            )
            found.update((sid, int(r[0])) for r in result)
        return found
