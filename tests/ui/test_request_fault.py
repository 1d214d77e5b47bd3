"""A fault inside the window while a request's events are folded (a UI bug, simulated by a
transcript method that raises) is told apart from a request failure: the stream is closed
(the conversation's lease released at once), the banner says the app itself failed and does
not claim anything was saved, the traceback is logged, and Resume works afterwards.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.support.provider_server import Turn
from tests.support.wait import until
from tests.ui.conftest import open_window, seed_provider
from ui.conversation.transcript import ItemKind, TranscriptModel

STORY = "Once upon a time there was a conversation that nobody lost. " * 8


class _FoldBug(RuntimeError):
    """The simulated UI bug."""


def _answers(window):
    model = window.transcript.model()
    return [i for i in model.items() if i.kind is ItemKind.ASSISTANT] if model is not None else []


async def test_a_fault_while_folding_an_event_closes_the_stream_and_says_so(
    tmp_path, provider_server, monkeypatch, caplog
):
    provider_server.script(Turn(text=STORY, chunk_size=5, delay=0.01))
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    original = TranscriptModel.add_text
    seen: list[str] = []

    def add_text(self, delta):  # the third delta hits a "bug" in the window
        seen.append(delta)
        if len(seen) == 3:
            raise _FoldBug("simulated bug while folding a delta")
        return original(self, delta)

    monkeypatch.setattr(TranscriptModel, "add_text", add_text)
    caplog.set_level(logging.ERROR)
    QTest.keyClicks(window.composer, "Tell me a story")
    QTest.keyClick(window.composer, Qt.Key.Key_Return)
    await until(lambda: len(seen) >= 3, what="the faulty delta")
    sid = window.controller.current
    await until(lambda: not window.controller.is_running(sid), what="the request to end")
    # The stream was closed as the request ended: no lease is left behind.
    assert await window.controller.storage.lease_holder(sid) is None
    await until(lambda: window.error_banner.isVisible(), what="the banner")
    banner = window.error_banner.toolTip()
    assert "saved" not in banner.lower() and "provider" not in banner.lower()
    assert "inside the app" in banner.lower()
    # The traceback of the bug is in the log, not in the banner.
    records = [r for r in caplog.records if r.exc_info and r.exc_info[0] is _FoldBug]
    assert records and "Traceback" not in banner
    # Resume works (the lease is free); the bug is gone now.
    monkeypatch.setattr(TranscriptModel, "add_text", original)
    provider_server.script(Turn(text="The whole story."))
    await until(lambda: window.resume_button.isVisible(), what="Resume")
    window.resume_button.click()
    await until(
        lambda: (
            not window.controller.is_running(sid)
            and _answers(window)[-1].text == "The whole story."
        ),
        what="the resumed answer",
    )
    assert not window.error_banner.isVisible()
    assert await window.controller.storage.lease_holder(sid) is None
