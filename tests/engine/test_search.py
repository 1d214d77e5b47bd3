"""Full-text search in a real SQLite file: every message of every branch, found the moment it is
saved (the index is kept in the append's own transaction), Chinese by substring, what a person
types taken literally, an older file indexed by its migration.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine import AssistantMessage, StorageError, ToolMessage, UserMessage
from engine.messages import InternalMessage
from engine.storage import SQLiteSessionStorage
from engine.storage.migrations import MIGRATIONS, check_sqlite
from engine.storage.search import SNIPPET_CHARS, search_terms

ROOT = Path(__file__).resolve().parents[2]
DUMPS = Path(__file__).parent / "storage_helpers"


@pytest.fixture
async def storage(tmp_path: Path):  # -> AsyncIterator[SQLiteSessionStorage]
    store = SQLiteSessionStorage(tmp_path / "search.sqlite3", synchronous="NORMAL")
    yield store
    await store.close()


def marked(hit) -> list[str]:  # noqa: ANN001
    return [hit.snippet[a:b] for a, b in hit.marks]


async def test_a_message_is_found_as_soon_as_it_is_saved(storage: SQLiteSessionStorage) -> None:
    assert await storage.search_messages("weather") == []
    await storage.append("s", "r", UserMessage(content="What is the weather in Oslo?"))
    [hit] = await storage.search_messages("weather")
    assert (hit.session_id, hit.seq, hit.type_name) == ("s", 1, "user")
    assert hit.snippet == "What is the weather in Oslo?" and marked(hit) == ["weather"]
    assert hit.on_active_path
    await storage.append("s", "r", AssistantMessage(content="Rain, as ever: WEATHER in Oslo"))
    hits = await storage.search_messages("Weather oslo")
    assert [h.seq for h in hits] == [2, 1]  # newest first; every term, any case
    assert marked(hits[0]) == ["WEATHER", "Oslo"]


async def test_chinese_is_found_by_substring_short_queries_included(
    storage: SQLiteSessionStorage,
) -> None:
    await storage.append("zh", "r", UserMessage(content="今天北京的天气怎么样？"))
    await storage.append("zh", "r", AssistantMessage(content="北京今天晴，气温十五度。"))
    assert [h.seq for h in await storage.search_messages("北京的天气")] == [1]
    assert [h.seq for h in await storage.search_messages("天气")] == [1]  # two characters
    assert [h.seq for h in await storage.search_messages("北京")] == [2, 1]
    assert [h.seq for h in await storage.search_messages("晴")] == [2]  # one
    [hit] = await storage.search_messages("气温 北京")  # two short terms: both held
    assert marked(hit) == ["北京", "气温"]
    [hit] = await storage.search_messages("气温十五 北京")  # one long, one short
    assert hit.seq == 2


async def test_what_a_person_types_is_taken_literally(storage: SQLiteSessionStorage) -> None:
    texts = [
        'She said "hello" AND left',
        "NOT this one OR that",
        "a* wildcard-ish (parens) col:on",
        "100% sure_of it",
    ]
    for text in texts:
        await storage.append("lit", "r", UserMessage(content=text))
    for query, seq in [
        ('"hello"', 1),
        ('said "hello" AND', 1),
        ("NOT this", 2),
        ("OR that", 2),
        ("a*", 3),
        ("(parens)", 3),
        ("col:on", 3),
        ("-ish", 3),
        ("100%", 4),
        ("sure_of", 4),
        ("%", 4),
        ("_", 4),
    ]:
        assert [h.seq for h in await storage.search_messages(query)] == [seq], query
    assert await storage.search_messages("   ") == []
    assert await storage.search_messages("x" * 5000) == []


async def test_only_what_the_window_shows_is_found(storage: SQLiteSessionStorage) -> None:
    await storage.append("k", "r", InternalMessage(content="Continue exactly where you stopped."))
    await storage.append("k", "r", ToolMessage(tool_call_id="c", name="ls", content="exactly two files"))
    hits = await storage.search_messages("exactly")
    assert [h.type_name for h in hits] == ["tool"]


async def test_every_branch_is_searched_and_the_hidden_ones_said(
    storage: SQLiteSessionStorage,
) -> None:
    await storage.append("b", "r", UserMessage(id="q", content="Name a colour"))
    await storage.append("b", "r", AssistantMessage(id="a1", content="Turquoise, surely"))
    await storage.branch_from("b", "q")
    await storage.append("b", "r", AssistantMessage(id="a2", content="Vermilion, surely"))
    hits = await storage.search_messages("surely")
    assert [(h.message_id, h.on_active_path) for h in hits] == [("a2", True), ("a1", False)]
    assert [h.message_id for h in await storage.find_on_path("b", "surely")] == ["a2"]
    await storage.switch_to("b", "a1")
    hits = await storage.search_messages("surely")
    assert [(h.message_id, h.on_active_path) for h in hits] == [("a2", False), ("a1", True)]
    assert await storage.path_depth("b", 1) == 2 and await storage.path_depth("b", 3) is None


async def test_a_deleted_conversation_is_no_longer_found(storage: SQLiteSessionStorage) -> None:
    await storage.append("gone", "r", UserMessage(content="ephemeral thought"))
    await storage.append("kept", "r", UserMessage(content="ephemeral but kept"))
    await storage.delete_session("gone")
    assert [h.session_id for h in await storage.search_messages("ephemeral")] == ["kept"]
    with sqlite3.connect(storage.path) as raw:  # the index agrees with its content
        raw.execute("INSERT INTO message_index(message_index, rank) VALUES ('integrity-check', 1)")
    raw.close()


async def test_search_within_one_conversation_and_titles(storage: SQLiteSessionStorage) -> None:
    await storage.append("one", "r", UserMessage(content="Plan a trip to Kyoto"))
    await storage.append("two", "r", UserMessage(content="Kyoto again"))
    hits = await storage.search_messages("kyoto", session_id="one")
    assert [h.session_id for h in hits] == ["one"]
    assert await storage.search_titles("kyoto") == ["two", "one"]
    assert await storage.search_titles("trip KYOTO") == ["one"]


async def test_the_snippet_is_cut_around_the_match(storage: SQLiteSessionStorage) -> None:
    text = "filler " * 200 + "the needle\n\n  is here " + "tail " * 200
    await storage.append("long", "r", AssistantMessage(content=text))
    [hit] = await storage.search_messages("needle")
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet) <= SNIPPET_CHARS + 2
    assert "needle is here" in hit.snippet  # white space folded
    assert marked(hit) == ["needle"]


def test_terms() -> None:
    assert search_terms("  Weather weather WEATHER oslo ") == ["Weather", "oslo"]


async def test_a_killed_process_leaves_every_saved_message_findable(tmp_path: Path) -> None:
    """SIGKILL right after appends return: each saved message is in the index (same
    transaction), so reopening finds them all."""
    db = tmp_path / "killed.sqlite3"
    child = textwrap.dedent(
        f"""
        import asyncio, os, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        from engine import UserMessage
        from engine.storage import SQLiteSessionStorage
        async def main():
            storage = SQLiteSessionStorage({str(db)!r})
            for i in range(30):
                await storage.append("k", "r", UserMessage(content=f"marmalade number {{i}}"))
            print("appended", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        asyncio.run(main())
        """
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", child, stdout=subprocess.PIPE
    )
    out, _ = await proc.communicate()
    assert out == b"appended\n" and proc.returncode == -signal.SIGKILL
    storage = SQLiteSessionStorage(db)
    try:
        hits = await storage.search_messages("marmalade", limit=100)
        assert len(hits) == 30
        assert {h.snippet for h in hits} == {f"marmalade number {i}" for i in range(30)}
    finally:
        await storage.close()


async def test_an_older_file_is_indexed_by_its_migration_with_progress(tmp_path: Path) -> None:
    path = tmp_path / "v4.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.executescript((DUMPS / "schema_v4.sql").read_text(encoding="utf-8"))
        rows = [
            ("chat-1", 100 + i, "r", f"x{i}", "user", 0.0, f'{{"v":1,"type":"user","id":"x{i}",'
             f'"created_at":0.0,"content":"old note {i}"}}', 99 + i if i else 7)
            for i in range(12_000)
        ]
        raw.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    raw.close()
    seen: list[float] = []
    versions_when_done: list[int] = []

    def progress(done: float) -> None:
        seen.append(done)
        if done == 1.0:  # said only once the step is committed: another reader sees it
            with sqlite3.connect(path) as other:
                versions_when_done.append(other.execute("PRAGMA user_version").fetchone()[0])
            other.close()

    storage = SQLiteSessionStorage(path)
    storage.on_migration_progress = progress
    try:
        hits = await storage.search_messages("files")
        assert [(h.session_id, h.message_id) for h in hits] == [("chat-1", "m4"), ("chat-1", "m1")]
        assert len(await storage.search_messages("old note", limit=20_000)) == 12_000
    finally:
        await storage.close()
    assert seen == sorted(seen) and len(seen) >= 2 and seen[-1] == 1.0
    assert versions_when_done == [5] and 1.0 not in seen[:-1]
    assert MIGRATIONS[4].name == "0005_search_index"


def test_an_old_sqlite_is_refused_with_a_sentence() -> None:
    with pytest.raises(StorageError) as caught:
        check_sqlite("3.31.1")
    assert caught.value.key == "storage.old_sqlite"
    assert "3.31.1" in str(caught.value) and "3.35.0" in str(caught.value)
    check_sqlite("3.45.0")
    check_sqlite()  # this interpreter's own


async def test_a_damaged_message_is_not_found_and_never_blocks_a_write(
    storage: SQLiteSessionStorage,
) -> None:
    """A body that is not JSON (damage) is indexed as no text: searching, scanning for a
    short word, and deleting its conversation all work."""
    await storage.append("bad", "r", UserMessage(content="fine words here"))
    await storage.append("bad", "r", UserMessage(content="soon damaged words"))
    await storage.append("ok", "r", UserMessage(content="other words"))
    with sqlite3.connect(storage.path) as raw:
        raw.execute("UPDATE messages SET body = '{not json' WHERE session_id = 'bad' AND seq = 2")
    raw.close()
    assert sorted(h.session_id for h in await storage.search_messages("words")) == ["bad", "ok"]
    assert len(await storage.search_messages("wo")) == 2  # the scan skips it too
    await storage.delete_session("bad")
    assert [h.session_id for h in await storage.search_messages("words")] == ["ok"]
    with sqlite3.connect(storage.path) as raw:
        raw.execute("INSERT INTO message_index(message_index, rank) VALUES ('integrity-check', 1)")
    raw.close()


async def test_every_script_is_found_in_any_case(storage: SQLiteSessionStorage) -> None:
    await storage.append("ru", "r", UserMessage(content="Да, конечно. Über alles"))
    await storage.rename_session("ru", "Привет мир")
    for query in ("Да", "да", "ÜB", "über", "КОНЕЧНО", "Über ДА"):
        assert [h.session_id for h in await storage.search_messages(query)] == ["ru"], query
    assert await storage.search_titles("привет") == ["ru"]
    assert await storage.search_titles("ПРИВЕТ МИР") == ["ru"]


async def test_a_query_with_nul_or_a_lone_surrogate_searches_instead_of_failing(
    storage: SQLiteSessionStorage,
) -> None:
    """What is pasted into the field may hold NUL or half an emoji's surrogate pair: the
    query is cleaned like any text (NUL dropped, a lone surrogate U+FFFD), never a
    StorageError about the file."""
    await storage.append("a", "r", UserMessage(content="abc and more"))
    await storage.append("b", "r", UserMessage(content="x\ufffdx broken emoji"))
    await storage.rename_session("a", "abc title")
    assert search_terms("\x00abc ab\x00c \ud800x") == ["abc", "\ufffdx"]
    for query in ("\x00abc", "ab\x00c", "abc\x00", "\x00", "\ud800abc", "abc \udfff"):
        hits = await storage.search_messages(query)
        assert all(h.session_id in ("a", "b") for h in hits), query
        await storage.find_on_path("a", query)
        await storage.search_titles(query)
    assert [h.session_id for h in await storage.search_messages("\x00abc")] == ["a"]
    assert [h.session_id for h in await storage.search_messages("\ud800x")] == ["b"]
    assert await storage.search_titles("ab\x00c") == ["a"]
    assert await storage.search_messages("\x00") == []


async def test_an_unbalanced_quote_searches(storage: SQLiteSessionStorage) -> None:
    """Typing `"hello` (the closing quote not yet typed) finds what holds it, in messages,
    titles and the open conversation, as every half-typed query must."""
    await storage.append("q", "r", UserMessage(content='She said "hello there'))
    await storage.append("q", "r", UserMessage(content="hello without quotes"))
    await storage.rename_session("q", 'A "hello title')
    for query in ('"hello', 'hello"', '"', '""', '"he', 'said "hello', '"hello" "'):
        hits = await storage.search_messages(query)
        assert all(h.session_id == "q" for h in hits), query
        await storage.find_on_path("q", query)
        await storage.search_titles(query)
    assert [h.seq for h in await storage.search_messages('"hello')] == [1]
    assert [h.seq for h in await storage.search_messages('"he')] == [1]
    assert await storage.search_titles('"hello') == ["q"]


async def test_only_the_first_thousand_characters_of_a_query_are_searched(
    storage: SQLiteSessionStorage,
) -> None:
    """A pasted megabyte is cut to `MAX_QUERY_CHARS`: a message holding those characters is
    found (the whole query would have found nothing, after seconds of the storage thread)."""
    from engine.storage.search import MAX_QUERY_CHARS

    assert MAX_QUERY_CHARS == 1000
    await storage.append("long", "r", UserMessage(content="x" * 1500 + " end"))
    [hit] = await storage.search_messages("x" * 1_000_000)
    assert hit.session_id == "long"
    assert await storage.search_titles("y" * 1_000_000) == []
    assert search_terms("abcd " * 1_000_000) == ["abcd"]
    assert sum(map(len, search_terms(" ".join(f"w{n}" for n in range(100_000))))) < 1000


async def test_a_query_sqlite_refuses_is_a_query_error_never_a_storage_fault(
    storage: SQLiteSessionStorage, tmp_path: Path
) -> None:
    """An FTS5 query SQLite cannot read (here an unbalanced phrase, as the search would send
    if its quoting broke) is `QueryError`: its own sentence, no advice about the disk or the
    file, and not a `StorageError` that a window tells as the file failing."""
    from engine import QueryError

    await storage.append("a", "r", UserMessage(content="hello there"))
    with pytest.raises(QueryError) as caught:
        await storage._core.read(
            "SELECT rowid FROM message_index WHERE message_index MATCH ?", ('"hello',)
        )
    error = caught.value
    assert not isinstance(error, StorageError)
    assert error.action.value == "none"
    for language in ("en", "zh_CN"):
        assert str(storage.path) in error.sentence(language)
    said = error.sentence("en")
    assert "not in the disk or the file" in said  # what it is not, said plainly
    assert "has space" not in said and "writable" not in said and "backup" not in said
    assert "磁盘" in error.sentence("zh_CN") and "无关" in error.sentence("zh_CN")
    # The store goes on: the same search, quoted as the search quotes it, works.
    assert [h.seq for h in await storage.search_messages('"hello')] == []
    assert [h.seq for h in await storage.search_messages("hello")] == [1]
