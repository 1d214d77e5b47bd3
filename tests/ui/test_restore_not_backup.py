"""Restore… given a file that is not a Continuo backup (issue 20, item 6), in the real window
over a real SQLite file: the report says the chosen file is not a Continuo backup and that
nothing changed, never that "the conversation file is damaged" (which reads as if the
person's own conversations were). Only the file dialog is replaced (a native one cannot be
driven offscreen); the message box is the real one.
"""

from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path

import pytest

from tests.ui.conftest import open_window, seed_provider
from tests.ui.test_archive_menu import _chat, _choose, _close_report, _titles, _trigger
from ui.archive import Outcome

pytestmark = pytest.mark.timeout(120)


def _not_a_backup(kind: str, path: Path) -> None:
    if kind == "text":
        path.write_text("Shopping list\n- milk\n- bread\n" * 20, encoding="utf-8")
    elif kind == "export":  # a Continuo JSON export: the file a person most easily mistakes
        path.write_text(
            json.dumps({"format": "continuo-export", "version": 1, "conversations": []}),
            encoding="utf-8",
        )
    elif kind == "zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("conversations.json", "[]")
    elif kind == "another program's database":
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
        db.commit()
        db.close()
    elif kind == "empty database":
        db = sqlite3.connect(path)
        db.execute("VACUUM")
        db.close()


@pytest.mark.parametrize(
    "kind", ["text", "export", "zip", "another program's database", "empty database"]
)
async def test_restoring_a_file_that_is_not_a_backup_says_so_and_that_nothing_changed(
    tmp_path, provider_server, kind
):
    data = tmp_path / "data"
    store = await seed_provider(data, provider_server)
    window = await open_window(data, settings_store=store)
    await _chat(window, "Still here", "Good.", provider_server)
    chosen = tmp_path / "chosen.db"
    _not_a_backup(kind, chosen)
    before = sorted(p.name for p in data.iterdir())
    chosen_bytes = chosen.read_bytes()

    _choose(window, chosen)
    action, outcome, said = await _trigger(window, "restore")  # no confirmation asked

    assert (action, outcome) == ("restore", Outcome.REFUSED)
    text, details = _close_report(window)
    assert "not a Continuo backup" in text and "Nothing changed" in text, text
    assert str(chosen) in details and "not a Continuo backup" in details, details
    for misleading in ("damaged", "conversation file", "restore it from a backup"):
        assert misleading not in said, said
    assert sorted(p.name for p in data.iterdir()) == before
    assert chosen.read_bytes() == chosen_bytes
    assert _titles(window) == ["Still here"]
    assert window.storage_notice.isHidden()
