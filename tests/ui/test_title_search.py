"""One title search, one case rule: the conversation list's filter finds exactly the titles the
engine's `search_titles` finds (`engine.TitleQuery`), on a real SQLite file.

The list filter used Qt's case-insensitive match (simple case folding, the typed text as one
piece): "STRASSE" did not find "Straße", a dotted "i̇stanbul" did not find "İSTANBUL", "ﬁ"
was not "fi", and "questions tax" did not find "Tax questions" — all of which the engine found.
"""

from __future__ import annotations

from pathlib import Path

from engine import SQLiteSessionStorage, TitleQuery
from ui.conversation.sessions import SESSION_ID_ROLE, SessionFilterModel, SessionListModel

TITLES = {
    "street": "Straße nach Berlin",
    "city": "İSTANBUL trip",
    "greek": "ΠΑΡΑΣΚΕΥΗΣ plans",
    "tax": "Tax questions",
    "ligature": "ﬁle notes",
    "plain": "Weekly shopping",
}

#: query -> what both must find; the first five are where the two used to disagree
QUERIES = {
    "STRASSE": {"street"},
    "strasse BERLIN": {"street"},
    "i̇stanbul": {"city"},
    "questions tax": {"tax"},
    "FILE": {"ligature"},
    "παρασκευης": {"greek"},  # a final sigma folds as any sigma, in both
    "Straße": {"street"},
    "weekly": {"plain"},
    "berlin plans": set(),
    "": set(TITLES),  # the list shows every conversation (the engine's search finds none)
}


async def test_the_list_filter_finds_what_the_engine_finds(tmp_path: Path) -> None:
    storage = SQLiteSessionStorage(tmp_path / "titles.sqlite3", synchronous="NORMAL")
    try:
        for sid, title in TITLES.items():
            await storage.create_session(session_id=sid, title=title)
        model = SessionListModel()
        model.set_sessions(await storage.list_sessions())
        proxy = SessionFilterModel(model)
        for query, expected in QUERIES.items():
            proxy.set_query(query)
            shown = {proxy.index(row, 0).data(SESSION_ID_ROLE) for row in range(proxy.rowCount())}
            assert shown == expected, query
            if query:
                assert set(await storage.search_titles(query)) == expected, query
                rule = TitleQuery.parse(query)
                assert {sid for sid, title in TITLES.items() if rule.matches(title)} == expected
    finally:
        await storage.close()
