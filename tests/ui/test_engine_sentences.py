"""The engine's sentences in the window: in the window's language, and "saved" only when saved.

The Resume tooltip (`ResumePoint.description`) and a kept error are written by the engine in
the language the window passes it, and said again when the person switches language. The
window adds its own words for what helps (the error's `ErrorAction`) and for what was kept
of a cut-off answer — "saved" only when the engine announced the stored partial, "could not
be saved" when its write failed (here a real SQLite file that is full: ``max_page_count``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from engine import (
    AssistantMessage,
    SQLiteSessionStorage,
    StopInfo,
    StopReason,
    UserMessage,
)
from tests.support.provider_server import Fault, Turn
from tests.support.wait import until
from tests.ui.conftest import open_window, seed_provider
from ui.common.i18n import install_translator
from ui.controller import DB_FILE_NAME
from ui.conversation.transcript import ItemKind, ItemState

STOPPED_EN = (
    "The answer was stopped before it finished; resuming will ask the model to write it "
    "again from the start."
)
STOPPED_ZH = "回答在完成前被停止了；继续将请模型从头重写这个回答。"
KEY_REFUSED = {
    "message": "Loopback refused the API key (401). Check the key.",
    "action": "check_key",
    "kind": "ProviderAuthError",
    "key": "provider.key_refused",
    "params": {"who": "Loopback", "status": 401},
}


@pytest.fixture
def english(qapp: QApplication) -> Iterator[None]:
    install_translator(qapp, "en")
    yield
    install_translator(qapp, "en")


async def _open(data_dir: Any, store: Any) -> Any:
    """Open the window and wait for its model list: a listing cancelled mid-connect as the
    test ends would finish outside the event loop."""
    window = await open_window(data_dir, settings_store=store)
    await until(lambda: window.model_picker.count() > 0, what="the models to be listed")
    return window


def _answers(window: Any) -> list[Any]:
    model = window.transcript.model()
    return [i for i in model.items() if i.kind is ItemKind.ASSISTANT] if model else []


async def test_resume_tooltip_and_kept_error_follow_the_window_language(
    qapp, tmp_path, provider_server, english
) -> None:
    store = await seed_provider(tmp_path, provider_server)
    storage = SQLiteSessionStorage(tmp_path / DB_FILE_NAME)
    try:
        await storage.append("s", "earlier", UserMessage(content="Q"))
        cut = StopInfo(StopReason.INTERRUPTED, raw="cancelled")
        await storage.append("s", "earlier", AssistantMessage(content="Half", stop=cut))
        await storage.update_metadata("s", {"last_error": KEY_REFUSED})
    finally:
        await storage.close()
    window = await _open(tmp_path, store)
    await until(lambda: window.resume_button.isVisible(), what="the Resume button")
    assert window.resume_button.toolTip() == STOPPED_EN
    assert window.error_banner.toolTip() == "Loopback refused the API key (401). Check the key."
    assert "Open settings" in window.error_banner.text()

    install_translator(qapp, "zh_CN")
    await until(lambda: window.resume_button.toolTip() == STOPPED_ZH, what="a Chinese tooltip")
    assert window.resume_label.toolTip() == STOPPED_ZH
    assert window.error_banner.toolTip() == "Loopback 拒绝了 API 密钥（401）。请检查密钥。"
    assert "打开设置" in window.error_banner.text()

    install_translator(qapp, "en")
    await until(lambda: window.resume_button.toolTip() == STOPPED_EN, what="English again")
    await until(lambda: "Open settings" in window.error_banner.text(), what="English banner")


async def test_a_cut_off_answer_that_was_stored_says_saved(
    tmp_path, provider_server, english
) -> None:
    provider_server.script(Turn(text="word " * 40, chunk_size=10, fault=Fault.RESET, fault_after=5))
    store = await seed_provider(tmp_path, provider_server)
    window = await _open(tmp_path, store)
    window.composer.setPlainText("Tell me")
    window.send_button.click()
    await until(lambda: window.resume_button.isVisible(), what="Resume")
    (answer,) = _answers(window)
    assert answer.state is ItemState.INTERRUPTED and answer.saved
    # One notice: the row says it (Resume is all that helps, so no banner repeats it).
    assert not window.error_banner.isVisible()
    window.transcript.flush()
    view = window.transcript.views()[window.transcript.model().items().index(answer)]
    assert view.status.text().endswith(" What arrived is saved.")
    assert "could not be saved" not in view.status.text()


async def test_a_cut_off_answer_that_could_not_be_stored_says_so(
    tmp_path, provider_server, english
) -> None:
    # The answer stalls after a few events; meanwhile the database file reaches its size
    # limit (SQLite's max_page_count: a real "database or disk is full"); then the
    # connection breaks, and the partial answer (100 KB) cannot be written.
    provider_server.script(
        Turn(
            text="long words " * 20000, chunk_size=50000, fault=Fault.STALL_MIDSTREAM, fault_after=3
        )
    )
    store = await seed_provider(tmp_path, provider_server)
    window = await _open(tmp_path, store)
    window.composer.setPlainText("Tell me")
    window.send_button.click()
    await until(lambda: _answers(window) and _answers(window)[-1].text, what="text arriving")
    storage = window.controller.storage
    writer = await storage._core.writer()  # the limit is a setting of the connection
    ((pages,),) = await writer.execute_fetchall("PRAGMA page_count")
    await writer.execute(f"PRAGMA max_page_count = {pages}")
    provider_server.release_stalls()
    await until(lambda: window.error_banner.isVisible(), what="the error")

    (answer,) = _answers(window)
    assert answer.state is ItemState.INTERRUPTED and not answer.saved
    banner = window.error_banner.toolTip()
    assert "What arrived could not be saved." in banner
    assert "What arrived is saved" not in banner
    assert "full" in banner  # SQLite's own words, in the engine's sentence
    assert "Free some disk space, then press Resume." in banner  # ErrorAction.FREE_SPACE
    window.transcript.flush()
    view = window.transcript.views()[window.transcript.model().items().index(answer)]
    assert view.status.text() == "⚠ The answer was cut off. What arrived could not be saved."
    # Nothing claims otherwise after a restart: the history has no partial answer.
    await writer.execute("PRAGMA max_page_count = 1073741823")
    assert [type(m) for m in await storage.load(window.controller.current)] == [UserMessage]


def test_a_kept_error_says_its_nested_parts_in_the_new_language_too() -> None:
    # A refusal's reason is a phrase of its own. Kept as text, it stayed English inside the
    # Chinese sentence after a language switch; kept as a phrase, it is said in Chinese too.
    import json

    from engine.errors import StorageReadOnlyError
    from engine.sentences import Phrase
    from ui.common.errors import Kept, error_record, error_text

    reason = Phrase("storage.reason.folder_not_enterable", {"folder": "/data/chats"})
    exc = StorageReadOnlyError("/data/chats/continuo.sqlite3", reason)
    kept = json.loads(json.dumps(error_record(exc, "en", Kept.NONE)))  # as the metadata stores it
    assert error_text(kept, "en") == exc.sentence("en")
    assert error_text(kept, "zh_CN") == exc.sentence("zh_CN")
    assert reason.sentence("zh_CN") in error_text(kept, "zh_CN")
    assert reason.sentence("en") not in error_text(kept, "zh_CN")
