"""Search's exact edges, in a real SQLite file, fast: a quote inside a term, where each hit
lies against the path the conversation shows, and the message a number of steps up it.

Each test here fails on a deliberate bug the rest of the suite let through (issue 18): the
full-text phrase no longer doubling a `"`, the on-path walk stopping one message short of
the lowest hit, and `path_seq_at` giving the root for a depth past the path's end.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from engine import AssistantMessage, UserMessage
from engine.storage import SQLiteSessionStorage


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[SQLiteSessionStorage]:
    store = SQLiteSessionStorage(tmp_path / "search.sqlite3", synchronous="NORMAL")
    yield store
    await store.close()


async def branched(storage: SQLiteSessionStorage) -> list[int]:
    """A conversation with a hidden branch; every message says "marker". Returns the seqs of
    the path it shows, root first.

        1 u1 ─ 2 a1 ─ 3 u2 ─┬─ 4 a2          (hidden)
                            └─ 5 a2b ─ 6 u3  (shown)
    """
    await storage.append("t", "r", UserMessage(id="u1", content="marker root question"))
    await storage.append("t", "r", AssistantMessage(id="a1", content="marker first answer"))
    await storage.append("t", "r", UserMessage(id="u2", content="marker second question"))
    await storage.append("t", "r", AssistantMessage(id="a2", content="marker second answer"))
    await storage.branch_from("t", "u2")
    await storage.append("t", "r", AssistantMessage(id="a2b", content="marker second answer b"))
    await storage.append("t", "r", UserMessage(id="u3", content="marker last question"))
    path = await storage.active_path_seqs("t")
    assert path == [1, 2, 3, 5, 6]
    return path


@pytest.mark.parametrize(
    ("query", "seqs"),
    [
        ("marker", {1, 2, 3, 4, 5, 6}),  # the lowest hit is the root
        ("second", {3, 4, 5}),  # the lowest hit is mid-path, a parent of a shown one
        ("answer", {2, 4, 5}),
        ("last", {6}),  # only the leaf
        ("second answer", {4, 5}),  # only the two versions
    ],
)
async def test_each_hit_is_said_on_or_off_the_shown_path(
    storage: SQLiteSessionStorage, query: str, seqs: set[int]
) -> None:
    path = await branched(storage)
    hits = await storage.search_messages(query)
    assert {h.seq for h in hits} == seqs
    assert {h.seq: h.on_active_path for h in hits} == {s: s in path for s in seqs}
    assert [h.seq for h in await storage.find_on_path("t", query)] == [s for s in path if s in seqs]


async def test_each_message_of_the_path_has_its_depth_and_back(
    storage: SQLiteSessionStorage,
) -> None:
    path = await branched(storage)
    for depth, seq in enumerate(reversed(path), start=1):
        assert await storage.path_depth("t", seq) == depth
        assert await storage.path_seq_at("t", depth) == seq
    assert await storage.path_depth("t", 4) is None  # the hidden version


@pytest.mark.parametrize("depth", [0, -1, 6, 7, 1000])
async def test_no_message_is_named_off_either_end_of_the_path(
    storage: SQLiteSessionStorage, depth: int
) -> None:
    await branched(storage)  # five messages shown
    assert await storage.path_seq_at("t", depth) is None
    assert await storage.path_seq_at("empty", 1) is None


@pytest.mark.parametrize(
    ("query", "seqs"),
    [
        ('"hello', [1]),  # an opening quote with no end
        ('say"hi"', [2]),  # quotes inside a word
        ('"""', [3]),  # nothing but quotes
        ('hi" OR "x', []),  # a quote that would end the phrase early and add an OR
    ],
)
async def test_a_quote_in_a_term_is_searched_as_itself(
    storage: SQLiteSessionStorage, query: str, seqs: list[int]
) -> None:
    await storage.append("q", "r", UserMessage(content='She typed "hello and left'))
    await storage.append("q", "r", UserMessage(content='He wrote say"hi" twice'))
    await storage.append("q", "r", UserMessage(content='A docstring opens with """'))
    assert [h.seq for h in await storage.search_messages(query)] == seqs
