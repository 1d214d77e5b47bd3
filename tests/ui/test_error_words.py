"""What the window says about a failure: only disk and file faults speak of the disk or the file;
what helps and what was kept are values (`ErrorAction`, `WindowAction`, `Kept`), never strings
typed again; the window's own errors have one root.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine import ContinuoError, ErrorAction, QueryError, StorageError, StorageFullError
from ui.common.errors import (
    InternalError,
    Kept,
    NoProviderError,
    WindowAction,
    WindowError,
    action_of,
    banner_words,
    describe_error,
    error_record,
    kept_of,
)
from ui.settings.mcp_file import MCPFileError
from ui.settings.store import KeychainError, SettingsError, SettingsFileError

DISK_WORDS = ("disk", "space", "permission", "folder", "backup", "writable")


def _internal(cause: BaseException) -> InternalError:
    try:
        raise InternalError(str(cause)) from cause
    except InternalError as exc:
        return exc


@pytest.mark.parametrize(
    "error",
    [QueryError("/data/continuo.sqlite3", "unterminated string"), _internal(QueryError("/f", "x"))],
    ids=["query", "query-inside-the-window"],
)
def test_a_query_sqlite_refused_is_said_as_a_query_never_as_the_disk(qapp, error) -> None:
    message, action = describe_error(error, "en")
    assert "not in the disk or the file" in message
    assert action is ErrorAction.NONE
    words = banner_words(message, action, Kept.NONE)
    assert words is not None and words.link == ""
    assert words.text == message, "no advice of the window's is added to it"
    for language in ("en", "zh_CN"):
        assert "/f" in describe_error(_internal(QueryError("/f", "x")), language)[0]


def test_a_bug_of_the_window_is_said_as_one_and_resume_helps(qapp) -> None:
    message, action = describe_error(_internal(sqlite3.OperationalError("no such column")), "en")
    assert "inside the app" in message and "OperationalError" in message
    assert action is ErrorAction.RESUME
    assert not any(word in message.lower() for word in DISK_WORDS)


def test_a_full_disk_is_said_with_what_helps_now_and_when_the_message_is_unsent(qapp) -> None:
    error = StorageFullError("/data/continuo.sqlite3")
    message, action = describe_error(error, "en")
    assert action is ErrorAction.FREE_SPACE and "/data/continuo.sqlite3" in message
    resume = banner_words(message, action, Kept.NONE)
    unsent = banner_words(message, action, Kept.UNSENT)
    assert resume is not None and resume.text.endswith("Free some disk space, then press Resume.")
    assert unsent is not None and "Your message was not sent" in unsent.text
    assert unsent.text.endswith("Free some disk space, then press Send again.")


def test_no_provider_links_to_the_settings_and_a_cut_answer_is_said_by_its_row(qapp) -> None:
    message, action = describe_error(NoProviderError(), "en")
    assert action is WindowAction.OPEN_SETTINGS
    words = banner_words(message, action, Kept.NONE)
    assert words is not None and words.link == "Open settings"
    # After a cut-off answer whose remedy is Resume, the row says it: no banner.
    assert banner_words("The connection broke.", ErrorAction.CHECK_CONNECTION, Kept.SAVED) is None
    assert banner_words("", ErrorAction.FREE_SPACE, Kept.NONE) is None


def test_a_kept_record_reads_back_as_the_same_values(qapp) -> None:
    record = error_record(StorageFullError("/f"), "en", Kept.LOST)
    assert (record["action"], record["kept"]) == ("free_space", "lost")  # JSON in the metadata
    assert action_of(record["action"]) is ErrorAction.FREE_SPACE
    assert kept_of(record["kept"]) is Kept.LOST
    assert action_of("settings") is WindowAction.OPEN_SETTINGS
    for unknown in ("", None, "from-a-newer-version", 3):
        assert action_of(unknown) is ErrorAction.NONE
        assert kept_of(unknown) is Kept.NONE


def test_the_window_errors_have_one_root_apart_from_the_engine(tmp_path: Path) -> None:
    for error in (
        NoProviderError(),
        InternalError("bug"),
        SettingsError("x"),
        SettingsFileError(tmp_path / "settings.json", "not JSON"),
        KeychainError("refused"),
        MCPFileError(tmp_path / "mcp.json", "not JSON"),
    ):
        assert isinstance(error, WindowError), type(error).__name__
        assert not isinstance(error, ContinuoError | StorageError), type(error).__name__
