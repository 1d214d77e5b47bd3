"""Hostile text from a provider is shown, never obeyed (DESIGN.md, "Untrusted input").

Each test streams an answer (or a model list) from the loopback provider into the real
window. Paths point at a FIFO whose writing end a guard process opens and closes in a loop:
if anything in the app opened the FIFO to read an image, the guard counts it, and the reader
reads an empty file at once, so a failing test fails instead of hanging the window. A real PNG, by absolute
and by relative path, must not become an image in any document either.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, QPoint, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QImage, QTextCursor, QTextDocument
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QMessageBox, QToolTip

from tests.support.provider_server import Fault, Turn
from tests.support.wait import until
from tests.ui.conftest import next_signal, open_window, seed_provider
from ui.conversation.message_views import AnswerView
from ui.conversation.transcript import ItemKind, ItemState
from ui.settings.dialog import SettingsDialog

#: Holds the FIFO's writing end open, again and again, and says so each time a reader came.
#: A separate process: the window's thread blocked in a read would hold the interpreter, and
#: a watching thread in this process could never close its end to let the read finish.
_FIFO_WRITER = """
import os, sys
os.close(os.open(sys.argv[1], os.O_WRONLY))
print("opened", flush=True)  # once: a pipe full of these would block the loop
while True:
    os.close(os.open(sys.argv[1], os.O_WRONLY))
"""

#: Before the fix a label's HTML blocked the window's thread inside Qt reading the FIFO,
#: where a signal cannot reach it; the thread method ends such a run instead of hanging.
pytestmark = pytest.mark.timeout(60, method="thread")


class FifoGuard:
    """A FIFO, and a process that notes whether anyone opened it for reading."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "pipe.png"
        os.mkfifo(self.path)
        self._writer = subprocess.Popen(
            [sys.executable, "-c", _FIFO_WRITER, str(self.path)],
            stdout=subprocess.PIPE,
            text=True,
        )

    def opens(self) -> int:
        """Stop watching; return 1 if the FIFO was opened for reading, else 0."""
        if self._writer.poll() is None:
            self._writer.kill()
        out, _ = self._writer.communicate(timeout=10)
        return out.count("opened")


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[FifoGuard]:
    guard = FifoGuard(tmp_path)
    yield guard
    guard.opens()


def _png(path: Path) -> Path:
    image = QImage(8, 8, QImage.Format.Format_RGB32)
    image.fill(0xFF0000)
    assert image.save(str(path))
    return path


def _images(document: QTextDocument) -> list[str]:
    """The names of the images a document holds (an ``<img>`` becomes one image format)."""
    found: list[str] = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat():
                found.append(fmt.toImageFormat().name())
            it += 1
        block = block.next()
    return found


def _answers(window: Any) -> list[Any]:
    model = window.transcript.model()
    return [i for i in model.items() if i.kind is ItemKind.ASSISTANT] if model else []


def _view_of(window: Any, item: Any) -> Any:
    window.transcript.flush()
    return window.transcript.views()[window.transcript.model().items().index(item)]


async def _ask(window: Any, text: str) -> None:
    window.composer.setPlainText(text)
    window.send_button.click()
    await until(
        lambda: (
            window.controller.current
            and _answers(window)
            and not window.controller.is_running(window.controller.current)
        ),
        what="the answer",
    )


async def _show_tooltip(widget: Any, text: str) -> None:
    """Show ``text`` as Qt shows a tooltip (laid out as rich text if it looks like it)."""
    QToolTip.showText(widget.mapToGlobal(QPoint(2, 2)), text, widget)
    await asyncio.sleep(0)
    QToolTip.hideText()


async def test_images_in_an_answer_load_nothing(tmp_path, provider_server, fifo, monkeypatch):
    monkeypatch.chdir(tmp_path)
    absolute = _png(tmp_path / "absolute.png")
    _png(tmp_path / "relative.png")
    answer = (
        "Zero: ![zero](/dev/zero)\n\n"
        f"Pipe: ![pipe]({fifo.path})\n\n"
        f"Absolute: ![red square]({absolute})\n\n"
        "Relative: ![relative](relative.png)\n\n"
        f'Raw: <img src="{fifo.path}"> and <img src="relative.png">\n'
    )
    provider_server.script(Turn(text=answer, chunk_size=9))
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    await _ask(window, "Show me pictures")
    item = _answers(window)[-1]
    assert item.state is ItemState.DONE and item.text == answer
    view = _view_of(window, item)
    view.grab()  # lay out and paint: an image would be fetched now at the latest
    for text_view in (view.body, view.tail):
        document = text_view.document()
        assert _images(document) == []
        assert "<img" not in document.toHtml()
        for name in ("/dev/zero", str(fifo.path), str(absolute), "relative.png"):
            assert document.resource(QTextDocument.ResourceType.ImageResource, QUrl(name)) in (
                None,
                b"",
            ), name
    shown = view.body.toPlainText()
    # Each image is its alt text and its address; raw HTML is text.
    for alt, address in (
        ("zero", "/dev/zero"),
        ("pipe", str(fifo.path)),
        ("red square", str(absolute)),
        ("relative", "relative.png"),
    ):
        assert f"{alt} ({address})" in shown.replace("\u200b", "")
    assert f'<img src="{fifo.path}">' in shown.replace("\u200b", "")
    assert fifo.opens() == 0, "the app opened the FIFO"


async def test_outside_text_in_labels_and_tooltips_is_shown_as_text(
    tmp_path, provider_server, fifo
):
    hostile = f'<img src="{fifo.path}">'
    # An unknown finish_reason: the status line quotes it. Then an error inside the stream.
    provider_server.script(
        Turn(text="Some text.", raw_stop=hostile),
        Turn(text="Partial text", fault=Fault.ERROR_EVENT, fault_after=2, error=hostile),
    )
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    # The first message titles the conversation: the list's tooltip shows it.
    await _ask(window, f"{hostile} first")
    first = _answers(window)[-1]
    assert first.state is ItemState.OTHER
    status = _view_of(window, first).status
    # The stop reason is quoted at most 64 characters long (engine STOP_VALUE_LIMIT), as text.
    assert '<img src="' in status.text() and hostile[:40] in status.text()
    await _ask(window, "second")
    cut = _answers(window)[-1]
    assert cut.state is ItemState.INTERRUPTED
    cut_status = _view_of(window, cut).status
    # A cut-off answer says so once, on the answer (the banner stays hidden: Resume helps).
    await until(lambda: bool(cut_status.text()), what="the cut-off answer's status")
    labels: list[QLabel] = [status, cut_status]
    window.grab()
    for label in labels:
        label.grab()
        # What the person reads is the provider's text, characters and all.
        document = QTextDocument()
        if label.textFormat().name == "PlainText":
            document.setPlainText(label.text())
        else:
            document.setHtml(label.text())
        assert "img src" in document.toPlainText(), label.objectName()
    tooltips = [
        (
            window.session_list,
            window.session_list.model().index(0, 0).data(Qt.ItemDataRole.ToolTipRole),
        ),
    ]
    for widget, tip in tooltips:
        assert tip, widget.objectName()
        document = QTextDocument()
        document.setHtml(tip)
        assert "img src" in document.toPlainText(), tip
        await _show_tooltip(widget, tip)
    # Delete asks about the conversation by its title: as text, the picture never loaded.
    window.menus.delete_action.trigger()
    box = window.findChild(QMessageBox, "deleteDialog")
    assert box is not None and box.isVisible()
    box.grab()
    assert box.textFormat() == Qt.TextFormat.PlainText and "<img src=" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert fifo.opens() == 0, "the app opened the FIFO"


async def test_model_names_in_test_connection_are_text(qtbot, tmp_path, provider_server, fifo):
    from ui.settings.store import ProviderConfig, Settings, SettingsStore

    hostile = f'<img src="{fifo.path}">'
    provider_server.models = [hostile, "plain-model"]
    store = SettingsStore(tmp_path, use_keychain=False)
    config = ProviderConfig(id="p", kind="openai", name="L", base_url=provider_server.openai_url)
    await store.save(Settings(providers=[config]))
    dialog = SettingsDialog(store, servers=[], environ={})
    qtbot.addWidget(dialog)
    loaded = asyncio.ensure_future(next_signal(dialog.loaded, seconds=20.0))
    dialog.open()
    await loaded
    tested = asyncio.ensure_future(next_signal(dialog.connectionTested, seconds=20.0))
    dialog.testConnectionButton.click()
    ok, message = await tested
    assert ok and hostile in message
    dialog.connectionResult.grab()
    assert hostile in dialog.connectionResult.text()
    assert dialog.connectionResult.textFormat().name == "PlainText"
    assert fifo.opens() == 0, "the app opened the FIFO"
    dialog.reject()


class _Opened(QObject):
    """Catches what `QDesktopServices.openUrl` would open (Qt's own URL-handler hook)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    @Slot(QUrl)
    def handle(self, url: QUrl) -> None:
        self.urls.append(url.toString())


@pytest.fixture
def opened() -> Iterator[_Opened]:
    catcher = _Opened()
    schemes = ("http", "https", "mailto", "file", "javascript", "data", "continuo")
    for scheme in schemes:
        QDesktopServices.setUrlHandler(scheme, catcher, "handle")
    yield catcher
    for scheme in schemes:
        QDesktopServices.unsetUrlHandler(scheme)


def _anchor_point(view: Any, text: str) -> QPoint:
    """The middle of the first occurrence of ``text`` in a text view, in viewport pixels."""
    document = view.document()
    found = document.find(text.replace("\u200b", ""))
    assert not found.isNull(), text
    cursor = QTextCursor(document)
    cursor.setPosition((found.selectionStart() + found.selectionEnd()) // 2)
    return view.cursorRect(cursor).center()


async def _click(view: Any, text: str) -> None:
    point = _anchor_point(view, text)
    QTest.mouseMove(view.viewport(), point)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier(0), point)
    await asyncio.sleep(0)


LINKS = (
    "[https://bank.example/login](http://127.0.0.1:9/phish) · "
    "[the docs](https://docs.example.org/guide) · "
    "[mail us](mailto:help@example.org) · "
    "[local file](file:///etc/passwd) · "
    "[an app](continuo://settings) · "
    "[same host](https://example.org/a)"
)


async def test_links_show_their_target_ask_before_a_mismatch_and_open_only_the_web(
    tmp_path, provider_server, opened
):
    text = LINKS.replace("[same host]", "[example.org/a]")
    provider_server.script(Turn(text=text, chunk_size=11))
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    window.resize(1000, 700)
    await _ask(window, "Links please")
    view: AnswerView = _view_of(window, _answers(window)[-1])
    body = view.body

    # Hovering shows where a link goes, as text.
    QTest.mouseMove(body.viewport(), _anchor_point(body, "https://bank.example/login"))
    await until(lambda: "127.0.0.1:9/phish" in body.toolTip(), what="the hover tooltip")
    tip = QTextDocument()
    tip.setHtml(body.toolTip())
    assert tip.toPlainText() == "http://127.0.0.1:9/phish"

    # A link whose text names the target's host, or no host at all, opens at once.
    await _click(body, "the docs")
    await _click(body, "mail us")
    await _click(body, "example.org/a")
    assert opened.urls == [
        "https://docs.example.org/guide",
        "mailto:help@example.org",
        "https://example.org/a",
    ]
    # file: and custom schemes do nothing (markdown-it drops javascript: itself).
    await _click(body, "local file")
    await _click(body, "an app")
    assert len(opened.urls) == 3
    assert view.link_question is None

    # The mismatched link asks first, in a box opened with open(); Cancel opens nothing.
    await _click(body, "https://bank.example/login")
    box = view.link_question
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert "bank.example" in box.text() and "127.0.0.1" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    await asyncio.sleep(0)
    assert len(opened.urls) == 3
    # Confirmed, it opens.
    await _click(body, "https://bank.example/login")
    box = view.link_question
    assert box is not None and box.isVisible()
    go = next(b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole)
    go.click()
    await until(lambda: len(opened.urls) == 4, what="the confirmed link")
    assert opened.urls[-1] == "http://127.0.0.1:9/phish"
